"""torch.optim on CUDA: the multi-tensor C path (_C._fused_adam_ ...) against
the NumPy reference and against the composed path (foreach=False), over
many tensors of odd sizes (chunk edges, batches of more than
PCS_OPTIM_BATCH tensors, misaligned views), low-precision dtypes, mixed
groups, and the entry points' checks."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import _C
from pycuda_sem.optim import SGD, Adagrad, Adam, AdamW, RMSprop

from test_optim import CASE_IDS, CASES, _run  # noqa: E402

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]


@pytest.mark.parametrize("name,k", CASE_IDS)
def test_multi_tensor_float32_matches_reference(name, k):
    ours, ref, _ = _run(name, k, device="cuda", dtype=torch.float32)
    for a, b in zip(sum(ours, []), sum(ref, [])):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name,k", CASE_IDS)
def test_multi_tensor_float64_matches_reference(name, k):
    ours, ref, _ = _run(name, k, device="cuda", dtype=torch.float64)
    for a, b in zip(sum(ours, []), sum(ref, [])):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,k", CASE_IDS)
def test_multi_tensor_equals_composed(name, k):
    fused, _, of = _run(name, k, device="cuda", dtype=torch.float32)
    composed, _, oc = _run(name, k, device="cuda", dtype=torch.float32, foreach=False)
    for a, b in zip(sum(fused, []), sum(composed, [])):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    sf, sc = of.state_dict()["state"], oc.state_dict()["state"]
    assert sorted(sf) == sorted(sc)
    for i in sf:
        assert sorted(sf[i]) == sorted(sc[i])
        for key in sf[i]:
            a, b = sf[i][key], sc[i][key]
            assert a.device == b.device and a.dtype == b.dtype
            np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,k", CASE_IDS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_multi_tensor_low_precision(name, k, dtype):
    # computed in float, stored in the low-precision dtype each step
    ours, ref, _ = _run(name, k, device="cuda", dtype=getattr(torch, dtype))
    tol = 2e-2 if dtype == "bfloat16" else 5e-3
    for a, b in zip(sum(ours, []), sum(ref, [])):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---- many tensors, odd sizes, odd layouts -----------------------------------------------

SIZES = [0, 1, 3, 4, 5, 17, 1000, 16383, 16384, 16385, 40000, 70001] * 9  # 108 tensors


def _many(device, seed=0, misaligned=False):
    """float32 params of SIZES; with misaligned, every third one is a view
    that starts one element into its storage (a pointer not 16-byte
    aligned: the kernel's element-by-element path)."""
    rng = np.random.default_rng(seed)
    ps = []
    for i, n in enumerate(SIZES):
        a = rng.standard_normal(n).astype(np.float32)
        if misaligned and i % 3 == 0:
            base = torch.tensor(np.concatenate([[0.0], a]).astype(np.float32), device=device)
            p = base[1:].requires_grad_(True)
        else:
            p = torch.tensor(a, device=device).requires_grad_(True)
        ps.append(p)
    return ps


OPTS = [
    (SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
    (SGD, dict(lr=0.1)),
    (Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    (AdamW, dict(lr=0.01, maximize=True)),
    (RMSprop, dict(lr=0.01, centered=True, momentum=0.5)),
    (Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
]


@pytest.mark.parametrize("cls,kw", OPTS, ids=lambda x: getattr(x, "__name__", ""))
@pytest.mark.parametrize("misaligned", [False, True])
def test_many_tensors_equal_composed(cls, kw, misaligned):
    rng = np.random.default_rng(3)
    pf, pc = _many("cuda", misaligned=misaligned), _many("cuda", misaligned=misaligned)
    of, oc = cls(pf, **kw), cls(pc, foreach=False, **kw)
    for step in range(4):
        for i, (a, b) in enumerate(zip(pf, pc)):
            if step == 0 and i % 5 == 1:  # no grad on the first step: momentum starts later
                a.grad = b.grad = None
                continue
            g = torch.tensor(rng.standard_normal(a.numel()).astype(np.float32), device="cuda")
            a.grad, b.grad = g, g.clone()
        of.step()
        oc.step()
    for a, b in zip(pf, pc):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(),
                                   rtol=1e-5, atol=1e-6)
    if "step" in of.state[pf[0]]:
        assert [of.state[p]["step"].item() for p in pf[:6]] == [4.0, 3.0, 4.0, 4.0, 4.0, 4.0]


def test_mixed_group_noncontiguous_and_dtypes():
    """A group with a transposed param (composed path), float16 and float32
    params (two multi-tensor calls) and a CPU-less step all update right."""
    rng = np.random.default_rng(4)
    vals = [rng.standard_normal((4, 5)), rng.standard_normal(7), rng.standard_normal(9)]

    def make():
        a = torch.tensor(vals[0].astype(np.float32), device="cuda").t().requires_grad_(True)
        b = torch.tensor(vals[1].astype(np.float32), device="cuda").requires_grad_(True)
        c = torch.tensor(vals[2].astype(np.float32), device="cuda").half().requires_grad_(True)
        return [a, b, c]

    pf, pc = make(), make()
    of, oc = Adam(pf, lr=0.1), Adam(pc, lr=0.1, foreach=False)
    for _ in range(3):
        for a, b in zip(pf, pc):
            g = torch.tensor(rng.standard_normal(tuple(a.shape)).astype(np.float32),
                             device="cuda").to(a.dtype)
            a.grad, b.grad = g, g.clone()
        of.step()
        oc.step()
    for a, b in zip(pf, pc):
        tol = 1e-2 if a.dtype == torch.float16 else 1e-5
        np.testing.assert_allclose(a.detach().float().cpu().numpy(),
                                   b.detach().float().cpu().numpy(), rtol=tol, atol=tol)


def test_step_runs_on_current_stream_and_bumps_versions():
    p = torch.ones(1 << 20, device="cuda", requires_grad=True)
    p.grad = torch.ones(1 << 20, device="cuda")
    opt = Adam([p], lr=0.5)
    v = p._version
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(10_000_000)
        opt.step()
    torch.cuda.current_stream().wait_stream(s)
    assert p._version > v
    # step 1: m = 0.1, v = 0.001, update = lr * 1 = 0.5 (up to eps)
    np.testing.assert_allclose(p.detach().cpu().numpy()[:4], [0.5] * 4, rtol=1e-5)


def test_state_follows_param_device_after_load():
    p = torch.zeros(4, device="cuda", requires_grad=True)
    p.grad = torch.ones(4, device="cuda")
    opt = Adam([p])
    opt.step()
    sd = opt.state_dict()
    q = torch.zeros(4, device="cuda", requires_grad=True)
    o2 = Adam([q])
    o2.load_state_dict({"state": {0: {k: v.cpu() for k, v in sd["state"][0].items()}},
                        "param_groups": sd["param_groups"]})
    assert o2.state[q]["exp_avg"].is_cuda and not o2.state[q]["step"].is_cuda
    q.grad = torch.ones(4, device="cuda")
    o2.step()
    assert o2.state[q]["step"].item() == 2


# ---- the entry points' checks on CUDA -------------------------------------------------------


def _c(*s, dtype=None):
    return torch.zeros(*s, device="cuda", dtype=dtype or torch.float32)


def _step():
    return torch.tensor(0.0)


@pytest.mark.parametrize("call,msg", [
    (lambda: _C._fused_adam_([_c(2)], [_c(2, dtype=torch.float16)], [_c(2)], [_c(2)], None,
                             [_step()]), "one dtype"),
    (lambda: _C._fused_adam_([_c(2)], [_c(3)], [_c(2)], [_c(2)], None, [_step()]), "shape"),
    (lambda: _C._fused_adam_([_c(4, 4)], [_c(4, 4).t()], [_c(4, 4)], [_c(4, 4)], None,
                             [_step()]), "not contiguous"),
    (lambda: _C._fused_adam_([_c(2, dtype=torch.int32)], [_c(2, dtype=torch.int32)],
                             [_c(2, dtype=torch.int32)], [_c(2, dtype=torch.int32)], None,
                             [_step()]), "float16, bfloat16, float32 or float64"),
    (lambda: _C._fused_adam_([_c(2)], [torch.zeros(2)], [_c(2)], [_c(2)], None, [_step()]),
     "same device"),
    (lambda: _C._fused_adam_([_c(2)], [_c(2)], [_c(2)], [_c(2)], None,
                             [torch.tensor(0.0, device="cuda")]), "CPU tensor"),
    (lambda: _C._fused_adam_([_c(2)], [_c(2)], [_c(2)], [_c(2)], None,
                             [torch.tensor(0, dtype=torch.int64)]), "float32 or float64"),
    (lambda: _C._fused_sgd_([_c(2)], [_c(2)], [_c(3)], lr=0.1, momentum=0.9), "shape"),
])
def test_fused_entry_errors_cuda(call, msg):
    with pytest.raises(RuntimeError, match=msg):
        call()


def test_fused_entry_changes_nothing_on_error():
    p, g = _c(3), torch.ones(3, device="cuda")
    s = _step()
    with pytest.raises(RuntimeError):
        _C._fused_adam_([p, p], [g, g], [_c(3), _c(3)], [_c(3), _c(4)], None, [s, _step()])
    assert s.item() == 0.0 and p.cpu().tolist() == [0.0, 0.0, 0.0]
