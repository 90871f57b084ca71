"""torch.nn.functional: the stateless side of the layers.

softmax and log_softmax are the C ops (csrc/ops/softmax.c, a CUDA kernel on
the GPU); dim=None picks torch's legacy implicit dim, with its warning.
Everything else is a composition of differentiable C ops, so autograd needs
no formula of its own for it; activations whose naive form overflows in an
unused branch (softplus, elu) are written so that no branch makes inf, since
where()'s zero gradient times inf would still be NaN. The losses live in
_functional_loss.py, attention in _functional_attention.py, batch/group
norm in _functional_norm.py, convolution and pooling in _functional_conv.py,
interpolation and channel dropout in _functional_resample.py; all are
re-exported here."""
import warnings as _warnings

from .. import _C
from ..amp.autocast_mode import _open as _autocast_open, _to_float32, _to_lower
from ._functional_loss import (  # noqa: F401
    mse_loss, l1_loss, smooth_l1_loss, huber_loss, nll_loss, cross_entropy, binary_cross_entropy,
    binary_cross_entropy_with_logits, kl_div,
)
from ._functional_attention import (  # noqa: F401
    scaled_dot_product_attention, multi_head_attention_forward,
)
from ._functional_norm import batch_norm, group_norm, instance_norm, local_response_norm  # noqa: F401
from ._functional_norm import _upcast
from ._functional_act import _src  # noqa: E402 - the in-place activations' source
from ._functional_act import (  # noqa: F401
    hardswish, hardsigmoid, softsign, tanhshrink, threshold, celu, softshrink, hardshrink, glu,
    prelu, rrelu,
)
from ._functional_distance import cosine_similarity, pairwise_distance  # noqa: F401
from ._functional_loss_more import (  # noqa: F401
    margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, cosine_embedding_loss,
    triplet_margin_loss, poisson_nll_loss, gaussian_nll_loss, multilabel_soft_margin_loss,
    multi_margin_loss,
)
from ._functional_resample import (  # noqa: F401
    interpolate, upsample, dropout1d, dropout2d, dropout3d,
)
from ._functional_conv import (  # noqa: F401
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, max_pool1d,
    max_pool2d, max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d,
    pixel_shuffle, pixel_unshuffle, adaptive_avg_pool3d, adaptive_max_pool3d, channel_shuffle,
)
from ._functional_fold import unfold, fold  # noqa: F401
from ._functional_grid import affine_grid, grid_sample  # noqa: F401
from ._functional_bag import embedding_bag  # noqa: F401
from ._functional_pool_idx import (  # noqa: F401
    max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices,
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d, lp_pool1d,
    lp_pool2d, lp_pool3d,
)
from ._functional_extra import (  # noqa: F401
    alpha_dropout, feature_alpha_dropout, gumbel_softmax, pdist, elu_, selu_, celu_, threshold_,
    hardtanh_, rrelu_, upsample_nearest, upsample_bilinear,
)
from ._functional_loss_more import (  # noqa: F401
    multilabel_margin_loss, triplet_margin_with_distance_loss,
)
from ._functional_ctc import ctc_loss  # noqa: F401
from ._functional_linear_xent import linear_cross_entropy  # noqa: F401
from ._functional_more3 import (  # noqa: F401
    fractional_max_pool2d, fractional_max_pool3d, fractional_max_pool2d_with_indices,
    fractional_max_pool3d_with_indices, native_channel_shuffle,
)
from ..overrides import (  # noqa: F401 - torch.nn.functional re-exports these too
    has_torch_function, has_torch_function_unary, has_torch_function_variadic, handle_torch_function,
)

__all__ = ["softmax", "log_softmax", "softmin", "one_hot", "normalize", "linear", "bilinear",
           "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "gelu", "silu", "elu", "selu",
           "softplus", "mish", "tanh", "sigmoid", "logsigmoid", "hardtanh", "dropout", "layer_norm",
           "rms_norm", "embedding", "pad", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "nll_loss", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "kl_div", "scaled_dot_product_attention", "multi_head_attention_forward",
           "batch_norm", "group_norm", "conv1d", "conv2d", "conv3d", "max_pool1d", "max_pool2d",
           "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "interpolate", "upsample", "dropout1d", "dropout2d", "dropout3d",
           "instance_norm", "hardswish", "hardsigmoid", "softsign", "tanhshrink", "threshold",
           "celu", "softshrink", "hardshrink", "glu", "prelu", "rrelu", "cosine_similarity",
           "pairwise_distance", "adaptive_max_pool1d", "adaptive_max_pool2d", "pixel_shuffle",
           "pixel_unshuffle", "unfold", "fold", "local_response_norm", "channel_shuffle",
           "affine_grid", "grid_sample", "embedding_bag",
           "adaptive_avg_pool3d", "adaptive_max_pool3d", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "multilabel_soft_margin_loss", "multi_margin_loss", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "alpha_dropout",
           "feature_alpha_dropout", "gumbel_softmax", "pdist", "elu_", "selu_", "celu_",
           "threshold_", "hardtanh_", "rrelu_", "upsample_nearest", "upsample_bilinear",
           "multilabel_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss",
           "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices", "native_channel_shuffle", "linear_cross_entropy"]


def _implicit_dim(name, ndim):
    _warnings.warn("Implicit dimension choice for %s has been deprecated. Change the call to "
                  "include dim=X as an argument." % name, UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (dtype= casts the input first)."""
    if dim is None:
        dim = _implicit_dim("softmax", input.dim())
    if _autocast_open[0]:  # a list lookup on the hot path, the policy only inside autocast
        input, = _to_float32(input)
    return _C.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - logsumexp(x) along dim (dtype= casts the input first)."""
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim())
    if _autocast_open[0]:
        input, = _to_float32(input)
    return _C.log_softmax(input, dim, dtype=dtype)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding: a new last dim of num_classes (max + 1 when -1)."""
    if not isinstance(tensor, _C.Tensor):
        raise TypeError("one_hot(): argument 'self' (position 1) must be Tensor, not %s"
                        % type(tensor).__name__)
    if tensor.dtype != _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        # one host sync, as torch's (it reads min and max to check the classes)
        lo, hi = tensor.min().item(), tensor.max().item()
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _C.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    if out is None:
        return input / denom
    return _C.div(input, denom, out=out)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim."""
    if dim is None:
        dim = _implicit_dim("softmin", input.dim())
    input, = _to_float32(input)
    return _C.softmax(-input, dim, dtype=dtype)


# ---- linear maps ------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input @ weight.T + bias (one addmm for a 2-D input with bias)."""
    if _autocast_open[0]:
        input, weight, bias = _to_lower(input, weight, bias)
    if bias is not None and input.dim() == 2:
        return _C.addmm(bias, input, weight.t())
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T W_o x2 + b_o for weight (out, in1, in2), over any leading dims."""
    input1, input2, weight, bias = _to_lower(input1, input2, weight, bias)
    out_f, in1, in2 = weight.shape
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # x1 @ W as one matmul: (n, in1) @ (in1, out * in2), then contract in2 with x2
    t = x1.matmul(weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    y = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(tuple(lead) + (out_f,))


# ---- activations ------------------------------------------------------------------

def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    x = _src(input, inplace)
    out = _C.where(x > 0, x, x * negative_slope)
    return input.copy_(out) if inplace else out


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def gelu(input, approximate="none"):
    """x * Phi(x); approximate='tanh' is the tanh form (both are the C op)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    x = _src(input, inplace)
    out = x * x.sigmoid()
    return input.copy_(out) if inplace else out


def _softplus(x, beta=1.0):
    # log(1 + e^(bx)) / b as relu(bx) + log1p(e^-|bx|): no exp overflows
    bx = x * beta if beta != 1 else x
    sp = bx.relu() + (-bx.abs()).exp().log1p()
    return sp if beta == 1 else sp / beta


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold (as torch)."""
    return _C.where(input * beta > threshold, input, _softplus(input, beta))


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha (e^x - 1) otherwise."""
    x = _src(input, inplace)
    neg = x.clamp(max=0).expm1() * alpha  # clamp: e^x of the positive side is never formed
    out = _C.where(x > 0, x, neg)
    return input.copy_(out) if inplace else out


def selu(input, inplace=False):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    out = elu(_src(input, inplace), alpha) * scale
    return input.copy_(out) if inplace else out


def mish(input, inplace=False):
    """x tanh(softplus(x))."""
    x = _src(input, inplace)
    out = x * softplus(x).tanh()
    return input.copy_(out) if inplace else out


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable."""
    return -_softplus(-input)


# ---- dropout ----------------------------------------------------------------------

def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by 1/(1-p);
    the identity when not training. The mask comes from the project's Philox
    generator (the words bernoulli_ uses), so manual_seed makes it
    reproducible and the same on the CPU and the GPU."""
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0) if inplace else input * 0
    if input.is_floating_point():
        # one kernel; the mask is Philox(seed, offset, index), the same on
        # the CPU and the GPU for the same manual_seed (csrc/ops/fused_layers.c)
        dev = input.get_device() if input.is_cuda else -1
        seed, offset = _C._rng_reserve(dev, input.numel())
        out = _C._philox_dropout(input, float(p), seed, offset)
        return input.copy_(out) if inplace else out
    mask = _C.empty_like(input).bernoulli_(1 - p).div_(1 - p)
    return input.mul_(mask) if inplace else input * mask


# ---- normalisation ----------------------------------------------------------------

def _norm_dims(input, normalized_shape):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    n = len(normalized_shape)
    if n == 0 or input.dim() < n or tuple(input.shape[input.dim() - n:]) != normalized_shape:
        raise RuntimeError("Given normalized_shape=%s, expected input with shape [*, %s], but got "
                           "input of size%s" % (list(normalized_shape),
                                               ", ".join(str(s) for s in normalized_shape),
                                               list(input.shape)))
    return tuple(range(-n, 0))


def _fused_norm(input, dims, weight, bias, eps, rms):
    """The one-kernel norm (csrc/ops/fused_layers.c) over the trailing dims,
    or None where the composed form below must run (mixed devices)."""
    n = 1
    for d in dims:
        n *= input.size(d)
    for t in (weight, bias):
        if t is not None and (t.device != input.device or t.numel() != n):
            return None
    out = _C._layer_norm(input, n, weight, bias, float(eps), rms)
    return out[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last dims
    (biased variance, as torch): one kernel forward and backward."""
    if _autocast_open[0]:
        input, weight, bias = _to_float32(input, weight, bias)
    dims = _norm_dims(input, normalized_shape)
    if input.is_floating_point() and input.numel():
        out = _fused_norm(input, dims, weight, bias, eps, False)
        if out is not None:
            return out
    x, back = _upcast(input)
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, correction=0, keepdim=True)
    out = (x - mean) * (var + eps).rsqrt()
    if back is not None:
        out = out.to(back)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


_EPS = {"float16": 0.0009765625, "bfloat16": 0.0078125, "float32": 1.1920928955078125e-07,
        "float64": 2.220446049250313e-16}


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims; eps=None is the
    dtype's machine epsilon (torch.finfo(x.dtype).eps)."""
    input, weight = _to_float32(input, weight)
    dims = _norm_dims(input, normalized_shape)
    if eps is None:
        eps = _EPS[str(input.dtype).rsplit(".", 1)[-1]]
    if input.is_floating_point() and input.numel():
        out = _fused_norm(input, dims, weight, None, eps, True)
        if out is not None:
            return out
    x, back = _upcast(input)
    out = x * (x.square().mean(dims, keepdim=True) + eps).rsqrt()
    if back is not None:
        out = out.to(back)
    return out if weight is None else out * weight


# ---- embedding --------------------------------------------------------------------

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """weight[input]. Rows at padding_idx get no gradient; max_norm renorms
    the rows looked up, in place, as torch; scale_grad_by_freq divides each
    row's gradient by how often the row occurs in input."""
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not implemented in pycuda_sem "
                                  "(there are no sparse tensors); use sparse=False")
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    if input.dtype not in (_C.int64, _C.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following "
                           "scalar types: Long, Int; but got %s instead" % input.type())
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    out = weight.index_select(0, input.reshape(-1).long()).reshape(tuple(input.shape) + (weight.size(1),))
    if scale_grad_by_freq and weight.requires_grad:
        # the same values (out - out.detach() is exactly 0); the gradient of
        # each looked-up row is scaled by 1 / its count in this input
        flat = input.reshape(-1).long()
        counts = _C.bincount(flat, minlength=weight.size(0))
        inv = counts.index_select(0, flat).to(out.dtype).reciprocal()
        inv = inv.reshape(tuple(input.shape) + (1,))
        det = out.detach()
        out = det + (out - det) * inv
    if padding_idx is not None and weight.requires_grad:
        # same values; the padding rows' share of the gradient is cut off
        keep = (input != padding_idx).unsqueeze(-1)
        out = _C.where(keep, out, out.detach())
    return out


def _embedding_renorm_(weight, input, max_norm, norm_type):
    from ..autograd.grad_mode import no_grad
    with no_grad():
        rows = input.reshape(-1).long().unique()
        sel = weight.index_select(0, rows)
        norms = sel.norm(norm_type, 1, keepdim=True)
        scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_copy_(0, rows, sel * scale)


# ---- padding ----------------------------------------------------------------------

def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad)//2 dims: pad = (left_last, right_last,
    left_prev, ...). constant: fill with value (negative pads crop); reflect,
    replicate, circular: through index_select with a computed index."""
    if len(pad) % 2 != 0:
        raise ValueError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise ValueError("Padding length should be less than or equal to two times the input "
                         "dimension but got padding length %d and input of dimension %d"
                         % (len(pad), input.dim()))
    if mode != "constant" and value is not None and value != 0:
        raise ValueError('Padding mode "%s" doesn\'t take in value argument' % mode)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError("Unrecognised padding mode %s" % mode)
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        if mode == "constant":
            out = _pad_constant(out, dim, left, right, 0.0 if value is None else value)
        else:
            out = out.index_select(dim, _pad_index(out.size(dim), left, right, mode, out.device))
    return out


def _pad_constant(x, dim, left, right, value):
    if left < 0:
        x = x.narrow(dim, -left, x.size(dim) + left)
        left = 0
    if right < 0:
        x = x.narrow(dim, 0, x.size(dim) + right)
        right = 0
    parts = []
    for n in (left, None, right):
        if n is None:
            parts.append(x)
        elif n > 0:
            shape = list(x.shape)
            shape[dim] = n
            parts.append(_C.full(shape, value, dtype=x.dtype, device=x.device))
    return _C.cat(parts, dim) if len(parts) > 1 else x


def _pad_index(n, left, right, mode, device):
    """Source index of each output position along one dim."""
    if mode == "reflect" and (left >= n or right >= n):
        raise RuntimeError("Argument #4: Padding size should be less than the corresponding input "
                           "dimension, but got: padding (%d, %d) at dimension of input %d"
                           % (left, right, n))
    idx = []
    for j in range(-left, n + right):
        if mode == "replicate":
            idx.append(min(max(j, 0), n - 1))
        elif mode == "circular":
            idx.append(j % n)
        else:  # reflect: mirror without repeating the edge
            period = 2 * (n - 1) if n > 1 else 1
            k = j % period
            idx.append(k if k < n else period - k)
    return _C.tensor(idx, dtype=_C.int64, device=device)
