"""More torch.nn.functional losses (re-exported by functional.py): margin,
embedding, triplet, soft-margin, Poisson and Gaussian NLL, multi-label and
multi-class margin losses; compositions of C ops with torch's formulas,
argument checks and reductions."""
import math

from .. import _C
from ..amp.autocast_mode import _to_float32
from ..autograd.grad_mode import no_grad
from ._functional_loss import _check_reduction, _legacy_reduction, _reduce

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_with_distance_loss"]


def _red(size_average, reduce, reduction):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return reduction


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target (input1 - input2) + margin)."""
    reduction = _red(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           "but got sizes: input1: %s, input2: %s, target: %s "
                           % (input1.size(), input2.size(), target.size()))
    input1, input2, target = _to_float32(input1, input2, target)
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target is 1, max(0, margin - x) where it is -1."""
    reduction = _red(size_average, reduce, reduction)
    zeros = _C.zeros_like(input)
    loss = (_C.where(target != 1, (margin - input).clamp(min=0), zeros)
            + _C.where(target != -1, input, zeros))
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target x)), stably."""
    reduction = _red(size_average, reduce, reduction)
    z = -target * input
    loss = z.clamp(min=0) + (-z.abs()).exp().log1p()
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1."""
    reduction = _red(size_average, reduce, reduction)
    if input1.dim() not in (1, 2) or input1.shape != input2.shape:
        raise RuntimeError("cosine_embedding_loss: expected 1D or 2D inputs of one shape, got "
                           "%s and %s" % (list(input1.shape), list(input2.shape)))
    d = input1.dim() - 1
    eps = 1e-12
    cos = (input1 * input2).sum(d) / (((input1 * input1).sum(d) + eps)
                                      * ((input2 * input2).sum(d) + eps)).sqrt()
    zeros = _C.zeros_like(cos)
    loss = (_C.where(target == 1, 1 - cos, zeros)
            + _C.where(target == -1, (cos - margin).clamp(min=0), zeros))
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)), d the pairwise p-distance; swap
    takes min(d(a, n), d(p, n))."""
    from ._functional_distance import pairwise_distance
    reduction = _red(size_average, reduce, reduction)
    if not (anchor.dim() == positive.dim() == negative.dim()):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           "same number of dimensions, but got: anchor %dD, positive %dD, and "
                           "negative %dD inputs]" % (anchor.dim(), positive.dim(),
                                                     negative.dim()))
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = _C.minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_ap - d_an).clamp(min=0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(x) - target x (log_input), else x - target log(x + eps); full adds
    Stirling's term where target > 1."""
    reduction = _red(size_average, reduce, reduction)
    input, target = _to_float32(input, target)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        safe = _C.where(target > 1, target, _C.ones_like(target))
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + _C.where(target > 1, stirling, _C.zeros_like(stirling))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi with full);
    var clamped below at eps without a gradient through the clamp."""
    _check_reduction(reduction)
    if isinstance(var, (int, float)):
        var = _C.full_like(input, float(var))
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif not (input.size()[:-1] == var.size()[:-1] and var.size(-1) == 1):
            raise ValueError("var is of incorrect size")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    input, target, var = _to_float32(input, target, var)
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target).square() / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), averaged over classes."""
    from .functional import logsigmoid
    reduction = _red(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.size(-1)
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p / C (times
    weight[y]), for class indices y."""
    reduction = _red(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    y = target.reshape(-1, 1)
    xy = x.gather(1, y)
    z = (margin - xy + x).clamp(min=0)
    if p == 2:
        z = z.square()
    mask = _C.ones_like(z).scatter(1, y, 0.0)
    z = z * mask
    if weight is not None:
        z = z * weight.gather(0, y.reshape(-1)).reshape(-1, 1)
    loss = z.sum(1) / x.size(1)
    if input.dim() != 2:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over the target classes j and the non-target classes i of
    max(0, 1 - (x[j] - x[i])) / C; each target row lists class indices up to
    its first -1 (a repeated class counts again, as torch's loop does)."""
    reduction = _red(size_average, reduce, reduction)
    if target.dtype != _C.int64:
        raise RuntimeError("expected scalar type Long but found %s"
                           % {"float32": "Float", "float64": "Double", "int32": "Int"}.get(
                               str(target.dtype).rsplit(".", 1)[-1], str(target.dtype)))
    if input.dim() > 2 or tuple(target.shape) != tuple(input.shape) or (
            input.dim() == 2 and input.size(1) == 0):
        raise RuntimeError("inconsistent target size: %s for input of size: %s"
                           % (list(target.shape), list(input.shape)))
    x = input.reshape(1, -1) if input.dim() < 2 else input
    y = target.reshape(x.shape)
    c = x.size(1)
    if y.numel():
        # one host read, as torch's kernel checks each target
        lo, hi = y.min().item(), y.max().item()
        if lo < -1 or hi >= c:
            raise RuntimeError("argument #2 'target' is out of range")
    # the listed targets: the positions before each row's first -1
    valid = (y != -1).long().cumprod(1).bool()
    classes = _C.arange(c, device=x.device)
    listed = (y.unsqueeze(-1) == classes) & valid.unsqueeze(-1)  # [N, T, C]
    is_target = listed.any(1)  # [N, C]
    xy = x.gather(1, y.clamp(min=0))  # [N, T]
    z = (1 - xy.unsqueeze(-1) + x.unsqueeze(1)).clamp(min=0)  # [N, T, C]
    keep = valid.unsqueeze(-1) & ~is_target.unsqueeze(1)
    loss = (z * keep.to(z.dtype)).sum((1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)) for any distance function d
    (pairwise_distance by default); swap uses min(d(a, n), d(p, n))."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError("%s is not a valid value for reduction" % reduction)
    if margin <= 0:
        raise ValueError("margin must be greater than 0, got %s" % margin)
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           "same number of dimensions, but got: anchor %dD, positive %dD, and "
                           "negative %dD inputs" % (a_dim, p_dim, n_dim))
    if distance_function is None:
        from ._functional_distance import pairwise_distance as distance_function
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _C.minimum(dist_neg, distance_function(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp(min=0), reduction)
