"""Streams and events: creation, the current stream per (thread, device), the
stream context, cross-stream ordering, concurrency and event timing."""
import threading
import time

import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

# About 50 ms of GPU time at the clocks of current data-centre GPUs.
SLEEP = 100_000_000


def test_stream_requires_argument():
    with pytest.raises(TypeError, match="stream"):
        cuda.stream()
    with cuda.stream(None) as s:
        assert s is None
    with pytest.raises(TypeError):
        cuda.stream(42)
    with pytest.raises(TypeError):
        cuda.set_stream("not a stream")


def test_event_without_gpu_is_lazy():
    e = cuda.Event(enable_timing=True)
    assert e.query() is True
    e.synchronize()  # never recorded: returns at once
    assert "uninitialized" in repr(e)
    with pytest.raises(ValueError):
        cuda.Event(enable_timing=True, interprocess=True)


def test_elapsed_time_errors_before_record():
    a, b = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="recorded"):
        a.elapsed_time(b)
    with pytest.raises(RuntimeError, match="enable_timing"):
        cuda.Event().elapsed_time(b)
    with pytest.raises(TypeError):
        a.elapsed_time(3)


@pytest.mark.cuda
def test_default_and_current_stream():
    d = cuda.default_stream()
    assert d.cuda_stream == 0 and d.device == torch.device("cuda:0")
    assert cuda.current_stream() == d == cuda.default_stream(0) == cuda.current_stream(torch.device("cuda:0"))
    assert hash(cuda.current_stream()) == hash(d)
    assert "cuda_stream=" in repr(d) and "device=cuda:0" in repr(d)


@pytest.mark.cuda
def test_new_stream_attributes():
    s = cuda.Stream()
    assert s.cuda_stream != 0 and s != cuda.default_stream()
    assert s.device == torch.device("cuda", 0) and s.device_index == 0
    least, greatest = cuda.Stream.priority_range()
    assert least >= greatest
    hi = cuda.Stream(priority=greatest)
    assert hi.priority == greatest
    lo = cuda.Stream(priority=-1000)  # clamped, as CUDA does
    assert lo.priority == greatest
    assert cuda.Stream(priority=5).priority == least
    assert s.query() is True
    s.synchronize()


@pytest.mark.cuda
def test_stream_context_sets_and_restores():
    s = cuda.Stream()
    d = cuda.current_stream()
    with cuda.stream(s) as entered:
        assert entered is s
        assert cuda.current_stream() == s
        s2 = cuda.Stream()
        with cuda.stream(s2):
            assert cuda.current_stream() == s2
        assert cuda.current_stream() == s
    assert cuda.current_stream() == d
    cuda.set_stream(s)
    assert cuda.current_stream() == s
    cuda.set_stream(d)
    assert cuda.current_stream() == d


@pytest.mark.cuda
def test_current_stream_is_per_thread():
    s = cuda.Stream()
    barrier = threading.Barrier(2)
    seen = {}

    def inside():
        with cuda.stream(s):
            barrier.wait()
            seen["inside"] = cuda.current_stream()
            barrier.wait()

    def outside():
        barrier.wait()
        seen["outside"] = cuda.current_stream()
        barrier.wait()

    ts = [threading.Thread(target=inside), threading.Thread(target=outside)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen["inside"] == s
    assert seen["outside"] == cuda.default_stream()


@pytest.mark.cuda
def test_external_stream_wraps_handle():
    s = cuda.Stream()
    e = cuda.ExternalStream(s.cuda_stream)
    assert e == s and e.cuda_stream == s.cuda_stream and isinstance(e, cuda.Stream)
    with cuda.stream(e):
        assert cuda.current_stream().cuda_stream == s.cuda_stream


@pytest.mark.cuda
def test_wait_stream_orders_work():
    s1, s2 = cuda.Stream(), cuda.Stream()
    with cuda.stream(s1):
        cuda._sleep(SLEEP)
    s2.wait_stream(s1)
    ev = s2.record_event()
    assert isinstance(ev, cuda.Event)
    # s2 cannot reach its event before s1's sleep is over
    assert ev.query() is False and s1.query() is False
    s1.synchronize()
    ev.synchronize()
    assert ev.query() is True and s2.query() is True


@pytest.mark.cuda
def test_wait_event_orders_work():
    s1, s2 = cuda.Stream(), cuda.Stream()
    e = cuda.Event()
    with cuda.stream(s1):
        cuda._sleep(SLEEP)
        e.record()
    s2.wait_event(e)
    marker = cuda.Event()
    marker.record(s2)
    assert marker.query() is False
    e.wait(s2)  # same thing through Event.wait
    cuda.synchronize()
    assert marker.query() is True


@pytest.mark.cuda
def test_streams_run_concurrently():
    s1, s2 = cuda.Stream(), cuda.Stream()
    cuda.synchronize()
    t0 = time.perf_counter()
    with cuda.stream(s1):
        cuda._sleep(4 * SLEEP)
    s1.synchronize()
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    with cuda.stream(s1):
        cuda._sleep(4 * SLEEP)
    with cuda.stream(s2):
        cuda._sleep(4 * SLEEP)
    s1.synchronize()
    s2.synchronize()
    two = time.perf_counter() - t0
    # Serialised they would take 2x; overlapped close to 1x.
    assert two < 1.5 * one, (one, two)


@pytest.mark.cuda
def test_event_times_known_work():
    def timed(cycles):
        a, b = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        a.record()
        cuda._sleep(cycles)
        b.record()
        cuda.synchronize()
        return a.elapsed_time(b)

    timed(1000)  # warm up
    t1, t4 = timed(SLEEP // 4), timed(SLEEP)
    assert t1 > 0
    assert 2.5 < t4 / t1 < 6, (t1, t4)


@pytest.mark.cuda
def test_elapsed_time_not_ready_and_no_timing():
    a, b = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    a.record()
    cuda._sleep(SLEEP)
    b.record()
    with pytest.raises(RuntimeError, match="not completed"):
        a.elapsed_time(b)
    b.synchronize()
    assert a.elapsed_time(b) > 0
    c, d = cuda.Event(), cuda.Event()
    c.record()
    d.record()
    cuda.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing"):
        c.elapsed_time(d)


@pytest.mark.cuda
def test_event_blocking_and_ipc():
    e = cuda.Event(blocking=True)
    cuda._sleep(SLEEP // 10)
    e.record()
    e.synchronize()
    assert e.query()
    ipc = cuda.Event(interprocess=True)
    ipc.record()
    h = ipc.ipc_handle()
    assert isinstance(h, bytes) and len(h) == 64
    with pytest.raises(RuntimeError, match="interprocess"):
        cuda.Event().ipc_handle()


@pytest.mark.cuda
def test_gil_released_while_synchronizing():
    progress = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            progress.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=spin)
    cuda._sleep(4 * SLEEP)
    before = len(progress)
    t.start()
    cuda.synchronize()
    stop.set()
    t.join()
    assert len(progress) - before > 5


@pytest.mark.multigpu
def test_streams_on_second_device():
    s = cuda.Stream(device=1)
    assert s.device == torch.device("cuda:1")
    assert cuda.current_device() == 0
    with cuda.stream(s):
        # the stream's device becomes current inside the context
        assert cuda.current_device() == 1
        assert cuda.current_stream() == s
        assert cuda.current_stream(0) == cuda.default_stream(0)
    assert cuda.current_device() == 0
    assert cuda.current_stream(1) == cuda.default_stream(1)
    with cuda.device(1):
        assert cuda.Stream().device_index == 1
    e = cuda.Event()
    e.record(s)
    with pytest.raises(RuntimeError, match="does not match"):
        e.record(cuda.current_stream(0))
    s0 = cuda.Stream(device=0)
    s0.wait_stream(s)  # cross-device waits are allowed
    cuda.synchronize(0)
    cuda.synchronize(1)


@pytest.mark.cuda
def test_launch_loop_queues_on_the_current_stream():
    # The benchmark's driver-floor helper: n empty launches from C, on the
    # current stream, checked like any launch.
    with pytest.raises(ValueError, match="n must be"):
        torch._C._launch_loop(-1)
    s = cuda.Stream()
    with cuda.stream(s):
        cuda._sleep(SLEEP)
        torch._C._launch_loop(100)
    assert not s.query()  # queued behind the sleep, on s
    s.synchronize()
    assert s.query()
    torch._C._launch_loop(0)


@pytest.mark.cuda
def test_kernels_launch_from_many_threads():
    # Kernels are launched through the driver with each kernel's function
    # looked up once per context: threads that launch at the same moment,
    # some of them a kernel the process has not launched before, all get
    # their own results.
    import numpy as np
    n = 4
    barrier = threading.Barrier(n)
    out, errors = {}, []

    def work(i):
        try:
            x = torch.arange(1000 + i, device="cuda", dtype=torch.float64)
            barrier.wait()
            y = (x * (i + 1)).cumsum(0).flip(0)
            z = x.to(torch.int16).cummax(0)[0]
            out[i] = (y.cpu().numpy(), z.cpu().numpy())
        except Exception as e:  # reported by the main thread
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    for i in range(n):
        ref = np.arange(1000 + i, dtype=np.float64)
        np.testing.assert_array_equal(out[i][0], np.cumsum(ref * (i + 1))[::-1])
        np.testing.assert_array_equal(out[i][1], np.maximum.accumulate(ref.astype(np.int16)))


@pytest.mark.multigpu
def test_one_kernel_on_two_devices_in_turn():
    # The launcher keeps a kernel's function per device context; a function
    # of the wrong device would fail to launch or compute on the wrong GPU.
    import numpy as np
    ref = float(np.sum(np.arange(777, dtype=np.float64) * 3 + 1))
    for dev in (0, 1, 0, 1):
        x = torch.arange(777, device="cuda:%d" % dev, dtype=torch.float32)
        y = (x * 3 + 1).sum()
        assert y.device == torch.device("cuda", dev)
        assert float(y) == ref


@pytest.mark.cuda
def test_a_refused_launch_raises_and_the_context_goes_on():
    # Launches go to the driver first; one it refuses is made again through
    # the runtime, whose error the op's launch check raises. Not a fault:
    # the same process keeps computing.
    from pycuda_sem import _C
    x = torch.arange(100, device="cuda", dtype=torch.float32)
    for _ in range(2):
        # CUDA 13 names it an invalid argument; older runtimes an invalid
        # configuration: either way the op and the call are named
        with pytest.raises(RuntimeError, match=r"CUDA error: invalid .* in sleep_kernel"):
            _C._launch_bad_config()
        assert (x * 2).sum().item() == 9900.0
    cuda.synchronize()
