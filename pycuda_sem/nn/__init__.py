"""pycuda_sem.nn: for now only nn.functional's softmax, log_softmax, one_hot
and normalize (the layers come with the training issue)."""
from . import functional  # noqa: F401
