"""The cells of notebook 07_best_practices (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


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
