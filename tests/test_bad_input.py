"""Wrong calls get a clear Python exception and change nothing.

A table of mistakes users make with the runtime API. Each row gives the call,
the exception type, and a fragment of the message that would help the user;
allocator statistics must be the same after the call as before it. Rows that
need a GPU are skipped without one (and rows that check the no-GPU message are
skipped with one)."""
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

HAVE_GPU = cuda.device_count() > 0
N = cuda.device_count()
BIG = 1 << 62

# (id, needs_gpu, call, exception, message fragment)
CASES = [
    ("device-gpu-string", False, lambda: torch.device("gpu"), RuntimeError, "device type"),
    ("device-bad-index", False, lambda: torch.device("cuda:x"), RuntimeError, "Invalid device string"),
    ("device-negative", False, lambda: torch.device("cuda:-1"), RuntimeError, "must not be negative"),
    ("device-empty", False, lambda: torch.device(""), RuntimeError, "device type"),
    ("device-float", False, lambda: torch.device(1.0), TypeError, "expected a device"),
    ("device-none", False, lambda: torch.device(None), TypeError, "expected a device"),
    ("device-list", False, lambda: torch.device(["cuda"]), TypeError, "expected a device"),
    ("device-negative-int", False, lambda: torch.device(-3), RuntimeError, "must not be negative"),
    ("device-two-indices", False, lambda: torch.device("cuda:0", 1), RuntimeError, "index"),
    ("device-index-type", False, lambda: torch.device("cuda", "1"), TypeError, ""),
    ("cpu-index", False, lambda: torch.device("cpu", 3), RuntimeError, "CPU device index"),
    ("cuda-device-cpu", False, lambda: cuda.device("cpu"), ValueError, "Expected a cuda device"),
    ("cuda-device-float", False, lambda: cuda.device(0.5), TypeError, "expected a device"),
    ("cuda-device-two-args", False, lambda: cuda.device(0, 1), TypeError, "one argument"),
    ("stream-ctx-no-arg", False, lambda: cuda.stream(), TypeError, "stream"),
    ("stream-ctx-int", False, lambda: cuda.stream(3), TypeError, "cuda.Stream"),
    ("set-stream-str", False, lambda: cuda.set_stream("s"), TypeError, "cuda.Stream"),
    ("event-bad-kw", False, lambda: cuda.Event(timing=True), TypeError, "timing"),
    ("event-timing-ipc", False, lambda: cuda.Event(enable_timing=True, interprocess=True),
     ValueError, "interprocess"),
    ("elapsed-before-record", False,
     lambda: cuda.Event(enable_timing=True).elapsed_time(cuda.Event(enable_timing=True)),
     RuntimeError, "recorded"),
    ("elapsed-not-event", False, lambda: cuda.Event().elapsed_time(None), TypeError, "cuda.Event"),
    ("ipc-handle-not-ipc", False, lambda: cuda.Event().ipc_handle(), RuntimeError, "interprocess"),
    ("storage-negative", False, lambda: torch.UntypedStorage(-5), RuntimeError, "non-negative"),
    ("storage-str-size", False, lambda: torch.UntypedStorage("10"), TypeError, ""),
    ("storage-bad-device", False, lambda: torch.UntypedStorage(4, device="tpu"), RuntimeError,
     "device type"),
    ("storage-record-none", False, lambda: torch.UntypedStorage(4).record_stream(None), TypeError,
     "cuda.Stream"),
    ("fraction-negative", False, lambda: cuda.set_per_process_memory_fraction(-1.0), ValueError,
     "Allowed range"),
    ("fraction-big", False, lambda: cuda.set_per_process_memory_fraction(2.0), ValueError,
     "Allowed range"),
    ("fraction-str", False, lambda: cuda.set_per_process_memory_fraction("half"), TypeError, ""),
    ("memstats-bad-device", False, lambda: cuda.memory_stats("tpu"), RuntimeError, "device type"),
    ("memalloc-cpu-device", False, lambda: cuda.memory_allocated("cpu"), ValueError,
     "Expected a cuda device"),
    ("props-two-args", False, lambda: cuda.get_device_properties(0, 1), TypeError, "at most one"),
    ("props-bad-kw", False, lambda: cuda.get_device_name(dev=0), TypeError, "unexpected keyword"),
    ("peer-one-arg", False, lambda: cuda.can_device_access_peer(0), TypeError, ""),
    # with a GPU
    ("set-device-range", True, lambda: cuda.set_device(N), RuntimeError, "invalid device ordinal"),
    ("props-range", True, lambda: cuda.get_device_properties(N + 5), RuntimeError,
     "invalid device ordinal"),
    ("stream-range", True, lambda: cuda.Stream(device=N), RuntimeError, "invalid device ordinal"),
    ("stream-string-range", True, lambda: cuda.current_stream("cuda:%d" % N), RuntimeError,
     "invalid device ordinal"),
    ("sync-range", True, lambda: cuda.synchronize(N), RuntimeError, "invalid device ordinal"),
    ("memalloc-range", True, lambda: cuda.memory_allocated(N), RuntimeError,
     "invalid device ordinal"),
    ("storage-range", True, lambda: torch.UntypedStorage(4, device="cuda:%d" % N), RuntimeError,
     "invalid device ordinal"),
    ("storage-huge", True, lambda: torch.UntypedStorage(BIG, device="cuda"), cuda.OutOfMemoryError,
     "Tried to allocate"),
    ("stream-priority-type", True, lambda: cuda.Stream(priority="high"), TypeError, ""),
    ("wait-event-not-event", True, lambda: cuda.current_stream().wait_event(3), TypeError,
     "cuda.Event"),
    ("wait-stream-not-stream", True, lambda: cuda.current_stream().wait_stream(None), TypeError,
     "cuda.Stream"),
    ("record-event-not-event", True, lambda: cuda.current_stream().record_event("e"), TypeError,
     "cuda.Event"),
    ("event-record-not-stream", True, lambda: cuda.Event().record(5), TypeError, "cuda.Stream"),
    ("record-stream-cpu", True,
     lambda: torch.UntypedStorage(4).record_stream(cuda.current_stream()), RuntimeError,
     "CUDA storage"),
    ("ipc-open-short", True, lambda: cuda.Event.from_ipc_handle(0, b"xx"), ValueError, "64"),
    ("ext-stream-bad-ptr", True, lambda: cuda.ExternalStream("x"), TypeError, ""),
]


def _stats():
    if not HAVE_GPU:
        return None
    s = cuda.memory_stats()
    return {k: v for k, v in s.items() if k.endswith(".current")}


@pytest.mark.parametrize("needs_gpu,call,exc,fragment",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wrong_call(needs_gpu, call, exc, fragment):
    if needs_gpu and not HAVE_GPU:
        pytest.skip("needs a CUDA GPU")
    before = _stats()
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value), str(info.value)
    assert _stats() == before


def test_table_is_large_and_distinct():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 50
