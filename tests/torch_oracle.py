"""torch as the oracle of the GPU tests: `_torch` is the real torch module
when it imports and sees a GPU (the GPU machine has it), else None, and
`needs_torch` skips a test that cannot run without it."""
import pytest

try:
    import torch as _torch
    HAVE_TORCH = _torch.cuda.is_available()
except Exception:  # noqa: BLE001 - any import failure means "no torch"
    _torch = None
    HAVE_TORCH = False

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch with CUDA not installed")
