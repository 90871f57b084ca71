"""torch.autograd.graph and its neighbours: saved-tensor hooks
(saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks: pack at save,
unpack once per use, nesting, errors, reference counts), Node,
get_gradient_edge, register_multi_grad_hook, increment_version, the
multithreading / view-replay flags and the forward_ad stubs. Gradients are
checked against hand-written float64 NumPy and, where it imports, real torch."""
import gc
import weakref

import numpy as np
import pytest

import pycuda_sem as torch
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")
graph = torch.autograd.graph


def npy(t):
    return t.detach().cpu().numpy()


class Counter:
    """Pack/unpack hooks that count their calls and record what they saw."""

    def __init__(self, clone=False):
        self.packs, self.unpacks, self.packed_devices = 0, 0, []
        self.clone = clone

    def pack(self, t):
        self.packs += 1
        self.packed_devices.append(t.device.type)
        return t.detach().clone() if self.clone else t.detach()

    def unpack(self, p):
        self.unpacks += 1
        return p


def mlp_data(device, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, 4))
    w1, b1 = rng.standard_normal((6, 4)), rng.standard_normal(6)
    w2, b2 = rng.standard_normal((3, 6)), rng.standard_normal(3)
    t = rng.standard_normal((5, 3))
    return x, w1, b1, w2, b2, t


def mlp_grads(mod, data, device, ctx=None):
    x, w1, b1, w2, b2, t = data
    params = [mod.tensor(a, dtype=mod.float64, device=device, requires_grad=True)
              for a in (w1, b1, w2, b2)]
    xt = mod.tensor(x, dtype=mod.float64, device=device)
    tt = mod.tensor(t, dtype=mod.float64, device=device)
    F = mod.nn.functional

    def forward():
        h = F.relu(F.linear(xt, params[0], params[1]))
        y = F.linear(h, params[2], params[3]).tanh()
        return ((y - tt) ** 2).mean()

    if ctx is None:
        loss = forward()
    else:
        with ctx:
            loss = forward()
    loss.backward()
    return [p.grad for p in params]


def mlp_reference(data):
    """The MLP's gradients by hand, float64."""
    x, w1, b1, w2, b2, t = data
    z = x @ w1.T + b1
    h = np.maximum(z, 0)
    y = np.tanh(h @ w2.T + b2)
    gy = 2 * (y - t) / y.size
    gu = gy * (1 - y ** 2)
    gw2, gb2 = gu.T @ h, gu.sum(0)
    gz = (gu @ w2) * (z > 0)
    return [gz.T @ x, gz.sum(0), gw2, gb2]


# ---- saved_tensors_hooks --------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("clone", [False, True])
def test_mlp_hooks_count_and_exact_grads(device, clone):
    data = mlp_data(device)
    plain = mlp_grads(torch, data, device)
    c = Counter(clone)
    hooked = mlp_grads(torch, data, device, graph.saved_tensors_hooks(c.pack, c.unpack))
    assert c.packs > 0 and c.unpacks == c.packs  # each saved tensor unpacked once
    for g, h, r in zip(plain, hooked, mlp_reference(data)):
        assert np.array_equal(npy(g), npy(h))  # bit for bit
        np.testing.assert_allclose(npy(h), r, rtol=1e-12, atol=1e-12)
    if real_torch is not None:
        rc = Counter(clone)
        theirs = mlp_grads(real_torch, data, "cpu",
                           real_torch.autograd.graph.saved_tensors_hooks(rc.pack, rc.unpack))
        assert rc.packs > 0 and rc.unpacks == rc.packs
        for h, g in zip(hooked, theirs):
            np.testing.assert_allclose(npy(h), g.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_unpacked_again_at_each_backward(device):
    a = torch.tensor([0.5, -1.25, 2.0], dtype=torch.float64, device=device, requires_grad=True)
    c = Counter()
    with graph.saved_tensors_hooks(c.pack, c.unpack):
        y = (a * a).exp().sum()
    assert (c.packs, c.unpacks) == (3, 0)  # a twice for mul, exp's result
    y.backward(retain_graph=True)
    assert (c.packs, c.unpacks) == (3, 3)
    y.backward()
    assert (c.packs, c.unpacks) == (3, 6)
    an = np.array([0.5, -1.25, 2.0])
    np.testing.assert_allclose(npy(a.grad), 2 * 2 * an * np.exp(an * an), rtol=1e-13)
    if real_torch is not None:
        ra = real_torch.tensor(an, requires_grad=True)
        rc = Counter()
        with real_torch.autograd.graph.saved_tensors_hooks(rc.pack, rc.unpack):
            ry = (ra * ra).exp().sum()
        ry.backward(retain_graph=True)
        ry.backward()
        assert (rc.packs, rc.unpacks) == (3, 6)
        np.testing.assert_allclose(npy(a.grad), ra.grad.numpy(), rtol=1e-13)


@pytest.mark.parametrize("device", DEVICES)
def test_save_on_cpu(device):
    data = mlp_data(device, seed=1)
    plain = mlp_grads(torch, data, device)
    seen = []

    class Recording(graph.save_on_cpu):
        def __init__(self):
            super().__init__()
            pack = self.pack_hook

            def rec(t):
                packed = pack(t)
                seen.append((t.device.type, packed[0].type, packed[1].device.type))
                return packed
            self.pack_hook = rec

    hooked = mlp_grads(torch, data, device, Recording())
    assert seen and all(p == (device, device, "cpu") for p in seen)
    for g, h, r in zip(plain, hooked, mlp_reference(data)):
        assert h.device.type == device
        assert np.array_equal(npy(g), npy(h))
        np.testing.assert_allclose(npy(h), r, rtol=1e-12, atol=1e-12)


def test_nesting_innermost_applies():
    a = torch.tensor([1.5, -0.5], dtype=torch.float64, requires_grad=True)
    outer, inner = Counter(), Counter()
    with graph.saved_tensors_hooks(outer.pack, outer.unpack):
        y = a.exp()               # outer
        with graph.saved_tensors_hooks(inner.pack, inner.unpack):
            z = y.sin()           # inner
        w = z.cos()               # outer again
    assert (outer.packs, inner.packs) == (2, 1)
    w.sum().backward()
    assert (outer.unpacks, inner.unpacks) == (2, 1)
    an = np.array([1.5, -0.5])
    ref = -np.sin(np.sin(np.exp(an))) * np.cos(np.exp(an)) * np.exp(an)
    np.testing.assert_allclose(npy(a.grad), ref, rtol=1e-13)
    b = torch.tensor([1.0], requires_grad=True)
    (b * b).sum().backward()  # no hooks left in force
    assert (outer.packs, inner.packs) == (2, 1)


def test_custom_function_saved_tensors_go_through_hooks():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * g * x * x

    a = torch.tensor([0.25, -2.0], dtype=torch.float64, requires_grad=True)
    c = Counter(clone=True)
    with graph.saved_tensors_hooks(c.pack, c.unpack):
        y = Cube.apply(a)
    assert c.packs == 1
    y.sum().backward()
    assert c.unpacks == 1
    np.testing.assert_allclose(npy(a.grad), 3 * np.array([0.25, -2.0]) ** 2, rtol=1e-14)


def test_double_backward_through_hooks():
    """A hook that hands back a new tensor: create_graph still differentiates
    through the saved inputs (the unpacked tensor gets the input's edge)."""
    rng = np.random.default_rng(3)
    an = rng.standard_normal(4)

    def hvp(ctx):
        a = torch.tensor(an, requires_grad=True)
        with ctx:
            y = (a * a * a).sin().sum()
        g, = torch.autograd.grad(y, a, create_graph=True)
        h, = torch.autograd.grad(g.sum(), a)
        return g, h

    c = Counter(clone=True)
    g0, h0 = hvp(graph.saved_tensors_hooks(lambda t: t, lambda t: t))
    g1, h1 = hvp(graph.saved_tensors_hooks(c.pack, c.unpack))
    assert c.unpacks >= c.packs > 0
    ref_g = np.cos(an ** 3) * 3 * an ** 2
    ref_h = -np.sin(an ** 3) * 9 * an ** 4 + np.cos(an ** 3) * 6 * an
    for g, h in ((g0, h0), (g1, h1)):
        np.testing.assert_allclose(npy(g), ref_g, rtol=1e-12)
        np.testing.assert_allclose(npy(h), ref_h, rtol=1e-12, atol=1e-12)


def test_packed_objects_freed_with_graph():
    class Box:
        def __init__(self, t):
            self.t = t

    boxes = []

    def pack(t):
        b = Box(t.detach())
        boxes.append(weakref.ref(b))
        return b

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(pack, lambda b: b.t):
        y = (a * a).exp()
    assert boxes and all(r() is not None for r in boxes)
    y.sum().backward()  # the graph's saved values are freed after backward
    gc.collect()
    assert all(r() is None for r in boxes)
    boxes.clear()
    with graph.saved_tensors_hooks(pack, lambda b: b.t):
        y = (a * a).exp()
    del y  # dropping the graph drops what it packed
    gc.collect()
    assert boxes and all(r() is None for r in boxes)


# ---- errors ------------------------------------------------------------------------------------

def both(fn):
    """fn(mod) for ours and real torch; returns (our exception, torch's or None)."""
    out = []
    for mod in (torch, real_torch):
        if mod is None:
            out.append(None)
            continue
        with pytest.raises(Exception) as info:
            fn(mod)
        out.append(info.value)
    return out


def test_pack_hook_raising_propagates_from_forward():
    def run(mod):
        a = mod.tensor([1.0, 2.0], requires_grad=True)

        def bad(t):
            raise ValueError("pack boom")
        with mod.autograd.graph.saved_tensors_hooks(bad, lambda p: p):
            a.exp()
    ours, theirs = both(run)
    assert type(ours) is ValueError and str(ours) == "pack boom"
    if theirs is not None:
        assert type(theirs) is ValueError
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    a.exp().sum().backward()  # the hook stack was popped by the with
    np.testing.assert_allclose(npy(a.grad), np.exp([1.0, 2.0]), rtol=1e-6)


def test_unpack_hook_raising_propagates_from_backward_and_graph_survives():
    state = {"fail": True}

    def unpack(p):
        if state["fail"]:
            raise ValueError("unpack boom")
        return p

    a = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t.detach(), unpack):
        y = a.exp().sum()
    with pytest.raises(ValueError, match="unpack boom"):
        y.backward()
    state["fail"] = False
    y.backward()
    np.testing.assert_allclose(npy(a.grad), np.exp([0.5, 1.5]), rtol=1e-14)


def test_unpack_hook_bad_results():
    def non_tensor(mod):
        a = mod.tensor([[1.0, 2.0]], requires_grad=True)
        w = mod.tensor([[1.0], [3.0]], requires_grad=True)
        with mod.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda p: 5):
            y = (a @ w).sum()
        y.backward()
    ours, theirs = both(non_tensor)
    assert type(ours) is TypeError
    assert str(ours) == ("Output of saved tensor unpack_hook expected to be a Tensor but got "
                         "result of type int")
    if theirs is not None:
        assert type(theirs) is TypeError and str(theirs) == str(ours)

    def wrong_shape(mod):
        a = mod.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        w = mod.tensor([[1.0], [3.0], [2.0]], requires_grad=True)
        with mod.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda p: p[:1]):
            y = (a @ w).sum()
        y.backward()
    ours, theirs = both(wrong_shape)
    assert type(ours) is RuntimeError
    if theirs is not None:
        assert type(theirs) is RuntimeError


def test_disable_saved_tensors_hooks():
    def push_while_disabled(mod):
        with mod.autograd.graph.disable_saved_tensors_hooks("hooks are off here"):
            with mod.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    ours, theirs = both(push_while_disabled)
    assert type(ours) is RuntimeError and str(ours) == "hooks are off here"
    if theirs is not None:
        assert type(theirs) is RuntimeError and str(theirs) == str(ours)

    def save_while_disabled(mod):
        a = mod.tensor([1.0], requires_grad=True)
        with mod.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with mod.autograd.graph.disable_saved_tensors_hooks("no saving"):
                a * a
    ours, theirs = both(save_while_disabled)
    assert type(ours) is RuntimeError and str(ours) == "no saving"
    if theirs is not None:
        assert type(theirs) is RuntimeError and str(theirs) == str(ours)

    # nested: the outer message comes back, then none
    with graph.disable_saved_tensors_hooks("outer"):
        with graph.disable_saved_tensors_hooks("inner"):
            assert torch._C._saved_tensors_hooks_get_disabled_error_message() == "inner"
        assert torch._C._saved_tensors_hooks_get_disabled_error_message() == "outer"
    assert torch._C._saved_tensors_hooks_get_disabled_error_message() is None
    c = Counter()
    with graph.saved_tensors_hooks(c.pack, c.unpack):
        torch.tensor([2.0], requires_grad=True).exp()
    assert c.packs == 1
    with pytest.raises(TypeError):
        torch._C._push_saved_tensors_default_hooks(1, 2)
    with pytest.raises(RuntimeError):
        torch._C._pop_saved_tensors_default_hooks()  # nothing pushed


# ---- Node, gradient edges, multi-grad hooks -----------------------------------------------

def test_node_and_gradient_edge():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    c = b.unbind(0)[1]
    assert isinstance(b.grad_fn, graph.Node)
    assert not isinstance(a, graph.Node)
    assert b.grad_fn.name() == "CloneBackward0"
    e = graph.get_gradient_edge(a)
    assert isinstance(e, graph.GradientEdge) and isinstance(e.node, graph.Node)
    assert e.node.name() == "torch::autograd::AccumulateGrad" and e.node.variable is a
    assert e.output_nr == 0
    assert b.grad_fn.next_functions[0][0] is e.node
    e2 = graph.get_gradient_edge(c)
    assert e2.node is c.grad_fn and e2.output_nr == 1
    with pytest.raises(RuntimeError, match="does not require gradients"):
        graph.get_gradient_edge(torch.tensor([1.0]))
    if real_torch is not None:
        ra = real_torch.tensor([1.0, 2.0], requires_grad=True)
        rc = ra.clone().unbind(0)[1]
        assert real_torch.autograd.graph.get_gradient_edge(rc).output_nr == e2.output_nr
        assert real_torch.autograd.graph.get_gradient_edge(ra).node.name() == e.node.name()


def multi_hook_trace(mod, mode):
    a = mod.tensor([[0.5, 1.0, -1.0], [2.0, 0.25, 3.0]], requires_grad=True)
    b = mod.tensor([[1.5, -2.0, 0.5], [1.0, 1.0, -0.5]], requires_grad=True)
    c = a * b
    d = a * b
    calls = []
    if mode == "all":
        fn = lambda grads: calls.append([None if g is None else g.detach().cpu().tolist()  # noqa: E731
                                         for g in grads])
    else:
        fn = lambda grad: calls.append(grad.detach().cpu().tolist())  # noqa: E731
    h = mod.autograd.graph.register_multi_grad_hook((a, b, c, d), fn, mode=mode)
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    h.remove()
    c.sum().backward(retain_graph=True)  # removed: no call
    return calls


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook(mode):
    calls = multi_hook_trace(torch, mode)
    an = np.array([[0.5, 1.0, -1.0], [2.0, 0.25, 3.0]])
    bn = np.array([[1.5, -2.0, 0.5], [1.0, 1.0, -0.5]])
    ones = np.ones((2, 3))
    if mode == "all":
        assert [[g is not None for g in call] for call in calls] == \
            [[True, True, True, False], [True, False, True, False]]
        np.testing.assert_allclose(calls[0][0], bn)
        np.testing.assert_allclose(calls[0][1], an)
        np.testing.assert_allclose(calls[0][2], ones)
        np.testing.assert_allclose(calls[1][0], bn)
    else:
        # the first gradient computed: c's (its node runs before the leaves')
        assert len(calls) == 2
        np.testing.assert_allclose(calls[0], ones)
        np.testing.assert_allclose(calls[1], ones)
    if real_torch is not None:
        theirs = multi_hook_trace(real_torch, mode)
        assert len(theirs) == len(calls)
        for o, t in zip(calls, theirs):
            if mode == "all":
                assert [g is None for g in o] == [g is None for g in t]
            else:
                np.testing.assert_allclose(o, t)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        graph.register_multi_grad_hook((torch.ones(1, requires_grad=True),), print, mode="some")


def test_increment_version():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, 4.0])
    v = x._version
    graph.increment_version(x)
    graph.increment_version([x, x])
    assert x._version == v + 3
    y = a * x  # saves x
    graph.increment_version(x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with pytest.raises(TypeError):
        graph.increment_version([x, 1])


def test_flags_and_stubs():
    ag = torch.autograd
    assert ag.is_multithreading_enabled() is True
    with ag.set_multithreading_enabled(False):
        assert ag.is_multithreading_enabled() is False
    assert ag.is_multithreading_enabled() is True
    ag.set_multithreading_enabled(False)
    assert ag.is_multithreading_enabled() is False
    ag.set_multithreading_enabled(True)
    with pytest.raises(TypeError):
        ag.set_multithreading_enabled(1)
    assert ag.is_view_replay_enabled() is False
    with ag._force_original_view_tracking(True):
        assert ag.is_view_replay_enabled() is True
    assert ag.is_view_replay_enabled() is False
    if real_torch is not None:
        assert real_torch.autograd.is_multithreading_enabled() is True
        assert real_torch.autograd.is_view_replay_enabled() is False
    import pycuda_sem.autograd.forward_ad as fwAD
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        with fwAD.dual_level():
            pass
    with pytest.raises(NotImplementedError):
        fwAD.make_dual(torch.ones(2), torch.ones(2))
    with pytest.raises(NotImplementedError):
        fwAD.unpack_dual(torch.ones(2))
    with pytest.raises(NotImplementedError):
        with graph.allow_mutation_on_saved_tensors():
            pass
    # jvp keeps working (double backward)
    x = torch.tensor([0.5, 1.0], dtype=torch.float64)
    _, jv = torch.autograd.functional.jvp(torch.sin, x, torch.ones(2, dtype=torch.float64))
    np.testing.assert_allclose(npy(jv), np.cos([0.5, 1.0]), rtol=1e-14)


def _many_ops(mod, x, w, idx):
    F = mod.nn.functional
    y = x[idx, 1:]                         # a saved index inside a tuple key
    z = y.clone()
    z.mul_(w[:1, 1:])                      # in-place: keeps a copy of self
    z = z / (w[1:2, 1:].abs() + 1)         # saved result and divisor
    ln = F.layer_norm(x, (x.shape[1],))    # saved result, materialize=False
    ce = F.cross_entropy(x[idx], idx)
    p = mod.stack([x[0], w[0]]).pow(2)
    return z.sum() + (ln * w).sum() + ce + p.clamp(0.1, 3.0).sum() + x.where(x > 0, w).sum()


@pytest.mark.parametrize("device", DEVICES)
def test_many_ops_exact_with_hooks(device):
    rng = np.random.default_rng(7)
    xn, wn = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    idx = torch.tensor([2, 0, 3], device=device)

    def grads(ctx):
        x = torch.tensor(xn, device=device, requires_grad=True)
        w = torch.tensor(wn, device=device, requires_grad=True)
        with ctx:
            out = _many_ops(torch, x, w, idx)
        out.backward()
        return npy(x.grad), npy(w.grad)

    c = Counter(clone=True)
    plain = grads(graph.saved_tensors_hooks(lambda t: t, lambda t: t))
    hooked = grads(graph.saved_tensors_hooks(c.pack, c.unpack))
    assert c.packs >= 8 and c.unpacks == c.packs
    for p, h in zip(plain, hooked):
        assert np.array_equal(p, h)
    if real_torch is not None:
        x = real_torch.tensor(xn, requires_grad=True)
        w = real_torch.tensor(wn, requires_grad=True)
        _many_ops(real_torch, x, w, real_torch.tensor([2, 0, 3])).backward()
        np.testing.assert_allclose(hooked[0], x.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(hooked[1], w.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_grad_with_respect_to_gradient_edges():
    an = np.array([1.0, -2.0, 0.5])

    def run(mod):
        a = mod.tensor(an, requires_grad=True)
        b = a * 3
        c = (b * b).sin().sum()
        ge = mod.autograd.graph.get_gradient_edge
        gb, = mod.autograd.grad(c, ge(b), retain_graph=True)
        ga, gb2 = mod.autograd.grad(c, [ge(a), b])
        return npy(ga), npy(gb), npy(gb2)

    ga, gb, gb2 = run(torch)
    bn = 3 * an
    np.testing.assert_allclose(gb, 2 * bn * np.cos(bn * bn), rtol=1e-13)
    np.testing.assert_allclose(gb2, gb, rtol=0)
    np.testing.assert_allclose(ga, 3 * gb, rtol=1e-13)
    if real_torch is not None:
        for o, t in zip((ga, gb, gb2), run(real_torch)):
            np.testing.assert_allclose(o, t, rtol=1e-13)
    a = torch.tensor(an, requires_grad=True)
    y = (a * a).sum()
    with pytest.raises(IndexError):
        torch._C._run_backward((y,), (None,), True, False,
                               ((y.grad_fn, 2 ** 70),), False, False)
    with pytest.raises(NotImplementedError):
        y.backward(inputs=[graph.get_gradient_edge(a)])
