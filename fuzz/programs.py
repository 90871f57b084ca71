"""fuzz/programs.py: the program interpreter behind `make fuzz` (issue 18).

A byte string decodes into a program of 1 to 6 calls over pycuda_sem's public
API (and its private `_C` functions), with arguments drawn from the hostile
pools of values.py. The same bytes always give the same program, so an input
that libFuzzer (fuzz_api.py) or the random engine (run_random.py) saved in
fuzz/crashes/ replays anywhere (replay.py, tests/test_fuzz_regressions.py).

A program FAILS only when the interpreter dies (a signal) or SystemError is
raised, in the main thread or in a thread it started: `run()` re-raises
SystemError and swallows every other exception, which is bad input meeting
the right error.

Structure: a call is built by a generator from one of the tables below
(MAKERS: fresh tensors; VIEWS: views of a tensor; ACTIONS: everything else).
A generator reads its arguments from the bytes and returns (text, thunk): the
text is the call as Python, for the trace; the thunk makes the call. Building
first and calling after is what lets the `threads` action run one call from
several threads at once.
"""
import threading
import warnings

import numpy as np

from values import (  # noqa: F401 (the evil classes are re-exported for replays)
    BadBool, BadIndex, BadStr, Clearing, FakeArray, gen_data, gen_device, gen_dim,
    gen_dtype, gen_evil_int, gen_index, gen_int, gen_ndarray, gen_scalar, gen_shape,
    gen_small_int, heavy, shape_small,
)

from api_actions import act_autograd, act_tensor_api  # noqa: E402,F401  (act_autograd: --only)

# ---- the byte reader -----------------------------------------------------------

class Reader:
    """Hands out choices from the bytes; past the end every choice is the first."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def byte(self):
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def below(self, n):
        if n <= 256:
            return self.byte() % n
        return (self.byte() | self.byte() << 8 | self.byte() << 16) % n

    def pick(self, seq):
        return seq[self.below(len(seq))]

    def chance(self, one_in):
        return self.below(one_in) == 0


# ---- the running program ---------------------------------------------------------

class Program:
    """One decoded program: its reader, the values its calls made, its trace."""

    def __init__(self, torch, data, echo=None):
        self.torch = torch
        self.r = Reader(data)
        self.env = []          # tensors (and streams, events) the program made
        self.trace = []        # the calls, as Python
        self.echo = echo       # a file to print each call to before making it
        self.system_errors = []

    # values -------------------------------------------------------------------
    def name(self, obj):
        for i, v in enumerate(self.env):
            if v is obj:
                return "v%d" % i
        return repr(obj)

    def keep(self, value):
        if isinstance(value, (tuple, list)) and value and len(value) < 4:
            value = value[0]  # max(dim=...) and friends: keep the values
        if value is not None and not isinstance(value, (int, float, bool, str, bytes)):
            self.env.append(value)
        return value

    def tensor(self):
        """An existing tensor of this program, or a fresh one, maybe viewed."""
        T = self.torch.Tensor
        old = [v for v in self.env if isinstance(v, T)]
        t = None
        if old and self.r.below(3):
            t = self.r.pick(old)
        else:
            made = self.build(self.r.pick(MAKERS))
            t = self.call(*made) if made else None
        if not isinstance(t, T):
            t = self.call("torch.zeros(2, 3)", lambda: self.torch.zeros(2, 3))
        for _ in range(self.r.pick([0, 0, 1, 1, 2])):
            made = self.build(self.r.pick(VIEWS), t)
            v = self.call(*made) if made else None
            if isinstance(v, T):
                t = v
        return t

    def other(self):
        """A second operand: a tensor, a scalar or something hostile."""
        k = self.r.below(6)
        if k < 3:
            return self.tensor()
        if k < 5:
            return gen_scalar(self.r, self)
        return self.r.pick([None, "x", [1.0, 2.0], np.ones(2), BadIndex(), object()])

    def stream(self):
        old = [v for v in self.env if isinstance(v, self.torch.cuda.Stream)]
        if old and self.r.below(2):
            return self.r.pick(old)
        if self.r.below(2):  # without a GPU, this raises: a bad stream like the others
            return self.torch.cuda.current_stream()
        return self.r.pick([None, 0, "s", BadIndex(), self.torch.cuda.Stream])

    # calls --------------------------------------------------------------------
    def call(self, text, thunk):
        """Make one call; keep its result; only SystemError escapes."""
        text = " ".join(text.split())  # NumPy's reprs span lines
        self.trace.append(text)
        if self.echo is not None:
            print(">>> " + text, file=self.echo, flush=True)
        try:
            return self.keep(thunk())
        except SystemError:
            raise
        except Exception:
            return None

    def build(self, gen, *args):
        """(text, thunk) from a generator; None when building itself failed
        (a hostile value that broke the interpreter's own bookkeeping)."""
        try:
            return gen(self, *args)
        except SystemError:
            raise
        except Exception:
            return None

    def run(self):
        for _ in range(1 + self.r.below(6)):
            made = self.build(self.r.pick(ACTIONS))
            if made:
                self.call(*made)
        if self.system_errors:
            raise self.system_errors[0]


def reset(torch):
    """Undo what a program may have changed in process-wide state."""
    try:
        torch.set_default_dtype(torch.float32)
        torch.set_printoptions(profile="default")
        torch.set_float32_matmul_precision("highest")
        torch.manual_seed(0)
        if torch.cuda.is_available():
            torch.cuda.set_device(0)
            torch.cuda.set_stream(torch.cuda.default_stream(0))
    except Exception:
        pass


def run_program(torch, data, echo=None):
    """Decode and run `data`; returns the trace. Raises SystemError on failure."""
    warnings.simplefilter("ignore")
    p = Program(torch, data, echo)
    try:
        p.run()
    finally:
        reset(torch)
    return p.trace


def kw(**kwargs):
    """Keyword arguments as text, leaving out the ones not given."""
    return "".join(", %s=%s" % (k, v if isinstance(v, str) and v.startswith("torch.")
                                else repr(v)) for k, v in kwargs.items())


def shape_for_alloc(p):
    s = gen_shape(p.r, p)
    return shape_small(p.r, p) if heavy(s) else s


# ---- MAKERS: fresh tensors ---------------------------------------------------------

def make_factory(p):
    fn = p.r.pick(["zeros", "ones", "empty", "rand", "randn"])
    shape, dtype, dev = shape_for_alloc(p), gen_dtype(p.r, p), gen_device(p.r, p)
    star = isinstance(shape, tuple) and p.r.chance(2)
    f = getattr(p.torch, fn)
    if star:
        return ("torch.%s(*%r, dtype=%r, device=%r)" % (fn, shape, dtype, dev),
                lambda: f(*shape, dtype=dtype, device=dev))
    return ("torch.%s(%r, dtype=%r, device=%r)" % (fn, shape, dtype, dev),
            lambda: f(shape, dtype=dtype, device=dev))


def make_full(p):
    shape, v, dtype, dev = shape_for_alloc(p), gen_scalar(p.r, p), gen_dtype(p.r, p), gen_device(p.r, p)
    return ("torch.full(%r, %r, dtype=%r, device=%r)" % (shape, v, dtype, dev),
            lambda: p.torch.full(shape, v, dtype=dtype, device=dev))


def make_arange(p):
    args = [p.r.pick([0, 1, 5, 6, -3, 2.5, 0.0, 1e-300, float("nan"), float("inf"), 2**62,
                      BadIndex(), Clearing(3), None]) for _ in range(1 + p.r.below(3))]
    dtype, dev = gen_dtype(p.r, p), gen_device(p.r, p)
    if any(type(a) is int and abs(a) > 2**24 for a in args) and len(args) == 1:
        args = [6]
    return ("torch.arange(*%r, dtype=%r, device=%r)" % (args, dtype, dev),
            lambda: p.torch.arange(*args, dtype=dtype, device=dev))


def make_linspace_eye(p):
    if p.r.chance(2):
        a, b, n = gen_scalar(p.r, p), gen_scalar(p.r, p), p.r.pick([0, 1, 5, -1, 2**62, BadIndex()])
        return ("torch.linspace(%r, %r, %r)" % (a, b, n), lambda: p.torch.linspace(a, b, n))
    n, m = p.r.pick([0, 1, 3, -1, 2**31, 2**62, BadIndex()]), p.r.pick([None, 0, 2, -2, 2**62])
    if heavy((n, 1 if m is None else m)) or heavy((n, n)):
        n = 3
    return ("torch.eye(%r, %r)" % (n, m), lambda: p.torch.eye(n, m))


def make_random(p):
    k = p.r.below(3)
    if k == 0:
        lo, hi, shape = gen_scalar(p.r, p), gen_scalar(p.r, p), shape_for_alloc(p)
        dtype = gen_dtype(p.r, p)
        return ("torch.randint(%r, %r, %r, dtype=%r)" % (lo, hi, shape, dtype),
                lambda: p.torch.randint(lo, hi, shape, dtype=dtype))
    if k == 1:
        n, dev = p.r.pick([0, 1, 7, -1, 2**62, 2**31 + 1, BadIndex(), 2.0]), gen_device(p.r, p)
        n = 7 if heavy((n,)) else n
        return "torch.randperm(%r, device=%r)" % (n, dev), lambda: p.torch.randperm(n, device=dev)
    a = gen_dtype(p.r, p)
    b, c = gen_evil_int(p.r, p), p.r.pick([p.torch.default_generator, None, 0, "g"])
    return ("torch.randint(%r, %r, %r)" % (a, b, c), lambda: p.torch.randint(a, b, c))


def make_strided(p):
    size, stride = shape_for_alloc(p), gen_shape(p.r, p)
    if isinstance(stride, tuple) and heavy([abs(s) for s in stride if type(s) is int] + [2]):
        stride = (1,)
    return ("torch.empty_strided(%r, %r)" % (size, stride),
            lambda: p.torch.empty_strided(size, stride))


def make_tensor_data(p):
    fn = p.r.pick(["tensor", "tensor", "as_tensor"])
    data, dtype, dev = gen_data(p.r, p), gen_dtype(p.r, p), gen_device(p.r, p)
    if p.r.chance(2):
        return "torch.%s(%r)" % (fn, data), lambda: getattr(p.torch, fn)(data)
    return ("torch.%s(%r, dtype=%r, device=%r)" % (fn, data, dtype, dev),
            lambda: getattr(p.torch, fn)(data, dtype=dtype, device=dev))


def make_from_numpy(p):
    a = gen_ndarray(p.r, p) if p.r.below(4) else gen_data(p.r, p)
    return "torch.from_numpy(%r)" % (a,), lambda: p.torch.from_numpy(a)


def make_like(p):
    t = p.tensor()
    fn = p.r.pick(["empty_like", "zeros_like", "ones_like", "rand_like", "randn_like"])
    dtype, dev = gen_dtype(p.r, p), gen_device(p.r, p)
    return ("torch.%s(%s, dtype=%r, device=%r)" % (fn, p.name(t), dtype, dev),
            lambda: getattr(p.torch, fn)(t, dtype=dtype, device=dev))


def make_new(p):
    t = p.tensor()
    fn = p.r.pick(["new_empty", "new_zeros", "new_ones", "new_tensor", "new_full", "new"])
    arg = gen_data(p.r, p) if fn in ("new_tensor", "new") else shape_for_alloc(p)
    if fn == "new_full":
        v = gen_scalar(p.r, p)
        return ("%s.new_full(%r, %r)" % (p.name(t), arg, v), lambda: t.new_full(arg, v))
    return "%s.%s(%r)" % (p.name(t), fn, arg), lambda: getattr(t, fn)(arg)


def make_legacy(p):
    cls = p.r.pick(["FloatTensor", "LongTensor", "BoolTensor", "HalfTensor", "ByteTensor"])
    arg = p.r.pick([shape_for_alloc(p), gen_data(p.r, p)])
    star = isinstance(arg, tuple) and p.r.chance(2)
    f = getattr(p.torch, cls)
    if star:
        return "torch.%s(*%r)" % (cls, arg), lambda: f(*arg)
    return "torch.%s(%r)" % (cls, arg), lambda: f(arg)


MAKERS = [make_factory, make_factory, make_full, make_arange, make_linspace_eye, make_random,
          make_strided, make_tensor_data, make_tensor_data, make_from_numpy, make_like,
          make_new, make_legacy]


# ---- VIEWS: views of a tensor ---------------------------------------------------------

def _method(name, *gens):
    """A view or op `t.name(*args)` whose arguments come from `gens`."""
    def gen(p, t):
        args = [g(p.r, p) for g in gens]
        if len(args) == 1 and isinstance(args[0], (tuple, list)) and p.r.chance(2):
            a = tuple(args[0]) if isinstance(args[0], tuple) else args[0]
            if isinstance(a, tuple):  # t.view(2, 3) as well as t.view((2, 3))
                return ("%s.%s(*%r)" % (p.name(t), name, a), lambda: getattr(t, name)(*a))
        return ("%s.%s(%s)" % (p.name(t), name, ", ".join(map(repr, args))),
                lambda: getattr(t, name)(*args))
    gen.__name__ = "view_" + name
    return gen


def _attr(name):
    def gen(p, t):
        return "%s.%s" % (p.name(t), name), lambda: getattr(t, name)
    gen.__name__ = "attr_" + name
    return gen


def gen_dims(r, p):
    return r.pick([(1, 0), (0,), (0, 1, 2), (0, 0), (2, 1, 0), (-1, 0), (17,), (),
                   tuple(range(17)), [1, BadIndex()], p.torch.Size([0])])


def view_getitem(p, t):
    idx = gen_index(p.r, p)
    return "%s[%r]" % (p.name(t), idx), lambda: t[idx]


def view_as_strided(p, t):
    size, stride = gen_shape(p.r, p), gen_shape(p.r, p)
    off = p.r.pick([None, 0, 1, -1, 2**62, 100])
    return ("%s.as_strided(%r, %r, %r)" % (p.name(t), size, stride, off),
            lambda: t.as_strided(size, stride, off))


def view_like(p, t):
    other = p.tensor()
    fn = p.r.pick(["expand_as", "view_as", "reshape_as", "type_as"])
    return "%s.%s(%s)" % (p.name(t), fn, p.name(other)), lambda: getattr(t, fn)(other)


def gen_format(r, p):
    return r.pick([p.torch.channels_last, p.torch.contiguous_format, p.torch.preserve_format,
                   p.torch.channels_last_3d, None, "channels_last", 4, p.torch.float32, BadIndex()])


def view_format(p, t):
    """A copy in a memory format (or something that is not one)."""
    fmt = gen_format(p.r, p)
    fn = p.r.pick(["contiguous", "clone", "to", "half", "cpu", "empty_like", "zeros_like", "rand_like"])
    if fn.endswith("_like"):
        return ("torch.%s(%s, memory_format=%r)" % (fn, p.name(t), fmt),
                lambda: getattr(p.torch, fn)(t, memory_format=fmt))
    return ("%s.%s(memory_format=%r)" % (p.name(t), fn, fmt),
            lambda: getattr(t, fn)(memory_format=fmt))


def view_unbind(p, t):
    d, k = gen_dim(p.r, p), p.r.pick([0, 1, -1])
    return "%s.unbind(%r)[%r]" % (p.name(t), d, k), lambda: t.unbind(d)[k]


VIEWS = [_method("reshape", gen_shape), _method("view", gen_shape), _method("expand", gen_shape),
         _method("view", gen_dtype), _method("permute", gen_dims), _method("t"), _attr("T"),
         _attr("mT"), _method("transpose", gen_dim, gen_dim), _method("swapaxes", gen_dim, gen_dim),
         _method("unsqueeze", gen_dim), _method("squeeze"), _method("squeeze", gen_dim),
         view_getitem, view_getitem, view_getitem, _method("narrow", gen_dim, gen_int, gen_int),
         _method("narrow", gen_dim, gen_small_int, gen_small_int), _method("select", gen_dim, gen_int),
         view_as_strided, _attr("real"), _attr("imag"), _method("flatten", gen_dim, gen_dim),
         view_unbind, view_like, _method("contiguous"), _method("clone"), _method("detach"),
         _attr("data"), _method("to", gen_dtype), _method("type", gen_dtype), view_format]


# ---- ACTIONS: everything a program does -------------------------------------------------

UNARY = ["abs", "neg", "exp", "sqrt", "sin", "sigmoid", "relu", "bitwise_not", "logical_not",
         "isnan", "sign", "round", "reciprocal", "frac", "trunc", "gelu", "square", "nan_to_num",
         "log1p", "isfinite", "ceil", "rsqrt", "tanh", "abs_", "neg_", "sqrt_", "zero_",
         "bitwise_not_", "round_", "relu_", "clone", "contiguous", "float", "half", "bool",
         "long", "cfloat", "bfloat16", "cpu"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "lt", "ne", "remainder",
          "floor_divide", "bitwise_and", "bitwise_xor", "bitwise_left_shift", "atan2",
          "logical_and", "true_divide", "add_", "mul_", "div_", "sub_", "pow_", "remainder_",
          "bitwise_or_", "maximum_", "copy_", "lerp", "dot", "mm", "matmul", "mv", "bmm"]
REDUCE = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any",
          "std", "var", "norm", "logsumexp", "cumsum", "cumprod"]


def act_view(p):
    t = p.tensor()
    return p.r.pick(VIEWS)(p, t)


def act_unary(p):
    t, op = p.tensor(), p.r.pick(UNARY)
    if p.r.chance(4):
        return "torch.%s(%s)" % (op, p.name(t)), lambda: getattr(p.torch, op.rstrip("_"))(t)
    return "%s.%s()" % (p.name(t), op), lambda: getattr(t, op)()


def act_binary(p):
    t, op, o = p.tensor(), p.r.pick(BINARY), p.other()
    extra = p.r.pick([{}, {}, {"alpha": gen_scalar(p.r, p)},
                      {"rounding_mode": p.r.pick(["floor", "trunc", None, "x", 3])}])
    if op in ("add", "sub", "div") and extra and p.r.chance(2):
        f = getattr(p.torch, op)
        return ("torch.%s(%s, %s%s)" % (op, p.name(t), p.name(o), kw(**extra)),
                lambda: f(t, o, **extra))
    if op == "lerp":
        w = p.other()
        return "%s.lerp(%s, %s)" % (p.name(t), p.name(o), p.name(w)), lambda: t.lerp(o, w)
    return "%s.%s(%s)" % (p.name(t), op, p.name(o)), lambda: getattr(t, op)(o)


def act_ternary(p):
    a, b, c = p.tensor(), p.other(), p.other()
    k = p.r.below(4)
    if k == 0:
        return ("torch.where(%s, %s, %s)" % (p.name(a), p.name(b), p.name(c)),
                lambda: p.torch.where(a, b, c))
    if k == 1:
        return ("torch.clamp(%s, %s, %s)" % (p.name(a), p.name(b), p.name(c)),
                lambda: p.torch.clamp(a, b, c))
    fn = p.r.pick(["addmm", "baddbmm"])
    return ("torch.%s(%s, %s, %s)" % (fn, p.name(a), p.name(b), p.name(c)),
            lambda: getattr(p.torch, fn)(a, b, c))


def act_reduce(p):
    t, op = p.tensor(), p.r.pick(REDUCE)
    kwargs = {}
    if p.r.below(3):
        kwargs["dim"] = p.r.pick([gen_dim(p.r, p), gen_dims(p.r, p)])
    if p.r.chance(3):
        kwargs["keepdim"] = p.r.pick([True, False, BadBool(), None, 2])
    if p.r.chance(4):
        kwargs["dtype"] = gen_dtype(p.r, p)
    f = getattr(t, op)
    return "%s.%s(%s)" % (p.name(t), op, kw(**kwargs)[2:]), lambda: f(**kwargs)


def act_setitem(p):
    t, idx = p.tensor(), gen_index(p.r, p)
    v = p.r.pick([p.other(), gen_data(p.r, p), [[1]], 1.5])
    def setitem():
        t[idx] = v
    return "%s[%r] = %s" % (p.name(t), idx, p.name(v)), setitem


def act_copy(p):
    t = p.tensor()
    k = p.r.below(5)
    if k == 0:
        src, nb = p.other(), p.r.pick([False, True, BadBool()])
        return ("%s.copy_(%s, non_blocking=%r)" % (p.name(t), p.name(src), nb),
                lambda: t.copy_(src, non_blocking=nb))
    if k == 1:
        dev, dtype, nb = gen_device(p.r, p), gen_dtype(p.r, p), p.r.pick([False, True])
        return ("%s.to(%r, %r, non_blocking=%r)" % (p.name(t), dev, dtype, nb),
                lambda: t.to(dev, dtype, non_blocking=nb))
    if k == 2:
        v = gen_scalar(p.r, p)
        return "%s.fill_(%r)" % (p.name(t), v), lambda: t.fill_(v)
    if k == 3:
        dev = gen_device(p.r, p)
        return "%s.cuda(%r)" % (p.name(t), dev), lambda: t.cuda(dev)
    return "%s.pin_memory()" % p.name(t), lambda: t.pin_memory()


CONVERSIONS = {
    "numpy": lambda t: t.numpy(), "tolist": lambda t: t.tolist(), "item": lambda t: t.item(),
    "bool": bool, "int": int, "float": float, "complex": complex, "len": len, "list": list,
    "np.asarray": np.asarray, "data_ptr": lambda t: t.data_ptr(),
    "storage": lambda t: t.untyped_storage().nbytes(), "index": lambda t: [0, 1, 2][t],
    "hash_stride": lambda t: (t.stride(), t.size(), t.storage_offset(), t.is_contiguous()),
    "array_interface": lambda t: getattr(t, "__array_interface__", None),
    "dlpack": lambda t: t.__dlpack__() if hasattr(t, "__dlpack__") else None,
}


def act_convert(p):
    t, name = p.tensor(), p.r.pick(sorted(CONVERSIONS))
    f = CONVERSIONS[name]
    return "%s(%s)" % (name, p.name(t)), lambda: f(t)


def act_print(p):
    t = p.tensor()
    k = p.r.below(5)
    if k == 0:
        return "repr(%s)" % p.name(t), lambda: repr(t)
    if k == 1:
        return "str(%s)" % p.name(t), lambda: str(t)
    if k == 2:
        spec = p.r.pick(["", ".2f", "x", "10", p.torch, None, 3, BadStr("x"), "%"])
        return "%s.__format__(%r)" % (p.name(t), spec), lambda: t.__format__(spec)
    opts = p.r.pick([{"precision": p.r.pick([-1, 0, 2**62, BadIndex(), None])},
                     {"threshold": p.r.pick([0, -1, float("inf"), float("nan"), "x"])},
                     {"edgeitems": p.r.pick([0, -1, 2**62])}, {"linewidth": p.r.pick([0, -5, 2**62])},
                     {"sci_mode": p.r.pick([True, False, None, "x"])}, {"profile": "full"}])
    def printed():
        p.torch.set_printoptions(**opts)
        return repr(t)
    return "torch.set_printoptions(%s); repr(%s)" % (kw(**opts)[2:], p.name(t)), printed


FFTS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
        "fftn", "ifftn", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftshift", "ifftshift"]


def act_fft(p):
    t, fn = p.tensor(), p.r.pick(FFTS)
    kwargs = {}
    if fn.endswith("shift"):
        if p.r.below(3):
            kwargs["dim"] = p.r.pick([gen_dim(p.r, p), gen_dims(p.r, p), put_in_list(p)])
    else:
        if p.r.chance(2):
            key = "n" if fn[-1] == "t" else "s"
            kwargs[key] = p.r.pick([gen_small_int(p.r, p), gen_int(p.r, p), gen_shape(p.r, p)])
        if p.r.chance(2):
            kwargs["dim"] = p.r.pick([gen_dim(p.r, p), gen_dims(p.r, p)])
        if p.r.chance(3):
            kwargs["norm"] = p.r.pick(["ortho", "forward", "backward", None, "x", 3])
    f = getattr(p.torch.fft, fn)
    return "torch.fft.%s(%s%s)" % (fn, p.name(t), kw(**kwargs)), lambda: f(t, **kwargs)


def put_in_list(p):
    from values import put_in
    return put_in([0, 1], Clearing(0))


def act_fftfreq(p):
    fn = p.r.pick(["fftfreq", "rfftfreq"])
    n, d = p.r.pick([0, 1, 8, -1, 2**62, BadIndex(), 2.5]), gen_scalar(p.r, p)
    n = 8 if heavy((n,)) else n
    return "torch.fft.%s(%r, %r)" % (fn, n, d), lambda: getattr(p.torch.fft, fn)(n, d)


# Private functions a user can still call; not the ones that fault or sleep on purpose.
PRIVATE_SKIP = {"_fault", "_sleep", "_launch_loop", "_memset_async"}


def act_private(p):
    names = sorted(n for n in dir(p.torch._C) if n.startswith("_") and not n.startswith("__")
                   and n not in PRIVATE_SKIP and callable(getattr(p.torch._C, n)))
    name = p.r.pick(names)
    gens = [lambda: p.tensor(), lambda: gen_shape(p.r, p), lambda: gen_int(p.r, p),
            lambda: gen_evil_int(p.r, p), lambda: gen_dtype(p.r, p), lambda: gen_device(p.r, p),
            lambda: gen_dims(p.r, p), lambda: gen_scalar(p.r, p)]
    args = [p.r.pick(gens)() for _ in range(p.r.below(5))]
    f = getattr(p.torch._C, name)
    return ("torch._C.%s(%s)" % (name, ", ".join(p.name(a) for a in args)), lambda: f(*args))


def act_state(p):
    k = p.r.below(6)
    if k == 0:
        d = gen_dtype(p.r, p)
        return "torch.set_default_dtype(%r)" % (d,), lambda: p.torch.set_default_dtype(d)
    if k == 1:
        s = p.r.pick([0, -1, 2**64, 2**63, -2**63 - 1, BadIndex(), 1.5, "1", None])
        return "torch.manual_seed(%r)" % (s,), lambda: p.torch.manual_seed(s)
    if k == 2:
        st = p.r.pick([p.tensor(), None, b"xx", np.zeros(16, dtype=np.uint8)])
        return "torch.set_rng_state(%s)" % p.name(st), lambda: p.torch.set_rng_state(st)
    if k == 3:
        m = p.r.pick(["highest", "high", "medium", "x", None, 3])
        return ("torch.set_float32_matmul_precision(%r)" % (m,),
                lambda: p.torch.set_float32_matmul_precision(m))
    if k == 4:
        a, b = gen_dtype(p.r, p), gen_dtype(p.r, p)
        return "torch.promote_types(%r, %r)" % (a, b), lambda: p.torch.promote_types(a, b)
    dev = gen_device(p.r, p)
    return "torch.Generator(%r).manual_seed(5)" % (dev,), lambda: p.torch.Generator(dev).manual_seed(5)


class _HostileGenerator:
    """generator= whose default-generator mark raises on lookup."""

    @property
    def _pcs_default_generator(self):
        raise RuntimeError("hostile generator")


def act_random_inplace(p):
    t = p.tensor()
    fn = p.r.pick(["uniform_", "normal_", "bernoulli_", "random_", "exponential_"])
    args = [gen_scalar(p.r, p) for _ in range(p.r.below(3))]
    gen = p.r.pick([None, None, p.torch.default_generator, "g", 0, p.torch.Generator(), _HostileGenerator()])
    return ("%s.%s(%s, generator=%r)" % (p.name(t), fn, ", ".join(map(repr, args)), gen),
            lambda: getattr(t, fn)(*args, generator=gen))


def act_cuda(p):
    """torch.cuda's device, memory, stream and event functions, often with bad devices."""
    c, r, dev = p.torch.cuda, p.r, gen_device(p.r, p)
    table = [  # (name, builder of the thunk: arguments are drawn now, not in the call)
        ("set_device", lambda: lambda: c.set_device(dev)),
        ("synchronize", lambda: lambda: c.synchronize(dev)),
        ("get_device_name", lambda: lambda: c.get_device_name(dev)),
        ("get_device_properties", lambda: lambda: c.get_device_properties(dev)),
        ("get_device_capability", lambda: lambda: c.get_device_capability(dev)),
        ("memory_allocated", lambda: lambda: c.memory_allocated(dev)),
        ("memory_stats", lambda: lambda: c.memory_stats(dev)),
        ("mem_get_info", lambda: lambda: c.mem_get_info(dev)),
        ("memory_snapshot", lambda: lambda: c.memory_snapshot()),
        ("empty_cache", lambda: lambda: c.empty_cache()),
        ("reset_peak_memory_stats", lambda: lambda: c.reset_peak_memory_stats(dev)),
        ("memory_summary", lambda: lambda: c.memory_summary(dev)),
        ("set_per_process_memory_fraction", lambda: _bind(
            c.set_per_process_memory_fraction, r.pick([0.5, -1.0, 2.0, float("nan"), "x"]), dev)),
        ("can_device_access_peer", lambda: _bind(c.can_device_access_peer, dev, gen_device(r, p))),
        ("default_stream", lambda: lambda: c.default_stream(dev)),
        ("current_stream", lambda: lambda: c.current_stream(dev)),
        ("Stream", lambda: _bind(c.Stream, device=dev,
                                 priority=r.pick([0, -1, 1, -2**63, BadIndex()]))),
        ("Event", lambda: _bind(c.Event, enable_timing=r.pick([True, False]),
                                blocking=r.pick([True, False]), interprocess=r.pick([False, True]))),
        ("set_stream", lambda: _bind(c.set_stream, p.stream())),
        ("device ctx", lambda: lambda: _enter_exit(c.device(dev))),
        ("stream ctx", lambda: _bind(lambda s: _enter_exit(c.stream(s)), p.stream())),
        ("get_rng_state", lambda: lambda: c.get_rng_state(dev)),
        ("manual_seed_all", lambda: _bind(c.manual_seed_all, gen_scalar(r, p))),
        ("device_of", lambda: _bind(lambda t: _enter_exit(c.device_of(t)), p.tensor())),
    ]
    name, build = r.pick(table)
    return "torch.cuda.%s(%r)" % (name, dev), build()


def _bind(f, *args, **kwargs):
    return lambda: f(*args, **kwargs)


def _enter_exit(ctx):
    with ctx:
        return None


def act_stream_event(p):
    """Streams and events used across devices and after the device changed."""
    c, r = p.torch.cuda, p.r
    s, e = p.stream(), r.pick([v for v in p.env if isinstance(v, c.Event)] or [None])
    table = [
        ("ev.record(s)", lambda: lambda: (e or c.Event()).record(s)),
        ("s.wait_event(ev)", lambda: lambda: s.wait_event(e)),
        ("s.wait_stream(s2)", lambda: _bind(lambda s2: s.wait_stream(s2), p.stream())),
        ("ev.synchronize()", lambda: lambda: e.synchronize()),
        ("ev.query()", lambda: lambda: e.query()),
        ("ev.elapsed_time(ev2)", lambda: lambda: e.elapsed_time(c.Event(enable_timing=True))),
        ("s.synchronize()", lambda: lambda: s.synchronize()),
        ("s.query()", lambda: lambda: s.query()),
        ("s.record_event(ev)", lambda: lambda: s.record_event(e)),
        ("t.record_stream(s)", lambda: _bind(lambda t: t.record_stream(s), p.tensor())),
        ("set_device then use s", lambda: _bind(
            lambda d: (c.set_device(d), s.synchronize()), gen_device(r, p))),
        ("ev.ipc_handle()", lambda: lambda: e.ipc_handle()),
    ]
    name, build = r.pick(table)
    return "%s  # s=%s ev=%s" % (name, p.name(s), p.name(e)), build()


def act_cross_device(p):
    t = p.tensor()
    dst = p.r.pick(["cuda", "cpu", "cuda:1", "cuda:0"])
    other = p.tensor()
    k = p.r.below(3)
    if k == 0:
        return ("%s.to(%r, non_blocking=True)" % (p.name(t), dst),
                lambda: t.to(dst, non_blocking=True))
    if k == 1:
        return ("%s.copy_(%s, non_blocking=True)" % (p.name(t), p.name(other)),
                lambda: t.copy_(other, non_blocking=True))
    return "%s + %s" % (p.name(t), p.name(other)), lambda: t + other


def act_threads(p):
    """One call made from 2 to 4 threads at once (the GIL is released inside)."""
    inner = p.r.pick([a for a in ACTIONS if a is not act_threads])
    text, thunk = inner(p)  # a failure to build is the caller's (Program.build)
    n = p.r.pick([2, 3, 4])
    barrier = threading.Barrier(n)

    def body():
        try:
            barrier.wait(timeout=10)
            for _ in range(8):
                thunk()
        except SystemError as e:
            p.system_errors.append(e)
        except BaseException:
            pass

    def threads():
        ts = [threading.Thread(target=body) for _ in range(n)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
    return "in %d threads: %s" % (n, text), threads


# The second slot was a second act_view before the tensor-API ops came; taking
# it (rather than growing the list) keeps every other saved input decoding to
# the program it was found with.
ACTIONS = [act_view, act_tensor_api, act_unary, act_binary, act_binary, act_ternary, act_reduce,
           act_reduce, act_setitem, act_copy, act_convert, act_print, act_fft, act_fftfreq,
           act_private, act_state, act_random_inplace, act_cuda, act_stream_event,
           act_cross_device, act_threads]
