"""Matrix products: matmul/@ with torch's rules, mm, bmm, mv, dot, addmm,
baddbmm, x @ w.t() + b; the TF32 and reduced-precision flags.

Reference: NumPy in float64 (complex128). Error measure: max |ours - ref| /
max |ref|. Tolerances per dtype (k <= 256 here): float64/complex128 1e-12,
float32/complex64 without TF32 1e-5, with TF32 3e-3, float16 5e-3, bfloat16
3e-2. The note's TF32 example is reproduced at 2048^3: relative error (max
error / mean |ab|, the note's measure) between 2e-4 and 1e-2 with TF32,
below 1e-4 without; these are precision assertions, never timings.
"""

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

rng = np.random.default_rng(7)

TOL = {torch.float64: 1e-12, torch.complex128: 1e-12, torch.float32: 1e-5,
       torch.complex64: 1e-5, torch.float16: 5e-3, torch.bfloat16: 3e-2}
ALL = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
       torch.complex128]


@pytest.fixture(autouse=True)
def no_tf32_unless_asked():
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = prev


def data(shape, dt):
    v = rng.standard_normal(shape)
    if dt.is_complex:
        v = v + 1j * rng.standard_normal(shape)
    return v


def make(v, dt, device="cpu"):
    if dt.is_complex:
        t = torch.from_numpy(np.ascontiguousarray(v.astype(np.complex128)))
    else:
        t = torch.from_numpy(np.ascontiguousarray(v.astype(np.float64)))
    return t.to(device).to(dt)


def back(t):
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.to(torch.float32)
    return t.cpu().numpy().astype(np.complex128 if t.dtype.is_complex else np.float64)


def rel(a, ref):
    return np.abs(a - ref).max() / max(np.abs(ref).max(), 1e-30)


def ref_of(v, dt):
    """What the inputs are after rounding to dt, in float64."""
    return back(make(v, dt))


# ---- shapes and rules (CPU and GPU) ---------------------------------------------------

SHAPES = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 3)), ((3, 4), (4,)),
          ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((4,), (2, 4, 3)),
          ((2, 3, 4), (4,)), ((4, 5), (3, 5, 2)), ((0, 4), (4, 3)), ((3, 0), (0, 2))]


def check_matmul(device, dt, sa, sb):
    a, b = data(sa, dt), data(sb, dt)
    ta, tb = make(a, dt, device), make(b, dt, device)
    out = ta @ tb
    ref = np.matmul(ref_of(a, dt), ref_of(b, dt))
    assert tuple(out.shape) == ref.shape
    assert out.dtype == dt
    if ref.size:
        assert rel(back(out), ref) < TOL[dt] * (1 if device == "cpu" or dt not in (
            torch.float16, torch.bfloat16) else 1)


@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
def test_matmul_shapes_cpu(sa, sb):
    check_matmul("cpu", torch.float64, sa, sb)


@pytest.mark.parametrize("dt", ALL, ids=str)
def test_matmul_dtypes_cpu(dt):
    check_matmul("cpu", dt, (5, 6), (6, 7))


def test_family_cpu():
    a, b, c = data((3, 4), torch.float64), data((4, 5), torch.float64), data((5,), torch.float64)
    ta, tb, tc = make(a, torch.float64), make(b, torch.float64), make(c, torch.float64)
    assert np.allclose(torch.mm(ta, tb).numpy(), a @ b)
    assert np.allclose(ta.mm(tb).numpy(), a @ b)
    assert np.allclose(torch.mv(tb, tc).numpy(), b @ c)
    assert np.allclose(torch.dot(tc, tc).numpy(), c @ c)
    assert torch.dot(tc, tc).ndim == 0
    inp = data((5,), torch.float64)
    r = torch.addmm(make(inp, torch.float64), ta, tb, beta=0.5, alpha=2.0)
    assert np.allclose(r.numpy(), 0.5 * inp + 2.0 * (a @ b))
    b1, b2 = data((2, 3, 4), torch.float64), data((2, 4, 5), torch.float64)
    r = torch.baddbmm(make(np.zeros((3, 5)), torch.float64), make(b1, torch.float64),
                      make(b2, torch.float64), alpha=3)
    assert np.allclose(r.numpy(), 3 * (b1 @ b2))
    assert np.allclose(torch.bmm(make(b1, torch.float64), make(b2, torch.float64)).numpy(), b1 @ b2)
    x, w, bias = data((6, 4), torch.float64), data((3, 4), torch.float64), data((3,), torch.float64)
    y = make(x, torch.float64) @ make(w, torch.float64).t() + make(bias, torch.float64)
    assert np.allclose(y.numpy(), x @ w.T + bias)


def test_errors_cpu():
    a, b = torch.zeros(2, 3), torch.zeros(4, 5)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        a @ b
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.zeros(2, 3) @ torch.zeros(3, 2, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="at least 1D"):
        torch.matmul(torch.zeros(()), a)
    with pytest.raises(RuntimeError, match="must match"):
        torch.zeros(2, 3, 4) @ torch.zeros(3, 4, 5)
    with pytest.raises(RuntimeError):
        torch.mm(torch.zeros(3), torch.zeros(3, 3))
    with pytest.raises(RuntimeError):
        torch.bmm(torch.zeros(2, 3, 4), torch.zeros(3, 4, 5))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        torch.dot(torch.zeros(3), torch.zeros(4))
    with pytest.raises(TypeError):
        torch.zeros(2, 2) @ 3


def test_flags_and_precision():
    m = torch.backends.cuda.matmul
    torch.backends.cuda.matmul.allow_tf32 = True
    assert m.allow_tf32 is True and torch.get_float32_matmul_precision() == "high"
    torch.set_float32_matmul_precision("highest")
    assert m.allow_tf32 is False and torch.get_float32_matmul_precision() == "highest"
    torch.set_float32_matmul_precision("medium")
    assert m.allow_tf32 is True and torch.get_float32_matmul_precision() == "medium"
    m.allow_tf32 = False
    assert torch.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError):
        torch.set_float32_matmul_precision("fast")
    assert m.allow_fp16_reduced_precision_reduction is True
    assert m.allow_bf16_reduced_precision_reduction is True
    assert torch.backends.cudnn.allow_tf32 is True
    torch.backends.cudnn.allow_tf32 = False
    assert torch.backends.cudnn.allow_tf32 is False
    torch.backends.cudnn.allow_tf32 = True
    with pytest.raises(AttributeError):
        m.allow_tf33 = True


def test_tf32_default_is_true_as_the_note_says():
    import subprocess
    import sys
    code = ("import pycuda_sem as t; print(t.backends.cuda.matmul.allow_tf32, "
            "t.get_float32_matmul_precision())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "high"]


# ---- GPU ----------------------------------------------------------------------------

@pytest.fixture
def balanced_warmup():
    """Overrides conftest.py's: `balanced` takes its baseline after this, so
    the cuBLAS handle and workspace that the first product creates (held for
    the handle's life) are not counted as a leak."""
    torch.ones(2, 2, device="cuda") @ torch.ones(2, 2, device="cuda")  # handle + workspace


@pytest.mark.cuda
@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
@pytest.mark.parametrize("dt", ALL, ids=str)
def test_matmul_gpu(dt, sa, sb, balanced):
    check_matmul("cuda", dt, sa, sb)


@pytest.mark.cuda
@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.complex64, torch.float16],
                         ids=str)
def test_transposed_and_strided_operands_gpu(dt, balanced):
    a, b = data((64, 48), dt), data((80, 64), dt)
    ta, tb = make(a, dt, "cuda"), make(b, dt, "cuda")
    ra, rb = ref_of(a, dt), ref_of(b, dt)
    cases = [(ta.t(), tb.t(), ra.T @ rb.T),          # both op T, no copy
             (tb, ta, rb @ ra),                      # plain
             (ta[:, ::2].t(), ta[:, ::2], ra[:, ::2].T @ ra[:, ::2]),  # strided: copied
             (tb[:, :48], ta[:48, :30], rb[:, :48] @ ra[:48, :30]),    # row-major, ld > cols
             (ta[::2], tb.t()[:48, :32], ra[::2] @ rb.T[:48, :32])]    # col-major, ld > rows
    for x, y, ref in cases:
        assert rel(back(x @ y), ref) < TOL[dt]


@pytest.mark.cuda
def test_batched_broadcast_and_expand_gpu(balanced):
    dt = torch.float32
    a, b = data((3, 1, 8, 5), dt), data((4, 5, 6), dt)
    ta, tb = make(a, dt, "cuda"), make(b, dt, "cuda")
    out = ta @ tb
    assert tuple(out.shape) == (3, 4, 8, 6)
    assert rel(back(out), np.matmul(a, b)) < 1e-5
    # stride-0 batch from expand, and a permuted batch
    e = make(data((8, 5), dt), dt, "cuda")
    ex = e.expand(7, 8, 5)
    assert rel(back(ex @ tb[0]), np.matmul(back(ex), back(tb[0]))) < 1e-5
    p = make(data((5, 2, 8), dt), dt, "cuda").permute(1, 0, 2)  # (2, 5, 8)
    q = make(data((2, 8, 3), dt), dt, "cuda")
    assert rel(back(p @ q), np.matmul(back(p), back(q))) < 1e-5


@pytest.mark.cuda
def test_family_gpu(balanced):
    dt = torch.float64
    a, b, c = data((30, 40), dt), data((40, 50), dt), data((50,), dt)
    ta, tb, tc = (make(v, dt, "cuda") for v in (a, b, c))
    assert rel(back(torch.mm(ta, tb)), a @ b) < 1e-12
    assert rel(back(torch.mv(tb, tc)), b @ c) < 1e-12
    d = torch.dot(tc, tc)
    assert d.ndim == 0 and abs(d.item() - c @ c) < 1e-10
    for cdt in (torch.complex64, torch.float16, torch.bfloat16):
        v = data((100,), cdt)
        tv = make(v, cdt, "cuda")
        ref = ref_of(v, cdt) @ ref_of(v, cdt)
        assert abs(back(torch.dot(tv, tv)) - ref) <= TOL[cdt] * 10 * (np.abs(ref_of(v, cdt)) ** 2).sum()
    inp = data((50,), dt)
    r = torch.addmm(make(inp, dt, "cuda"), ta, tb, beta=0.5, alpha=2.0)
    assert rel(back(r), 0.5 * inp + 2 * (a @ b)) < 1e-12
    b1, b2, bi = data((3, 4, 5), dt), data((3, 5, 6), dt), data((3, 4, 6), dt)
    r = torch.baddbmm(make(bi, dt, "cuda"), make(b1, dt, "cuda"), make(b2, dt, "cuda"),
                      beta=2, alpha=-1)
    assert rel(back(r), 2 * bi - b1 @ b2) < 1e-12
    x, w, bias = data((16, 40), dt), data((30, 40), dt), data((30,), dt)
    y = make(x, dt, "cuda") @ make(w, dt, "cuda").t() + make(bias, dt, "cuda")
    assert rel(back(y), x @ w.T + bias) < 1e-12
    z = torch.zeros(30, 30, dtype=dt, device="cuda")
    z2 = z
    z @= ta[:, :30]
    assert z is z2


@pytest.mark.cuda
def test_errors_gpu():
    a = torch.zeros(2, 3, device="cuda")
    with pytest.raises(RuntimeError, match="cuda:0") as e:
        a @ torch.zeros(3, 2)
    assert "cpu" in str(e.value)
    with pytest.raises(RuntimeError, match=r"\(2x3 and 4x5\)"):
        a @ torch.zeros(4, 5, device="cuda")
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        torch.zeros(2, 2, dtype=torch.int64, device="cuda") @ torch.zeros(2, 2, dtype=torch.int64,
                                                                        device="cuda")


@pytest.mark.cuda
def test_tf32_example_of_the_note():
    """The note's example at 2048 instead of 10240 (same measure)."""
    n = 2048
    torch.manual_seed(0)
    a_full = torch.randn(n, n, dtype=torch.double, device="cuda")
    b_full = torch.randn(n, n, dtype=torch.double, device="cuda")
    ab_full = (a_full @ b_full).cpu().numpy()
    mean = np.abs(ab_full).mean()
    a, b = a_full.float(), b_full.float()
    torch.backends.cuda.matmul.allow_tf32 = True
    ab_tf32 = (a @ b).cpu().numpy()
    rel_tf32 = np.abs(ab_tf32 - ab_full).max() / mean
    torch.backends.cuda.matmul.allow_tf32 = False
    ab_fp32 = (a @ b).cpu().numpy()
    rel_fp32 = np.abs(ab_fp32 - ab_full).max() / mean
    assert 2e-4 < rel_tf32 < 1e-2, rel_tf32
    assert rel_fp32 < 1e-4, rel_fp32
    assert rel_tf32 > 10 * rel_fp32
    # set_float32_matmul_precision drives the same switch
    torch.set_float32_matmul_precision("high")
    assert np.abs((a @ b).cpu().numpy() - ab_full).max() / mean > 10 * rel_fp32


@pytest.mark.cuda
def test_fp16_reduced_precision_flag_runs():
    a = torch.randn(256, 4096, device="cuda").half()
    b = torch.randn(4096, 256, device="cuda").half()
    m = torch.backends.cuda.matmul
    r1 = back(a @ b)
    m.allow_fp16_reduced_precision_reduction = False
    try:
        r2 = back(a @ b)
    finally:
        m.allow_fp16_reduced_precision_reduction = True
    ref = back(a) @ back(b)
    assert rel(r1, ref) < 1e-2 and rel(r2, ref) < 1e-2


@pytest.mark.cuda
def test_cublas_runs_on_current_stream():
    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda")
    ref = back(a) @ back(b)
    s1, s2 = cuda.Stream(), cuda.Stream()
    for s in (s1, s2):  # make each stream's cuBLAS handle outside the timed part
        with cuda.stream(s):
            a @ b
    cuda.synchronize()
    with cuda.stream(s1):
        cuda._sleep(1_000_000_000)  # ~0.5 s: s1 stays busy
        c = a @ b
    assert not s1.query()
    with cuda.stream(s2):
        d = a @ b
        d_host = back(d)          # copy queued on s2 too
        assert not s1.query()      # d did not wait for s1: it ran on s2
    s1.synchronize()
    assert rel(d_host, ref) < 1e-5
    assert rel(back(c), ref) < 1e-5
