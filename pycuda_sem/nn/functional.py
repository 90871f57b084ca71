"""torch.nn.functional: softmax, log_softmax, one_hot, normalize.

softmax and log_softmax are the C ops (csrc/ops/softmax.c, a CUDA kernel on
the GPU); dim=None picks torch's legacy implicit dim, with its warning.
one_hot and normalize are compositions of C ops, as in torch."""
import warnings as _warnings

from .. import _C

__all__ = ["softmax", "log_softmax", "one_hot", "normalize"]


def _implicit_dim(name, ndim):
    _warnings.warn("Implicit dimension choice for %s has been deprecated. Change the call to "
                  "include dim=X as an argument." % name, UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (dtype= casts the input first)."""
    if dim is None:
        dim = _implicit_dim("softmax", input.dim())
    return _C.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - logsumexp(x) along dim (dtype= casts the input first)."""
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim())
    return _C.log_softmax(input, dim, dtype=dtype)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding: a new last dim of num_classes (max + 1 when -1)."""
    if not isinstance(tensor, _C.Tensor):
        raise TypeError("one_hot(): argument 'self' (position 1) must be Tensor, not %s"
                        % type(tensor).__name__)
    if tensor.dtype != _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        # one host sync, as torch's (it reads min and max to check the classes)
        lo, hi = tensor.min().item(), tensor.max().item()
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _C.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    if out is None:
        return input / denom
    return _C.div(input, denom, out=out)
