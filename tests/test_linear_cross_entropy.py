"""nn.functional.linear_cross_entropy and nn.LinearCrossEntropyLoss (torch
2.15): the reference composition, the chunked path (LinearCrossEntropyOptions)
against it in values and gradients, the fallbacks with their warning, the
second backward, the module's parameters, and torch's argument errors."""
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
# float32 products in full precision on CUDA (TF32 is on by default), as the
# references are float64
pytestmark = pytest.mark.usefixtures("no_tf32")
HAS_ORACLE = real_torch is not None and hasattr(real_torch.nn.functional, "linear_cross_entropy")

N, D, C = 37, 16, 50


def _data(seed=0, ignore=-100):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, D))
    w = rng.standard_normal((C, D)) * 0.3
    b = rng.standard_normal(C) * 0.1
    t = rng.integers(0, C, N)
    t[[3, 7]] = ignore
    cw = rng.uniform(0.5, 2.0, C)
    return x, w, b, t, cw


def _run(lib, device, kw, options, dtype="float64", ignore=-100):
    x, w, b, t, cw = _data(ignore=ignore)
    dt = getattr(lib, dtype)
    xx, ww, bb = (lib.tensor(a, dtype=dt, device=device).requires_grad_() for a in (x, w, b))
    kw = dict(kw)
    if "weight" in kw:
        kw["weight"] = lib.tensor(cw, dtype=dt, device=device)
    loss = lib.nn.functional.linear_cross_entropy(xx, ww, lib.tensor(t, device=device), linear_bias=bb,
                                                  options=options, **kw)
    (loss * 1.7).backward()
    return [np.asarray(a.detach().cpu().double().numpy()) for a in (loss, xx.grad, ww.grad, bb.grad)]


_KWARGS = [dict(), dict(reduction="sum"), dict(weight=True), dict(label_smoothing=0.1),
           dict(weight=True, label_smoothing=0.2), dict(ignore_index=5)]
_OPTIONS = [dict(batch_chunk_size=5), dict(), dict(chunking_method="aspect_ratio:2"),
            dict(chunking_method=None), dict(batch_chunk_size=1000)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", _KWARGS, ids=str)
@pytest.mark.parametrize("opts", _OPTIONS, ids=str)
def test_chunked_path_equals_the_reference(device, kw, opts):
    ignore = kw.get("ignore_index", -100)
    want = _run(torch, device, kw, None, ignore=ignore)
    got = _run(torch, device, kw, torch.nn.LinearCrossEntropyOptions(**opts), ignore=ignore)
    for g, a in zip(got, want):
        np.testing.assert_allclose(g, a, rtol=1e-10, atol=1e-12)
    if HAS_ORACLE and device == "cpu":
        theirs = _run(real_torch, "cpu", kw, None, ignore=ignore)
        for g, a in zip(got, theirs):
            np.testing.assert_allclose(g, a, rtol=1e-10, atol=1e-12)


def test_the_reference_is_linear_then_cross_entropy():
    x, w, b, t, _ = _data()
    xt, wt, bt, tt = torch.tensor(x), torch.tensor(w), torch.tensor(b), torch.tensor(t)
    want = F.cross_entropy(F.linear(xt, wt, bt), tt)
    assert float(F.linear_cross_entropy(xt, wt, tt, linear_bias=bt)) == pytest.approx(float(want), rel=1e-12)
    # K-dimensional: the logits reshaped to (N, C, d1)
    w3 = torch.tensor(np.random.default_rng(1).standard_normal((5, 2, D)))
    t3 = torch.randint(0, 5, (N, 2))
    want = F.cross_entropy(F.linear(xt, w3.reshape(10, D)).reshape(N, 5, 2), t3, reduction="none")
    got = F.linear_cross_entropy(xt, w3, t3, reduction="none")
    assert got.shape == (N, 2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_inputs_sum_their_gradients_in_float32(device, dtype):
    if device == "cpu" and dtype == "float16":
        pytest.skip("float16 matmul is a CUDA path here")
    opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=8)
    got = _run(torch, device, dict(), opts, dtype=dtype)
    want = _run(torch, "cpu", dict(), None, dtype="float64")
    tol = 2e-2 if dtype == "bfloat16" else 5e-3
    for g, a in zip(got, want):
        np.testing.assert_allclose(g, a, rtol=tol, atol=tol * np.abs(a).max())


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_second_backward_needs_allow_retain_graph(reduction):
    x, w, b, t, _ = _data()
    for retain in (False, True):
        xt = torch.tensor(x, requires_grad=True)
        opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=7, allow_retain_graph=retain)
        loss = F.linear_cross_entropy(xt, torch.tensor(w), torch.tensor(t), reduction=reduction, options=opts)
        loss.backward(retain_graph=True)
        first = xt.grad.clone()
        if retain:
            loss.backward()
            np.testing.assert_allclose(xt.grad.numpy(), 2 * first.numpy(), rtol=1e-12)
        else:
            with pytest.raises(RuntimeError, match="allow_retain_graph=True"):
                loss.backward()


def test_unsupported_configurations_fall_back_with_a_warning():
    x, w, b, t, _ = _data()
    xt, wt, tt = torch.tensor(x), torch.tensor(w), torch.tensor(t)
    opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=4)
    with pytest.warns(UserWarning, match="reduction='none'"):
        r = F.linear_cross_entropy(xt, wt, tt, reduction="none", options=opts)
    np.testing.assert_allclose(r.numpy(), F.linear_cross_entropy(xt, wt, tt, reduction="none").numpy())
    probs = torch.softmax(torch.randn(N, C, dtype=torch.float64), 1)
    with pytest.warns(UserWarning, match="class-probability targets"):
        r = F.linear_cross_entropy(xt, wt, probs, options=opts)
    assert float(r) == pytest.approx(float(F.cross_entropy(F.linear(xt, wt), probs)), rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the supported case does not warn
        F.linear_cross_entropy(xt, wt, tt, options=opts)


def test_module_holds_a_flat_linear_and_matches_the_functional():
    m = torch.nn.LinearCrossEntropyLoss(D, 5, out_features=(2,), bias=True)
    assert list(m.state_dict()) == ["linear.weight", "linear.bias"]
    assert tuple(m.linear.weight.shape) == (10, D) and tuple(m.linear.bias.shape) == (10,)
    x, t = torch.randn(N, D), torch.randint(0, 5, (N, 2))
    want = F.linear_cross_entropy(x, m.linear.weight.reshape(5, 2, D), t, linear_bias=m.linear.bias.reshape(5, 2))
    assert float(m(x, t)) == pytest.approx(float(want))
    assert "num_classes=5, out_features=(2,), bias=True" in repr(m)
    if HAS_ORACLE:
        theirs = real_torch.nn.LinearCrossEntropyLoss(D, 5, out_features=(2,), bias=True)
        assert repr(theirs).replace("torch.", "") == repr(m).replace("pycuda_sem.", "")
    chunked = torch.nn.LinearCrossEntropyLoss(D, 7, options=torch.nn.LinearCrossEntropyOptions(batch_chunk_size=3))
    x = torch.randn(N, D, requires_grad=True)
    t = torch.randint(0, 7, (N,))
    chunked(x, t).backward()
    want = torch.autograd.grad(F.cross_entropy(F.linear(x, chunked.linear.weight), t), x)[0]
    np.testing.assert_allclose(x.grad.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call,err,msg", [
    (lambda: F.linear_cross_entropy(torch.randn(2, 4, 3), torch.randn(5, 3), torch.zeros(2, 4, dtype=torch.int64)),
     RuntimeError, "expected input with dimensionality 1 or 2, got 3"),
    (lambda: F.linear_cross_entropy(torch.randn(4, 3), torch.randn(3), torch.zeros(4, dtype=torch.int64)),
     RuntimeError, "expected linear_weight with dimensionality at least 2, got 1"),
    (lambda: F.linear_cross_entropy(torch.randn(4, 3), torch.randn(5, 2), torch.zeros(4, dtype=torch.int64)),
     RuntimeError, "expected equal input and linear_weight last dimensions"),
    (lambda: F.linear_cross_entropy(torch.randn(4, 3), torch.randn(5, 3), torch.zeros(4, dtype=torch.int64),
                                    linear_bias=torch.randn(4)), RuntimeError, r"expected linear_bias shape \(5,\)"),
    (lambda: F.linear_cross_entropy(torch.randn(4, 3), torch.randn(5, 3), torch.rand(4, 5), ignore_index=1),
     RuntimeError, "ignore_index cannot be specified when target contains probabilities"),
    (lambda: torch.nn.LinearCrossEntropyOptions(acc_policy="x"), ValueError, "invalid acc_policy"),
    (lambda: torch.nn.LinearCrossEntropyOptions(chunking_method="abc"), ValueError, "invalid chunking_method"),
    (lambda: torch.nn.LinearCrossEntropyOptions(batch_chunk_size=0), ValueError, "batch_chunk_size must be positive"),
    (lambda: torch.nn.LinearCrossEntropyLoss(3, 5, weight=torch.ones(4)), RuntimeError,
     r"expected weight shape to be \(5,\), got \(4,\)"),
    (lambda: torch.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=2.0), RuntimeError,
     r"expected label_smoothing to be in range \[0, 1\]"),
    (lambda: F.linear_cross_entropy(torch.randn(4, 3), torch.randn(5, 3), torch.zeros(4, dtype=torch.int64),
                                    options="fast"), TypeError, "options must be a LinearCrossEntropyOptions"),
])
def test_errors(call, err, msg):
    with pytest.raises(err, match=msg):
        call()
