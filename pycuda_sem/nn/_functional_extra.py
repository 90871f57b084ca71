"""Smaller torch.nn.functional pieces (re-exported by functional.py):
alpha dropout for SELU networks, gumbel_softmax, pdist, the in-place
activation forms (elu_, selu_, celu_, threshold_, hardtanh_, rrelu_; and
torch.celu_/selu_/rrelu_/threshold_ at the top level), and the deprecated
upsample_nearest / upsample_bilinear. Compositions of differentiable C ops
with torch's formulas and argument checks."""
import warnings

from .. import _C
from .. import linalg

__all__ = ["alpha_dropout", "feature_alpha_dropout", "gumbel_softmax", "pdist", "elu_", "selu_",
           "celu_", "threshold_", "hardtanh_", "rrelu_", "upsample_nearest", "upsample_bilinear"]

# SELU's negative saturation value, -scale * alpha: the value a dropped unit
# takes in alpha dropout, so that the SELU fixed point (mean 0, variance 1) holds
_SELU_SAT = 1.7580993408473766


def _alpha_dropout(input, p, training, inplace, feature):
    """torch's (ATen _dropout_impl with alpha): keep mask m ~ Bernoulli(1 - p),
    a = 1 / sqrt((alpha^2 p + 1)(1 - p)), out = x m a + alpha a ((m - 1) + p);
    for unit-variance zero-mean inputs the output keeps mean 0 and variance 1."""
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        zero = _C.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if feature:  # one draw per sample and channel, as torch's make_feature_noise
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
        noise = _C.empty(shape, dtype=input.dtype, device=input.device)
    else:
        noise = _C.empty_like(input)
    noise.bernoulli_(1 - p)
    a = 1.0 / ((_SELU_SAT * _SELU_SAT * p + 1) * (1 - p)) ** 0.5
    b = (noise - 1) * (_SELU_SAT * a) + _SELU_SAT * a * p
    noise = noise * a
    if inplace:
        return input.mul_(noise).add_(b)
    return input * noise + b


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's self-normalisation (dropped units
    take SELU's saturation value, then an affine map restores mean and
    variance); the identity unless training (torch's default is False here)."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout with one mask value per (sample, channel)."""
    return _alpha_dropout(input, p, training, inplace, True)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1) (-log of an
    exponential draw); hard=True returns the one-hot of the argmax whose
    gradient is the soft sample's (straight-through: y_hard - y.detach() + y)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_C.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = _C.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def pdist(input, p=2):
    """The p-norm distances between the rows of an [N, M] input, pairs i < j
    in row-major order: N (N - 1) / 2 values (the upper triangle of cdist)."""
    if input.dim() != 2:
        raise RuntimeError("pdist only supports 2D tensors, got: %dD" % input.dim())
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.size(0)
    if n <= 1:
        return _C.empty(0, dtype=input.dtype, device=input.device)
    ij = _C.triu_indices(n, n, 1, device=input.device)
    diff = input.index_select(0, ij[0]) - input.index_select(0, ij[1])
    return linalg.vector_norm(diff, float(p), dim=1)


# ---- in-place activation forms -----------------------------------------------------------------

def elu_(input, alpha=1.0):
    from .functional import elu
    return elu(input, alpha, True)


def selu_(input):
    from .functional import selu
    return selu(input, True)


def celu_(input, alpha=1.0):
    from ._functional_act import celu
    return celu(input, alpha, True)


def threshold_(input, threshold, value):
    from ._functional_act import threshold as _threshold
    return _threshold(input, threshold, value, True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    from .functional import hardtanh
    return hardtanh(input, min_val, max_val, True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    from ._functional_act import rrelu
    return rrelu(input, lower, upper, training, True)


def _torch_rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu_: F.rrelu_ plus aten's generator argument (the slopes' draws)."""
    from ._functional_act import _rrelu
    return _rrelu(input, lower, upper, training, True, generator)


_torch_rrelu_.__name__ = "rrelu_"  # torch.rrelu_ (pycuda_sem/__init__.py imports it)


# ---- deprecated interpolation aliases -----------------------------------------------------------

def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest'), with torch's warning."""
    from ._functional_resample import interpolate
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True), with
    torch's warning."""
    from ._functional_resample import interpolate
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
