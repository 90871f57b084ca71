"""The autograd API users call: Tensor.backward, autograd.backward and
autograd.grad (argument forms, defaults, torch's errors), retain/create graph,
hooks and retain_grad, accumulation, leaves and detach, version counters,
broadcasting, deep graphs, threads. torch 2.x is the reference; where real
torch imports, the messages are also compared with its own (torch_oracle)."""
import re
import threading

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import autograd

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means "no torch"
    real_torch = None


def npy(t):
    return t.detach().cpu().numpy()


def leaf(values, dtype=torch.float64, device="cpu"):
    return torch.tensor(values, dtype=dtype, device=device, requires_grad=True)


def torch_message(fn):
    """The message real torch raises for fn(real_torch), with torch. names
    written as ours; None when torch is not importable."""
    if real_torch is None:
        return None
    with pytest.raises(Exception) as info:
        fn(real_torch)
    return str(info.value).replace("torch.", "pycuda_sem.")


def raises_like_torch(exc, message, ours, theirs=None):
    """ours() raises exc with exactly `message`; and torch agrees where it imports."""
    with pytest.raises(exc) as info:
        ours()
    assert str(info.value) == message
    if theirs is not None:
        expected = torch_message(theirs)
        if expected is not None:
            # torch 2.15 words the unused-input error "The differentiated
            # Tensor at index k"; the GPU machine's torch 2.11, as we do
            expected = re.sub(r"The differentiated Tensor at index \d+ appears",
                              "One of the differentiated Tensors appears", expected)
            assert expected == message


# ---- backward / grad: argument forms -----------------------------------------------------

def test_tensor_backward_scalar():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x).sum()
    assert x.grad is None
    y.backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 4.0, 6.0])
    assert not x.grad.requires_grad


def test_tensor_backward_with_gradient_and_keywords():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.backward(gradient=torch.tensor([1.0, 10.0], dtype=torch.float64))
    np.testing.assert_allclose(npy(x.grad), [3.0, 30.0])
    x.grad = None
    z = x * 3
    z.backward(torch.ones(2, dtype=torch.float64), retain_graph=False, create_graph=False)
    np.testing.assert_allclose(npy(x.grad), [3.0, 3.0])


def test_autograd_backward_forms():
    x = leaf([1.0, 2.0])
    autograd.backward((x * 2).sum())
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])
    x.grad = None
    a, b = x * 2, x * 3
    autograd.backward([a, b], [torch.ones(2, dtype=torch.float64),
                               torch.full((2,), 2.0, dtype=torch.float64)])
    np.testing.assert_allclose(npy(x.grad), [8.0, 8.0])
    x.grad = None
    autograd.backward(x * 5, grad_tensors=torch.ones(2, dtype=torch.float64))
    np.testing.assert_allclose(npy(x.grad), [5.0, 5.0])


def test_grad_forms_and_no_accumulation():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    y = (x * w).sum()
    gx, = autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(npy(gx), [3.0, 4.0])
    gx, gw = autograd.grad([y], [x, w])
    np.testing.assert_allclose(npy(gw), [1.0, 2.0])
    assert x.grad is None and w.grad is None
    out = autograd.grad((x * 2,), (x,), (torch.ones(2, dtype=torch.float64),))
    assert isinstance(out, tuple) and len(out) == 1


def test_grad_positional_order_is_torchs():
    # grad(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs,
    #      allow_unused, is_grads_batched, materialize_grads)
    x, u = leaf([1.0]), leaf([2.0])
    y = (x * 2).sum()
    g = autograd.grad(y, [x, u], None, None, False, True, True)
    assert g[1] is None


def test_backward_inputs_restricts_accumulation():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[x])
    assert w.grad is None
    np.testing.assert_allclose(npy(x.grad), [3.0, 4.0])
    (x * w).sum().backward(inputs=w)
    np.testing.assert_allclose(npy(w.grad), [1.0, 2.0])
    np.testing.assert_allclose(npy(x.grad), [3.0, 4.0])


def test_backward_empty_inputs():
    x = leaf([1.0])
    raises_like_torch(RuntimeError, "`inputs` argument to `backward()` cannot be empty.",
                      lambda: (x * 2).sum().backward(inputs=[]),
                      lambda t: (t.ones(1, requires_grad=True) * 2).sum().backward(inputs=[]))


# ---- allow_unused, materialize_grads --------------------------------------------------

def test_grad_unused_input():
    x, u = leaf([1.0]), leaf([2.0])
    msg = ("One of the differentiated Tensors appears to not have been used in the graph. "
           "Set allow_unused=True if this is the desired behavior.")

    def theirs(t):
        a, b = t.ones(1, requires_grad=True), t.ones(1, requires_grad=True)
        t.autograd.grad((a * 2).sum(), [a, b])

    raises_like_torch(RuntimeError, msg, lambda: autograd.grad((x * 2).sum(), [x, u]), theirs)
    gx, gu = autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gu is None
    np.testing.assert_allclose(npy(gx), [2.0])


def test_materialize_grads():
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    a = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    y = x * a
    dydx, = autograd.grad(y, x, create_graph=True)
    none, = autograd.grad(dydx, x, create_graph=True, allow_unused=True)
    assert none is None
    d2, = autograd.grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
    assert d2.item() == 0 and d2.shape == x.shape and d2.requires_grad
    d3, = autograd.grad(d2, x, materialize_grads=True)  # allow_unused implied
    assert d3.item() == 0 and not d3.requires_grad
    with pytest.raises(ValueError, match=re.escape(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False.")):
        autograd.grad(y, x, allow_unused=False, materialize_grads=True)


# ---- create_graph, retain_graph ------------------------------------------------------------

def test_double_backward_of_cube():
    x = leaf([1.0, 2.0, -3.0])
    y = x ** 3
    g, = autograd.grad(y.sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(npy(g), 3 * np.array([1.0, 2.0, -3.0]) ** 2)
    g2, = autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(npy(g2), 6 * np.array([1.0, 2.0, -3.0]))
    g3, = autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(npy(g3), [6.0, 6.0, 6.0])


def test_create_graph_backward_into_grad():
    x = leaf([2.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    gx = x.grad
    x.grad = None
    gx.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [12.0])


SECOND_TIME = ("Trying to backward through the graph a second time (or directly access saved "
               "tensors after they have already been freed). Saved intermediate values of the "
               "graph are freed when you call .backward() or autograd.grad(). Specify "
               "retain_graph=True if you need to backward through the graph a second time or if "
               "you need to access saved tensors after calling backward.")


def test_retain_graph_and_second_backward_error():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(npy(x.grad), [4.0, 8.0])

    def theirs(t):
        a = t.ones(2, requires_grad=True)
        b = (a * a).sum()
        b.backward()
        b.backward()

    raises_like_torch(RuntimeError, SECOND_TIME, y.backward, theirs)


def test_grad_frees_graph_unless_retained():
    x = leaf([1.0])
    y = (x * x).sum()
    autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=re.escape("Trying to backward through the graph a "
                                                     "second time")):
        autograd.grad(y, x)


def test_create_graph_retains_by_default():
    x = leaf([1.0])
    y = (x * x).sum()
    autograd.grad(y, x, create_graph=True)
    autograd.grad(y, x)  # retain_graph defaulted to create_graph=True


# ---- bad initial gradients -------------------------------------------------------------

def test_non_scalar_without_gradient():
    x = leaf([1.0, 2.0])
    raises_like_torch(RuntimeError, "grad can be implicitly created only for scalar outputs",
                      lambda: (x * 2).backward(),
                      lambda t: (t.ones(2, requires_grad=True) * 2).backward())
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        autograd.grad(x * 2, x)


def test_gradient_of_wrong_shape():
    x = leaf([1.0, 2.0])
    y = x * 2
    msg = ("Mismatch in shape: grad_output[0] has a shape of pycuda_sem.Size([3]) and "
           "output[0] has a shape of pycuda_sem.Size([2]).")

    def theirs(t):
        (t.ones(2, requires_grad=True) * 2).backward(t.ones(3))

    raises_like_torch(RuntimeError, msg, lambda: y.backward(torch.ones(3, dtype=torch.float64)),
                      theirs)


def test_gradient_of_wrong_type():
    x = leaf([1.0])
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got int"):
        autograd.backward([x * 2], [1])


def test_gradient_complexness_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=re.escape(
            "For complex Tensors, both grad_output and output are required to have the same "
            "dtype. Mismatch in dtype: grad_output[0] has a dtype of pycuda_sem.complex128 and "
            "output[0] has a dtype of pycuda_sem.float64.")):
        (x * 2).backward(torch.ones(2, dtype=torch.complex128))


def test_backward_of_tensor_not_requiring_grad():
    x = torch.ones(2)
    raises_like_torch(RuntimeError,
                      "element 0 of tensors does not require grad and does not have a grad_fn",
                      lambda: x.sum().backward(), lambda t: t.ones(2).sum().backward())


def test_grad_wrt_tensor_not_requiring_grad():
    x, c = leaf([1.0]), torch.ones(1, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require "
                                           "grad"):
        autograd.grad((x * c).sum(), [x, c])


def test_process_keeps_working_after_errors():
    x = leaf([1.0, 2.0])
    for bad in (lambda: (x * 2).backward(),
                lambda: (x * 2).backward(torch.ones(5, dtype=torch.float64))):
        with pytest.raises(RuntimeError):
            bad()
    (x * 2).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])


# ---- hooks, retain_grad ------------------------------------------------------------------------

def test_register_hook_replaces_grad_and_remove():
    x = leaf([1.0, 2.0])
    seen = []

    def hook(g):
        seen.append(npy(g))
        return g * 10

    handle = x.register_hook(hook)
    (x * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [3.0, 3.0])
    np.testing.assert_allclose(npy(x.grad), [30.0, 30.0])
    handle.remove()
    handle.remove()  # twice is fine
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [3.0, 3.0])
    assert len(seen) == 1


def test_hook_on_non_leaf_and_none_return():
    x = leaf([1.0, 2.0])
    y = x * 2
    calls = []
    y.register_hook(lambda g: calls.append(npy(g)))  # returns None: grad unchanged
    y.register_hook(lambda g: g + 1)
    (y * y).sum().backward()
    np.testing.assert_allclose(calls[0], [4.0, 8.0])
    np.testing.assert_allclose(npy(x.grad), [10.0, 18.0])  # (2y + 1) * 2


def test_hook_handle_is_removable_handle_and_context_manager():
    from pycuda_sem.utils.hooks import RemovableHandle
    x = leaf([1.0])
    with x.register_hook(lambda g: g * 0) as h:
        assert isinstance(h, RemovableHandle) and isinstance(h.id, int)
        (x * 2).sum().backward()
        assert npy(x.grad)[0] == 0
    x.grad = None
    (x * 2).sum().backward()
    assert npy(x.grad)[0] == 2


def test_hook_returning_wrong_shape():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: torch.ones(3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        (x * 2).sum().backward()


def test_register_hook_on_tensor_not_requiring_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        torch.ones(1).register_hook(lambda g: g)


def test_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    z = x * 3
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    x.retain_grad()  # no-op on a leaf
    assert not x.retains_grad
    (y * z).sum().backward()
    np.testing.assert_allclose(npy(y.grad), npy(z))
    assert z.grad is None  # non-leaf without retain_grad (torch warns on access)


def test_post_accumulate_grad_hook():
    x = leaf([1.0, 2.0])
    seen = []

    def hook(t):
        assert t is x
        seen.append(npy(t.grad).copy())  # .grad is accumulated into in place
    x.register_post_accumulate_grad_hook(hook)
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    np.testing.assert_allclose(seen[0], [2.0, 2.0])
    np.testing.assert_allclose(seen[1], [4.0, 4.0])
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on "
                                           "non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(hook)


# ---- accumulation, leaves, detach -----------------------------------------------------------

def test_grad_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 2).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [4.0, 6.0])
    x.grad = None
    assert x.grad is None
    (x * 2).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])
    del x.grad
    assert x.grad is None


def test_grad_setter_checks():
    x = leaf([1.0, 2.0])
    x.grad = torch.zeros(2, dtype=torch.float64)
    (x * 2).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError):
        x.grad = torch.zeros(3, dtype=torch.float64)


@pytest.mark.parametrize("make", [
    lambda: torch.zeros(2, requires_grad=True),
    lambda: torch.ones(2, 3, requires_grad=True),
    lambda: torch.full((2,), 1.5, requires_grad=True),
    lambda: torch.empty(3, requires_grad=True),
    lambda: torch.tensor([1.0, 2.0], requires_grad=True),
    lambda: torch.arange(3.0, requires_grad=True),
    lambda: torch.linspace(0, 1, 5, requires_grad=True),
    lambda: torch.eye(2, requires_grad=True),
    lambda: torch.rand(2, requires_grad=True),
    lambda: torch.randn(2, requires_grad=True),
    lambda: torch.zeros_like(torch.ones(2), requires_grad=True),
    lambda: torch.ones_like(torch.ones(2), requires_grad=True),
    lambda: torch.ones(2).new_zeros(3, requires_grad=True),
])
def test_requires_grad_on_factories(make):
    t = make()
    assert t.requires_grad and t.is_leaf and t.grad_fn is None and t.grad is None


def test_requires_grad_defaults_and_integer_dtypes():
    t = torch.ones(2)
    assert not t.requires_grad and t.is_leaf
    t.requires_grad_()
    assert t.requires_grad
    t.requires_grad = False
    assert not t.requires_grad
    msg = "Only Tensors of floating point and complex dtype can require gradients"
    raises_like_torch(RuntimeError, msg, lambda: torch.ones(2, dtype=torch.int64,
                                                            requires_grad=True),
                      lambda t_: t_.ones(2, dtype=t_.int64, requires_grad=True))
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require "
                                           "gradients"):  # torch's wording on this path
        torch.ones(2, dtype=torch.int32).requires_grad_()


def test_results_of_ops_are_non_leaves():
    x = leaf([1.0])
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    assert y.grad_fn.name() == "MulBackward0"
    with torch.no_grad():
        z = x * 2
    assert not z.requires_grad and z.is_leaf and z.grad_fn is None
    with pytest.raises(RuntimeError):
        y.requires_grad = False  # torch: only leaves can have requires_grad changed


def test_detach_shares_storage():
    x = leaf([1.0, 2.0])
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    with torch.no_grad():
        d[0] = 7.0
    assert x[0].item() == 7.0
    y = x * 2
    yd = y.detach()
    assert yd.grad_fn is None and not yd.requires_grad
    assert x.data.requires_grad is False
    y2 = x * 2
    y2.detach_()
    assert not y2.requires_grad and y2.grad_fn is None and y2.is_leaf


def test_variable_returns_a_tensor_that_can_require_grad():
    v = autograd.Variable(torch.ones(2, dtype=torch.float64), requires_grad=True)
    assert isinstance(v, torch.Tensor) and v.requires_grad and v.is_leaf
    (v * 3).sum().backward()
    np.testing.assert_allclose(npy(v.grad), [3.0, 3.0])


# ---- version counter, in-place rules ------------------------------------------------------

def test_version_counter_error_after_inplace_on_saved_tensor():
    x = leaf([1.0, 2.0, 3.0])
    a = x * 2
    v0 = a._version
    b = a * a  # saves a
    a.add_(1)
    assert a._version == v0 + 1
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation "
                                           "has been modified by an inplace operation"):
        b.sum().backward()


def test_version_counter_error_on_saved_result():
    x = leaf([0.5, 1.0])
    y = x.exp()  # saves its result
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_unsaved_tensor_is_fine():
    x = leaf([1.0, 2.0])
    a = x * 2
    b = a + 1  # add saves nothing
    a.mul_(3)
    b.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])


def test_leaf_inplace_error():
    x = leaf([1.0])
    msg = "a leaf Variable that requires grad is being used in an in-place operation."

    def theirs(t):
        t.ones(1, requires_grad=True).add_(1)

    raises_like_torch(RuntimeError, msg, lambda: x.add_(1), theirs)
    with torch.no_grad():
        x.add_(1)  # allowed under no_grad
    assert x.item() == 2.0


def test_inplace_on_non_leaf_gives_correct_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [6.0, 6.0])


def test_inplace_on_view_of_non_leaf():
    # the issue allows torch's rebase of the view's history, or a clear error
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    try:
        y[1:].mul_(5)
    except RuntimeError as e:
        assert "view" in str(e)
        return
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [1.0, 5.0, 5.0])


# ---- broadcasting -----------------------------------------------------------------------------

def test_broadcast_grads_are_reduced_to_shape():
    a = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64, requires_grad=True)  # (3, 1)
    b = torch.tensor([[1.0, 10.0, 100.0, 1000.0]], dtype=torch.float64,
                     requires_grad=True)  # (1, 4)
    s = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)  # ()
    (a * b * s).sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape and s.grad.shape == s.shape
    np.testing.assert_allclose(npy(a.grad), np.full((3, 1), 1111.0 * 2))
    np.testing.assert_allclose(npy(b.grad), np.full((1, 4), 6.0 * 2))  # sum over i of a_i * s
    np.testing.assert_allclose(npy(s.grad), 6.0 * 1111.0)


def test_broadcast_with_leading_dims():
    a = leaf([1.0, 2.0])  # (2,) broadcast against (3, 2)
    b = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    (a + b).sum().backward()
    np.testing.assert_allclose(npy(a.grad), [3.0, 3.0])
    np.testing.assert_allclose(npy(b.grad), np.ones((3, 2)))


# ---- deep graphs, threads, grad modes ----------------------------------------------------

def test_chain_of_1e5_ops_backs_through():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [1.0])
    del y  # freeing the chain must not recurse either


def test_freeing_a_deep_graph_does_not_recurse():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y + 1.0
    del y


def test_two_threads_backward_on_separate_graphs():
    results, errors = {}, []

    def work(k):
        try:
            x = leaf([float(k), 1.0])
            for _ in range(200):
                y = (x * x * float(k + 1)).sum()
                g, = autograd.grad(y, x)
                assert np.allclose(npy(g), 2.0 * (k + 1) * npy(x))
            z = (x * 3).sum()
            z.backward()
            results[k] = npy(x.grad)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(2):
        np.testing.assert_allclose(results[k], [3.0, 3.0])


def test_grad_mode_is_per_thread_during_backward():
    x = leaf([1.0])
    seen = []

    def other():
        seen.append(torch.is_grad_enabled())

    with torch.no_grad():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        y = x * 2
    assert seen == [True] and not y.requires_grad


def test_backward_under_no_grad_still_runs():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    with torch.no_grad():
        y.backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 4.0])


def test_grad_fn_next_functions():
    x = leaf([1.0])
    y = x * 2
    z = y + 1
    fns = z.grad_fn.next_functions
    assert fns[0][0] is y.grad_fn
    acc = y.grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.variable is x


# ---- CUDA ---------------------------------------------------------------------------------------

@pytest.mark.cuda
def test_cuda_backward_and_grad(balanced):
    x = leaf([1.0, 2.0, 3.0], device="cuda")
    y = (x * x).sum()
    y.backward()
    assert x.grad.device == x.device
    np.testing.assert_allclose(npy(x.grad), [2.0, 4.0, 6.0])
    g, = autograd.grad((x ** 3).sum(), x, create_graph=True)
    g2, = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(npy(g2), [6.0, 12.0, 18.0])
    del x, y, g, g2


@pytest.mark.cuda
def test_cuda_errors_leave_memory_balanced(balanced):
    x = leaf([1.0, 2.0], device="cuda")
    with pytest.raises(RuntimeError):
        (x * 2).backward()
    with pytest.raises(RuntimeError):
        (x * 2).backward(torch.ones(3, dtype=torch.float64, device="cuda"))
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    del x, y


@pytest.mark.cuda
def test_cuda_to_device_is_differentiable():
    x = leaf([1.0, 2.0])
    y = x.to("cuda") * 2
    y.sum().backward()
    assert x.grad.device == x.device
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])


def test_an_op_that_returns_its_input_keeps_its_history():
    """to() and contiguous() with nothing to change hand back the tensor
    itself; its grad_fn stays the op that made it, as in torch."""
    a = torch.randn(3, requires_grad=True)
    e = a * 2
    node = e.grad_fn
    assert e.to(torch.float32) is e and e.contiguous() is e and e.float() is e
    assert e.grad_fn is node and e.grad_fn.name() == "MulBackward0"
    e.to(torch.float32).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(3, 2.0, np.float32))


# x[key] for x of shape [4, 5, 6]: the key (built with either library) and the
# name torch 2.15 gives the node; torch skips, inside a tuple, a slice that
# starts at 0 with step 1 and reaches the dim's end.
_GETITEM_NAMES = [
    (lambda T: 0, "SelectBackward0"),
    (lambda T: -1, "SelectBackward0"),
    (lambda T: np.int64(1), "SelectBackward0"),
    (lambda T: slice(1, 3), "SliceBackward0"),
    (lambda T: slice(None), "SliceBackward0"),
    (lambda T: (0, slice(None)), "SelectBackward0"),
    (lambda T: (slice(None), 0), "SelectBackward0"),
    (lambda T: (slice(None), slice(None)), "AliasBackward0"),
    (lambda T: (slice(0, 4), slice(None)), "AliasBackward0"),
    (lambda T: (slice(1, 3), slice(None)), "SliceBackward0"),
    (lambda T: (0, slice(0, 100)), "SelectBackward0"),
    (lambda T: (0, slice(-100, 100)), "SliceBackward0"),
    (lambda T: (0, slice(0, 5, 2)), "SliceBackward0"),
    (lambda T: (0, slice(1, 3)), "SliceBackward0"),
    (lambda T: (slice(1, 3), 0), "SelectBackward0"),
    (lambda T: (slice(None), 0, slice(None)), "SelectBackward0"),
    (lambda T: None, "UnsqueezeBackward0"),
    (lambda T: (0, None), "UnsqueezeBackward0"),
    (lambda T: (None, 0), "SelectBackward0"),
    (lambda T: Ellipsis, "AliasBackward0"),
    (lambda T: (Ellipsis, 0), "SelectBackward0"),
    (lambda T: (Ellipsis, slice(0, 6)), "AliasBackward0"),
    (lambda T: (Ellipsis, slice(1, 6)), "SliceBackward0"),
    (lambda T: (0, Ellipsis, None), "UnsqueezeBackward0"),
    (lambda T: (), "AliasBackward0"),
    (lambda T: T.tensor(1), "SelectBackward0"),
    (lambda T: (0, T.tensor(1)), "SelectBackward0"),
    (lambda T: T.tensor([0, 1]), "IndexBackward0"),
    (lambda T: (T.tensor([0, 1]), 0), "IndexBackward0"),
    (lambda T: (slice(None), T.tensor([0, 1]), slice(1, 3)), "IndexBackward0"),
    (lambda T: [0, 1], "IndexBackward0"),
    (lambda T: T.tensor([True, False, True, True]), "IndexBackward0"),
    (lambda T: True, "IndexBackward0"),
    (lambda T: (0, True), "IndexBackward0"),
]


class _NumpyKeys:
    tensor = staticmethod(np.array)


@pytest.mark.parametrize("case", range(len(_GETITEM_NAMES)))
def test_getitem_node_is_named_after_the_view_it_takes(case):
    make_key, name = _GETITEM_NAMES[case]
    x = torch.randn(4, 5, 6, requires_grad=True)
    y = x[make_key(torch)]
    assert y.grad_fn.name() == name
    assert ("grad_fn=<%s>" % name) in repr(y)
    if real_torch is not None:
        rx = real_torch.randn(4, 5, 6, requires_grad=True)
        assert type(rx[make_key(real_torch)].grad_fn).__name__ == name
    y.sum().backward()  # the gradient is the same whatever the name
    positions = np.arange(120).reshape(4, 5, 6)[make_key(_NumpyKeys)]
    want = np.bincount(np.ravel(positions), minlength=120).reshape(4, 5, 6)
    np.testing.assert_array_equal(npy(x.grad), want.astype(np.float32))


def test_getitem_keeps_the_input_node_when_it_returns_the_input():
    """x[key] on a non-leaf renames only the node it made, never x's own."""
    a = torch.randn(4, 5, requires_grad=True)
    e = a * 2
    e[0]
    assert e.grad_fn.name() == "MulBackward0"
    with torch.no_grad():
        assert e[0].grad_fn is None
