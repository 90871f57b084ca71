"""optim.swa_utils: AveragedModel (SWA running mean, EMA by avg_fn and by
multi_avg_fn, buffers), update_bn, SWALR; against the averages computed
here from parameter snapshots, and against torch where it imports."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.optim import swa_utils

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def _train(T, device, weights, steps=5):
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Linear(4, 2)).to(device)
    with T.no_grad():
        for p, w in zip(m.parameters(), weights):
            p.copy_(T.tensor(w, device=device))
    avg = {"swa": T.optim.swa_utils.AveragedModel(m),
           "ema": T.optim.swa_utils.AveragedModel(m, multi_avg_fn=T.optim.swa_utils.get_ema_multi_avg_fn(0.9)),
           "ema1": T.optim.swa_utils.AveragedModel(m, avg_fn=T.optim.swa_utils.get_ema_avg_fn(0.8), use_buffers=True)}
    opt = T.optim.SGD(m.parameters(), lr=0.01)
    sched = T.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
    rng = np.random.default_rng(1)
    data = [T.tensor(rng.standard_normal((8, 3)).astype(np.float32), device=device) for _ in range(steps)]
    snaps, lrs = [], []
    for x in data:
        opt.zero_grad()
        m(x).tanh().mean().backward()
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
        snaps.append([p.detach().cpu().numpy().copy() for p in m.parameters()])
        for a in avg.values():
            a.update_parameters(m)
    return m, avg, snaps, lrs, data


def _weights():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (4,), (4,), (4,), (2, 4), (2,)]]


@pytest.mark.parametrize("device", DEVICES)
def test_averages_follow_their_rules(device):
    m, avg, snaps, lrs, data = _train(torch, device, _weights())
    snaps = [np.stack(s) for s in zip(*snaps)]  # per parameter: [steps, ...]
    for p, s in zip(avg["swa"].parameters(), snaps):
        np.testing.assert_allclose(p.detach().cpu().numpy(), s.mean(0), rtol=1e-5, atol=1e-6)
    for p, s in zip(avg["ema"].parameters(), snaps):
        e = s[0]
        for k in range(1, len(s)):
            e = 0.9 * e + 0.1 * s[k]
        np.testing.assert_allclose(p.detach().cpu().numpy(), e, rtol=1e-5, atol=1e-6)
    assert avg["swa"].n_averaged.item() == 5
    # buffers: copied from the model without use_buffers, averaged with it
    np.testing.assert_array_equal(avg["swa"].module[1].running_mean.cpu().numpy(), m[1].running_mean.cpu().numpy())
    np.testing.assert_allclose(lrs, [0.02, 0.04, 0.05, 0.05, 0.05], rtol=1e-12)
    out = avg["swa"](data[0])
    assert out.shape == (8, 2)


@pytest.mark.parametrize("device", DEVICES)
def test_update_bn_recomputes_the_statistics(device):
    m, avg, _, _, data = _train(torch, device, _weights())
    swa = avg["swa"]
    swa.train(False)
    swa_utils.update_bn([(d,) for d in data], swa)
    assert not swa.training and swa.module[1].momentum == 0.1
    with torch.no_grad():
        h = torch.cat([swa.module[0](d) for d in data]).cpu().numpy()
    np.testing.assert_allclose(swa.module[1].running_mean.cpu().numpy(), h.mean(0), rtol=1e-5, atol=1e-6)


def test_against_torch():
    if real_torch is None:
        pytest.skip("torch does not import here")
    a = _train(torch, "cpu", _weights())
    b = _train(real_torch, "cpu", _weights())
    for k in ("swa", "ema", "ema1"):
        for x, y in zip(list(a[1][k].parameters()) + list(a[1][k].buffers()),
                        list(b[1][k].parameters()) + list(b[1][k].buffers())):
            np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert a[3] == pytest.approx(b[3])


def test_swalr_checks():
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy"):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs"):
        swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    s = swa_utils.SWALR(opt, 0.1, anneal_epochs=2, anneal_strategy="linear")
    lrs = []
    for _ in range(3):
        opt.step()
        s.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == pytest.approx([0.55, 0.1, 0.1])  # torch 2.15: the same
