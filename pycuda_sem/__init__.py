"""pycuda_sem: the torch.cuda programming model as a C extension.

``import pycuda_sem as torch`` gives scripts the names of PyTorch's CUDA
semantics note: devices, streams, events, a caching allocator with PyTorch's
memory statistics, and tensors on the CPU and on CUDA devices. Importing never
touches the GPU; CUDA starts lazily at the first call that needs it.
"""
from . import _C
from ._C import device, UntypedStorage

__version__ = "0.1.0"

from . import version  # noqa: E402
from . import cuda  # noqa: E402
from . import backends  # noqa: E402

# ---- tensors (dtypes, Tensor, factories): see the section below -------------
from ._C import (  # noqa: E402,F401  (dtypes shadow builtins, as in torch)
    dtype, Tensor, Size, get_default_dtype, set_default_dtype, promote_types,
    bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
    complex64, complex128, half, float, double, short, int, long, cfloat, cdouble,
    empty, zeros, ones, full, empty_strided, arange, linspace, logspace, eye, tril_indices,
    triu_indices, tensor, as_tensor,
    from_numpy, empty_like, zeros_like, ones_like, full_like,
    memory_format, contiguous_format, channels_last, channels_last_3d, preserve_format,
)
from ._tensor_str import set_printoptions, get_printoptions  # noqa: E402,F401
from ._dtype_info import finfo, iinfo, is_signed, result_type, can_cast  # noqa: E402,F401
from ._threads import (  # noqa: E402,F401
    set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads,
    get_default_device, set_default_device,
)
from . import _legacy  # noqa: E402

globals().update(_legacy.cpu_types)  # FloatTensor, DoubleTensor, ... (legacy API)
from ._legacy import set_default_tensor_type  # noqa: E402,F401 - deprecated, as in torch


def is_tensor(obj):
    """True if obj is a pycuda_sem.Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """True if input's dtype is a floating point type."""
    return input.is_floating_point()


def is_complex(input):
    """True if input's dtype is a complex type."""
    return input.is_complex()


def numel(input):
    """Number of elements of input."""
    return input.numel()


# ---- compute ops (ops.c) --------------------------------------------------------
from ._C import (  # noqa: E402,F401
    add, sub, subtract, mul, multiply, div, divide, true_divide, floor_divide, remainder,
    pow, maximum, minimum, atan2, arctan2, eq, ne, lt, le, gt, ge, greater, greater_equal,
    less, less_equal, not_equal, logical_and, logical_or, logical_xor, logical_not,
    bitwise_and, bitwise_or, bitwise_xor, bitwise_not, bitwise_left_shift,
    bitwise_right_shift, where, clamp, clip, lerp,
    neg, negative, abs, absolute, sign, exp, exp2, expm1, log, log2, log10, log1p, sqrt,
    rsqrt, sin, cos, tan, asin, acos, atan, arcsin, arccos, arctan, sinh, cosh, tanh,
    sigmoid, relu, gelu, floor, ceil, round, trunc, fix, frac, reciprocal, square, isnan,
    isinf, isfinite, nan_to_num, erf, erfc, erfinv, lgamma, digamma,
    sum, mean, prod, max, min, amax, amin, argmax, argmin, std, var, norm, all, any,
    logsumexp, cumsum, cumprod,
)

# ---- sorting, selection, scans (sort.c, select.c, scan.c) -------------------------------
from ._C import (  # noqa: E402,F401
    sort, argsort, msort, topk, kthvalue, median, nanmedian, mode,
    unique, unique_consecutive, searchsorted, bucketize, bincount, histc, count_nonzero,
    cummax, cummin, logcumsumexp,
)


# ---- random, matmul, fft (random.c, blas.c, fft.c) ---------------------------------
from ._C import (  # noqa: E402,F401
    rand, randn, randint, randperm, rand_like, randn_like,
    matmul, mm, bmm, mv, dot, addmm, baddbmm,
    set_float32_matmul_precision, get_float32_matmul_precision,
)
from .random import (  # noqa: E402,F401
    manual_seed, seed, initial_seed, get_rng_state, set_rng_state, default_generator, Generator,
)
from . import random  # noqa: E402,F401
from . import fft  # noqa: E402,F401


# ---- joining, splitting, rearranging, softmax (join.c, shape_ops.c, softmax.c) --------
from ._C import (  # noqa: E402,F401
    cat, concat, concatenate, stack, split, chunk, tensor_split, narrow, unbind, swapaxes,
    swapdims, flip, fliplr, flipud, roll, tile, repeat_interleave, movedim, moveaxis, diagonal,
    diag, diag_embed, tril, triu, softmax, log_softmax,
)
# ---- indexing: gather, scatter, masks (ops/index.c, gather.c, masked.c) ----------------
from ._C import (  # noqa: E402,F401
    index_put_, index_put, index_select, index_add, index_copy, index_fill, gather, scatter,
    scatter_add, scatter_reduce, take, take_along_dim, masked_fill, masked_select,
    masked_scatter, nonzero, argwhere,
)
# ... and the compositions torch also writes in Python (_math.py)
from ._math import (  # noqa: E402,F401
    atleast_1d, atleast_2d, atleast_3d, hstack, vstack, dstack, meshgrid, broadcast_shapes,
    broadcast_tensors, broadcast_to, einsum, outer, ger, cross, dist, cdist, trace, isclose,
    allclose, equal, addcmul, addcdiv,
)
# ... and torch.X(input, ...) for the ops that are Tensor methods here (_functions.py)
from . import _functions  # noqa: E402
globals().update(_functions.method_functions())
from ._math_elementwise import (  # noqa: E402,F401
    clamp_min, clamp_max, clamp_min_, clamp_max_, logaddexp, logaddexp2, xlogy, xlogy_, logit,
    logit_, sinc, sinc_, float_power, hypot, signbit, copysign, sgn, positive, heaviside, deg2rad,
    rad2deg, deg2rad_, rad2deg_, fmod, isposinf, isneginf, isreal,
)
from ._math_reduce import (  # noqa: E402,F401
    nansum, nanmean, aminmax, std_mean, var_mean, quantile, nanquantile, cov, corrcoef, histogram,
)
from ._math_shape import (  # noqa: E402,F401
    ravel, unflatten, split_with_sizes, rot90, diff, tensordot, inner, kron, cartesian_prod,
    combinations, block_diag, column_stack, row_stack, is_same_size, is_nonzero, unravel_index, isin,
)
from ._math_signal import (  # noqa: E402,F401
    hann_window, hamming_window, blackman_window, bartlett_window, trapezoid, trapz, cumulative_trapezoid,
    vander, scalar_tensor, stft, istft,
)
from ._sampling import bernoulli, multinomial, normal  # noqa: E402,F401
from ._sampling_more import poisson, binomial, _standard_gamma  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from ._linalg_torch import (  # noqa: E402,F401
    det, inverse, slogdet, logdet, pinverse, matrix_power, cholesky, svd, qr,
    lu, lu_unpack, lu_solve, triangular_solve, cholesky_solve, cholesky_inverse, matrix_exp, geqrf, orgqr, ormqr,
    lstsq, solve, eig, symeig, matrix_rank,
)
from . import special  # noqa: E402,F401
from .special import polygamma, mvlgamma, igamma, igammac  # noqa: E402,F401
# ---- more compositions: elementwise (_math_more.py), linear-algebra glue (_math_linear.py),
# scatters (_scatter_more.py), tensor utilities and factories (_tensor_more.py) ----------
from ._math_more import (  # noqa: E402,F401
    acosh, asinh, atanh, arccosh, arcsinh, arctanh, acosh_, asinh_, atanh_, arccosh_, arcsinh_,
    arctanh_, fmax, fmin, gcd, lcm, gcd_, lcm_, ldexp, ldexp_, frexp, nextafter, i0, i0_, angle, conj,
    conj_physical, conj_physical_, resolve_conj, resolve_neg, is_conj, is_neg, rsub, fill,
)
from ._math_linear import (  # noqa: E402,F401
    addmv, addmv_, addr, addbmm, chain_matmul, vdot, diagflat, renorm, dsplit, hsplit, vsplit,
    constant_pad_nd, narrow_copy, kaiser_window, randint_like,
)
from ._scatter_more import (  # noqa: E402,F401
    slice_scatter, select_scatter, diagonal_scatter, as_strided_scatter, put, index_reduce,
)
from ._tensor_more import (  # noqa: E402,F401
    is_inference, unsafe_chunk, unsafe_split, unsafe_split_with_sizes, asarray, frombuffer,
)
from ._torch_misc import (  # noqa: E402,F401
    pi, e, inf, nan, newaxis, layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr,
    sparse_bsc, typename, is_storage, set_warn_always, is_warn_always_enabled, set_flush_denormal,
    set_deterministic_debug_mode, get_deterministic_debug_mode,
)
from . import jit  # noqa: E402,F401 - eager: script/trace return what they get
from ._compile import compile  # noqa: E402,F401 - eager: returns the model
from . import _dynamo  # noqa: E402,F401 - torch._dynamo: config and decorators for eager compile
from . import compiler  # noqa: E402,F401 - torch.compiler, the same eager stand-ins
from . import testing  # noqa: E402,F401

# ---- autograd: the grad modes (autograd/grad_mode.py over csrc/autograd/) ---------------
from . import autograd  # noqa: E402,F401
from .autograd.grad_mode import (  # noqa: E402,F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
    is_inference_mode_enabled,
)
from ._C import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: E402,F401


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off (autograd.set_detect_anomaly's switch)."""
    _C._set_anomaly_enabled(enabled, check_nan)

# ---- nn: modules, layers, losses (nn/ builds on autograd's grad modes) ------------------
from . import amp  # noqa: E402,F401
from .amp import autocast, is_autocast_enabled, get_autocast_dtype  # noqa: E402,F401
from .cuda import amp as _cuda_amp  # noqa: E402,F401 - torch.cuda.amp
from . import nn  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import distributions  # noqa: E402,F401
from . import func  # noqa: E402,F401 - torch.func: functional_call and the transforms
from .func import vmap  # noqa: E402,F401 - torch.vmap
globals().update(_functions.functional_functions())  # torch.conv2d, torch.layer_norm, ...
from .nn._functional_extra import celu_, selu_, threshold_, pdist, _torch_rrelu_ as rrelu_  # noqa: E402,F401
from . import _functional_more  # noqa: E402
globals().update(_functional_more.functions())  # torch.kl_div, torch.poisson_nll_loss, ... (aten's orders)

# ---- checkpoints: torch.save / torch.load in torch's zip format (serialization.py) ------
from .serialization import save, load  # noqa: E402,F401
from . import serialization  # noqa: E402,F401

# ---- torch.utils (hooks; utils.data loads on first use) and torch.multiprocessing -------
from . import utils  # noqa: E402,F401
from . import multiprocessing  # noqa: E402,F401
from . import distributed  # noqa: E402,F401 - pure Python; NCCL loads on first use

# ---- torch.accelerator, torch.Stream, torch.Event: device-generic names over CUDA -------
from . import accelerator  # noqa: E402,F401
from . import foreach  # noqa: E402,F401 - torch.foreach
from . import profiler  # noqa: E402,F401 - torch.profiler over record_function ranges
from . import hub  # noqa: E402,F401 - torch.hub: cached checkpoint downloads, local hubconf
from . import onnx  # noqa: E402,F401 - torch.onnx: is_in_onnx_export, and export raising
from . import fx  # noqa: E402,F401 - torch.fx: wrap, and the tracer raising
from ._typed_storage import TypedStorage  # noqa: E402,F401 - Tensor.storage()'s class (deprecated)
globals().update(foreach._private_names())  # torch._foreach_add_, ...
from ._generic_stream import Stream, Event  # noqa: E402,F401
from . import cpu  # noqa: E402,F401 - torch.cpu, for device-agnostic code
from .utils import dlpack as _dlpack  # noqa: E402
from .utils.dlpack import from_dlpack  # noqa: E402,F401
from ._tensor_set import view_as_real, view_as_complex  # noqa: E402,F401
from ._copy_ops import (  # noqa: E402,F401 - the *_copy spellings of the view ops, and kin
    alias_copy, as_strided_copy, detach_copy, diagonal_copy, expand_copy, permute_copy,
    select_copy, slice_copy, split_copy, split_with_sizes_copy, squeeze_copy, t_copy,
    transpose_copy, unbind_copy, unfold_copy, unsqueeze_copy, view_as_real_copy,
    view_as_complex_copy, view_copy, range, empty_permuted, as_strided_, to_dlpack,
)
from ._segment import segment_reduce  # noqa: E402,F401
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: E402,F401
from . import signal  # noqa: E402,F401 - torch.signal.windows
from . import quasirandom  # noqa: E402,F401 - torch.quasirandom.SobolEngine
from ._misc_api import (  # noqa: E402,F401
    get_device_module, is_distributed, complex, polar, adjoint, frobenius_norm, nuclear_norm,
    norm_except_dim, nonzero_static, erf_, erfc_, arccos_, arcsin_, arctan_, fix_,
    adaptive_max_pool1d, max_pool1d_with_indices, alpha_dropout, alpha_dropout_,
    feature_alpha_dropout, feature_alpha_dropout_, feature_dropout, feature_dropout_,
    embedding_bag, gradient, histogramdd, is_autocast_cpu_enabled, get_autocast_gpu_dtype,
    get_autocast_cpu_dtype, set_autocast_enabled, set_autocast_cpu_enabled, set_autocast_dtype,
    set_autocast_gpu_dtype, set_autocast_cpu_dtype, is_autocast_cache_enabled,
    set_autocast_cache_enabled, clear_autocast_cache,
)
from .cuda import OutOfMemoryError  # noqa: E402,F401 - torch.OutOfMemoryError
# ---- torch.library / torch.ops, overrides, types, export; control flow; aten spellings -------
from . import library  # noqa: E402,F401 - custom ops, eager (library.py)
from ._ops_namespace import ops  # noqa: E402,F401 - torch.ops.<ns>.<name>
from . import overrides  # noqa: E402,F401 - the __torch_function__ protocol helpers
from . import types  # noqa: E402,F401 - torch.types' aliases
from . import export  # noqa: E402,F401 - torch.export, raising (no tracer)
from . import ao  # noqa: E402,F401 - torch.ao.quantization: float-mode stubs, the rest raising
from . import return_types  # noqa: E402,F401 - the named tuples of ops with several results
from .amp import GradScaler  # noqa: E402,F401 - torch.GradScaler is torch.amp.GradScaler
from . import __future__  # noqa: E402,F401 - torch.__future__'s module-conversion switches
quantization = ao.quantization  # torch.quantization, the older name of the same module
__import__("sys").modules[__name__ + ".quantization"] = quantization  # import pycuda_sem.quantization
from ._control_flow import cond, while_loop, fork, wait  # noqa: E402,F401
from ._native_ops import (  # noqa: E402,F401
    native_layer_norm, native_batch_norm, native_group_norm, native_dropout, native_norm, convolution,
    grid_sampler, grid_sampler_2d, grid_sampler_3d, affine_grid_generator, embedding_renorm_,
)


# ---- torch.use_deterministic_algorithms: the CUDA scatters read the flag ----------------
_deterministic_warn_only = False


def use_deterministic_algorithms(mode, *, warn_only=False):
    """As torch: with mode True, the float sums of CUDA
    index_put_(accumulate=True), index_add_ and scatter_add_ take the
    sort-based path (bitwise reproducible); with False (the default)
    float32/float64 sums use atomicAdd, as torch's default kernels do."""
    global _deterministic_warn_only
    import builtins
    if not isinstance(mode, builtins.bool):  # `bool` here is the dtype
        raise RuntimeError("use_deterministic_algorithms expects a bool, but got %s"
                           % type(mode).__name__)
    _C._set_deterministic_algorithms(mode)
    _deterministic_warn_only = mode and not not warn_only


def are_deterministic_algorithms_enabled():
    """Whether use_deterministic_algorithms(True) is in force."""
    return _C._get_deterministic_algorithms()


def is_deterministic_algorithms_warn_only_enabled():
    """Whether use_deterministic_algorithms(True, warn_only=True) is in force."""
    return _deterministic_warn_only
