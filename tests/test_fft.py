"""pycuda_sem.fft against numpy.fft (complex128 reference), on the CPU and on
the GPU (cuFFT), and the cuFFT plan cache of backends.cuda.

Tolerance: max |ours - ref| <= tol * max |ref|, tol 1e-5 for complex64 /
float32 results (float32 FFTs of these sizes err ~1e-7 relative), 1e-12 for
complex128 / float64. Inverse Hermitian transforms (irfft, hfft) are fed
Hermitian data (the rfft of a real signal) where cuFFT and NumPy must agree.
"""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda
from torch_oracle import _torch as real_torch

rng = np.random.default_rng(3)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def real(shape):
    return rng.standard_normal(shape)


def cplx(shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def tens(v, device, double=False):
    if np.iscomplexobj(v):
        t = torch.from_numpy(np.ascontiguousarray(v.astype(np.complex128 if double else np.complex64)))
    else:
        t = torch.from_numpy(np.ascontiguousarray(v.astype(np.float64 if double else np.float32)))
    return t.to(device)


def close(out, ref, double=False):
    o = out.cpu().numpy()
    assert o.shape == ref.shape, (o.shape, ref.shape)
    tol = 1e-12 if double else 1e-5
    assert np.abs(o - ref).max() <= tol * max(np.abs(ref).max(), 1.0)


NORMS = [None, "backward", "forward", "ortho"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("double", [False, True])
def test_one_dim(device, norm, double):
    x, z = real((4, 30)), cplx((4, 30))
    h = np.fft.rfft(real((4, 30)), axis=-1)  # Hermitian half-spectrum, 16 long
    X, Z, H = tens(x, device, double), tens(z, device, double), tens(h, device, double)
    close(torch.fft.fft(Z, norm=norm), np.fft.fft(z, norm=norm), double)
    close(torch.fft.fft(X, norm=norm), np.fft.fft(x, norm=norm), double)
    close(torch.fft.ifft(Z, norm=norm), np.fft.ifft(z, norm=norm), double)
    close(torch.fft.rfft(X, norm=norm), np.fft.rfft(x, norm=norm), double)
    close(torch.fft.irfft(H, norm=norm), np.fft.irfft(h, norm=norm), double)
    close(torch.fft.irfft(H, n=30, norm=norm), np.fft.irfft(h, n=30, norm=norm), double)
    close(torch.fft.hfft(H, norm=norm), np.fft.hfft(h, norm=norm), double)
    close(torch.fft.ihfft(X, norm=norm), np.fft.ihfft(x, norm=norm), double)
    assert torch.fft.fft(X).dtype == (torch.complex128 if double else torch.complex64)
    assert torch.fft.irfft(H).dtype == (torch.float64 if double else torch.float32)


@pytest.mark.parametrize("device", DEVICES)
def test_n_dim_and_padding(device):
    z = cplx((6, 5, 8))
    Z = tens(z, device)
    close(torch.fft.fft(Z, n=12, dim=0), np.fft.fft(z, n=12, axis=0))     # pad, dim moved
    close(torch.fft.fft(Z, n=3, dim=1), np.fft.fft(z, n=3, axis=1))       # trim
    close(torch.fft.fft2(Z), np.fft.fft2(z))
    close(torch.fft.ifft2(Z, s=(4, 10)), np.fft.ifft2(z, s=(4, 10)))
    close(torch.fft.fftn(Z), np.fft.fftn(z))
    close(torch.fft.fftn(Z, dim=(2, 0)), np.fft.fftn(z, axes=(2, 0)))
    close(torch.fft.ifftn(Z, s=(7, 3), norm="ortho"), np.fft.ifftn(z, s=(7, 3), axes=(1, 2), norm="ortho"))
    x = real((6, 5, 8))
    X = tens(x, device)
    close(torch.fft.rfft2(X), np.fft.rfft2(x))
    close(torch.fft.rfftn(X, dim=(0, 1)), np.fft.rfftn(x, axes=(0, 1)))
    h = np.fft.rfftn(real((6, 5, 8)))
    H = tens(h, device)
    close(torch.fft.irfftn(H), np.fft.irfftn(h))
    close(torch.fft.irfft2(tens(np.fft.rfft2(x), device)), np.fft.irfft2(np.fft.rfft2(x)))
    # non-contiguous input
    close(torch.fft.fft(Z.permute(2, 0, 1)), np.fft.fft(z.transpose(2, 0, 1)))


@pytest.mark.parametrize("device", DEVICES)
def test_integer_input_promotes(device):
    v = np.arange(16)
    t = torch.arange(16).to(device)
    out = torch.fft.fft(t)
    assert out.dtype == torch.complex64
    close(out, np.fft.fft(v))


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    Z = tens(cplx((8,)), device)
    with pytest.raises(RuntimeError):
        torch.fft.fft(Z, norm="bogus")
    with pytest.raises(TypeError, match="rfft expects a real input tensor, but got ComplexFloat"):
        torch.fft.rfft(Z)
    with pytest.raises(TypeError, match="rfftn expects a real-valued input tensor"):
        torch.fft.rfftn(Z)
    with pytest.raises(TypeError, match="Only supports floating-point dtypes, but found: ComplexFloat"):
        torch.fft.ihfft2(Z.reshape(2, 4))
    with pytest.raises(IndexError):
        torch.fft.fft(Z, dim=3)


@pytest.mark.parametrize("device", DEVICES)
def test_freqs_and_shifts(device):
    close(torch.fft.fftfreq(10, 0.1, device=device), np.fft.fftfreq(10, 0.1))
    close(torch.fft.rfftfreq(9, device=device), np.fft.rfftfreq(9))
    assert torch.fft.fftfreq(4).dtype == torch.float32
    v = real((5, 6))
    V = tens(v, device)
    close(torch.fft.fftshift(V), np.fft.fftshift(v).astype(np.float32))
    close(torch.fft.ifftshift(V), np.fft.ifftshift(v).astype(np.float32))
    close(torch.fft.fftshift(V, dim=1), np.fft.fftshift(v, axes=1).astype(np.float32))
    close(torch.fft.ifftshift(V, dim=(0,)), np.fft.ifftshift(v, axes=(0,)).astype(np.float32))


# ---- the plan cache (CUDA) -----------------------------------------------------------

@pytest.fixture
def cache():
    c = torch.backends.cuda.cufft_plan_cache
    c.clear()
    c.max_size = 4096
    yield c
    c.clear()
    c.max_size = 4096


@pytest.mark.cuda
def test_plan_cache_reuse_and_lru(cache):
    assert cache.max_size == 4096 and cache.size == 0
    x = torch.randn(64, dtype=torch.complex64, device="cuda") if False else \
        tens(cplx((64,)), "cuda")
    torch.fft.fft(x)
    assert cache.size == 1
    torch.fft.fft(x)
    torch.fft.ifft(x)  # same plan: direction is an execution argument
    assert cache.size == 1
    torch.fft.fft(tens(cplx((128,)), "cuda"))
    torch.fft.fft(tens(cplx((4, 64)), "cuda"))  # batch is part of the geometry
    torch.fft.rfft(tens(real((64,)), "cuda"))
    torch.fft.fft(tens(cplx((64,)), "cuda", double=True))
    assert cache.size == 5
    cache.max_size = 2                         # shrinking evicts
    assert cache.size == 2 and cache.max_size == 2
    torch.fft.fft(tens(cplx((96,)), "cuda"))
    assert cache.size == 2
    cache.max_size = 0                         # caching off: plans made and destroyed
    close(torch.fft.fft(x), np.fft.fft(x.cpu().numpy().astype(np.complex128)))
    assert cache.size == 0
    with pytest.raises(RuntimeError):
        cache.max_size = -1
    cache.clear()
    assert cache.size == 0


@pytest.mark.cuda
def test_plan_cache_indexing(cache):
    c0 = torch.backends.cuda.cufft_plan_cache[0]
    c0.max_size = 10
    assert cache.max_size == 10
    assert torch.backends.cuda.cufft_plan_cache[torch.device("cuda:0")].max_size == 10
    torch.backends.cuda.cufft_plan_cache[0].max_size = 4096
    assert cache.max_size == 4096


@pytest.mark.cuda
@pytest.mark.multigpu
def test_plan_cache_per_device(cache):
    with cuda.device(1):
        torch.fft.fft(tens(cplx((32,)), "cuda"))
    assert torch.backends.cuda.cufft_plan_cache[1].size == 1
    assert torch.backends.cuda.cufft_plan_cache[0].size == 0
    torch.backends.cuda.cufft_plan_cache[1].clear()


@pytest.mark.cuda
def test_fft_on_current_stream_and_memory_balanced(cache):
    x = tens(cplx((8, 1 << 14)), "cuda")
    torch.fft.fft(x)  # make the plan
    cuda.synchronize()
    before = cuda.memory_allocated()
    s = cuda.Stream()
    with cuda.stream(s):
        cuda._sleep(50_000_000)
        y = torch.fft.fft(x, norm="ortho")
        assert not s.query()
    s.synchronize()
    close(y, np.fft.fft(x.cpu().numpy().astype(np.complex128), norm="ortho"))
    del y
    cuda.synchronize()
    assert cuda.memory_allocated() == before


@pytest.mark.cuda
def test_large_and_3d_gpu():
    z = cplx((1 << 20,))
    close(torch.fft.fft(tens(z, "cuda")), np.fft.fft(z))
    v = cplx((2, 16, 8, 4))
    close(torch.fft.fftn(tens(v, "cuda"), dim=(1, 2, 3)), np.fft.fftn(v, axes=(1, 2, 3)))
    with pytest.raises(NotImplementedError):
        torch.fft.fftn(tens(v, "cuda"))


_NP_INVERSE_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("double", [False, True])
@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
@pytest.mark.parametrize("s,dim", [(None, None), ((4, 8), None), (None, (0, 2)), ((3, 5, 7), None)])
def test_hfftn_and_ihfftn_by_definition(device, double, norm, s, dim):
    # hfftn is the real transform of a Hermitian signal given by the first half
    # of its last dim: irfftn of the conjugate, scaled as a forward transform;
    # ihfftn the conjugate of rfftn, scaled as an inverse one
    x, r = cplx((3, 4, 5)), real((3, 4, 6))
    axes = dim if dim is not None else (None if s is None else tuple(range(3 - len(s), 3)))
    want = np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=_NP_INVERSE_NORM[norm])
    got = torch.fft.hfftn(tens(x, device, double), s=s, dim=dim, norm=norm)
    assert got.dtype == (torch.float64 if double else torch.float32)
    close(got, want, double)
    want = np.conj(np.fft.rfftn(r, s=s, axes=axes, norm=_NP_INVERSE_NORM[norm]))
    got = torch.fft.ihfftn(tens(r, device, double), s=s, dim=dim, norm=norm)
    assert got.dtype == (torch.complex128 if double else torch.complex64)
    close(got, want, double)


@pytest.mark.parametrize("device", DEVICES)
def test_hfft2_ihfft2_are_the_last_two_dims(device):
    x, r = tens(cplx((2, 4, 5)), device, True), tens(real((2, 4, 6)), device, True)
    close(torch.fft.hfft2(x), torch.fft.hfftn(x, dim=(-2, -1)).cpu().numpy(), True)
    close(torch.fft.ihfft2(r, s=(4, 8)), torch.fft.ihfftn(r, s=(4, 8), dim=(-2, -1)).cpu().numpy(), True)
    if real_torch is not None:
        t = real_torch.fft.ihfft2(real_torch.from_numpy(r.cpu().numpy()), s=(4, 8))
        close(torch.fft.ihfft2(r, s=(4, 8)), t.numpy(), True)


def test_hfftn_gradients_match_torch():
    if real_torch is None:
        pytest.skip("needs torch as the oracle")
    x = cplx((3, 4, 5))
    ours, theirs = torch.tensor(x, requires_grad=True), real_torch.tensor(x, requires_grad=True)
    torch.fft.hfftn(ours, s=(3, 4, 8)).pow(2).sum().backward()
    real_torch.fft.hfftn(theirs, s=(3, 4, 8)).pow(2).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-9)
