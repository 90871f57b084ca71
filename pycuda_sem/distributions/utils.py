"""torch.distributions.utils: broadcasting parameters together, the
probs <-> logits maps (with torch's clamping at the dtype's eps), and
lazy_property (a parameter computed on first use from the other one, as
Bernoulli's probs is from logits)."""
import numbers

from .. import _C
from .._dtype_info import finfo

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def broadcast_all(*values):
    """The tensors among values broadcast together; numbers become tensors
    of the first tensor's floating dtype and device (the default dtype when none is one)."""
    for v in values:
        if not isinstance(v, (_C.Tensor, numbers.Number)):
            raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor "
                             "or objects implementing __torch_function__.")
    ref = next((v for v in values if isinstance(v, _C.Tensor)), None)
    dt = ref.dtype if ref is not None and ref.is_floating_point() else _C.get_default_dtype()
    dev = ref.device if ref is not None else "cpu"
    ts = [v if isinstance(v, _C.Tensor) else _C.tensor(float(v), dtype=dt, device=dev) for v in values]
    from .._math import broadcast_tensors
    return broadcast_tensors(*ts)


def clamp_probs(probs):
    """probs kept inside [eps, 1 - eps] so that their logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """sigmoid for binary logits, softmax over the last dim otherwise."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def probs_to_logits(probs, is_binary=False):
    """log(p) - log1p(-p) for binary probabilities, log(p) otherwise (after clamp_probs)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """A property computed once, on first access, then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = getattr(wrapped, "__doc__", None)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        from ..autograd.grad_mode import enable_grad
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class BinaryParams:
    """The two spellings of a binary distribution's parameter: whichever of
    probs and logits the constructor stored, the other is derived on first
    use (Bernoulli, Geometric, Binomial, LogitRelaxedBernoulli)."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal diag) of the last two dims, row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError("diag (%d) provided is outside [%d, %d]." % (diag, -n, n - 1))
    idx = _C.tril_indices(n, n, diag, device=mat.device)
    return mat[..., idx[0], idx[1]]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec."""
    import math
    n = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))) / 2
    eps = finfo(vec.dtype).eps
    if not round(n) - n < eps:
        raise ValueError("The size of last dimension is %d which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix." % vec.shape[-1])
    n = round(n.item()) if isinstance(n, _C.Tensor) else round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    idx = _C.tril_indices(n, n, diag, device=vec.device)
    mat[..., idx[0], idx[1]] = vec
    return mat
