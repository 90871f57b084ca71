"""Layouts: the acceptance table of issue 13. Elementwise ops, copies and
reductions over the layouts real programs produce (transposed, permuted,
broadcast, stepped, sliced, expanded, mixed), for float32, float16, bfloat16
and int64 at 2^26 elements (50 calls a loop, a sync closes it; GB/s from the bytes each op
must move), a few host-time rows at 1024 elements, and the device-to-device
copy bandwidth (cudaMemcpy through copy_ of contiguous tensors) as the
reference the transposed copy and the outer-dim sum are held to.

Run with the others by `make bench`, or alone:
    python3 benchmarks/bench_layouts.py            # the whole table
    python3 benchmarks/bench_layouts.py --quick    # float32, the issue's rows
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import Case  # noqa: E402

TITLE = "Layouts (2^26 elements unless named)"

N = 1 << 26
SIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8}
CUPY_DT = {"float32": "cupy.float32", "float16": "cupy.float16", "int64": "cupy.int64"}  # no bfloat16

# Shapes of 2^26 elements.
SQ = (8192, 8192)
WIDE = (1024, 65536)
TALL = (65536, 1024)
CUBE = (512, 256, 512)
SHORT_ROWS = ((1 << 22, 16), (1 << 20, 64))
NCHW, NHWC = (32, 64, 128, 256), (32, 128, 256, 64)  # a batch of images, channels first / last


def _setup(dt, arrays):
    """arrays: name -> shape. ones() of that shape in dtype dt, per library."""
    def lib_line(lib, mk):
        return "; ".join("%s = %s" % (name, mk(shape)) for name, shape in arrays.items())
    s = {
        "pycuda_sem": lib_line("pcs", lambda sh: "pcs.ones(%s, device='cuda', dtype=pcs.%s)" % (sh, dt)),
        "torch": lib_line("torch", lambda sh: "torch.ones(%s, device='cuda', dtype=torch.%s)" % (sh, dt)),
    }
    if dt in CUPY_DT:
        s["cupy"] = lib_line("cupy", lambda sh: "cupy.ones(%s, dtype=%s)" % (sh, CUPY_DT[dt]))
    return s


def _big(name, stmt, setup, nbytes, cupy=None, dt="float32"):
    # 50 calls a timed loop: the loop's start and its closing sync cost about
    # 2 us of idle device whatever the op, which a loop of 10 charged at 4 %
    # to a 50 us op (and at 2 % to the 100 us copy it is compared with).
    return Case("%s, %s" % (name, dt), stmt, stmt, cupy if dt in CUPY_DT else None, setup=setup,
                number=50, repeat=7, sync=True, bytes_moved=nbytes)


def elementwise_cases(dt):
    s = SIZE[dt]
    ab = _setup(dt, {"a": SQ, "b": SQ})
    rows = [
        _big("a + b contiguous", "a + b", ab, 3 * N * s, "a + b", dt),
        _big("a.t() + b.t() (transposed 2-D)", "a.t() + b.t()", ab, 3 * N * s, "a.T + b.T", dt),
        _big("a + b.t() (mixed layouts)", "a + b.t()", ab, 3 * N * s, "a + b.T", dt),
        _big("a + b.permute(0,3,1,2) (channels-last operand)", "a + b.permute(0, 3, 1, 2)",
             _setup(dt, {"a": NCHW, "b": NHWC}), 3 * N * s, "a + b.transpose(0, 3, 1, 2)", dt),
        _big("permute(2,0,1) + permute(2,0,1) (3-D)", "a.permute(2, 0, 1) + b.permute(2, 0, 1)",
             _setup(dt, {"a": CUBE, "b": CUBE}), 3 * N * s,
             "a.transpose(2, 0, 1) + b.transpose(2, 0, 1)", dt),
        _big("a + row [1, N] (row broadcast)", "a + r", _setup(dt, {"a": SQ, "r": (1, SQ[1])}),
             2 * N * s, "a + r", dt),
        _big("a + col [N, 1] (column broadcast)", "a + c", _setup(dt, {"a": SQ, "c": (SQ[0], 1)}),
             2 * N * s, "a + c", dt),
        _big("a + v.expand (stride-0 operand)", "a + v.expand(%d, %d)" % SQ,
             _setup(dt, {"a": SQ, "v": (SQ[0], 1)}), 2 * N * s,
             "a + cupy.broadcast_to(v, %s)" % (SQ,), dt),
        _big("a[:, ::2] + b[:, ::2] (stepped)", "a[:, ::2] + b[:, ::2]",
             _setup(dt, {"a": (SQ[0], 2 * SQ[1]), "b": (SQ[0], 2 * SQ[1])}), 3 * N * s,
             "a[:, ::2] + b[:, ::2]", dt),
        _big("a[:, 1:-1] + b[:, 1:-1] (sliced)", "a[:, 1:-1] + b[:, 1:-1]",
             _setup(dt, {"a": (SQ[0], SQ[1] + 2), "b": (SQ[0], SQ[1] + 2)}), 3 * N * s,
             "a[:, 1:-1] + b[:, 1:-1]", dt),
        # an image batch against a per-channel vector and a per-pixel mask:
        # three dims after coalescing, the shapes normalisation layers make
        _big("x + bias [1, C, 1, 1] (per channel)", "x + c", _setup(dt, {"x": NCHW, "c": (1, NCHW[1], 1, 1)}),
             2 * N * s, "x + c", dt),
        _big("x * m [N, 1, H, W] (per pixel)", "x * m",
             _setup(dt, {"x": NCHW, "m": (NCHW[0], 1) + NCHW[2:]}), 2 * N * s + N * s // NCHW[1], "x * m", dt),
        _big("x[..., 1:-1, 1:-1].relu() (cropped image)", "x[..., 1:-1, 1:-1].relu()",
             _setup(dt, {"x": NCHW[:2] + (NCHW[2] + 2, NCHW[3] + 2)}), 2 * N * s, None, dt),
    ]
    return rows


def copy_cases(dt):
    s = SIZE[dt]
    return [
        _big("copy_ contiguous (cudaMemcpy D2D reference)", "y.copy_(x)",
             _setup(dt, {"x": SQ, "y": SQ}), 2 * N * s, "y[...] = x", dt),
        _big("x.t().contiguous() (transposed copy)", "x.t().contiguous()", _setup(dt, {"x": SQ}),
             2 * N * s, "cupy.ascontiguousarray(x.T)", dt),
        _big("y.fill_(3) (contiguous fill)", "y.fill_(3)", _setup(dt, {"y": SQ}), N * s, "y.fill(3)", dt),
        _big("y[:, 1:].fill_(3) (sliced fill)", "y[:, 1:].fill_(3)", _setup(dt, {"y": SQ}),
             N * s * (SQ[1] - 1) // SQ[1], "y[:, 1:].fill(3)", dt),
        _big("y.t().fill_(3) (transposed fill)", "y.t().fill_(3)", _setup(dt, {"y": SQ}), N * s, "y.T.fill(3)", dt),
        _big("x.permute(2,0,1).contiguous() (3-D)", "x.permute(2, 0, 1).contiguous()",
             _setup(dt, {"x": CUBE}), 2 * N * s, "cupy.ascontiguousarray(x.transpose(2, 0, 1))", dt),
        _big("y.copy_(x.t()) (differently ordered)", "y.copy_(x.t())", _setup(dt, {"x": SQ, "y": SQ}),
             2 * N * s, "y[...] = x.T", dt),
    ]


def float32_view_copies():
    """Casts and clones of transposed and sliced views, float32: the result
    keeps the view's memory order (torch's preserve_format), so none of
    these transposes; the bytes are the read plus the write."""
    x, cube = _setup("float32", {"x": SQ}), _setup("float32", {"x": (64, 1024, 1024)})
    sliced = 64 * 1023 * 1024
    return [
        _big("x.t().half() (cast of a transposed view)", "x.t().half()", x, N * 6,
             "x.T.astype(cupy.float16)"),
        _big("x.t().clone() (clone of a transposed view)", "x.t().clone()", x, N * 8, "x.T.copy(order='K')"),
        _big("x.permute(0,2,1)[:, 1:].half() (cast of a sliced permuted view)",
             "x.permute(0, 2, 1)[:, 1:].half()", cube, sliced * 6,
             "x.transpose(0, 2, 1)[:, 1:].astype(cupy.float16)"),
    ]


def reduction_cases(dt, ops=("sum",)):
    s = SIZE[dt]
    rows = []
    for op in ops:
        for shape_name, shape in (("square", SQ), ("wide", WIDE), ("tall", TALL)):
            x = _setup(dt, {"x": shape})
            for dname, dim, cdim in (("inner", "1", "1"), ("outer", "0", "0")):
                rows.append(_big("x.%s(%s) %s %s" % (op, dim, dname, shape_name), "x.%s(%s)" % (op, dim),
                                 x, N * s, "x.%s(axis=%s)" % (op, cdim), dt))
        # rows far shorter than a warp's reach (features of a batch, a
        # small last dim): the inner kernel must not leave lanes idle
        for shape in SHORT_ROWS:
            rows.append(_big("x.%s(1) inner short rows %s" % (op, shape,), "x.%s(1)" % op,
                             _setup(dt, {"x": shape}), N * s, "x.%s(axis=1)" % op, dt))
            rows.append(_big("x.%s(0) outer short rows %s" % (op, shape,), "x.%s(0)" % op,
                             _setup(dt, {"x": shape}), N * s, "x.%s(axis=0)" % op, dt))
        x3 = _setup(dt, {"x": CUBE})
        rows.append(_big("x.%s(1) middle dim %s" % (op, CUBE,), "x.%s(1)" % op, x3, N * s,
                         "x.%s(axis=1)" % op, dt))
        rows.append(_big("x.%s((0, 2)) two dims %s" % (op, CUBE,), "x.%s((0, 2))" % op, x3, N * s,
                         "x.%s(axis=(0, 2))" % op, dt))
        rows.append(_big("x.%s() all dims" % op, "x.%s()" % op, _setup(dt, {"x": SQ}), N * s,
                         "x.%s()" % op, dt))
    return rows


def float32_extra_reductions():
    """The other reduction kinds on the outer dim, float32 (torch names them the same)."""
    x = _setup("float32", {"x": SQ})
    rows = []
    for stmt, cstmt in (("x.amax(0)", "x.max(axis=0)"), ("x.argmax(0)", "x.argmax(axis=0)"),
                        ("x.mean(0)", "x.mean(axis=0)"), ("x.var(0)", "x.var(axis=0, ddof=1)"),
                        ("x.norm(dim=0)", None), ("x.logsumexp(0)", None), ("x.max(0)", None)):
        rows.append(_big("%s outer square" % stmt, stmt, x, N * 4, cstmt, "float32"))
    return rows


def host_cases():
    """Host time at 1024 elements: the layout path must not cost launch time."""
    def small(arrays):
        return _setup("float32", arrays)
    sq = (32, 32)
    rows = []
    for name, stmt, arrays in (
            ("a + b contiguous", "a + b", {"a": sq, "b": sq}),
            ("a.t() + b.t()", "a.t() + b.t()", {"a": sq, "b": sq}),
            ("a + row", "a + r", {"a": sq, "r": (1, 32)}),
            ("a[:, ::2] + b[:, ::2]", "a[:, ::2] + b[:, ::2]", {"a": (32, 64), "b": (32, 64)}),
            ("x.t().contiguous()", "x.t().contiguous()", {"x": sq}),
            ("x.sum(0)", "x.sum(0)", {"x": sq}),
            ("x.sum(1)", "x.sum(1)", {"x": sq})):
        cst = stmt.replace(".t()", ".T").replace("x.T.contiguous()", "cupy.ascontiguousarray(x.T)")
        cst = cst.replace("sum(0)", "sum(axis=0)").replace("sum(1)", "sum(axis=1)")
        rows.append(Case("%s, 1024 float32 (host loop)" % name, stmt, stmt, cst, setup=small(arrays),
                         number=20000))
    return rows


def factory_cases():
    """Device-side factories at 1024 elements: host time, one launch each."""
    setup = {"pycuda_sem": "x = pcs.ones(1024, device='cuda')",
             "torch": "x = torch.ones(1024, device='cuda')", "cupy": "x = cupy.ones(1024)"}
    rows = []
    for name, stmt, cst in (
            ("arange(1024)", "M.arange(1024, device='cuda')", "cupy.arange(1024)"),
            ("zeros(1024)", "M.zeros(1024, device='cuda')", "cupy.zeros(1024)"),
            ("full((1024,), 2.0)", "M.full((1024,), 2.0, device='cuda')", "cupy.full((1024,), 2.0)"),
            ("ones(1024)", "M.ones(1024, device='cuda')", "cupy.ones(1024)"),
            ("x.fill_(3.0)", "x.fill_(3.0)", "x.fill(3.0)"),
            ("linspace(0, 1, 1024)", "M.linspace(0, 1, 1024, device='cuda')", "cupy.linspace(0, 1, 1024)"),
            ("logspace(0, 1, 1024)", "M.logspace(0, 1, 1024, device='cuda')", "cupy.logspace(0, 1, 1024)"),
            ("eye(32)", "M.eye(32, device='cuda')", "cupy.eye(32)"),
            ("tril_indices(45, 45)", "M.tril_indices(45, 45, device='cuda')", "cupy.tril_indices(45)"),
            ("zeros_like(x)", "M.zeros_like(x)", "cupy.zeros_like(x)")):
        rows.append(Case("%s (host loop)" % name, stmt.replace("M.", "pcs."), stmt.replace("M.", "torch."),
                         cst, setup=setup, number=20000))
    return rows


def cases(quick=False):
    if quick:
        s = SIZE["float32"]
        rows = copy_cases("float32")[:2] + [r for r in copy_cases("float16") if "fill" in r.name]
        rows += [r for r in elementwise_cases("float32") if "row" in r.name or "stepped" in r.name
                 or "contiguous" in r.name or "image" in r.name or "per " in r.name]
        x = _setup("float32", {"x": SQ})
        rows += [_big("x.sum(0) outer square", "x.sum(0)", x, N * s, "x.sum(axis=0)"),
                 _big("x.sum(1) inner square", "x.sum(1)", x, N * s, "x.sum(axis=1)")]
        ab, cube = _setup("float32", {"a": SQ, "b": SQ}), _setup("float32", {"x": CUBE})
        rows += [_big("a.t() + b.t() (transposed 2-D)", "a.t() + b.t()", ab, 3 * N * s, "a.T + b.T"),
                 _big("a + b.t() (mixed layouts)", "a + b.t()", ab, 3 * N * s, "a + b.T"),
                 _big("x.sum((0, 2)) two dims", "x.sum((0, 2))", cube, N * s, "x.sum(axis=(0, 2))")]
        rows += [r for r in elementwise_cases("float16") if "row" in r.name or "sliced" in r.name
                 or "stepped" in r.name]
        rows += float32_view_copies()
        rows += host_cases()[:3] + factory_cases()
        return rows
    rows = []
    for dt in ("float32", "float16", "bfloat16", "int64"):
        rows += copy_cases(dt) + elementwise_cases(dt) + reduction_cases(dt)
    rows += float32_extra_reductions() + float32_view_copies() + host_cases() + factory_cases()
    return rows


CASES = cases()


if __name__ == "__main__":
    import harness
    quick = "--quick" in sys.argv[1:]
    harness.main("bench_layouts", cases(quick), TITLE + (" (quick)" if quick else ""))
