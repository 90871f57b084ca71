"""pycuda_sem.cuda.random: torch.cuda.random, the CUDA generator functions
of pycuda_sem.cuda under the submodule name scripts import them from."""
from . import (  # noqa: F401
    manual_seed, manual_seed_all, seed, seed_all, initial_seed, get_rng_state, set_rng_state,
    get_rng_state_all, set_rng_state_all, current_device, device_count, is_initialized,
)

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]
