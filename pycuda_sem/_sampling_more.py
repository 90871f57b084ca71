"""Exact gamma, Poisson and binomial draws on whole tensors (torch._standard_gamma,
torch.poisson, torch.binomial), used by torch.distributions' Gamma/Beta/Dirichlet,
Poisson and Binomial.

Every draw goes through rand/randn, so manual_seed and generator= make them
reproducible, on the CPU and on CUDA alike. The rejection samplers work on
whole tensors: each round proposes for every entry, keeps the proposal only
where an entry is still pending and accepts, and stops when none is pending;
after a bounded number of rounds (far beyond what the acceptance rates need:
a leftover is a bug or a NaN parameter) they raise RuntimeError instead of
looping. The arithmetic is float64 (the Poisson/binomial logs and lgammas
need it), the result in the input's dtype.

- gamma: Marsaglia and Tsang (2000); concentration < 1 is boosted,
  Gamma(a) = Gamma(a + 1) * U ** (1 / a). Differentiable in the concentration
  by implicit reparameterisation (dx/da = -dCDF/da / pdf), as torch's.
- poisson: inversion by sequential search (one uniform per draw) for rates
  below 10, Hormann's PTRS transformed rejection (1993, torch's choice) above.
- binomial: inversion for n * min(p, 1 - p) < 10, Hormann's BTRS (1993)
  above, its acceptance test done exactly with lgamma.
"""
from . import _C
from .autograd.function import Function
from .autograd.grad_mode import is_grad_enabled

_MAX_ROUNDS = 200


def _check_tensor(fname, x):
    if not isinstance(x, _C.Tensor):
        raise TypeError("%s(): argument 'input' (position 1) must be Tensor, not %s"
                        % (fname, type(x).__name__))
    if not x.is_floating_point():
        raise RuntimeError('"%s" not implemented for \'%s\'' % (fname, str(x.dtype).split(".")[-1]))
    return x


def _kw(x, generator, dtype=_C.float64):
    kw = {"dtype": dtype, "device": x.device}
    if generator is not None:
        kw["generator"] = generator
    return kw


def _plain(kw):
    """kw without the generator, for tensors that are not draws."""
    return {"dtype": kw["dtype"], "device": kw["device"]}


def _too_many(fname):
    raise RuntimeError("%s: the rejection sampler did not accept every entry within %d rounds "
                       "(a NaN or infinite parameter?)" % (fname, _MAX_ROUNDS))


def _standard_gamma_grad(alpha, x):
    """dx/dalpha of a Gamma(alpha, 1) draw x at fixed CDF value (implicit
    reparameterisation): -(dP(alpha, x)/dalpha) / pdf(x), where P is the
    regularised lower incomplete gamma. dP/dalpha comes from P's power series
    P = sum_n exp((a + n) log x - x - lgamma(a + n + 1)), differentiated term by
    term (digamma(a + n + 1) by its recurrence), in float64; at most 20000
    terms (enough for concentrations up to about 1e6), then RuntimeError."""
    a = alpha.detach().double()
    xd = x.detach().double().clamp(min=1e-300)
    logx = xd.log()
    t = (a * logx - xd - (a + 1).lgamma()).exp()
    psi = (a + 1).digamma()
    total = t * (logx - psi)
    mass = t.clone()
    n = 0
    while True:
        for _ in range(16):
            n += 1
            t = t * xd / (a + n)
            psi = psi + 1.0 / (a + n)
            total = total + t * (logx - psi)
            mass = mass + t
        # done once past the series' peak (n > x - a) and the terms are negligible
        if bool(((t > 1e-17 * mass) | (a + n < xd)).any()) is False:
            break
        if n > 20000:
            raise RuntimeError("_standard_gamma_grad: the series did not converge (concentration too large)")
    log_pdf = (a - 1) * logx - xd - a.lgamma()
    return (-total / log_pdf.exp()).to(x.dtype)


class _StandardGamma(Function):
    """Gamma(alpha, 1) draws whose gradient in alpha is the implicit one (as torch's)."""

    @staticmethod
    def forward(ctx, alpha, generator):
        out = _standard_gamma_nograd(alpha, generator)
        ctx.save_for_backward(alpha, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        alpha, out = ctx.saved_tensors
        return grad * _standard_gamma_grad(alpha, out), None


def _standard_gamma(input, generator=None):
    """Gamma(input, 1) draws, one per entry of input (the concentrations);
    differentiable in input through the implicit reparameterisation gradient."""
    _check_tensor("_standard_gamma", input)
    if input.requires_grad and is_grad_enabled():
        return _StandardGamma.apply(input, generator)
    return _standard_gamma_nograd(input, generator)


def _standard_gamma_nograd(input, generator=None):
    alpha = _check_tensor("_standard_gamma", input).detach().double()
    if bool((alpha < 0).any()):
        raise RuntimeError("_standard_gamma: concentration must be non-negative")
    shape = tuple(alpha.shape)
    kw = _kw(alpha, generator)
    small = alpha < 1
    a = _C.where(small, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / (9.0 * d).sqrt()
    out = _C.zeros(shape, **_plain(kw))
    pending = alpha > 0  # Gamma(0) is 0, as in torch
    for _ in range(_MAX_ROUNDS):
        if not bool(pending.any()):
            break
        z = _C.randn(shape, **kw)
        u = _C.rand(shape, **kw)
        v = (1 + c * z).pow(3)
        ok = (v > 0) & (u.log() < 0.5 * z * z + d - d * v + d * v.clamp(min=1e-300).log())
        take = pending & ok
        out = _C.where(take, d * v, out)
        pending = pending & ~ok
    else:
        if bool(pending.any()):
            _too_many("_standard_gamma")
    if bool(small.any()):
        u = _C.rand(shape, **kw)
        boost = (u.log() / alpha.clamp(min=1e-300)).exp()
        out = _C.where(small, out * boost, out)
    return out.to(input.dtype)


def _poisson_small(lam, u, kw):
    """Inversion: the smallest k with P(X <= k) >= u, rates below 10 (at most 80 steps)."""
    k = _C.zeros(tuple(lam.shape), **_plain(kw))
    p = (-lam).exp()
    cdf = p.clone()
    for i in range(1, 81):
        more = u > cdf
        if i % 8 == 1 and not bool(more.any()):
            break
        k = k + more.to(k.dtype)
        p = p * lam / i
        cdf = cdf + p
    return k


def _poisson_ptrs(lam, shape, kw):
    """Hormann's PTRS for rates >= 10 (lam here clamped to >= 10 where unused)."""
    slam = lam.sqrt()
    loglam = lam.log()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    out = _C.zeros(shape, **_plain(kw))
    pending = _C.ones(shape, dtype=_C.bool, device=lam.device)
    for _ in range(_MAX_ROUNDS):
        if not bool(pending.any()):
            return out
        U = _C.rand(shape, **kw) - 0.5
        V = _C.rand(shape, **kw)
        us = 0.5 - U.abs()
        k = ((2 * a / us + b) * U + lam + 0.43).floor()
        quick = (us >= 0.07) & (V <= vr)
        reject = (k < 0) | ((us < 0.013) & (V > us))
        kk = k.clamp(min=0)
        slow = (V.log() + invalpha.log() - (a / (us * us) + b).log()
                <= -lam + kk * loglam - (kk + 1).lgamma())
        ok = quick | (~reject & slow)
        out = _C.where(pending & ok, k, out)
        pending = pending & ~ok
    if bool(pending.any()):
        _too_many("poisson")
    return out


def poisson(input, generator=None):
    """Poisson draws, one per entry of input (the rates, >= 0), in input's dtype."""
    rate = _check_tensor("poisson", input).detach().double()
    if bool((rate < 0).any()) or bool(rate.isnan().any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    shape = tuple(rate.shape)
    kw = _kw(rate, generator)
    large = rate >= 10
    out = _poisson_small(rate.clamp(max=10), _C.rand(shape, **kw), kw)
    if bool(large.any()):
        out = _C.where(large, _poisson_ptrs(rate.clamp(min=10), shape, kw), out)
    return out.to(input.dtype)


def _binomial_inversion(n, p, shape, kw):
    """Inversion for n * p < 10 (p <= 1/2): at most min(max n, 110) steps."""
    u = _C.rand(shape, **kw)
    q = 1 - p
    k = _C.zeros(shape, **_plain(kw))
    pk = (n * q.log()).exp()
    cdf = pk.clone()
    ratio = p / q
    steps = int(min(float(n.max()) if n.numel() else 0, 110))
    for i in range(steps):
        more = (u > cdf) & (k < n)
        if i % 8 == 0 and not bool(more.any()):
            break
        k = k + more.to(k.dtype)
        pk = pk * (n - i) / (i + 1) * ratio
        cdf = cdf + pk
    return k


def _log_pmf_core(k, n, logp, logq):
    return (n + 1).lgamma() - (k + 1).lgamma() - (n - k + 1).lgamma() + k * logp + (n - k) * logq


def _binomial_btrs(n, p, shape, kw):
    """Hormann's BTRS for n * p >= 10 (p <= 1/2), acceptance by the exact log-pmf ratio."""
    q = 1 - p
    spq = (n * p * q).sqrt()
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    m = ((n + 1) * p).floor()
    logp, logq = p.log(), q.log()
    log_fm = _log_pmf_core(m, n, logp, logq)
    out = _C.zeros(shape, **_plain(kw))
    pending = _C.ones(shape, dtype=_C.bool, device=n.device)
    for _ in range(_MAX_ROUNDS):
        if not bool(pending.any()):
            return out
        U = _C.rand(shape, **kw) - 0.5
        V = _C.rand(shape, **kw)
        us = 0.5 - U.abs()
        k = ((2 * a / us + b) * U + c).floor()
        inside = (k >= 0) & (k <= n)
        quick = (us >= 0.07) & (V <= v_r)
        kk = k.clamp(min=0)
        kk = _C.where(kk > n, n, kk)
        lv = (V * alpha / (a / (us * us) + b)).log()
        slow = lv <= _log_pmf_core(kk, n, logp, logq) - log_fm
        ok = inside & (quick | slow)
        out = _C.where(pending & ok, k, out)
        pending = pending & ~ok
    if bool(pending.any()):
        _too_many("binomial")
    return out


def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws (count and prob broadcast), in prob's dtype."""
    if not isinstance(count, _C.Tensor) or not isinstance(prob, _C.Tensor):
        raise TypeError("binomial(): arguments 'count' and 'prob' must be Tensors")
    _check_tensor("binomial", prob)
    from ._math import broadcast_tensors
    n, p = broadcast_tensors(count.detach().double(), prob.detach().double())
    if bool((n < 0).any()) or bool((n != n.floor()).any()):
        raise RuntimeError("binomial: count must be a non-negative integer")
    if bool(((p < 0) | (p > 1) | p.isnan()).any()):
        raise RuntimeError("binomial: prob must be in [0, 1]")
    shape = tuple(n.shape)
    kw = _kw(n, generator)
    flip = p > 0.5
    pm = _C.where(flip, 1 - p, p)
    big = n * pm >= 10
    # the two methods see parameters kept valid where the other one is used
    psafe = pm.clamp(min=1e-300)
    out = _binomial_inversion(_C.where(big, _C.zeros_like(n), n), psafe, shape, kw)
    if bool(big.any()):
        nb = _C.where(big, n, _C.full(shape, 40.0, **{"dtype": n.dtype, "device": n.device}))
        pb = _C.where(big, psafe, _C.full(shape, 0.5, **{"dtype": n.dtype, "device": n.device}))
        out = _C.where(big, _binomial_btrs(nb, pb, shape, kw), out)
    out = _C.where(pm == 0, _C.zeros_like(out), out)
    out = _C.where(flip, n - out, out)
    return out.to(prob.dtype)


