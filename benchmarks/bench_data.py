"""DataLoader throughput, side by side with torch (issue 16's speed item):
4 worker processes, pin_memory=True, a TensorDataset of 4096 float32 images
[3, 64, 64] with int64 labels, shuffled batches of 64 (3 MiB each). The
figure is microseconds per batch as the training loop sees it (its inverse,
batches per second, when run on its own); the workers are persistent, so
epochs run back to back without new processes.

Ours: workers stack the batch straight into a reusable shared-memory file
and send its name; the pinning thread copies it into the caching host
allocator and hands the file back for a later batch. torch: its workers stack
into fresh shared memory sent as a file descriptor.
"""
import os
import sys
import time

try:  # torch first: importing it into a process already holding pycuda_sem crashed
    import torch
except ImportError:  # pragma: no cover
    torch = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pycuda_sem  # noqa: E402
from harness import Case  # noqa: E402

TITLE = "DataLoader, 4 workers, pin_memory=True, batches of 64 x [3, 64, 64] float32"
N, BATCH, WORKERS = 4096, 64, 4


def loader_setup(mod):
    # an endless stream of batches over persistent workers; the first batch
    # (worker start-up) is taken here, not timed
    return f"""
{mod}.manual_seed(0)
_ds = {mod}.utils.data.TensorDataset({mod}.randn({N}, 3, 64, 64), {mod}.arange({N}))
_dl = {mod}.utils.data.DataLoader(_ds, batch_size={BATCH}, shuffle=True, num_workers={WORKERS},
                                   pin_memory=True, persistent_workers=True)
def _forever(dl):
    while True:
        yield from dl
it = _forever(_dl)
next(it)
"""


CASES = [
    Case("DataLoader next(batch), 4 workers, pinned", "next(it)", "next(it)",
         setup={"pycuda_sem": loader_setup("pcs"), "torch": "import torch.utils.data\n" + loader_setup("torch")},
         number=N // BATCH, repeat=7),
]


def batches_per_second(lib, epochs=4):
    ds = lib.utils.data.TensorDataset(lib.randn(N, 3, 64, 64), lib.arange(N))
    dl = lib.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=WORKERS,
                                   pin_memory=True, persistent_workers=True)
    for _ in dl:  # start the workers, warm the pools
        pass
    n, t0 = 0, time.perf_counter()
    for _ in range(epochs):
        for x, y in dl:
            assert x.is_pinned()
            n += 1
    return n / (time.perf_counter() - t0)


if __name__ == "__main__":
    if not pycuda_sem.cuda.is_available():
        print("bench_data: no GPU (pin_memory needs one), nothing measured")
        sys.exit(0)
    ours = batches_per_second(pycuda_sem)
    line = "DataLoader %d workers, pin_memory: pycuda_sem %.0f batches/s" % (WORKERS, ours)
    if torch is not None and torch.cuda.is_available():
        import torch.utils.data  # noqa: F401
        theirs = batches_per_second(torch)
        line += ", torch %.0f batches/s, x torch %.2f" % (theirs, ours / theirs)
    print(line)
