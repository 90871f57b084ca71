"""Sampling ops composed from the Philox uniform and normal fills:
bernoulli (per-entry probabilities), multinomial (with replacement by a
binary search in the running sums, without by exponential keys, the
smallest k of -log(u) / p, which picks in the order sequential sampling
would) and normal (tensor or number mean and std).

Every draw goes through rand/randn, so generator= and manual_seed behave as
for the fills, on the CPU and on CUDA alike.
"""
from . import _C
from ._math import broadcast_shapes


def _t(fname, x):
    if not isinstance(x, _C.Tensor):
        raise TypeError("%s(): argument 'input' must be Tensor, not %s" % (fname, type(x).__name__))
    return x


def _uniform(shape, like, generator, dtype=None):
    kw = {"dtype": dtype or like.dtype, "device": like.device}
    if generator is not None:
        kw["generator"] = generator
    return _C.rand(tuple(shape), **kw)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 draws, 1 with probability input (or p when given), in input's dtype."""
    x = _t("bernoulli", input)
    if not x.is_floating_point():
        raise NotImplementedError("bernoulli: probabilities must be a floating tensor, got %s"
                                  % str(x.dtype).split(".")[-1])
    prob = x if p is None else p
    if isinstance(prob, _C.Tensor):
        bad = (prob < 0) | (prob > 1) | prob.isnan()
        if bool(bad.any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    elif not 0 <= prob <= 1:
        raise RuntimeError("bernoulli_ expects p to be in [0, 1], but got p=%s" % prob)
    r = (_uniform(x.shape, x, generator) < prob).to(x.dtype)
    return r if out is None else out.copy_(r)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """num_samples category indices a row of input's non-negative weights
    (1-D: one row), int64."""
    w = _t("multinomial", input)
    if w.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not w.is_floating_point():
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: %s"
                           % str(w.dtype).split(".")[-1].capitalize())
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = w.size(-1)
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = w.reshape(-1, n) if w.dim() == 2 else w.reshape(1, n)
    wf = rows.detach().double()
    if bool(((wf < 0) | wf.isnan() | wf.isinf()).any()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = wf.sum(1, keepdim=True)
    if bool((total <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement:
        cdf = wf.cumsum(1)
        u = _uniform((rows.size(0), num_samples), wf, generator) * total
        idx = _C.searchsorted(cdf, u, right=True).clamp(max=n - 1)
    else:
        if bool(((wf > 0).sum(1) < num_samples).any()):
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough "
                               "non-negative category to sample)")
        u = _uniform((rows.size(0), n), wf, generator)
        keys = -(1 - u).log() / wf  # exponential(1) / w; inf where w is 0
        idx = keys.topk(num_samples, 1, largest=False)[1]
    idx = idx.reshape(num_samples) if w.dim() == 1 else idx
    return idx if out is None else out.copy_(idx)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Normal draws: mean and std tensors (broadcast) or numbers (then size
    is required), mean + std * randn."""
    mt, st = isinstance(mean, _C.Tensor), isinstance(std, _C.Tensor)
    if st and bool((std < 0).any()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not st and std < 0:
        raise RuntimeError("normal expects std >= 0.0, but found std %s" % std)
    if mt or st:
        ref = mean if mt else std
        shape = broadcast_shapes(tuple(mean.shape) if mt else (), tuple(std.shape) if st else ())
        dt = ref.dtype if not (mt and st) else _C.promote_types(mean.dtype, std.dtype)
        if not dt.is_floating_point:
            raise RuntimeError("normal expects floating mean and std")
        kw = {"dtype": dt, "device": ref.device}
    else:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with a number "
                            "mean and std, size is required")
        shape = (size,) if isinstance(size, int) else tuple(size)
        kw = {"dtype": dtype or _C.get_default_dtype(), "device": device if device is not None else "cpu"}
    if generator is not None:
        kw["generator"] = generator
    r = _C.randn(tuple(shape), **kw) * std + mean
    if requires_grad:
        r.requires_grad_(True)
    return r if out is None else out.copy_(r)
