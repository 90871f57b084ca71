"""torch.random's names: seeding and generator state of the CPU generator.

Numbers come from counter-based Philox (csrc/kernels/philox.h) with a
(seed, offset) state per generator, so a seed gives the same numbers on the
CPU and on every GPU. manual_seed() and seed() reset every default
generator (the CPU's and each device's), as PyTorch's do. Generator() makes
an independent generator, on the CPU or (device='cuda[:i]') on a GPU, with
a state of its own; `generator=` takes one of those, a default generator
(default_generator, cuda.default_generators[i]) or None (the default of the
result's device). fork_rng() saves the default states for a block and puts
them back after it.
"""
import contextlib
import warnings

from . import _C
from ._C import initial_seed, get_rng_state, set_rng_state  # noqa: F401

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator", "Generator", "fork_rng", "thread_safe_generator"]


class Generator(_C._Generator):
    """torch.Generator: an independent random generator on the CPU or on a
    CUDA device (device='cuda' takes the current one). It starts at
    PyTorch's default seed; drawing from it (generator=g) moves its own
    offset alone, and seeding it leaves the default generators alone.
    manual_seed, seed, initial_seed, get_state and set_state are the C
    type's."""

    def __init__(self, device="cpu"):
        d = device if isinstance(device, _C.device) else _C.device(device)
        index = -1
        if d.type == "cuda":
            from . import cuda
            if not cuda.is_available():
                raise RuntimeError("Generator(device=%r): no CUDA GPU is available" % str(d))
            index = d.index if d.index is not None else cuda.current_device()
            if index >= cuda.device_count():
                raise RuntimeError("Generator(device=%r): invalid device ordinal" % str(d))
            d = _C.device("cuda", index)
        elif d.type != "cpu":
            raise RuntimeError("Generator: device type %r is not supported (cpu or cuda)" % d.type)
        super().__init__(index)
        self.device = d

    def __reduce__(self):
        # pickled with its device and state, as torch's generators are
        return (_rebuild_generator, (str(self.device), self.get_state()))

    def __repr__(self):
        return "<pycuda_sem.Generator (%s)>" % self.device

    def clone_state(self):
        """A new independent Generator on the same device, at this one's state."""
        return _rebuild_generator(str(self.device), self.get_state())

    # The state is (seed, Philox offset), 8 little-endian bytes each, on the
    # CPU as on a GPU (torch's CPU generator is mt19937 and has no offset).
    def get_offset(self):
        """The Philox offset: the next block of four 32-bit numbers to draw."""
        return int.from_bytes(bytes(self.get_state().tolist()[8:]), "little")

    def set_offset(self, offset):
        """Moves the Philox offset (the seed is kept); returns the generator."""
        state = self.get_state().tolist()
        state[8:] = list(int(offset).to_bytes(8, "little"))
        return self.set_state(_C.tensor(state, dtype=_C.uint8))

    def graphsafe_get_state(self):
        """CUDA generators: a Generator holding this one's state (torch's
        form for CUDA graphs, which have no capture here); the CPU's raise
        NotImplementedError, as torch's do."""
        if self.device.type != "cuda":
            raise NotImplementedError("graphsafe_get_state is not supported in this Generator")
        return self.clone_state()

    def graphsafe_set_state(self, state):
        """CUDA generators: take the state of `state` (a Generator from
        graphsafe_get_state or clone_state)."""
        if self.device.type != "cuda":
            raise NotImplementedError("graphsafe_set_state is not supported in this Generator")
        if not isinstance(state, Generator):
            raise TypeError("graphsafe_set_state expects a torch.Generator, got %s" % type(state).__name__)
        return self.set_state(state.get_state())


def _rebuild_generator(device, state):
    return Generator(device).set_state(state)


class _DefaultCpuGenerator(Generator):
    """torch.default_generator: a handle on the CPU's default generator
    (the one random functions draw from without generator=). As a
    generator= argument it stands for the result's device's default."""

    _pcs_default_generator = True

    def __init__(self):
        super().__init__("cpu")

    def manual_seed(self, seed):
        _C._manual_seed_cpu(seed)  # the CPU's alone, as torch's default_generator.manual_seed
        return self

    def seed(self):
        s = _C._Generator().seed()  # a seed from the OS, for the CPU's alone
        _C._manual_seed_cpu(s)
        return s

    def initial_seed(self):
        return _C.initial_seed()

    def get_state(self):
        return _C.get_rng_state()

    def set_state(self, state):
        _C.set_rng_state(state)
        return self

    def __reduce__(self):
        return (_default_cpu_generator, ())

    def __repr__(self):
        return "<pycuda_sem.Generator (default, cpu)>"


def _default_cpu_generator():
    return default_generator


default_generator = _DefaultCpuGenerator()


def manual_seed(seed):
    """Seed the CPU and every CUDA generator (offsets restart at 0); returns
    the default generator, as torch.manual_seed does."""
    _C._manual_seed(int(seed))  # range-checked there, as cuda.manual_seed's is
    return default_generator


def seed():
    """Seed every generator with a non-deterministic number and return it."""
    return _C._seed()


_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Context manager: the CPU generator's state and those of the given
    devices (indices of `device_type`, default "cuda"; None: every visible
    one) are saved on entry and restored on exit, so the block's draws do
    not move the streams outside it. enabled=False makes it do nothing."""
    global _fork_rng_warned_already
    if device_type == "meta" or not enabled:
        yield
        return
    device_type = device_type or "cuda"
    from ._misc_api import get_device_module
    mod = get_device_module(device_type)
    if devices is None:
        count = mod.device_count()
        if count > 1 and not _fork_rng_warned_already:
            # torch warns once: forking every device initialises all of them
            kind = device_type.upper()
            warnings.warn("%s reports that you have %d available devices, and you have used %s "
                          "without explicitly specifying which devices are being used. For "
                          "safety, we initialize *every* %s device by default, which can be "
                          "quite slow if you have a lot of %ss. To initialize all devices and "
                          "suppress this warning, set the '%s' keyword argument to "
                          "`range(torch.%s.device_count())`."
                          % (kind, count, _caller, kind, kind, _devices_kw, device_type),
                          stacklevel=3)
            _fork_rng_warned_already = True
        devices = list(range(count))
    else:
        devices = list(devices)  # a generator would be spent by the first pass
    cpu_state = _C.get_rng_state()
    device_states = [mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        _C.set_rng_state(cpu_state)
        for d, st in zip(devices, device_states):
            mod.set_rng_state(st, d)


def thread_safe_generator():
    """The generator a DataLoader thread worker should draw from: None here
    (the global generator), since this package's DataLoader workers are
    processes, each with its own seeded state, as torch returns for them."""
    return None
