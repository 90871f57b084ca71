"""torch.segment_reduce: reductions over consecutive runs (segments) of a
tensor along one axis, the runs given by their lengths or offsets.

Composed of existing ops so that it runs on the CPU and on CUDA and is
differentiable: each element gets its segment's number (a searchsorted of
its position in the running total of the lengths), then one scatter_reduce
gathers the segments. torch's rules: the axis is the last dim of lengths
(batch dims before it), empty segments give `initial` or the reduction's
identity (0, 1, -inf, inf; nan for mean), and `initial` joins every
segment's reduction (for mean: (initial + sum) / length)."""
import operator

from . import _C

__all__ = ["segment_reduce"]

_REDUCES = {"sum": "sum", "prod": "prod", "mean": "sum", "max": "amax", "amax": "amax",
            "min": "amin", "amin": "amin"}
_IDENTITY = {"sum": 0.0, "prod": 1.0, "mean": 0.0, "amax": float("-inf"),
             "amin": float("inf")}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce ('sum', 'prod', 'mean', 'max', 'min') each segment of data
    along `axis`; `lengths` (..., S) gives the segments' sizes, or `offsets`
    (..., S + 1) their bounds. The result has data's shape with that axis
    of size S. unsafe=True skips the check that the lengths cover the
    axis exactly."""
    if not isinstance(data, _C.Tensor):
        raise TypeError("segment_reduce(): argument 'data' (position 1) must be Tensor, not %s"
                        % type(data).__name__)
    if reduce not in _REDUCES:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got %s"
                           % (reduce,))
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not (data.is_floating_point()):
        raise NotImplementedError("segment_reduce is not implemented for %s (floating dtypes only, "
                                  "as torch)" % (data.dtype,))
    if lengths is None:
        if offsets.dim() == 0 or offsets.shape[-1] < 1:
            raise RuntimeError("segment_reduce(): offsets must hold at least one bound")
        lengths = offsets[..., 1:] - offsets[..., :-1]
    if lengths.is_floating_point() or lengths.is_complex():
        raise NotImplementedError("segment_reduce(): lengths must be an integer tensor, got %s"
                                  % (lengths.dtype,))
    if data.dim() < lengths.dim():
        raise RuntimeError("Expected data.dim() >= lengths_value.dim() to be true, but got "
                           "false.")
    axis = operator.index(axis)
    if axis < 0:
        axis += data.dim()
    if axis != lengths.dim() - 1:
        raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of lengths "
                           "but got %d." % axis)
    lengths = lengths.to(device=data.device, dtype=_C.int64)
    if bool((lengths < 0).any()):
        raise RuntimeError("lengths contains negative value!")
    n = data.shape[axis]
    if not unsafe and bool((lengths.sum(-1) != n).any()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    batch = tuple(data.shape[:axis])
    rest = tuple(data.shape[axis + 1:])
    s = lengths.shape[-1]
    if tuple(lengths.shape[:-1]) != batch:
        raise RuntimeError("segment_reduce(): lengths' leading dims %s do not match data's %s"
                           % (list(lengths.shape[:-1]), list(batch)))
    r = 1
    for k in rest:
        r *= k
    m = 1
    for k in batch:
        m *= k
    flat = data.reshape(m, n, r)
    ends = lengths.reshape(m, s).cumsum(-1)
    pos = _C.arange(n, device=data.device).expand(m, n).contiguous()
    # segment number of each position: how many segment ends lie at or before it;
    # positions past the last end (possible only with unsafe) land in slot s, dropped below
    seg = _C.searchsorted(ends, pos, right=True)
    index = seg.unsqueeze(-1).expand(m, n, r)
    op = _REDUCES[reduce]
    start = _IDENTITY[op if reduce != "mean" else "mean"] if initial is None else initial
    base = _C.full((m, s + 1, r), start, dtype=data.dtype, device=data.device)
    out = base.scatter_reduce(1, index, flat, op, include_self=True)[:, :s]
    if reduce == "mean":
        counts = lengths.reshape(m, s, 1).to(data.dtype)
        mean = out / counts
        if initial is not None:  # an empty segment keeps initial, not initial / 0
            mean = _C.where(counts == 0, out, mean)
        out = mean
    return out.reshape(batch + (s,) + rest)
