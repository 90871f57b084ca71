"""torch.cuda's smaller functions (cuda/_extras.py) and the NVML readings
(cuda/_nvml.py): the build's architectures, nested memory statistics, raw
allocations, the memory fraction's getter, the refused debug modes, and
utilization/temperature/power/clock/memory and the process list on a GPU."""
import re

import pytest

import pycuda_sem as torch
from pycuda_sem import _C

cuda = pytest.mark.cuda


def test_arch_list_and_gencode_flags():
    archs = torch.cuda.get_arch_list()
    assert archs and all(re.fullmatch(r"(sm|compute)_\d+", a) for a in archs), archs
    flags = torch.cuda.get_gencode_flags().split(" -gencode ")
    assert len(flags) == len(archs)
    for a, f in zip(archs, flags):
        kind, num = a.split("_")
        assert f.replace("-gencode ", "") == "compute=compute_%s,code=%s_%s" % (num, kind, num)


def test_nested_memory_stats_undo_the_dotted_keys(monkeypatch):
    flat = {"allocated_bytes.all.current": 5, "allocated_bytes.all.peak": 7,
            "allocated_bytes.small_pool.current": 1, "num_alloc_retries": 2}
    monkeypatch.setattr(_C, "memory_stats", lambda device=None: dict(flat))
    nested = torch.cuda.memory_stats_as_nested_dict()
    assert nested == {"allocated_bytes": {"all": {"current": 5, "peak": 7},
                                          "small_pool": {"current": 1}},
                      "num_alloc_retries": 2}


def test_features_this_project_lacks_answer_honestly():
    assert torch.cuda.is_current_stream_capturing() is False
    assert torch.cuda.get_sync_debug_mode() == 0
    torch.cuda.set_sync_debug_mode("default")
    torch.cuda.set_sync_debug_mode(0)
    for mode in ("warn", "error", 1, 2):
        with pytest.raises(NotImplementedError, match="only 'default'"):
            torch.cuda.set_sync_debug_mode(mode)
    assert torch.cuda.get_sync_debug_mode() == 0
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        torch.cuda.set_sync_debug_mode("loud")
    with pytest.raises(TypeError):
        torch.cuda.set_sync_debug_mode(1.0)
    assert torch.cuda.has_half is True and torch.cuda.has_magma is False


def test_raw_allocation_argument_errors():
    with pytest.raises(RuntimeError, match="not allocated by caching_allocator_alloc"):
        torch.cuda.caching_allocator_delete(12345)
    with pytest.raises(TypeError):
        torch.cuda.caching_allocator_alloc(1.5)
    with pytest.raises(ValueError):
        torch.cuda.caching_allocator_alloc(-1)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        torch.cuda.get_per_process_memory_fraction("cpu")


@cuda
def test_arch_list_runs_on_this_device():
    major, minor = torch.cuda.get_device_capability()
    nums = [int(a.split("_")[1]) for a in torch.cuda.get_arch_list()]
    assert min(nums) <= major * 10 + minor


@cuda
def test_raw_allocations_come_from_the_cache_and_go_back():
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    p = torch.cuda.caching_allocator_alloc(1 << 20)
    assert isinstance(p, int) and p != 0
    assert torch.cuda.memory_allocated() >= base + (1 << 20)
    s = torch.cuda.Stream()
    q = torch.cuda.caching_allocator_alloc(4096, device=0, stream=s)
    assert q != p
    torch.cuda.caching_allocator_delete(p)
    torch.cuda.caching_allocator_delete(q)
    assert torch.cuda.memory_allocated() == base
    with pytest.raises(RuntimeError):
        torch.cuda.caching_allocator_delete(p)  # twice
    with pytest.raises(TypeError):
        torch.cuda.caching_allocator_alloc(16, stream=3)


@cuda
def test_nested_stats_match_the_flat_ones():
    x = torch.randn(1000, device="cuda")
    flat = torch.cuda.memory_stats()
    nested = torch.cuda.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"] > 0
    del x


@cuda
def test_memory_fraction_getter():
    assert torch.cuda.get_per_process_memory_fraction() == 1.0
    torch.cuda.set_per_process_memory_fraction(0.5)
    try:
        assert torch.cuda.get_per_process_memory_fraction(0) == 0.5
        assert torch.cuda.get_per_process_memory_fraction("cuda:0") == 0.5
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    assert torch.cuda.get_per_process_memory_fraction() == 1.0


@cuda
def test_nvml_readings_are_plausible():
    x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    x.fill_(1)
    torch.cuda.synchronize()
    assert 0 <= torch.cuda.utilization() <= 100
    assert 0 <= torch.cuda.memory_usage(0) <= 100
    assert 0 < torch.cuda.temperature() < 120
    assert torch.cuda.power_draw() > 0
    assert torch.cuda.clock_rate("cuda:0") > 0
    used = torch.cuda.device_memory_used()
    assert used >= torch.cuda.memory_reserved() >= (64 << 20)
    free, total = torch.cuda.mem_get_info()
    assert used <= total
    text = torch.cuda.list_gpu_processes()
    lines = text.split("\n")
    assert lines[0] == "GPU:%d" % torch.cuda.current_device()
    assert lines[1:] == ["no processes are running"] or all(
        re.fullmatch(r"process +\d+ uses +\d+\.\d{3} MB GPU memory", line) for line in lines[1:])
    with pytest.raises(ValueError):
        torch.cuda.temperature("cpu")
    del x


def test_graph_capture_and_mem_pools_say_they_are_missing():
    for make in (torch.cuda.CUDAGraph, lambda: torch.cuda.graph(None), torch.cuda.make_graphed_callables,
                 torch.cuda.graph_pool_handle, torch.cuda.MemPool, torch.cuda.use_mem_pool):
        with pytest.raises(NotImplementedError, match="pycuda_sem has"):
            make()
