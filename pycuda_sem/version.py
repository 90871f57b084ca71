"""Build information, as torch.version: ``cuda`` is the CUDA version the
extension was built against; ``hip`` is None (this is not a ROCm build)."""
from ._C import _cuda_version

cuda = _cuda_version()
hip = None
__version__ = "0.1.0"
