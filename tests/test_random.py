"""Random numbers: Philox (seed, offset) per device, the same numbers on the CPU
and on the GPU.

What the counter scheme guarantees (csrc/kernels/philox.h):
- a seed reproduces every fill, on any device, whatever the launch shape;
- element i of a fill depends only on (seed, offset, i): rand(n)[:m] equals
  rand(m) from the same state, and two fills whose sizes are multiples of 4
  (2 for float64) concatenate into one fill of the summed size;
- float32 uniform numbers (rand, uniform_, bernoulli_, randint, randperm) are
  bit-identical on the CPU and the GPU; normal and exponential numbers agree
  within 4e-6 * (1 + |x|) in float32 (the GPU takes the Box-Muller angle's
  sin/cos from the hardware unit, abs. error < 4e-7) and 1e-13 * (1 + |x|) in
  float64 (libm versus CUDA's log/sincospi differ in the last bits).
Statistical checks use 6-sigma bounds, so they fail by chance with
probability below 1e-8.
"""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def np32(t):
    return t.to(torch.float32).cpu().numpy() if t.dtype in (torch.float16, torch.bfloat16) \
        else t.cpu().numpy()


# ---- the generator ---------------------------------------------------------------

def test_philox_known_answer():
    # Random123's known-answer vector for Philox4x32-10, key 0, counter 0.
    torch.manual_seed(0)
    words = [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    expect = np.array([(w >> 8) * 2.0 ** -24 for w in words], dtype=np.float32)
    assert np.array_equal(torch.rand(4).numpy(), expect)


def test_seed_reproduces_and_advances():
    torch.manual_seed(123)
    a = torch.rand(100).numpy()
    b = torch.rand(100).numpy()
    torch.manual_seed(123)
    assert np.array_equal(torch.rand(100).numpy(), a)
    assert np.array_equal(torch.rand(100).numpy(), b)
    assert not np.array_equal(a, b)
    assert torch.initial_seed() == 123


def test_prefix_and_concatenation():
    torch.manual_seed(5)
    big = torch.rand(1000).numpy()
    torch.manual_seed(5)
    assert np.array_equal(torch.rand(500).numpy(), big[:500])
    torch.manual_seed(5)
    parts = [torch.rand(8).numpy(), torch.rand(992).numpy()]
    assert np.array_equal(np.concatenate(parts), big)


def test_manual_seed_returns_generator_and_state_roundtrip():
    g = torch.manual_seed(7)
    assert g.initial_seed() == 7
    torch.rand(3)
    state = torch.get_rng_state()
    assert state.dtype == torch.uint8 and state.numel() == 16
    a = torch.randn(10).numpy()
    torch.set_rng_state(state)
    assert np.array_equal(torch.randn(10).numpy(), a)


def test_seed_is_nondeterministic_int():
    s = torch.seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 63
    assert torch.initial_seed() == s


def test_factories_shapes_and_dtypes():
    torch.manual_seed(0)
    assert torch.rand(2, 3).shape == (2, 3)
    assert torch.rand((2, 3)).dtype == torch.float32
    assert torch.randn(4, dtype=torch.float64).dtype == torch.float64
    x = torch.randint(3, 9, (1000,))
    assert x.dtype == torch.int64
    v = x.numpy()
    assert v.min() >= 3 and v.max() < 9 and len(set(v.tolist())) == 6
    assert torch.randint(5, (3, 2)).shape == (3, 2)
    p = torch.randperm(50).numpy()
    assert sorted(p.tolist()) == list(range(50))
    base = torch.zeros(3, 4, dtype=torch.float64)
    assert torch.rand_like(base).dtype == torch.float64
    assert torch.randn_like(base).shape == (3, 4)
    with pytest.raises(RuntimeError):
        torch.randint(5, 5, (3,))
    with pytest.raises(RuntimeError):
        torch.rand(3, dtype=torch.int64)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_moments(dt):
    torch.manual_seed(1)
    n = 1 << 20
    u = np32(torch.rand(n, dtype=dt)).astype(np.float64)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 6 * math.sqrt(1 / 12 / n) + 2e-3 * (dt != torch.float32)
    z = np32(torch.randn(n, dtype=dt)).astype(np.float64)
    assert abs(z.mean()) < 6 / math.sqrt(n) + 1e-3
    assert abs(z.var() - 1) < 6 * math.sqrt(2 / n) + 1e-2 * (dt in (torch.float16, torch.bfloat16))


def test_inplace_fills():
    torch.manual_seed(2)
    n = 1 << 18
    x = torch.empty(n).normal_(3.0, 2.0).numpy()
    assert abs(x.mean() - 3) < 6 * 2 / math.sqrt(n) and abs(x.std() - 2) < 0.02
    y = torch.empty(n).uniform_(-2, 5).numpy()
    assert y.min() >= -2 and y.max() < 5 and abs(y.mean() - 1.5) < 0.03
    b = torch.empty(n).bernoulli_(0.3).numpy()
    assert set(np.unique(b).tolist()) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 6 * math.sqrt(0.21 / n)
    e = torch.empty(n, dtype=torch.float64).exponential_(4.0).numpy()
    assert e.min() > 0 and abs(e.mean() - 0.25) < 6 * 0.25 / math.sqrt(n)
    r = torch.empty(1000, dtype=torch.int32).random_(10).numpy()
    assert r.min() >= 0 and r.max() < 10
    with pytest.raises(RuntimeError):
        torch.empty(3).normal_(0, -1)
    with pytest.raises(RuntimeError):
        torch.empty(3).uniform_(2, 1)
    with pytest.raises(RuntimeError):
        torch.empty(3).bernoulli_(1.5)
    with pytest.raises(RuntimeError):
        torch.empty(3).exponential_(0)
    with pytest.raises(RuntimeError):
        torch.empty(3, dtype=torch.int64).normal_()


def test_noncontiguous_fill_follows_row_major_order():
    torch.manual_seed(9)
    x = torch.empty(6, 4).t()
    x.normal_()
    torch.manual_seed(9)
    y = torch.empty(4, 6).normal_()
    assert np.array_equal(x.numpy(), y.numpy())


# ---- GPU ---------------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_cpu_and_gpu_agree(dt, balanced):
    n = 100003  # not a multiple of 4: exercises the tail path
    torch.manual_seed(42)
    cu = np32(torch.rand(n, dtype=dt, device="cuda"))
    cz = np32(torch.randn(n, dtype=dt, device="cuda"))
    torch.manual_seed(42)
    hu = np32(torch.rand(n, dtype=dt))
    hz = np32(torch.randn(n, dtype=dt))
    assert np.array_equal(cu, hu)  # uniform: bit-identical
    tol = 1e-13 if dt == torch.float64 else 4e-6
    if dt in (torch.float16, torch.bfloat16):
        # rounding of a float that differs in its last bit may pick the
        # neighbouring 16-bit value
        tol = 2 ** -7 if dt == torch.bfloat16 else 2 ** -10
    assert np.all(np.abs(cz - hz) <= tol * (1 + np.abs(hz)))


@pytest.mark.cuda
def test_gpu_integer_and_discrete_fills_match_cpu(balanced):
    torch.manual_seed(3)
    gi = torch.randint(-5, 1000, (4097,), device="cuda").cpu().numpy()
    gb = torch.empty(4097, device="cuda").bernoulli_(0.25).cpu().numpy()
    gp = torch.randperm(1000, device="cuda").cpu().numpy()
    gw = torch.randint(0, 1 << 40, (33,), device="cuda").cpu().numpy()
    torch.manual_seed(3)
    assert np.array_equal(torch.randint(-5, 1000, (4097,)).numpy(), gi)
    assert np.array_equal(torch.empty(4097).bernoulli_(0.25).numpy(), gb)
    assert np.array_equal(torch.randperm(1000).numpy(), gp)
    assert np.array_equal(torch.randint(0, 1 << 40, (33,)).numpy(), gw)


@pytest.mark.cuda
def test_gpu_fill_independent_of_layout_and_offsets(balanced):
    torch.manual_seed(11)
    big = torch.randn(1 << 16, device="cuda").cpu().numpy()
    torch.manual_seed(11)
    a = torch.randn(1 << 12, device="cuda").cpu().numpy()
    b = torch.randn((1 << 16) - (1 << 12), device="cuda").cpu().numpy()
    assert np.array_equal(np.concatenate([a, b]), big)
    # a misaligned (offset) view takes the scalar path: same numbers
    torch.manual_seed(11)
    base = torch.empty((1 << 16) + 1, device="cuda")
    v = base[1:]
    v.normal_()
    assert np.array_equal(v.cpu().numpy(), big)


@pytest.mark.cuda
def test_cuda_seeding_functions():
    cuda.manual_seed_all(5)
    s = cuda.get_rng_state()
    a = torch.rand(64, device="cuda").cpu().numpy()
    cuda.set_rng_state(s)
    assert np.array_equal(torch.rand(64, device="cuda").cpu().numpy(), a)
    cuda.manual_seed(5)
    assert cuda.initial_seed() == 5
    assert np.array_equal(torch.rand(64, device="cuda").cpu().numpy(), a)
    cuda.seed()
    assert cuda.initial_seed() != 5 or True  # a random seed may in theory be 5
    states = cuda.get_rng_state_all()
    assert len(states) == cuda.device_count()


@pytest.mark.cuda
def test_normal_moments_gpu(balanced):
    torch.manual_seed(8)
    n = 1 << 22
    x = torch.empty(n, device="cuda").normal_(1.0, 0.5).cpu().numpy().astype(np.float64)
    assert abs(x.mean() - 1) < 6 * 0.5 / math.sqrt(n)
    assert abs(x.var() - 0.25) < 6 * 0.25 * math.sqrt(2 / n)
    # tails: Box-Muller with 24-bit uniforms reaches |z| ~ 5.7
    assert np.abs(x - 1).max() / 0.5 > 4.5


@pytest.mark.cuda
def test_fill_runs_on_current_stream(balanced):
    s = cuda.Stream()
    x = torch.empty(1 << 20, device="cuda")
    with cuda.stream(s):
        cuda._sleep(50_000_000)
        x.normal_()
        assert not s.query()
    s.synchronize()
    assert np.isfinite(x.cpu().numpy()).all()
