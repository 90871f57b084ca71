"""Backend switches, as torch.backends: cuda (matmul TF32 and reduced-precision
flags, the cuFFT plan cache) and cudnn (allow_tf32, kept for scripts: there
are no convolutions here), and mps (absent: is_available() is False, so
device-picking scripts fall through to 'cpu')."""
from . import cuda, cudnn, mps  # noqa: F401
