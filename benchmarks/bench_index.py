"""Indexing: the issue-14 rows of x[idx], index_select, gather, scatter_add_
of 2^24 rows, index_put_(accumulate=True) with many duplicates and a
boolean-mask select of 1 GiB with half the mask true, side by side with
torch (and CuPy where it has the op), plus host time at 1024 elements.

GB/s counts the bytes each op must move (indices read, values read and
written once). pycuda_sem checks the range of CUDA index tensors in the
kernel that follows them, through a record in host-mapped pinned memory
written only on a bad index and read at the next call that waits for the
device (docs/api.md); torch checks with a device-side assert instead. Float sums (scatter_add_, index_put_(accumulate=True)) use
atomicAdd by default, as torch's do; the rows marked "deterministic" time
the sort-based path that use_deterministic_algorithms(True) selects.

Run with the others by `make bench`, or alone:
    python3 benchmarks/bench_index.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import Case  # noqa: E402

TITLE = "Indexing, gather and scatter (issue 14)"

ROWS = 1 << 24


def _setup(ours, torch, cupy=None):
    return {"pycuda_sem": ours, "torch": torch, "cupy": cupy or ""}


def _lib(code):
    """The same setup for pycuda_sem (pcs) and torch, from one template."""
    return _setup(code.replace("LIB", "pcs"), code.replace("LIB", "torch"))


def _big(name, ours, torch, cupy, setup, nbytes, number=10):
    return Case(name, ours, torch, cupy, setup=setup, number=number, repeat=7, sync=True,
                bytes_moved=nbytes)


def big_cases():
    n = ROWS
    vec = ("x = LIB.randn(%d, device='cuda'); "
           "idx = LIB.randint(0, %d, (%d,), device='cuda')" % (n, n, n))
    s_vec = _lib(vec)
    s_vec_v = _lib(vec + "; v = LIB.randn(%d, device='cuda')" % n)
    s_vec["cupy"] = ("x = cupy.random.standard_normal(%d, dtype=cupy.float32); "
                     "idx = cupy.random.randint(0, %d, %d)" % (n, n, n))
    mat = _lib("x = LIB.randn(%d, 4, device='cuda'); idx = LIB.randint(0, %d, (%d, 4), device='cuda'); "
               "src = LIB.randn(%d, 4, device='cuda'); y = LIB.zeros(%d, 4, device='cuda')"
               % (n, n, n, n, n))
    dup = _lib("y = LIB.zeros(1024, device='cuda'); idx = LIB.randint(0, 1024, (%d,), device='cuda'); "
               "v = LIB.randn(%d, device='cuda')" % (n, n))
    gib = 1 << 28  # float32 elements in 1 GiB
    mask = _lib("x = LIB.randn(%d, device='cuda'); m = LIB.rand(%d, device='cuda') < 0.5" % (gib, gib))
    mask["cupy"] = ("x = cupy.random.standard_normal(%d, dtype=cupy.float32); "
                    "m = cupy.random.random(%d) < 0.5" % (gib, gib))
    return [
        _big("x[idx], 2^24 float32 at 2^24 int64 indices", "x[idx]", "x[idx]", "x[idx]", s_vec,
             n * (8 + 4 + 4)),
        _big("index_select(0, idx), 2^24 float32", "x.index_select(0, idx)", "x.index_select(0, idx)",
             "cupy.take(x, idx)", s_vec, n * (8 + 4 + 4)),
        _big("gather(0, idx) [2^24, 4] float32", "x.gather(0, idx)", "x.gather(0, idx)", None, mat,
             n * 4 * (8 + 4 + 4)),
        _big("scatter_add_(0, idx, src) [2^24, 4] float32", "y.scatter_add_(0, idx, src)",
             "y.scatter_add_(0, idx, src)", None, mat, n * 4 * (8 + 4 + 8)),
        _big("x[idx] = v, 2^24 float32 at 2^24 random indices (last value wins)", "x[idx] = v",
             "x[idx] = v", None, s_vec_v, n * (8 + 4 + 4)),
        _big("index_put_(accumulate=True), 2^24 values into 1024", "y.index_put_((idx,), v, accumulate=True)",
             "y.index_put_((idx,), v, accumulate=True)", None, dup, n * (8 + 4)),
        _big("index_put_(accumulate=True), 2^24 values into 1024, deterministic",
             "pcs.use_deterministic_algorithms(True); y.index_put_((idx,), v, accumulate=True); "
             "pcs.use_deterministic_algorithms(False)",
             "torch.use_deterministic_algorithms(True); y.index_put_((idx,), v, accumulate=True); "
             "torch.use_deterministic_algorithms(False)", None, dup, n * (8 + 4)),
        _big("x[mask] 1 GiB float32, half true", "x[m]", "x[m]", "x[m]", mask, gib * (4 + 1 + 2)),
        _big("masked_select 1 GiB float32, half true", "x.masked_select(m)", "x.masked_select(m)",
             None, mask, gib * (4 + 1 + 2)),
    ]


def host_cases():
    """Host time at 1024 elements (a host loop: what a call costs to launch)."""
    s = _lib("x = LIB.ones(1024, device='cuda'); idx = LIB.arange(1024, device='cuda'); "
             "i2 = idx.view(1024); m = x > 0; src = LIB.ones(1024, device='cuda')")
    s["cupy"] = "x = cupy.ones(1024, dtype=cupy.float32); idx = cupy.arange(1024); m = x > 0"
    rows = []
    for name, ours, cp in (("x[idx]", "x[idx]", "x[idx]"),
                           ("index_select(0, idx)", "x.index_select(0, idx)", "cupy.take(x, idx)"),
                           ("gather(0, idx)", "x.gather(0, i2)", None),
                           ("scatter_add_(0, idx, src)", "x.scatter_add_(0, idx, src)", None),
                           ("x[idx] = 1.0", "x.__setitem__(idx, 1.0)", None),
                           ("x[m] (mask)", "x[m]", "x[m]"),
                           ("nonzero()", "x.nonzero()", "cupy.nonzero(x)")):
        rows.append(Case("%s, 1024 float32 (host loop)" % name, ours, ours, cp, setup=s,
                         number=2000))
    return rows


CASES = big_cases() + host_cases()


if __name__ == "__main__":
    import harness
    harness.main("bench_index", CASES, TITLE)
