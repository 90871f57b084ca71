"""torch.random's names: seeding and generator state of the CPU generator.

Numbers come from counter-based Philox (csrc/kernels/philox.h) with a
(seed, offset) state per device, so a seed gives the same numbers on the CPU
and on every GPU. manual_seed() and seed() reset every device's state, as
PyTorch's do. Only the default generator exists: `generator=` accepts it (or
None) and nothing else.
"""
from . import _C
from ._C import initial_seed, get_rng_state, set_rng_state  # noqa: F401

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator", "Generator"]


class Generator:
    """The default CPU generator, as torch.default_generator: its methods act
    on the global state (pycuda_sem has no independent generators)."""

    _pcs_default_generator = True

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise NotImplementedError("pycuda_sem has only the default generators; use "
                                      "pycuda_sem.cuda.manual_seed for CUDA devices")
        self.device = device

    def manual_seed(self, seed):
        manual_seed(seed)
        return self

    def seed(self):
        return seed()

    def initial_seed(self):
        return _C.initial_seed()

    def get_state(self):
        return _C.get_rng_state()

    def set_state(self, state):
        _C.set_rng_state(state)
        return self

    def __repr__(self):
        return "<pycuda_sem.Generator (default, cpu)>"


default_generator = Generator()


def manual_seed(seed):
    """Seed the CPU and every CUDA generator (offsets restart at 0); returns
    the default generator, as torch.manual_seed does."""
    _C._manual_seed(int(seed))  # range-checked there, as cuda.manual_seed's is
    return default_generator


def seed():
    """Seed every generator with a non-deterministic number and return it."""
    return _C._seed()
