"""Backend switches, as torch.backends: cuda (matmul TF32 and reduced-precision
flags, the cuFFT plan cache) and cudnn (allow_tf32, kept for scripts: there
are no convolutions here)."""
from . import cuda, cudnn  # noqa: F401
