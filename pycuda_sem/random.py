"""torch.random's names: seeding and generator state of the CPU generator.

Numbers come from counter-based Philox (csrc/kernels/philox.h) with a
(seed, offset) state per device, so a seed gives the same numbers on the CPU
and on every GPU. manual_seed() and seed() reset every device's state, as
PyTorch's do. Only the default generators exist: Generator() is a handle on
the CPU's, Generator(device='cuda') on a GPU's, and `generator=` accepts
those (or None). fork_rng() saves these states for a block and puts
them back after it.
"""
import contextlib
import warnings

from . import _C
from ._C import initial_seed, get_rng_state, set_rng_state  # noqa: F401

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator", "Generator", "fork_rng", "thread_safe_generator"]


class Generator:
    """A handle on a default generator, as torch.default_generator and
    torch.cuda.default_generators[i] are: Generator() (the CPU) acts on the
    global state, Generator(device='cuda[:i]') on that device's generator
    (pycuda_sem has no independent generators, so two handles on one device
    share their state)."""

    _pcs_default_generator = True

    def __init__(self, device="cpu"):
        d = device if isinstance(device, _C.device) else _C.device(device)
        self._cuda = None
        if d.type == "cuda":
            from . import cuda
            if not cuda.is_available():
                raise RuntimeError("Generator(device=%r): no CUDA GPU is available" % str(d))
            self._cuda = cuda._CudaDefaultGenerator(d.index if d.index is not None else cuda.current_device())
            self.device = self._cuda.device
        else:
            self.device = d

    def manual_seed(self, seed):
        if self._cuda is not None:
            self._cuda.manual_seed(seed)
        else:
            manual_seed(seed)
        return self

    def seed(self):
        return self._cuda.seed() if self._cuda is not None else seed()

    def initial_seed(self):
        return self._cuda.initial_seed() if self._cuda is not None else _C.initial_seed()

    def get_state(self):
        return self._cuda.get_state() if self._cuda is not None else _C.get_rng_state()

    def set_state(self, state):
        if self._cuda is not None:
            self._cuda.set_state(state)
        else:
            _C.set_rng_state(state)
        return self

    def __repr__(self):
        return "<pycuda_sem.Generator (default, %s)>" % self.device


default_generator = Generator()


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
