"""Helpers of the autograd formula tests (test_autograd_ops.py).

- The case table's argument specs (R: a random differentiable tensor; L: a
  value built on the test's device, such as an index tensor or a mask).
- gradcheck/gradgradcheck: pycuda_sem.autograd's when it exists, else a
  small finite-difference checker (central differences in float64, torch's
  default tolerances eps=1e-6, atol=1e-5, rtol=1e-3).
- formula_check: the formula alone, called with a hand-made ctx exactly as
  the contract (notes/autograd_interface.md) describes the engine's, and
  compared with a directional finite difference. It runs without the
  engine, and it checks each formula's save_args (an argument that is not
  saved reaches the formula as None).
"""
import numpy as np

import pycuda_sem as torch
from pycuda_sem import _C
from pycuda_sem.autograd import _formulas

EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3


# ---- argument specs ------------------------------------------------------------------------

class R:
    """A random float64 (or complex128) tensor that requires grad, its
    magnitudes in [lo, hi] with random signs (never near 0), or the given
    values."""

    def __init__(self, *shape, lo=0.5, hi=2.0, pos=False, cplx=False, values=None):
        self.shape, self.lo, self.hi, self.pos, self.cplx, self.values = (
            shape, lo, hi, pos, cplx, values)

    def make(self, rng, device):
        if self.values is not None:
            a = np.asarray(self.values, dtype=np.float64)
        else:
            a = rng.uniform(self.lo, self.hi, self.shape)
            if not self.pos:
                a = a * rng.choice([-1.0, 1.0], self.shape)
            if self.cplx:
                a = a + 1j * rng.uniform(self.lo, self.hi, self.shape) * rng.choice(
                    [-1.0, 1.0], self.shape)
        return torch.tensor(a, dtype=torch.complex128 if np.iscomplexobj(a) else torch.float64,
                            device=device)


class L:
    """A non-differentiable value built on the device: L(lambda dev: ...)."""

    def __init__(self, fn):
        self.fn = fn


def idx(values):
    return L(lambda dev: torch.tensor(values, dtype=torch.int64, device=dev))


def mask(values):
    return L(lambda dev: torch.tensor(values, dtype=torch.bool, device=dev))


def build(args, rng, device):
    """(values, diff): values with the specs made; diff lists the paths
    (i,) or (i, j) of the differentiable tensors."""
    vals, diff = [], []
    for i, a in enumerate(args):
        if isinstance(a, R):
            vals.append(a.make(rng, device))
            diff.append((i,))
        elif isinstance(a, L):
            vals.append(a.fn(device))
        elif isinstance(a, list) and a and isinstance(a[0], R):
            vals.append([x.make(rng, device) for x in a])
            diff.extend((i, j) for j in range(len(a)))
        else:
            vals.append(a)
    return vals, diff


def get(vals, path):
    v = vals[path[0]]
    return v if len(path) == 1 else v[path[1]]


def put(vals, path, t):
    vals = list(vals)
    if len(path) == 1:
        vals[path[0]] = t
    else:
        lst = list(vals[path[0]])
        lst[path[1]] = t
        vals[path[0]] = lst
    return vals


# ---- calling an op the way the engine sees it ------------------------------------------------

def call(name, via, vals, kw):
    if name == "__getitem__":
        return vals[0][vals[1]]
    if name == "__setitem__":
        y = vals[0].clone()
        y[vals[1]] = vals[2]
        return y
    if name == "pos":
        return +vals[0]
    if name == "matmul_":  # the operator slot of x @= y
        y = vals[0].clone()
        y @= vals[1]
        return y
    if via == "p":
        return getattr(vals[0], name)
    if via == "prim":  # the FFT primitive's contract, on the CPU
        from pycuda_sem import fft
        from pycuda_sem.autograd._formulas_linalg import fft_prim
        if not any(isinstance(v, _C.Tensor) and v.requires_grad for v in vals):
            return fft._cpu_prim(*vals, **kw) if not vals[0].is_cuda else fft_prim(*vals, **kw)
        return fft_prim(*vals, **kw)
    if via == "m":
        self = vals[0].clone() if name.endswith("_") else vals[0]
        return getattr(self, name)(*vals[1:], **kw)
    return getattr(_C, name)(*vals, **kw)


def float_outputs(out):
    """The op's tensor outputs that carry gradients, as a list."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, _C.Tensor)
            and (o.is_floating_point() or o.is_complex())]


# ---- gradcheck -------------------------------------------------------------------------------

def _real_gradcheck():
    try:
        from pycuda_sem.autograd import gradcheck as gc
    except ImportError:
        return None, None
    return getattr(gc, "gradcheck", None), getattr(gc, "gradgradcheck", None)


def autograd_grad(outputs, inputs, grad_outputs, retain_graph=None, create_graph=False,
                  allow_unused=True):
    """torch.autograd.grad, or the engine's entry until the Python wrapper lands."""
    fn = getattr(torch.autograd, "grad", None)
    if fn is not None:
        return fn(outputs, inputs, grad_outputs, retain_graph=retain_graph,
                  create_graph=create_graph, allow_unused=allow_unused)
    keep = create_graph if retain_graph is None else retain_graph
    return _C._run_backward(tuple(outputs), tuple(grad_outputs), keep, create_graph,
                            tuple(inputs), allow_unused, False)


def _flat(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.complex128).reshape(-1)


def _numerical_vjp(f, inputs, gs):
    """d/dx <g, f(x)> by central differences, per input element (real and,
    for complex inputs, imaginary directions: torch's conjugate convention)."""
    res = []
    for k, x in enumerate(inputs):
        base = _flat(x)
        out = np.zeros(base.shape, dtype=np.complex128)
        dirs = (1.0, 1j) if x.is_complex() else (1.0,)
        for j in range(base.size):
            for d in dirs:
                vals = []
                for s in (1, -1):
                    a = base.copy()
                    a[j] += s * EPS * d
                    if not x.is_complex():
                        a = a.real
                    xs = list(inputs)
                    xs[k] = torch.tensor(a.reshape(tuple(x.shape)), dtype=x.dtype,
                                         device=x.device)
                    outs = [o.detach() for o in float_outputs(f(*xs))]
                    vals.append(sum(float(np.real(np.vdot(_flat(g), _flat(o))))
                                    for g, o in zip(gs, outs)))
                deriv = (vals[0] - vals[1]) / (2 * EPS)
                out[j] += deriv * d
        res.append(out if x.is_complex() else out.real)
    return res


def fd_gradcheck(f, inputs, seed=0):
    """Compare autograd's vector-Jacobian products with central differences
    for a few random output gradients. Raises AssertionError on mismatch."""
    rng = np.random.RandomState(seed)
    inputs = [x.detach().requires_grad_() for x in inputs]
    outs = float_outputs(f(*inputs))
    for _ in range(2):
        gs = []
        for o in outs:
            a = rng.standard_normal(tuple(o.shape))
            if o.is_complex():
                a = a + 1j * rng.standard_normal(tuple(o.shape))
            gs.append(torch.tensor(a, dtype=o.dtype, device=o.device))
        # an output that does not require grad (the gradient of a linear op,
        # in gradgradcheck) has a zero Jacobian, as in torch's gradcheck
        live = [(o, g) for o, g in zip(outs, gs) if o.requires_grad]
        if live:
            an = autograd_grad([o for o, _ in live], inputs, [g for _, g in live],
                               retain_graph=True)
        else:
            an = [None] * len(inputs)
        num = _numerical_vjp(f, inputs, gs)
        for k, (a, n) in enumerate(zip(an, num)):
            a = np.zeros_like(n) if a is None else _flat(a)
            if not np.iscomplexobj(n):
                a = a.real
            if not np.allclose(a, n, atol=ATOL, rtol=RTOL):
                raise AssertionError("input %d: analytical %s != numerical %s" % (k, a, n))
    return True


def gradcheck(f, inputs):
    real, _ = _real_gradcheck()
    if real is not None:
        return real(f, tuple(inputs), eps=EPS, atol=ATOL, rtol=RTOL)
    return fd_gradcheck(f, inputs)


def gradgradcheck(f, inputs):
    _, real = _real_gradcheck()
    if real is not None:
        return real(f, tuple(inputs), eps=EPS, atol=ATOL, rtol=RTOL)
    # second order: gradcheck of x -> d<g, f(x)>/dx with a fixed g
    rng = np.random.RandomState(1)
    with torch.no_grad():
        outs = float_outputs(f(*inputs))
    gs = [torch.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=o.device)
          for o in outs]

    def first(*xs):
        xs = [x if x.requires_grad else x.detach().requires_grad_() for x in xs]
        outs = float_outputs(f(*xs))
        gr = autograd_grad(outs, xs, gs, create_graph=True)
        return tuple(g for g in gr if g is not None)
    return fd_gradcheck(first, inputs)


# ---- the formula alone, with a hand-made ctx -------------------------------------------------

class FakeCtx:
    pass


def _tensor_like_meta(v, saved, fn):
    if isinstance(v, _C.Tensor):
        return fn(v, saved)
    if isinstance(v, (list, tuple)) and v and all(isinstance(t, _C.Tensor) for t in v):
        return tuple(fn(t, saved) for t in v)
    return None


def make_ctx(name, vals, kw, out, diff):
    fn, save, save_result = _formulas.REGISTRY[name][:3]
    ctx = FakeCtx()
    args = []
    for i, v in enumerate(vals):
        keep = i in save
        if isinstance(v, _C.Tensor):
            args.append(v if keep else None)
        elif isinstance(v, list) and v and all(isinstance(t, _C.Tensor) for t in v):
            args.append(tuple(t if keep else None for t in v))
        else:
            args.append(v)
    ctx.args = tuple(args)
    ctx.kwargs = dict(kw)
    ctx.result = (tuple(out) if isinstance(out, (tuple, list)) else out) if save_result else None
    ctx.shapes = tuple(_tensor_like_meta(v, None, lambda t, s: t.shape) for v in vals)
    ctx.dtypes = tuple(_tensor_like_meta(v, None, lambda t, s: t.dtype) for v in vals)
    nig = []
    for i, v in enumerate(vals):
        if isinstance(v, list):
            nig.append(tuple((i, j) in diff for j in range(len(v))))
        else:
            nig.append((i,) in diff)
    ctx.needs_input_grad = tuple(nig)
    return fn, ctx


def formula_check(name, via, vals, kw, diff, seed=0):
    """<formula(g), v> == d/de <g, f(x + e v)> for random g, v."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        out = call(name, via, vals, kw)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    gs = []
    for o in outs:
        if isinstance(o, _C.Tensor) and (o.is_floating_point() or o.is_complex()):
            a = rng.standard_normal(tuple(o.shape))
            if o.is_complex():
                a = a + 1j * rng.standard_normal(tuple(o.shape))
            gs.append(torch.tensor(a, dtype=o.dtype, device=o.device))
        else:
            gs.append(torch.zeros(tuple(o.shape), dtype=torch.float64, device=o.device))
    fn, ctx = make_ctx(name, vals, kw, out, diff)
    res = fn(ctx, *gs)
    vs = {}
    for p in diff:
        x = get(vals, p)
        v = rng.standard_normal(tuple(x.shape))
        if x.is_complex():
            v = v + 1j * rng.standard_normal(tuple(x.shape))
        vs[p] = v
    an = 0.0  # Re <grad, v>: torch's convention for complex inputs
    for p in diff:
        r = res[p[0]] if p[0] < len(res) else None
        if r is not None and len(p) == 2:
            r = r[p[1]]
        if r is None:
            continue
        r = _formulas.sum_to(r, get(vals, p).shape)
        an += float(np.real(np.vdot(_flat(r), vs[p].reshape(-1))))
    pairs = [(g, o) for g, o in zip(gs, outs)
             if isinstance(o, _C.Tensor) and (o.is_floating_point() or o.is_complex())]
    num = []
    for s in (1, -1):
        xs = vals
        for p in diff:
            x = get(vals, p)
            xs = put(xs, p, x + torch.tensor(s * EPS * vs[p], dtype=x.dtype, device=x.device))
        with torch.no_grad():
            o2 = float_outputs(call(name, via, xs, kw))
        num.append(sum(float(np.real(np.vdot(_flat(g), _flat(o))))
                       for (g, _), o in zip(pairs, o2)))
    nd = (num[0] - num[1]) / (2 * EPS)
    assert abs(an - nd) <= ATOL + RTOL * abs(nd), "%s: formula %r != numerical %r" % (name, an, nd)
