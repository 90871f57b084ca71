"""Backward formulas of the matmul family (matmul mm bmm mv dot outer addmm
baddbmm cross), of softmax/log_softmax and of the FFT primitive.

softmax's gradient on CUDA is one kernel (_C._softmax_backward) unless grad
mode is on during backward (create_graph), where it is composed from
differentiable ops so double backward works.

Products take the conjugate transpose of the other operand (torch's rule
for complex), and are themselves products, so backward runs on cuBLAS too.
"""
from .. import _C
from ._formulas import arg, conj, fit, formula, needs, sum_to


def _mH(t):
    return conj(t.transpose(-2, -1))


# ---- matmul family -------------------------------------------------------------------------

@formula("matmul matmul_", save=(0, 1), save_when=(1, 0))
def _matmul(ctx, g):
    # each operand is kept only for the other's gradient (None otherwise):
    # the shapes come from the node's metadata
    a, b = ctx.args[0], ctx.args[1]
    sa, sb = tuple(ctx.shapes[0]), tuple(ctx.shapes[1])
    ga = gb = None
    if len(sa) == 1 and len(sb) == 1:
        return (fit(ctx, 0, g * conj(b)) if needs(ctx, 0) else None,
                fit(ctx, 1, g * conj(a)) if needs(ctx, 1) else None)
    sa2 = (1,) + sa if len(sa) == 1 else sa
    sb2 = sb + (1,) if len(sb) == 1 else sb
    g2 = g
    if len(sa) == 1:
        g2 = g2.unsqueeze(-2)
    if len(sb) == 1:
        g2 = g2.unsqueeze(-1)
    if needs(ctx, 0):
        b2 = b.unsqueeze(-1) if len(sb) == 1 else b
        ga = fit(ctx, 0, sum_to(g2.matmul(_mH(b2)), sa2).reshape(sa))
    if needs(ctx, 1):
        a2 = a.unsqueeze(0) if len(sa) == 1 else a
        gb = fit(ctx, 1, sum_to(_mH(a2).matmul(g2), sb2).reshape(sb))
    return (ga, gb)


@formula("mm", save=(0, 1), save_when=(1, 0))
def _mm(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    return (fit(ctx, 0, g.mm(_mH(b))) if needs(ctx, 0) else None,
            fit(ctx, 1, _mH(a).mm(g)) if needs(ctx, 1) else None)


@formula("bmm", save=(0, 1), save_when=(1, 0))
def _bmm(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    return (fit(ctx, 0, g.bmm(_mH(b))) if needs(ctx, 0) else None,
            fit(ctx, 1, _mH(a).bmm(g)) if needs(ctx, 1) else None)


@formula("mv", save=(0, 1), save_when=(1, 0))
def _mv(ctx, g):
    m, v = ctx.args[0], ctx.args[1]
    return (fit(ctx, 0, g.unsqueeze(1) * conj(v)) if needs(ctx, 0) else None,
            fit(ctx, 1, _mH(m).mv(g)) if needs(ctx, 1) else None)


@formula("dot", save=(0, 1))
def _dot(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    return (fit(ctx, 0, g * conj(b)) if needs(ctx, 0) else None,
            fit(ctx, 1, g * conj(a)) if needs(ctx, 1) else None)


@formula("outer ger", save=(0, 1))
def _outer(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    return (fit(ctx, 0, g.mv(conj(b))) if needs(ctx, 0) else None,
            fit(ctx, 1, g.t().mv(conj(a))) if needs(ctx, 1) else None)


def _scaled(g, s):
    return g if s == 1 else g * conj(s)


def _addmm_like(mul):
    def fn(ctx, g):
        m1, m2 = ctx.args[1], ctx.args[2]
        beta, alpha = arg(ctx, 3, "beta", 1), arg(ctx, 4, "alpha", 1)
        gi = g1 = g2 = None
        if needs(ctx, 0):
            gi = fit(ctx, 0, _scaled(g, beta))
        if needs(ctx, 1):
            g1 = fit(ctx, 1, _scaled(mul(g, _mH(m2)), alpha))
        if needs(ctx, 2):
            g2 = fit(ctx, 2, _scaled(mul(_mH(m1), g), alpha))
        return (gi, g1, g2)
    return fn


formula("addmm", save=(1, 2))(_addmm_like(_C.mm))
formula("baddbmm", save=(1, 2))(_addmm_like(_C.bmm))


@formula("cross", save=(0, 1))
def _cross(ctx, g):
    from .._math import cross
    a, b = ctx.args[0], ctx.args[1]
    dim = arg(ctx, 2, "dim")
    if dim is None:  # the first dim of size 3 of the broadcast shape, as forward
        dim = next(i for i, s in enumerate(g.shape) if s == 3)
    return (fit(ctx, 0, cross(conj(b), g, dim)) if needs(ctx, 0) else None,
            fit(ctx, 1, cross(g, conj(a), dim)) if needs(ctx, 1) else None)


# ---- softmax ---------------------------------------------------------------------------------

def _sdim(ctx):
    return arg(ctx, 1, "dim")


def _one_kernel(r, g):
    # CUDA, grad mode off (no double backward through the kernel)
    return r.is_cuda and g.device == r.device and g.dtype == r.dtype and not _C.is_grad_enabled()


@formula("softmax", result=True)
def _softmax(ctx, g):
    r = ctx.result
    d = _sdim(ctx)
    if _one_kernel(r, g):
        return (_C._softmax_backward(g, r, d, False),)
    return (r * (g - (g * r).sum(d, keepdim=True)),)


@formula("log_softmax", result=True)
def _log_softmax(ctx, g):
    r = ctx.result
    d = _sdim(ctx)
    if _one_kernel(r, g):
        return (_C._softmax_backward(g, r, d, True),)
    return (g - r.exp() * g.sum(d, keepdim=True),)


# ---- FFT: _C._fft_cuda(x, kind, dims, sizes, mode, forward, conj_in, conj_out) ------------------
# kind 0 c2c, 1 r2c (onesided), 2 c2r; mode: the scaling (0 none, 1 1/n,
# 2 1/sqrt(n)), the same in both directions of a pair. The adjoint of a
# transform is the transform the other way with the same scaling; r2c pads
# the half spectrum with zeros and keeps the real part; c2r is an r2c whose
# inner bins count twice (their conjugate twins were implied). See torch's
# fft_r2c_backward / fft_c2r_backward.

_C2C, _R2C, _C2R = 0, 1, 2


def fft_prim(x, kind, dims, sizes, mode, forward, conj_in=False, conj_out=False):
    """The FFT primitive on either device: _C._fft_cuda on CUDA, NumPy (via
    fft.py's CPU path) on the CPU. Differentiable on both."""
    if x.is_cuda:
        return _C._fft_cuda(x, kind, dims, sizes, mode, forward, conj_in, conj_out)
    from .. import fft as _fft
    if not (x.requires_grad and _C.is_grad_enabled()):
        return _fft._cpu_prim(x, kind, dims, sizes, mode, forward, conj_in, conj_out)
    # NumPy computes it, so the engine cannot see it: a node wired by hand,
    # whose backward is the same formula as _fft_cuda's
    ctx = _C._FunctionCtx((x,))
    with _no_grad():
        out = _fft._cpu_prim(x, kind, dims, sizes, mode, forward, conj_in, conj_out)
    in_shape = tuple(x.shape)

    def backward(_ctx, g):
        return (fft_backward(g, in_shape, kind, dims, sizes, mode, forward, conj_in, conj_out),)
    return _C._function_wire(ctx, backward, (x,), out, "FftBackward0")


def _no_grad():
    from .grad_mode import no_grad
    return no_grad()


def _resize(t, dims, sizes):
    """t with each dim d of dims cropped or zero-padded to sizes."""
    for d, n in zip(dims, sizes):
        m = t.shape[d]
        if m > n:
            t = t.narrow(d, 0, n)
        elif m < n:
            pad = list(t.shape)
            pad[d] = n - m
            t = _C.cat([t, _C.zeros(tuple(pad), dtype=t.dtype, device=t.device)], d)
    return t


def fft_backward(g, in_shape, kind, dims, sizes, mode, forward, conj_in, conj_out):
    ndim = len(in_shape)
    if dims is None:
        dims = (ndim - 1,)
    dims = tuple(int(d) % ndim for d in dims)
    if sizes is None:
        n_last = in_shape[dims[-1]]
        sizes = tuple(in_shape[d] for d in dims)
        if kind == _C2R:
            sizes = sizes[:-1] + (2 * (n_last - 1),)
    sizes = tuple(sizes)
    in_sizes = tuple(in_shape[d] for d in dims)
    if kind == _C2C:
        gi = fft_prim(g, _C2C, dims, sizes, mode, not forward)
        return _resize(gi, dims, in_sizes)
    if kind == _R2C:
        if conj_out:
            g = conj(g)
        full = _resize(g, dims[-1:], sizes[-1:])  # zeros for the implied half
        gi = fft_prim(full, _C2C, dims, sizes, mode, not forward).real
        return _resize(gi, dims, in_sizes)
    # c2r: an r2c of g, inner bins doubled
    gi = fft_prim(g, _R2C, dims, sizes, mode, True)
    last = dims[-1]
    m = gi.shape[last]
    twice = sizes[-1] - m
    if twice > 0:
        w = [1.0] + [2.0] * twice + [1.0] * (m - 1 - twice)
        shape = [1] * gi.dim()
        shape[last] = m
        gi = gi * _C.tensor(w, dtype=g.dtype, device=g.device).view(tuple(shape))
    if conj_in:
        gi = conj(gi)
    return _resize(gi, dims, in_sizes)


@formula("_fft_cuda", node_name="FftBackward0")
def _fft_cuda(ctx, g):
    a = ctx.args
    return (fft_backward(g, tuple(ctx.shapes[0]), *a[1:8]),)
