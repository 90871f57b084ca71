"""Random numbers, matrix products and FFTs (random.c, blas.c, fft.c).

normal_ is bound by write bandwidth (GB/s shown); the 8192^3 products are
2 * 8192^3 = 1.1e12 flops each (TFLOP/s = 1100 / ms); FFTs of 2^20 complex64
points read and write 8 MiB each way; the 1024-point FFT is a host loop with
the plan cached, i.e. the cost of the call path."""
from harness import Case

N_NORMAL = 1 << 28  # 1 GiB of float32
MM = 8192


def _mm_setup(lib_dtype, tf32):
    ours = ("pcs.backends.cuda.matmul.allow_tf32 = %s\n"
            "a = pcs.randn(%d, %d, device='cuda').to(pcs.%s)\n"
            "b = pcs.randn(%d, %d, device='cuda').to(pcs.%s)\n" % (tf32, MM, MM, lib_dtype, MM, MM,
                                                                 lib_dtype))
    torch = ("torch.backends.cuda.matmul.allow_tf32 = %s\n"
             "a = torch.randn(%d, %d, device='cuda').to(torch.%s)\n"
             "b = torch.randn(%d, %d, device='cuda').to(torch.%s)\n" % (tf32, MM, MM, lib_dtype, MM,
                                                                      MM, lib_dtype))
    cupy = ("a = cupy.random.standard_normal((%d, %d)).astype(cupy.%s)\n"
            "b = cupy.random.standard_normal((%d, %d)).astype(cupy.%s)\n" % (MM, MM, lib_dtype, MM,
                                                                            MM, lib_dtype))
    return {"pycuda_sem": ours, "torch": torch, "cupy": cupy}


def _mm_case(name, dtype, tf32, with_cupy=True):
    return Case(name, "c = a @ b", "c = a @ b", "c = a @ b" if with_cupy else None,
                setup=_mm_setup(dtype, tf32), number=3, repeat=5, sync=True)


FFT_SETUP = {
    "pycuda_sem": "x = pcs.zeros(%d, dtype=pcs.complex64, device='cuda'); y = pcs.zeros(1024, "
                  "dtype=pcs.complex64, device='cuda'); pcs.fft.fft(x); pcs.fft.fft(y)" % (1 << 20),
    "torch": "x = torch.zeros(%d, dtype=torch.complex64, device='cuda'); y = torch.zeros(1024, "
             "dtype=torch.complex64, device='cuda'); torch.fft.fft(x); torch.fft.fft(y)" % (1 << 20),
    "cupy": "x = cupy.zeros(%d, dtype=cupy.complex64); y = cupy.zeros(1024, dtype=cupy.complex64); "
            "cupy.fft.fft(x); cupy.fft.fft(y)" % (1 << 20),
}

TITLE = "Random, matmul, FFT"

CASES = [
    Case("normal_ 1 GiB float32", "x.normal_()", "x.normal_()",
         "cupy.random.standard_normal(%d, dtype=cupy.float32)" % N_NORMAL,
         setup={"pycuda_sem": "x = pcs.empty(%d, device='cuda')" % N_NORMAL,
                "torch": "x = torch.empty(%d, device='cuda')" % N_NORMAL, "cupy": ""},
         number=10, repeat=7, sync=True, bytes_moved=N_NORMAL * 4),
    _mm_case("matmul 8192^3 float32 TF32", "float32", True, with_cupy=False),
    _mm_case("matmul 8192^3 float32 (no TF32)", "float32", False, with_cupy=False),
    _mm_case("matmul 8192^3 float16", "float16", True),
    _mm_case("matmul 8192^3 float64", "float64", True),
    Case("fft 2^20 complex64", "pcs.fft.fft(x)", "torch.fft.fft(x)", "cupy.fft.fft(x)",
         setup=FFT_SETUP, number=100, repeat=10, sync=True, bytes_moved=2 * 8 * (1 << 20)),
    Case("fft 1024 complex64 (host loop)", "pcs.fft.fft(y)", "torch.fft.fft(y)", "cupy.fft.fft(y)",
         setup=FFT_SETUP, number=5000, repeat=7, sync=True),
]
