"""The loss functions of torch.nn.functional, as compositions of C ops.

Each one builds the pointwise loss from differentiable ops (so autograd gives
the gradient without a formula of its own) and reduces it by `reduction`.
Numerically delicate forms are written the stable way torch's kernels are:
log-sum-exp through log_softmax, BCE-with-logits through log1p(exp(-|x|)).
Argument checks and their messages follow torch; checks that need a host
read of the data (class indices in range, probabilities in [0, 1]) run only
for CPU tensors, where they cost no device sync."""
import warnings

from .. import _C
from ..amp.autocast_mode import _refuse_under_autocast, _to_float32

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]


def _legacy_reduction(size_average, reduce, reduction, emit_warning=True):
    """torch's old size_average/reduce flags, mapped to a reduction string."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if (size_average and reduce) else ("sum" if reduce else "none")
    if emit_warning:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      "reduction='%s' instead." % ret, stacklevel=3)
    return ret


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError("%s is not a valid value for reduction" % reduction)


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError("%s is not a valid value for reduction" % reduction)


def _size_warning(input, target):
    if target.size() != input.size():
        warnings.warn("Using a target size (%s) that is different to the input size (%s). This will "
                      "likely lead to incorrect results due to broadcasting. Please ensure they have "
                      "the same size." % (target.size(), input.size()), stacklevel=3)


def _weighted(loss, weight):
    return loss if weight is None else loss * weight


# ---- regression losses ------------------------------------------------------------

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, reduced."""
    input, target, weight = _to_float32(input, target, weight)
    _size_warning(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce(_weighted((input - target).square(), weight), reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, reduced."""
    input, target, weight = _to_float32(input, target, weight)
    _size_warning(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce(_weighted((input - target).abs(), weight), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta=0 is L1)."""
    input, target = _to_float32(input, target)
    _size_warning(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = _C.where(d < beta, d.square() * (0.5 / beta), d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    input, target, weight = _to_float32(input, target, weight)
    _size_warning(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    loss = _C.where(d < delta, d.square() * 0.5, (d - 0.5 * delta) * delta)
    return _reduce(_weighted(loss, weight), reduction)


# ---- classification ---------------------------------------------------------------

def _dtype_word(t):
    # 'pycuda_sem.FloatTensor' -> 'Float', the word torch's messages use
    return t.type().rsplit(".", 1)[-1].replace("Tensor", "")


def _class_weight_shape(input, class_dim):
    """Shape that broadcasts a (C,) weight against input along class_dim."""
    shape = [1] * input.dim()
    shape[class_dim] = input.size(class_dim)
    return shape


def _nll_check(input, target):
    if input.dim() < 1:
        raise ValueError("Expected 1 or more dimensions (got %d)" % input.dim())
    if target.dtype != _C.int64:
        raise RuntimeError("expected scalar type Long but found %s" % _dtype_word(target))
    unbatched = input.dim() == 1 and target.dim() == 0
    if not unbatched:
        if input.dim() == 1 or input.size(0) != target.size(0):
            raise ValueError("Expected input batch_size (%d) to match target batch_size (%d)."
                             % (input.size(0), target.size(0) if target.dim() else 0))
        if tuple(input.shape[2:]) != tuple(target.shape[1:]):
            raise RuntimeError("size mismatch (got input: %s, target: %s)"
                               % (list(input.shape), list(target.shape)))
    return unbatched


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """-input[target] (input holds log-probabilities along dim 1, or dim 0
    unbatched), weighted by weight[target]; targets equal to ignore_index
    count for nothing. 'mean' divides by the sum of the weights used."""
    input, target, weight = _to_float32(input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    unbatched = _nll_check(input, target)
    class_dim = 0 if unbatched else 1
    n_classes = input.size(class_dim)
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError("weight tensor should be defined either for all %d classes or no classes "
                           "but got weight tensor of shape: %s" % (n_classes, list(weight.shape)))
    keep = target != ignore_index
    safe = _C.where(keep, target, 0)  # ignored rows gather class 0, then weigh 0
    if target.is_cpu and target.numel():
        bad = (safe < 0) | (safe >= n_classes)
        if bool(bad.any()):
            raise IndexError("Target %d is out of bounds." % int(safe[bad].flatten()[0]))
    picked = input.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim)
    w = keep.to(input.dtype)
    if weight is not None:
        w = weight.to(input.dtype)[safe] * w
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """nll_loss(log_softmax(input)) for class indices; for a floating target
    of input's shape, class probabilities: -sum(target * log_softmax(input)).
    label_smoothing mixes in the uniform distribution, as torch."""
    input, target, weight = _to_float32(input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: %s" % label_smoothing)
    if input.dim() < 1:
        raise ValueError("Expected 1 or more dimensions (got %d)" % input.dim())
    if (input.dim() == 2 and input.is_floating_point() and not target.is_floating_point()
            and target.dim() == 1 and input.numel()
            and (weight is None or (weight.device == input.device and weight.dim() == 1
                                    and weight.numel() == input.size(1)))):
        return _cross_entropy_fused(input, target, weight, ignore_index, reduction, label_smoothing)
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.size(class_dim)
    logp = input.log_softmax(class_dim)
    if target.is_floating_point() and target.shape == input.shape:
        return _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    # the uniform part: -sum_c w_c logp_c, masked like the nll part
    if weight is not None:
        smooth = -(logp * weight.to(logp.dtype).view(_class_weight_shape(logp, class_dim))).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    keep = target != ignore_index
    smooth = smooth * keep.to(smooth.dtype)
    if reduction == "mean":
        if weight is not None:
            denom = (weight.to(logp.dtype)[_C.where(keep, target, 0)] * keep.to(logp.dtype)).sum()
        else:
            denom = keep.sum()
        smooth = smooth.sum() / denom
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


# Up to this many rows, cross_entropy's sum or mean is one more kernel of a
# single block, after the forward one (instead of a mask, two sums and a
# division); more rows are summed by the ordinary reduction, across the GPU.
_XENT_ONE_BLOCK_ROWS = 16384


def _cross_entropy_fused(input, target, weight, ignore_index, reduction, label_smoothing):
    """[N, C] logits, class indices: log_softmax and nll in one kernel a row
    (csrc/ops/fused_layers.c), the backward one kernel too; the per-row losses
    are reduced by the ordinary sum."""
    _nll_check(input, target)
    if target.device != input.device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           "devices, %s and %s!" % (input.device, target.device))
    if reduction != "none" and input.size(0) <= _XENT_ONE_BLOCK_ROWS:
        # the reduction in the op's own second kernel: (loss, lse, denominator)
        loss, _, _ = _C._cross_entropy(input, target.long(), weight, int(ignore_index),
                                       float(label_smoothing), 2 if reduction == "mean" else 1)
        return loss.to(input.dtype)
    loss, _ = _C._cross_entropy(input, target.long(), weight, int(ignore_index), float(label_smoothing))
    if reduction == "none":
        return loss.to(input.dtype)
    if reduction == "sum":
        return loss.sum().to(input.dtype)
    keep = target != ignore_index
    if weight is None:
        denom = keep.sum()
    else:
        denom = (weight.to(loss.dtype)[_C.where(keep, target, 0)] * keep.to(loss.dtype)).sum()
    return (loss.sum() / denom).to(input.dtype)


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim):
    n_classes = logp.size(class_dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * weight.to(logp.dtype).view(_class_weight_shape(logp, class_dim))
    if reduction == "mean":
        # per-sample mean: the class dim is summed, the rest averaged
        return -prod.sum() / (logp.numel() // n_classes)
    if reduction == "sum":
        return -prod.sum()
    return -prod.sum(class_dim)


# ---- binary -----------------------------------------------------------------------

def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch."""
    _refuse_under_autocast("binary_cross_entropy")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.size() != input.size():
        raise ValueError("Using a target size (%s) that is different to the input size (%s) is "
                         "deprecated. Please ensure they have the same size."
                         % (target.size(), input.size()))
    if input.is_cpu and input.numel() and bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = input.log().clamp(min=-100)
    log_1mx = (1 - input).log().clamp(min=-100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    return _reduce(_weighted(loss, weight), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """BCE of sigmoid(input) without forming it: (1 - t) x + lw (log1p(e^-|x|)
    + max(-x, 0)), lw = 1 + (pos_weight - 1) t; stable for any logit."""
    input, target, weight, pos_weight = _to_float32(input, target, weight, pos_weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.size() != input.size():
        raise ValueError("Target size (%s) must be the same as input size (%s)"
                         % (target.size(), input.size()))
    softplus_neg = (-input.abs()).exp().log1p() + (-input).relu()  # log(1 + e^-x)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    return _reduce(_weighted(loss, weight), reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target (log target - input), input being log-probabilities; 0 where
    target is 0 (xlogy). 'batchmean' divides the sum by the batch size."""
    input, target = _to_float32(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with the "
                      "KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError("%s is not a valid value for reduction" % reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # log of 1 where target is 0 keeps the unused branch finite (no 0 * -inf)
        pos = target > 0
        loss = target * _C.where(pos, target, 1.0).log() - target * input
    if reduction == "batchmean":
        return loss.sum() / input.size(0) if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)
