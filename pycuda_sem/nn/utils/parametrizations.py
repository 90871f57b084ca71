"""torch.nn.utils.parametrizations: orthogonal, weight_norm and
spectral_norm as parametrizations (nn.utils.parametrize), torch's newer
forms of the hook-based nn.utils.weight_norm / spectral_norm. The state
dict keys are torch's: `parametrizations.<name>.original0/original1` (g and
v) for weight_norm, `parametrizations.<name>.original` plus the buffers
`parametrizations.<name>.0._u/_v` for spectral_norm,
`parametrizations.<name>.original` (and `.0.base`) for orthogonal. An old
`<name>_g / <name>_v` state dict loads into a weight_norm-parametrized
module (a load_state_dict pre-hook renames the keys, as torch's)."""
import enum

from ... import _C
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .weight_norm import _norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_MAX_POWER_ITERATIONS = 1 << 16


def _lib():
    import pycuda_sem  # the top-level functions (eye, geqrf, matrix_exp, linalg)
    return pycuda_sem


def _is_orthogonal(q):
    n, k = q.size(-2), q.size(-1)
    eye = _lib().eye(k, dtype=q.dtype, device=q.device)
    eps = 10.0 * n * _lib().finfo(q.dtype).eps
    return _lib().allclose(q.mH @ q, eye, atol=eps)


def _make_orthogonal(a):
    # Q of a's QR, with the signs fixed so that R's diagonal is positive
    x, tau = _lib().geqrf(a)
    q = _lib().linalg.householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


class _Orthogonal(Module):
    """X -> an orthogonal (or, for a non-square X, orthonormal-columns/rows)
    matrix: the exponential or the Cayley transform of the skew-symmetric
    matrix from X's lower triangle, or the product of the Householder
    reflectors X's strictly lower triangle holds; with use_trivialization the
    result is multiplied by a `base` matrix that assignment sets."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:
                x = _C.cat([x, x.new_zeros((n, n - k)).expand(tuple(x.shape[:-2]) + (n, n - k))],
                           -1)
            a = x - x.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = _lib().matrix_exp(a)
            else:
                eye = _lib().eye(n, dtype=a.dtype, device=a.device)
                q = _lib().linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = _lib().linalg.householder_product(a, tau)
            # torch multiplies by the diagonal truncated to int (-1 after right_inverse)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:  # use_trivialization (set by right_inverse)
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q):
        with no_grad():
            if q.shape != self.shape:
                raise ValueError("Expected a matrix or batch of matrices of shape %s. Got a tensor "
                                 "of shape %s." % (self.shape, q.shape))
            q_init = q
            n, k = q.size(-2), q.size(-1)
            transpose = n < k
            if transpose:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix "
                                              "exponential or the Cayley parametrizations when "
                                              "use_trivialization=False.")
                a, tau = _lib().geqrf(q)
                diag = a.diagonal(dim1=-2, dim2=-1)
                sign = diag.sign()
                sign = _lib().where(tau == 0.0, -sign, sign)
                diag.copy_(sign)
                return a.mT if transpose else a
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                extra = _lib().randn(tuple(q.shape[:-2]) + (n, n - k), dtype=q.dtype,
                                     device=q.device)
                q = _make_orthogonal(_C.cat([q, extra], -1))
            self.base = q
            neg_id = _lib().zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Makes module.<name> (a matrix or a batch of them) orthogonal
    (orthonormal rows or columns when not square). orthogonal_map:
    'matrix_exp' (the default for square or complex), 'cayley' or
    'householder' (the default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError("Module '%s' has no parameter or buffer with name '%s'" % (module, name))
    if weight.dim() < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of %d dimensions."
                         % weight.dim())
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1)
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) \
        else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         "Got: %s" % (orthogonal_map,))
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """(g, v) -> g * v / ||v||, the norm over every dim but `dim` (the whole
    tensor for dim None or -1)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Splits module.<name> into a magnitude (original0) and a direction
    (original1), w = g * v / ||v||."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        # a state dict of the hook-based weight_norm (<name>_g, <name>_v) loads too
        g_key, v_key = prefix + name + "_g", prefix + name + "_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[prefix + "parametrizations.%s.original0" % name] = state_dict.pop(g_key)
            state_dict[prefix + "parametrizations.%s.original1" % name] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """W -> W / sigma, sigma the largest singular value of W reshaped to a
    matrix (dim first), estimated by power iteration on the buffers _u, _v
    (n_power_iterations steps per forward in training mode, 15 at start);
    a 1-D tensor is just normalised."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of [-%d, %d] but got "
                             "%d)" % (ndim, ndim - 1, dim))
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             "n_power_iterations=%d" % n_power_iterations)
        if n_power_iterations > _MAX_POWER_ITERATIONS:  # every read would loop that often
            raise ValueError("n_power_iterations=%d is more than pycuda_sem allows (%d)"
                             % (n_power_iterations, _MAX_POWER_ITERATIONS))
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = mat.new_empty((h,)).normal_(0, 1)
            v = mat.new_empty((w,)).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute([self.dim] + [d for d in range(weight.dim()) if d != self.dim])
        return weight.flatten(1)

    def _power_method(self, mat, n_power_iterations):
        # updates the buffers in place (their identity is kept, as torch's out=)
        with no_grad():
            mat = mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(_C.mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(_C.mv(mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = _lib().vdot(u, _C.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides module.<name> by its spectral norm, estimated by power
    iteration (dim: 1 for ConvTranspose modules, else 0)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError("Module '%s' has no parameter or buffer with name '%s'" % (module, name))
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
