"""The cells of notebook 03_async_execution (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


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
