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
