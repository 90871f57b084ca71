"""torch.cuda.nvtx: ranges and marks that Nsight Systems shows on its
timeline (NVTX v3, csrc/runtime/nvtx.c). Without a profiler attached every
call is a no-op: push and pop return -2, as torch's do."""
import contextlib

from .. import _C

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def range_push(msg):
    """Open a nested range named msg; returns its zero-based depth (-2 without a profiler)."""
    return _C._nvtx_range_push(msg)


def range_pop():
    """Close the innermost range; returns its depth (-2 without a profiler)."""
    return _C._nvtx_range_pop()


def range_start(msg):
    """Open a range that need not nest (it may end on another thread); returns its id."""
    return _C._nvtx_range_start(msg)


def range_end(range_id):
    """Close the range range_start returned."""
    _C._nvtx_range_end(range_id)


def mark(msg):
    """An instantaneous event named msg."""
    _C._nvtx_mark(msg)


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 - torch's name
    """Context manager and decorator: a range named msg.format(*args, **kwargs)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
