"""nn.SyncBatchNorm outside a multi-rank group (BatchNorm over any input of
2+ dims, as torch's fallback) and convert_sync_batchnorm; inside one, the
cross-rank statistics raise NotImplementedError."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


@pytest.mark.parametrize("device", DEVICES)
def test_single_process_is_batchnorm(device):
    torch.manual_seed(0)
    x = torch.randn(6, 3, 4, 5, device=device)
    bn, sbn = nn.BatchNorm2d(3).to(device), nn.SyncBatchNorm(3).to(device)
    np.testing.assert_allclose(sbn(x).detach().cpu().numpy(), bn(x).detach().cpu().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sbn.running_mean.cpu().numpy(), bn.running_mean.cpu().numpy(), rtol=1e-6)
    assert sbn(torch.randn(6, 3, device=device)).shape == (6, 3)  # any rank >= 2
    with pytest.raises(ValueError, match="at least 2D"):
        sbn(torch.randn(3, device=device))


def test_convert_sync_batchnorm_keeps_parameters_and_statistics():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(4)))
    with torch.no_grad():
        m[1].weight.fill_(2.0)
        m[1].running_mean.fill_(0.5)
    m.eval()
    c = nn.SyncBatchNorm.convert_sync_batchnorm(m)
    assert isinstance(c[1], nn.SyncBatchNorm) and isinstance(c[2][0], nn.SyncBatchNorm)
    assert c[1].weight is m[1].weight and c[1].running_mean.tolist() == [0.5] * 4
    assert not c[1].training and list(c.state_dict()) == list(m.state_dict())


def test_multi_rank_training_is_not_implemented(monkeypatch):
    import pycuda_sem.distributed as dist
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
    sbn = nn.SyncBatchNorm(3)
    with pytest.raises(NotImplementedError, match="across 2 ranks"):
        sbn(torch.randn(4, 3))
    sbn.eval()
    assert sbn(torch.randn(4, 3)).shape == (4, 3)  # eval uses the running statistics: no sync
