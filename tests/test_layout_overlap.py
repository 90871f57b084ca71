"""Overlapping outputs (issue 13): an output that is an expanded view, or that
partly overlaps an input, raises torch's RuntimeError instead of racing;
exact aliasing (in-place ops) keeps working. The same rules on the CPU and on
the GPU: the check is in the iteration core, before any kernel."""
import numpy as np
import pytest

import pycuda_sem as torch

INTERNAL = "more than one element of the written-to tensor refers to a single memory location"
PARTIAL = "some elements of the input tensor and the written-to tensor refer to a single memory location"

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


@pytest.mark.parametrize("device", DEVICES)
def test_expanded_output_raises(device):
    x = torch.zeros(4, device=device).expand(3, 4)
    with pytest.raises(RuntimeError, match=INTERNAL):
        x.add_(1)
    with pytest.raises(RuntimeError, match=INTERNAL):
        torch.add(torch.ones(3, 4, device=device), 1, out=x)
    with pytest.raises(RuntimeError, match=INTERNAL):
        x.copy_(torch.ones(3, 4, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_partial_overlap_raises(device):
    y = torch.arange(6.0, device=device)
    with pytest.raises(RuntimeError, match=PARTIAL):
        y[1:].add_(y[:-1])
    with pytest.raises(RuntimeError, match=PARTIAL):
        torch.mul(y[:-1], 2, out=y[1:])
    with pytest.raises(RuntimeError, match=PARTIAL):
        y[1:].copy_(y[:-1])
    m = torch.arange(16.0, device=device).reshape(4, 4)
    with pytest.raises(RuntimeError, match=PARTIAL):
        m.copy_(m.t())  # same memory, other strides
    assert y.cpu().numpy().tolist() == [0, 1, 2, 3, 4, 5]  # nothing was written


@pytest.mark.parametrize("device", DEVICES)
def test_exact_alias_and_disjoint_views_work(device):
    y = torch.arange(6.0, device=device)
    y.add_(y)  # in place on itself
    y.mul_(2)
    y[:3].add_(y[3:])  # disjoint halves of one storage
    torch.add(y, 1, out=y)
    np.testing.assert_array_equal(y.cpu().numpy(), [13.0, 21.0, 29.0, 13.0, 17.0, 21.0])
    m = torch.arange(16.0, device=device).reshape(4, 4)
    m.copy_(m)  # the very same view
    m[::2].copy_(m[1::2])  # interleaved rows: not dense, torch does not check
    np.testing.assert_array_equal(m.cpu().numpy()[0], [4.0, 5.0, 6.0, 7.0])


@pytest.mark.parametrize("device", DEVICES)
def test_fill_of_expanded_view_allowed(device):
    # fill_ is idempotent, torch skips the check for it
    base = torch.zeros(4, device=device)
    base.expand(3, 4).fill_(2)
    assert base.cpu().numpy().tolist() == [2, 2, 2, 2]
