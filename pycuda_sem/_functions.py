"""torch.X(input, ...) for the ops that pycuda_sem implements as Tensor
methods only: the views and copies (torch.flatten, torch.reshape,
torch.transpose, torch.clone, ...), the in-place unary forms (torch.relu_,
torch.sigmoid_, ...), and the torch-level spellings of nn.functional layers
(torch.conv2d, torch.layer_norm, torch.dropout, torch.embedding, ...), whose
argument orders sometimes differ from F's and are mapped here.

Each is a thin call: the method (C, recorded by autograd like any other
call) does the work, so the function and the method can never disagree.
"""
from . import _C

# Tensor methods that torch also exposes as torch.NAME(input, *args, **kwargs).
_METHOD_FUNCTIONS = (
    "clone", "detach", "detach_", "flatten", "reshape", "permute", "transpose", "t", "squeeze",
    "unsqueeze", "select", "as_strided", "real", "imag", "get_device", "fill_", "zero_",
    "abs_", "acos_", "asin_", "atan_", "ceil_", "clamp_", "clip_", "cos_", "cosh_", "exp2_",
    "exp_", "expm1_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_", "nan_to_num_",
    "neg_", "negative_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_",
)


def _method_function(name):
    method = getattr(_C.Tensor, name)

    def fn(*args, **kwargs):
        if args:
            inp, args = args[0], args[1:]
        elif "input" in kwargs:
            inp = kwargs.pop("input")
        else:
            raise TypeError("%s() missing required argument 'input' (position 1)" % name)
        if not isinstance(inp, _C.Tensor):
            raise TypeError("%s(): argument 'input' (position 1) must be Tensor, not %s"
                            % (name, type(inp).__name__))
        return method(inp, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "torch.%s(input, ...): the same as input.%s(...)." % (name, name)
    return fn


def method_functions():
    """{name: function} for every entry of _METHOD_FUNCTIONS."""
    return {n: _method_function(n) for n in _METHOD_FUNCTIONS}


# ---- torch-level spellings of nn.functional -----------------------------------------
# Same positional order as F (and torch): these are F's functions under torch's names.
_SAME_AS_F = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "avg_pool1d", "adaptive_avg_pool1d", "max_pool1d", "max_pool2d", "max_pool3d",
    "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "prelu",
    "hardshrink", "bilinear", "group_norm", "rms_norm",
)


def functional_functions():
    """{name: function} of the torch-level layer functions (nn.functional
    loads late, so this is called once the package has imported it)."""
    from .nn import functional as F
    out = {n: getattr(F, n) for n in _SAME_AS_F}

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
        """torch.layer_norm: F.layer_norm (cudnn_enable is accepted and ignored)."""
        return F.layer_norm(input, normalized_shape, weight, bias, eps)

    def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                   cudnn_enabled=True):
        """torch.batch_norm: its arguments in aten's order (weight and bias
        before the running statistics, every one required)."""
        return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)

    def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                      eps, cudnn_enabled=True):
        """torch.instance_norm, in aten's argument order."""
        return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                               momentum, eps)

    def dropout(input, p, train):
        """torch.dropout(input, p, train): every argument required, as aten's."""
        return F.dropout(input, p, train)

    def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
        """torch.embedding(weight, indices): the table first, unlike F.embedding;
        padding_idx -1 means none, as in aten."""
        if sparse:
            raise NotImplementedError("embedding: sparse gradients are not supported "
                                      "(pycuda_sem has no sparse tensors)")
        return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                           scale_grad_by_freq=scale_grad_by_freq)

    def selu(input):
        return F.selu(input)

    def celu(input, alpha=1.0):
        return F.celu(input, alpha)

    def threshold(input, threshold, value):
        return F.threshold(input, threshold, value)

    def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
        from .nn._functional_act import _rrelu
        return _rrelu(input, lower, upper, training, False, generator)

    for fn in (layer_norm, batch_norm, instance_norm, dropout, embedding, selu, celu, threshold,
               rrelu):
        out[fn.__name__] = fn
    return out
