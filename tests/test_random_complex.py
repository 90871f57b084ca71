"""Random complex tensors, as torch makes them: randn / randn_like /
normal_(mean, std) draw each part from N(mean, std^2 / 2) (a variance of
std^2 in all), rand / rand_like / uniform_(a, b) each part from U(a, b);
the fill is the real fill of the 2n parts (real, imag, ...), so one seed
gives the same numbers on the CPU and the GPU. The other fills refuse
complex tensors."""
import numpy as np
import pytest

import pycuda_sem as torch
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
N = 200000
# six standard errors of a mean (or a std) of N draws of std 1; a bound
# for draws of std s is s * TOL
TOL = 6 / np.sqrt(N)


def _parts(z):
    a = z.cpu().numpy()
    return a.real.astype(np.float64), a.imag.astype(np.float64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_randn_and_normal_parts(device, dtype):
    torch.manual_seed(0)
    z = torch.randn(N, dtype=getattr(torch, dtype), device=device)
    assert z.dtype == getattr(torch, dtype) and z.device.type == device
    for p in _parts(z):
        assert abs(p.mean()) < TOL and abs(p.std() - np.sqrt(0.5)) < TOL
    re, im = _parts(z)
    assert abs(np.corrcoef(re, im)[0, 1]) < TOL  # the parts are independent draws
    n = torch.empty(N, dtype=getattr(torch, dtype), device=device).normal_(1.5, 2.0)
    for p in _parts(n):
        assert abs(p.mean() - 1.5) < np.sqrt(2) * TOL and abs(p.std() - np.sqrt(2)) < np.sqrt(2) * TOL
    assert torch.randn_like(z[:3]).dtype == z.dtype


@pytest.mark.parametrize("device", DEVICES)
def test_rand_and_uniform_parts(device):
    torch.manual_seed(1)
    u = torch.rand(N, dtype=torch.complex64, device=device)
    for p in _parts(u):
        assert p.min() >= 0 and p.max() < 1 and abs(p.mean() - 0.5) < TOL
    v = torch.empty(N, dtype=torch.complex128, device=device).uniform_(-3, 1)
    for p in _parts(v):
        assert p.min() >= -3 and p.max() < 1 and abs(p.mean() + 1) < 4 / np.sqrt(12) * TOL
    assert torch.rand_like(u[:2]).dtype == torch.complex64


@pytest.mark.parametrize("device", DEVICES)
def test_complex_draws_repeat_and_views(device):
    g = torch.Generator(device=device).manual_seed(3)
    a = torch.randn(5, 4, dtype=torch.complex64, device=device, generator=g)
    g.manual_seed(3)
    assert torch.equal(a, torch.randn(5, 4, dtype=torch.complex64, device=device, generator=g))
    # a strided view is filled through a contiguous temporary; the rest stays
    base = torch.zeros(6, 4, dtype=torch.complex64, device=device)
    base.t()[:, ::2].normal_()
    arr = base.cpu().numpy()
    assert np.all(arr[1::2] == 0) and np.all(arr[::2] != 0)


@pytest.mark.parametrize("device", DEVICES)
def test_same_numbers_on_cpu_and_gpu_part_by_part(device):
    # the parts are the real fill of 2n values: the real view of a complex
    # draw equals a float draw of twice the length from the same state
    g = torch.Generator(device=device).manual_seed(9)
    z = torch.rand(7, dtype=torch.complex64, device=device, generator=g)
    g.manual_seed(9)
    f = torch.rand(14, device=device, generator=g)
    np.testing.assert_array_equal(torch.view_as_real(z).reshape(-1).cpu().numpy(), f.cpu().numpy())


def test_other_fills_refuse_complex():
    z = torch.empty(3, dtype=torch.complex64)
    for name in ("bernoulli_", "random_"):
        with pytest.raises(NotImplementedError, match="complex"):
            getattr(z, name)()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "int64", "bool", "uint8"])
def test_continuous_fills_refuse_other_dtypes_in_torch_words(device, dtype):
    x = torch.zeros(3, dtype=getattr(torch, dtype), device=device)
    legacy = {"complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long", "bool": "Bool",
              "uint8": "Byte"}[dtype]
    cpp = {"complex64": "c10::complex<float>", "complex128": "c10::complex<double>", "int64": "long int",
           "bool": "bool", "uint8": "unsigned char"}[dtype]
    with pytest.raises(RuntimeError, match="Exponential distribution is a continuous probability distribution. "
                                           "dtype must be a floating point but you specified " + legacy):
        x.exponential_()
    with pytest.raises(NotImplementedError, match='"log_normal_%s" not implemented for \'%s\''
                       % (device, legacy)):
        x.log_normal_()
    with pytest.raises(RuntimeError, match="Cauchy distribution is a continuous probability distribution. "
                                           "dtype must be a floating point but you specified " + cpp.replace("<", ".")
                                           .replace(">", ".")):
        x.cauchy_()
    if dtype.startswith("complex") or dtype == "bool":
        with pytest.raises(NotImplementedError, match='"geometric_%s" not implemented' % device):
            x.geometric_(0.5)
    else:
        assert (x.geometric_(0.5) >= 1).all()
    if real_torch is not None and device == "cpu":
        t = real_torch.zeros(3, dtype=getattr(real_torch, dtype))
        with pytest.raises(RuntimeError, match="Exponential distribution"):
            t.exponential_()
        with pytest.raises(NotImplementedError, match="log_normal_cpu"):
            t.log_normal_()


def test_torch_draws_complex_the_same_way():
    if real_torch is None:
        pytest.skip("torch is not installed")
    real_torch.manual_seed(0)
    z = real_torch.randn(N, dtype=real_torch.complex64)
    assert abs(float(z.real.std()) - np.sqrt(0.5)) < TOL and abs(float(z.imag.std()) - np.sqrt(0.5)) < TOL
    n = real_torch.empty(N, dtype=real_torch.complex64).normal_(1.5, 2.0)
    assert abs(float(n.imag.mean()) - 1.5) < np.sqrt(2) * TOL and abs(float(n.real.std()) - np.sqrt(2)) < np.sqrt(2) * TOL
