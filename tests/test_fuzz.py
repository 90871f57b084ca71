"""Differential fuzzing: seeded random programs (shapes with broadcasting and
0-size dims, dtypes, views - transpose, strided slices, expand - and chains
of binary, unary and reduction ops).

* pycuda_sem's CPU path against NumPy in float64 / int64 (short run in CI,
  PYCUDA_SEM_FUZZ_CPU_N programs, default 300);
* pycuda_sem's CUDA path against its CPU path (marked cuda,
  PYCUDA_SEM_FUZZ_N programs, default 1000); dtypes and shapes must agree
  exactly, values within the tolerances below.

Tolerances: integer results exact. Float results: |got - ref| <= atol +
rtol * |ref| with rtol = 1e-4 (float32 chains; 1e-10 for float64 against
NumPy) and atol = rtol * (1 + max|ref|) to absorb cancellation in sums. NaN
must match NaN (mean over an empty dimension). A failing program is
reported with its seed: ``_program(seed)`` regenerates it."""
import os

import numpy as np
import pytest

import pycuda_sem as torch

CPU_N = int(os.environ.get("PYCUDA_SEM_FUZZ_CPU_N", "300"))
GPU_N = int(os.environ.get("PYCUDA_SEM_FUZZ_N", "1000"))
BASE_SEED = int(os.environ.get("PYCUDA_SEM_FUZZ_SEED", "20261121"))

DTYPES = [("float32", torch.float32), ("float64", torch.float64),
          ("int64", torch.int64), ("int32", torch.int32)]
DIMS = [0, 1, 1, 2, 3, 5]


def _is_float(name):
    return name.startswith("float")


def _rand_shape(rng, ndim):
    return tuple(int(rng.choice(DIMS)) for _ in range(ndim))


def _bcast_shape(rng, shape):
    """A shape that broadcasts to `shape`: some dims set to 1, some leading dims dropped."""
    s = [1 if rng.random() < 0.3 else d for d in shape]
    drop = int(rng.integers(0, len(s) + 1)) if rng.random() < 0.3 else 0
    return tuple(s[drop:])


def _data(rng, shape, dname):
    if _is_float(dname):
        return rng.standard_normal(shape)
    return rng.integers(-5, 6, size=shape)


def _program(seed):
    """A program: a starting operand and a list of steps. Operands are
    (numpy data, dtype name, view recipe) so both backends build the same values."""
    rng = np.random.default_rng(seed)
    dname = DTYPES[int(rng.integers(0, len(DTYPES)))][0]
    ndim = int(rng.integers(0, 4))
    shape = _rand_shape(rng, ndim)
    start = _operand(rng, shape, dname)
    steps = []
    cur_shape = shape
    cur_float = _is_float(dname)
    for _ in range(int(rng.integers(1, 6))):
        kind = rng.choice(["binary", "binary", "unary", "reduce", "view"])
        if kind == "binary":
            op = str(rng.choice(["add", "sub", "mul", "maximum", "minimum"] +
                                (["div"] if cur_float else [])))
            if rng.random() < 0.25:
                other = ("scalar", float(rng.integers(-3, 4)) + (0.5 if cur_float else 0.0))
            else:
                oshape = _bcast_shape(rng, cur_shape)
                # same dtype class as the current value (keeps int chains integral)
                od = str(rng.choice(["float32", "float64"] if cur_float else ["int64", "int32"]))
                other = ("tensor", _operand(rng, oshape, od))
            if op == "mul" and not cur_float:
                op = "add"  # keep integer values small: no overflow in chains
            steps.append(("binary", op, other))
        elif kind == "unary":
            ops = ["neg", "abs"] + (["tanh", "sin", "sqrtabs", "exptanh"] if cur_float else [])
            steps.append(("unary", str(rng.choice(ops))))
        elif kind == "reduce":
            if len(cur_shape) == 0 or rng.random() < 0.2:
                if 0 in cur_shape:
                    op = "sum"
                else:
                    op = str(rng.choice(["sum", "amax", "amin"] + (["mean"] if cur_float else [])))
                steps.append(("reduce", op, None, False))
                cur_shape = ()
            else:
                dim = int(rng.integers(-len(cur_shape), len(cur_shape)))
                keep = bool(rng.random() < 0.5)
                ops = ["sum"] + (["mean"] if cur_float else [])
                if cur_shape[dim] != 0:
                    ops += ["amax", "amin"]
                op = str(rng.choice(ops))
                steps.append(("reduce", op, dim, keep))
                s = list(cur_shape)
                if keep:
                    s[dim] = 1
                else:
                    del s[dim]
                cur_shape = tuple(s)
        else:
            if len(cur_shape) >= 2 and rng.random() < 0.5:
                a, b = rng.choice(len(cur_shape), 2, replace=False)
                steps.append(("view", "transpose", (int(a), int(b))))
                s = list(cur_shape)
                s[a], s[b] = s[b], s[a]
                cur_shape = tuple(s)
            elif len(cur_shape) >= 1 and rng.random() < 0.5:
                dim = int(rng.integers(0, len(cur_shape)))
                start_i = int(rng.integers(0, 2))
                steps.append(("view", "slice", (dim, start_i)))
                s = list(cur_shape)
                s[dim] = len(range(start_i, s[dim], 2))
                cur_shape = tuple(s)
            else:
                n = int(rng.choice([0, 1, 3]))
                steps.append(("view", "expand", n))
                cur_shape = (n,) + cur_shape
    return start, steps


def _operand(rng, shape, dname):
    """Data plus a view recipe: 'plain', 'transposed' (built transposed, then
    .t() / .transpose back), 'strided' (every other element of a larger
    array), or 'expanded' (size-1 dims expanded)."""
    recipe = str(rng.choice(["plain", "plain", "transposed", "strided", "expanded"]))
    if recipe == "transposed" and len(shape) < 2:
        recipe = "plain"
    if recipe == "expanded":
        base = tuple(1 if rng.random() < 0.5 else d for d in shape)
        return (_data(rng, base, dname), dname, ("expanded", shape))
    if recipe == "strided":
        if len(shape) == 0:
            return (_data(rng, shape, dname), dname, ("plain",))
        big = list(shape)
        big[-1] = 2 * big[-1]
        return (_data(rng, tuple(big), dname), dname, ("strided",))
    if recipe == "transposed":
        t = list(shape)
        t[0], t[-1] = t[-1], t[0]
        return (_data(rng, tuple(t), dname), dname, ("transposed",))
    return (_data(rng, shape, dname), dname, ("plain",))


# ---- backends

class _NP:
    """Reference: NumPy in float64 (or int64 for integer programs)."""

    @staticmethod
    def make(operand):
        data, dname, recipe = operand
        a = data.astype(np.float64 if _is_float(dname) else np.int64)
        return _NP.view_of(a, recipe)

    @staticmethod
    def view_of(a, recipe):
        if recipe[0] == "expanded":
            return np.broadcast_to(a, recipe[1])
        if recipe[0] == "strided":
            return a[..., ::2]
        if recipe[0] == "transposed":
            return np.swapaxes(a, 0, -1)
        return a

    binary = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
              "maximum": np.maximum, "minimum": np.minimum,
              "div": lambda x, y: np.divide(x, np.abs(y) + 1)}
    unary = {"neg": np.negative, "abs": np.abs, "tanh": np.tanh, "sin": np.sin,
             "sqrtabs": lambda x: np.sqrt(np.abs(x)), "exptanh": lambda x: np.exp(np.tanh(x))}

    @staticmethod
    def scalar(v):
        return v

    @staticmethod
    def reduce(x, op, dim, keep):
        f = {"sum": np.sum, "amax": np.max, "amin": np.min, "mean": np.mean}[op]
        if dim is None:
            return np.asarray(f(x))
        with np.errstate(all="ignore"):
            return f(x, axis=dim, keepdims=keep)

    @staticmethod
    def view(x, kind, arg):
        if kind == "transpose":
            return np.swapaxes(x, *arg)
        if kind == "slice":
            dim, s = arg
            idx = [slice(None)] * x.ndim
            idx[dim] = slice(s, None, 2)
            return x[tuple(idx)]
        return np.broadcast_to(x, (arg,) + x.shape)

    @staticmethod
    def result(x):
        return np.asarray(x)


class _PCS:
    def __init__(self, device):
        self.device = device

    def make(self, operand):
        data, dname, recipe = operand
        dt = dict(DTYPES)[dname]
        t = torch.tensor(data.tolist() if data.ndim else data.item(), dtype=dt)
        if data.size == 0:
            t = torch.zeros(data.shape, dtype=dt)
        if self.device != "cpu":
            t = t.to(self.device)
        if recipe[0] == "expanded":
            return t.expand(*recipe[1])
        if recipe[0] == "strided":
            return t[..., ::2]
        if recipe[0] == "transposed":
            return t.transpose(0, -1)
        return t

    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
              "maximum": lambda x, y: torch.maximum(x, y) if torch.is_tensor(y)
              else torch.clamp(x, min=y),
              "minimum": lambda x, y: torch.minimum(x, y) if torch.is_tensor(y)
              else torch.clamp(x, max=y),
              "div": lambda x, y: x / (y.abs() + 1) if torch.is_tensor(y) else x / (abs(y) + 1)}
    unary = {"neg": torch.neg, "abs": torch.abs, "tanh": torch.tanh, "sin": torch.sin,
             "sqrtabs": lambda x: x.abs().sqrt(), "exptanh": lambda x: x.tanh().exp()}

    def reduce(self, x, op, dim, keep):
        if dim is None:
            return getattr(x, op)()
        return getattr(x, op)(dim, keepdim=keep)

    def view(self, x, kind, arg):
        if kind == "transpose":
            return x.transpose(*arg)
        if kind == "slice":
            dim, s = arg
            idx = [slice(None)] * x.dim()
            idx[dim] = slice(s, None, 2)
            return x[tuple(idx)]
        return x.expand(arg, *x.shape)

    def result(self, x):
        return x


def _run(backend, prog):
    start, steps = prog
    x = backend.make(start)
    for st in steps:
        if st[0] == "binary":
            other = st[2]
            y = other[1] if other[0] == "scalar" else backend.make(other[1])
            with np.errstate(all="ignore"):
                x = backend.binary[st[1]](x, y)
        elif st[0] == "unary":
            with np.errstate(all="ignore"):
                x = backend.unary[st[1]](x)
        elif st[0] == "reduce":
            x = backend.reduce(x, st[1], st[2], st[3])
        else:
            x = backend.view(x, st[1], st[2])
    return backend.result(x)


def _close(got, ref, rtol, where):
    assert got.shape == ref.shape, (where, got.shape, ref.shape)
    if got.dtype.kind in "iub" and ref.dtype.kind in "iub":
        np.testing.assert_array_equal(got, ref, err_msg=where)
        return
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    scale = float(np.nanmax(np.abs(ref))) if ref.size and not np.all(np.isnan(ref)) else 0.0
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * (1 + scale), equal_nan=True,
                               err_msg=where)


def _seeds(n, salt):
    return [BASE_SEED + salt + i for i in range(n)]


def _all_double(prog):
    """Whether every operand is float64 (else some value passed through
    float32 and float32 tolerances apply)."""
    start, steps = prog
    ops = [start] + [st[2][1] for st in steps if st[0] == "binary" and st[2][0] == "tensor"]
    return all(o[1] == "float64" for o in ops)


def _cpu_vs_numpy(seeds):
    bad = []
    for seed in seeds:
        prog = _program(seed)
        try:
            ref = _run(_NP, prog)
            got = _run(_PCS("cpu"), prog)
            g = got.numpy()
            rtol = 1e-10 if _all_double(prog) else 1e-4
            _close(g, ref, rtol, "seed %d" % seed)
        except Exception as e:  # noqa: BLE001 - collected, reported below
            bad.append((seed, repr(e)[:300]))
    return bad


def test_fuzz_cpu_against_numpy():
    bad = _cpu_vs_numpy(_seeds(CPU_N, 0))
    assert not bad, "%d of %d programs mismatched: %s" % (len(bad), CPU_N, bad[:5])


@pytest.mark.cuda
def test_fuzz_cuda_against_cpu():
    bad = []
    for seed in _seeds(GPU_N, 10_000_000):
        prog = _program(seed)
        try:
            cpu = _run(_PCS("cpu"), prog)
            gpu = _run(_PCS("cuda"), prog)
            assert gpu.is_cuda and gpu.dtype == cpu.dtype, (gpu.device, gpu.dtype, cpu.dtype)
            rtol = 1e-9 if _all_double(prog) else 1e-4
            _close(gpu.cpu().numpy(), cpu.numpy(), rtol, "seed %d" % seed)
        except Exception as e:  # noqa: BLE001
            bad.append((seed, repr(e)[:300]))
    assert not bad, "%d of %d programs mismatched: %s" % (len(bad), GPU_N, bad[:5])


def test_program_generator_covers_features():
    """The generator reaches every feature: 0-size dims, broadcasting,
    each view kind and each step kind."""
    seen = set()
    for seed in _seeds(300, 0):
        start, steps = _program(seed)
        seen.add(start[2][0])
        if 0 in start[0].shape:
            seen.add("zero-size")
        for st in steps:
            seen.add(st[0])
            if st[0] == "view":
                seen.add(st[1])
            if st[0] == "binary" and st[2][0] == "tensor":
                seen.add(st[2][1][2][0])
    for f in ["plain", "transposed", "strided", "expanded", "zero-size", "binary", "unary",
              "reduce", "view", "transpose", "slice", "expand"]:
        assert f in seen, f
