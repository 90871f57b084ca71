"""torch.accelerator, torch.Stream and torch.Event (accelerator.py,
_generic_stream.py): the device-generic names over this project's CUDA
runtime, with and without a GPU."""
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

cuda = pytest.mark.cuda


def test_current_accelerator_is_cuda_as_built():
    acc = torch.accelerator.current_accelerator()
    assert isinstance(acc, torch.device) and acc.type == "cuda"
    checked = torch.accelerator.current_accelerator(check_available=True)
    if torch.cuda.is_available():
        assert checked == acc
    else:
        assert checked is None
    assert torch.accelerator.is_available() == torch.cuda.is_available()
    assert torch.accelerator.device_count() == torch.cuda.device_count()
    with pytest.raises(TypeError):
        torch.accelerator.current_accelerator(check_available="yes")


def test_the_device_picking_idiom_of_torch_examples():
    acc = torch.accelerator.current_accelerator()
    device = acc.type if torch.accelerator.is_available() else "cpu"
    x = torch.ones(3, device=device)
    assert x.device.type == device
    if real_torch is not None:
        assert real_torch.accelerator.current_accelerator().type == acc.type


def test_argument_errors():
    with pytest.raises(TypeError):
        torch.accelerator.device_index("0")
    with pytest.raises(TypeError):
        torch.accelerator.set_stream(3)
    with pytest.raises(ValueError, match="only on CUDA"):
        torch.Event(device="cpu")
    with pytest.raises(ValueError, match="only on CUDA"):
        torch.Stream(device="cpu")
    with pytest.raises(TypeError):
        torch.Stream(device=1.5)
    with pytest.raises(TypeError):
        torch.Stream(flavour=1)
    with pytest.raises(ValueError):
        torch.accelerator.memory_allocated("cpu")
    # None means "leave the device alone" and needs no GPU.
    with torch.accelerator.device_index(None) as d:
        assert d.idx is None


def test_generic_classes_count_the_cuda_ones():
    assert issubclass(torch.cuda.Stream, torch.Stream)
    assert issubclass(torch.cuda.Event, torch.Event)
    assert not issubclass(torch.cuda.Event, torch.Stream)
    ev = torch.cuda.Event()
    assert isinstance(ev, torch.Event) and not isinstance(ev, torch.Stream)
    gev = torch.Event(enable_timing=True)
    assert isinstance(gev, torch.cuda.Event) and isinstance(gev, torch.Event)
    assert gev.device_type == "cuda" and gev.event_id == 0  # not recorded yet
    assert torch.OutOfMemoryError is torch.cuda.OutOfMemoryError


@cuda
def test_streams_events_and_memory_through_the_generic_names():
    acc = torch.accelerator
    assert acc.current_device_index() == torch.cuda.current_device()
    assert acc.current_device_idx() == acc.current_device_index()
    cur = acc.current_stream()
    assert isinstance(cur, torch.Stream) and cur == torch.cuda.current_stream()
    s = torch.Stream(device="cuda")
    assert isinstance(s, torch.cuda.Stream)
    assert s.device_type == "cuda" and s.native_handle == s.cuda_stream == s.stream_id
    assert s.is_capturing() is False
    acc.set_stream(s)
    try:
        assert torch.cuda.current_stream() == s
        a = torch.randn(1 << 20, device="cuda")
        b = (a * 2).sum()
        start, end = torch.Event(enable_timing=True), torch.Event(enable_timing=True)
        start.record()
        for _ in range(10):
            b = b + (a * 2).sum()
        end.record()
        end.synchronize()
        assert end.event_id != 0 and start.elapsed_time(end) >= 0.0
    finally:
        acc.set_stream(cur)
    acc.synchronize()
    assert abs(b.item() - 11 * 2 * a.sum().item()) <= 1e-3 * abs(b.item()) + 1e-2
    assert acc.memory_allocated() == torch.cuda.memory_allocated()
    assert acc.memory_allocated("cuda:0") == torch.cuda.memory_allocated(0)
    assert acc.max_memory_allocated() >= acc.memory_allocated() > 0
    assert acc.memory_reserved() >= acc.memory_allocated()
    assert acc.max_memory_reserved() >= acc.memory_reserved()
    assert acc.memory_stats()["allocated_bytes.all.current"] == acc.memory_allocated()
    free, total = acc.get_memory_info()
    assert 0 < free <= total
    caps = acc.get_device_capability()
    assert torch.float32 in caps["supported_dtypes"] and torch.bfloat16 in caps["supported_dtypes"]
    del a, b
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() == acc.memory_allocated()
    acc.reset_accumulated_memory_stats()
    acc.empty_cache()
    acc.empty_host_cache()


@cuda
def test_device_index_restores_the_device():
    before = torch.accelerator.current_device_index()
    last = torch.accelerator.device_count() - 1
    with torch.accelerator.device_index(last):
        assert torch.cuda.current_device() == last
        torch.accelerator.set_device_index(0)
        assert torch.accelerator.current_device_index() == 0
    assert torch.accelerator.current_device_index() == before
    torch.accelerator.set_device_idx(before)
