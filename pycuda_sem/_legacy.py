"""The legacy tensor types of the oldest CUDA note: ``FloatTensor``,
``cuda.FloatTensor`` and the rest.

They are not classes of tensors (every tensor is a ``pycuda_sem.Tensor``); as
in PyTorch they are type objects that construct tensors of one dtype on one
kind of device, answer ``isinstance`` by dtype and device, and can be passed
to ``Tensor.type()``:

    x = cuda.FloatTensor(1)        # one float32 element on the current GPU
    y = FloatTensor([[1, 2, 3]])   # from data
    isinstance(y, FloatTensor)     # True
    y.type(cuda.DoubleTensor)      # float64 copy on the current GPU
"""
from . import _C

# (legacy name, dtype): the names PyTorch defines.
_TYPES = (
    ("Float", _C.float32), ("Double", _C.float64), ("Half", _C.float16),
    ("BFloat16", _C.bfloat16), ("Long", _C.int64), ("Int", _C.int32),
    ("Short", _C.int16), ("Byte", _C.uint8), ("Char", _C.int8), ("Bool", _C.bool),
)


class _LegacyTensorType(type):
    """Metaclass: calling a legacy type makes a tensor of its dtype/device."""

    def __call__(cls, *args, device=None):
        if cls.is_cuda:
            if device is None:
                device = "cuda"
            elif _C.device(device).type != "cuda":
                raise RuntimeError("legacy constructor expects device type: cuda but device "
                                   "type: %s was passed" % _C.device(device).type)
        elif device is not None and _C.device(device).type != "cpu":
            raise RuntimeError("legacy constructor expects device type: cpu but device type: "
                               "%s was passed" % _C.device(device).type)
        if len(args) == 1 and not isinstance(args[0], (int, _C.Size)) and \
                not hasattr(args[0], "__index__"):
            return _C.tensor(args[0], dtype=cls.dtype, device=device)
        if len(args) == 0:
            args = (0,)
        return _C.empty(*args, dtype=cls.dtype, device=device)

    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype is cls.dtype and \
            obj.is_cuda == cls.is_cuda

    def __repr__(cls):
        return "<class '%s.%s'>" % (cls.__module__, cls.__name__)


def _make(module, is_cuda):
    types = {}
    for name, dt in _TYPES:
        types[name + "Tensor"] = _LegacyTensorType(
            name + "Tensor", (), {"dtype": dt, "is_cuda": is_cuda, "__module__": module,
                                  "__doc__": "Legacy %s tensor type (%s)." %
                                  ("CUDA" if is_cuda else "CPU", dt)})
    return types


cpu_types = _make("pycuda_sem", False)
cuda_types = _make("pycuda_sem.cuda", True)


# ---- set_default_tensor_type: the pre-2.1 way to pick the default dtype ----------------------

_default_tensor_type_warned = False


def _import_dotted(name):
    """'torch.cuda.FloatTensor' -> the object (torch's names map to this
    package); a bad name raises the import or attribute error torch raises."""
    import importlib
    parts = name.split(".")
    if parts[0] == "torch":
        parts[0] = "pycuda_sem"
    obj = importlib.import_module(parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def set_default_tensor_type(t):
    """Deprecated (warns once, as torch): a legacy floating type, or its name
    ('torch.DoubleTensor'), sets the default dtype, as set_default_dtype,
    and the default device: a CUDA type (torch.cuda.FloatTensor) makes the
    factories allocate on the current GPU, a CPU type on the CPU again."""
    global _default_tensor_type_warned
    import warnings
    if isinstance(t, str):
        t = _import_dotted(t)
    if not _default_tensor_type_warned:
        _default_tensor_type_warned = True
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=2)
    if not isinstance(t, _LegacyTensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C.set_default_dtype(t.dtype)
    _C._set_default_device("cuda" if t.is_cuda else None)
