"""The cells of notebook 06_cufft_plan_cache (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


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
