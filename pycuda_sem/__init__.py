"""pycuda_sem: the torch.cuda programming model as a C extension.

``import pycuda_sem as torch`` gives scripts the names of PyTorch's CUDA
semantics note: devices, streams, events, a caching allocator with PyTorch's
memory statistics, and tensors on the CPU and on CUDA devices. Importing never
touches the GPU; CUDA starts lazily at the first call that needs it.
"""
from . import _C
from ._C import device, UntypedStorage

__version__ = "0.1.0"

from . import version  # noqa: E402
from . import cuda  # noqa: E402
from . import backends  # noqa: E402

# ---- tensors (dtypes, Tensor, factories): see the section below -------------
