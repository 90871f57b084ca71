"""Tensor methods and properties written in Python (bound in
csrc/ops/py_methods.c): the H/mH/layout properties, layout and inference
queries (to_dense, is_inference, dim_order, const_data_ptr), new_empty_strided,
prelu/hardshrink as methods, the random fills torch has beyond uniform_ and
normal_ (log_normal_, cauchy_, geometric_: transforms of those, so they use
the same generator), apply_/map_/map2_ (Python callables element by element,
CPU only, as torch), the unsafe_* split aliases, and the factories
torch.asarray and torch.frombuffer."""
import math

import numpy as np

from . import _C
from ._math_elementwise import _t


# ---- properties ------------------------------------------------------------------------------

def _prop_H(self):
    if self.dim() == 0:
        return self
    if self.dim() != 2:
        more = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got %d-D tensor.%s"
                           % (self.dim(), more))
    return _prop_mH(self)


def _prop_mH(self):
    if self.dim() < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. Got %d-D "
                           "tensor." % self.dim())
    t = self.transpose(-2, -1)
    if self.is_complex():
        from ._math_more import conj
        t = conj(t)  # a copy: there is no lazy conjugate bit here
    return t


def _prop_layout(self):
    from ._torch_misc import strided
    return strided


# ---- queries ---------------------------------------------------------------------------------

def to_dense(self, dtype=None, *, masked_grad=None):
    """self (tensors are strided already), converted when dtype is given."""
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


def is_inference(input):
    """False: pycuda_sem does not mark tensors made under inference_mode
    (they are ordinary tensors that do not require grad)."""
    _t("is_inference", input)
    return False


def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost by stride (ties in dim order)."""
    st = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: (-st[d], d)))


def const_data_ptr(self):
    """data_ptr() (there are no read-only tensors to tell apart)."""
    return self.data_ptr()


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                      requires_grad=False):
    """An uninitialised tensor of these sizes and strides with self's dtype
    and device unless given."""
    from ._torch_misc import check_layout
    check_layout("new_empty_strided", layout)
    r = _C.empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=device if device is not None else self.device)
    return r.requires_grad_(True) if requires_grad else r


def prelu(self, weight):
    from .nn import functional as F
    return F.prelu(self, weight)


def hardshrink(self, lambd=0.5):
    from .nn import functional as F
    return F.hardshrink(self, lambd)


# ---- random fills over uniform_ and normal_ ---------------------------------------------------

def _gen(generator):
    return {} if generator is None else {"generator": generator}


# C++'s names of the dtypes, which torch's cauchy_ message prints
_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _dtype_name(self):
    return str(self.dtype).split(".")[-1]


def _need_float(self, what):
    if not self.is_floating_point():
        raise RuntimeError("%s is a continuous probability distribution. dtype must be a floating point "
                           "but you specified %s" % (what, _CPP_NAMES.get(_dtype_name(self), _dtype_name(self))))


def _not_for(self, op):
    """torch's NotImplementedError for a dtype a kernel was not built for."""
    from ._dtype_info import _legacy_name
    raise NotImplementedError('"%s_%s" not implemented for \'%s\''
                              % (op, "cuda" if self.is_cuda else "cpu", _legacy_name(self)))


def log_normal_(self, mean=1, std=2, *, generator=None):
    """exp of normal(mean, std) draws, in place."""
    if not self.is_floating_point():
        _not_for(self, "log_normal")
    if not std > 0:
        raise RuntimeError("log_normal_ expects std > 0.0, but found std=%s" % std)
    return self.normal_(mean, std, **_gen(generator)).exp_()


def cauchy_(self, median=0, sigma=1, *, generator=None):
    """median + sigma * tan(pi (u - 1/2)), u uniform, in place."""
    _need_float(self, "Cauchy distribution")
    if not sigma > 0:
        raise RuntimeError("cauchy_ expects sigma > 0.0, but found sigma=%s" % sigma)
    u = self.uniform_(**_gen(generator))
    return u.sub_(0.5).mul_(math.pi).tan_().mul_(sigma).add_(median)


def geometric_(self, p, *, generator=None):
    """ceil(log(1 - u) / log1p(-p)), u uniform in [0, 1): the number of
    Bernoulli(p) trials to the first success (1, 2, ...), in place."""
    if self.is_complex() or self.dtype == _C.bool:
        _not_for(self, "geometric")
    if not 0 < p < 1:
        raise RuntimeError("geometric_ expects p to be in (0, 1), but got p=%s" % p)
    u = _C.empty(tuple(self.shape), dtype=_C.float64, device=self.device).uniform_(**_gen(generator))
    k = ((1 - u).log() / math.log1p(-p)).ceil().clamp_(min=1)
    return self.copy_(k)


# ---- Python callables element by element (CPU) ---------------------------------------------

def _cpu_only(self, name):
    if self.device.type != "cpu":
        raise TypeError("%s is only implemented on CPU tensors" % name)
    if self.requires_grad:
        raise RuntimeError("Can't call %s() on Variable that requires grad. Use var.detach().%s() "
                           "instead." % (name, name))


def _elementwise(self, name, fn, others):
    _cpu_only(self, name)
    if not callable(fn):
        raise TypeError("%s(): the callable argument must be callable" % name)
    arrays = []
    for o in others:
        _t(name, o, "tensor")
        if o.device.type != "cpu":
            raise TypeError("%s is only implemented on CPU tensors" % name)
        arrays.append(o.detach().expand(tuple(self.shape)).contiguous().numpy().reshape(-1).tolist())
    vals = self.detach().contiguous().numpy().reshape(-1).tolist()
    out = [fn(v, *(a[i] for a in arrays)) for i, v in enumerate(vals)]
    np_dtype = self.detach().numpy().dtype
    res = np.asarray(out).astype(np_dtype, copy=False).reshape(tuple(self.shape))
    return self.copy_(_C.from_numpy(np.ascontiguousarray(res)))


def apply_(self, callable):
    """self[i] = callable(self[i]) for every element, in place (CPU only; the
    results are cast to self's dtype)."""
    return _elementwise(self, "apply_", callable, ())


def map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]), tensor broadcast to self (CPU only)."""
    return _elementwise(self, "map_", callable, (tensor,))


def map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]) (CPU only)."""
    return _elementwise(self, "map2_", callable, (x, y))


# ---- the unsafe_* split aliases -------------------------------------------------------------

def unsafe_chunk(input, chunks, dim=0):
    """chunk() (the views are the same here: there is no aliasing check to skip)."""
    return _t("unsafe_chunk", input).chunk(chunks, dim)


def unsafe_split(input, split_size, dim=0):
    """split() under torch's 'unsafe' name."""
    return _t("unsafe_split", input).split(split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split_with_sizes() under torch's 'unsafe' name."""
    from ._math_shape import split_with_sizes
    return split_with_sizes(_t("unsafe_split_with_sizes", input), split_sizes, dim)


# ---- torch.asarray, torch.frombuffer ------------------------------------------------------

def _same_device(dev, t):
    if dev is None:
        return True
    d = _C.device(dev) if not isinstance(dev, _C.device) else dev
    return d.type == t.device.type and (d.index is None or d.index == (t.device.index or 0)
                                        if d.type == "cuda" else True)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """A tensor of obj (a tensor, a NumPy array or anything with the array
    interface, a buffer, a nested sequence or a number). Without copy=True,
    a tensor or array whose dtype and device already fit is shared, not
    copied; copy=False refuses a conversion that would copy."""
    if isinstance(obj, _C.Tensor):
        fits = (dtype is None or dtype == obj.dtype) and _same_device(device, obj)
        if not fits:
            if copy is False:
                raise ValueError("can't alias tensor into a tensor with a different dtype or device.")
            r = obj.to(device=device if device is not None else obj.device, dtype=dtype or obj.dtype)
        else:
            r = obj.clone() if copy else obj
    elif isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__") or isinstance(
            obj, (bytes, bytearray, memoryview)):
        arr = np.asarray(obj) if not isinstance(obj, (bytes, bytearray, memoryview)) \
            else np.frombuffer(obj, dtype=np.uint8)
        if arr.dtype.byteorder not in ("=", "|", "<") or arr.dtype == object:
            raise TypeError("asarray: unsupported array dtype %s" % arr.dtype)
        shared = _C.from_numpy(arr) if (copy is not True and arr.flags.writeable) else None
        if shared is None:
            if copy is False:
                raise ValueError("can't alias a read-only array into a tensor.")
            shared = _C.from_numpy(np.array(arr))
        fits = (dtype is None or dtype == shared.dtype) and _same_device(device, shared)
        if not fits:
            if copy is False:
                raise ValueError("can't alias the array into a tensor with a different dtype or device.")
            r = shared.to(device=device if device is not None else shared.device, dtype=dtype or shared.dtype)
        else:
            r = shared
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        r = _C.tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        r = r.requires_grad_(True)
    return r


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor over the bytes of a Python buffer (shared, not
    copied: writes go through; a read-only buffer is copied, with a
    warning), count elements of dtype from byte offset."""
    if not isinstance(dtype, _C.dtype):
        raise TypeError("frombuffer(): argument 'dtype' must be torch.dtype, not %s" % type(dtype).__name__)
    try:
        mv = memoryview(buffer)
    except TypeError:
        raise TypeError("object does not implement Python buffer protocol.") from None
    nbytes = mv.nbytes
    item = _C.empty(0, dtype=dtype).element_size()
    if nbytes == 0 or count == 0:
        raise ValueError("both buffer length (%d) and count (%d) must not be 0" % (nbytes, count))
    if not 0 <= offset < nbytes:
        raise ValueError("offset (%d bytes) must be non-negative and no greater than buffer length (%d "
                         "bytes) minus 1." % (offset, nbytes))
    if count < 0:
        if (nbytes - offset) % item:
            raise ValueError("buffer length (%d bytes) after offset (%d bytes) must be a multiple of element "
                             "size (%d)" % (nbytes - offset, offset, item))
        count = (nbytes - offset) // item
    elif offset + count * item > nbytes:
        raise ValueError("requested buffer length (%d * %d bytes) after offset (%d bytes) must not be "
                         "greater than actual buffer length (%d bytes)" % (count, item, offset, nbytes))
    # read as a same-size integer and reinterpret: no NumPy dtype is needed for bfloat16 and friends
    raw = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64, 16: np.complex128}[item]
    arr = np.frombuffer(mv.cast("B") if mv.ndim != 1 or mv.format != "B" else mv, dtype=raw, count=count,
                        offset=offset)
    if not arr.flags.writeable:
        # torch shares a read-only buffer anyway (and warns); a tensor here must own writable memory
        import warnings
        warnings.warn("The given buffer is not writable: pycuda_sem copies it (torch would share it).",
                      UserWarning, stacklevel=2)
        arr = arr.copy()
    r = _C.from_numpy(arr)
    r = r.view(dtype) if r.dtype != dtype else r
    return r.requires_grad_(True) if requires_grad else r


def storage(self):
    """Tensor.storage(): the deprecated TypedStorage view (_typed_storage.py)."""
    from ._typed_storage import storage as _storage
    return _storage(self)
