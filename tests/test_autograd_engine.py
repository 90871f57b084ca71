"""The engine's own promises (csrc/autograd/): graphs freed by reference
counting alone, saved tensors dropped once their node ran, no recursion on
long chains (backward and teardown), the fast path not recording, version
counters, views, and the C formulas agreeing with the Python ones."""
import gc
import threading
import weakref

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import _C


def _rand(*shape, rg=True):
    t = torch.tensor(np.random.default_rng(len(shape)).uniform(0.5, 1.5, shape))
    return t.requires_grad_() if rg else t


def test_del_of_the_last_output_frees_the_graph_without_gc():
    x = _rand(4)
    y = (x * 2).exp().sum()
    ref = weakref.ref(y.grad_fn)
    inner = weakref.ref(y.grad_fn.next_functions[0][0])
    gc.disable()
    try:
        del y
        assert ref() is None and inner() is None
    finally:
        gc.enable()


def test_saved_tensors_are_released_after_backward():
    x = _rand(3)
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        node.result
    z = x.exp()
    z.sum().backward(retain_graph=True)
    assert torch.equal(z.grad_fn.result, z.detach())


def test_long_chain_backward_and_teardown_do_not_recurse():
    a = _rand(1)
    b = a
    for _ in range(100_000):
        b = b * 1.0
    b.sum().backward()
    assert a.grad.item() == 1.0
    del b  # 10^5 nodes freed one after another, not nested


def test_fast_path_records_nothing():
    x = _rand(3)
    with torch.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    z = _rand(3, rg=False) * 2
    assert z.grad_fn is None and z.is_leaf


def test_version_counter_and_inplace_rules():
    x = _rand(3)
    h = x * 1.0
    v0 = h._version
    h.add_(1)
    assert h._version == v0 + 1 and h.grad_fn.name() == "AddBackward0"
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.mul_(2)
    y = x * 1.0
    m = y * y  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        m.sum().backward()
    # A view whose base something else still holds is refused (torch would
    # rebase the base's history); a view of a temporary nothing else holds is
    # written as a tensor of its own, as torch allows (test_script_patterns.py).
    base = x * 1.0
    view = base[0:2]
    with pytest.raises(RuntimeError, match="view of a tensor that requires grad"):
        view.mul_(2)
    view = (x * 1.0)[0:2]
    view.mul_(2)
    assert view.grad_fn.name() == "MulBackward0"


def test_out_argument_with_grad_raises():
    x = _rand(3)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        torch.add(x, 1, out=torch.empty(3, dtype=torch.float64))


def test_c_formulas_match_python_formulas():
    # the C twins (fast_formulas.c) and the Python formulas give the same grads
    x, y = _rand(3, 4), _rand(3, 4)
    w = _rand(4, 5)

    def run():
        for t in (x, y, w):
            t.grad = None
        out = ((x * y + x - y / (y + 1)).relu().mm(w).t().reshape(-1) * 1.5).sum()
        out.backward()
        return [t.grad.clone() for t in (x, y, w)]

    fast = run()
    old = _C._use_c_formulas(False)
    try:
        slow = run()
    finally:
        _C._use_c_formulas(old)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    # and both agree with the closed form for d(sum(x*y))/dx = y
    x.grad = None
    (x * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())


def test_two_threads_backward_on_two_graphs():
    results = {}

    def work(k):
        x = _rand(50)
        for _ in range(200):
            x.grad = None
            ((x * (k + 1)).sum()).backward()
        results[k] = x.grad.clone()

    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert torch.equal(results[0], torch.full((50,), 1.0, dtype=torch.float64))
    assert torch.equal(results[1], torch.full((50,), 2.0, dtype=torch.float64))


def test_grad_mode_is_per_thread_during_backward():
    seen = []
    x = _rand(2)

    def hook(g):
        seen.append(torch.is_grad_enabled())
        return g

    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    y2 = x * 2
    y2.register_hook(hook)
    y2.sum().backward(create_graph=True)
    assert seen == [False, True]
    assert torch.is_grad_enabled()


def test_printing_shows_grad_fn_and_requires_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr((x * 2).sum()) == "tensor(6., grad_fn=<SumBackward0>)"
    assert repr(x.detach()) == "tensor([1., 2.])"
    with torch.no_grad():
        assert repr(x * 2) == "tensor([2., 4.])"
