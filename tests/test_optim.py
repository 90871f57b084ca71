"""torch.optim: each optimizer against a NumPy float64 reference of torch's
update rule (10 steps, several param groups, random grads), state_dict
round trips, argument errors, and on CUDA the multi-tensor C path against
the composed one. Against torch itself (in a subprocess, on the CPU) where
torch is installed."""
import importlib.util
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import _C
from pycuda_sem.optim import SGD, Adagrad, Adam, AdamW, RMSprop

STEPS = 10

# ---- NumPy references (float64), written from torch's documented algorithms ------


def ref_sgd(p, g, st, h, step_no):
    g = -g if h["maximize"] else g
    if h["weight_decay"]:
        g = g + h["weight_decay"] * p
    if h["momentum"]:
        if "buf" not in st:
            st["buf"] = g.copy()
        else:
            st["buf"] = h["momentum"] * st["buf"] + (1 - h["dampening"]) * g
        g = g + h["momentum"] * st["buf"] if h["nesterov"] else st["buf"]
    return p - h["lr"] * g


def ref_adam(p, g, st, h, step_no, decoupled=False):
    b1, b2 = h["betas"]
    g = -g if h["maximize"] else g
    st["t"] = st.get("t", 0) + 1
    t = st["t"]
    if h["weight_decay"]:
        if decoupled:
            p = p * (1 - h["lr"] * h["weight_decay"])
        else:
            g = g + h["weight_decay"] * p
    m = st.get("m", np.zeros_like(p))
    v = st.get("v", np.zeros_like(p))
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    st["m"], st["v"] = m, v
    if h["amsgrad"]:
        st["vmax"] = np.maximum(st.get("vmax", np.zeros_like(p)), v)
        v = st["vmax"]
    denom = np.sqrt(v) / np.sqrt(1 - b2 ** t) + h["eps"]
    return p - h["lr"] / (1 - b1 ** t) * m / denom


def ref_adamw(p, g, st, h, step_no):
    return ref_adam(p, g, st, h, step_no, decoupled=True)


def ref_rmsprop(p, g, st, h, step_no):
    g = -g if h["maximize"] else g
    if h["weight_decay"]:
        g = g + h["weight_decay"] * p
    a = h["alpha"]
    st["s"] = a * st.get("s", np.zeros_like(p)) + (1 - a) * g * g
    if h["centered"]:
        st["ga"] = a * st.get("ga", np.zeros_like(p)) + (1 - a) * g
        avg = np.sqrt(st["s"] - st["ga"] ** 2) + h["eps"]
    else:
        avg = np.sqrt(st["s"]) + h["eps"]
    if h["momentum"] > 0:
        st["b"] = h["momentum"] * st.get("b", np.zeros_like(p)) + g / avg
        return p - h["lr"] * st["b"]
    return p - h["lr"] * g / avg


def ref_adagrad(p, g, st, h, step_no):
    st["t"] = st.get("t", 0) + 1
    g = -g if h["maximize"] else g
    if h["weight_decay"]:
        g = g + h["weight_decay"] * p
    clr = h["lr"] / (1 + (st["t"] - 1) * h["lr_decay"])
    st["sum"] = st.get("sum", np.full_like(p, h["initial_accumulator_value"])) + g * g
    return p - clr * g / (np.sqrt(st["sum"]) + h["eps"])


# (class, reference, torch's defaults, hyperparameter sets: group 0 kwargs, group 1 overrides)
CASES = {
    "sgd": (SGD, ref_sgd, dict(lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                               maximize=False), [
        (dict(lr=0.1), dict(lr=0.05)),
        (dict(lr=0.05, momentum=0.9, weight_decay=0.01), dict(momentum=0.5, dampening=0.3)),
        (dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True), dict(weight_decay=0.1)),
    ]),
    "adam": (Adam, ref_adam, dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                                  amsgrad=False, maximize=False), [
        (dict(lr=0.01), dict(lr=0.02, betas=(0.8, 0.99))),
        (dict(lr=0.01, weight_decay=0.1, amsgrad=True), dict(maximize=True, eps=1e-3)),
    ]),
    "adamw": (AdamW, ref_adamw, dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                                     amsgrad=False, maximize=False), [
        (dict(lr=0.01), dict(weight_decay=0.3)),
        (dict(lr=0.01, amsgrad=True, maximize=True), dict(amsgrad=False, weight_decay=0)),
    ]),
    "rmsprop": (RMSprop, ref_rmsprop, dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
                                           momentum=0, centered=False, maximize=False), [
        (dict(), dict(alpha=0.9)),
        (dict(centered=True, momentum=0.5), dict(weight_decay=0.1, maximize=True)),
        (dict(momentum=0.9, weight_decay=0.01), dict(centered=True, momentum=0)),
    ]),
    "adagrad": (Adagrad, ref_adagrad, dict(lr=1e-2, lr_decay=0, weight_decay=0,
                                           initial_accumulator_value=0, eps=1e-10,
                                           maximize=False), [
        (dict(lr=0.1), dict(lr_decay=0.05)),
        (dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5), dict(maximize=True)),
    ]),
}

CASE_IDS = [(name, k) for name, (_, _, _, sets) in CASES.items() for k in range(len(sets))]
SHAPES = [[(3, 4), (5,)], [(2, 2, 3), (1,), (7,)]]  # group 0's params, group 1's


def _grads(rng, shapes):
    return [[rng.standard_normal(s) for s in grp] for grp in shapes]


def _run(name, k, device="cpu", dtype=torch.float64, seed=0, skip=((3, 0, 1),), **extra):
    """10 steps of our optimizer and of the reference; returns both sets of
    final params as float64 arrays. `skip` lists (step, group, index) whose
    grad is None at that step (its state and step count stay behind)."""
    cls, ref, defaults, sets = CASES[name]
    g0, g1 = sets[k]
    rng = np.random.default_rng(seed)
    init = [[rng.standard_normal(s) for s in grp] for grp in SHAPES]
    params = [[torch.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in grp]
              for grp in init]
    opt = cls([{"params": params[0]}, {"params": params[1], **g1}], **g0, **extra)
    hyper = [dict(defaults, **g0), dict(dict(defaults, **g0), **g1)]
    ref_p = [[a.copy() for a in grp] for grp in init]
    ref_st = [[{} for _ in grp] for grp in init]
    np_dtype = np.float32 if dtype != torch.float64 else np.float64
    for step in range(STEPS):
        grads = _grads(rng, SHAPES)
        for gi, grp in enumerate(params):
            for i, p in enumerate(grp):
                if (step, gi, i) in skip:
                    p.grad = None
                    continue
                g = grads[gi][i].astype(np_dtype)
                p.grad = torch.tensor(g, device=device).to(dtype)
                ref_p[gi][i] = ref(ref_p[gi][i], g.astype(np.float64), ref_st[gi][i],
                                   hyper[gi], step)
        opt.step()
    ours = [[p.detach().cpu().to(torch.float64).numpy() for p in grp] for grp in params]
    return ours, ref_p, opt


@pytest.mark.parametrize("name,k", CASE_IDS)
def test_matches_reference_float64(name, k):
    ours, ref, _ = _run(name, k)
    for a, b in zip(sum(ours, []), sum(ref, [])):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,k", CASE_IDS)
def test_matches_reference_float32(name, k):
    ours, ref, _ = _run(name, k, dtype=torch.float32)
    for a, b in zip(sum(ours, []), sum(ref, [])):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


def test_adam_state_format():
    _, _, opt = _run("adam", 1)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3, 4]]
    assert sorted(sd["state"]) == [0, 1, 2, 3, 4]
    st = sd["state"][0]
    assert sorted(st) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    assert isinstance(st["step"], torch.Tensor) and st["step"].dim() == 0
    assert st["step"].dtype == torch.float32 and st["step"].device.type == "cpu"
    assert st["step"].item() == STEPS
    assert sd["state"][1]["step"].item() == STEPS - 1  # its grad was None once
    g = sd["param_groups"][1]
    for key in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
                "capturable", "differentiable", "fused"):
        assert key in g
    assert g["maximize"] is True and g["eps"] == 1e-3


def test_sgd_state_only_with_momentum():
    _, _, opt = _run("sgd", 0)
    assert opt.state_dict()["state"] == {}
    _, _, opt = _run("sgd", 1)
    assert sorted(opt.state_dict()["state"][0]) == ["momentum_buffer"]


def test_adagrad_state_made_at_construction():
    p = torch.zeros(3, requires_grad=True)
    opt = Adagrad([p], initial_accumulator_value=0.25)
    st = opt.state[p]
    assert st["step"].item() == 0 and st["sum"].tolist() == [0.25] * 3


# ---- state_dict round trip ------------------------------------------------------------


def _clone_state_dict(sd):
    """Through torch.save/torch.load, as a checkpoint would go."""
    buf = io.BytesIO()
    torch.save(sd, buf)
    buf.seek(0)
    return torch.load(buf)


@pytest.mark.parametrize("name,k", [(n, len(CASES[n][3]) - 1) for n in CASES])
def test_state_dict_round_trip_continues_identically(name, k):
    cls, _, _, sets = CASES[name]
    g0, g1 = sets[k]
    rng = np.random.default_rng(1)
    init = [[rng.standard_normal(s) for s in grp] for grp in SHAPES]
    grads = [_grads(rng, SHAPES) for _ in range(8)]

    def make(values):
        ps = [[torch.tensor(a, requires_grad=True) for a in grp] for grp in values]
        return ps, cls([{"params": ps[0]}, {"params": ps[1], **g1}], **g0)

    def run(ps, opt, gs):
        for step_grads in gs:
            for grp, ggrp in zip(ps, step_grads):
                for p, g in zip(grp, ggrp):
                    p.grad = torch.tensor(g)
            opt.step()

    pa, oa = make(init)
    run(pa, oa, grads[:4])
    sd = _clone_state_dict(oa.state_dict())
    pb, ob = make([[p.detach().numpy().copy() for p in grp] for grp in pa])
    ob.load_state_dict(sd)
    run(pa, oa, grads[4:])
    run(pb, ob, grads[4:])
    for a, b in zip(sum(pa, []), sum(pb, [])):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert ob.param_groups[1]["params"] is not oa.param_groups[1]["params"]
    assert ob.param_groups[1]["params"][0] is pb[1][0]


def test_load_state_dict_moves_state_to_param_dtype():
    p = torch.zeros(3, requires_grad=True)
    opt = Adam([p])
    p.grad = torch.ones(3)
    opt.step()
    sd = opt.state_dict()
    q = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    o2 = Adam([q])
    o2.load_state_dict(sd)
    assert o2.state[q]["exp_avg"].dtype == torch.float64
    assert o2.state[q]["step"].dtype == torch.float32


def test_load_state_dict_errors():
    a, b = torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    sd = SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        SGD([a], lr=0.1).load_state_dict(sd)


# ---- the Optimizer API -----------------------------------------------------------------


def test_param_groups_defaults_and_add_param_group():
    a, b = torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)
    opt = SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["params"] == [b]
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {torch.zeros(1, requires_grad=True)}})
    assert "Parameter Group 1" in repr(opt) and "lr: 0.5" in repr(opt)


def test_named_params():
    a = torch.zeros(2, requires_grad=True)
    opt = Adam([("w", a)])
    assert opt.param_groups[0]["param_names"] == ["w"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w"]


@pytest.mark.parametrize("make,exc,msg", [
    (lambda p: SGD(p, lr=-1), ValueError, "Invalid learning rate"),
    (lambda p: SGD(p, momentum=-1), ValueError, "Invalid momentum"),
    (lambda p: SGD(p, weight_decay=-1), ValueError, "Invalid weight_decay"),
    (lambda p: SGD(p, nesterov=True), ValueError, "Nesterov momentum requires"),
    (lambda p: SGD(p, momentum=0.9, dampening=0.1, nesterov=True), ValueError, "Nesterov"),
    (lambda p: Adam(p, betas=(1.0, 0.9)), ValueError, "beta parameter at index 0"),
    (lambda p: Adam(p, betas=(0.9, -0.1)), ValueError, "beta parameter at index 1"),
    (lambda p: Adam(p, eps=-1), ValueError, "Invalid epsilon"),
    (lambda p: AdamW(p, fused=True, foreach=True), RuntimeError, "cannot be `True` together"),
    (lambda p: RMSprop(p, alpha=-1), ValueError, "Invalid alpha"),
    (lambda p: Adagrad(p, lr_decay=-1), ValueError, "Invalid lr_decay"),
    (lambda p: Adagrad(p, initial_accumulator_value=-1), ValueError, "initial_accumulator_value"),
    (lambda p: SGD([], lr=0.1), ValueError, "empty parameter list"),
    (lambda p: SGD(p[0], lr=0.1), TypeError, "iterable of Tensors"),
    (lambda p: SGD([1.0], lr=0.1), TypeError, "can only optimize Tensors"),
    (lambda p: SGD([p[0] * 2], lr=0.1), ValueError, "non-leaf"),
])
def test_bad_arguments(make, exc, msg):
    p = [torch.zeros(2, requires_grad=True)]
    with pytest.raises(exc, match=msg):
        make(p)


def test_zero_grad():
    p = torch.zeros(3, requires_grad=True)
    opt = SGD([p], lr=0.1)
    (p * 2).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_step_closure_and_no_grad():
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = SGD([p], lr=0.1)
    seen = []

    def closure():
        opt.zero_grad()
        seen.append(torch.is_grad_enabled())
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert seen == [True] and loss.item() == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6], rtol=1e-6)
    assert p.grad_fn is None and p.is_leaf  # the update ran under no_grad


def test_step_skips_params_without_grad():
    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    opt = Adam([a, b], lr=0.1)
    a.grad = torch.ones(2)
    opt.step()
    assert b not in opt.state and b.tolist() == [1.0, 1.0]
    assert opt.state[a]["step"].item() == 1


def test_hooks():
    p = torch.ones(2, requires_grad=True)
    p.grad = torch.ones(2)
    opt = SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    h3 = torch.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("g"))
    opt.step()
    assert calls == ["g", "pre", "post"]
    for h in (h1, h2, h3):
        h.remove()
    opt.step()
    assert calls == ["g", "pre", "post"]
    opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
    assert opt.state_dict()["extra"] == 1
    loaded = []
    opt.register_load_state_dict_post_hook(lambda o: loaded.append(True))
    opt.load_state_dict(opt.state_dict())
    assert loaded == [True]


def test_lr_as_tensor_and_fused_flags_on_cpu():
    # foreach/fused are accepted on the CPU (the composed form runs), as torch's
    p = torch.ones(2, requires_grad=True)
    p.grad = torch.ones(2)
    Adam([p], lr=torch.tensor(0.1), fused=True).step()
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 0.9], rtol=1e-6)


# ---- the C entry points' argument checks (the CPU catches the early ones) -------------


def _t(*s):
    return torch.zeros(*s)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: _C._fused_adam_([_t(2)], [_t(2)], [_t(2)], [_t(2)], None, [torch.tensor(0.0)]),
     RuntimeError, "CUDA tensors only"),
    (lambda: _C._fused_adam_([_t(2)], [_t(2), _t(2)], [_t(2)], [_t(2)], None, [torch.tensor(0.)]),
     RuntimeError, "same length"),
    (lambda: _C._fused_adam_([_t(2)], [_t(2)], [_t(2)], [_t(2)], None, []),
     RuntimeError, "same length"),
    (lambda: _C._fused_adam_(_t(2), [_t(2)], [_t(2)], [_t(2)], None, [torch.tensor(0.0)]),
     TypeError, "must be a list of Tensors"),
    (lambda: _C._fused_adam_([1.0], [_t(2)], [_t(2)], [_t(2)], None, [torch.tensor(0.0)]),
     TypeError, "expected a Tensor as element 0"),
    (lambda: _C._fused_adam_([_t(2)], [_t(2)], [_t(2)], [_t(2)], None, [torch.tensor(0.0)],
                             amsgrad=True), TypeError, "max_exp_avg_sqs"),
    (lambda: _C._fused_adam_([_t(2)], [_t(2)], [_t(2)], [_t(2)], None, [torch.tensor(0.0)],
                             lr="x"), TypeError, None),
    (lambda: _C._fused_sgd_([_t(2)], [_t(2)], None, lr=0.1, momentum=0.9), TypeError,
     "momentum_buffers"),
    (lambda: _C._fused_rmsprop_([_t(2)], [_t(2)], [_t(2)], None, None, None, centered=True),
     TypeError, "grad_avgs"),
    (lambda: _C._fused_adagrad_([_t(2)], [_t(2)], [_t(2)], None), TypeError, "state_steps"),
])
def test_fused_entry_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_fused_entry_empty_lists():
    assert _C._fused_adam_([], [], [], [], None, []) is None
    assert _C._fused_sgd_([], [], None, lr=0.1) is None


# ---- against torch (a subprocess: torch runs on the CPU there) ---------------------------

HAVE_TORCH = importlib.util.find_spec("torch") is not None

TORCH_SCRIPT = r"""
import json, sys
import numpy as np
import torch
spec = json.loads(sys.argv[1])
data = np.load(sys.argv[2])
cls = getattr(torch.optim, spec["cls"])
params = [[torch.tensor(data["p%d_%d" % (g, i)], requires_grad=True) for i in range(n)]
          for g, n in enumerate(spec["counts"])]
opt = cls([{"params": params[0]}, dict({"params": params[1]}, **spec["g1"])], **spec["g0"])
for s in range(spec["steps"]):
    for g, grp in enumerate(params):
        for i, p in enumerate(grp):
            p.grad = torch.tensor(data["g%d_%d_%d" % (s, g, i)])
    opt.step()
np.savez(sys.argv[3], **{"p%d_%d" % (g, i): p.detach().numpy() for g, grp in enumerate(params)
                         for i, p in enumerate(grp)})
"""


@pytest.mark.skipif(not HAVE_TORCH, reason="torch not installed")
@pytest.mark.parametrize("name,k", CASE_IDS)
def test_matches_torch(name, k, tmp_path):
    cls, _, _, sets = CASES[name]
    g0, g1 = sets[k]
    rng = np.random.default_rng(5)
    data = {}
    for g, grp in enumerate(SHAPES):
        for i, s in enumerate(grp):
            data["p%d_%d" % (g, i)] = rng.standard_normal(s)
    for step in range(STEPS):
        for g, grp in enumerate(SHAPES):
            for i, s in enumerate(grp):
                data["g%d_%d_%d" % (step, g, i)] = rng.standard_normal(s)
    np.savez(tmp_path / "in.npz", **data)
    spec = {"cls": cls.__name__, "counts": [len(g) for g in SHAPES], "g0": g0, "g1": g1,
            "steps": STEPS}
    subprocess.run([sys.executable, "-c", TORCH_SCRIPT, json.dumps(spec), str(tmp_path / "in.npz"),
                    str(tmp_path / "out.npz")], check=True, timeout=300,
                   env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    theirs = np.load(tmp_path / "out.npz")
    params = [[torch.tensor(data["p%d_%d" % (g, i)], requires_grad=True) for i in range(len(grp))]
              for g, grp in enumerate(SHAPES)]
    opt = cls([{"params": params[0]}, dict({"params": params[1]}, **g1)], **g0)
    for step in range(STEPS):
        for g, grp in enumerate(params):
            for i, p in enumerate(grp):
                p.grad = torch.tensor(data["g%d_%d_%d" % (step, g, i)])
        opt.step()
    for g, grp in enumerate(params):
        for i, p in enumerate(grp):
            np.testing.assert_allclose(p.detach().numpy(), theirs["p%d_%d" % (g, i)],
                                       rtol=1e-12, atol=1e-14)
