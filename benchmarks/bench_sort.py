"""Sorting and selection: the speed rows of issue 14 for sort, topk and unique, next to
torch (and CuPy where it has the op): sort of 2^24 float32 keys, keys only (msort:
torch's msort, cupy.sort) and with indices (sort: torch.sort, cupy.argsort), topk(k=10)
of 2^24 values, row-wise topk(k=10) of [16384, 1024], unique of 2^24 int64, a few
scans (cumsum of 1 GiB among them), and host-time rows at 1024 elements (host loop, no synchronize per call).
Random inputs, made once per library; sync closes each loop.

Run with the others by `make bench`, or alone:
    python3 benchmarks/bench_sort.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import Case  # noqa: E402

TITLE = "Sorting, selection and scans (CUB)"

N = 1 << 24


def _setup(pcs_expr, torch_expr, cupy_expr=None):
    s = {"pycuda_sem": "pcs.manual_seed(0); x = " + pcs_expr,
         "torch": "torch.manual_seed(0); x = " + torch_expr}
    if cupy_expr:
        s["cupy"] = "x = " + cupy_expr
    return s


F32 = _setup("pcs.rand(%d, device='cuda')" % N, "torch.rand(%d, device='cuda')" % N,
             "cupy.random.rand(%d, dtype=cupy.float32)" % N)
ROWS = _setup("pcs.rand(16384, 1024, device='cuda')", "torch.rand(16384, 1024, device='cuda')")
I64 = _setup("pcs.randint(0, 1 << 20, (%d,), device='cuda')" % N,
             "torch.randint(0, 1 << 20, (%d,), device='cuda')" % N,
             "cupy.random.randint(0, 1 << 20, %d, dtype=cupy.int64)" % N)
SMALL = _setup("pcs.rand(1024, device='cuda')", "torch.rand(1024, device='cuda')",
               "cupy.random.rand(1024, dtype=cupy.float32)")
SMALL_ROWS = _setup("pcs.rand(32, 1024, device='cuda')", "torch.rand(32, 1024, device='cuda')")


def _big(name, ours, torch, cupy, setup):
    return Case(name, ours, torch, cupy, setup=setup, number=10, repeat=7, sync=True)


def _host(name, ours, torch, cupy, setup):
    return Case(name, ours, torch, cupy, setup=setup, number=2000, repeat=9)


CASES = [
    _big("sort 2^24 float32, keys only", "pcs.msort(x)", "torch.msort(x)", "cupy.sort(x)", F32),
    _big("sort 2^24 float32, with indices", "x.sort()", "x.sort()", "cupy.argsort(x)", F32),
    _big("sort 2^24 float32, descending", "x.sort(descending=True)", "x.sort(descending=True)", None, F32),
    _big("argsort [16384, 1024] rows", "x.argsort(dim=1)", "x.argsort(dim=1)", None, ROWS),
    _big("topk(k=10) of 2^24 float32", "x.topk(10)", "x.topk(10)", None, F32),
    _big("topk(k=10) rows of [16384, 1024]", "x.topk(10, dim=1)", "x.topk(10, dim=1)", None, ROWS),
    _big("unique 2^24 int64", "pcs.unique(x)", "torch.unique(x)", "cupy.unique(x)", I64),
    _big("unique 2^24 int64, inverse+counts", "pcs.unique(x, return_inverse=True, return_counts=True)",
         "torch.unique(x, return_inverse=True, return_counts=True)", None, I64),
    _big("median(dim=1) of [16384, 1024]", "x.median(dim=1)", "x.median(dim=1)", None, ROWS),
    _big("cumsum 1 GiB float32 (CUB scan)", "x.cumsum(0)", "x.cumsum(0)", "cupy.cumsum(x)",
         _setup("pcs.rand(1 << 28, device='cuda')", "torch.rand(1 << 28, device='cuda')",
                "cupy.random.rand(1 << 28, dtype=cupy.float32)")),
    _big("cummax 2^24 float32", "x.cummax(0)", "x.cummax(0)", None, F32),
    _big("logcumsumexp 2^24 float32", "x.logcumsumexp(0)", "x.logcumsumexp(0)", None, F32),
    _big("searchsorted 2^24 in 1024 sorted", "pcs.searchsorted(s, x)", "torch.searchsorted(s, x)",
         "cupy.searchsorted(s, x)",
         {k: v + "; s = x[:1024].sort()[0]" if k != "cupy" else v + "; s = cupy.sort(x[:1024])"
          for k, v in F32.items()}),
    _host("sort 1024 float32 (host loop)", "x.sort()", "x.sort()", "cupy.argsort(x)", SMALL),
    _host("topk(k=10) 1024 float32 (host loop)", "x.topk(10)", "x.topk(10)", None, SMALL),
    _host("cummax 1024 float32 (host loop)", "x.cummax(0)", "x.cummax(0)", None, SMALL),
    _host("sort rows [32, 1024] (host loop)", "x.sort(dim=1)", "x.sort(dim=1)", None, SMALL_ROWS),
]


if __name__ == "__main__":
    import harness
    harness.main("bench_sort", CASES, TITLE)
