"""The grad modes (torch.no_grad, enable_grad, set_grad_enabled,
inference_mode): context managers and decorators, nesting, exceptions,
generators, and one state per thread, as in torch. No tensor can require
grad yet, so these check the switches themselves."""
import threading

import pytest

import pycuda_sem as torch


def test_default_and_nesting():
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            assert torch.is_grad_enabled()
            with torch.set_grad_enabled(False):
                assert not torch.is_grad_enabled()
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_exceptions_restore_the_mode():
    with pytest.raises(ZeroDivisionError):
        with torch.no_grad():
            1 / 0
    assert torch.is_grad_enabled()
    with pytest.raises(KeyError):
        with torch.inference_mode():
            raise KeyError("x")
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


def test_decorators_with_and_without_parentheses():
    @torch.no_grad
    def bare():
        return torch.is_grad_enabled()

    @torch.no_grad()
    def called():
        return torch.is_grad_enabled()

    @torch.inference_mode
    def inf_bare():
        return torch.is_inference_mode_enabled(), torch.is_grad_enabled()

    @torch.inference_mode(False)
    def inf_off():
        return torch.is_inference_mode_enabled()

    assert bare() is False and called() is False
    assert inf_bare() == (True, False)
    with torch.inference_mode():
        assert inf_off() is False
        assert torch.is_inference_mode_enabled()
    assert bare.__name__ == "bare"
    assert torch.is_grad_enabled()

    with torch.no_grad():
        @torch.enable_grad()
        def on():
            return torch.is_grad_enabled()
        assert on() is True and not torch.is_grad_enabled()


def test_set_grad_enabled_as_function_context_and_decorator():
    torch.set_grad_enabled(False)
    try:
        assert not torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()

    @torch.set_grad_enabled(False)
    def f():
        return torch.is_grad_enabled()

    assert torch.is_grad_enabled()  # decorating sets nothing
    assert f() is False and torch.is_grad_enabled()
    with pytest.raises(TypeError, match="must be bool"):
        torch.set_grad_enabled("yes")
    assert torch.is_grad_enabled()


def test_generator_runs_under_the_mode_at_each_step():
    @torch.no_grad()
    def gen():
        for _ in range(3):
            got = yield torch.is_grad_enabled()
            assert got == "ping"
        return "done"

    g = gen()
    assert next(g) is False
    assert torch.is_grad_enabled()  # outside the generator, untouched
    assert g.send("ping") is False
    assert torch.is_grad_enabled()
    assert g.send("ping") is False
    with pytest.raises(StopIteration) as stop:
        g.send("ping")
    assert stop.value.value == "done"


def test_decorating_a_class_raises():
    with pytest.raises(TypeError):
        torch.no_grad()(type("C", (), {}))


def test_each_thread_has_its_own_mode():
    seen = {}
    ready, go = threading.Event(), threading.Event()

    def worker():
        seen["start"] = torch.is_grad_enabled()
        torch.set_grad_enabled(False)
        ready.set()
        go.wait(10)
        seen["end"] = torch.is_grad_enabled()

    with torch.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        ready.wait(10)
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()  # the worker's False did not leak here
    go.set()
    t.join(10)
    assert seen == {"start": True, "end": False}


def test_autograd_namespace():
    assert torch.autograd.no_grad is torch.no_grad
    assert torch.autograd.grad_mode.inference_mode is torch.inference_mode
    with pytest.raises(TypeError):
        torch._C._set_grad_enabled(None)


def test_requires_grad_false_and_true():
    x = torch.ones(3)
    assert x.requires_grad_(False) is x and not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        torch.ones(3, dtype=torch.int64).requires_grad_()


def test_variable_is_a_detached_tensor():
    from pycuda_sem.autograd import Variable
    x = torch.arange(6.0).reshape(2, 3)
    v = Variable(x)
    assert isinstance(v, torch.Tensor) and isinstance(x, Variable)
    assert v is not x and v.data_ptr() == x.data_ptr() and v.shape == x.shape
    v[0, 0] = 7  # shares storage, as torch's detach()
    assert x[0, 0].item() == 7
    assert Variable().shape == (0,)
    with pytest.warns(UserWarning, match="volatile"):
        Variable(x, volatile=True)
    with pytest.raises(TypeError, match="has to be a tensor"):
        Variable([1, 2])
    r = Variable(x, requires_grad=True)
    assert r.requires_grad and r.is_leaf and not x.requires_grad


def _legacy_note_loop(dtype):
    """The legacy note's loop, as written there (train_loader made up)."""
    from pycuda_sem.autograd import Variable
    train_loader = [torch.DoubleTensor(2, 2).fill_(i) for i in range(3)]
    seen = []
    for i, x in enumerate(train_loader):
        x = Variable(x.type(dtype))
        seen.append((x.type(), x.sum().item()))
    return seen


def test_legacy_note_variable_example_cpu():
    assert _legacy_note_loop(torch.FloatTensor) == [("pycuda_sem.FloatTensor", 4.0 * i) for i in range(3)]


@pytest.mark.cuda
def test_legacy_note_variable_example_cuda():
    assert _legacy_note_loop(torch.cuda.FloatTensor) == [("pycuda_sem.cuda.FloatTensor", 4.0 * i)
                                                         for i in range(3)]
