"""Wrong calls get a clear Python exception and change nothing.

A table of mistakes users make with the runtime API. Each row gives the call,
the exception type, and a fragment of the message that would help the user;
allocator statistics must be the same after the call as before it. Rows that
need a GPU are skipped without one (and rows that check the no-GPU message are
skipped with one). Rows marked ``multigpu`` need two GPUs; rows wrapped in
``_xfail`` document a known wrong behaviour in a file owned elsewhere (strict:
they start failing loudly once fixed, so the mark gets removed).

Behaviour that PyTorch allows is asserted to work rather than raise:
``non_blocking=True`` from unpinned host memory is a plain synchronous copy."""
import os

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

HAVE_GPU = cuda.device_count() > 0
N = cuda.device_count()
BIG = 1 << 62
_UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "") and \
    "allocator_may_return_null=1" not in os.environ.get("ASAN_OPTIONS", "")
_T = lambda: torch.ones(2, 3)  # noqa: E731


def _c(*a, **k):
    """A CUDA tensor of ones (current device)."""
    return torch.ones(*a, device="cuda", **k)


def _c1(*a, **k):
    """A CUDA tensor on the second device."""
    return torch.ones(*a, device="cuda:1", **k)


def _set_plan_cache(n, device=None):
    cache = torch.backends.cuda.cufft_plan_cache
    if device is not None:
        cache = cache[device]
    cache.max_size = n


def _elapsed_cross_device():
    a = cuda.Event(enable_timing=True)
    b = cuda.Event(enable_timing=True)
    a.record(cuda.current_stream(0))
    with cuda.device(1):
        b.record(cuda.current_stream(1))
    cuda.synchronize(0)
    cuda.synchronize(1)
    return a.elapsed_time(b)


def _record_on_other_device():
    e = cuda.Event()
    e.record(cuda.current_stream(0))
    e.record(cuda.current_stream(1))

def _set_flag(owner, name, value):
    """Sets a backend flag; checks that a refused value left it as it was."""
    before = getattr(owner, name)
    try:
        setattr(owner, name, value)
    finally:
        assert getattr(owner, name) is before

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

    # ---- tensors on the CPU: factories, sizes, dtypes
    ("empty-negative", False, lambda: torch.empty(-1), RuntimeError, "negative dimension -1"),
    ("empty-negative-2d", False, lambda: torch.empty(3, -4), RuntimeError, "negative dimension -4"),
    ("empty-2pow62", False, lambda: torch.empty(BIG), RuntimeError, "overflows"),
    ("empty-numel-wraps", False, lambda: torch.empty(1 << 31, 1 << 31, 4), RuntimeError,
     "overflows"),
    ("empty-strides-wrap", False, lambda: torch.empty(1 << 32, 1 << 32, 1 << 32), RuntimeError,
     "overflows"),
    ("empty-many-dims-huge", False, lambda: torch.empty([1 << 20] * 5), RuntimeError, "overflows"),
    ("empty-2pow64", False, lambda: torch.empty(1 << 64), OverflowError, "too big"),
    # AddressSanitizer's malloc aborts on requests over 1 TiB instead of returning NULL
    # (unless ASAN_OPTIONS has allocator_may_return_null=1): skipped under `make test-asan`
    pytest.param("zeros-uint8-huge", False, lambda: torch.zeros(BIG, dtype=torch.uint8),
                 MemoryError, "cannot allocate", id="zeros-uint8-huge",
                 marks=pytest.mark.skipif(_UNDER_ASAN, reason="ASan aborts on huge malloc")),
    ("full-huge", False, lambda: torch.full((BIG,), 1.0), RuntimeError, "overflows"),
    ("zeros-str-size", False, lambda: torch.zeros("3"), TypeError, "sizes must be ints"),
    ("zeros-float-size", False, lambda: torch.zeros(2.5), TypeError, "sizes must be ints"),
    ("ones-dtype-str", False, lambda: torch.ones(2, dtype="float32"), TypeError,
     "dtype must be a pycuda_sem.dtype"),
    ("ones-dtype-numpy", False, lambda: torch.ones(2, dtype=np.float32), TypeError,
     "dtype must be a pycuda_sem.dtype"),
    ("empty-like-dtype-int", False, lambda: torch.empty_like(_T(), dtype=3), TypeError,
     "dtype must be"),
    ("zeros-like-list", False, lambda: torch.zeros_like([1, 2]), TypeError, "expects a tensor"),
    ("full-no-fill", False, lambda: torch.full((2,)), TypeError, "fill_value"),
    ("full-str-fill", False, lambda: torch.full((2,), "a"), TypeError, "expected a number"),
    ("full-int64-overflow", False, lambda: torch.full((2,), 1 << 70, dtype=torch.int64),
     RuntimeError, "Overflow"),
    ("arange-step-zero", False, lambda: torch.arange(0, 10, 0), RuntimeError, "step must be nonzero"),
    ("arange-wrong-sign", False, lambda: torch.arange(0, 10, -1), RuntimeError, "step sign"),
    ("arange-nan", False, lambda: torch.arange(0, float("nan")), RuntimeError, "0 -> nan"),
    ("arange-complex", False, lambda: torch.arange(1j), TypeError, "complex"),
    ("linspace-negative", False, lambda: torch.linspace(0, 1, -1), RuntimeError, "non-negative"),
    ("eye-negative", False, lambda: torch.eye(-2), RuntimeError, "greater or equal to 0"),
    ("empty-strided-len", False, lambda: torch.empty_strided((2, 3), (1,)), RuntimeError,
     "length of strides and shape"),
    ("tensor-ragged", False, lambda: torch.tensor([[1, 2], [3]]), ValueError,
     "expected sequence of length 2"),
    ("tensor-str", False, lambda: torch.tensor("abc"), TypeError, "invalid data type 'str'"),
    ("tensor-object", False, lambda: torch.tensor([object()]), TypeError, "invalid data type"),
    ("tensor-int-overflow", False, lambda: torch.tensor([1 << 64]), RuntimeError, "Overflow"),
    ("tensor-2pow63", False, lambda: torch.tensor([1 << 63]), RuntimeError,
     "Overflow when unpacking long"),
    ("tensor-int64-2pow64-1", False, lambda: torch.tensor([(1 << 64) - 1], dtype=torch.int64),
     RuntimeError, "Overflow when unpacking long"),
    ("tensor-int8-2pow63", False, lambda: torch.tensor([[1], [1 << 63]], dtype=torch.int8),
     RuntimeError, "Overflow when unpacking long"),
    ("binary-int64-plus-2pow63", False, lambda: torch.tensor([1, 2]) + (1 << 63), RuntimeError,
     "cannot be converted to type int64_t without overflow"),
    ("binary-cuda-int64-plus-2pow63", True, lambda: torch.ones(2, dtype=torch.int64, device="cuda") + (1 << 63),
     RuntimeError, "without overflow"),
    ("binary-int-eq-2pow64-1", False, lambda: torch.tensor([1], dtype=torch.int32).eq((1 << 64) - 1),
     RuntimeError, "without overflow"),
    ("tensor-int64-complex", False, lambda: torch.tensor([1 + 2j], dtype=torch.int64), TypeError,
     "'complex' object cannot be interpreted as an integer"),
    ("tensor-uint8-complex-zero-imag", False,
     lambda: torch.tensor([[1, 2], [3, 4 + 0j]], dtype=torch.uint8), TypeError,
     "cannot be interpreted as an integer"),
    ("tensor-float-complex", False, lambda: torch.tensor([1 + 2j], dtype=torch.float32),
     TypeError, "must be real number, not complex"),
    ("legacy-long-complex", False, lambda: torch.LongTensor([2j]), TypeError,
     "cannot be interpreted as an integer"),
    ("tensor-int8-300", False, lambda: torch.tensor([300], dtype=torch.int8), RuntimeError,
     "value cannot be converted to type int8 without overflow"),
    ("tensor-int8-low", False, lambda: torch.tensor([[1], [-129]], dtype=torch.int8), RuntimeError,
     "type int8 without overflow"),
    ("tensor-uint8-256", False, lambda: torch.tensor([256], dtype=torch.uint8), RuntimeError,
     "type uint8 without overflow"),
    ("tensor-uint8-minus-256", False, lambda: torch.tensor([-256], dtype=torch.uint8),
     RuntimeError, "type uint8 without overflow"),
    ("tensor-uint8-minus-float", False, lambda: torch.tensor([-1.0], dtype=torch.uint8),
     RuntimeError, "type uint8 without overflow"),
    ("tensor-int16-big", False, lambda: torch.tensor([40000], dtype=torch.int16), RuntimeError,
     "type int16 without overflow"),
    ("tensor-int32-big", False, lambda: torch.tensor([1 << 31], dtype=torch.int32), RuntimeError,
     "type int32 without overflow"),
    ("tensor-int64-nan", False, lambda: torch.tensor([float("nan")], dtype=torch.int64),
     RuntimeError, "type int64 without overflow"),
    ("as-tensor-int8-300", False, lambda: torch.as_tensor([300], dtype=torch.int8), RuntimeError,
     "type int8 without overflow"),
    ("legacy-char-300", False, lambda: torch.CharTensor([300]), RuntimeError,
     "type int8 without overflow"),
    ("full-int8-300", False, lambda: torch.full((2,), 300, dtype=torch.int8), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("full-uint8-256", False, lambda: torch.full((2,), 256, dtype=torch.uint8), RuntimeError,
     "type uint8_t without overflow"),
    ("full-int32-big", False, lambda: torch.full((2,), 1 << 31, dtype=torch.int32), RuntimeError,
     "type int without overflow"),
    ("full-int64-2pow63", False, lambda: torch.full((2,), 1 << 63, dtype=torch.int64),
     RuntimeError, "value cannot be converted to type int64_t without overflow"),
    ("full-2pow63-inferred", False, lambda: torch.full((2,), 1 << 63), RuntimeError,
     "type int64_t without overflow"),
    ("fill-int64-2pow63", False, lambda: torch.ones(2, dtype=torch.int64).fill_(1 << 63),
     RuntimeError, "type int64_t without overflow"),
    ("fill-uint8-2pow64-1", False, lambda: torch.ones(2, dtype=torch.uint8).fill_((1 << 64) - 1),
     RuntimeError, "type uint8_t without overflow"),
    ("setitem-int32-2pow63", False,
     lambda: torch.ones(2, dtype=torch.int32).__setitem__(0, 1 << 63), RuntimeError,
     "type int without overflow"),
    ("full-like-int8-300", False, lambda: torch.full_like(torch.ones(2, dtype=torch.int8), 300),
     RuntimeError, "type int8_t without overflow"),
    ("fill-int8-300", False, lambda: torch.ones(2, dtype=torch.int8).fill_(300), RuntimeError,
     "type int8_t without overflow"),
    ("fill-int16-float", False, lambda: torch.ones(2, dtype=torch.int16).fill_(1e6), RuntimeError,
     "type int16_t without overflow"),
    ("fill-half-big", False, lambda: torch.ones(2, dtype=torch.float16).fill_(1e5), RuntimeError,
     "type at::Half without overflow"),
    ("fill-float-complex", False, lambda: torch.ones(2).fill_(1 + 2j), RuntimeError,
     "type float without overflow"),
    ("setitem-int8-300", False, lambda: torch.ones(2, dtype=torch.int8).__setitem__(0, 300),
     RuntimeError, "type int8_t without overflow"),
    ("as-tensor-ragged", False, lambda: torch.as_tensor([[1], []]), ValueError,
     "expected sequence of length 1"),
    # torch's as_tensor takes data, dtype and device only; other factory options
    # must not be swallowed (pin_memory=False: the keyword itself is the error)
    ("as-tensor-pin-memory", False, lambda: torch.as_tensor([1.0], pin_memory=False), TypeError,
     "as_tensor() got an unexpected keyword argument 'pin_memory'"),
    ("as-tensor-pin-memory-true", False, lambda: torch.as_tensor([1.0], pin_memory=True),
     TypeError, "unexpected keyword argument 'pin_memory'"),
    ("as-tensor-requires-grad", False, lambda: torch.as_tensor([1.0], requires_grad=False),
     TypeError, "unexpected keyword argument 'requires_grad'"),
    ("as-tensor-layout", False, lambda: torch.as_tensor(_T(), layout=None), TypeError,
     "unexpected keyword argument 'layout'"),
    ("as-tensor-out", False, lambda: torch.as_tensor(np.ones(2), out=None), TypeError,
     "unexpected keyword argument 'out'"),
    ("as-tensor-positional-dtype", False, lambda: torch.as_tensor([1], torch.float64), TypeError,
     "as_tensor() takes 1 positional argument but 2 were given"),
    ("tensor-int8-2pow64", False, lambda: torch.tensor([1, 1 << 64], dtype=torch.int8),
     RuntimeError, "Overflow when unpacking long"),
    ("tensor-float64-2pow1024", False, lambda: torch.tensor([1 << 1024], dtype=torch.float64),
     OverflowError, "int too large to convert to float"),
    ("addmm-int64-alpha-2pow63", False,
     lambda: torch.addmm(torch.ones(2, 2, dtype=torch.int64), torch.ones(2, 2, dtype=torch.int64),
                         torch.ones(2, 2, dtype=torch.int64), alpha=1 << 63),
     RuntimeError, "value cannot be converted to type int64_t without overflow"),
    ("addmm-int32-beta-2pow40", False,
     lambda: torch.ones(2, 2, dtype=torch.int32).addmm(torch.ones(2, 2, dtype=torch.int32),
                                                      torch.ones(2, 2, dtype=torch.int32), beta=1 << 40),
     RuntimeError, "type int without overflow"),
    ("arange-int64-2pow63", False, lambda: torch.arange(0, 1 << 63, 1 << 62), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    ("from-numpy-str", False, lambda: torch.from_numpy(np.array(["a"])), TypeError,
     "can't convert np.ndarray"),
    ("from-numpy-list", False, lambda: torch.from_numpy([1, 2]), TypeError, "expected np.ndarray"),
    ("from-numpy-uint16", False, lambda: torch.from_numpy(np.ones(2, np.uint16)), TypeError,
     "uint16"),
    ("set-default-dtype-int", False, lambda: torch.set_default_dtype(torch.int64), TypeError,
     "floating-point"),
    ("set-default-dtype-str", False, lambda: torch.set_default_dtype("float"), TypeError,
     "dtype must be"),
    ("promote-types-str", False, lambda: torch.promote_types(torch.float32, "a"), TypeError,
     "dtype must be"),
    ("to-dtype-str", False, lambda: _T().to(dtype="float64"), TypeError, "dtype must be"),
    ("to-bad-device", False, lambda: _T().to("tpu"), RuntimeError, "device type"),
    ("to-float-device", False, lambda: _T().to(3.5), TypeError, "expected a device"),
    ("type-bad-name", False, lambda: _T().type("torch.Foo"), ValueError, "invalid type"),
    # ---- views and shapes
    ("view-numel", False, lambda: _T().view(4), RuntimeError, "is invalid for input of size 6"),
    ("view-two-infer", False, lambda: _T().view(-1, -1), RuntimeError,
     "only one dimension can be inferred"),
    ("view-noncontiguous", False, lambda: _T().t().view(6), RuntimeError, "reshape"),
    ("view-negative", False, lambda: _T().view(-2, 3), RuntimeError, "invalid shape dimension -2"),
    ("view-huge", False, lambda: _T().view(BIG, 0), RuntimeError, "is invalid for input"),
    ("reshape-numel", False, lambda: _T().reshape(5), RuntimeError, "is invalid for input of size 6"),
    ("expand-mismatch", False, lambda: _T().expand(3, 3), RuntimeError, "expanded size"),
    ("expand-fewer-dims", False, lambda: _T().expand(3), RuntimeError, "number of sizes provided"),
    ("expand-negative", False, lambda: _T().expand(-2, 3), RuntimeError, "expanded size"),
    # torch refuses the view itself: "numel: integer multiplication overflow"
    ("expand-huge-contiguous", False, lambda: _T().expand(BIG, 2, 3).contiguous(), RuntimeError,
     "overflow"),
    ("as-strided-negative", False, lambda: _T().as_strided((2,), (-1,)), RuntimeError,
     "Negative strides"),
    ("as-strided-past-end", False, lambda: _T().as_strided((10,), (1,)), RuntimeError,
     "past the end of the storage"),
    ("transpose-dim", False, lambda: _T().transpose(0, 2), IndexError, "Dimension out of range"),
    ("permute-duplicate", False, lambda: _T().permute(0, 0), RuntimeError, "duplicate dims"),
    ("permute-length", False, lambda: _T().permute(0), RuntimeError, "number of dimensions"),
    ("squeeze-dim", False, lambda: _T().squeeze(4), IndexError, "Dimension out of range"),
    ("unsqueeze-dim", False, lambda: _T().unsqueeze(4), IndexError, "range of [-3, 2]"),
    ("flatten-dim", False, lambda: _T().flatten(0, 5), IndexError, "Dimension out of range"),
    ("unbind-dim", False, lambda: _T().unbind(3), IndexError, "Dimension out of range"),
    ("swapdims-dim", False, lambda: _T().swapdims(0, 9), IndexError, "got 9"),
    ("size-dim", False, lambda: _T().size(2), IndexError, "Dimension out of range"),
    ("stride-dim", False, lambda: _T().stride(-3), IndexError, "got -3"),
    ("narrow-past-end", False, lambda: _T().narrow(1, 2, 5), RuntimeError, "exceeds dimension size"),
    ("select-index", False, lambda: _T().select(0, 2), IndexError, "out of bounds"),
    # ---- indexing
    ("index-past-end", False, lambda: _T()[2], IndexError, "index 2 is out of bounds"),
    ("index-negative", False, lambda: _T()[-3], IndexError, "index -3 is out of bounds"),
    ("index-too-many", False, lambda: _T()[0, 0, 0], IndexError, "too many indices"),
    ("index-float", False, lambda: _T()[1.5], IndexError, "only integers, slices"),
    ("index-str", False, lambda: _T()["a"], IndexError, "only integers, slices"),
    ("index-step-zero", False, lambda: _T()[::0], ValueError, "step cannot be zero"),
    ("index-step-negative", False, lambda: _T()[::-1], ValueError, "step must be greater than zero"),
    ("setitem-shape", False, lambda: _T().__setitem__(0, torch.ones(4)), RuntimeError,
     "expanded size"),
    ("setitem-str", False, lambda: _T().__setitem__(0, "a"), TypeError, "expected a number"),
    ("item-many", False, lambda: _T().item(), RuntimeError, "cannot be converted to Scalar"),
    ("float-many", False, lambda: float(_T()), RuntimeError, "cannot be converted to Scalar"),
    ("bool-many", False, lambda: bool(_T()), RuntimeError, "ambiguous"),
    ("index-of-float-tensor", False, lambda: [1, 2][torch.tensor(1.0)], TypeError,
     "integer tensors"),
    ("len-0d", False, lambda: len(torch.tensor(1.0)), TypeError, "0-d tensor"),
    ("iter-0d", False, lambda: iter(torch.tensor(1.0)), TypeError, "0-d tensor"),
    # ---- ops and reductions
    ("add-shapes", False, lambda: _T() + torch.ones(4), RuntimeError, "must match the size"),
    ("add-str", False, lambda: _T() + "a", TypeError, "unsupported operand"),
    ("add-int-overflow", False, lambda: torch.ones(2, dtype=torch.int64) + (1 << 70), RuntimeError,
     "Overflow when unpacking long"),
    ("radd-int-overflow", False, lambda: -(1 << 70) + torch.ones(2), RuntimeError, "Overflow"),
    ("iadd-int-overflow", False, lambda: torch.ones(2).__iadd__(1 << 64), RuntimeError, "Overflow"),
    ("eq-int-overflow", False, lambda: torch.ones(2) == (1 << 70), RuntimeError, "Overflow"),
    ("add-fn-int-overflow", False, lambda: torch.add(torch.ones(2), 1 << 70), RuntimeError,
     "Overflow"),
    ("mul-method-int-overflow", False, lambda: torch.ones(2).mul(-(1 << 64)), RuntimeError,
     "Overflow"),
    ("add-inplace-broadcast", False, lambda: torch.ones(3).add_(torch.ones(2, 3)), RuntimeError,
     "doesn't match the broadcast shape"),
    ("add-inplace-cast", False,
     lambda: torch.ones(3, dtype=torch.int64).add_(torch.ones(3)), RuntimeError,
     "can't be cast to the desired output type"),
    ("bitwise-float", False, lambda: torch.bitwise_and(torch.ones(2), torch.ones(2)),
     NotImplementedError, "not implemented for 'Float'"),
    ("shift-float", False, lambda: torch.bitwise_left_shift(torch.ones(2), 1),
     NotImplementedError, "not implemented for 'Float'"),
    ("neg-bool", False, lambda: torch.ones(2, dtype=torch.bool).neg(), RuntimeError, "use the `~`"),
    ("where-float-cond", False, lambda: torch.where(torch.ones(2), _T(), _T()), RuntimeError,
     "boolean tensor"),
    ("clamp-no-bounds", False, lambda: _T().clamp(), RuntimeError, "At least one of 'min' or 'max'"),
    ("lerp-str-weight", False, lambda: torch.lerp(_T(), _T(), "a"), TypeError, "weight"),
    ("where-int-overflow", False, lambda: torch.where(_T() > 0, _T(), 1 << 70), RuntimeError,
     "Overflow when unpacking long"),
    ("where-method-int-overflow", False, lambda: _T().where(_T() > 0, -(1 << 64) - 1),
     RuntimeError, "Overflow when unpacking long"),
    ("clamp-min-int-overflow", False, lambda: _T().clamp(1 << 70), RuntimeError,
     "Overflow when unpacking long"),
    ("clip-max-int-overflow", False, lambda: torch.clip(_T(), max=-(1 << 70)), RuntimeError,
     "Overflow when unpacking long"),
    ("clamp-inplace-int-overflow", False, lambda: _T().clamp_(0, 1 << 64), RuntimeError,
     "Overflow"),
    ("lerp-weight-int-overflow", False, lambda: torch.lerp(_T(), _T(), 1 << 70), RuntimeError,
     "Overflow when unpacking long"),
    ("lerp-method-int-overflow", False, lambda: _T().lerp(_T(), 1 << 64), RuntimeError,
     "Overflow"),
    ("round-decimals-int-overflow", False, lambda: torch.round(_T(), decimals=1 << 70),
     RuntimeError, "Overflow when unpacking long"),
    ("div-rounding-mode", False, lambda: torch.div(_T(), _T(), rounding_mode="bad"), ValueError,
     "rounding_mode"),
    ("norm-string-p", False, lambda: _T().norm(p="fro2"), NotImplementedError, "fro"),
    ("std-correction-str", False, lambda: _T().std(correction="a"), TypeError, "real number"),
    ("sum-dim", False, lambda: _T().sum(5), IndexError, "Dimension out of range"),
    ("sum-dim-negative", False, lambda: _T().sum(-3), IndexError, "got -3"),
    ("amax-dim", False, lambda: _T().amax(7), IndexError, "Dimension out of range"),
    ("cumsum-dim", False, lambda: _T().cumsum(3), IndexError, "Dimension out of range"),
    ("prod-dim-str", False, lambda: _T().prod("a"), TypeError, "integer"),
    ("mean-int", False, lambda: torch.ones(2, dtype=torch.int64).mean(), RuntimeError,
     "could not infer output dtype"),
    ("logsumexp-no-dim", False, lambda: _T().logsumexp(), TypeError,
     "missing required argument 'dim'"),
    ("logsumexp-fn-no-dim", False, lambda: torch.logsumexp(_T(), keepdim=True), TypeError,
     "missing required argument 'dim'"),
    ("argmax-empty", False, lambda: torch.ones(0).argmax(), IndexError, "numel() == 0"),
    ("max-empty", False, lambda: torch.ones(0).max(), IndexError, "numel() == 0"),
    ("copy-shape", False, lambda: _T().copy_(torch.ones(4)), RuntimeError, "expanded size"),
    ("copy-int", False, lambda: _T().copy_(3), TypeError, "must be Tensor"),
    ("fill-1d-tensor", False, lambda: _T().fill_(torch.ones(2)), RuntimeError, "0-dimension"),
    ("fill-overflow", False, lambda: torch.ones(2, dtype=torch.int64).fill_(1 << 70), RuntimeError,
     "Overflow"),
    ("tolist-arg", False, lambda: _T().tolist(1), TypeError, "takes no arguments"),
    ("record-stream-none", False, lambda: _T().record_stream(None), TypeError, "cuda.Stream"),
    # ---- matmul
    ("mm-shapes", False, lambda: torch.mm(torch.ones(2, 3), torch.ones(2, 3)), RuntimeError,
     "cannot be multiplied (2x3 and 2x3)"),
    ("mm-1d", False, lambda: torch.mm(torch.ones(3), torch.ones(3)), RuntimeError,
     "must be a matrix"),
    ("matmul-shapes", False, lambda: torch.ones(2, 3) @ torch.ones(4, 5), RuntimeError,
     "cannot be multiplied"),
    ("matmul-0d", False, lambda: torch.matmul(torch.tensor(1.), torch.ones(3)), RuntimeError,
     "at least 1D"),
    ("mm-dtypes", False, lambda: torch.mm(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64)),
     RuntimeError, "same dtype"),
    ("bmm-batch", False, lambda: torch.bmm(torch.ones(2, 2, 2), torch.ones(3, 2, 2)), RuntimeError,
     "Expected size for first two dimensions"),
    ("dot-lengths", False, lambda: torch.dot(torch.ones(3), torch.ones(4)), RuntimeError,
     "inconsistent tensor size"),
    ("mv-shapes", False, lambda: torch.mv(torch.ones(2, 3), torch.ones(4)), RuntimeError,
     "size mismatch"),
    ("addmm-shapes", False, lambda: torch.addmm(torch.ones(3, 3), torch.ones(2, 2), torch.ones(2, 2)),
     RuntimeError, "cannot be broadcast"),
    # ---- random and seeds
    ("randint-low-high", False, lambda: torch.randint(5, 2, (3,)), RuntimeError,
     "'from' to be less than 'to'"),
    ("randint-no-size", False, lambda: torch.randint(5), TypeError, "size"),
    ("randint-huge", False, lambda: torch.randint(0, 1 << 70, (2,)), OverflowError, "too big"),
    ("rand-negative", False, lambda: torch.rand(-1), RuntimeError, "negative dimension"),
    ("randn-int", False, lambda: torch.randn(3, dtype=torch.int64), RuntimeError,
     "not implemented for 'Long'"),
    ("randperm-negative", False, lambda: torch.randperm(-3), RuntimeError, "non-negative"),
    ("uniform-reversed", False, lambda: torch.ones(3).uniform_(2, 1), RuntimeError, "from=2 > to=1"),
    ("normal-negative-std", False, lambda: torch.ones(3).normal_(0, -1), RuntimeError, "std >= 0.0"),
    ("bernoulli-p", False, lambda: torch.ones(3).bernoulli_(1.5), RuntimeError, "[0, 1]"),
    ("random-range", False, lambda: torch.ones(3).random_(5, 2), RuntimeError, "from=5 >= to=2"),
    ("exponential-lambda", False, lambda: torch.ones(3).exponential_(-1), RuntimeError,
     "lambda > 0.0"),
    ("seed-str", False, lambda: torch.manual_seed("a"), ValueError, "invalid literal"),
    ("seed-huge", False, lambda: torch.manual_seed(1 << 70), RuntimeError, "Overflow"),
    ("seed-huge-negative", False, lambda: torch.manual_seed(-(1 << 70)), RuntimeError,
     "Overflow when unpacking long"),
    ("seed-below-int64", False, lambda: torch.manual_seed(-(1 << 63) - 1), RuntimeError,
     "Overflow"),
    ("cuda-seed-huge", False, lambda: cuda.manual_seed(1 << 70), RuntimeError,
     "Overflow when unpacking long"),
    ("cuda-seed-2pow64", False, lambda: cuda.manual_seed(1 << 64), RuntimeError, "Overflow"),
    ("cuda-seed-huge-negative", False, lambda: cuda.manual_seed(-(1 << 70)), RuntimeError,
     "Overflow"),
    ("cuda-seed-all-huge", False, lambda: cuda.manual_seed_all(1 << 70), RuntimeError,
     "Overflow"),
    ("generator-seed-huge", False, lambda: torch.default_generator.manual_seed(1 << 70),
     RuntimeError, "Overflow"),
    ("rng-state-float", False, lambda: torch.set_rng_state(torch.ones(3)), RuntimeError,
     "uint8 tensor of 16 bytes"),
    ("rng-state-list", False, lambda: torch.set_rng_state([1, 2]), TypeError, "ByteTensor"),
    # ---- fft
    ("fft-norm", False, lambda: torch.fft.fft(torch.ones(4), norm="bogus"), RuntimeError,
     "Invalid normalization mode: bogus"),
    ("fft-dim", False, lambda: torch.fft.fft(torch.ones(4), dim=3), IndexError,
     "Dimension out of range"),
    ("fft-n-zero", False, lambda: torch.fft.fft(torch.ones(4), n=0), RuntimeError,
     "Invalid number of data points (0)"),
    ("fft-n-negative", False, lambda: torch.fft.fft(torch.ones(4), n=-2), RuntimeError,
     "Invalid number of data points (-2)"),
    ("rfft-complex", False, lambda: torch.fft.rfft(torch.ones(4, dtype=torch.complex64)),
     TypeError, "real input"),
    ("fft2-1d", False, lambda: torch.fft.fft2(torch.ones(4)), IndexError, "Dimension out of range"),
    ("fftn-s-dim-length", False, lambda: torch.fft.fftn(torch.ones(4, 4), s=(4,), dim=(0, 1)),
     RuntimeError, "same length"),
    ("fftfreq-negative", False, lambda: torch.fft.fftfreq(-1), ValueError, "negative"),
    # ---- legacy types
    ("legacy-str", False, lambda: torch.FloatTensor("a"), TypeError, "invalid data type 'str'"),
    ("legacy-negative", False, lambda: torch.FloatTensor(-1), RuntimeError, "negative dimension"),
    ("legacy-cuda-device-kw", False, lambda: torch.FloatTensor(2, device="cuda"), RuntimeError,
     "expects device type: cpu"),
    ("legacy-ragged", False, lambda: torch.LongTensor([[1], [1, 2]]), ValueError,
     "expected sequence of length 1"),
    # ---- misc front ends
    ("matmul-precision", False, lambda: torch.set_float32_matmul_precision("ultra"), RuntimeError,
     "Invalid precision 'ultra'"),
    ("matmul-tf32-str", False, lambda: _set_flag(torch.backends.cuda.matmul, "allow_tf32", "yes"),
     RuntimeError, "set_allow_tf32_cublas expects a bool, but got str"),
    ("matmul-tf32-int", False, lambda: _set_flag(torch.backends.cuda.matmul, "allow_tf32", 1),
     RuntimeError, "expects a bool, but got int"),
    ("matmul-fp16-reduction-none", False,
     lambda: _set_flag(torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", None),
     RuntimeError, "set_allow_fp16_reduction_cublas expects a bool"),
    ("matmul-bf16-reduction-str", False,
     lambda: _set_flag(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", "no"),
     RuntimeError, "set_allow_bf16_reduction_cublas expects a bool"),
    ("cudnn-tf32-str", False, lambda: _set_flag(torch.backends.cudnn, "allow_tf32", "yes"),
     RuntimeError, "expects a bool, but got str"),
    ("storage-subscript", False, lambda: torch.UntypedStorage(4)[10], TypeError, "subscriptable"),

    # ---- CUDA tensors
    ("cuda-empty-negative", True, lambda: torch.empty(-1, device="cuda"), RuntimeError,
     "negative dimension -1"),
    ("cuda-empty-2pow62", True, lambda: torch.empty(BIG, device="cuda"), RuntimeError, "overflows"),
    ("cuda-empty-1tib", True, lambda: torch.empty(1 << 40, dtype=torch.uint8, device="cuda"),
     cuda.OutOfMemoryError, "Tried to allocate"),
    ("cuda-empty-numel-wraps", True, lambda: torch.empty(1 << 31, 1 << 31, 4, device="cuda"),
     RuntimeError, "overflows"),
    ("cuda-device-range", True, lambda: torch.empty(2, device="cuda:%d" % N), RuntimeError,
     "invalid device ordinal"),
    ("cuda-to-range", True, lambda: _T().to("cuda:%d" % N), RuntimeError, "invalid device ordinal"),
    ("cuda-add-cpu", True, lambda: _c(3) + torch.ones(3), RuntimeError, "same device"),
    ("cpu-add-cuda", True, lambda: torch.ones(3) + _c(3), RuntimeError, "same device"),
    ("cuda-add-inplace-cpu", True, lambda: torch.ones(3).add_(_c(3)), RuntimeError, "same device"),
    ("cuda-where-cpu", True, lambda: torch.where(_c(3) > 0, _c(3), torch.ones(3)), RuntimeError,
     "same device"),
    ("cuda-mm-cpu", True, lambda: torch.mm(_c(2, 2), torch.ones(2, 2)), RuntimeError, "device"),
    ("cuda-matmul-cpu", True, lambda: torch.ones(2, 2) @ _c(2, 2), RuntimeError, "device"),
    ("cuda-mm-shapes", True, lambda: torch.mm(_c(2, 3), _c(2, 3)), RuntimeError,
     "cannot be multiplied (2x3 and 2x3)"),
    ("cuda-bmm-batch", True, lambda: torch.bmm(_c(2, 2, 2), _c(3, 2, 2)), RuntimeError,
     "Expected size for first two dimensions"),
    ("cuda-mm-dtypes", True, lambda: torch.mm(_c(2, 2), _c(2, 2, dtype=torch.float64)),
     RuntimeError, "same dtype"),
    ("cuda-numpy", True, lambda: _c(3).numpy(), TypeError, "cpu()"),
    ("cuda-np-asarray", True, lambda: np.asarray(_c(3)), TypeError, "cpu()"),
    ("cuda-index-past-end", True, lambda: _c(2, 3)[2], IndexError, "out of bounds"),
    ("cuda-view-numel", True, lambda: _c(2, 3).view(4), RuntimeError, "is invalid for input"),
    ("cuda-expand", True, lambda: _c(2, 3).expand(3, 3), RuntimeError, "expanded size"),
    ("cuda-sum-dim", True, lambda: _c(2, 3).sum(4), IndexError, "Dimension out of range"),
    ("cuda-copy-shape", True, lambda: _c(2, 3).copy_(torch.ones(4)), RuntimeError, "expanded size"),
    ("cuda-item-many", True, lambda: _c(2).item(), RuntimeError, "cannot be converted to Scalar"),
    ("cuda-pin", True, lambda: _c(2).pin_memory(), RuntimeError, "pinned"),
    ("cuda-record-stream-int", True, lambda: _c(2).record_stream(3), TypeError, "cuda.Stream"),
    ("cuda-randint-range", True, lambda: torch.randint(5, 2, (3,), device="cuda"), RuntimeError,
     "'from' to be less than 'to'"),
    ("cuda-normal-std", True, lambda: _c(3).normal_(0, -1), RuntimeError, "std >= 0.0"),
    ("cuda-seed-str", True, lambda: cuda.manual_seed("a"), ValueError, "invalid literal"),
    ("cuda-rng-state-float", True, lambda: cuda.set_rng_state(torch.ones(3)), RuntimeError,
     "uint8"),
    ("cuda-fft-norm", True, lambda: torch.fft.fft(_c(4), norm="bogus"), RuntimeError,
     "Invalid normalization mode"),
    ("cuda-fft-n-zero", True, lambda: torch.fft.fft(_c(4), n=0), RuntimeError,
     "Invalid number of data points"),
    ("cuda-fft-dim", True, lambda: torch.fft.fft(_c(4), dim=2), IndexError, "Dimension out of range"),
    ("plan-cache-negative", True, lambda: _set_plan_cache(-1), RuntimeError, "non-negative"),
    ("plan-cache-str", True, lambda: _set_plan_cache("a"), ValueError, "invalid literal"),
    ("plan-cache-device-range", True, lambda: _set_plan_cache(4, N + 3), RuntimeError,
     "invalid device ordinal"),
    ("legacy-cuda-str", True, lambda: torch.cuda.FloatTensor("a"), TypeError, "invalid data type"),
    ("legacy-cuda-negative", True, lambda: torch.cuda.FloatTensor(-1), RuntimeError,
     "negative dimension"),
    ("legacy-cuda-cpu-kw", True, lambda: torch.cuda.FloatTensor(2, device="cpu"), RuntimeError,
     "device type"),
    # ---- two GPUs
    pytest.param("cuda0-add-cuda1", True, lambda: _c(3) + _c1(3), RuntimeError, "same device",
                 marks=pytest.mark.multigpu, id="cuda0-add-cuda1"),
    pytest.param("cuda0-mm-cuda1", True, lambda: torch.mm(_c(2, 2), _c1(2, 2)), RuntimeError,
                 "device", marks=pytest.mark.multigpu, id="cuda0-mm-cuda1"),
    pytest.param("event-record-other-device", True, _record_on_other_device, RuntimeError,
                 "does not match the recording stream's device", marks=pytest.mark.multigpu,
                 id="event-record-other-device"),
]


# What a wrong call must not leave behind: memory handed out. (Segments the
# allocator reserved for a row's own operands stay cached, as in PyTorch.)
_KEPT = ("allocated_bytes.", "active_bytes.", "requested_bytes.", "allocation.", "active.")


def _stats():
    if not HAVE_GPU:
        return None
    s = cuda.memory_stats()
    return {k: v for k, v in s.items() if k.endswith(".current") and k.startswith(_KEPT)}


def _row(c):
    if not hasattr(c, "marks"):
        return pytest.param(*c[1:], id=c[0])
    # pytest.param(id, needs_gpu, call, exc, fragment, marks=..., id=...)
    return pytest.param(*c.values[1:], marks=c.marks, id=c.id)


def _id(c):
    return c.id if hasattr(c, "marks") else c[0]


@pytest.mark.parametrize("needs_gpu,call,exc,fragment", [_row(c) for c in CASES])
def test_wrong_call(needs_gpu, call, exc, fragment):
    if needs_gpu and not HAVE_GPU:
        pytest.skip("needs a CUDA GPU")
    before = _stats()
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    del info  # the traceback's frames hold the row's operands
    assert fragment in msg, msg
    assert _stats() == before


def test_table_is_large_and_distinct():
    ids = [_id(c) for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 100


# ---- known wrong behaviour in files owned elsewhere (strict xfail)

def test_int_floor_divide_by_zero_raises():
    """PyTorch's CPU path raises RuntimeError('ZeroDivisionError') for integer
    division by zero (it used to hand NumPy's 0 back)."""
    before = _stats()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.ones(2, dtype=torch.int64) // 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.remainder(torch.ones(2, dtype=torch.int64), 0)
    assert _stats() == before


def test_binary_op_int_scalar_overflow_message():
    """An int no scalar can hold is an Overflow RuntimeError, as in PyTorch,
    not the TypeError 'unsupported operand' of a refused operand."""
    with pytest.raises(RuntimeError, match="Overflow"):
        torch.ones(2, dtype=torch.int64) + (1 << 70)


# Every factory that takes pin_memory= in PyTorch, with the values it must
# hold (None: random).
_ONE = torch.ones(3)
_PIN_FACTORIES = [
    ("empty", lambda: torch.empty(3, pin_memory=True), None),
    ("zeros", lambda: torch.zeros(3, pin_memory=True), [0.0] * 3),
    ("ones", lambda: torch.ones(3, pin_memory=True), [1.0] * 3),
    ("full", lambda: torch.full((3,), 2.0, pin_memory=True), [2.0] * 3),
    ("empty_strided", lambda: torch.empty_strided((3,), (1,), pin_memory=True), None),
    ("arange", lambda: torch.arange(3, pin_memory=True), [0, 1, 2]),
    ("linspace", lambda: torch.linspace(0, 2, 3, pin_memory=True), [0.0, 1.0, 2.0]),
    ("eye", lambda: torch.eye(2, pin_memory=True), [[1.0, 0.0], [0.0, 1.0]]),
    ("tensor", lambda: torch.tensor([1, 2], pin_memory=True), [1, 2]),
    ("empty_like", lambda: torch.empty_like(_ONE, pin_memory=True), None),
    ("zeros_like", lambda: torch.zeros_like(_ONE, pin_memory=True), [0.0] * 3),
    ("ones_like", lambda: torch.ones_like(_ONE, pin_memory=True), [1.0] * 3),
    ("full_like", lambda: torch.full_like(_ONE, 5, pin_memory=True), [5.0] * 3),
    ("rand", lambda: torch.rand(3, pin_memory=True), None),
    ("randn", lambda: torch.randn(3, pin_memory=True), None),
    ("randint", lambda: torch.randint(0, 5, (3,), pin_memory=True), None),
    ("randperm", lambda: torch.randperm(3, pin_memory=True), None),
    ("rand_like", lambda: torch.rand_like(_ONE, pin_memory=True), None),
    ("randn_like", lambda: torch.randn_like(_ONE, pin_memory=True), None),
    ("new_empty", lambda: _ONE.new_empty(3, pin_memory=True), None),
    ("new_zeros", lambda: _ONE.new_zeros(3, pin_memory=True), [0.0] * 3),
    ("new_ones", lambda: _ONE.new_ones(3, pin_memory=True), [1.0] * 3),
    ("new_full", lambda: _ONE.new_full((3,), 4.0, pin_memory=True), [4.0] * 3),
]


@pytest.mark.parametrize("make,values", [pytest.param(m, v, id=i) for i, m, v in _PIN_FACTORIES])
def test_pin_memory_is_honoured_by_every_factory(make, values):
    """pin_memory=True gives page-locked memory whichever factory is asked;
    without a GPU pinning is impossible, and every factory refuses it the way
    empty() does (torch raises a RuntimeError there too)."""
    if not HAVE_GPU:
        with pytest.raises(RuntimeError, match="no CUDA GPU"):
            make()
        return
    t = make()
    assert t.is_pinned() and t.is_cpu
    if values is not None:
        assert t.tolist() == values


@pytest.mark.cuda
@pytest.mark.parametrize("make", [
    lambda: torch.zeros_like(_c(2), pin_memory=True),
    lambda: torch.rand_like(_c(2), pin_memory=True),
    lambda: _c(2).new_ones(2, pin_memory=True),
    lambda: torch.randint(0, 5, (2,), device="cuda", pin_memory=True),
], ids=["zeros_like", "rand_like", "new_ones", "randint"])
def test_pin_memory_refused_for_cuda_results(make):
    """Only CPU tensors can be pinned: a CUDA result (device given, or
    inherited by a *_like form or new_*) with pin_memory=True is refused."""
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        make()


# ---- allowed by PyTorch: asserted to work

def test_values_that_fit_or_wrap_are_stored():
    """PyTorch checks a value against the dtype's range but lets a negative int
    whose magnitude fits wrap into uint8; floats and infinities fill floats."""
    assert torch.tensor([-1, 255], dtype=torch.uint8).tolist() == [255, 255]
    assert torch.tensor([127, -128], dtype=torch.int8).tolist() == [127, -128]
    assert torch.full((2,), -255, dtype=torch.uint8).tolist() == [1, 1]
    assert torch.ones(1, dtype=torch.int16).fill_(-32768.0).tolist() == [-32768]
    assert torch.ones(1, dtype=torch.float16).fill_(float("inf")).tolist() == [float("inf")]
    assert torch.ones(1, dtype=torch.float16).fill_(-65504).tolist() == [-65504.0]
    assert torch.tensor([1e300], dtype=torch.float32).tolist() == [float("inf")]
    assert torch.tensor([True, 2.5], dtype=torch.int8).tolist() == [1, 2]


def test_uint64_range_ints_keep_their_value_in_floats():
    """An int in [2**63, 2**64) is read as a uint64 (as torch's Scalar does):
    a float or complex tensor gets its value, not its int64 bit pattern."""
    big = 1 << 63
    assert torch.tensor([big, 1.5]).tolist() == [float(big), 1.5]
    assert torch.tensor([big], dtype=torch.float64).tolist() == [float(big)]
    assert torch.full((1,), big, dtype=torch.float32).tolist() == [float(big)]
    assert torch.ones(1, dtype=torch.float64).fill_((1 << 64) - 1).tolist() == [2.0 ** 64]
    assert torch.zeros(1, dtype=torch.complex128).fill_(big).tolist() == [complex(big)]
    # and in elementwise ops whose computation is floating (ops.c)
    assert (torch.tensor([1.0]) + big).tolist() == [float(big)]
    assert (torch.tensor([1.0], dtype=torch.float64) * ((1 << 64) - 1)).tolist() == [2.0 ** 64]
    assert torch.tensor([2, 3]).div(big).tolist() == [2 / big, 3 / big]


def test_ints_beyond_int64_keep_their_value_in_floating_elements():
    """torch.tensor() unpacks an element as its dtype's Python type: a
    floating or complex dtype reads an int of any size as a float, bool as
    "non-zero"; only integer dtypes unpack int64 (rows tensor-int-overflow,
    tensor-int8-2pow64 above)."""
    assert torch.tensor([1 << 64], dtype=torch.float32).tolist() == [2.0 ** 64]
    assert torch.tensor([-(1 << 63) - 1], dtype=torch.float64).tolist() == [-(2.0 ** 63)]
    assert torch.tensor([[1], [3 << 70]], dtype=torch.float64).tolist() == [[1.0], [float(3 << 70)]]
    assert torch.tensor([1 << 64, 1.5]).tolist() == [2.0 ** 64, 1.5]  # inferred float32
    assert torch.tensor([1 << 100], dtype=torch.complex128).tolist() == [complex(1 << 100)]
    assert torch.tensor([1 << 64], dtype=torch.float16).tolist() == [float("inf")]
    assert torch.tensor([1 << 64, -(1 << 70), 0], dtype=torch.bool).tolist() == [True, True, False]
    assert torch.as_tensor([1 << 64], dtype=torch.float64).tolist() == [2.0 ** 64]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_uint64_range_alpha_beta_in_matrix_products(device):
    """alpha and beta in [2**63, 2**64) keep their value (a uint64 Scalar in
    torch), not their int64 bit pattern: on the CPU through NumPy, on CUDA as
    cuBLAS's double alpha/beta."""
    rng = np.random.default_rng(7)
    a, b, x = (rng.standard_normal(s) for s in ((3, 4), (4, 5), (3, 5)))
    ta, tb, tx = (torch.tensor(v, device=device) for v in (a, b, x))
    got = torch.addmm(tx, ta, tb, alpha=1 << 63).cpu().numpy()
    np.testing.assert_allclose(got, 2.0 ** 63 * (a @ b) + x, rtol=1e-12, atol=0)
    big = (1 << 64) - (1 << 11)  # the largest double below 2**64
    got = tx.addmm(ta, tb, beta=big).cpu().numpy()
    np.testing.assert_allclose(got, a @ b + float(big) * x, rtol=1e-12, atol=0)
    got = torch.baddbmm(tx[None], ta[None], tb[None], alpha=1 << 63, beta=1 << 63).cpu().numpy()
    np.testing.assert_allclose(got[0], 2.0 ** 63 * (a @ b + x), rtol=1e-12, atol=0)


def test_complex_elements_fill_complex_and_bool_tensors():
    """Only real dtypes refuse complex elements: complex ones keep both parts,
    bool is "non-zero", as in torch."""
    assert torch.tensor([1 + 2j], dtype=torch.complex64).tolist() == [1 + 2j]
    assert torch.tensor([0j, 2j], dtype=torch.bool).tolist() == [False, True]
    assert torch.tensor([1, 2j]).dtype == torch.complex64


def test_seed_range_ends_are_accepted():
    """Seeds anywhere in [-2**63, 2**64) work; negative ones wrap modulo 2**64,
    as PyTorch's do."""
    state = torch.get_rng_state()
    try:
        for seed, stored in ((-(1 << 63), 1 << 63), (-1, (1 << 64) - 1),
                             ((1 << 64) - 1, (1 << 64) - 1), (0, 0)):
            torch.manual_seed(seed)
            assert torch.initial_seed() == stored
            cuda.manual_seed(seed)
            cuda.manual_seed_all(seed)
    finally:
        torch.set_rng_state(state)

@pytest.mark.cuda
def test_non_blocking_from_unpageable_memory_is_a_synchronous_copy():
    """PyTorch accepts non_blocking=True from pageable memory: the copy simply
    is synchronous. Same here, both directions, values intact, stats balanced."""
    before = _stats()
    src = torch.arange(1000, dtype=torch.float32)
    assert not src.is_pinned()
    d = src.to("cuda", non_blocking=True)
    d2 = src.cuda(non_blocking=True)
    back = d.to("cpu", non_blocking=True)
    host = torch.empty(1000)
    host.copy_(d2, non_blocking=True)
    cuda.synchronize()
    assert back.tolist() == src.tolist()
    assert host.tolist() == src.tolist()
    del d, d2
    assert _stats() == before
