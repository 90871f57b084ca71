"""The cells of notebook 08_multi_gpu (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


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
