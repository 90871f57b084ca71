"""make demo: a tour of the CUDA semantics note, run live with pycuda_sem.

Each section runs the note's idea and prints what happened: where tensors
live, what runs asynchronously, how streams are ordered, what TF32 costs in
precision and buys in speed, what the caching allocator reports, how the
cuFFT plan cache fills, and the best-practice patterns; it ends by training a
small classifier (nn, optim, utils.data), on the GPU when there is one. Without
a GPU it shows the CPU half, says plainly that the rest needs one, and trains
on the CPU.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pycuda_sem as torch  # noqa: E402

cuda = torch.cuda


def section(title):
    print("\n== %s %s" % (title, "=" * max(0, 70 - len(title))))


def timed(fn, repeat=3):
    """Median GPU milliseconds of fn(), measured with CUDA events."""
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    fn()  # warm up (handles, plans, cache)
    times = []
    for _ in range(repeat):
        start.record()
        out = fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
        del out
    return sorted(times)[len(times) // 2]


# ---------------------------------------------------------------------------

def cpu_part():
    section("Devices and tensors without a GPU")
    print("pycuda_sem", torch.__version__, "built against CUDA", torch.version.cuda,
          "| version.hip =", torch.version.hip)
    for spec in ("cuda", "cuda:1", "cpu"):
        print("torch.device(%r) -> %r" % (spec, torch.device(spec)))
    try:
        torch.device("cuda:x")
    except RuntimeError as e:
        print("torch.device('cuda:x') raises RuntimeError:", e)
    print("cuda.is_available():", cuda.is_available(), "| device_count():", cuda.device_count())
    x_cpu = torch.empty(2)
    print("x_cpu.new_full([3, 2], fill_value=0.3) ->")
    print(x_cpu.new_full([3, 2], fill_value=0.3))
    print("torch.empty(2, dtype=torch.int64).new_tensor([[1, 2, 3]]) ->",
          torch.empty(2, dtype=torch.int64).new_tensor([[1, 2, 3]]))
    a = torch.randn(3, 4)
    print("randn(3, 4).sum(dim=1) =", a.sum(dim=1))


def placement():
    section("Device placement (the note's first example)")
    n = cuda.device_count()
    last = n - 1
    cuda0 = torch.device("cuda:0")
    other = torch.device("cuda:%d" % last)
    x = torch.tensor([1., 2.], device=cuda0)
    y = torch.tensor([1., 2.]).cuda()
    print("x.device =", repr(x.device), "| y.device =", repr(y.device))
    with cuda.device(last):
        a = torch.tensor([1., 2.], device=torch.device("cuda"))
        b = torch.tensor([1., 2.]).cuda()
        b2 = torch.tensor([1., 2.]).to(device=torch.device("cuda"))
        c = a + b
        z = x + y
        d = torch.randn(2, device=other)
        print("inside cuda.device(%d): a, b, b2, c on %s, %s, %s, %s; z = x + y on %s; d on %s"
              % (last, a.device, b.device, b2.device, c.device, z.device, d.device))
    if n > 1:
        try:
            x + a
        except RuntimeError as e:
            print("x + a across devices raises RuntimeError:", e)
    else:
        print("(one GPU here: cuda:1 examples use cuda:%d; the cross-device error needs two)" % last)


def asynchronous():
    section("Asynchronous execution and events")
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    for cycles in (50_000_000, 200_000_000):
        start.record()
        cuda._sleep(cycles)
        end.record()
        cuda.synchronize()
        print("%11d GPU cycles took %.2f ms (event timing)" % (cycles, start.elapsed_time(end)))
    t0 = time.perf_counter()
    cuda._sleep(200_000_000)
    t1 = time.perf_counter()
    cuda.synchronize()
    t2 = time.perf_counter()
    print("the launch returned after %.3f ms; synchronize() waited %.1f ms more"
          % ((t1 - t0) * 1e3, (t2 - t1) * 1e3))
    print("CUDA_LAUNCH_BLOCKING=%s (set it to 1 to make every launch synchronous and checked)"
          % os.environ.get("CUDA_LAUNCH_BLOCKING", "unset"))


def streams():
    section("Streams")
    s = cuda.Stream()
    print("default stream:", cuda.default_stream(), "\nnew stream:    ", s)
    A = torch.empty((100, 100), device="cuda").normal_(0.0, 1.0)
    with cuda.stream(s):
        print("inside cuda.stream(s): current_stream() == s ->", cuda.current_stream() == s)
        B = torch.sum(A)  # may start before normal_() finishes: the note's incorrect example
    s1, s2 = cuda.Stream(), cuda.Stream()
    with cuda.stream(s1):
        cuda._sleep(200_000_000)
    s2.wait_stream(s1)
    marker = s2.record_event()
    print("s2.wait_stream(s1) while s1 sleeps: is s2's marker done? ", marker.query())
    cuda.synchronize()
    print("after cuda.synchronize():                               ", marker.query())
    # the correct version: order s after the default stream, and tell the
    # allocator that s uses A
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        B = torch.sum(A)
    A.record_stream(s)
    cuda.synchronize()
    print("sum(A) computed on s after wait_stream: %.4f (reference %.4f)"
          % (B.item(), A.cpu().numpy().astype("float64").sum()))


def tf32():
    section("TF32 (the note's example, 10240 x 10240)")
    a_full = torch.randn(10240, 10240, dtype=torch.double, device="cuda")
    b_full = torch.randn(10240, 10240, dtype=torch.double, device="cuda")
    ab_full = a_full @ b_full
    mean = ab_full.abs().mean()
    a, b = a_full.float(), b_full.float()
    print("allow_tf32 default:", torch.backends.cuda.matmul.allow_tf32,
          "(as the note says; PyTorch 1.12+ defaults to False)")
    torch.backends.cuda.matmul.allow_tf32 = True
    t_tf32 = timed(lambda: a @ b)
    ab_tf32 = a @ b
    err_tf32 = ((ab_tf32.double() - ab_full).abs().max() / mean).item()
    torch.backends.cuda.matmul.allow_tf32 = False
    t_fp32 = timed(lambda: a @ b)
    ab_fp32 = a @ b
    err_fp32 = ((ab_fp32.double() - ab_full).abs().max() / mean).item()
    torch.backends.cuda.matmul.allow_tf32 = True
    print("mean |ab_full| = %.4f" % mean.item())
    print("TF32: %.2f ms, relative error %.6f" % (t_tf32, err_tf32))
    print("FP32: %.2f ms, relative error %.6f  -> TF32 is %.1fx faster"
          % (t_fp32, err_fp32, t_fp32 / t_tf32))
    del a_full, b_full, ab_full, a, b, ab_tf32, ab_fp32


def memory():
    section("Memory management")
    cuda.empty_cache()
    base = cuda.memory_allocated()
    x = torch.rand(300, 300, 300, device="cuda")
    cuda.reset_max_memory_allocated()
    print("rand(300, 300, 300): memory_allocated() grew by", cuda.memory_allocated() - base,
          "| max_memory_allocated() =", cuda.max_memory_allocated())
    print("memory_reserved() =", cuda.memory_reserved(), "| memory_cached() =", cuda.memory_cached())
    p = x.data_ptr()
    del x
    print("after del: memory_allocated() =", cuda.memory_allocated(),
          "| memory_reserved() =", cuda.memory_reserved(), "(kept in the cache)")
    y = torch.empty(300, 300, 300, device="cuda")
    print("the same request again reuses the cached block:", y.data_ptr() == p)
    del y
    cuda.empty_cache()
    print("after empty_cache(): memory_reserved() =", cuda.memory_reserved())
    try:
        torch.empty(cuda.get_device_properties(0).total_memory, device="cuda")
    except cuda.OutOfMemoryError as e:
        print("asking for 4x the GPU's memory raises OutOfMemoryError:\n   ", e)
    st = cuda.memory_stats()
    print("memory_stats(): %d keys, e.g. allocation.all.allocated=%d, num_ooms=%d"
          % (len(st), st["allocation.all.allocated"], st["num_ooms"]))
    print(cuda.memory_summary(abbreviated=True))


def fft_cache():
    section("cuFFT plan cache")
    cache = torch.backends.cuda.cufft_plan_cache
    cache.clear()
    print("max_size =", cache.max_size, "| size =", cache.size)
    for n in (64, 128, 256, 256, 64):
        torch.fft.fft(torch.randn(n, device="cuda"))
    print("after FFTs of 64, 128, 256, 256, 64 points: size =", cache.size, "(plans are reused)")
    cache[0].max_size = 2
    print("cufft_plan_cache[0].max_size = 2 evicts the least recently used: size =", cache.size)
    cache.max_size = 4096
    cache.clear()
    print("clear(): size =", cache.size)


def best_practices():
    section("Best practices")
    dev = torch.device("cuda") if cuda.is_available() else torch.device("cpu")
    x = torch.empty((8, 42), device=dev)
    print("device-agnostic: torch.empty((8, 42), device=args.device) is on", x.device)
    x_gpu = torch.empty(2, device=dev)
    print("x_gpu.new_full([3, 2], fill_value=-5) ->")
    print(x_gpu.new_full([3, 2], fill_value=-5))
    print("ones_like / zeros_like keep device and dtype:",
          torch.ones_like(x_gpu).device, torch.zeros_like(x_gpu).dtype)
    n = 64 << 20  # 256 MiB of float32
    pageable = torch.empty(n)
    pinned = torch.empty(n, pin_memory=True)
    t_pageable = timed(lambda: pageable.to(dev))
    t_pinned = timed(lambda: pinned.to(dev, non_blocking=True))
    print("256 MiB host->device: pageable %.1f ms (%.0f GB/s), pinned non_blocking %.1f ms "
          "(%.0f GB/s)" % (t_pageable, n * 4 / t_pageable / 1e6, t_pinned, n * 4 / t_pinned / 1e6))
    t0 = time.perf_counter()
    g = pinned.to(dev, non_blocking=True)
    t1 = time.perf_counter()
    cuda.synchronize()
    print("a non_blocking copy from pinned memory returns in %.3f ms and completes later"
          % ((t1 - t0) * 1e3))
    del g


def training():
    """A classifier trained the way a PyTorch script does it: nn.Sequential,
    CrossEntropyLoss, Adam, a DataLoader over a TensorDataset, batches copied
    to the device with non_blocking=True (pinned by the loader on CUDA)."""
    from pycuda_sem import nn
    from pycuda_sem.utils.data import DataLoader, TensorDataset
    dev = torch.device("cuda") if cuda.is_available() else torch.device("cpu")
    section("Training (nn, optim, utils.data) on %s" % dev)
    if dev.type == "cpu":
        print("(no GPU here: the same code trains on the CPU; with a GPU it picks cuda)")
    torch.manual_seed(0)
    # 2048 points in 20 dimensions, 4 classes from a fixed linear teacher
    x = torch.randn(2048, 20)
    y = (x @ torch.randn(20, 4)).argmax(dim=1)
    loader = DataLoader(TensorDataset(x, y), batch_size=128, shuffle=True,
                        pin_memory=dev.type == "cuda")
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4)).to(dev)
    print(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    for epoch in range(5):
        total = torch.zeros((), device=dev)  # summed on the device: no sync per batch
        for xb, yb in loader:
            xb, yb = xb.to(dev, non_blocking=True), yb.to(dev, non_blocking=True)
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach() * len(yb)
        print("epoch %d: mean loss %.4f" % (epoch, total.item() / len(x)))
    with torch.no_grad():
        acc = (model(x.to(dev)).argmax(dim=1).cpu() == y).float().mean().item()
    print("%d steps of Adam in %.2f s; training accuracy %.3f"
          % (5 * len(loader), time.perf_counter() - t0, acc))


def main():
    t0 = time.perf_counter()
    cpu_part()
    if not cuda.is_available():
        print("\nNo CUDA GPU on this machine: the GPU sections (placement, asynchronous "
              "execution, streams, TF32, memory, cuFFT, pinned memory) are skipped. Run "
              "`make demo` on a machine with a GPU to see them.")
        training()
        return
    section("The GPU")
    for i in range(cuda.device_count()):
        p = cuda.get_device_properties(i)
        print("cuda:%d  %s  capability %d.%d  %.1f GiB  %d SMs" % (
            i, p.name, p.major, p.minor, p.total_memory / 2**30, p.multi_processor_count))
    for part in (placement, asynchronous, streams, tf32, memory, fft_cache, best_practices, training):
        part()
    print("\nthe tour took %.1f s" % (time.perf_counter() - t0))


if __name__ == "__main__":
    main()
