"""More pointwise activations for torch.nn.functional (re-exported by
functional.py): hardswish, hardsigmoid, softsign, tanhshrink, threshold,
celu, softshrink, hardshrink, glu, prelu, rrelu; compositions of
differentiable C ops, with torch's formulas and argument checks."""
from .. import _C

__all__ = ["hardswish", "hardsigmoid", "softsign", "tanhshrink", "threshold", "celu",
           "softshrink", "hardshrink", "glu", "prelu", "rrelu"]


def _src(input, inplace):
    """What an in-place activation computes from: input itself, or a clone
    when autograd records the op. The composed op saves what it reads for
    its backward, and writing the result back into input would change that
    saved tensor (the version check would then fail at backward); torch's
    in-place kernels save their result instead."""
    if inplace and input.requires_grad and _C.is_grad_enabled():
        return input.clone()
    return input


def _out(input, out, inplace):
    return input.copy_(out) if inplace else out


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    x = _src(input, inplace)
    return _out(input, (x + 3).clamp(0, 6) / 6, inplace)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    x = _src(input, inplace)
    return _out(input, x * (x + 3).clamp(0, 6) / 6, inplace)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, value elsewhere."""
    x = _src(input, inplace)
    return _out(input, _C.where(x > threshold, x, _C.full_like(x, value)), inplace)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    x = _src(input, inplace)
    neg = (x.clamp(max=0) / alpha).expm1() * alpha
    return _out(input, _C.where(x > 0, x, neg), inplace)


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError("lambda must be greater or equal to 0, but found to be %s." % lambd)
    return _C.where(input > lambd, input - lambd,
                    _C.where(input < -lambd, input + lambd, _C.zeros_like(input)))


def hardshrink(input, lambd=0.5):
    return _C.where(input.abs() > lambd, input, _C.zeros_like(input))


def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves a, b of dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.size(dim) % 2:
        raise RuntimeError("Halving dimension must be even, but dimension %d is size %d"
                           % (dim % input.dim(), input.size(dim)))
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def prelu(input, weight):
    """x for x > 0, weight * x otherwise; weight has one element or one per
    channel (dim 1)."""
    if weight.numel() != 1:
        if input.dim() < 2 or input.size(1) != weight.numel():
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               "parameter numbers = %d and channel size = %d."
                               % (weight.numel(), input.size(1) if input.dim() > 1 else 1))
        weight = weight.reshape((1, -1) + (1,) * (input.dim() - 2))
    return _C.where(input > 0, input, input * weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky relu with a slope drawn uniformly from [lower, upper] per
    element while training, (lower + upper) / 2 otherwise."""
    return _rrelu(input, lower, upper, training, inplace, None)


def _rrelu(input, lower, upper, training, inplace, generator):
    # torch.rrelu / rrelu_ (the aten ops) also take the generator the
    # slopes are drawn from; F.rrelu does not
    if training:
        slope = _C.empty_like(input).uniform_(lower, upper, generator=generator)
    else:
        slope = (lower + upper) / 2
    x = _src(input, inplace)
    return _out(input, _C.where(x >= 0, x, x * slope), inplace)
