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
