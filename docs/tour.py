"""make demo: a short tour of pycuda_sem's CUDA semantics.

It runs the note's ideas live and prints what happened: devices, the current
device and its context manager, streams and their ordering, event timing and
the caching allocator's statistics. Without a GPU it says so and shows what
works on the CPU alone.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pycuda_sem as torch  # noqa: E402

cuda = torch.cuda


def section(title):
    print("\n== %s %s" % (title, "=" * max(0, 70 - len(title))))


def cpu_part():
    section("Devices (no GPU needed)")
    print("pycuda_sem", torch.__version__, "built against CUDA", torch.version.cuda,
          "| version.hip =", torch.version.hip)
    for spec in ("cuda", "cuda:1", "cpu"):
        print("torch.device(%r) -> %r" % (spec, torch.device(spec)))
    print("torch.device('cuda', 1) == torch.device('cuda:1'):",
          torch.device("cuda", 1) == torch.device("cuda:1"))
    try:
        torch.device("cuda:x")
    except RuntimeError as e:
        print("torch.device('cuda:x') raises RuntimeError:", e)
    print("cuda.is_available():", cuda.is_available(), "| device_count():", cuda.device_count())
    for name in ("tensor", "zeros", "randn"):
        if hasattr(torch, name):
            print("torch.%s is available" % name)


def gpu_part():
    section("Devices")
    n = cuda.device_count()
    for i in range(n):
        p = cuda.get_device_properties(i)
        print("cuda:%d  %s  capability %d.%d  %.1f GiB  %d SMs" % (
            i, p.name, p.major, p.minor, p.total_memory / 2**30, p.multi_processor_count))
    print("current_device():", cuda.current_device())
    with cuda.device(n - 1):
        print("inside cuda.device(%d): current_device() = %d" % (n - 1, cuda.current_device()))
    print("after the block: current_device() =", cuda.current_device())

    section("Streams")
    s = cuda.Stream()
    print("default stream:", cuda.default_stream())
    print("new stream:    ", s)
    with cuda.stream(s):
        print("inside cuda.stream(s): current_stream() == s ->", cuda.current_stream() == s)
    print("after: current_stream() is the default again ->",
          cuda.current_stream() == cuda.default_stream())
    s1, s2 = cuda.Stream(), cuda.Stream()
    with cuda.stream(s1):
        cuda._sleep(200_000_000)
    s2.wait_stream(s1)
    marker = s2.record_event()
    print("s2.wait_stream(s1) while s1 sleeps: s2's marker done yet? ", marker.query())
    cuda.synchronize()
    print("after cuda.synchronize():                              ", marker.query())

    section("Events time GPU work")
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    for cycles in (50_000_000, 200_000_000):
        start.record()
        cuda._sleep(cycles)
        end.record()
        cuda.synchronize()
        print("%11d GPU cycles took %.2f ms" % (cycles, start.elapsed_time(end)))
    t0 = time.perf_counter()
    cuda._sleep(200_000_000)
    t1 = time.perf_counter()
    cuda.synchronize()
    t2 = time.perf_counter()
    print("launching returned after %.3f ms; synchronize() waited %.1f ms more "
          "(execution is asynchronous)" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3))

    section("The caching allocator")
    base = cuda.memory_allocated()
    x = torch.UntypedStorage(300 * 300 * 300 * 4, device="cuda")
    print("a 300x300x300 float32 buffer: memory_allocated() grew by",
          cuda.memory_allocated() - base, "(rounded to 512 bytes)")
    print("memory_reserved():", cuda.memory_reserved())
    p = x.data_ptr()
    del x
    print("after del: memory_allocated() =", cuda.memory_allocated(),
          "| memory_reserved() =", cuda.memory_reserved(), "(kept in the cache)")
    y = torch.UntypedStorage(300 * 300 * 300 * 4, device="cuda")
    print("same request again reuses the cached block:", y.data_ptr() == p)
    del y
    cuda.empty_cache()
    print("after empty_cache(): memory_reserved() =", cuda.memory_reserved())
    try:
        torch.UntypedStorage(4 * cuda.get_device_properties(0).total_memory, device="cuda")
    except cuda.OutOfMemoryError as e:
        print("asking for 4x the GPU's memory raises OutOfMemoryError:\n   ", e)
    st = cuda.memory_stats()
    print("memory_stats(): %d keys, num_ooms=%d, num_alloc_retries=%d" % (
        len(st), st["num_ooms"], st["num_alloc_retries"]))
    print(cuda.memory_summary(abbreviated=True))


def main():
    cpu_part()
    if not cuda.is_available():
        print("\nNo CUDA GPU on this machine: the GPU half of the tour (streams, events, "
              "the allocator) is skipped. Run `make demo` on a machine with a GPU to see it.")
        return
    gpu_part()


if __name__ == "__main__":
    main()
