"""pycuda_sem.distributions.transforms added last (ReshapeTransform,
SoftplusTransform, StickBreakingTransform, CorrCholeskyTransform,
LowerCholeskyTransform, PositiveDefiniteTransform, CatTransform,
StackTransform, CumulativeDistributionTransform) and the biject_to /
transform_to registries: forward maps against NumPy formulas, the inverse by
round trips, log_abs_det_jacobian against the log-determinant of a central
finite-difference Jacobian (float64), shapes, domains and codomains, and all
of it against torch where it imports."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import distributions as D
from pycuda_sem.distributions import biject_to, constraints, transform_to, transforms as Tr

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")


def npy(t):
    return t.detach().cpu().double().numpy()


def T(a, device="cpu"):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, device=device)


_rng = np.random.default_rng(17)


def _stick_np(x):
    k1 = x.shape[-1]
    z = 1 / (1 + np.exp(-(x - np.log(np.arange(k1, 0, -1)))))
    left = np.cumprod(1 - z, -1)
    return np.concatenate([z, np.ones(x.shape[:-1] + (1,))], -1) * np.concatenate(
        [np.ones(x.shape[:-1] + (1,)), left], -1)


def _corr_cholesky_np(x, d):
    """Row by row: partial correlations tanh(x), each row a unit vector by signed stick-breaking."""
    r = np.tanh(x)
    out = np.zeros(x.shape[:-1] + (d, d))
    k = 0
    for i in range(d):
        left = np.ones(x.shape[:-1])
        for j in range(i):
            out[..., i, j] = r[..., k] * np.sqrt(left)
            left = left - out[..., i, j] ** 2
            k += 1
        out[..., i, i] = np.sqrt(left)
    return out


def _square_jacobian_logdet(f, x, device, h=1e-6):
    """log|det J| of f (a map from (B, n) onto (B, n), flattened) by central differences."""
    n = x.shape[-1]
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        cols.append((npy(f(T(x + e, device))) - npy(f(T(x - e, device)))) / (2 * h))
    J = np.stack(cols, -1)
    return np.linalg.slogdet(J)[1]


# name: (transform, input, numpy forward or None)
def _cases(device="cpu"):
    x5 = _rng.standard_normal((3, 5))
    cdf_base = D.Normal(T(0.3, device), T(1.5, device))
    return {
        "Reshape": (Tr.ReshapeTransform((2, 3), (3, 2)), _rng.standard_normal((4, 2, 3)),
                    lambda x: x.reshape(4, 3, 2)),
        "Softplus": (Tr.SoftplusTransform(), np.array([-30.0, -2.0, 0.3, 5.0, 25.0]), lambda x: np.logaddexp(0, x)),
        "StickBreaking": (Tr.StickBreakingTransform(), x5, _stick_np),
        "CorrCholesky": (Tr.CorrCholeskyTransform(), _rng.standard_normal((3, 6)) * 0.8,
                         lambda x: _corr_cholesky_np(x, 4)),
        "LowerCholesky": (Tr.LowerCholeskyTransform(), _rng.standard_normal((2, 3, 3)),
                          lambda x: np.tril(x, -1) + np.stack([np.diag(np.exp(np.diagonal(m))) for m in x])),
        "PositiveDefinite": (Tr.PositiveDefiniteTransform(), _rng.standard_normal((2, 3, 3)), None),
        "Cat": (Tr.CatTransform([Tr.ExpTransform(), Tr.identity_transform, Tr.AffineTransform(1.0, -2.0)],
                                dim=-1, lengths=[2, 1, 2]), x5,
                lambda x: np.concatenate([np.exp(x[:, :2]), x[:, 2:3], 1 - 2 * x[:, 3:]], -1)),
        "Stack": (Tr.StackTransform([Tr.ExpTransform(), Tr.SoftplusTransform(), Tr.SigmoidTransform()], dim=0),
                  _rng.standard_normal((3, 4)),
                  lambda x: np.stack([np.exp(x[0]), np.logaddexp(0, x[1]), 1 / (1 + np.exp(-x[2]))])),
        "CDF": (Tr.CumulativeDistributionTransform(cdf_base), _rng.standard_normal(6),
                lambda x: 0.5 * (1 + np.vectorize(math.erf)((x - 0.3) / (1.5 * math.sqrt(2))))),
    }


NAMES = sorted(_cases())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_forward_inverse_logdet(name, device):
    t, x, fwd = _cases(device)[name]
    xt = T(x, device)
    y = t(xt)
    if fwd is not None:
        np.testing.assert_allclose(npy(y), fwd(x), rtol=1e-10, atol=1e-12)
    if name == "PositiveDefinite":
        Lx = np.tril(x, -1) + np.stack([np.diag(np.exp(np.diagonal(m))) for m in x])
        np.testing.assert_allclose(npy(y), Lx @ np.swapaxes(Lx, -1, -2), rtol=1e-10)
    assert bool(t.codomain.check(y).all())
    # bijectivity round trip (LowerCholesky/PositiveDefinite read only the lower triangle of x)
    back = np.tril(x) if name in ("LowerCholesky", "PositiveDefinite") else x
    np.testing.assert_allclose(npy(t.inv(y)), back, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(npy(t(t.inv(y))), npy(y), rtol=1e-9, atol=1e-12)
    if name in ("LowerCholesky", "PositiveDefinite"):
        with pytest.raises(NotImplementedError):
            t.log_abs_det_jacobian(xt, y)
        return
    ladj = npy(t.log_abs_det_jacobian(xt, y))
    if name == "Reshape":
        np.testing.assert_array_equal(ladj, np.zeros(4))
    elif name == "StickBreaking":  # the map onto the first K - 1 simplex coordinates
        want = np.array([_square_jacobian_logdet(lambda v: t(v)[..., :-1], x[b], device) for b in range(3)])
        np.testing.assert_allclose(ladj, want, rtol=1e-6)
    elif name == "CorrCholesky":  # the map onto the strict lower triangle
        idx = np.tril_indices(4, -1)
        want = np.array([_square_jacobian_logdet(lambda v: t(v)[..., idx[0], idx[1]], x[b], device)
                         for b in range(3)])
        np.testing.assert_allclose(ladj, want, rtol=1e-6)
    else:  # elementwise maps: log|f'(x)| entry by entry
        h = 1e-6
        want = np.log(np.abs((npy(t(T(x + h, device))) - npy(t(T(x - h, device)))) / (2 * h)))
        np.testing.assert_allclose(ladj, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(npy(t.inv.log_abs_det_jacobian(y, xt)), -ladj, rtol=1e-12)
    if real_torch is not None:
        rt = _torch_case(name)
        rx = real_torch.tensor(x)
        ry = rt(rx)
        np.testing.assert_allclose(npy(y), ry.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(npy(t.inv(y)), rt.inv(ry).numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ladj, rt.log_abs_det_jacobian(rx, ry).numpy(), rtol=1e-10, atol=1e-12)


def _torch_case(name):
    rt = real_torch.distributions.transforms
    return {
        "Reshape": lambda: rt.ReshapeTransform((2, 3), (3, 2)), "Softplus": rt.SoftplusTransform,
        "StickBreaking": rt.StickBreakingTransform, "CorrCholesky": rt.CorrCholeskyTransform,
        "LowerCholesky": rt.LowerCholeskyTransform, "PositiveDefinite": rt.PositiveDefiniteTransform,
        "Cat": lambda: rt.CatTransform([rt.ExpTransform(), rt.identity_transform, rt.AffineTransform(1.0, -2.0)],
                                       dim=-1, lengths=[2, 1, 2]),
        "Stack": lambda: rt.StackTransform([rt.ExpTransform(), rt.SoftplusTransform(), rt.SigmoidTransform()], dim=0),
        "CDF": lambda: rt.CumulativeDistributionTransform(
            real_torch.distributions.Normal(real_torch.tensor(0.3, dtype=real_torch.float64),
                                            real_torch.tensor(1.5, dtype=real_torch.float64))),
    }[name]()


@pytest.mark.parametrize("name", NAMES)
def test_attributes_match_torch(name):
    t = _cases()[name][0]
    assert t.inv.inv is t and t == t
    c = t.with_cache(1)
    x = T(_cases()[name][1])
    y = c(x)
    assert c(x) is y and c.inv(y) is x  # cache_size=1 remembers the last pair
    if real_torch is None:
        return
    r = _torch_case(name)
    for attr in ("domain", "codomain"):
        ours = repr(getattr(t, attr)).replace("pycuda_sem", "torch")
        assert ours == repr(getattr(r, attr)), (attr, ours)
    assert t.bijective == r.bijective and repr(t) == repr(r)
    if t.domain.event_dim == t.codomain.event_dim:
        assert t.event_dim == r.event_dim
    for shape in [(4, 2, 3), (3, 5), (2, 3, 3), (3, 6), (5,), (3, 4)]:
        for fn in ("forward_shape", "inverse_shape"):
            try:
                want = tuple(getattr(r, fn)(real_torch.Size(shape)))
            except ValueError:
                with pytest.raises(ValueError):
                    getattr(t, fn)(shape)
                continue
            assert tuple(getattr(t, fn)(shape)) == want, (fn, shape)


def test_transform_errors_and_details():
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
        Tr.ReshapeTransform((2, 3), (4,))
    with pytest.raises(ValueError, match="Shape mismatch"):
        Tr.ReshapeTransform((2, 3), (6,)).forward_shape((4, 3, 2))
    with pytest.raises(ValueError, match="Input is not a flattened lower-diagonal number"):
        Tr.CorrCholeskyTransform().forward_shape((5,))
    with pytest.raises(ValueError, match="Input is not square"):
        Tr.CorrCholeskyTransform().inverse_shape((3, 4))
    with pytest.raises(AssertionError, match="lengths"):
        Tr.CatTransform([Tr.ExpTransform()], lengths=[1, 2])
    with pytest.raises(AssertionError, match="must equal length 3"):
        Tr.CatTransform([Tr.ExpTransform(), Tr.ExpTransform()], lengths=[1, 2])(torch.zeros(4))
    with pytest.raises(AssertionError, match="Transform instances"):
        Tr.StackTransform([Tr.ExpTransform(), "exp"])
    with pytest.raises(AssertionError, match=r"len\(transforms\) 2"):
        Tr.StackTransform([Tr.ExpTransform(), Tr.ExpTransform()])(torch.zeros(3, 2))
    # Cat along a batch dim: the per-block Jacobians are concatenated there
    cat = Tr.CatTransform([Tr.ExpTransform(), Tr.AffineTransform(0.0, 3.0)], dim=0, lengths=[2, 1])
    x = T([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    np.testing.assert_allclose(npy(cat.log_abs_det_jacobian(x, cat(x))), [[0.1, 0.2], [0.3, 0.4],
                                                                           [math.log(3)] * 2], rtol=1e-12)
    # Softplus stays exact in both tails
    sp = Tr.SoftplusTransform()
    np.testing.assert_allclose(npy(sp.inv(sp(T([-30.0, 40.0])))), [-30.0, 40.0], rtol=1e-9)
    # CorrCholesky draws pushed through a TransformedDistribution have unit rows, and its log_prob matches torch
    base = D.Independent(D.Normal(T(np.zeros(3)), T(np.ones(3))), 1)
    td = D.TransformedDistribution(base, Tr.CorrCholeskyTransform())
    assert td.event_shape == (3, 3) and repr(td.support) == "CorrCholesky()"
    L = td.sample((5,))
    np.testing.assert_allclose(np.linalg.norm(npy(L), axis=-1), 1.0, rtol=1e-12)
    if real_torch is not None:
        rtd = real_torch.distributions.TransformedDistribution(
            real_torch.distributions.Independent(real_torch.distributions.Normal(
                real_torch.zeros(3, dtype=real_torch.float64), real_torch.ones(3, dtype=real_torch.float64)), 1),
            real_torch.distributions.transforms.CorrCholeskyTransform())
        np.testing.assert_allclose(npy(td.log_prob(L)), rtd.log_prob(real_torch.tensor(npy(L))).numpy(), rtol=1e-10)


CONSTRAINTS = [("real", lambda c: c.real), ("positive", lambda c: c.positive), ("nonnegative", lambda c: c.nonnegative),
               ("greater_than", lambda c: c.greater_than(2.0)), ("greater_than_eq", lambda c: c.greater_than_eq(-1.0)),
               ("less_than", lambda c: c.less_than(1.5)), ("unit_interval", lambda c: c.unit_interval),
               ("interval", lambda c: c.interval(-1.0, 3.0)), ("half_open", lambda c: c.half_open_interval(0.0, 2.0)),
               ("simplex", lambda c: c.simplex), ("real_vector", lambda c: c.real_vector),
               ("independent", lambda c: c.independent(c.positive, 1)), ("corr_cholesky", lambda c: c.corr_cholesky),
               ("lower_cholesky", lambda c: c.lower_cholesky), ("positive_definite", lambda c: c.positive_definite),
               ("positive_semidefinite", lambda c: c.positive_semidefinite),
               ("cat", lambda c: c.cat([c.positive, c.real], -1, [2, 2])),
               ("stack", lambda c: c.stack([c.positive, c.unit_interval], 0))]
SHAPES = {"simplex": (3, 4), "corr_cholesky": (3, 6), "lower_cholesky": (2, 3, 3), "positive_definite": (2, 3, 3),
          "positive_semidefinite": (2, 3, 3), "cat": (3, 4), "stack": (2, 5)}


def _flat(r):
    return " ".join(repr(r).split())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("cname,make", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraint_registries(cname, make, registry, device):
    reg = {"biject_to": biject_to, "transform_to": transform_to}[registry]
    c = make(constraints)
    rtorch = getattr(real_torch.distributions, registry) if real_torch is not None else None
    try:
        t = reg(c)
    except NotImplementedError as e:
        assert "Cannot transform" in str(e) and registry == "biject_to"
        if rtorch is not None:
            with pytest.raises(NotImplementedError, match="Cannot transform"):
                rtorch(make(real_torch.distributions.constraints))
        return
    x = T(_rng.standard_normal(SHAPES.get(cname, (7,))), device)
    y = t(x)
    assert bool(c.check(y).all()), (cname, registry)  # onto the constraint
    if registry == "biject_to" or t.bijective:
        np.testing.assert_allclose(npy(t.inv(y)), npy(x), rtol=1e-7, atol=1e-8)
    if rtorch is not None:
        r = rtorch(make(real_torch.distributions.constraints))
        assert _flat(t) == _flat(r)
        ry = r(real_torch.tensor(npy(x)))
        np.testing.assert_allclose(npy(y), ry.numpy(), rtol=1e-10, atol=1e-12)
        if registry == "biject_to":
            np.testing.assert_allclose(npy(t.log_abs_det_jacobian(x, y)),
                                       r.log_abs_det_jacobian(real_torch.tensor(npy(x)), ry).numpy(), rtol=1e-10)


def test_registry_api():
    assert isinstance(transform_to(constraints.unit_interval), Tr.SigmoidTransform)
    assert isinstance(biject_to(constraints.simplex), Tr.StickBreakingTransform)
    assert isinstance(transform_to(constraints.simplex), Tr.SoftmaxTransform)
    assert biject_to(constraints.real) is Tr.identity_transform
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
        biject_to(constraints.lower_cholesky)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        transform_to(constraints.boolean)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        biject_to.register(int, lambda c: Tr.ExpTransform())
    # a registry of one's own, used as a decorator, keyed by the constraint's class
    reg = D.constraint_registry.ConstraintRegistry()

    @reg.register(constraints.positive)
    def _softplus(c):
        return Tr.SoftplusTransform()
    assert isinstance(reg(constraints.greater_than(3.0)), Tr.SoftplusTransform)
    # a tensor-bounded interval: sigmoid, then an affine map per entry
    lo, hi = T([0.0, -2.0]), T([1.0, 5.0])
    t = transform_to(constraints.interval(lo, hi))
    y = t(T([0.3, -0.4]))
    np.testing.assert_allclose(npy(y), npy(lo) + (npy(hi) - npy(lo)) / (1 + np.exp(-np.array([0.3, -0.4]))),
                               rtol=1e-12)
    # unconstrained optimisation of a scale: the gradient reaches the free parameter
    u = T([0.2]).requires_grad_(True)
    scale = transform_to(D.Normal.arg_constraints["scale"])(u)
    lp = D.Normal(T([0.0]), scale).log_prob(T([1.0])).sum()
    (g,) = torch.autograd.grad(lp, u)
    s = math.exp(0.2)
    assert npy(g)[0] == pytest.approx((-1 / s + 1 / s ** 3) * s, rel=1e-9)
