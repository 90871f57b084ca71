"""fuzz/values.py: the hostile values the program interpreter (programs.py)
draws its arguments from.

Each pool is a table of small generators `gen(r, p) -> value`, where `r` is the
byte reader and `p` the running program (for tensors it has made and for the
torch module). Values that are objects carry a `__repr__` that reads as the
Python that makes them, so a crash's trace is close to a reproducer.

What is hostile here (issue 18): odd shapes (0-size, more dims than
PCS_MAX_DIMS = 16, 2**62, 2**63-1, negatives), every dtype, wrong types, objects
whose __index__/__float__/__len__ raise or clear the list that holds them,
fake __array_interface__ objects, None. A fake array interface never lies
about memory it points at (that would crash NumPy too): a well-formed one
stays inside its own buffer; everything else in it is malformed on purpose.
"""
import numpy as np

MAX_DIMS = 16  # PCS_MAX_DIMS in csrc/kernels/kernels.h


# ---- evil objects ------------------------------------------------------------

class BadIndex:
    """__index__, __int__ and __float__ raise."""
    def __index__(self):
        raise ValueError("BadIndex.__index__")
    __int__ = __index__

    def __float__(self):
        raise ValueError("BadIndex.__float__")

    def __repr__(self):
        return "BadIndex()"


class Clearing:
    """Clears the list (or dict) it was put in the first time Python asks it
    for a number, then answers: C code holding a borrowed item of that list
    now holds a dangling pointer."""
    def __init__(self, value):
        self.value = value
        self.box = None

    def _clear(self):
        if self.box is not None:
            box, self.box = self.box, None
            box.clear()

    def __index__(self):
        self._clear()
        return int(self.value)
    __int__ = __index__

    def __float__(self):
        self._clear()
        return float(self.value)

    def __complex__(self):
        self._clear()
        return complex(self.value)

    def __repr__(self):
        return "Clearing(%r)" % (self.value,)


class BadLen(list):
    """A list whose len() raises."""
    def __len__(self):
        raise ValueError("BadLen.__len__")

    def __repr__(self):
        return "BadLen(%s)" % list.__repr__(self)


class LyingLen:
    """A sequence that says it has `n` items and has fewer (or more)."""
    def __init__(self, n, items):
        self.n, self.items = n, items

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.items[i]

    def __repr__(self):
        return "LyingLen(%d, %r)" % (self.n, self.items)


class BadArray:
    """__array__ raises; __len__ and __getitem__ look like a sequence."""
    def __array__(self, *a, **k):
        raise ValueError("BadArray.__array__")

    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 2:
            raise IndexError(i)
        return 1.0

    def __repr__(self):
        return "BadArray()"


class BadBool:
    def __bool__(self):
        raise ValueError("BadBool.__bool__")

    def __repr__(self):
        return "BadBool()"


class BadStr(str):
    """A str subclass whose methods raise (a format spec)."""
    def __str__(self):
        raise ValueError("BadStr.__str__")

    def __repr__(self):
        return "BadStr()"


class FakeArray:
    """An object offering only __array_interface__ (a dict made by `fake_interface`)."""
    def __init__(self, iface, keep):
        self.__array_interface__ = iface
        self._keep = keep  # the buffer its pointer points into

    def __repr__(self):
        return "FakeArray(%r)" % ({k: v for k, v in self.__array_interface__.items()},)


def put_in(box, obj):
    """Append obj to box; Clearing objects learn which container to clear."""
    if isinstance(obj, Clearing):
        obj.box = box
    box.append(obj)
    return box


# ---- scalars and ints --------------------------------------------------------

INTS = [0, 1, 2, 3, -1, -2, 5, 16, 17, 31, 63, 64, 2**31 - 1, 2**31, 2**32, 2**62,
        2**63 - 1, -2**63, 2**63, 2**64, -2**62]
SMALL_INTS = [0, 1, 2, 3, -1, -2, 4, 15, 16, 17]
FLOATS = [0.0, -0.0, 0.5, 1.5, -2.5, 1e300, -1e-310, float("nan"), float("inf"),
          float("-inf"), 3.4e38, 6.5e4]


def gen_int(r, p):
    return r.pick(INTS)


def gen_small_int(r, p):
    return r.pick(SMALL_INTS)


def gen_evil_int(r, p):
    return r.pick([BadIndex(), Clearing(r.pick(SMALL_INTS)), True, 1.5, None, "3",
                   np.int64(2), np.int32(-1), np.uint64(2**63), 2 + 0j, [], (1,)])


def gen_scalar(r, p):
    return r.pick([r.pick(SMALL_INTS), r.pick(INTS), r.pick(FLOATS), True, False,
                   1 + 2j, complex("nan+1j"), np.float32(1.5), np.float16(2), np.bool_(True),
                   BadIndex(), Clearing(2), None, "x", [1], p.torch.tensor(2.5)])


def gen_dim(r, p):
    """An int meant as a dim: mostly in range of small tensors, some far out."""
    return r.pick([0, 1, -1, 2, -2, 3, 15, 16, 17, -17, 64, 2**62, -2**63, BadIndex(),
                   Clearing(0), None, 0.0, "0"])


# ---- shapes ------------------------------------------------------------------

def _shape_list(r, p, n):
    return [r.pick(SMALL_INTS[:5]) for _ in range(n)]


def shape_small(r, p):
    return tuple(r.pick([0, 1, 2, 3, 5]) for _ in range(r.below(4)))


def shape_many_dims(r, p):
    n = r.pick([15, 16, 17, 18, 32, 64])
    return tuple([r.pick([1, 1, 1, 2])] + [1] * (n - 1))


def shape_huge(r, p):
    return r.pick([(2**62,), (2**63 - 1,), (2**62, 2**62), (2**31, 2**31, 4), (2**32, 2**31),
                   (0, 2**63 - 1), (2**63 - 1, 0), (3, 2**62), (2**61, 8)])


def shape_negative(r, p):
    return r.pick([(-1,), (2, -1), (-1, -1), (-2,), (0, -1), (-1, 0), (-2**63,), (-5, 3)])


def shape_evil(r, p):
    """Sequences whose items or length misbehave."""
    kind = r.below(8)
    if kind == 0:
        return put_in([2, 3], Clearing(r.pick([0, 1, 2])))
    if kind == 1:
        return [2, BadIndex()]
    if kind == 2:
        return BadLen([2, 3])
    if kind == 3:
        return LyingLen(r.pick([3, 17, 2**40, -1]), [2, 2])
    if kind == 4:
        return r.pick([None, "23", 2.0, [2.0, 1], [[2], 3], {2: 3}, b"\x02"])
    if kind == 5:
        return p.torch.Size(shape_small(r, p))
    if kind == 6:
        return r.pick([np.array([2, 3]), np.array(2), np.zeros((2, 2), dtype=np.int64)])
    return iter([2, 3])


SHAPES = [shape_small, shape_small, shape_small, shape_many_dims, shape_huge,
          shape_negative, shape_evil]


def gen_shape(r, p):
    return r.pick(SHAPES)(r, p)


# Allocations between these sizes succeed slowly and teach nothing; below
# they are cheap, above they fail at once (no machine has that memory, or the
# byte count overflows, which is what we want to probe).
HEAVY_LO, HEAVY_HI = 2**24, 2**40


def heavy(shape):
    """True when `shape` asks for a real but pointlessly large allocation."""
    try:
        n = 1
        for s in shape:
            if type(s) is not int or s < 0:
                return False
            n *= s
    except Exception:
        return False
    return HEAVY_LO < n < HEAVY_HI


# ---- dtypes and devices --------------------------------------------------------

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64", "complex128"]


def gen_dtype(r, p):
    if r.below(5):
        return getattr(p.torch, r.pick(DTYPE_NAMES))
    return r.pick([None, "float32", float, int, bool, complex, np.float32,
                   np.dtype("float64"), p.torch, 3, BadIndex()])


def gen_device(r, p):
    # The same on every machine, so that saved bytes decode to the same program
    # with or without a GPU: without one, the CUDA devices are just bad ones.
    good = ["cpu", None, "cpu", "cuda", "cuda:0", p.torch.device("cuda", 0), "cuda:1", 1]
    bad = ["cuda:7", "cuda:-1", -1, 99, 2**63, "meta", "xpu", "cuda:", "cuda:0:0", "",
           BadIndex(), 1.5, p.torch.device("cuda", 5), "cuda:99999999999999999999"]
    return r.pick(good) if r.below(4) else r.pick(bad)


# ---- data for tensor(), as_tensor(), from_numpy() ------------------------------

NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
             "uint64", "float16", "float32", "float64", "complex64", "complex128",
             ">i4", ">f8", "object", "U3", "S2", "datetime64[s]", "V8"]


def gen_ndarray(r, p):
    dt = np.dtype(r.pick(NP_DTYPES))
    shape = r.pick([(), (0,), (3,), (2, 3), (3, 1, 2), (2, 0, 3), (1,) * 16, (1,) * 17])
    a = np.zeros(shape, dtype=dt) if dt.kind in "OUSV" else np.arange(
        int(np.prod(shape)), dtype="int64").reshape(shape).astype(dt)
    view = r.below(6)
    if view == 1 and a.ndim >= 1:
        a = a[::r.pick([-1, 2, -2])]
    elif view == 2 and a.ndim >= 2:
        a = a.T
    elif view == 3 and a.ndim >= 1:
        a = np.broadcast_to(a, (2,) + a.shape)
    elif view == 4 and a.size:
        a = a.reshape(-1)[:1].reshape(())
    elif view == 5:
        a.flags.writeable = False
    return a


def _nested(r, depth, leaf):
    if depth == 0:
        return leaf()
    return [_nested(r, depth - 1, leaf) for _ in range(r.pick([0, 1, 2]))]


def gen_list_data(r, p):
    kind = r.below(9)
    if kind == 0:
        return [[1, 2], [3]]                        # ragged
    if kind == 1:
        return _nested(r, r.pick([16, 17, 20]), lambda: 1.0)[:1] or [[]]
    if kind == 2:                                     # an item clears the list
        return put_in([1.0, 2.0], Clearing(r.pick([3, 2.5])))
    if kind == 3:                                     # a nested item clears its parent
        inner = put_in([1, 2], Clearing(4))
        return [inner, [5, 6, 7]]
    if kind == 4:
        return [1, BadIndex(), 3]
    if kind == 5:
        return [r.pick(INTS), r.pick(FLOATS), 1j]
    if kind == 6:
        return [p.torch.tensor(1.0), np.float64(2), np.array(3)]
    if kind == 7:
        return [BadArray(), BadArray()]
    return [[r.pick([True, 1, 1.5, "a", None, [], ()]) for _ in range(2)]]


def gen_bad_sequence(r, p):
    return r.pick([BadLen([1.0, 2.0]), LyingLen(3, [1.0]), LyingLen(-1, []),
                   LyingLen(2**62, [1]), BadArray(), iter([1, 2]), range(3), b"ab",
                   bytearray(b"\x01"), memoryview(b"ab"), "12", {1: 2}, {1, 2}])


_TYPESTR_SIZE = {"<f8": 8, "<f4": 4, "|b1": 1, "<c16": 16, ">i4": 4, "|u1": 1, "<i8": 8}


def _in_bounds(shape, strides, itemsize, nbytes):
    """Whether a well-formed interface stays inside its buffer (None: malformed)."""
    try:
        if not all(type(s) is int and s >= 0 for s in shape):
            return None
        if strides is None:
            strides, acc = [], itemsize
            for s in reversed(shape):
                strides.insert(0, acc)
                acc *= s
        if len(strides) != len(shape) or not all(type(s) is int for s in strides):
            return None
        if any(s == 0 for s in shape):
            return True
        lo = sum(min(0, st * (s - 1)) for s, st in zip(shape, strides))
        hi = sum(max(0, st * (s - 1)) for s, st in zip(shape, strides)) + itemsize
        return lo >= 0 and hi <= nbytes
    except Exception:
        return None


def fake_interface(r, p):
    """A FakeArray whose __array_interface__ is malformed in one or two ways."""
    buf = np.zeros(64, dtype=np.uint8)
    ptr = buf.__array_interface__["data"][0]
    typestr = r.pick(list(_TYPESTR_SIZE) + ["x", "<f3", "", "|O", "<V8", 8, None])
    shape = r.pick([(2,), (), (3, 1), (0,), (-1,), (2**62,), [2, "a"], None, (1,) * 17, 3])
    strides = r.pick([None, None, (4,), (8,), (-8,), (2**62,), (0,), (8, 8), "x", (1.5,)])
    data = r.pick([(ptr, False), (ptr, False), (ptr, True), (), (0,), (ptr,), (0, False),
                   ("x", False), (2**64, False), (2**65, False), (ptr, False, 1), None, ptr])
    iface = {"typestr": typestr, "shape": shape, "data": data, "strides": strides,
             "version": r.pick([3, 3, 3, 2, 0, None])}
    if r.below(8) == 0:
        del iface[r.pick(list(iface))]
    real_ptr = isinstance(data, tuple) and len(data) >= 1 and data[0] in (ptr, 0)
    if real_ptr and typestr in _TYPESTR_SIZE:
        ok = _in_bounds(shape if isinstance(shape, (tuple, list)) else (), strides,
                        _TYPESTR_SIZE[typestr], 64 if data[0] == ptr else 0)
        if ok is False:  # well formed but reading past its buffer: NumPy trusts that too
            iface["shape"] = (2,)
            iface["strides"] = None
            if data[0] == 0:
                iface["shape"] = (0,)
    return FakeArray(iface, buf)


DATA = [gen_list_data, gen_list_data, gen_ndarray, gen_ndarray, gen_bad_sequence,
        fake_interface, fake_interface, gen_scalar]


def gen_data(r, p):
    return r.pick(DATA)(r, p)


# ---- indices -----------------------------------------------------------------

def gen_index_item(r, p):
    kind = r.below(10)
    if kind < 3:
        return r.pick([0, 1, -1, 2, -3, 5, 2**62, -2**63, BadIndex(), Clearing(0), True])
    if kind < 6:
        start = r.pick([None, 0, 1, -1, 2**62, -2**63, BadIndex()])
        stop = r.pick([None, 2, -1, 0, 2**63 - 1, 1])
        step = r.pick([None, 1, 2, 3, -1, 0, 2**62, BadIndex()])
        return slice(start, stop, step)
    if kind == 6:
        return r.pick([None, Ellipsis])
    if kind == 7:
        return r.pick([[0, 1], [[0], [1]], [True, False], [], [0, -1, 5], np.array([0, 0]),
                       put_in([0, 1], Clearing(0))])
    if kind == 8:
        return r.pick([p.torch.tensor([0, 1]), p.torch.tensor([True]), p.torch.tensor(0),
                       p.torch.tensor([0.5]), p.torch.zeros(0, dtype=p.torch.int64)])
    return r.pick(["a", 1.5, object(), (), b"x"])


def gen_index(r, p):
    kind = r.below(5)
    if kind == 0:
        return gen_index_item(r, p)
    if kind == 1:
        return (None,) * r.pick([15, 16, 17, 18])
    if kind == 2:
        return (Ellipsis,) + (None,) * r.pick([1, 15, 16]) + (0,)
    return tuple(gen_index_item(r, p) for _ in range(r.pick([1, 2, 3, 4, 17])))
