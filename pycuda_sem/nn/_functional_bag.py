"""torch.nn.functional.embedding_bag, re-exported by functional.py: the rows
of weight looked up and reduced per bag (sum, mean or max), bags given as
the rows of a 2-D input or by offsets into a 1-D one. The lookup is one
index_select; the per-bag reduction one index_add (sum, mean) or one
scatter_reduce (max) over the bag id of each position, so empty bags come
out as zeros. Differentiable in weight and per_sample_weights."""
from .. import _C


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """One reduced embedding a bag: [B, D]."""
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not implemented in pycuda_sem (there are no "
                                  "sparse tensors); use sparse=False")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  "supported for mode='sum' (got mode='%s'). Please open a feature request on "
                                  "GitHub." % mode)
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                             "of fixed length sequences.")
        b, length = input.shape
        idx = input.reshape(-1)
        bag = _C.arange(b, device=input.device).repeat_interleave(length)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None or offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor but got None" if offsets is None
                             else "offsets has to be a 1D Tensor")
        idx = input
        starts = offsets[:-1] if include_last_offset else offsets
        b = starts.shape[0]
        n = idx.shape[0]
        # the bag of position i: the number of bag starts at or before i, minus one
        pos = _C.arange(n, device=input.device)
        bag = (_C.searchsorted(starts.long().contiguous(), pos, right=True) - 1).clamp(min=0)
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension %d" % input.dim())
    from .functional import embedding
    # scale_grad_by_freq: each row's gradient over its count in the whole input
    rows = embedding(idx, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq)  # [P, D]
    keep = None
    if padding_idx is not None:
        pad = padding_idx if padding_idx >= 0 else weight.size(0) + padding_idx
        keep = (idx != pad)
    d = weight.size(1)
    if mode == "max":
        src = rows if keep is None else _C.where(keep.unsqueeze(1), rows, _C.full((), float("-inf"), dtype=rows.dtype,
                                                                                   device=rows.device))
        init = _C.full((b, d), float("-inf"), dtype=rows.dtype, device=rows.device)
        out = init.scatter_reduce(0, bag.reshape(-1, 1).expand(-1, d), src, "amax", include_self=True)
        return _C.where(out.isinf() & (out < 0), _C.zeros((), dtype=out.dtype, device=out.device), out)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.to(rows.dtype).unsqueeze(1)
    if keep is not None:
        rows = rows * keep.to(rows.dtype).unsqueeze(1)
    out = _C.zeros((b, d), dtype=rows.dtype, device=rows.device).index_add(0, bag, rows)
    if mode == "mean":
        ones = _C.ones(bag.shape[0], dtype=rows.dtype, device=rows.device)
        if keep is not None:
            ones = ones * keep.to(rows.dtype)
        count = _C.zeros(b, dtype=rows.dtype, device=rows.device).index_add(0, bag, ones)
        out = out / count.clamp(min=1).unsqueeze(1)
    return out
