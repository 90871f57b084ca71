"""The cells of notebook 02_tf32 (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


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
