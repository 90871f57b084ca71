"""pycuda_sem.special against float64 references (math.erf/erfc and the
normal distribution's definitions) and against torch.special where torch
imports. Also
set_num_threads and friends, and cuda.is_bf16_supported."""
import math

import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def npy(t):
    return t.detach().cpu().double().numpy()


def _ndtr(x):
    return 0.5 * _erfc(-x / math.sqrt(2))


@pytest.mark.parametrize("device", DEVICES)
def test_normal_distribution_functions(device):
    x = np.linspace(-30, 9, 157)
    t = torch.tensor(x, dtype=torch.float64, device=device)
    np.testing.assert_allclose(npy(torch.special.ndtr(t)), _ndtr(x), rtol=1e-12, atol=0)
    with np.errstate(divide="ignore"):
        want_log = np.where(x > 0, np.log1p(-_ndtr(-x)), np.log(_ndtr(x)))
    np.testing.assert_allclose(npy(torch.special.log_ndtr(t)), want_log, rtol=1e-9)
    p = np.linspace(0.001, 0.999, 41)
    q = torch.special.ndtri(torch.tensor(p, dtype=torch.float64, device=device))
    np.testing.assert_allclose(_ndtr(npy(q)), p, rtol=1e-12)
    deep = torch.special.log_ndtr(torch.tensor([-40.0, -100.0], device=device))  # float32
    np.testing.assert_allclose(npy(deep), [-804.6084420137538, -5005.524208057], rtol=1e-6)
    if real_torch is not None:
        r = real_torch.special.log_ndtr(real_torch.tensor(x))
        np.testing.assert_allclose(npy(torch.special.log_ndtr(t)), r.numpy(), rtol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
def test_aliases_entr_and_xlog1py(device):
    x = torch.tensor([0.0, 0.25, 1.0, 3.0, -1.0, float("nan")], device=device)
    np.testing.assert_allclose(npy(torch.special.expit(x))[:5], 1 / (1 + np.exp(-npy(x)[:5])), rtol=1e-6)
    e = npy(torch.special.entr(x))
    np.testing.assert_allclose(e[:4], [0.0, -0.25 * math.log(0.25), 0.0, -3 * math.log(3.0)], rtol=1e-6,
                               atol=1e-7)
    assert e[4] == -np.inf and np.isnan(e[5])
    y = torch.tensor([float("nan"), 0.5, -0.5, 2.0], device=device)
    z = torch.tensor([0.0, 1.0, 2.0, 0.0], device=device)
    r = npy(torch.special.xlog1py(z, y))
    assert np.isnan(r[0]) and r[3] == 0.0
    np.testing.assert_allclose(r[1:3], [math.log1p(0.5), 2 * math.log1p(-0.5)], rtol=1e-6)
    for name in ("erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "logit", "sinc", "round"):
        assert getattr(torch.special, name) is not None
    np.testing.assert_allclose(npy(torch.special.softmax(x[:4], 0)), npy(torch.softmax(x[:4], 0)))


def test_special_i0_and_erfcx_are_wired():
    assert torch.special.i0 is torch.i0  # special.i0 is torch.i0 (Cephes' series, _math_more.py)
    np.testing.assert_allclose(npy(torch.special.i0(torch.tensor([0.5, -3.0], dtype=torch.float64))),
                               np.i0([0.5, -3.0]), rtol=1e-14)
    x = np.array([-3.0, 0.0, 0.5, 4.0])
    np.testing.assert_allclose(npy(torch.special.erfcx(torch.tensor(x, dtype=torch.float64))),
                               np.exp(x * x) * _erfc(x), rtol=1e-14)


def test_thread_counts_are_kept_and_checked():
    n = torch.get_num_threads()
    assert n >= 1 and torch.get_num_interop_threads() >= 1
    try:
        torch.set_num_threads(3)
        assert torch.get_num_threads() == 3
        with pytest.raises(RuntimeError, match="positive"):
            torch.set_num_threads(0)
        with pytest.raises(TypeError):
            torch.set_num_threads(2.5)
    finally:
        torch.set_num_threads(n)


def test_bf16_support_follows_the_device():
    if not torch.cuda.is_available():
        assert torch.cuda.is_bf16_supported() is False and torch.cuda.is_tf32_supported() is False
    else:
        major = torch.cuda.get_device_capability()[0]
        assert torch.cuda.is_bf16_supported() is True or major < 8
        assert torch.cuda.is_bf16_supported(including_emulation=False) is (major >= 8)
        assert torch.cuda.is_tf32_supported() is (major >= 8)


EULER = 0.5772156649015329


@pytest.mark.parametrize("device", DEVICES)
def test_gamma_family_at_known_points_and_identities(device):
    x = torch.tensor([1.0, 0.5, 2.0, 5.0, 10.5, 123.25, -0.5, -2.25], dtype=torch.float64, device=device)
    xs = npy(x)
    np.testing.assert_allclose(npy(torch.lgamma(x)), [math.lgamma(v) for v in xs], rtol=1e-13, atol=1e-14)
    psi = npy(torch.special.digamma(x))
    np.testing.assert_allclose(psi[:4], [-EULER, -EULER - 2 * math.log(2), 1 - EULER, 1 + 1 / 2 + 1 / 3 + 1 / 4 - EULER],
                               rtol=1e-13)
    # recurrence and reflection: psi(x + 1) = psi(x) + 1/x, psi(1 - x) - psi(x) = pi cot(pi x)
    np.testing.assert_allclose(npy(torch.digamma(x + 1)), psi + 1 / xs, rtol=1e-12)
    np.testing.assert_allclose(npy(torch.digamma(1 - x[6:])) - psi[6:], math.pi / np.tan(math.pi * xs[6:]), rtol=1e-11,
                               atol=1e-12)
    tri = npy(torch.special.polygamma(1, x))
    np.testing.assert_allclose(tri[:4], [math.pi ** 2 / 6, math.pi ** 2 / 2, math.pi ** 2 / 6 - 1,
                                         math.pi ** 2 / 6 - (1 + 1 / 4 + 1 / 9 + 1 / 16)], rtol=1e-12)
    np.testing.assert_allclose(npy(x.polygamma(1) - (x + 1).polygamma(1)), 1 / xs ** 2, rtol=1e-11)
    poles = torch.tensor([0.0, -0.0, -1.0, -3.0], device=device)
    assert npy(poles.lgamma()).tolist() == [math.inf] * 4
    d = npy(poles.digamma())
    assert d[0] == -math.inf and d[1] == math.inf and np.isnan(d[2:]).all()
    np.testing.assert_allclose(npy(torch.mvlgamma(x[2:5], 2)),
                               [math.lgamma(v) + math.lgamma(v - 0.5) + 0.5 * math.log(math.pi) for v in xs[2:5]],
                               rtol=1e-13)
    if real_torch is not None:
        r = real_torch.tensor(xs)
        np.testing.assert_allclose(psi, real_torch.digamma(r).numpy(), rtol=1e-12)
        np.testing.assert_allclose(tri, real_torch.polygamma(1, r).numpy(), rtol=1e-8)  # torch: ~5e-10


def test_gamma_family_gradients_and_limits():
    x = torch.tensor([0.7, 1.9, 4.2], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(torch.lgamma, (x,)) and torch.autograd.gradcheck(torch.digamma, (x,))
    # polygamma(2, x) = -2 zeta(3, x); at 1 it is -2 zeta(3) (Apery's constant)
    np.testing.assert_allclose(npy(torch.special.polygamma(2, torch.tensor([1.0], dtype=torch.float64))),
                               [-2 * 1.2020569031595942], rtol=1e-14)
    with pytest.raises(NotImplementedError, match="_trigamma"):  # polygamma(2, x) has no kernel
        torch.autograd.grad(torch.digamma(x).sum(), x, create_graph=True)[0].sum().backward()
    with pytest.raises(RuntimeError, match="greater than"):
        torch.mvlgamma(torch.tensor([0.2]), 2)


def test_default_device_is_the_cpu():
    # (setting another one: tests/test_default_device.py)
    assert torch.get_default_device() == torch.device("cpu")
    torch.set_default_device("cpu")
    torch.set_default_device(None)
    assert torch.zeros(1).device.type == "cpu"
