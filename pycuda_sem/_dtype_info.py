"""torch.finfo and torch.iinfo: the numeric limits of a dtype.

The values come from NumPy's finfo/iinfo for the types NumPy has; bfloat16
(which NumPy lacks) has float32's exponent range with an 8-bit significand,
so its limits are written out here. A complex dtype reports the limits of its
real part, as torch's do.
"""
import numpy as np

from . import _C

_FLOAT = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
_COMPLEX_PART = {"complex64": "float32", "complex128": "float64"}
_INT = {"uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
        "int64": np.int64}


def _dtype_name(dtype):
    if not isinstance(dtype, _C.dtype):
        raise TypeError("expected a pycuda_sem.dtype, got %s" % type(dtype).__name__)
    return str(dtype).split(".")[-1]


def _legacy_name(t):
    """torch's legacy name of t's dtype ("Float", "Long", "ComplexFloat"),
    as its error messages print it: the C dtype table's, through t.type()."""
    return t.type().rsplit(".", 1)[-1][:-len("Tensor")]


class finfo:
    """Limits of a floating point dtype (the default dtype when none is given):
    bits, eps, max, min, tiny (= smallest_normal), resolution and dtype (its
    name)."""

    def __init__(self, type=None):
        name = _dtype_name(_C.get_default_dtype() if type is None else type)
        name = _COMPLEX_PART.get(name, name)
        if name == "bfloat16":
            self.bits, self.eps, self.resolution = 16, 2.0 ** -7, 0.01
            self.max = float((2 - 2.0 ** -7) * 2.0 ** 127)
            self.smallest_normal = 2.0 ** -126
        elif name in _FLOAT:
            f = np.finfo(_FLOAT[name])
            self.bits, self.eps, self.resolution = int(f.bits), float(f.eps), 10.0 ** -int(f.precision)
            self.max, self.smallest_normal = float(f.max), float(f.smallest_normal)
        else:
            raise TypeError("pycuda_sem.finfo() requires a floating point input type, got "
                            "pycuda_sem.%s; use pycuda_sem.iinfo for integer types" % name)
        self.min = -self.max
        self.tiny = self.smallest_normal
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return ("finfo(resolution=%g, min=%g, max=%g, eps=%g, smallest_normal=%g, tiny=%g, "
                "dtype=%s)" % (self.resolution, self.min, self.max, self.eps,
                               self.smallest_normal, self.tiny, self.dtype))


class iinfo:
    """Limits of an integer dtype: bits, max, min and dtype (its name)."""

    def __init__(self, type):
        name = _dtype_name(type)
        if name not in _INT:
            raise TypeError("pycuda_sem.%s is not supported by pycuda_sem.iinfo" % name)
        i = np.iinfo(_INT[name])
        self.bits, self.max, self.min, self.dtype = int(i.bits), int(i.max), int(i.min), name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return "iinfo(min=%g, max=%g, dtype=%s)" % (self.min, self.max, self.dtype)


# ---- dtype queries ------------------------------------------------------------------------

_UNSIGNED = ("uint8", "bool")


def is_signed(input):
    """Whether input's dtype holds negative numbers (all but uint8 and bool)."""
    if not isinstance(input, _C.Tensor):
        raise TypeError("is_signed(): argument 'input' must be Tensor, not %s" % type(input).__name__)
    return _dtype_name(input.dtype) not in _UNSIGNED


def _category(v):
    """torch's promotion category of an operand: 0 bool, 1 integer, 2 float, 3 complex."""
    import builtins
    if isinstance(v, _C.Tensor):
        d = v.dtype
        return 3 if d.is_complex else 2 if d.is_floating_point else 0 if d == _C.bool else 1
    if isinstance(v, builtins.bool):
        return 0
    if isinstance(v, int):
        return 1
    if isinstance(v, float):
        return 2
    if isinstance(v, complex):
        return 3
    raise TypeError("result_type(): expected a Tensor or a number, got %s" % type(v).__name__)


def result_type(tensor1, tensor2):
    """The dtype an elementwise op of these two operands produces (torch's
    rules: a dimensioned tensor's dtype wins within its category, a 0-dim
    tensor's over a number's, a higher category raises to its default)."""
    import builtins
    ops = (tensor1, tensor2)
    cats = [_category(v) for v in ops]

    def tier(v):  # 2: tensor with dims, 1: 0-dim tensor, 0: number
        return (2 if v.dim() else 1) if isinstance(v, _C.Tensor) else 0

    best = builtins.max(cats)
    dtype = None
    for t in (2, 1):
        ds = [v.dtype for v in ops if isinstance(v, _C.Tensor) and tier(v) == t]
        if not ds:
            continue
        d = ds[0] if len(ds) == 1 else _C.promote_types(ds[0], ds[1])
        if dtype is None:
            dtype = d
        elif _category(_C.empty(0, dtype=d)) > _category(_C.empty(0, dtype=dtype)):
            dtype = d
    if dtype is None or _category(_C.empty(0, dtype=dtype)) < best:
        defaults = {0: _C.bool, 1: _C.int64, 2: _C.get_default_dtype(),
                    3: _C.complex128 if _C.get_default_dtype() == _C.float64 else _C.complex64}
        if dtype is not None and best == 3 and dtype.is_floating_point:
            dtype = _C.complex128 if dtype == _C.float64 else _C.complex64
        else:
            dtype = defaults[best]
    return dtype


def can_cast(from_, to):
    """Whether torch's casting rules allow from_ -> to (not to a lower kind:
    complex to real, float to integer, non-bool to bool)."""
    def kind(d):
        return 3 if d.is_complex else 2 if d.is_floating_point else 0 if d == _C.bool else 1
    return kind(from_) <= kind(to)
