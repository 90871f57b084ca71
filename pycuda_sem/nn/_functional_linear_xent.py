"""nn.functional.linear_cross_entropy: cross entropy of a linear projection's
logits (an LLM's vocabulary head and its loss in one call), and the options
of its chunked form (torch 2.15's LinearCrossEntropyOptions).

Without options the call is the reference composition: linear, reshape,
cross_entropy. With options, class-index targets and a 'mean' or 'sum'
reduction take the chunked path: the rows go through in chunks, each
chunk's logits (chunk x classes, not batch x classes) live only while its
loss and gradients are worked out, through the fused cross entropy's own
forward and backward, and the input, weight and bias gradients are summed
into buffers that the backward scales by the incoming gradient. Anything
else falls back to the reference with a UserWarning, as torch does.
"""
import dataclasses
import warnings

from ..autograd import Function
from ..autograd.grad_mode import enable_grad

_ACC_POLICIES = ("auto", "accurate", "compact")


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """How linear_cross_entropy chunks its rows: batch_chunk_size rows a
    chunk, or chunking_method "auto" / "aspect_ratio[:k]" (chunks whose
    logits take about as much memory as the input); acc_dtype is the dtype
    the gradients are summed in (float32 for 16-bit inputs when None);
    allow_retain_graph keeps the gradient buffers for a second backward."""
    allow_retain_graph: bool = False
    batch_chunk_size: "int | None" = None
    chunking_method: "str | None" = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        from .. import float16, bfloat16, float32, float64
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError("invalid acc_policy: %r; expected one of %s"
                             % (self.acc_policy, ", ".join(map(repr, _ACC_POLICIES))))
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError("invalid chunking_method: %r" % (self.chunking_method,))
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and not isinstance(self.batch_chunk_size, bool)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got %r" % (self.batch_chunk_size,))
        if self.acc_dtype is not None and self.acc_dtype not in (float16, bfloat16, float32, float64):
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             "torch.float64}, got %r. Pass acc_dtype=None to let the op pick automatically."
                             % (self.acc_dtype,))

    def _chunk_rows(self, n, classes, features):
        """Rows a chunk for n rows of `features` inputs and `classes` logits."""
        method = self.chunking_method
        if self.batch_chunk_size is not None:
            if method not in (None, "auto"):
                raise ValueError("batch_chunk_size=%d and chunking_method=%r disagree: set one of them"
                                 % (self.batch_chunk_size, method))
            return min(self.batch_chunk_size, max(n, 1))
        if method is None:
            return max(n, 1)
        factor = int(method.partition(":")[2] or 1) if method != "auto" else 1
        pieces = max(1, -(-classes // max(features, 1)) * factor)
        rows = -(-n // pieces)
        return max(1, min(1 << max(rows - 1, 0).bit_length(), max(n, 1)))


def _reference(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing):
    from .functional import cross_entropy, linear
    classes, *out_features, features = linear_weight.shape
    logits = linear(input, linear_weight.reshape(-1, features),
                    None if linear_bias is None else linear_bias.reshape(-1))
    logits = logits.reshape(*input.shape[:-1], classes, *out_features)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


class _ChunkedLinearCrossEntropy(Function):
    """The loss of every chunk and its gradients, worked out in the forward;
    the backward scales the summed gradients."""

    @staticmethod
    def forward(ctx, x, w, b, target, weight, reduction, ignore_index, label_smoothing, options):
        from .. import bfloat16, float16, float32, zeros
        from .functional import cross_entropy, linear
        n, classes = x.shape[0], w.shape[0]
        acc = options.acc_dtype or (float32 if x.dtype in (float16, bfloat16) else x.dtype)
        rows = options._chunk_rows(n, classes, x.shape[1])
        nig = ctx.needs_input_grad
        need_x, need_w = nig[0], nig[1]
        need_b = b is not None and nig[2]
        total = None
        gx = x.new_empty(x.shape) if need_x else None
        gw = zeros(w.shape, dtype=acc, device=w.device) if need_w else None
        gb = zeros(b.shape, dtype=acc, device=b.device) if need_b else None
        for lo in range(0, n, rows):
            hi = min(lo + rows, n)
            with enable_grad():
                xc = x[lo:hi].detach().requires_grad_(need_x)
                wc = w.detach().requires_grad_(need_w)
                bc = None if b is None else b.detach().requires_grad_(need_b)
                part = cross_entropy(linear(xc, wc, bc), target[lo:hi], weight=weight, reduction="sum",
                                     ignore_index=ignore_index, label_smoothing=label_smoothing)
                if need_x or need_w or need_b:
                    part.backward()
            part = part.detach().to(acc)
            total = part if total is None else total + part
            if need_x:
                gx[lo:hi] = xc.grad
            if need_w:
                gw += wc.grad.to(acc)
            if need_b:
                gb += bc.grad.to(acc)
        if total is None:  # no rows: the sum of nothing
            total = zeros((), dtype=acc, device=x.device)
        scale = None
        if reduction == "mean":
            # torch's mean: the loss over the weights of the rows counted
            keep = target != ignore_index
            if weight is not None:
                denom = (weight.to(acc)[target.clamp(0, classes - 1)] * keep.to(acc)).sum()
            else:
                denom = keep.to(acc).sum()
            scale = 1.0 / denom
            total = total * scale
        ctx.grads, ctx.scale = [gx, gw, gb], scale
        ctx.dtypes = (x.dtype, w.dtype, None if b is None else b.dtype)
        ctx.retain = options.allow_retain_graph
        return total.to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        if ctx.grads is None:
            raise RuntimeError("linear_cross_entropy: the chunked path's gradient buffers were used by an "
                               "earlier backward; pass LinearCrossEntropyOptions(allow_retain_graph=True) "
                               "to run backward through it more than once")
        if ctx.scale is not None:  # the mean's 1 / denominator, folded into the scalar
            grad = grad * ctx.scale
        out = [None if g is None else (g * grad.to(g.dtype)).to(dt) for g, dt in zip(ctx.grads, ctx.dtypes)]
        if not ctx.retain:
            ctx.grads = None
        return (out[0], out[1], out[2], None, None, None, None, None, None)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...),
    the logits reshaped to (*input.shape[:-1], C, *out_features) for a
    linear_weight of shape (C, *out_features, in_features). With options,
    the rows go through in chunks (see LinearCrossEntropyOptions)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError("expected input with dimensionality 1 or 2, got %d" % input.dim())
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got %d" % linear_weight.dim())
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got %d and %d, "
                           "respectively" % (input.shape[-1], linear_weight.shape[-1]))
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError("expected linear_bias shape %s, got %s" % ((classes, *out_features),
                                                                      tuple(linear_bias.shape)))
    if out_features and input.dim() == 1:
        raise RuntimeError("K-dimensional loss defined by linear_weight shape %s requires batched input, (N, %d), "
                           "got unbatched input with shape %s" % (tuple(linear_weight.shape), input.shape[-1],
                                                                  tuple(input.shape)))
    if tuple(target.shape) == (*input.shape[:-1], classes, *out_features) and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if options is None:
        return _reference(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                          label_smoothing)
    if not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError("options must be a LinearCrossEntropyOptions or None, not %s" % type(options).__name__)
    why = None
    if linear_weight.dim() != 2:
        why = "a K-dimensional linear_weight (out_features != ())"
    elif target.is_floating_point():
        why = "class-probability targets"
    elif reduction not in ("mean", "sum"):
        why = "reduction=%r" % (reduction,)
    elif input.dim() < 1 or target.shape != input.shape[:-1]:
        why = "a target that is not of shape input.shape[:-1]"
    if why is not None:
        warnings.warn("linear_cross_entropy: the chunked path does not support %s here; "
                      "computing the reference (full logits) instead" % why, UserWarning, stacklevel=2)
        return _reference(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                          label_smoothing)
    features = input.shape[-1]
    x = input.reshape(-1, features)
    t = target.reshape(-1)
    return _ChunkedLinearCrossEntropy.apply(x, linear_weight, linear_bias, t, weight, reduction,
                                            -100 if ignore_index is None else ignore_index,
                                            float(label_smoothing), options)
