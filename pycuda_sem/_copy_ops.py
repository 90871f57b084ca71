"""torch's out-of-place spellings of the view ops (alias_copy, t_copy,
transpose_copy, ...: each the view followed by a copy into new, contiguous
memory, with out= where torch has it), plus the odd factories and aliases
that live next to them at torch's top level: range (deprecated, inclusive
end), empty_permuted, as_strided_ and to_dlpack.

The copies are `clone(memory_format=contiguous_format)` of the view, so they
are differentiable wherever the view is, on the CPU and on CUDA alike."""
import math
import operator
import warnings

from . import _C
from ._tensor_set import _CPP_NAMES, view_as_real, view_as_complex

__all__ = ["alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
           "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
           "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy",
           "unsqueeze_copy", "view_as_real_copy", "view_as_complex_copy", "view_copy", "range",
           "empty_permuted", "as_strided_", "to_dlpack"]


def _check(fname, input):
    if not isinstance(input, _C.Tensor):
        raise TypeError("%s(): argument 'input' (position 1) must be Tensor, not %s"
                        % (fname, type(input).__name__))


def _cpp_name(dtype):
    return _CPP_NAMES[str(dtype).rsplit(".", 1)[-1]]


def _write_out(result, out):
    """torch's out= contract: same dtype (RuntimeError otherwise), resized
    to the result's shape (with torch's deprecation warning when it held
    elements), the values copied in; returns out."""
    if not isinstance(out, _C.Tensor):
        raise TypeError("argument 'out' must be Tensor, not %s" % type(out).__name__)
    if out.dtype != result.dtype:
        raise RuntimeError("Expected out tensor to have dtype %s, but got %s instead"
                           % (_cpp_name(result.dtype), _cpp_name(out.dtype)))
    if out.shape != result.shape:
        if out.numel():
            warnings.warn("An output with one or more elements was resized since it had shape "
                          "%s, which does not match the required output shape %s. This "
                          "behavior is deprecated, and in a future PyTorch release outputs will "
                          "not be resized unless they have zero elements. You can explicitly "
                          "reuse an out tensor t by resizing it, inplace, to zero elements with "
                          "t.resize_(0)." % (list(out.shape), list(result.shape)),
                          UserWarning, stacklevel=3)
        out.resize_(result.shape)
    with _no_grad():  # out= is not recorded by autograd
        out.copy_(result)
    return out


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


def _copied(view, out):
    result = view.clone(memory_format=_C.contiguous_format)
    return result if out is None else _write_out(result, out)


def _copied_list(views, out):
    results = tuple(v.clone(memory_format=_C.contiguous_format) for v in views)
    if out is None:
        return results
    if len(out) != len(results):
        raise RuntimeError("Expected out to hold %d tensors, but got %d"
                           % (len(results), len(out)))
    for r, o in zip(results, out):
        _write_out(r, o)
    return None  # torch returns nothing when the outputs are given


# ---- the view ops, copied ------------------------------------------------------------------

def alias_copy(input, *, out=None):
    """A copy of input (torch's alias, materialised)."""
    _check("alias_copy", input)
    return _copied(input, out)


def detach_copy(input, *, out=None):
    """A copy of input outside the autograd graph."""
    _check("detach_copy", input)
    return _copied(input.detach(), out)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    _check("as_strided_copy", input)
    return _copied(input.as_strided(size, stride, storage_offset), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    _check("diagonal_copy", input)
    return _copied(input.diagonal(offset, dim1, dim2), out)


def expand_copy(input, size, *, implicit=False, out=None):
    _check("expand_copy", input)
    return _copied(input.expand(*size), out)


def permute_copy(input, dims, *, out=None):
    _check("permute_copy", input)
    return _copied(input.permute(*dims), out)


def select_copy(input, dim, index, *, out=None):
    _check("select_copy", input)
    return _copied(input.select(dim, index), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """input[..., start:end:step, ...] along dim, copied (step positive)."""
    _check("slice_copy", input)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = operator.index(dim)
    nd = max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got "
                         "%d)" % (-nd, nd - 1, dim))
    key = (slice(None),) * (dim % nd) + (slice(start, end, step),)
    return _copied(input[key], out)


def split_copy(input, split_size, dim=0, *, out=None):
    _check("split_copy", input)
    return _copied_list(input.split(split_size, dim), out)


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    _check("split_with_sizes_copy", input)
    return _copied_list(input.split(list(split_sizes), dim), out)


def squeeze_copy(input, dim=None, *, out=None):
    _check("squeeze_copy", input)
    view = input.squeeze() if dim is None else input.squeeze(dim)
    return _copied(view, out)


def t_copy(input, *, out=None):
    _check("t_copy", input)
    return _copied(input.t(), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    _check("transpose_copy", input)
    return _copied(input.transpose(dim0, dim1), out)


def unbind_copy(input, dim=0, *, out=None):
    _check("unbind_copy", input)
    return _copied_list(input.unbind(dim), out)


def unfold_copy(input, dimension, size, step, *, out=None):
    _check("unfold_copy", input)
    return _copied(input.unfold(dimension, size, step), out)


def unsqueeze_copy(input, dim, *, out=None):
    _check("unsqueeze_copy", input)
    return _copied(input.unsqueeze(dim), out)


def view_as_real_copy(input, *, out=None):
    _check("view_as_real_copy", input)
    return _copied(view_as_real(input), out)


def view_as_complex_copy(input, *, out=None):
    _check("view_as_complex_copy", input)
    return _copied(view_as_complex(input), out)


def view_copy(input, size, *, out=None):
    """input.view(size) or input.view(dtype), copied."""
    _check("view_copy", input)
    view = input.view(size) if isinstance(size, _C.dtype) else input.view(*size)
    return _copied(view, out)


# ---- factories and aliases -----------------------------------------------------------------

def range(start, end, step=1, *, out=None, dtype=None, device=None,  # noqa: A001
          requires_grad=False, pin_memory=False):
    """Deprecated (warns, as torch): start, start + step, ... up to and
    including end, floor((end - start) / step) + 1 values, in the default
    dtype unless dtype is given (integers too, unlike arange)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    values = []
    for name, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, _C.Tensor) and v.numel() == 1:
            v = v.item()
        if not isinstance(v, (int, float)):
            raise TypeError("range(): argument '%s' must be Number, not %s"
                            % (name, type(v).__name__))
        values.append(v)
    start, end, step = values
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if any(isinstance(v, float) and not math.isfinite(v) for v in (start, end)):
        raise RuntimeError("unsupported range: %s -> %s" % (start, end))
    n = int(math.floor((end - start) / step)) + 1
    dtype = _C.get_default_dtype() if dtype is None else dtype
    if all(isinstance(v, int) for v in (start, step)) and not dtype.is_floating_point:
        # exact integer arithmetic (float64 would round past 2**53)
        result = _C.arange(n, dtype=_C.int64, device=device) * step + start
    else:
        # start + i * step in float64, as torch accumulates, then the dtype
        result = _C.arange(n, dtype=_C.float64, device=device) * step + start
    result = result.to(dtype)
    if pin_memory:
        result = result.pin_memory()
    if out is not None:
        return _write_out(result, out)
    if requires_grad:
        result.requires_grad_()
    return result


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """An uninitialised tensor of `size` whose memory holds its dims in the
    order `physical_layout` (outermost first): empty_permuted((N, C, H, W),
    (0, 2, 3, 1)) is laid out as channels_last."""
    size = [operator.index(s) for s in size]
    physical_layout = [operator.index(d) for d in physical_layout]
    if len(size) != len(physical_layout):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout; i.e. len(size) = %d is not equal to "
                           "len(physical_layout) = %d" % (len(size), len(physical_layout)))
    nd = len(size)
    seen = set()
    for d in physical_layout:
        if not -max(nd, 1) <= d < max(nd, 1):
            raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but "
                             "got %d)" % (-max(nd, 1), max(nd, 1) - 1, d))
        if d % max(nd, 1) in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d % max(nd, 1))
    physical_layout = [d % max(nd, 1) for d in physical_layout]
    physical = _C.empty([size[d] for d in physical_layout], dtype=dtype, device=device,
                        pin_memory=pin_memory)
    inverse = [0] * nd
    for i, d in enumerate(physical_layout):
        inverse[d] = i
    result = physical.permute(*inverse) if nd else physical
    if requires_grad:
        result.requires_grad_()
    return result


def as_strided_(input, size, stride, storage_offset=None):
    """In place: input takes that geometry over its storage (the method)."""
    _check("as_strided_", input)
    return input.as_strided_(size, stride, storage_offset)


def to_dlpack(tensor):
    """utils.dlpack.to_dlpack: a DLPack capsule over tensor's memory."""
    from .utils.dlpack import to_dlpack as _to_dlpack
    return _to_dlpack(tensor)
