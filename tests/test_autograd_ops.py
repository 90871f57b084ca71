"""Every registered backward formula against finite differences.

One table (CASES) names each differentiable op with its arguments: R(...) is
a random float64 tensor that requires grad (magnitudes away from zero, so
inputs stay away from the ops' non-differentiable points), L/idx/mask build
index tensors and masks on the test's device. Each case runs
- formula_check: the formula alone with a hand-made ctx (no engine needed);
- gradcheck through the engine on the CPU, and on CUDA under the `cuda`
  marker;
- gradgradcheck for the cases marked gg (double backward via create_graph).
test_every_formula_has_a_case fails when an op is registered without a case,
so a new op cannot slip in untested.
"""
import pytest

import numpy as np

import pycuda_sem as torch
from pycuda_sem import _C
from pycuda_sem.autograd import _formulas

from autograd_helpers import (
    R, L, build, call, float_outputs, formula_check, get, gradcheck, gradgradcheck, idx, mask,
    put,
)

HAVE_ENGINE = hasattr(_C, "_register_formula")
needs_engine = pytest.mark.skipif(not HAVE_ENGINE, reason="the autograd engine is not built")
PROPS = {"T", "mT", "real", "imag"}


class Case:
    def __init__(self, name, *args, kw=None, via=None, gg=False, cuda=True, fake=True, tag="",
                 lowp=False, gpu=False):
        self.name, self.args, self.kw = name, list(args), kw or {}
        if via is None:
            via = "p" if name in PROPS else (
                "f" if hasattr(_C, name) and not name.endswith("_") else "m")
        # lowp: a round trip through a low-precision dtype, which finite
        # differences cannot check (test_casts_pass_the_gradient does)
        self.via, self.gg, self.cuda, self.fake, self.lowp = via, gg, cuda, fake, lowp
        self.gpu = gpu  # needs a GPU even in the CPU tests (x.cuda(), pin_memory)
        self.id = name + (("-" + tag) if tag else "")


C = Case
CASES = []


def add(*cases):
    CASES.extend(cases)


# ---- elementwise unary -----------------------------------------------------------------------
_POS = dict(pos=True)
for n, spec in [
        ("exp", {}), ("exp2", {}), ("expm1", {}), ("log", _POS), ("log2", _POS), ("log10", _POS),
        ("log1p", _POS), ("sqrt", _POS), ("rsqrt", _POS), ("sin", {}), ("cos", {}),
        ("tan", dict(hi=1.2)), ("asin", dict(lo=0.1, hi=0.9)), ("acos", dict(lo=0.1, hi=0.9)),
        ("atan", {}), ("sinh", {}), ("cosh", {}), ("tanh", {}), ("sigmoid", {}),
        ("reciprocal", {}), ("square", {}), ("neg", {}), ("abs", {}), ("relu", {}),
        ("frac", dict(lo=0.1, hi=0.9)), ("floor", dict(lo=0.1, hi=0.9)),
        ("ceil", dict(lo=0.1, hi=0.9)), ("round", dict(lo=0.1, hi=0.4)),
        ("trunc", dict(lo=0.1, hi=0.9)), ("sign", {}), ("nan_to_num", {}), ("gelu", {}),
        ("erf", {}), ("erfc", {}), ("erfinv", dict(lo=0.1, hi=0.9)), ("lgamma", _POS), ("digamma", _POS)]:
    add(C(n, R(3, 4, **spec), gg=n in ("exp", "log", "tanh", "sigmoid", "abs", "gelu")))
    add(C(n + "_", R(3, 4, **spec), via="m"))
for alias, n, spec in [("arcsin", "asin", dict(lo=0.1, hi=0.9)),
                       ("arccos", "acos", dict(lo=0.1, hi=0.9)), ("arctan", "atan", {}),
                       ("negative", "neg", {}), ("absolute", "abs", {}), ("fix", "trunc", {})]:
    add(C(alias, R(5, **spec)))
add(C("negative_", R(5), via="m"), C("absolute_", R(5), via="m"), C("fix_", R(5, lo=0.1, hi=0.9), via="m"),
    C("arcsin_", R(5, lo=0.1, hi=0.9), via="m"), C("arccos_", R(5, lo=0.1, hi=0.9), via="m"),
    C("arctan_", R(5), via="m"),
    C("gelu", R(6), kw=dict(approximate="tanh"), tag="tanh", gg=True),
    C("_gelu_backward", R(2, 3), R(2, 3), gg=True),
    C("_gelu_backward", R(2, 3), R(2, 3), "tanh", tag="tanh", gg=True),
    # the fused training layers (csrc/ops/fused_layers.c)
    C("_layer_norm", R(3, 4), 4, R(4), R(4), 1e-5, False, gg=True),
    C("_layer_norm", R(2, 3, 4), 12, None, None, 1e-5, False, tag="plain"),
    C("_layer_norm", R(3, 4), 4, R(4), None, 1e-6, True, tag="rms", gg=True),
    C("_cross_entropy", R(3, 5), idx([1, 4, 0]), None, -100, 0.0, gg=True),
    C("_cross_entropy", R(3, 5), idx([1, -100, 2]), None, -100, 0.2, tag="smooth-ignore"),
    C("_philox_dropout", R(3, 4), 0.4, 7, 0, gg=True),
    C("pos", R(4)), C("real", R(4, cplx=True)), C("imag", R(4, cplx=True)),
    C("real", R(4), tag="of-real"),
    C("exp", R(3, cplx=True), tag="complex", gg=True),
    C("sin", R(3, cplx=True), tag="complex"), C("abs", R(3, cplx=True), tag="complex"),
    C("reciprocal", R(3, cplx=True), tag="complex"), C("log", R(3, cplx=True), tag="complex"),
    C("sqrt", R(3, cplx=True), tag="complex"), C("tanh", R(3, cplx=True), tag="complex"),
    C("square", R(3, cplx=True), tag="complex"))
for n in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_and_", "logical_or_",
          "logical_xor_"):
    add(C(n, R(5), R(5), via="m"))
add(C("logical_not_", R(5), via="m"))
add(C("fill_", R(3), 2.0, via="m"), C("zero_", R(3), via="m"))

# ---- binary ----------------------------------------------------------------------------------
for n in ("add", "sub", "mul", "div", "subtract", "multiply", "divide", "true_divide",
          "maximum", "minimum", "atan2", "arctan2"):
    add(C(n, R(3, 4), R(4), gg=n in ("mul", "div", "maximum")))
    add(C(n + "_", R(3, 4), R(4), via="m") if n not in ("arctan2",) else C(n, R(2), R(2), tag="b"))
add(C("add", R(3), R(3), kw=dict(alpha=2.5), tag="alpha"),
    C("sub", R(3), R(3), kw=dict(alpha=-1.5), tag="alpha"),
    C("add", R(3), 2.0, tag="scalar"), C("sub", 1.0, R(3), tag="rsub"),
    C("mul", R(3, cplx=True), R(3, cplx=True), tag="complex", gg=True),
    C("mul", R(3), R(3, cplx=True), tag="real-complex"),
    C("div", R(3, cplx=True), R(3), tag="complex"),
    C("div", R(3, lo=2.1, hi=2.9), R(3, lo=1.1, hi=1.4, pos=True),
      kw=dict(rounding_mode="floor"), tag="floor"),
    C("floor_divide", R(3, lo=2.1, hi=2.9), R(3, lo=1.1, hi=1.4, pos=True)),
    C("floor_divide_", R(3, lo=2.1, hi=2.9), R(3, lo=1.1, hi=1.4, pos=True), via="m"),
    C("remainder", R(3, lo=0.2, hi=0.8, pos=True), R(3, lo=1.5, hi=2.0, pos=True)),
    C("remainder_", R(3, lo=0.2, hi=0.8, pos=True), R(3, lo=1.5, hi=2.0, pos=True), via="m"),
    C("pow", R(3, 2, pos=True), 2.5, gg=True),
    C("pow", R(3, 2, pos=True), R(2), tag="tensor", gg=True),
    C("pow", 2.0, R(3), tag="rpow"),
    C("pow", R(3, pos=True, cplx=True), 2.0, tag="complex"),
    C("pow_", R(3, pos=True), 1.5, via="m"),
    C("maximum", R(3), R(3, values=None), tag="b"),
    C("where", mask([[True, False, True], [False, True, True]]), R(2, 3), R(3), gg=True),
    C("where", R(2, 3), mask([True, False, True]), R(3), via="m", tag="method"),
    C("where", mask([True, False]), R(2), 0.5, tag="scalar"),
    # relu's one-pass backward, which the C formula calls: linear in grad, flat in result
    C("_threshold_backward", R(2, 3), R(2, 3), gg=True),
    C("clamp", R(3, 4), -1.0, 1.0, gg=True),
    C("clamp", R(3, 4), R(3, 4), R(3, 4), tag="tensors"),
    C("clamp", R(4), kw=dict(min=-0.7), tag="min"),
    C("clip", R(4), -1.0, 1.0), C("clamp_", R(4), -1.0, 1.0, via="m"),
    C("clip_", R(4), -1.0, 1.0, via="m"),
    C("lerp", R(3), R(3), 0.3), C("lerp", R(3), R(3), R(3), tag="tensor", gg=True),
    C("lerp_", R(3), R(3), 0.3, via="m"))

# ---- reductions ------------------------------------------------------------------------------
add(C("sum", R(3, 4), gg=True), C("sum", R(3, 4), 1, tag="dim"),
    C("sum", R(2, 3, 4), (0, 2), True, tag="dims-keep"),
    C("sum", R(3, 2, cplx=True), tag="complex"),
    C("mean", R(3, 4)), C("mean", R(2, 3, 4), kw=dict(dim=(1, 2)), tag="dims"),
    C("prod", R(3, 4), gg=True), C("prod", R(3, 4), 1, tag="dim"),
    C("prod", R(values=[[1.5, 0.0, 2.0], [0.5, 1.2, -0.7]]), 1, tag="zero"),
    C("prod", R(values=[1.5, 0.0, 2.0, 0.0]), tag="zeros"),
    C("amax", R(3, 4), 1), C("amin", R(3, 4), (0, 1)),
    C("amax", R(values=[1.0, 2.0, 2.0, -1.0]), tag="ties"),
    C("max", R(3, 4)), C("min", R(3, 4)), C("max", R(3, 4), 1, tag="dim"),
    C("min", R(3, 4), 0, True, tag="dim"), C("max", R(3), R(3), tag="binary"),
    C("var", R(3, 4)), C("var", R(3, 4), 1, tag="dim", gg=True),
    C("var", R(3, 4), kw=dict(dim=0, correction=0), tag="corr"),
    C("std", R(3, 4)), C("std", R(3, 4), 1, False, True, tag="dim", gg=True),
    C("norm", R(3, 4), gg=True), C("norm", R(3, 4), 1, tag="p1"),
    C("norm", R(3, 4), 3, 1, tag="p3"), C("norm", R(3, 4), float("inf"), tag="inf"),
    C("norm", R(3, 4), 0.5, 0, True, tag="p0.5"),
    C("norm", R(3, cplx=True), tag="complex"),
    C("dist", R(4), R(4)), C("dist", R(4), R(4), 3, tag="p3"),
    C("logsumexp", R(3, 4), 1, gg=True), C("trace", R(3, 4)),
    C("cumsum", R(3, 4), 1, gg=True), C("cumsum_", R(3, 4), 0, via="m"),
    C("cumprod", R(3, 4), 1, gg=True), C("cumprod_", R(3, 4), 1, via="m"),
    C("cumprod", R(values=[1.5, 0.0, 2.0, 0.5]), 0, tag="zero"),
    C("cummax", R(3, 4), 1), C("cummin", R(3, 4), 0),
    C("logcumsumexp", R(3, 4), 1, gg=True),
    C("sort", R(3, 4)), C("sort", R(3, 4), 0, True, tag="desc"), C("msort", R(4, 3)),
    C("topk", R(3, 5), 2), C("kthvalue", R(3, 5), 2, 1), C("median", R(3, 5)),
    C("median", R(3, 5), 1, tag="dim"), C("nanmedian", R(3, 5), 1),
    C("nanmedian", R(3, 5), tag="all"), C("mode", R(3, 5), 1))

# ---- matmul family, softmax ------------------------------------------------------------------
add(C("matmul", R(3, 4), R(4, 2), gg=True), C("matmul", R(4), R(4, 2), tag="1d-2d"),
    C("matmul", R(2, 3, 4), R(4), tag="3d-1d"), C("matmul", R(4), R(4), tag="1d-1d"),
    C("matmul", R(2, 1, 3, 4), R(3, 4, 2), tag="batched"),
    C("matmul", R(2, 3, cplx=True), R(3, 2, cplx=True), tag="complex"),
    C("matmul_", R(3, 3), R(3, 3), via="m"),
    C("mm", R(3, 4), R(4, 2)), C("bmm", R(2, 3, 4), R(2, 4, 2)), C("mv", R(3, 4), R(4)),
    C("dot", R(4), R(4)), C("outer", R(3), R(4), via="m"), C("ger", R(3), R(2), via="m"),
    C("addmm", R(3, 2), R(3, 4), R(4, 2), kw=dict(beta=0.5, alpha=2.0), gg=True),
    C("addmm", R(2), R(3, 4), R(4, 2), tag="bcast"),
    C("baddbmm", R(2, 3, 2), R(2, 3, 4), R(2, 4, 2), kw=dict(alpha=1.5)),
    C("cross", R(3, 2), R(3, 2), 0, via="m"),
    C("softmax", R(3, 4), 1, gg=True), C("log_softmax", R(3, 4), 0, gg=True))

# ---- views, shapes ---------------------------------------------------------------------------
add(C("view", R(3, 4), 2, 6), C("view", R(3, 4), (12,), tag="tuple"),
    C("view_as", R(3, 4), R(2, 6)), C("reshape", R(3, 4), (4, 3), gg=True),
    C("reshape_as", R(3, 4), R(6, 2)), C("flatten", R(2, 3, 2)),
    C("squeeze", R(3, 1, 2)), C("squeeze", R(3, 1, 2), 1, tag="dim"), C("unsqueeze", R(3), 0),
    C("permute", R(2, 3, 4), 2, 0, 1), C("permute", R(2, 3, 4), (1, 2, 0), tag="tuple"),
    C("transpose", R(2, 3, 4), 0, 2), C("swapaxes", R(2, 3), 0, 1),
    C("swapdims", R(2, 3), 1, 0), C("t", R(2, 3)), C("T", R(2, 3)), C("mT", R(2, 3, 4)),
    C("movedim", R(2, 3, 4), 0, 2), C("moveaxis", R(2, 3, 4), (0, 1), (2, 0)),
    C("expand", R(3, 1), 2, 3, 4, via="m"), C("expand_as", R(3, 1), R(3, 4)),
    C("broadcast_to", R(1, 3), (2, 3), via="m"),
    C("narrow", R(4, 5), 1, 1, 3), C("select", R(4, 5), 1, 2, via="m"),
    C("diagonal", R(3, 4), 1), C("diagonal", R(2, 3, 3), 0, 1, 2, tag="3d"),
    C("diag", R(4), 1), C("diag", R(3, 4), -1, tag="2d"), C("diag_embed", R(2, 3), 1),
    C("tril", R(3, 4), 1), C("triu", R(3, 4), -1), C("tril_", R(3, 3), via="m"),
    C("triu_", R(3, 3), via="m"),
    C("flip", R(3, 4), (0, 1)), C("fliplr", R(3, 4)), C("flipud", R(3, 4)),
    C("roll", R(3, 4), 1, 1), C("roll", R(3, 4), 2, tag="flat"),
    C("roll", R(3, 4), (1, -1), (0, 1), tag="dims"),
    C("repeat", R(2, 3), 2, 1, 2, via="m"), C("tile", R(2, 3), (2, 2)),
    C("repeat_interleave", R(2, 3), 2, 1),
    C("repeat_interleave", R(3), idx([1, 0, 2]), 0, tag="tensor"),
    C("as_strided", R(3, 4), (2, 2), (1, 3), 1, via="m"),
    C("contiguous", R(3, 4), via="m"), C("clone", R(3, 4), via="m"),
    C("cat", [R(2, 3), R(1, 3)], gg=True), C("cat", [R(2, 3), R(2, 1)], 1, tag="dim1"),
    C("concat", [R(2), R(3)]), C("concatenate", [R(2, 2), R(2, 2)], 1),
    C("stack", [R(2, 3), R(2, 3)], 1, gg=True), C("unbind", R(3, 2), 1),
    C("split", R(5, 2), 2), C("split", R(5, 2), [1, 4], tag="sections"),
    C("chunk", R(5, 2), 2), C("tensor_split", R(5, 2), 3),
    C("tensor_split", R(5, 2), [1, 3], tag="indices"))

# ---- indexing --------------------------------------------------------------------------------
add(C("__getitem__", R(4, 5), (slice(1, 4, 2), 3), gg=True),
    C("__getitem__", R(4, 5), L(lambda d: (torch.tensor([0, 2, 0], device=d),)),
      tag="advanced"),
    C("__getitem__", R(4, 5), L(lambda d: (Ellipsis, None, slice(None, None, 2))), tag="ellipsis"),
    C("__getitem__", R(3, 2), mask([True, False, True]), tag="bool"),
    C("__setitem__", R(4, 3), (slice(1, 3),), R(3)),
    C("__setitem__", R(4, 3), L(lambda d: (torch.tensor([0, 3], device=d), 1)), R(2),
      tag="advanced"),
    C("index_put", R(4, 3), L(lambda d: (torch.tensor([0, 2], device=d),)), R(3)),
    C("index_put", R(4, 3), L(lambda d: (torch.tensor([0, 0], device=d),)), R(3), True,
      tag="acc"),
    C("index_put_", R(4, 3), L(lambda d: (torch.tensor([1, 2], device=d),)), R(2, 3), via="m"),
    C("index_select", R(4, 3), 0, idx([2, 0, 2]), gg=True),
    C("gather", R(3, 4), 1, idx([[0, 0], [3, 1], [2, 2]]), gg=True),
    C("take", R(3, 4), idx([0, 11, 5, 5])),
    C("take_along_dim", R(3, 4), idx([[0], [3], [1]]), 1),
    C("scatter", R(3, 4), 1, idx([[0, 1], [2, 3], [1, 0]]), R(3, 2)),
    C("scatter", R(3, 4), 1, idx([[0], [2], [1]]), 1.5, tag="value"),
    C("scatter_", R(3, 4), 1, idx([[0, 1], [2, 3], [1, 0]]), R(3, 2), via="m"),
    C("scatter_add", R(3, 4), 1, idx([[0, 0], [2, 3], [1, 0]]), R(3, 2)),
    C("scatter_add_", R(3, 4), 1, idx([[0, 0], [2, 3], [1, 0]]), R(3, 2), via="m"))
for red in ("sum", "mean", "amax", "amin", "prod"):
    for incl in (True, False):
        add(C("scatter_reduce", R(3, 4), 1, idx([[0, 0], [2, 3], [1, 0]]), R(3, 2), red,
              kw=dict(include_self=incl), tag="%s-%s" % (red, incl)))
add(C("scatter_reduce_", R(3, 4), 1, idx([[0, 0], [2, 3], [1, 0]]), R(3, 2), "sum", via="m"),
    C("index_add", R(4, 3), 0, idx([2, 0, 2]), R(3, 3), kw=dict(alpha=2.0)),
    C("index_add_", R(4, 3), 0, idx([2, 0]), R(2, 3), via="m"),
    C("index_copy", R(4, 3), 0, idx([3, 1]), R(2, 3)),
    C("index_copy_", R(4, 3), 0, idx([3, 1]), R(2, 3), via="m"),
    C("index_fill", R(4, 3), 1, idx([0, 2]), 1.5),
    C("index_fill_", R(4, 3), 1, idx([0, 2]), 1.5, via="m"),
    C("masked_fill", R(2, 3), mask([True, False, True]), 2.0),
    C("masked_fill_", R(2, 3), mask([True, False, True]), 2.0, via="m"),
    C("masked_select", R(2, 3), mask([[True, False, True], [False, False, True]]), gg=True),
    C("masked_scatter", R(2, 3), mask([True, False, True]), R(5)),
    C("masked_scatter_", R(2, 3), mask([True, False, True]), R(2, 3), via="m"))

# ---- casts, moves, copies --------------------------------------------------------------------
add(C("to", R(3), torch.float32, via="m", tag="float32", lowp=True),
    C("to", R(3), torch.float64, via="m"),
    C("double", R(3), via="m"), C("float", R(3), via="m", lowp=True),
    C("half", R(3), via="m", lowp=True), C("bfloat16", R(3), via="m", lowp=True),
    C("cfloat", R(3), via="m", lowp=True), C("cdouble", R(3), via="m"),
    C("cpu", R(3), via="m"), C("type", R(3), torch.float32, via="m", lowp=True),
    C("type_as", R(3), R(3), via="m"),
    C("copy_", R(3), R(3), via="m"), C("pin_memory", R(3), via="m", cuda=False, gpu=True),
    C("cuda", R(3), via="m", gpu=True))

# ---- fft -------------------------------------------------------------------------------------
# CPU: fft.py's recorded NumPy primitive; CUDA: _C._fft_cuda. Cases name the
# registered op and call pycuda_sem.fft.
FFT = [("fft", dict(cplx=True), {}), ("ifft", dict(cplx=True), dict(norm="ortho")),
       ("rfft", {}, {}), ("irfft", dict(cplx=True), dict(n=6)), ("hfft", dict(cplx=True), {}),
       ("ihfft", {}, dict(norm="forward")), ("fft2", dict(cplx=True), {}),
       ("rfft2", {}, {}), ("irfft2", dict(cplx=True), {}), ("fftn", {}, dict(s=(4, 3))),
       ("rfftn", {}, dict(norm="ortho")), ("irfftn", dict(cplx=True), dict(s=(3, 5)))]
for fname, spec, kw in FFT:
    add(C("_fft_cuda", R(3, 4, **spec), kw=kw, via="fft:" + fname, tag=fname, fake=False,
          gg=fname in ("fft", "rfft", "irfft")))
# the primitive's contract alone: (x, kind, dims, sizes, mode, forward, conj_in, conj_out)
for kind, spec, dims, sizes, mode, fwd, ci, co in [
        (0, dict(cplx=True), (1,), (4,), 0, True, False, False),
        (0, dict(cplx=True), (0, 1), (5, 3), 1, False, False, False),
        (0, {}, (1,), (6,), 2, True, False, False),
        (1, {}, (1,), (4,), 0, True, False, False),
        (1, {}, (0, 1), (2, 6), 2, True, False, True),
        (2, dict(cplx=True), (1,), (6,), 1, False, False, False),
        (2, dict(cplx=True), (1,), (5,), 0, False, True, False),
        (2, dict(cplx=True), (0, 1), (4, 4), 2, False, False, False)]:
    add(C("_fft_cuda", R(3, 4, **spec), kind, dims, sizes, mode, fwd, ci, co, via="prim",
          tag="prim-%d-%s-%s-%d" % (kind, dims, sizes, mode)))
add(C("_fft_roll", R(3, 4), via="fft:fftshift", fake=False),
    C("_fft_roll", R(3, 5), kw=dict(dim=1), via="fft:ifftshift", fake=False, tag="ifftshift"))


# ---- running a case --------------------------------------------------------------------------

def _op(case):
    if case.via.startswith("fft:"):
        fn = getattr(torch.fft, case.via[4:])
        return lambda vals: fn(*vals, **case.kw)
    return lambda vals: call(case.name, case.via, vals, case.kw)


def _run_gradcheck(case, device, check):
    if case.gpu and torch.cuda.device_count() == 0:
        pytest.skip("needs a CUDA GPU (none available)")
    rng = np.random.RandomState(abs(hash(case.id)) % 2**31)
    vals, diff = build(case.args, rng, device)
    op = _op(case)
    leaves = [get(vals, p) for p in diff]

    def f(*xs):
        vs = vals
        for p, x in zip(diff, xs):
            vs = put(vs, p, x)
        return tuple(float_outputs(op(vs)))
    assert check(f, leaves)


FAKE = [c for c in CASES if c.fake and not c.lowp]
RUN = [c for c in CASES if not c.lowp]
RUN_CUDA = [c for c in RUN if c.cuda]


@pytest.mark.parametrize("case", FAKE, ids=[c.id for c in FAKE])
def test_formula_alone(case):
    if case.gpu and torch.cuda.device_count() == 0:
        pytest.skip("needs a CUDA GPU (none available)")
    rng = np.random.RandomState(abs(hash(case.id)) % 2**31)
    vals, diff = build(case.args, rng, "cpu")
    formula_check(case.name, case.via, vals, case.kw, diff)


@needs_engine
@pytest.mark.parametrize("case", RUN, ids=[c.id for c in RUN])
def test_gradcheck_cpu(case):
    _run_gradcheck(case, "cpu", gradcheck)


@needs_engine
@pytest.mark.cuda
@pytest.mark.parametrize("case", RUN_CUDA, ids=[c.id for c in RUN_CUDA])
def test_gradcheck_cuda(case):
    _run_gradcheck(case, "cuda", gradcheck)


GG = [c for c in CASES if c.gg]


@needs_engine
@pytest.mark.parametrize("case", GG, ids=[c.id for c in GG])
def test_gradgradcheck_cpu(case):
    _run_gradcheck(case, "cpu", gradgradcheck)


@needs_engine
@pytest.mark.cuda
@pytest.mark.parametrize("case", GG, ids=[c.id for c in GG])
def test_gradgradcheck_cuda(case):
    _run_gradcheck(case, "cuda", gradgradcheck)


@needs_engine
@pytest.mark.parametrize("name", ["float", "half", "bfloat16", "type", "to"])
def test_casts_pass_the_gradient(name):
    x = torch.tensor([0.5, -1.25, 2.0], dtype=torch.float64, requires_grad=True)
    y = getattr(x, name)(torch.float32) if name in ("type", "to") else getattr(x, name)()
    (y * torch.tensor([1.0, 2.0, 3.0], dtype=y.dtype)).sum().backward()
    assert x.grad.dtype == torch.float64
    assert x.grad.tolist() == [1.0, 2.0, 3.0]


@needs_engine
@pytest.mark.cuda
def test_to_cuda_is_differentiable():
    x = torch.tensor([0.5, -1.25], dtype=torch.float64, requires_grad=True)
    y = x.to("cuda") * 3
    y.cuda().cpu().sum().backward()
    assert x.grad.device.type == "cpu" and x.grad.tolist() == [3.0, 3.0]


# ---- the table covers the registry -----------------------------------------------------------

def test_every_formula_has_a_case():
    covered = {c.name for c in CASES}
    missing = [n for n in _formulas.differentiable_ops() if n not in covered]
    assert not missing, "registered ops without a gradcheck case: %s" % missing


def test_factories_and_random_fills_are_not_differentiable():
    for n in ("zeros", "ones_like", "new_zeros", "randn", "rand_like", "normal_", "bernoulli_"):
        assert _formulas.REGISTRY[n][0] is None


@needs_engine
def test_the_engine_holds_every_formula():
    names = getattr(_C, "_formula_names", None)
    if names is None:
        pytest.skip("the engine does not list its formulas")
    assert set(_formulas.REGISTRY) <= set(names())


def test_registry_names_exist():
    """Every registered name is an op of the API (a module function, a
    Tensor method or property, or an operator slot's op name)."""
    slots = {"pos", "__getitem__", "__setitem__", "matmul_", "floor_divide_"}
    for n in _formulas.REGISTRY:
        assert hasattr(_C, n) or hasattr(_C.Tensor, n) or n in slots, n


# ---- relu's backward: torch's threshold_backward, on both paths ------------------------------

@needs_engine
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("create_graph", [False, True])
def test_relu_backward_lets_nan_through(device, create_graph):
    # 0 where the result is <= 0, the incoming gradient elsewhere, NaN included
    # (create_graph takes the Python formula, the plain backward the C one)
    x = torch.tensor([-1.5, 0.0, float("nan"), 2.0, 3.5], device=device, requires_grad=True)
    g, = torch.autograd.grad(torch.relu(x), x, torch.tensor([5.0, 6.0, 7.0, 8.0, 9.0], device=device),
                             create_graph=create_graph)
    assert g.device.type == device
    assert g.tolist() == [0.0, 0.0, 7.0, 8.0, 9.0]
