"""torch.foreach and the torch._foreach_* functions: one op over every
tensor of a list (an EMA of weights, a hand-written optimizer, a clip by
global norm).

Each is a loop over the list that calls this project's per-tensor op, so
every dtype, device and layout the op takes works, and in-place forms keep
their tensors' identity. (torch launches one multi-tensor kernel per chunk
of the list; the loop here pays one launch a tensor, about 4 us of host time
each on CUDA.) The functions are generated from three tables: unary ops,
binary ops (with a scalar, a list of scalars, a tensor list, or one tensor
as the other operand) and the pointwise addcmul/addcdiv/lerp.
"""
import numbers

from . import _C

__all__ = []

_UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round",
          "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]
# name -> (the method, whether alpha is taken, whether one tensor may be the other operand)
_BINARY = {"add": ("add", True, True), "sub": ("sub", True, True), "mul": ("mul", False, True),
           "div": ("div", False, True), "maximum": ("maximum", False, False),
           "minimum": ("minimum", False, False), "clamp_max": ("clamp_max", False, False),
           "clamp_min": ("clamp_min", False, False), "pow": ("pow", False, False)}


def _tensors(xs, what="tensors"):
    if isinstance(xs, _C.Tensor) or not isinstance(xs, (list, tuple)):
        raise TypeError("foreach: %s must be a list or tuple of tensors, not %s"
                        % (what, type(xs).__name__))
    xs = list(xs)
    if not xs:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for t in xs:
        if not isinstance(t, _C.Tensor):
            raise TypeError("foreach: expected a list of tensors, but it holds a %s" % type(t).__name__)
    return xs


def _same_length(a, b):
    if len(a) != len(b):
        raise RuntimeError("Tensor lists must have the same number of tensors, got %d and %d"
                           % (len(a), len(b)))


def _others(xs, other, allow_tensor):
    """The second operand of each tensor of xs: a scalar (the same for all),
    a list of scalars or of tensors (one each), or one tensor (the same for all)."""
    if isinstance(other, _C.Tensor):
        if not allow_tensor and other.dim() != 0:
            raise TypeError("foreach: a single tensor operand is taken only by add, sub, mul and div")
        return [other] * len(xs)
    if isinstance(other, (list, tuple)):
        other = list(other)
        if all(isinstance(o, _C.Tensor) for o in other):
            _same_length(xs, other)
        elif len(other) != len(xs):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return other
    if isinstance(other, (numbers.Number, bool)):
        return [other] * len(xs)
    raise TypeError("foreach: expected a scalar, a list or a tensor as the other operand, not %s"
                    % type(other).__name__)


def _make_unary(name):
    def out_of_place(self):
        return [getattr(t, name)() for t in _tensors(self, "self")]

    def in_place(self):
        xs = _tensors(self, "self")
        for t in xs:
            getattr(t, name + "_")()
        return xs

    out_of_place.__name__, in_place.__name__ = name, name + "_"
    out_of_place.__doc__ = "[t.%s() for t in self]" % name
    in_place.__doc__ = "t.%s_() for each t of self; returns self's tensors." % name
    return out_of_place, in_place


def _make_binary(name, method, takes_alpha, allow_tensor):
    def apply(xs, other, alpha, inplace):
        os_ = _others(xs, other, allow_tensor)
        m = method + "_" if inplace else method
        if alpha is not None and alpha != 1:
            if not takes_alpha:
                raise TypeError("foreach.%s() got an unexpected keyword argument 'alpha'" % name)
            return [getattr(t, m)(o, alpha=alpha) for t, o in zip(xs, os_)]
        return [getattr(t, m)(o) for t, o in zip(xs, os_)]

    def out_of_place(self, other, *, alpha=None):
        if name == "pow" and isinstance(self, numbers.Number) and not isinstance(self, bool):
            return [_C.pow(self, t) for t in _tensors(other, "exponent")]  # a scalar base
        return apply(_tensors(self, "self"), other, alpha, False)

    def in_place(self, other, *, alpha=None):
        xs = _tensors(self, "self")
        apply(xs, other, alpha, True)
        return xs

    out_of_place.__name__, in_place.__name__ = name, name + "_"
    out_of_place.__doc__ = "[t.%s(o) for t, o in zip(self, other)]; other a scalar, scalars, tensors%s." % (
        method, " or a tensor" if allow_tensor else "")
    in_place.__doc__ = "The in-place form of %s; returns self's tensors." % name
    return out_of_place, in_place


def _pointwise(name):
    def apply(self, t1, t2, value, inplace):
        xs, a, b = _tensors(self, "self"), _tensors(t1, "tensor1"), _tensors(t2, "tensor2")
        _same_length(xs, a), _same_length(xs, b)
        if isinstance(value, _C.Tensor):
            value = value.tolist() if value.dim() == 1 else [value.item()] * len(xs)
        vs = _others(xs, value, False)
        m = name + "_" if inplace else name
        return [getattr(t, m)(x, y, value=v) for t, x, y, v in zip(xs, a, b, vs)]

    def out_of_place(self, tensor1, tensor2, value=1):
        return apply(self, tensor1, tensor2, value, False)

    def in_place(self, tensor1, tensor2, value=1):
        xs = _tensors(self, "self")
        apply(xs, tensor1, tensor2, value, True)
        return xs

    out_of_place.__name__, in_place.__name__ = name, name + "_"
    out_of_place.__doc__ = "[t.%s(a, b, value=v) ...] over the three lists." % name
    in_place.__doc__ = "The in-place form of %s; returns self's tensors." % name
    return out_of_place, in_place


def lerp(self, tensors1, weight):
    """[t.lerp(e, w) ...]: weight a scalar, scalars or tensors."""
    xs, ends = _tensors(self, "self"), _tensors(tensors1, "tensors1")
    _same_length(xs, ends)
    return [t.lerp(e, w) for t, e, w in zip(xs, ends, _others(xs, weight, True))]


def lerp_(self, tensors1, weight):
    """The in-place form of lerp; returns self's tensors."""
    xs, ends = _tensors(self, "self"), _tensors(tensors1, "tensors1")
    _same_length(xs, ends)
    for t, e, w in zip(xs, ends, _others(xs, weight, True)):
        t.lerp_(e, w)
    return xs


def norm(self, ord=2, dtype=None):
    """The vector ord-norm of each tensor, as 0-d tensors (in `dtype` if given)."""
    from . import linalg
    return [linalg.vector_norm(t, ord, dtype=dtype) for t in _tensors(self, "self")]


def max(self):  # noqa: A001 - torch's name
    """The largest element of each tensor, as 0-d tensors."""
    return [t.max() for t in _tensors(self, "self")]


def powsum(self, ord=2, dtype=None):
    """sum(|t| ** ord) of each tensor (the norm before its root)."""
    out = []
    for t in _tensors(self, "self"):
        x = t.to(dtype) if dtype is not None else t
        out.append(x.abs().pow(ord).sum())
    return out


def clone(self):
    return [t.clone() for t in _tensors(self, "self")]


def copy_(self, src, non_blocking=False):
    """t.copy_(s) for each pair; returns self's tensors."""
    xs, ss = _tensors(self, "self"), _tensors(src, "src")
    _same_length(xs, ss)
    for t, s in zip(xs, ss):
        t.copy_(s, non_blocking=non_blocking)
    return xs


def zero_(self):
    xs = _tensors(self, "self")
    for t in xs:
        t.zero_()
    return xs


def mm(self, mat2):
    """[a @ b for a, b in zip(self, mat2)] of 2-D tensors."""
    xs, ms = _tensors(self, "self"), _tensors(mat2, "mat2")
    _same_length(xs, ms)
    return [_C.mm(a, b) for a, b in zip(xs, ms)]


def _build():
    made = {}
    for n in _UNARY:
        made[n], made[n + "_"] = _make_unary(n)
    for n, spec in _BINARY.items():
        made[n], made[n + "_"] = _make_binary(n, *spec)
    for n in ("addcmul", "addcdiv"):
        made[n], made[n + "_"] = _pointwise(n)
    for f in (lerp, lerp_, norm, max, powsum, clone, copy_, zero_, mm):
        made[f.__name__] = f
    return made


_FUNCS = _build()
globals().update(_FUNCS)
__all__ = sorted(_FUNCS)


def _private_names():
    """torch._foreach_<name> for each function here (what __init__ exports)."""
    return {"_foreach_" + n: f for n, f in _FUNCS.items()}
