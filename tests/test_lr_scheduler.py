"""torch.optim.lr_scheduler: lr sequences against closed forms, state_dict
round trips, argument errors; against torch (in a subprocess) where it is
installed."""
import importlib.util
import json
import math
import subprocess
import sys

import pytest

import pycuda_sem as torch
from pycuda_sem.optim import SGD, Adam
from pycuda_sem.optim import lr_scheduler as S

EPOCHS = 30


def _opt(lrs=(0.1, 0.02), cls=SGD, **kw):
    ps = [torch.zeros(2, requires_grad=True) for _ in lrs]
    return cls([{"params": [p], "lr": lr} for p, lr in zip(ps, lrs)], **kw)


def _sequence(sched, n=EPOCHS, metrics=None):
    """get_last_lr() after construction and after each of n steps (given
    metrics[i] at step i: ReduceLROnPlateau)."""
    out = [list(sched.get_last_lr())]
    for i in range(n):
        sched.optimizer.step()
        sched.step(metrics[i]) if metrics is not None else sched.step()
        out.append(list(sched.get_last_lr()))
    return out


def _check(seq, closed, bases=(0.1, 0.02)):
    for e, lrs in enumerate(seq):
        for lr, base in zip(lrs, bases):
            assert lr == pytest.approx(closed(base, e), rel=1e-9, abs=1e-15), (e, lr)


def test_step_lr():
    _check(_sequence(S.StepLR(_opt(), step_size=3, gamma=0.5)), lambda b, e: b * 0.5 ** (e // 3))


def test_multistep_lr_with_repeated_milestone():
    ms = [2, 5, 5, 9]
    _check(_sequence(S.MultiStepLR(_opt(), milestones=ms, gamma=0.1)),
           lambda b, e: b * 0.1 ** sum(m <= e for m in ms))


def test_exponential_lr():
    _check(_sequence(S.ExponentialLR(_opt(), gamma=0.9)), lambda b, e: b * 0.9 ** e)


def test_cosine_annealing_lr_past_t_max():
    T, eta = 7, 0.001
    _check(_sequence(S.CosineAnnealingLR(_opt(), T_max=T, eta_min=eta)),
           lambda b, e: eta + (b - eta) * (1 + math.cos(math.pi * e / T)) / 2)


def test_linear_lr():
    _check(_sequence(S.LinearLR(_opt(), start_factor=0.25, end_factor=0.75, total_iters=8)),
           lambda b, e: b * (0.25 + 0.5 * min(e, 8) / 8))


def test_lambda_lr_one_lambda_a_group():
    sched = S.LambdaLR(_opt(), [lambda e: 1 / (e + 1), lambda e: 0.95 ** e])
    seq = _sequence(sched)
    for e, (a, b) in enumerate(seq):
        assert a == pytest.approx(0.1 / (e + 1)) and b == pytest.approx(0.02 * 0.95 ** e)


def _one_cycle(base_max, e, total, pct=0.3, div=25.0, final_div=1e4):
    init = base_max / div
    end1 = pct * total - 1
    if e <= end1:
        start, stop, t = init, base_max, e / end1
    else:
        start, stop, t = base_max, init / final_div, (e - end1) / (total - 1 - end1)
    return stop + (start - stop) / 2 * (math.cos(math.pi * t) + 1)


def test_one_cycle_lr_and_momentum():
    opt = _opt(cls=SGD, momentum=0.9)
    sched = S.OneCycleLR(opt, max_lr=[1.0, 0.5], total_steps=20)
    seq = _sequence(sched, 19)
    _check(seq, lambda b, e: _one_cycle(b, e, 20), bases=(1.0, 0.5))
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)  # back at max at the end
    with pytest.raises(ValueError, match="Tried to step 21 times"):
        sched.step()
        sched.step()


def test_one_cycle_cycles_adam_beta1_linear():
    opt = _opt(cls=Adam)
    S.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="linear")
    assert opt.param_groups[0]["betas"] == (0.95, 0.999)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 / 25)


def test_sequential_lr_warmup_then_decay():
    opt = _opt()
    warm = S.LinearLR(opt, start_factor=0.1, total_iters=4)
    decay = S.ExponentialLR(opt, gamma=0.9)
    seq = _sequence(S.SequentialLR(opt, [warm, decay], milestones=[5]))
    _check(seq, lambda b, e: b * (0.1 + 0.9 * min(e, 4) / 4) if e < 5 else b * 0.9 ** (e - 5))


def test_constant_lr():
    _check(_sequence(S.ConstantLR(_opt(), factor=0.5, total_iters=4)),
           lambda b, e: b * (0.5 if e < 4 else 1.0))


def test_polynomial_lr():
    _check(_sequence(S.PolynomialLR(_opt(), total_iters=10, power=2.0)),
           lambda b, e: b * (1 - min(e, 10) / 10) ** 2)


def test_multiplicative_lr():
    _check(_sequence(S.MultiplicativeLR(_opt(), lambda e: 0.9)), lambda b, e: b * 0.9 ** e)


def _sgdr(b, e, T0=3, mult=2, eta=0.01):
    Ti, t = T0, e
    while t >= Ti:
        t, Ti = t - Ti, Ti * mult
    return eta + (b - eta) * (1 + math.cos(math.pi * t / Ti)) / 2


def test_cosine_annealing_warm_restarts():
    sched = S.CosineAnnealingWarmRestarts(_opt(), T_0=3, T_mult=2, eta_min=0.01)
    _check(_sequence(sched), _sgdr)
    sched.step(4.5)  # a fractional epoch: 1.5 into the second period (6 long)
    want = 0.01 + 0.09 * (1 + math.cos(math.pi * 1.5 / 6)) / 2
    assert sched.get_last_lr()[0] == pytest.approx(want)
    assert sched.last_epoch == 4


def _triangular(b, e, top, up=4, down=6):
    cycle = math.floor(1 + e / (up + down))
    x = 1 + e / (up + down) - cycle
    r = up / (up + down)
    scale = x / r if x <= r else (x - 1) / (r - 1)
    return b + (top - b) * scale / 2 ** (cycle - 1)


def test_cyclic_lr_triangular2_cycles_momentum_the_other_way():
    opt = _opt(momentum=0.9)
    sched = S.CyclicLR(opt, base_lr=[0.1, 0.02], max_lr=[1.0, 0.2], step_size_up=4,
                       step_size_down=6, mode="triangular2", base_momentum=0.8, max_momentum=0.95)
    seq = _sequence(sched, 33)  # ends 3 steps into the 4th cycle
    for e, (a, b) in enumerate(seq):
        assert a == pytest.approx(_triangular(0.1, e, 1.0))
        assert b == pytest.approx(_triangular(0.02, e, 0.2))
    frac = (seq[-1][0] - 0.1) / (1.0 - 0.1)  # where the lr is between base and max
    assert 0 < frac < 1 and opt.param_groups[0]["momentum"] == pytest.approx(0.95 - 0.15 * frac)


def test_cyclic_lr_exp_range_and_adam_beta1():
    opt = _opt(cls=Adam)
    sched = S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9)
    seq = _sequence(sched, 8)
    for e, (a, _) in enumerate(seq):
        x = abs(e / 2 - 2 * math.floor(1 + e / 4) + 1)
        assert a == pytest.approx(0.01 + 0.09 * max(0.0, 1 - x) * 0.9 ** e)
    assert opt.param_groups[0]["betas"][1] == 0.999 and opt.param_groups[0]["betas"][0] <= 0.9


def test_reduce_lr_on_plateau():
    opt = _opt()
    sched = S.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=[0.0, 0.015])
    metrics = [10, 9, 9, 9, 9, 8.9999, 9, 9, 9, 9, 9, 9]
    seq = _sequence(sched, len(metrics), metrics)
    # bad epochs after the best (9 at step 2): 3 -> reduce at step 5 (the 4th
    # value, 8.9999, is no relative improvement); cooldown 1, then 3 more bad
    lrs = [a for a, _ in seq]
    assert lrs == [0.1] * 5 + [0.05] * 4 + [0.025] * 4
    assert [b for _, b in seq][-1] == 0.015  # min_lr of the second group
    sched = S.ReduceLROnPlateau(_opt(), mode="max", threshold=0.5, threshold_mode="abs",
                                patience=0)
    seq = _sequence(sched, 3, [1.0, 1.4, 2.0])
    assert [a for a, _ in seq] == pytest.approx([0.1, 0.1, 0.01, 0.01])


def test_chained_scheduler():
    opt = _opt()
    chained = S.ChainedScheduler([S.ConstantLR(opt, factor=0.1, total_iters=2),
                                  S.ExponentialLR(opt, gamma=0.9)])
    _check(_sequence(chained), lambda b, e: b * 0.9 ** e * (0.1 if e < 2 else 1.0))


def test_manual_lr_change_is_chained():
    opt = _opt()
    sched = S.ExponentialLR(opt, gamma=0.5)
    sched.step()
    opt.param_groups[0]["lr"] = 1.0
    sched.step()
    assert sched.get_last_lr()[0] == 0.5


def test_step_with_epoch_uses_closed_form_and_warns():
    sched = S.StepLR(_opt(), step_size=2, gamma=0.5)
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(5)
    assert sched.get_last_lr()[0] == pytest.approx(0.1 * 0.25)
    assert sched.last_epoch == 5


@pytest.mark.parametrize("make", [
    lambda o: S.StepLR(o, step_size=3, gamma=0.5),
    lambda o: S.CosineAnnealingLR(o, T_max=5),
    lambda o: S.OneCycleLR(o, max_lr=0.3, total_steps=40),
    lambda o: S.SequentialLR(o, [S.LinearLR(o, total_iters=3), S.StepLR(o, 2)], [4]),
    lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="triangular2"),
    lambda o: S.PolynomialLR(o, total_iters=12),
    lambda o: S.ChainedScheduler([S.ConstantLR(o, total_iters=3), S.ExponentialLR(o, 0.9)]),
])
def test_state_dict_round_trip(make):
    o1 = _opt(momentum=0.9)
    s1 = make(o1)
    _sequence(s1, 7)
    sd = s1.state_dict()
    assert "optimizer" not in sd
    # a checkpoint's order: build both, then load the optimizer, then the scheduler
    # (building a scheduler writes the groups' lr)
    o2 = _opt(momentum=0.9)
    s2 = make(o2)
    o2.load_state_dict(o1.state_dict())
    s2.load_state_dict(sd)
    assert _sequence(s2, 10) == _sequence(s1, 10)


def test_lambda_lr_state_dict_keeps_callable_objects():
    class Scale:
        def __init__(self, k):
            self.k = k

        def __call__(self, e):
            return self.k * e

    s = S.LambdaLR(_opt((0.1,)), Scale(2.0))
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"k": 2.0}]
    s2 = S.LambdaLR(_opt((0.1,)), Scale(1.0))
    s2.load_state_dict(sd)
    assert s2.lr_lambdas[0].k == 2.0


@pytest.mark.parametrize("make,exc,msg", [
    (lambda o: S.StepLR(object(), 2), TypeError, "is not an Optimizer"),
    (lambda o: S.LinearLR(o, start_factor=0), ValueError, "Starting multiplicative factor"),
    (lambda o: S.LinearLR(o, end_factor=1.5), ValueError, "Ending multiplicative factor"),
    (lambda o: S.OneCycleLR(o, max_lr=0.1), ValueError, "total_steps OR"),
    (lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=0), ValueError, "positive integer"),
    (lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=9, anneal_strategy="x"), ValueError,
     "anneal_strategy"),
    (lambda o: S.OneCycleLR(o, max_lr=[0.1], total_steps=9), ValueError, "same length"),
    (lambda o: S.LambdaLR(o, [lambda e: 1]), ValueError, "Expected 2 lr_lambdas"),
    (lambda o: S.SequentialLR(o, [S.StepLR(o, 2)], [3]), ValueError, "one more than"),
    (lambda o: S.SequentialLR(o, [S.StepLR(_opt(), 2), S.StepLR(o, 2)], [3]), ValueError,
     "same optimizer"),
    (lambda o: S.StepLR(o, 2, last_epoch=4), KeyError, "initial_lr"),
    (lambda o: S.ConstantLR(o, factor=2), ValueError, "between 0 and 1"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=0), ValueError, "positive integer T_0"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError, "T_mult >= 1"),
    (lambda o: S.CyclicLR(o, 0.1, 1.0, mode="x"), ValueError, "mode is invalid"),
    (lambda o: S.CyclicLR(torch.optim.Adagrad([torch.zeros(1, requires_grad=True)]), 0.1, 1.0),
     ValueError, "momentum or beta1"),
    (lambda o: S.ReduceLROnPlateau(o, factor=1.0), ValueError, "Factor should be < 1.0"),
    (lambda o: S.ReduceLROnPlateau(o, mode="x"), ValueError, "mode x is unknown"),
    (lambda o: S.ReduceLROnPlateau(o, threshold_mode="x"), ValueError, "threshold mode x"),
    (lambda o: S.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError, "expected 2 min_lrs"),
    (lambda o: S.ChainedScheduler([]), ValueError, "at least one scheduler"),
])
def test_bad_arguments(make, exc, msg):
    with pytest.raises(exc, match=msg):
        make(_opt(momentum=0.9))


# ---- against torch ---------------------------------------------------------------------

TORCH_SCRIPT = r"""
import json, torch
S = torch.optim.lr_scheduler
out = {}
def run(name, make, n=30, metrics=None):
    ps = [torch.zeros(2, requires_grad=True) for _ in range(2)]
    opt = torch.optim.SGD([{"params": [ps[0]], "lr": 0.1}, {"params": [ps[1]], "lr": 0.02}],
                          momentum=0.9)
    s = make(opt)
    seq = [list(s.get_last_lr())]
    for i in range(n):
        opt.step()
        s.step(metrics[i]) if metrics is not None else s.step()
        seq.append(list(s.get_last_lr()) + [opt.param_groups[0]["momentum"]])
    out[name] = seq
"""

TORCH_CASES = {
    "step": "lambda o: S.StepLR(o, step_size=3, gamma=0.5)",
    "multistep": "lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.1)",
    "exp": "lambda o: S.ExponentialLR(o, gamma=0.9)",
    "cos": "lambda o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.001)",
    "linear": "lambda o: S.LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=8)",
    "onecycle": "lambda o: S.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=31, three_phase=True)",
    "seq": "lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=4), "
           "S.ExponentialLR(o, gamma=0.9)], milestones=[5])",
    "const": "lambda o: S.ConstantLR(o, factor=0.4, total_iters=6)",
    "poly": "lambda o: S.PolynomialLR(o, total_iters=20, power=1.5)",
    "mult": "lambda o: S.MultiplicativeLR(o, lambda e: 0.95)",
    "sgdr": "lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.001)",
    "cyclic": "lambda o: S.CyclicLR(o, [0.01, 0.002], [0.1, 0.05], step_size_up=3, "
              "step_size_down=5, mode='triangular2', base_momentum=0.85, max_momentum=0.95)",
    "cyclic_exp": "lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode='exp_range', "
                  "gamma=0.97)",
    "chained": "lambda o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=3), "
               "S.ExponentialLR(o, gamma=0.9)])",
}
# ReduceLROnPlateau: stepped with these metrics, by both libraries
PLATEAU_METRICS = [5, 4, 4, 4.1, 4, 3.9996, 4, 4, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2]
PLATEAU_CASES = {
    "plateau": "lambda o: S.ReduceLROnPlateau(o, factor=0.3, patience=1, cooldown=2, "
               "min_lr=0.001)",
    "plateau_abs_max": "lambda o: S.ReduceLROnPlateau(o, mode='max', threshold=0.5, "
                       "threshold_mode='abs', patience=2)",
}


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_sequences_match_torch():
    script = TORCH_SCRIPT + "".join("run(%r, %s)\n" % (k, v) for k, v in TORCH_CASES.items())
    script += "".join("run(%r, %s, %d, %r)\n" % (k, v, len(PLATEAU_METRICS), PLATEAU_METRICS)
                      for k, v in PLATEAU_CASES.items())
    script += "print(json.dumps(out))\n"
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, timeout=300)
    theirs = json.loads(res.stdout.strip().splitlines()[-1])
    cases = [(k, v, None) for k, v in TORCH_CASES.items()]
    cases += [(k, v, PLATEAU_METRICS) for k, v in PLATEAU_CASES.items()]
    for name, src, metrics in cases:
        opt = _opt(momentum=0.9)
        sched = eval(src)(opt)  # noqa: S307 - our own source text
        ours = [list(sched.get_last_lr())]
        for i in range(len(metrics) if metrics else EPOCHS):
            opt.step()
            sched.step(metrics[i]) if metrics is not None else sched.step()
            ours.append(list(sched.get_last_lr()) + [opt.param_groups[0]["momentum"]])
        assert len(ours) == len(theirs[name])
        for a, b in zip(ours, theirs[name]):
            assert a == pytest.approx(b, rel=1e-12, abs=1e-15), name
