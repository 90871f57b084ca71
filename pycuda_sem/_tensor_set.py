"""Tensor.resize_, resize_as_, set_, is_set_to, as_subclass and
torch.view_as_real / view_as_complex: torch's rules (autograd refusal, argument forms, dtype
checks) over the bounds-checked C primitives of csrc/tensor/tensor_set.c,
which replace a tensor's storage and geometry in place, grow a storage in
place and view a storage as another dtype."""
import operator

from . import _C

# torch names dtypes by their C++ types in set_'s dtype error
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}
_INT64_MAX = (1 << 63) - 1


def _int_list(values, what):
    out = []
    for v in values:
        try:
            v = operator.index(v)
        except TypeError:
            raise TypeError("%s must be a sequence of ints, got %s" % (what, type(v).__name__)) \
                from None
        out.append(v)
    return out


def _sizes(args):
    if len(args) == 1 and not isinstance(args[0], int) and not hasattr(args[0], "__index__"):
        args = tuple(args[0])
    sizes = _int_list(args, "size")
    numel = 1
    for s in sizes:
        if s < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (s, sizes))
        numel *= s
        if numel > _INT64_MAX:
            raise RuntimeError("numel: integer multiplication overflow")
    return sizes, numel


def _contiguous_strides(sizes, memory_format):
    nd = len(sizes)
    order = list(range(nd - 1, -1, -1))
    if memory_format is not None and memory_format not in (_C.contiguous_format,
                                                           _C.preserve_format):
        if memory_format == _C.channels_last and nd == 4:
            order = [1, 3, 2, 0]
        elif memory_format == getattr(_C, "channels_last_3d", None) and nd == 5:
            order = [1, 4, 3, 2, 0]
        else:
            raise RuntimeError("unsupported memory format %s for a %d-D tensor"
                               % (memory_format, nd))
    strides = [0] * nd
    acc = 1
    for d in order:
        strides[d] = acc
        acc *= max(sizes[d], 1)
    return strides


def _refuse_grad(self):
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


def resize_(self, *sizes, memory_format=None):
    """In place: self gets `sizes` with contiguous strides (or the given
    memory_format's), at its storage offset. Its storage grows in place when
    too small (its bytes kept, so the data prefix survives, and every tensor
    over that storage sees the new memory); it never shrinks. Returns self."""
    _refuse_grad(self)
    sizes, numel = _sizes(sizes)
    strides = _contiguous_strides(sizes, memory_format)
    offset = self.storage_offset()
    if numel:
        _C._storage_resize_(self, (offset + numel) * self.element_size())
    return _C._tensor_set_geometry(self, self, offset, sizes, strides)


def resize_as_(self, the_template, memory_format=None):
    """resize_(the_template.size())."""
    if not isinstance(the_template, _C.Tensor):
        raise TypeError("resize_as_(): argument 'the_template' must be Tensor, not %s"
                        % type(the_template).__name__)
    return resize_(self, the_template.size(), memory_format=memory_format)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """In place, self becomes a view of source:
    set_()                          an empty storage (self has size (0,))
    set_(tensor)                    tensor's storage, offset, sizes and strides
    set_(storage, offset=0, size=None, stride=None)
    set_(tensor, offset, size, stride=None)  that storage with this geometry
    The dtypes must match (torch's RuntimeError); returns self."""
    _refuse_grad(self)
    if source is None:
        if size is not None or stride is not None or storage_offset != 0:
            raise TypeError("set_() with no source takes no other arguments")
        storage = _C.UntypedStorage(0, device=self.device)
        return _C._tensor_set_geometry(self, storage, 0, [0], [1])
    if isinstance(source, _C.Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError("Could not set tensor of type %s to a tensor of type %s"
                               % (_CPP_NAMES[str(source.dtype).split(".")[-1]],
                                  _CPP_NAMES[str(self.dtype).split(".")[-1]]))
        if size is None and stride is None and storage_offset == 0:
            return _C._tensor_set_geometry(self, source, source.storage_offset(),
                                           list(source.size()), list(source.stride()))
        if size is None:
            raise TypeError("set_(source, storage_offset, size, stride): size is required "
                            "with a storage_offset")
    elif not isinstance(source, _C.UntypedStorage):
        raise TypeError("set_(): argument 'source' must be Tensor or Storage, not %s"
                        % type(source).__name__)
    if source.device != self.device:
        raise RuntimeError("Attempted to set the storage of a tensor on device \"%s\" to a "
                           "storage on different device \"%s\".  This is no longer allowed; "
                           "the devices must match." % (self.device, source.device))
    if size is None:  # the whole storage, flat
        nbytes = source.untyped_storage().nbytes() if isinstance(source, _C.Tensor) \
            else source.nbytes()
        size = [nbytes // self.element_size()]
    sizes, _ = _sizes((size,))
    strides = _contiguous_strides(sizes, None) if stride is None else \
        _int_list(stride, "stride")
    offset = operator.index(storage_offset)
    return _C._tensor_set_geometry(self, source, offset, sizes, strides)


def is_set_to(self, tensor):
    """True when both view the same storage with the same offset, sizes and
    strides (torch's test: same memory, same geometry)."""
    if not isinstance(tensor, _C.Tensor):
        raise TypeError("is_set_to(): argument 'tensor' must be Tensor, not %s"
                        % type(tensor).__name__)
    return (self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
            and self.untyped_storage().nbytes() == tensor.untyped_storage().nbytes()
            and self.device == tensor.device
            and self.storage_offset() == tensor.storage_offset()
            and self.size() == tensor.size() and self.stride() == tensor.stride())


# ---- as_subclass ------------------------------------------------------------------------------

_alias_function = None


def _alias():
    """An autograd Function whose output is its input's memory as another
    Tensor class, the gradient passed straight through (torch's alias)."""
    global _alias_function
    if _alias_function is None:
        from .autograd.function import Function

        class Alias(Function):
            @staticmethod
            def forward(ctx, x, cls):
                return _C.Tensor._make_subclass(cls, x, False)

            @staticmethod
            def backward(ctx, grad):
                return grad, None
        _alias_function = Alias
    return _alias_function


def as_subclass(self, cls):
    """self as an instance of cls, a subclass of Tensor (or Tensor itself):
    the same memory, so writes through either show in both, and the same
    autograd graph (the result backs into self when self requires grad)."""
    if not isinstance(cls, type) or not issubclass(cls, _C.Tensor):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    if self.requires_grad and _C.is_grad_enabled():
        return _alias().apply(self, cls)
    return _C.Tensor._make_subclass(cls, self, False)


# ---- complex views -----------------------------------------------------------------------------

def view_as_real(input):
    """A real view of a complex tensor with a last dim of 2 (real, imag):
    memory shared, no copy."""
    if not isinstance(input, _C.Tensor):
        raise TypeError("view_as_real(): argument 'input' must be Tensor, not %s"
                        % type(input).__name__)
    if not input.is_complex():
        raise TypeError("view_as_real is only supported for complex tensors")
    real = _C.float32 if input.dtype == _C.complex64 else _C.float64
    if input.requires_grad and _C.is_grad_enabled():
        # the dtype alias is not an autograd op: keep gradients right with a
        # differentiable stack (a copy, so writes do not reach input)
        return _C.stack([input.real, input.imag], -1)
    return _C._alias_dtype(input, real, 2 * input.storage_offset(),
                           list(input.size()) + [2], [2 * s for s in input.stride()] + [1])


def view_as_complex(input):
    """A complex view of a float32/float64 tensor whose last dim (size 2,
    stride 1) holds (real, imag) pairs: memory shared, no copy."""
    if not isinstance(input, _C.Tensor):
        raise TypeError("view_as_complex(): argument 'input' must be Tensor, not %s"
                        % type(input).__name__)
    cplx = {_C.float32: _C.complex64, _C.float64: _C.complex128}.get(input.dtype)
    if cplx is None:
        name = {_C.float16: "Half", _C.bfloat16: "BFloat16", _C.int64: "Long", _C.int32: "Int",
                _C.int16: "Short", _C.int8: "Char", _C.uint8: "Byte", _C.bool: "Bool"}.get(
                    input.dtype, str(input.dtype))
        raise NotImplementedError("view_as_complex is only supported for float and double "
                                  "tensors, but got a tensor of scalar type: %s" % name)
    if input.dim() == 0 or input.size(-1) != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if input.requires_grad and _C.is_grad_enabled():
        # as view_as_real: a differentiable copy where autograd needs one
        from ._misc_api import complex as _complex
        return _complex(input.select(-1, 0), input.select(-1, 1))
    return _C._alias_dtype(input, cplx, input.storage_offset() // 2, list(input.size())[:-1],
                           [s // 2 for s in input.stride()[:-1]])
