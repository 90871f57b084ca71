"""torch.nn.init: in-place initialisers with torch's distributions and bounds.

Every function fills its tensor under no_grad (a Parameter is a leaf that
requires grad; filling it must not be recorded) and returns it. Random values
come from the project's generator (generator= where torch accepts one)."""
import math
import warnings

from .. import _C
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
           "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError("negative_slope %s not a valid number" % param)
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError("Unsupported nonlinearity %s" % nonlinearity)


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError("Mode %s not supported, please use one of fan_in, fan_out" % mode)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _gen(generator):
    return {} if generator is None else {"generator": generator}


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, **_gen(generator))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills with N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, **_gen(generator))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills with N(mean, std^2) truncated to [a, b], by torch's method:
    uniform in CDF space, then the inverse CDF (erfinv by Newton steps, as
    the C core has no erfinv)."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        # u in [2lo-1, 2hi-1]; x = erfinv(u) solved in float64 for accuracy
        u = _C.empty(tensor.shape, dtype=_C.float64).uniform_(2 * lo - 1, 2 * hi - 1, **_gen(generator))
        u = u.clamp(-1 + 1e-15, 1 - 1e-15)
        x = _erfinv(u)
        x = x * (std * math.sqrt(2.0)) + mean
        x = x.clamp(min=a, max=b)
        tensor.copy_(x.to(tensor.device, tensor.dtype))
        return tensor


def _erfinv(y):
    """erfinv of a float64 tensor (the C core has none): Giles'
    single-precision approximation, then two Newton steps on erf."""
    w = -((1.0 - y) * (1.0 + y)).log()
    small = w < 5.0
    ws = w - 2.5
    ps = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        ps = ps * ws + c
    wl = w.clamp(min=5.0).sqrt() - 3.0
    pl = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        pl = pl * wl + c
    x = _C.where(small, ps, pl) * y
    for _ in range(2):
        err = _erf(x) - y
        x = x - err / (2.0 / math.sqrt(math.pi) * (-x * x).exp())
    return x


def _erf(x):
    """erf of a float64 tensor (Numerical Recipes' erfc fit, relative error
    below 1.2e-7): enough for the Newton steps above."""
    t = 1.0 / (1.0 + 0.5 * x.abs())
    coeffs = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
              -1.13520398, 1.48851587, -0.82215223, 0.17087277)
    poly = 0.0
    for c in reversed(coeffs[1:]):
        poly = (poly + c) * t
    poly = poly + coeffs[0]
    r = 1.0 - t * (-x * x + poly).exp()
    return _C.where(x >= 0, r, -r)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity in a 2-D tensor."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(_C.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    """The Dirac delta of a 3-, 4- or 5-D convolution weight: in each group,
    out channel d reads in channel d at the kernel's centre, so the layer is
    the identity on as many channels as it can keep. One index_put."""
    dims = tensor.ndimension()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if groups <= 0 or sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    min_dim = min(per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        if min_dim and groups:
            dev = tensor.device
            d = _C.arange(min_dim, device=dev)
            out_ch = (_C.arange(groups, device=dev).unsqueeze(1) * per_group + d).reshape(-1)
            in_ch = d.repeat(groups)
            centre = tuple(s // 2 for s in sizes[2:])
            tensor[(out_ch, in_ch) + centre] = 1
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor of N(0, std^2) values with ceil(sparsity * rows) zeros in
    each column, at rows drawn without replacement (torch draws a randperm
    per column; here one argsort of uniform noise per column, the same
    distribution of positions)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, **_gen(generator))
        if num_zeros > 0 and cols > 0:
            noise = _C.empty(rows, cols, device=tensor.device).uniform_(0, 1, **_gen(generator))
            zero_rows = noise.argsort(0)[:num_zeros]
            tensor.scatter_(0, zero_rows, 0.0)
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """gain / sqrt(fan), or None for a zero-element tensor (a no-op, with torch's warning)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b), b = gain * sqrt(3 / fan) (He et al.)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2), std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR of a normal matrix, signs fixed
    by diag(R) as torch does, times gain; trailing dims are flattened. The
    QR runs in NumPy on the host (pycuda_sem has no linalg.qr; init is not a
    hot path)."""
    import numpy as np
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        flat = _C.empty(rows, cols, dtype=_C.float64).normal_(0, 1, **_gen(generator)).numpy()
        if rows < cols:
            flat = flat.T
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        q = _C.from_numpy(np.ascontiguousarray(q * gain))
        tensor.view(rows, cols).copy_(q.to(tensor.device, tensor.dtype))
    return tensor


# torch's deprecated aliases without the trailing underscore
def _deprecated(fn):
    def wrapper(*args, **kwargs):
        warnings.warn("`nn.init.%s` is now deprecated in favor of `nn.init.%s`."
                      % (fn.__name__[:-1], fn.__name__), FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__name__ = fn.__name__[:-1]
    return wrapper


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
sparse = _deprecated(sparse_)
