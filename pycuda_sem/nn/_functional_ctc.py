"""F.ctc_loss: connectionist temporal classification, the forward (alpha)
recursion of Graves et al. in log space over the extended label sequence
(blank, l1, blank, l2, ..., blank), composed of differentiable tensor ops:
one Python step per time step, each vectorised over the batch and the label
positions, so the gradient is autograd's through the composition.

Impossible alignments are carried as a large negative finite number rather
than -inf (a logsumexp over only -inf entries would give NaN gradients) and
turned into an infinite loss at the end, as torch reports them."""
from .. import _C

__all__ = ["ctc_loss"]


def _as_list(v, name):
    if isinstance(v, _C.Tensor):
        if v.is_floating_point() or v.is_complex():
            raise RuntimeError("ctc_loss: %s must be an integer tensor, got %s" % (name, v.dtype))
        return [int(x) for x in v.reshape(-1).tolist()]
    if isinstance(v, int):
        return [int(v)]
    return [int(x) for x in v]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """log_probs [T, N, C] (or [T, C]) of log-softmax outputs; targets [N, S]
    padded or the targets concatenated [sum(target_lengths)]; the loss is
    -log p(target | input) per sequence, reduced by 'none', 'sum' or 'mean'
    (each loss divided by its target length, then averaged over the batch)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError("%s is not a valid value for reduction" % reduction)
    if not isinstance(log_probs, _C.Tensor) or not isinstance(targets, _C.Tensor):
        raise TypeError("ctc_loss(): log_probs and targets must be Tensors")
    if not log_probs.is_floating_point():
        raise RuntimeError("ctc_loss: expected floating point log_probs, got %s" % log_probs.dtype)
    unbatched = log_probs.dim() == 2
    if log_probs.dim() not in (2, 3):
        raise RuntimeError("ctc_loss: expected log_probs to be 2-D or 3-D, got %d-D"
                           % log_probs.dim())
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    steps, batch, classes = lp.shape
    in_lens = _as_list(input_lengths, "input_lengths")
    tg_lens = _as_list(target_lengths, "target_lengths")
    if len(in_lens) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tg_lens) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for n in in_lens:
        if n < 0 or n > steps:
            raise RuntimeError("Expected input_lengths to have value at most %d, but got value %d"
                               % (steps, n))
    tg = targets.unsqueeze(0) if unbatched and targets.dim() == 1 else targets
    flat = [int(v) for v in tg.reshape(-1).tolist()]
    rows = []
    if tg.dim() == 2:
        width = tg.size(1)
        for i, n in enumerate(tg_lens):
            if n < 0 or n > width:
                raise RuntimeError("Expected tensor to have size at least %d at dimension 1, but "
                                   "got size %d for argument #2 'targets' (while checking "
                                   "arguments for ctc_loss)" % (n, width))
            rows.append(flat[i * width:i * width + n])
    elif tg.dim() == 1:  # the targets of the batch concatenated
        if sum(tg_lens) > len(flat) or any(n < 0 for n in tg_lens):
            raise RuntimeError("Expected tensor to have size at least %d at dimension 0, but got "
                               "size %d for argument #2 'targets'" % (sum(tg_lens), len(flat)))
        start = 0
        for n in tg_lens:
            rows.append(flat[start:start + n])
            start += n
    else:
        raise RuntimeError("ctc_loss: expected targets to be 1-D or 2-D, got %d-D" % tg.dim())
    for r in rows:
        for c in r:
            if not 0 <= c < classes or c == blank:
                raise RuntimeError("ctc_loss: target label %d out of range or equal to blank" % c)

    # extended labels [N, L], L = 2 * max target length + 1: blanks at even positions
    width = 2 * max(tg_lens + [0]) + 1
    ext = [[blank] * width for _ in range(batch)]
    skip = [[False] * width for _ in range(batch)]  # may jump from s - 2 to s
    for i, r in enumerate(rows):
        for j, c in enumerate(r):
            ext[i][2 * j + 1] = c
            skip[i][2 * j + 1] = j > 0 and r[j - 1] != c
    dev, dtype = lp.device, lp.dtype
    ext_t = _C.tensor(ext, dtype=_C.int64, device=dev)
    skip_t = _C.tensor(skip, dtype=_C.bool, device=dev)
    from .. import finfo
    neg = finfo(dtype).min / 8  # "log 0", finite (see the header)
    # every step's log-probabilities of the extended labels at once: [T, N, L]
    lpe = lp.gather(2, ext_t.unsqueeze(0).expand((steps, batch, width)))
    negs = _C.full((batch, width), neg, dtype=dtype, device=dev)
    pos = _C.arange(width, device=dev).unsqueeze(0)
    if steps == 0:
        alpha = negs
    else:
        alpha = _C.where(pos < 2, lpe[0], negs)  # start at the first blank or first label
        alpha = _C.where(_C.tensor(in_lens, device=dev).unsqueeze(1) > 0, alpha,
                         _C.where(pos == 0, _C.zeros_like(negs), negs))
    pad1 = negs[:, :1]
    pad2 = negs[:, :2]
    live = _C.tensor(in_lens, device=dev).unsqueeze(1)
    for t in range(1, steps):
        a1 = _C.cat([pad1, alpha[:, :-1]], 1) if width > 1 else pad1
        a2 = _C.where(skip_t, _C.cat([pad2, alpha[:, :-2]], 1), negs) if width > 2 else negs
        new = _C.stack([alpha, a1, a2], 0).logsumexp(0) + lpe[t]
        alpha = new if min(in_lens) > t else _C.where(live > t, new, alpha)
    # p = alpha at the last blank plus alpha at the last label
    last = _C.tensor([[2 * n, max(2 * n - 1, 0)] for n in tg_lens], dtype=_C.int64, device=dev)
    ends = alpha.gather(1, last)
    has_label = _C.tensor([[True, n > 0] for n in tg_lens], dtype=_C.bool, device=dev)
    ends = _C.where(has_label, ends, _C.full_like(ends, neg))
    loss = -ends.logsumexp(1)
    impossible = loss > -neg / 2
    inf = _C.full_like(loss, float("inf"))
    if zero_infinity:
        loss = _C.where(impossible, _C.zeros_like(loss), loss)
    else:
        loss = _C.where(impossible, inf, loss)
    if reduction == "mean":
        div = _C.tensor([max(n, 1) for n in tg_lens], dtype=dtype, device=dev)
        return (loss / div).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
