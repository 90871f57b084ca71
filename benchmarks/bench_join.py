"""Joining and softmax: the issue-14 rows of cat and softmax/log_softmax,
side by side with torch (and CuPy where it has the op), with GB/s from the
bytes each op must move (read once, write once) and the device-to-device
cudaMemcpy (copy_ of contiguous tensors) as the reference cat is held to.

  cat of two 512 MiB float32 tensors (dim 0: two cudaMemcpyAsync; dim 1: two
  strided copies), cat of many small tensors, flip / roll / repeat / tril of
  256 MiB, softmax and log_softmax over the last dim of [16384, 16384] and
  [2^20, 32] float32 (and float16), over dim 0, their gradients (the
  kernel alone and through autograd), and host time at 1024 elements.

Run with the others by `make bench`, or alone:
    python3 benchmarks/bench_join.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import Case  # noqa: E402

TITLE = "Joining, rearranging, softmax (issue 14)"

HALF_GIB = 1 << 27  # float32 elements in 512 MiB
ITEM = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}  # bytes an element
GIB = 1 << 30


def _setup(arrays, dt="float32", fill="randn"):
    """arrays: name -> shape; random (or ones) tensors of dtype dt per library."""
    def line(mk):
        return "; ".join("%s = %s" % (n, mk(s)) for n, s in arrays.items())
    cupy_fill = "cupy.random.standard_normal(%s, dtype=cupy.float32).astype(cupy.%s)" \
        if fill == "randn" else "cupy.ones(%s, dtype=cupy.%s)"
    return {
        "pycuda_sem": line(lambda s: "pcs.%s(%s, device='cuda', dtype=pcs.%s)" % (fill, s, dt)),
        "torch": line(lambda s: "torch.%s(%s, device='cuda', dtype=torch.%s)" % (fill, s, dt)),
        "cupy": line(lambda s: cupy_fill % (s, dt)),
    }


def _big(name, ours, torch, cupy, setup, nbytes, number=10):
    return Case(name, ours, torch, cupy, setup=setup, number=number, repeat=7, sync=True,
                bytes_moved=nbytes)


def cat_cases():
    two = _setup({"a": (HALF_GIB,), "b": (HALF_GIB,)}, fill="ones")
    wide = _setup({"a": (8192, 16384), "b": (8192, 16384)}, fill="ones")
    small = {
        "pycuda_sem": "xs = [pcs.ones(1024, device='cuda') for _ in range(256)]",
        "torch": "xs = [torch.ones(1024, device='cuda') for _ in range(256)]",
        "cupy": "xs = [cupy.ones(1024, dtype=cupy.float32) for _ in range(256)]",
    }
    return [
        _big("copy_ 1 GiB (cudaMemcpy D2D reference)", "y.copy_(x)", "y.copy_(x)", "y[...] = x",
             _setup({"x": (2 * HALF_GIB,), "y": (2 * HALF_GIB,)}, fill="ones"), 2 * GIB),
        _big("cat two 512 MiB float32, dim 0", "pcs.cat([a, b])", "torch.cat([a, b])",
             "cupy.concatenate([a, b])", two, 2 * GIB),
        _big("cat two 512 MiB float32, dim 1", "pcs.cat([a, b], 1)", "torch.cat([a, b], 1)",
             "cupy.concatenate([a, b], 1)", wide, 2 * GIB),
        _big("stack two 512 MiB float32, dim 1", "pcs.stack([a, b], 1)", "torch.stack([a, b], 1)",
             "cupy.stack([a, b], 1)", wide, 2 * GIB),
        _big("cat 256 x 4 KiB float32", "pcs.cat(xs)", "torch.cat(xs)", "cupy.concatenate(xs)",
             small, 2 * 256 * 4096, number=200),
    ]


def rearrange_cases():
    sq = _setup({"x": (8192, 8192)})
    nb = 2 * 8192 * 8192 * 4
    return [
        _big("flip(0) [8192, 8192] float32", "x.flip(0)", "x.flip(0)",
             "cupy.ascontiguousarray(cupy.flip(x, 0))", sq, nb),
        _big("flip(1) [8192, 8192] float32", "x.flip(1)", "x.flip(1)",
             "cupy.ascontiguousarray(cupy.flip(x, 1))", sq, nb),
        _big("roll(1000, 1) [8192, 8192] float32", "x.roll(1000, 1)", "x.roll(1000, 1)",
             "cupy.roll(x, 1000, 1)", sq, nb),
        _big("repeat(2, 1) [8192, 8192] float32", "x.repeat(2, 1)", "x.repeat(2, 1)",
             "cupy.tile(x, (2, 1))", sq, 3 * 8192 * 8192 * 4),
        _big("tril() [8192, 8192] float32", "x.tril()", "x.tril()", "cupy.tril(x)", sq, nb),
    ]


def softmax_cases():
    rows = []
    for shape, dt, tag in (((16384, 16384), "float32", "[16384, 16384] float32"),
                           ((1 << 20, 32), "float32", "[2^20, 32] float32"),
                           ((16384, 16384), "float16", "[16384, 16384] float16"),
                           ((1 << 20, 32), "float16", "[2^20, 32] float16"),
                           # GPT-2's vocabulary: rows off 16-byte boundaries
                           ((4096, 50257), "float16", "[4096, 50257] float16"),
                           ((128, 50257), "float16", "[128, 50257] float16"),
                           # a batch of LLM logits (LLaMA's 32000), rows
                           # held in registers; a row an SM
                           ((128, 32000), "float32", "[128, 32000] float32"),
                           ((128, 65536), "float16", "[128, 65536] float16"),
                           ((128, 65536), "float32", "[128, 65536] float32"),
                           ((4096, 4099), "float16", "[4096, 4099] float16"),
                           # attention scores over a sequence of 2048: a row
                           # in 4 packs a thread of a block sized to it; and
                           # float32 rows of 12000, which the shared-memory
                           # kernel takes (0.80x torch on the H200)
                           ((8192, 2048), "float32", "[8192, 2048] float32"),
                           ((8192, 2048), "float16", "[8192, 2048] float16"),
                           ((8192, 2048), "float64", "[8192, 2048] float64"),
                           ((4096, 12000), "float32", "[4096, 12000] float32"),
                           # rows a little over one wave of one row an SM
                           # (the thread-block cluster path), and a batch of
                           # them: the rows below torch before session 39;
                           # float64 rows of 6000 (384-thread blocks) and of
                           # 31 (log_softmax in the lines kernel)
                           ((133, 65536), "float16", "[133, 65536] float16"),
                           ((150, 50257), "bfloat16", "[150, 50257] bfloat16"),
                           ((1000, 50257), "float16", "[1000, 50257] float16"),
                           ((140, 65536), "float32", "[140, 65536] float32"),
                           ((200, 32768), "float32", "[200, 32768] float32"),
                           ((8192, 6000), "float64", "[8192, 6000] float64"),
                           ((1 << 20, 31), "float64", "[2^20, 31] float64")):
        n = shape[0] * shape[1] * ITEM[dt]
        s = _setup({"x": shape}, dt)
        for fn in ("softmax", "log_softmax"):
            rows.append(_big("%s(x, -1) %s" % (fn, tag), "pcs.%s(x, -1)" % fn,
                             "torch.%s(x, -1)" % fn, None, s, 2 * n))
    s = _setup({"x": (8192, 8192)})
    rows.append(_big("softmax(x, 0) [8192, 8192] float32", "pcs.softmax(x, 0)",
                     "torch.softmax(x, 0)", None, s, 2 * 8192 * 8192 * 4))
    s = _setup({"x": (256, 64, 1024)})
    rows.append(_big("softmax(x, 1) [256, 64, 1024] float32", "pcs.softmax(x, 1)",
                     "torch.softmax(x, 1)", None, s, 2 * (1 << 24) * 4))
    # a dim that is not the last, short lines: the classes of a
    # segmentation map, a ResNet stage's channels, a tiny inner extent
    for shape, dt in (((32, 21, 128, 128), "float32"), ((32, 21, 128, 128), "float16"),
                      ((8, 64, 56, 56), "float32"), ((65536, 32, 2), "float16")):
        n = 1
        for d in shape:
            n *= d
        s = _setup({"x": shape}, dt)
        for fn in ("softmax", "log_softmax"):
            rows.append(_big("%s(x, 1) %s %s" % (fn, list(shape), dt), "pcs.%s(x, 1)" % fn,
                             "torch.%s(x, 1)" % fn, None, s, 2 * n * (4 if dt == "float32" else 2)))
    return rows


def softmax_backward_cases():
    """The gradient of softmax and log_softmax: the kernel alone (torch's
    _softmax_backward_data, bytes: read g and y, write the gradient), and
    the forward and backward together through autograd, for attention
    scores (a ViT's 197 tokens, 12 heads, a batch of 64), GPT-2 logits, a
    square, short rows, and over the classes of a segmentation map (dim 1 of
    [N, C, H, W], a dim that is not the last)."""
    rows = []
    for shape, dim, dt, tag, autograd in (((151296, 197), -1, "float32", "[151296, 197] float32", True),
                                          ((151296, 197), -1, "float16", "[151296, 197] float16", True),
                                          ((4096, 50257), -1, "float16", "[4096, 50257] float16", False),
                                          ((16384, 16384), -1, "float32", "[16384, 16384] float32", False),
                                          ((1 << 20, 32), -1, "float32", "[2^20, 32] float32", False),
                                          ((1 << 20, 32), -1, "float16", "[2^20, 32] float16", False),
                                          ((32, 21, 128, 128), 1, "float32", "[32, 21, 128, 128] dim 1 float32",
                                           False),
                                          ((32, 21, 128, 128), 1, "float16", "[32, 21, 128, 128] dim 1 float16",
                                           False),
                                          ((65536, 32, 2), 1, "float16", "[65536, 32, 2] dim 1 float16", False),
                                          # attention over a sequence of 2048
                                          ((8192, 2048), -1, "float32", "[8192, 2048] float32", True),
                                          ((8192, 2048), -1, "float16", "[8192, 2048] float16", False)):
        n = 1
        for d in shape:
            n *= d
        n *= ITEM[dt]
        base = _setup({"x": shape, "g": shape}, dt)
        for fn, log in (("softmax", False), ("log_softmax", True)):
            s = {"pycuda_sem": base["pycuda_sem"] + "; y = pcs.%s(x, %d)" % (fn, dim),
                 "torch": base["torch"] + "; y = torch.%s(x, %d)" % (fn, dim)}
            rows.append(_big("%s backward %s" % (fn, tag), "pcs._C._softmax_backward(g, y, %d, %s)" % (dim, log),
                             "torch._%s_backward_data(g, y, %d, torch.%s)" % (fn, dim, dt), None, s, 3 * n))
            if autograd:
                s = {k: base[k] + "; x.requires_grad_(True)" for k in ("pycuda_sem", "torch")}
                rows.append(_big("%s forward + backward %s (autograd)" % (fn, tag),
                                 "x.grad = None; pcs.%s(x, -1).backward(g)" % fn,
                                 "x.grad = None; torch.%s(x, -1).backward(g)" % fn, None, s, 5 * n))
    return rows


def host_cases():
    """Host time at 1024 elements (a host loop: what a call costs to launch)."""
    rows = []
    for name, ours, theirs, cp, arrays in (
            ("cat([a, b]) 2 x 512", "pcs.cat([a, b])", "torch.cat([a, b])",
             "cupy.concatenate([a, b])", {"a": (512,), "b": (512,)}),
            ("stack([a, b]) 2 x 512", "pcs.stack([a, b])", "torch.stack([a, b])",
             "cupy.stack([a, b])", {"a": (512,), "b": (512,)}),
            ("softmax(x, -1) [32, 32]", "pcs.softmax(x, -1)", "torch.softmax(x, -1)", None,
             {"x": (32, 32)}),
            ("log_softmax(x, -1) [32, 32]", "x.log_softmax(-1)", "x.log_softmax(-1)", None,
             {"x": (32, 32)}),
            ("flip(0) [32, 32]", "x.flip(0)", "x.flip(0)", "cupy.ascontiguousarray(x[::-1])",
             {"x": (32, 32)}),
            ("tril() [32, 32]", "x.tril()", "x.tril()", "cupy.tril(x)", {"x": (32, 32)}),
            ("split(8) [32, 32] (views)", "x.split(8)", "x.split(8)", None, {"x": (32, 32)})):
        rows.append(Case("%s, 1024 float32 (host loop)" % name, ours, theirs, cp,
                         setup=_setup(arrays, fill="ones"), number=20000))
    return rows


CASES = cat_cases() + rearrange_cases() + softmax_cases() + softmax_backward_cases() + host_cases()


if __name__ == "__main__":
    import harness
    harness.main("bench_join", CASES, TITLE)
