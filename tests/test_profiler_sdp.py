"""torch.profiler over record_function ranges (profiler/), the legacy
torch.autograd.profiler spellings, and the attention switches
(nn.attention.sdpa_kernel, backends.cuda's SDP flags and library
preferences)."""
import json
import os
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F
from torch_oracle import _torch as real_torch
from pycuda_sem.profiler import (profile, record_function, ProfilerActivity, ProfilerAction,
                                 schedule, tensorboard_trace_handler)

cuda = pytest.mark.cuda


def _quiet():
    warnings.simplefilter("ignore", UserWarning)


def test_ranges_nest_and_total(tmp_path):
    with warnings.catch_warnings():
        _quiet()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            with record_function("outer"):
                for _ in range(3):
                    with record_function("inner"):
                        torch.randn(50, 50).matmul(torch.randn(50, 50))
    avg = {e.key: e for e in prof.key_averages()}
    assert set(avg) == {"outer", "inner"}
    assert avg["inner"].count == 3 and avg["outer"].count == 1
    assert avg["outer"].cpu_time_total >= avg["inner"].cpu_time_total > 0
    # outer's self time excludes its children
    assert abs(avg["outer"].self_cpu_time_total
               - (avg["outer"].cpu_time_total - avg["inner"].cpu_time_total)) < 1e-6
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    lines = table.splitlines()
    assert "Name" in lines[1] and lines[3].split()[0] == "outer" and "ranges only" in table
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="nonsense")
    path = prof.export_chrome_trace(str(tmp_path / "t.json"))
    evs = json.load(open(path))["traceEvents"]
    assert sorted(e["name"] for e in evs) == ["inner"] * 3 + ["outer"]


def test_profile_warns_that_ops_are_not_listed():
    with pytest.warns(UserWarning, match="individual ops are not listed"):
        with profile(activities=[ProfilerActivity.CPU]):
            pass


def test_schedule_and_trace_handler(tmp_path):
    s = schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [s(i) for i in range(6)] == [ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
                                        ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE,
                                        ProfilerAction.NONE]
    with pytest.raises(ValueError):
        schedule(wait=-1, warmup=0, active=1)
    seen = []
    with warnings.catch_warnings():
        _quiet()
        with profile(activities=[ProfilerActivity.CPU], schedule=s,
                     on_trace_ready=lambda p: seen.append(sorted(e.key for e in p.key_averages()))) as p:
            for i in range(6):
                with record_function("step_work"):
                    torch.ones(4).sum()
                p.step()
    # steps 2 and 3 are recorded, with their ProfilerStep ranges
    assert seen == [["ProfilerStep#2", "ProfilerStep#3", "step_work"]]
    with warnings.catch_warnings():
        _quiet()
        with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=0, active=1, repeat=1),
                     on_trace_ready=tensorboard_trace_handler(str(tmp_path / "tb"))) as p:
            with record_function("a"):
                pass
            p.step()
    files = os.listdir(tmp_path / "tb")
    assert len(files) == 1 and files[0].endswith(".pt.trace.json")


def test_decorator_legacy_spelling_and_errors():
    @record_function("decorated")
    def f(x):
        return x + 1

    with warnings.catch_warnings():
        _quiet()
        with torch.autograd.profiler.profile() as p:
            assert f(1) == 2
    assert [e.key for e in p.key_averages()] == ["decorated"]
    with pytest.raises(NotImplementedError, match="NVTX range per op"):
        with torch.autograd.profiler.emit_nvtx():
            pass
    with pytest.raises(TypeError):
        record_function(3)
    with pytest.raises(TypeError):
        profile(activities=["cpu"])


@cuda
def test_cuda_ranges_have_device_time():
    a = torch.randn(2048, 2048, device="cuda")
    with warnings.catch_warnings():
        _quiet()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            with record_function("mm"):
                for _ in range(5):
                    a = (a @ a).tanh()
    e = prof.key_averages()[0]
    assert e.key == "mm" and e.device_time_total > 0 and e.cuda_time_total == e.device_time_total
    assert "CUDA total" in prof.key_averages().table()


def test_sdpa_kernel_switches_the_flags_and_keeps_the_result():
    from pycuda_sem.nn.attention import SDPBackend, sdpa_kernel
    bc = torch.backends.cuda
    assert bc.flash_sdp_enabled() and bc.math_sdp_enabled() and bc.mem_efficient_sdp_enabled()
    q = torch.randn(2, 3, 5, 8, dtype=torch.float64)
    ref = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        assert bc.flash_sdp_enabled() and not bc.math_sdp_enabled() and not bc.cudnn_sdp_enabled()
        out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert bc.math_sdp_enabled()
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel(3.0):
            pass
    with pytest.warns(FutureWarning):
        with bc.sdp_kernel(enable_flash=False):
            assert not bc.flash_sdp_enabled()
    assert bc.flash_sdp_enabled()
    bc.enable_mem_efficient_sdp(False)
    assert not bc.mem_efficient_sdp_enabled()
    bc.enable_mem_efficient_sdp(True)
    with pytest.raises(TypeError):
        bc.enable_math_sdp(1)
    params = bc.SDPAParams(q, q, q, None, 0.0, True, False)
    assert bc.can_use_flash_attention(params) is False and bc.is_flash_attention_available() is False
    assert bc.preferred_blas_library().name == "Cublas" and bc.preferred_blas_library("cublas").name == "Cublas"
    with pytest.raises(RuntimeError):
        bc.preferred_blas_library("cublaslt")
    assert bc.preferred_linalg_library().name == "Default"
    with pytest.raises(RuntimeError, match="NumPy's LAPACK"):
        bc.preferred_linalg_library("cusolver")


def test_causal_bias_masks_as_torch():
    import warnings
    from pycuda_sem.nn.attention import bias as cb
    rng = np.random.default_rng(3)
    for L, S in [(5, 5), (3, 7), (6, 4)]:
        q, k, v = rng.standard_normal((2, 2, L, 8)), rng.standard_normal((2, 2, S, 8)), rng.standard_normal((2, 2, S, 8))
        for name in ("causal_upper_left", "causal_lower_right"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # lower right with L > S warns, as torch's
                b = getattr(cb, name)(L, S)
            diag = 0 if name == "causal_upper_left" else S - L
            want_mask = np.tril(np.ones((L, S), dtype=bool), diag)
            np.testing.assert_array_equal(b._materialize().numpy(), want_mask)
            got = torch.nn.functional.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                                                                   attn_mask=b)
            dense = torch.nn.functional.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k),
                                                                     torch.tensor(v), attn_mask=torch.tensor(want_mask))
            np.testing.assert_array_equal(got.numpy(), dense.numpy())
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        cb.causal_lower_right(6, 4)
    with pytest.raises(AssertionError, match="only supports 2D"):
        cb.causal_upper_left(2, 3, 4)


def test_sdpa_query_with_no_key_gives_zeros_and_zero_gradients():
    # torch's safe softmax (2.5 on): a query row that the bool mask leaves no
    # key gives 0, not NaN, and passes no NaN into the gradients
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((2, 3, 4, 8)), rng.standard_normal((2, 3, 5, 8)), rng.standard_normal((2, 3, 5, 8))
    m = rng.random((2, 1, 4, 5)) > 0.5
    m[:, :, :, 0] = True  # every row keeps a key, but for two
    m[0, 0, 1] = False
    m[1, 0, 3] = False
    w = rng.standard_normal((2, 3, 4, 8))
    qq, kk, vv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    o = torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, attn_mask=torch.tensor(m))
    (o * torch.tensor(w)).sum().backward()
    assert (o[0, :, 1] == 0).all() and (o[1, :, 3] == 0).all()
    for g in (qq.grad, kk.grad, vv.grad):
        assert not g.isnan().any()
    assert (qq.grad[0, :, 1] == 0).all()
    if real_torch is not None:
        tq, tk, tv = (real_torch.tensor(a, requires_grad=True) for a in (q, k, v))
        to = real_torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=real_torch.tensor(m))
        (to * real_torch.tensor(w)).sum().backward()
        for ours, theirs in ((o, to), (qq.grad, tq.grad), (kk.grad, tk.grad), (vv.grad, tv.grad)):
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
