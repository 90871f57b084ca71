"""Write docs/notebooks/*.ipynb: one notebook per section of the CUDA semantics note.

The notebooks are defined here as lists of cells, so that their code can be
reviewed and diffed as Python. This script writes them; when a
notebook's code cells are unchanged it keeps the outputs already stored in
the .ipynb (so prose edits keep the last real run), otherwise (or with
--clear) it writes no outputs. `python3 docs/run_notebooks.py --write`
executes them on a GPU machine and stores the outputs.

A code cell whose first line is `# needs-gpus: N` is run only when at least N
GPUs are visible; otherwise the runner records that it was skipped and why.
Notebook metadata `pycuda_sem.needs_gpu` tells tests/test_notebooks.py whether
the notebook needs a GPU at all.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "notebooks")

HEADER = '''import pycuda_sem as torch
import os, sys, time
n_gpus = torch.cuda.device_count()
print("pycuda_sem", torch.__version__, "| built for CUDA", torch.version.cuda)
print("GPUs:", n_gpus, "|", ", ".join(torch.cuda.get_device_name(i) for i in range(n_gpus)) or "none")'''


def md(text):
    return ("markdown", text.strip("\n"))


def code(text):
    return ("code", text.strip("\n"))


NOTEBOOKS = {}


def notebook(name, needs_gpu=True):
    def register(fn):
        NOTEBOOKS[name] = (needs_gpu, fn())
        return fn
    return register


# ---------------------------------------------------------------------------
@notebook("01_device_placement")
def _():
    return [
        md("""
# Device placement

The note's first section: `torch.cuda` tracks a *current device* per thread; a tensor
created with `device='cuda'` lands there, and operations run on the device of their
operands, whatever the current device is. Operations that mix devices are refused; only
copies (`copy_`, `to`, `cuda`) cross devices.
"""),
        code(HEADER),
        md("""
The note's example names `cuda:1` and `cuda:2`, so it runs unchanged only where three
or more GPUs are visible. The next cell is the note's code, verbatim; on a smaller
machine the runner skips it and says so.
"""),
        code("""
# needs-gpus: 3
cuda = torch.device('cuda')     # Default CUDA device
cuda0 = torch.device('cuda:0')
cuda2 = torch.device('cuda:2')  # GPU 2 (these are 0-indexed)

x = torch.tensor([1., 2.], device=cuda0)
# x.device is device(type='cuda', index=0)
y = torch.tensor([1., 2.]).cuda()
# y.device is device(type='cuda', index=0)

with torch.cuda.device(1):
    # allocates a tensor on GPU 1
    a = torch.tensor([1., 2.], device=cuda)

    # transfers a tensor from CPU to GPU 1
    b = torch.tensor([1., 2.]).cuda()
    # a.device and b.device are device(type='cuda', index=1)

    # You can also use ``Tensor.to`` to transfer a tensor:
    b2 = torch.tensor([1., 2.]).to(device=cuda)
    # b.device and b2.device are device(type='cuda', index=1)

    c = a + b
    # c.device is device(type='cuda', index=1)

    z = x + y
    # z.device is device(type='cuda', index=0)

    # even within a context, you can specify the device
    # (or give a GPU index to the .cuda call)
    d = torch.randn(2, device=cuda2)
    e = torch.randn(2).to(cuda2)
    f = torch.randn(2).cuda(cuda2)
    # d.device, e.device, and f.device are all device(type='cuda', index=2)
"""),
        md("""
The same code with the GPU numbers folded onto the GPUs this machine has: `1` becomes
`min(1, n-1)` and `2` becomes `min(2, n-1)`. With one GPU every index is 0, so the
example still shows the rules about the current device, just not a second device.
"""),
        code("""
one, two = min(1, n_gpus - 1), min(2, n_gpus - 1)
cuda = torch.device('cuda')
cuda0 = torch.device('cuda:0')
cuda2 = torch.device('cuda', two)

x = torch.tensor([1., 2.], device=cuda0)
y = torch.tensor([1., 2.]).cuda()
with torch.cuda.device(one):
    a = torch.tensor([1., 2.], device=cuda)
    b = torch.tensor([1., 2.]).cuda()
    b2 = torch.tensor([1., 2.]).to(device=cuda)
    c = a + b
    z = x + y
    d = torch.randn(2, device=cuda2)
    e = torch.randn(2).to(cuda2)
    f = torch.randn(2).cuda(cuda2)
    print("inside torch.cuda.device(%d): current_device() =" % one, torch.cuda.current_device())
print("after the block: current_device() =", torch.cuda.current_device())
"""),
        md("What the comments of the note claim, checked:"),
        code("""
for name in ("x", "y", "a", "b", "b2", "c", "z", "d", "e", "f"):
    print("%-3s %r" % (name, globals()[name].device))
"""),
        md("""
`z = x + y` ran inside `torch.cuda.device(1)` but its operands are on `cuda:0`, so the
result is on `cuda:0` too: the current device only decides where *new* tensors go.

Mixing devices in one operation is an error. With two GPUs the cell below adds a
`cuda:0` tensor to a `cuda:1` tensor; with one, mixing the GPU and the CPU shows the
same check.
"""),
        code("""
# needs-gpus: 2
try:
    torch.ones(2, device='cuda:0') + torch.ones(2, device='cuda:1')
except RuntimeError as err:
    print("RuntimeError:", err)
"""),
        code("""
try:
    torch.ones(2, device='cuda:0') + torch.ones(2)
except RuntimeError as err:
    print("RuntimeError:", err)
# a 0-dim CPU tensor or a Python number may join a CUDA op, as in PyTorch
print(torch.ones(2, device='cuda:0') + torch.tensor(3.), torch.ones(2, device='cuda') * 2)
"""),
        md("Copies are the exception: `to`, `cuda` and `copy_` move data between devices."),
        code("""
g = torch.arange(4.).to('cuda')
h = torch.empty(4)
h.copy_(g)
print(g.device, "->", h.device, h)
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("02_tf32")
def _():
    return [
        md("""
# TensorFloat-32 (TF32)

On Ampere and later GPUs, float32 matrix products can run on tensor cores that round
the inputs to 10 bits of mantissa and accumulate in float32. The note's flag
`torch.backends.cuda.matmul.allow_tf32` switches that on or off; pycuda_sem follows the
note and defaults it to **True** (PyTorch 1.12 and later default it to False). The
second flag, `torch.backends.cudnn.allow_tf32`, is accepted and stored, but pycuda_sem
has no convolutions, so it changes nothing.
"""),
        code(HEADER),
        code("""
print("matmul.allow_tf32 =", torch.backends.cuda.matmul.allow_tf32)
print("cudnn.allow_tf32  =", torch.backends.cudnn.allow_tf32)
print("get_float32_matmul_precision() =", torch.get_float32_matmul_precision())
"""),
        md("""
The note's flags, set as the note sets them:
"""),
        code("""
# The flag below controls whether to allow TF32 on matmul. This flag defaults to True.
torch.backends.cuda.matmul.allow_tf32 = True

# The flag below controls whether to allow TF32 on cuDNN. This flag defaults to True.
torch.backends.cudnn.allow_tf32 = True
"""),
        md("""
The note's precision example, unchanged, at its full size (10240 × 10240; about a
second on an H100). The comments are the note's figures from an A100; the cells after
it print ours.
"""),
        code("""
a_full = torch.randn(10240, 10240, dtype=torch.double, device='cuda')
b_full = torch.randn(10240, 10240, dtype=torch.double, device='cuda')
ab_full = a_full @ b_full
mean = ab_full.abs().mean()  # 80.7277

a = a_full.float()
b = b_full.float()

# Do matmul at TF32 mode.
ab_tf32 = a @ b  # takes 0.016s on GA100
error = (ab_tf32 - ab_full).abs().max()  # 0.1747
relative_error = error / mean  # 0.0022

# Do matmul with TF32 disabled.
torch.backends.cuda.matmul.allow_tf32 = False
ab_fp32 = a @ b  # takes 0.11s on GA100
error = (ab_fp32 - ab_full).abs().max()  # 0.0031
relative_error = error / mean  # 0.000039
"""),
        code("""
err_tf32 = (ab_tf32 - ab_full).abs().max()
err_fp32 = (ab_fp32 - ab_full).abs().max()
print("mean |ab_full|     = %.4f" % mean.item())
print("TF32: max error %.4f, relative %.6f" % (err_tf32.item(), (err_tf32 / mean).item()))
print("FP32: max error %.4f, relative %.6f" % (err_fp32.item(), (err_fp32 / mean).item()))
"""),
        md("""
The note's timings were measured on a GA100. Ours, with CUDA events (median of five
products after a warm-up, so cuBLAS's first-call setup is not counted):
"""),
        code("""
def gpu_ms(fn, repeat=5):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    times = []
    for _ in range(repeat):
        start.record(); fn(); end.record(); end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]

torch.backends.cuda.matmul.allow_tf32 = True
t_tf32 = gpu_ms(lambda: a @ b)
torch.backends.cuda.matmul.allow_tf32 = False
t_fp32 = gpu_ms(lambda: a @ b)
print("TF32 %.2f ms (%.0f TFLOP/s), FP32 %.2f ms (%.0f TFLOP/s): TF32 is %.1fx faster" % (
    t_tf32, 2 * 10240**3 / t_tf32 / 1e9, t_fp32, 2 * 10240**3 / t_fp32 / 1e9, t_fp32 / t_tf32))
"""),
        md("""
For full float32 precision the note turns both flags off. `set_float32_matmul_precision`
is the newer spelling of the same switch.
"""),
        code("""
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
print(torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision("high")
print(torch.backends.cuda.matmul.allow_tf32)
torch.backends.cudnn.allow_tf32 = True
"""),
        md("float64 products never use TF32, whatever the flag:"),
        code("""
torch.backends.cuda.matmul.allow_tf32 = True
print("float64 error with the flag on: %.2e" % ((a_full @ b_full) - ab_full).abs().max().item())
del a_full, b_full, ab_full, a, b, ab_tf32, ab_fp32
torch.cuda.empty_cache()
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("03_async_execution")
def _():
    return [
        md("""
# Asynchronous execution

A GPU call queues work and returns; the GPU runs it later, in queue order. Copies to the
host and `synchronize()` wait. So host timers measure the *launch*, and CUDA events
measure the *work*.
"""),
        code(HEADER),
        md("""
`torch.cuda._sleep(cycles)` is a test kernel that keeps the GPU busy for a number of
clock cycles; `synchronize()` is where the host waits for it. This is the process's
first GPU call, so the launch time below also contains CUDA's lazy initialisation; the
`CUDA_LAUNCH_BLOCKING` cell at the end warms up first and shows what a bare launch
costs.
"""),
        code("""
t0 = time.perf_counter()
torch.cuda._sleep(100_000_000)
t1 = time.perf_counter()
torch.cuda.synchronize()
t2 = time.perf_counter()
print("launch returned after %.3f ms; synchronize() then waited %.1f ms" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3))
"""),
        md("""
The note's event-timing recipe, with a real workload where it says *Run some things
here*. These are the process's first matrix products, so the figure includes cuBLAS's
one-time setup as well as the `randn` and the ten products.
"""),
        code("""
start_event = torch.cuda.Event(enable_timing=True)
end_event = torch.cuda.Event(enable_timing=True)
start_event.record()

# Run some things here
x = torch.randn(4096, 4096, device='cuda')
for _ in range(10):
    x = x @ x / 64

end_event.record()
torch.cuda.synchronize()  # Wait for the events to be recorded!
elapsed_time_ms = start_event.elapsed_time(end_event)
print("elapsed_time_ms = %.3f" % elapsed_time_ms)
"""),
        md("""
Without the `synchronize()` the end event may not have happened yet. pycuda_sem refuses
to guess and raises, as CUDA does:
"""),
        code("""
start_event.record()
torch.cuda._sleep(50_000_000)
end_event.record()
try:
    start_event.elapsed_time(end_event)
except RuntimeError as err:
    print("RuntimeError:", err)
end_event.synchronize()
print("after end_event.synchronize(): %.2f ms" % start_event.elapsed_time(end_event))
"""),
        md("""
Values that must reach Python wait for the GPU by themselves: `item()` below returns the
right sum although nothing synchronised explicitly.
"""),
        code("""
y = torch.ones(1000, 1000, device='cuda')
torch.cuda._sleep(50_000_000)
y.mul_(2)
print(y.sum().item())
"""),
        md("""
## `CUDA_LAUNCH_BLOCKING`

With `CUDA_LAUNCH_BLOCKING=1` every launch waits for its kernel and checks it, so an
error is reported by the line that caused it. The variable is read when pycuda_sem is
imported, so the cell runs a small script in a fresh interpreter, with and without it.
"""),
        code("""
import subprocess
root = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
script = '''
import time, pycuda_sem as torch
torch.cuda.init(); torch.cuda._sleep(1000)
torch.cuda.synchronize()
t0 = time.perf_counter(); torch.cuda._sleep(100_000_000); t1 = time.perf_counter()
torch.cuda.synchronize()
print("launch of a ~50 ms kernel returned after %.2f ms" % ((t1 - t0) * 1e3))
'''
for value in (None, "1"):
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("CUDA_LAUNCH_BLOCKING", None)
    if value:
        env["CUDA_LAUNCH_BLOCKING"] = value
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    print("CUDA_LAUNCH_BLOCKING=%-5s" % (value or "unset"), (out.stdout + out.stderr).strip())
"""),
        md("""
The other exceptions the note mentions, `non_blocking=True` copies and streams, have
notebooks of their own (`07_best_practices`, `04_streams`).
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("04_streams")
def _():
    return [
        md("""
# CUDA streams

A stream is an ordered queue of work on one device; work on *different* streams may run
in any relative order. Each device has a default stream; `torch.cuda.Stream()` gives
others. When you use a non-default stream, ordering is your job.
"""),
        code(HEADER),
        md("The note's **incorrect** example, unchanged:"),
        code("""
cuda = torch.device('cuda')
s = torch.cuda.Stream()  # Create a new stream.
A = torch.empty((100, 100), device=cuda).normal_(0.0, 1.0)
with torch.cuda.stream(s):
    # sum() may start execution before normal_() finishes!
    B = torch.sum(A)
"""),
        md("""
Nothing in that code orders `sum` after `normal_`. The next cell tries to make the
race visible by keeping the default stream busy before the write that `sum` depends on.
In the run recorded here the race was **not** lost: `B` came out right. A right answer
from unsynchronised code proves nothing; the cell after it shows a race that was lost.
"""),
        code("""
A = torch.zeros((100, 100), device=cuda)
torch.cuda.synchronize()
torch.cuda._sleep(200_000_000)   # the default stream is busy for a while ...
A.fill_(1.0)                     # ... and only then writes A
with torch.cuda.stream(s):
    B = torch.sum(A)             # s does not wait for the default stream
print("B =", B.item(), "(the right answer is 10000.0)")
torch.cuda.synchronize()
"""),
        md("""
**With `wait_stream`**: `s.wait_stream(current_stream())` makes everything queued on
`s` afterwards wait for what the default stream has queued so far, without blocking the
host. That fixes the *input* side, but look at the output of the cell: `B` is produced
on `s` and `B.item()` reads it through the default stream, which does not wait for `s`.
"""),
        code("""
A = torch.zeros((100, 100), device=cuda)
torch.cuda.synchronize()
torch.cuda._sleep(200_000_000)
A.fill_(1.0)
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    B = torch.sum(A)
print("B =", B.item())
"""),
        md("""
The printed `B` is not the sum of the ones in `A`: the read happened before `sum`
finished on `s`, and it returned what that memory held before (the block had last held
an earlier result computed on `s`). This is the other half of the note's rule: a result
made on a side stream must be ordered before its use on the default stream too, with
`torch.cuda.current_stream().wait_stream(s)` (or `s.synchronize()`) before `B.item()`.

**`record_stream`**: the caching allocator gives a freed block back to the stream that
allocated it at once, which is safe for work on that stream only. If another
stream still uses the memory, `record_stream` tells the allocator to wait for that
stream before reusing the block. First, what happens without it:
"""),
        code("""
def free_while_side_stream_busy(record):
    t = torch.empty(1 << 20, device=cuda)       # 4 MiB on the default stream
    p = t.data_ptr()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)          # s is busy ...
        u = t * 2                               # ... then reads t
    if record:
        t.record_stream(s)
    del t                                       # freed while s may still read it
    fresh = torch.empty(1 << 20, device=cuda)   # a new allocation on the default stream
    reused = fresh.data_ptr() == p
    s_done = s.query()
    torch.cuda.synchronize()
    return reused, s_done

print("without record_stream: new tensor got the freed block = %s while s was done = %s"
      % free_while_side_stream_busy(False))
print("with    record_stream: new tensor got the freed block = %s while s was done = %s"
      % free_while_side_stream_busy(True))
"""),
        md("""
Without `record_stream` the allocator handed the freed block straight to the new
tensor without looking at `s`. In the run recorded here `s` had already finished by then,
so no harm was done this time, but nothing checked it: had `s` still been running, a
write to the new tensor could have corrupted what `s` was reading. With `record_stream`,
while `s` was still busy, the block stayed out of circulation (`memory_snapshot()` shows
such a block as `active_pending_free`) and the new tensor got other memory.

The note's safe pattern, on a tensor made on the default stream and used on `s`:
"""),
        code("""
initial = torch.ones(1000, device=cuda)
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    initial.record_stream(s)
    total = initial.sum()
print(total.item())
"""),
        md("Ordering with events works the same way, and the host can ask a stream whether it is done:"),
        code("""
s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
with torch.cuda.stream(s1):
    torch.cuda._sleep(100_000_000)
    done = torch.cuda.Event()
    done.record()
s2.wait_event(done)
print("s1 idle:", s1.query(), "| s2 marker done:", s2.record_event().query())
torch.cuda.synchronize()
print("after synchronize(): s1 idle:", s1.query())
print("current stream:", torch.cuda.current_stream(), "\\ndefault stream:", torch.cuda.default_stream())
print("priority range (low, high):", torch.cuda.Stream.priority_range())
"""),
        md("""
## Stream semantics of backward passes

This part of the note is about autograd: backward ops run on the stream of their
forward ops, and the initial gradient passed to `backward()` follows the usual stream
rules. **pycuda_sem has no autograd**, so there is nothing to run here. Tensors say so
plainly:
"""),
        code("""
t = torch.ones(3, device=cuda)
print("requires_grad:", t.requires_grad, "| grad:", t.grad, "| hasattr(t, 'backward'):", hasattr(t, "backward"))
try:
    torch.ones(3, requires_grad=True)
except NotImplementedError as err:
    print("NotImplementedError:", err)
"""),
        md("""
The stream rules themselves (make the consumer wait, and `record_stream` memory used on
another stream) are the ones shown above.
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("05_memory_management")
def _():
    return [
        md("""
# Memory management

Device memory comes from a caching allocator: freed blocks stay with pycuda_sem for
reuse instead of going back to the driver, so `nvidia-smi` shows them as used. The
statistics functions tell the two apart: *allocated* is what live tensors hold,
*reserved* is what the allocator holds from the driver (allocated plus cache).
"""),
        code(HEADER),
        md("""
## The numbers of the memory notebook

The spec's memory notebook was run with PyTorch. Its cells, against pycuda_sem, in a
fresh process (the runner starts one per notebook):
"""),
        code("""
device = torch.device('cuda')
print(torch.cuda.is_available())
"""),
        code("""
print(torch.cuda.max_memory_allocated())
"""),
        code("""
x = torch.rand(300,300,300, device=device)
torch.cuda.reset_max_memory_allocated()
print(torch.cuda.max_memory_allocated())
"""),
        code("""
#Returns the current GPU memory occupied by tensors in bytes for a given device.
torch.cuda.memory_allocated()
"""),
        code("""
torch.cuda.reset_max_memory_cached()
print(torch.cuda.max_memory_cached())
"""),
        code("""
torch.cuda.memory_cached()
"""),
        md("""
`memory_allocated()` matches the notebook exactly: 300³ float32 values are 108,000,000
bytes, rounded up to a multiple of 512. The reserved figures differ: this request is
above 10 MiB, so it gets a segment of its own rounded to 2 MiB (52 × 2 MiB =
109,051,904), while the PyTorch run had more in its cache (other blocks, an older
allocator). Reserved memory depends on history; allocated memory does not.

## Every statistics function
"""),
        code("""
def show():
    print("allocated %11d  max %11d | reserved %11d  max %11d" % (
        torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated(),
        torch.cuda.memory_reserved(), torch.cuda.max_memory_reserved()))

show()
y = torch.empty(1000, 1000, device=device)   # 4 MB: a 20 MiB segment of the large pool
z = torch.empty(100, device=device)          # 400 B: a 2 MiB segment of the small pool
show()
del y, z
show()                                       # allocated drops, reserved stays: the cache
torch.cuda.reset_peak_memory_stats()
show()                                       # peaks reset to the current values
torch.cuda.empty_cache()
show()                                       # free segments go back to the driver; x stays
print("memory_cached() == memory_reserved():", torch.cuda.memory_cached() == torch.cuda.memory_reserved())
"""),
        md("A freed block is reused for the next request of a fitting size on the same stream:"),
        code("""
p = x.data_ptr()
del x
x2 = torch.empty(300, 300, 300, device=device)
print("same address:", x2.data_ptr() == p)
"""),
        md("""
## `memory_stats`

A dict with PyTorch's keys. Each statistic has `current`, `peak`, `allocated` and
`freed` figures, for all pools and for the small and large pools separately.
"""),
        code("""
stats = torch.cuda.memory_stats()
print(len(stats), "keys")
for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
            "allocation.all.allocated", "allocation.all.freed", "segment.large_pool.current",
            "segment.small_pool.current", "active.all.current", "num_alloc_retries", "num_ooms",
            "num_device_alloc", "num_device_free"):
    print("%-30s %d" % (key, stats[key]))
"""),
        code("""
torch.cuda.reset_accumulated_memory_stats()
s2 = torch.cuda.memory_stats()
print("after reset_accumulated_memory_stats(): allocation.all.allocated =", s2["allocation.all.allocated"],
      "| allocation.all.current =", s2["allocation.all.current"])
"""),
        md("## `memory_snapshot`: every segment and its blocks"),
        code("""
a = torch.empty(256, device=device)
b = torch.empty(256, device=device)
del a
for seg in torch.cuda.memory_snapshot():
    print("segment %#x  %-5s pool  %9d bytes  allocated %9d" % (
        seg["address"], seg["segment_type"], seg["total_size"], seg["allocated_size"]))
    for blk in seg["blocks"]:
        print("    block %#x  %9d bytes  %s" % (blk["address"], blk["size"], blk["state"]))
"""),
        md("## `memory_summary`"),
        code("""
print(torch.cuda.memory_summary())
"""),
        md("""
## Running out

When the driver has no more memory, the allocator empties its cache, retries once, and
then raises `torch.cuda.OutOfMemoryError` (a `RuntimeError`). A cap below the GPU's size
can be set with `set_per_process_memory_fraction`.
"""),
        code("""
free, total = torch.cuda.mem_get_info()
print("driver: %.1f GiB free of %.1f GiB" % (free / 2**30, total / 2**30))
try:
    torch.empty(2 * total, dtype=torch.uint8, device=device)
except torch.cuda.OutOfMemoryError as err:
    print("OutOfMemoryError:", err)
torch.cuda.set_per_process_memory_fraction(0.01)
try:
    torch.empty(total // 50, dtype=torch.uint8, device=device)
except torch.cuda.OutOfMemoryError as err:
    print("OutOfMemoryError:", err)
torch.cuda.set_per_process_memory_fraction(1.0)
print("num_ooms =", torch.cuda.memory_stats()["num_ooms"])
"""),
        md("""
## `PYTORCH_NO_CUDA_MEMORY_CACHING`

With the variable set to 1, every allocation is its own `cudaMalloc` and every free a
`cudaFree`, which is what memory checkers such as `compute-sanitizer` need. It is read
at the first allocation, so the cell runs the same script in two fresh interpreters.
"""),
        code("""
import subprocess
root = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
script = '''
import pycuda_sem as torch
for _ in range(100):
    t = torch.empty(1000, device="cuda")
    del t
s = torch.cuda.memory_stats()
print("100 allocations: %3d cudaMalloc, %3d cudaFree, reserved now %d bytes" % (
    s["num_device_alloc"], s["num_device_free"], torch.cuda.memory_reserved()))
'''
for value in (None, "1"):
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("PYTORCH_NO_CUDA_MEMORY_CACHING", None)
    if value:
        env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = value
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    print("PYTORCH_NO_CUDA_MEMORY_CACHING=%-5s" % (value or "unset"), (out.stdout + out.stderr).strip())
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("06_cufft_plan_cache")
def _():
    return [
        md("""
# cuFFT plan cache

Planning a cuFFT transform costs time (and sometimes memory), so each device keeps an
LRU cache of plans keyed by the transform's geometry and type. The note's API, on
`torch.backends.cuda.cufft_plan_cache`:
"""),
        code(HEADER),
        code("""
cache = torch.backends.cuda.cufft_plan_cache
cache.clear()
print("max_size =", cache.max_size, "| size =", cache.size)
"""),
        code("""
for n in (64, 128, 256, 256, 64):
    torch.fft.fft(torch.randn(n, device='cuda'))
print("after FFTs of 64, 128, 256, 256 and 64 points: size =", cache.size)
torch.fft.rfft(torch.randn(64, device='cuda'))
torch.fft.fft2(torch.randn(8, 32, 32, device='cuda'))
print("an rfft of 64 points and a batched 2-D FFT add their own plans: size =", cache.size)
"""),
        md("""
Plans are keyed by geometry, so the repeated 256 and 64 reused their plans. Lowering
`max_size` evicts the least recently used plans; `clear()` empties the cache.
"""),
        code("""
cache.max_size = 2
print("max_size = 2 -> size =", cache.size)
cache.max_size = 4096
cache.clear()
print("clear() -> size =", cache.size)
"""),
        md("""
A cached plan saves the planning step. With events: the first FFT of a new size
against the same FFT again.
"""),
        code("""
def gpu_ms(fn):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(); fn(); end.record(); end.synchronize()
    return start.elapsed_time(end)

signal = torch.randn(64, 1000, device='cuda')
t_cold = gpu_ms(lambda: torch.fft.fft(signal))
t_warm = gpu_ms(lambda: torch.fft.fft(signal))
print("first call (plans): %.3f ms, cached: %.3f ms" % (t_cold, t_warm))
x = torch.fft.ifft(torch.fft.fft(signal))
print("ifft(fft(x)) == x within %.1e" % (x.real - signal).abs().max().item())
"""),
        md("""
Indexing the cache object with a device index or a `torch.device` reaches another
device's cache. The note's example sets device 1's capacity, so it needs two GPUs:
"""),
        code("""
# needs-gpus: 2
torch.backends.cuda.cufft_plan_cache[1].max_size = 10
print(torch.backends.cuda.cufft_plan_cache[1])
torch.backends.cuda.cufft_plan_cache[1].max_size = 4096
"""),
        code("""
torch.backends.cuda.cufft_plan_cache[0].max_size = 10
print(torch.backends.cuda.cufft_plan_cache[torch.device('cuda:0')])
torch.backends.cuda.cufft_plan_cache[0].max_size = 4096
print(torch.backends.cuda.cufft_plan_cache[0])
"""),
        md("""
One limit to know: on CUDA, pycuda_sem transforms at most 3 dimensions in one call (the
most one cuFFT plan covers); `fftn` over more raises `NotImplementedError`.
"""),
        code("""
try:
    torch.fft.fftn(torch.randn(2, 2, 2, 2, device='cuda'))
except NotImplementedError as err:
    print("NotImplementedError:", err)
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("07_best_practices")
def _():
    return [
        md("""
# Best practices

Device-agnostic code, `new_*` and `*_like` factories, pinned memory. The section on
`DistributedDataParallel` is about `torch.nn` and `torch.distributed`, which pycuda_sem
does not have; it has no code to run.
"""),
        code(HEADER),
        md("""
## Device-agnostic code

The note's `argparse` pattern. In a notebook there is no command line, so `parse_args()`
is given an empty list; that is the only change.
"""),
        code("""
import argparse
import pycuda_sem as torch

parser = argparse.ArgumentParser(description='PyTorch Example')
parser.add_argument('--disable-cuda', action='store_true',
                    help='Disable CUDA')
args = parser.parse_args([])
args.device = None
if not args.disable_cuda and torch.cuda.is_available():
    args.device = torch.device('cuda')
else:
    args.device = torch.device('cpu')
print(args.device)
"""),
        md("""
The next line of the note also moves a `Network()` module; pycuda_sem has no `torch.nn`,
so only the tensor half runs:
"""),
        code("""
x = torch.empty((8, 42), device=args.device)
print(x.shape, x.device)
"""),
        md("The data-loader loop, with a list of CPU batches standing in for a `DataLoader`:"),
        code("""
train_loader = [torch.randn(4, 3) for _ in range(3)]
cuda0 = torch.device('cuda:0')  # CUDA GPU 0
for i, x in enumerate(train_loader):
    x = x.to(cuda0)
    print(i, x.device, x.shape)
"""),
        md("The current-device context manager (needs a second GPU):"),
        code("""
# needs-gpus: 2
print("Outside device is 0")  # On device 0 (default in most scenarios)
with torch.cuda.device(1):
    print("Inside device is 1")  # On device 1
print("Outside device is still 0")  # On device 0
"""),
        code("""
print("Outside device is", torch.cuda.current_device())
with torch.cuda.device(0):
    print("Inside device is", torch.cuda.current_device())
"""),
        md("""
## `new_*` and `*_like`

`new_*` methods keep the device and dtype of the tensor they are called on; the note's
example, unchanged:
"""),
        code("""
cuda = torch.device('cuda')
x_cpu = torch.empty(2)
x_gpu = torch.empty(2, device=cuda)
x_cpu_long = torch.empty(2, dtype=torch.int64)

y_cpu = x_cpu.new_full([3, 2], fill_value=0.3)
print(y_cpu)

y_gpu = x_gpu.new_full([3, 2], fill_value=-5)
print(y_gpu)

y_cpu_long = x_cpu_long.new_tensor([[1, 2, 3]])
print(y_cpu_long)
"""),
        code("""
x_cpu = torch.empty(2, 3)
x_gpu = torch.empty(2, 3)

y_cpu = torch.ones_like(x_cpu)
y_gpu = torch.zeros_like(x_gpu)
print(y_cpu, y_gpu, sep="\\n")
"""),
        md("""
Note that the note's `x_gpu = torch.empty(2, 3)` has no `device=`, so it is a CPU tensor
and so is `y_gpu`. With a real GPU tensor, `*_like` keeps the device and dtype:
"""),
        code("""
g = torch.empty(2, 3, device=cuda, dtype=torch.float16)
print(torch.zeros_like(g), torch.ones_like(g).dtype)
"""),
        md("""
## Pinned memory

Copies from page-locked (pinned) host memory are faster, and with `non_blocking=True`
they are queued on the current stream instead of waiting, so they can overlap with
computation. First the bandwidth, timed with events (256 MiB):
"""),
        code("""
def gpu_ms(fn, repeat=3):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    times = []
    for _ in range(repeat):
        start.record(); fn(); end.record(); end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]

n = 64 << 20
pageable = torch.randn(n)
pinned = pageable.pin_memory()
print("pinned:", pinned.is_pinned(), "| pageable:", pageable.is_pinned())
t_pageable = gpu_ms(lambda: pageable.to(cuda))
t_pinned = gpu_ms(lambda: pinned.to(cuda, non_blocking=True))
print("host->device 256 MiB: pageable %.1f ms (%.1f GB/s), pinned %.1f ms (%.1f GB/s)" % (
    t_pageable, n * 4 / t_pageable / 1e6, t_pinned, n * 4 / t_pinned / 1e6))
"""),
        md("""
A `non_blocking` copy from pinned memory returns before the data have arrived:
"""),
        code("""
t0 = time.perf_counter()
g = pinned.to(cuda, non_blocking=True)
t1 = time.perf_counter()
torch.cuda.synchronize()
t2 = time.perf_counter()
print("the call returned after %.3f ms; the copy finished %.1f ms later" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3))
"""),
        md("""
Overlap: a copy on a side stream and a matrix product on the default stream, first one
after the other, then at the same time. Events on the default stream time both.
"""),
        code("""
m = torch.randn(8192, 8192, device=cuda)
copy_stream = torch.cuda.Stream()
dst = torch.empty(n, device=cuda)

def one_after_the_other():
    dst.copy_(pinned, non_blocking=True)
    m @ m

def overlapped():
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        dst.copy_(pinned, non_blocking=True)
    m @ m
    torch.cuda.current_stream().wait_stream(copy_stream)

t_copy = gpu_ms(lambda: dst.copy_(pinned, non_blocking=True))
t_mm = gpu_ms(lambda: m @ m)
t_seq = gpu_ms(one_after_the_other)
t_par = gpu_ms(overlapped)
print("copy alone %.1f ms, matmul alone %.1f ms" % (t_copy, t_mm))
print("one after the other %.1f ms, overlapped on two streams %.1f ms" % (t_seq, t_par))
del m, dst, g, pinned, pageable
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("08_multi_gpu")
def _():
    return [
        md("""
# Several GPUs

Device ordinals count the GPUs this process can see. `CUDA_VISIBLE_DEVICES` chooses
them (and their order) before CUDA starts. Cells that need more GPUs than this machine
has are skipped by the runner, which says so in their output.
"""),
        code(HEADER),
        code("""
for i in range(n_gpus):
    p = torch.cuda.get_device_properties(i)
    print("cuda:%d  %s  capability %d.%d  %.1f GiB  %d SMs" % (
        i, p.name, p.major, p.minor, p.total_memory / 2**30, p.multi_processor_count))
"""),
        md("`CUDA_VISIBLE_DEVICES`, in fresh interpreters (it is read when CUDA starts):"),
        code("""
import subprocess
root = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
script = "import pycuda_sem as torch; print(torch.cuda.is_available(), torch.cuda.device_count())"
for value in ("", "0", ",".join(str(i) for i in range(n_gpus))):
    env = dict(os.environ, PYTHONPATH=root, CUDA_VISIBLE_DEVICES=value)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    print("CUDA_VISIBLE_DEVICES=%-8r -> is_available, device_count =" % value, (out.stdout + out.stderr).strip())
"""),
        md("Peer access, copies between GPUs, and the cross-device check:"),
        code("""
# needs-gpus: 2
for i in range(n_gpus):
    print("cuda:%d can access" % i, [j for j in range(n_gpus) if j != i and torch.cuda.can_device_access_peer(i, j)])
a = torch.arange(6.).reshape(2, 3).to('cuda:0')
b = a.to('cuda:1')
print(b.device, b)
try:
    a + b
except RuntimeError as err:
    print("RuntimeError:", err)
print((a + b.to('cuda:0')).device)
"""),
        md("Work queued on two GPUs runs at the same time; each device has its own streams and caches."),
        code("""
# needs-gpus: 2
xs = [torch.randn(8192, 8192, device='cuda:%d' % i) for i in range(2)]
ys = [x @ x for x in xs]  # warm-up: each device's cuBLAS handle and workspace
for i in range(2):
    torch.cuda.synchronize(i)
t0 = time.perf_counter()
ys = [x @ x for x in xs]
for i in range(2):
    torch.cuda.synchronize(i)
t_both = time.perf_counter() - t0
t0 = time.perf_counter()
y = xs[0] @ xs[0]
torch.cuda.synchronize(0)
t_one = time.perf_counter() - t0
print("one product on one GPU %.1f ms, one on each of two GPUs %.1f ms" % (t_one * 1e3, t_both * 1e3))
print("allocated per device:", [torch.cuda.memory_allocated(i) for i in range(2)])
print("current stream per device:", [torch.cuda.current_stream(i) for i in range(2)])
"""),
        md("""
Peer copy bandwidth (timed with events on the source device):
"""),
        code("""
# needs-gpus: 2
src = torch.empty(256 << 20, dtype=torch.uint8, device='cuda:0')
dst = torch.empty(256 << 20, dtype=torch.uint8, device='cuda:1')
dst.copy_(src); torch.cuda.synchronize(0); torch.cuda.synchronize(1)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
dst.copy_(src)
end.record()
end.synchronize(); torch.cuda.synchronize(1)
print("256 MiB cuda:0 -> cuda:1: %.2f ms (%.0f GB/s)" % (start.elapsed_time(end), 256 * 2**20 / start.elapsed_time(end) / 1e6))
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("09_hip_version_checks", needs_gpu=False)
def _():
    return [
        md("""
# The HIP note: checking which GPU runtime you have

ROCm builds of PyTorch reuse the `torch.cuda` names, so the device example of the first
notebook is unchanged there. Code that must tell the two apart checks `torch.version`:
`version.hip` is set on ROCm builds, `version.cuda` on CUDA builds. pycuda_sem is a CUDA
build. This notebook runs without a GPU too.
"""),
        code(HEADER),
        code("""
print("torch.version.cuda =", repr(torch.version.cuda))
print("torch.version.hip  =", repr(torch.version.hip))
"""),
        md("""
The note's check. Its branches hold only comments, which Python does not accept as a
block, so each branch prints instead:
"""),
        code("""
if torch.cuda.is_available() and torch.version.hip:
    # do something specific for HIP
    print("HIP build")
elif torch.cuda.is_available() and torch.version.cuda:
    # do something specific for CUDA
    print("CUDA build, CUDA", torch.version.cuda)
else:
    print("no GPU visible")
"""),
        md("""
The HIP note's other points, for pycuda_sem: the device strings are `'cuda'` (neither
`'rocm'` nor `'hip'` is accepted), TF32 and the cuFFT cache are CUDA features, and the
memory-management functions are the same (see `05_memory_management`).
"""),
        code("""
for spec in ("hip", "rocm"):
    try:
        torch.device(spec)
    except RuntimeError as err:
        print("RuntimeError:", err)
"""),
    ]


# ---------------------------------------------------------------------------
@notebook("10_legacy_api")
def _():
    return [
        md("""
# The legacy API (the oldest version of the note)

The first version of the note used typed constructors (`torch.cuda.FloatTensor`),
`get_device()`, `new()` and `type()`. pycuda_sem keeps them: the typed names are
factories that make ordinary tensors of one dtype.
"""),
        code(HEADER),
        md("The device example. Its `with torch.cuda.device(1):` part needs two GPUs, its last line three:"),
        code("""
x = torch.cuda.FloatTensor(1)
# x.get_device() == 0
y = torch.FloatTensor(1).cuda()
# y.get_device() == 0
print(x.get_device(), y.get_device(), x.type(), y.type())
"""),
        code("""
# needs-gpus: 3
with torch.cuda.device(1):
    # allocates a tensor on GPU 1
    a = torch.cuda.FloatTensor(1)
    # transfers a tensor from CPU to GPU 1
    b = torch.FloatTensor(1).cuda()
    # a.get_device() == b.get_device() == 1
    c = a + b
    # c.get_device() == 1
    z = x + y
    # z.get_device() == 0
    # even within a context, you can give a GPU id to the .cuda call
    d = torch.randn(2).cuda(2)
    # d.get_device() == 2
print(a.get_device(), b.get_device(), c.get_device(), z.get_device(), d.get_device())
"""),
        code("""
with torch.cuda.device(n_gpus - 1):
    a = torch.cuda.FloatTensor(1)
    b = torch.FloatTensor(1).cuda()
    c = a + b
    z = x + y
print("with cuda.device(%d): a, b, c on %d, %d, %d; z on %d" % (
    n_gpus - 1, a.get_device(), b.get_device(), c.get_device(), z.get_device()))
"""),
        md("The old device-agnostic flag (again with `parse_args([])`):"),
        code("""
import argparse
parser = argparse.ArgumentParser(description='PyTorch Example')
parser.add_argument('--disable-cuda', action='store_true',
                    help='Disable CUDA')
args = parser.parse_args([])
args.cuda = not args.disable_cuda and torch.cuda.is_available()

x = torch.Tensor(8, 42)
if args.cuda:
    x = x.cuda()
print(args.cuda, x.type(), x.shape)
"""),
        md("""
Casting with a legacy type. The note wraps the result in `Variable`, which pycuda_sem
(without autograd) does not have; the cast itself is shown:
"""),
        code("""
dtype = torch.cuda.FloatTensor
train_loader = [torch.DoubleTensor(2, 2).fill_(i) for i in range(2)]
for i, x in enumerate(train_loader):
    x = x.type(dtype)
    print(i, x.type(), isinstance(x, torch.cuda.FloatTensor))
"""),
        md("`new()` keeps type and device, as `new_*` does today:"),
        code("""
x_cpu = torch.FloatTensor(1)
x_gpu = torch.cuda.FloatTensor(1)
x_cpu_long = torch.LongTensor(1)
y_cpu = x_cpu.new(8, 10, 10).fill_(0.3)
y_gpu = x_gpu.new(x_gpu.size()).fill_(-5)
y_cpu_long = x_cpu_long.new([[1, 2, 3]])
print(y_cpu.type(), tuple(y_cpu.shape), "|", y_gpu.type(), y_gpu, "|", y_cpu_long)
"""),
        code("""
x_cpu = torch.FloatTensor(1)
x_gpu = torch.cuda.FloatTensor(1)
y_cpu = torch.ones_like(x_cpu)
y_gpu = torch.zeros_like(x_gpu)
print(y_cpu, y_gpu)
"""),
        md("""
The old pinned-memory text passes `async=True` to `cuda()`. `async` has been a Python
keyword since 3.7, so that line is a syntax error today; `non_blocking=True` is its
replacement:
"""),
        code("""
h = torch.FloatTensor(4).fill_(1).pin_memory()
g = h.cuda(non_blocking=True)
print(g)
"""),
    ]


# ---------------------------------------------------------------------------

def to_ipynb(needs_gpu, cells):
    nb_cells = []
    for kind, src in cells:
        lines = src.splitlines(True)
        if kind == "markdown":
            nb_cells.append({"cell_type": "markdown", "metadata": {}, "source": lines})
        else:
            nb_cells.append({"cell_type": "code", "execution_count": None, "metadata": {},
                             "outputs": [], "source": lines})
    return {
        "cells": nb_cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "pycuda_sem": {"needs_gpu": needs_gpu},
        },
        "nbformat": 4,
        "nbformat_minor": 4,
    }


def _code_sources(nb):
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def carry_outputs(old, new):
    """Copy outputs from `old` into `new` when their code cells are identical, so
    that prose edits keep the outputs of the last real run. Returns True if kept."""
    if _code_sources(old) != _code_sources(new):
        return False
    old_code = [c for c in old["cells"] if c["cell_type"] == "code"]
    new_code = [c for c in new["cells"] if c["cell_type"] == "code"]
    for o, n in zip(old_code, new_code):
        n["outputs"] = o.get("outputs", [])
        n["execution_count"] = o.get("execution_count")
    executed = old.get("metadata", {}).get("pycuda_sem", {}).get("executed_on")
    if executed:
        new["metadata"]["pycuda_sem"]["executed_on"] = executed
    return True


def main(argv):
    clear = "--clear" in argv
    os.makedirs(OUT, exist_ok=True)
    for name, (needs_gpu, cells) in NOTEBOOKS.items():
        path = os.path.join(OUT, name + ".ipynb")
        nb = to_ipynb(needs_gpu, cells)
        note = "without outputs"
        if not clear and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                if carry_outputs(json.load(f), nb):
                    note = "outputs kept (code unchanged)"
                else:
                    note = "code changed: outputs dropped, rerun docs/run_notebooks.py --write"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print("wrote", os.path.relpath(path), "-", note)


if __name__ == "__main__":
    main(sys.argv[1:])
