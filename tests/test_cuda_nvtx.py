"""torch.cuda.nvtx: without a profiler attached every call is NVTX's no-op
(push and pop return -2, as torch's do); arguments are checked; range works
as a context manager and as a decorator."""
import pytest

import pycuda_sem as torch

nvtx = torch.cuda.nvtx


def test_calls_without_a_profiler():
    assert nvtx.range_push("outer") == -2 and nvtx.range_push("inner") == -2
    assert nvtx.range_pop() == -2 and nvtx.range_pop() == -2
    rid = nvtx.range_start("loose")
    assert isinstance(rid, int)
    nvtx.range_end(rid)
    assert nvtx.mark("event") is None

    @nvtx.range("step {}", 3)
    def step():
        return 7
    with nvtx.range("block {name}", name="x"):
        assert step() == 7


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="must be str"):
        nvtx.range_push(3)
    with pytest.raises(TypeError, match="must be str"):
        nvtx.mark(None)
    with pytest.raises((TypeError, OverflowError)):
        nvtx.range_end(-1)
