"""The cells of notebook 05_memory_management (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


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
