"""Hostile input to shapes, views, indexing, copies and threads (issue 18).

Each program of the issue's table that killed the interpreter here (more dims
than PCS_MAX_DIMS through indexing, a 0-dim _fft_roll, a division by a zero
size while inferring -1, an element count that overflows, .numpy() and fill_
of views from several threads) is replayed: the crashers in a fresh
interpreter first (a regression must fail this test, not kill the suite), then
in-process for the exception torch raises. The dim limit is checked across
every view op: exactly PCS_MAX_DIMS (16) dims work, one more raises."""
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import pycuda_sem as torch

MAX_DIMS = 16
ROOT = __file__.rsplit("/tests/", 1)[0]


def _fresh(code):
    """Runs code in a fresh interpreter; returns (returncode, output)."""
    prog = "import numpy as np\nimport pycuda_sem as torch\n" + textwrap.dedent(code)
    p = subprocess.run([sys.executable, "-c", prog], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout + p.stderr


# ---- the issue's programs, each in a fresh interpreter --------------------------

CRASHERS = [
    ("none16", "torch.arange(6).reshape(2, 1, 3)[(None,) * 16]", "IndexError",
     "at most 16 dimensions"),
    ("none-on-16-dims", "torch.ones([2] + [1] * 15)[None]", "IndexError", "at most 16 dimensions"),
    ("setitem-none16",
     "v = torch.from_numpy(np.arange(2).reshape([2] + [1] * 15))\nv[(None,) * 16] = [[1]]",
     "IndexError", "at most 16 dimensions"),
    ("fft-roll-0dim", "torch._C._fft_roll(torch.tensor(0.), [2, 4], [0, 2])", "IndexError",
     "no dimensions"),
    ("infer-zero", "torch.arange(0.).reshape(0, 0).reshape(-1, 1).view(-1, 0, 3)", "RuntimeError",
     "ambiguous"),
    ("expand-max", "torch.zeros(1).expand([2**63 - 1, -1]).max()", "RuntimeError", "too large"),
]


@pytest.mark.parametrize("name,code,exc,fragment", CRASHERS, ids=[c[0] for c in CRASHERS])
def test_issue_program_in_fresh_interpreter(name, code, exc, fragment):
    wrapped = ("try:\n" + textwrap.indent(code, "    ") + "\n"
               "except Exception as e:\n    print('RAISED', type(e).__name__, e)\n"
               "import gc; gc.collect()\nprint('EXIT OK')\n")
    rc, out = _fresh(wrapped)
    assert rc == 0, "%s killed the interpreter (rc %d): %s" % (name, rc, out[-2000:])
    assert "RAISED %s" % exc in out and fragment in out, out
    assert "EXIT OK" in out


# ---- the same, in-process, for torch's exception and message ----------------------

def test_none_past_the_limit_raises_index_error():
    t = torch.arange(6).reshape(2, 1, 3)
    with pytest.raises(IndexError, match="at most 16 dimensions"):
        t[(None,) * 16]
    with pytest.raises(IndexError, match="at most 16 dimensions"):
        torch.ones([2] + [1] * 15)[None]
    # the tensor is still whole afterwards
    assert t[(None,) * 13].shape == (1,) * 13 + (2, 1, 3)
    assert t.tolist() == [[[0, 1, 2]], [[3, 4, 5]]]


def test_setitem_past_the_limit_raises_and_leaves_data():
    v = torch.from_numpy(np.arange(2).reshape([2] + [1] * 15))
    with pytest.raises(IndexError, match="at most 16 dimensions"):
        v[(None,) * 16] = [[1]]
    assert v.flatten().tolist() == [0, 1]


def test_fft_roll_validates_dims():
    with pytest.raises(IndexError, match="no dimensions"):
        torch._C._fft_roll(torch.tensor(0.), [2, 4], [0, 2])
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch._C._fft_roll(torch.arange(5), [1], [5])
    with pytest.raises(RuntimeError, match="must align"):
        torch._C._fft_roll(torch.arange(5), [1, 2], [0])
    with pytest.raises(TypeError):
        torch._C._fft_roll(torch.arange(5), [1], ["a"])
    with pytest.raises(TypeError):
        torch._C._fft_roll([1, 2], [1], [0])
    # shifts of any size, negative included, wrap as torch.roll
    assert torch._C._fft_roll(torch.arange(5), [-2**63], [0]).tolist() == \
        np.roll(np.arange(5), -2**63 % 5).tolist()
    assert torch._C._fft_roll(torch.tensor(3.), [], []).item() == 3.0


def test_fft_cuda_validates_kind_and_norm():
    x = torch.ones(4)
    with pytest.raises(ValueError, match="kind"):
        torch._C._fft_cuda(x, 7, None, None, 0, True, False, False)
    with pytest.raises(ValueError, match="norm"):
        torch._C._fft_cuda(x, 0, None, None, 9, True, False, False)
    with pytest.raises(TypeError):
        torch._C._fft_cuda(x, "c2c", None, None, 0, True, False, False)
    with pytest.raises(RuntimeError, match="CUDA tensor"):
        torch._C._fft_cuda(x, 0, None, None, 0, True, False, False)


def test_infer_size_with_zero_elements():
    e = torch.arange(0.).reshape(0, 0).reshape(-1, 1)
    assert e.shape == (0, 1)
    with pytest.raises(RuntimeError, match=r"cannot reshape tensor of 0 elements into shape "
                                           r"\[-1, 0, 3\] because the unspecified dimension size "
                                           r"-1 can be any value and is ambiguous"):
        e.view(-1, 0, 3)
    with pytest.raises(RuntimeError, match="ambiguous"):
        e.reshape(0, -1)
    assert e.view(-1).shape == (0,)
    assert e.reshape(2, -1).shape == (2, 0)
    with pytest.raises(RuntimeError, match=r"shape '\[-1, 2\]' is invalid for input of size 3"):
        torch.ones(3).view(-1, 2)
    # a product of sizes past int64 is never the element count
    with pytest.raises(RuntimeError, match="is invalid for input of size 4"):
        torch.ones(4).view(2**62, 4, -1)
    with pytest.raises(RuntimeError, match="is invalid for input of size 4"):
        torch.ones(4).reshape(2**62, 2**62)


def test_overflowing_element_counts():
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        torch.zeros(1).expand(2**62, 4)
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        torch.zeros(1, 1).expand(2**32, 2**32)
    big = torch.zeros(1).expand([2**63 - 1, -1])
    assert big.shape == (2**63 - 1, 1)
    for op in (big.max, big.sum, big.mean, big.argmax, lambda: big.max(0), big.std,
               lambda: big.amax(0), big.all, lambda: big @ big.T, lambda: big + 1):
        with pytest.raises(RuntimeError, match="too large|overflow"):
            op()
    with pytest.raises(RuntimeError, match="overflow"):
        big.contiguous()


def test_as_strided_span_cannot_wrap():
    t = torch.zeros(4)
    for size, stride, off in [((2, 2), (2**62, 2**62), 0), ((2**62, 2), (4, 1), 0),
                              ((2,), (2**63 - 1,), 0), ((1,), (1,), 2**63 - 1)]:
        with pytest.raises(RuntimeError, match="past the end|overflow"):
            t.as_strided(size, stride, off)
    with pytest.raises(RuntimeError, match="invalid storage offset"):
        t.as_strided((1,), (1,), -1)
    with pytest.raises(RuntimeError, match="Negative strides"):
        t.as_strided((2,), (-1,))
    assert t.as_strided((2, 2), (1, 2), 0).shape == (2, 2)
    assert t.as_strided((0, 2**62), (2**62, 1)).shape == (0, 2**62)


def test_writes_into_expanded_views():
    """torch refuses copy_ into an expanded view, but fill_ is idempotent and
    allowed (set_check_mem_overlap(false)); a fill writes each distinct element
    once, so expand(2**62, 1).fill_ returns at once instead of looping."""
    x = torch.zeros(1)
    e = x.expand(3)
    msg = "more than one element of the written-to tensor refers to a single memory location"
    with pytest.raises(RuntimeError, match=msg):
        e.copy_(torch.ones(3))
    assert x.item() == 0
    e.fill_(1)
    assert x.item() == 1
    e.zero_()
    assert x.item() == 0
    e[:] = 2
    assert x.item() == 2
    torch.zeros(1).expand(2**62, 1).fill_(1)
    y = torch.zeros(2, 1)
    y.expand(2, 2**40).fill_(7)
    assert y.tolist() == [[7.0], [7.0]]
    torch.zeros(1).expand(1, 1).fill_(5)
    torch.zeros(1, 1).expand(0, 2).fill_(5)


def test_reduction_dims_from_a_list_that_mutates():
    class Clearing:
        def __init__(self, lst):
            self.lst = lst

        def __index__(self):
            self.lst.clear()
            return 1

    dims = [0, None]
    dims[1] = Clearing(dims)
    t = torch.ones(2, 3)
    assert t.sum(dims).item() == 6.0  # read from a snapshot of the list
    with pytest.raises(TypeError, match="dim must be"):
        t.sum(3.5)


def test_errors_of_python_callbacks_propagate():
    class BadBool:
        def __bool__(self):
            raise ValueError("bad bool")

    with pytest.raises(ValueError, match="bad bool"):
        torch.ones(3).var(0, BadBool())

    class BadType:
        dtype = torch.float32

        @property
        def is_cuda(self):
            return BadBool()

    with pytest.raises(ValueError, match="bad bool"):
        torch.ones(3).type(BadType())


# ---- the dim limit across every view op --------------------------------------------

def _ones(n):
    return torch.ones([1] * n)


LIMIT_OPS = [
    ("index-none", lambda t: t[None], IndexError),
    ("index-ellipsis-none", lambda t: t[..., None], IndexError),
    ("index-none-slice", lambda t: t[None, :], IndexError),
    ("setitem-none", lambda t: t.__setitem__(None, 2.0), IndexError),
    ("unsqueeze", lambda t: t.unsqueeze(0), RuntimeError),
    ("unsqueeze-last", lambda t: t.unsqueeze(-1), RuntimeError),
    ("view", lambda t: t.view([1] * (t.ndim + 1)), RuntimeError),
    ("reshape", lambda t: t.reshape([1] * (t.ndim + 1)), RuntimeError),
    ("view-infer", lambda t: t.view([1] * t.ndim + [-1]), RuntimeError),
    ("expand", lambda t: t.expand([1] * (t.ndim + 1)), RuntimeError),
    ("expand-kw", lambda t: t.expand(size=[1] * (t.ndim + 1)), RuntimeError),
    ("as_strided", lambda t: t.as_strided([1] * (t.ndim + 1), [1] * (t.ndim + 1)), RuntimeError),
    ("new_empty", lambda t: t.new_empty([1] * (t.ndim + 1)), RuntimeError),
]


@pytest.mark.parametrize("name,op,exc", LIMIT_OPS, ids=[o[0] for o in LIMIT_OPS])
def test_one_dim_past_the_limit_raises(name, op, exc):
    ok = op(_ones(MAX_DIMS - 1))  # reaches exactly the limit
    if ok is not None:
        assert ok.ndim == MAX_DIMS
    t = _ones(MAX_DIMS)
    with pytest.raises(exc, match="at most 16 dimensions"):
        op(t)
    assert t.shape == (1,) * MAX_DIMS and t.sum().item() == 1.0


def test_ops_at_exactly_the_limit():
    t = torch.arange(4.).reshape([2] + [1] * (MAX_DIMS - 2) + [2])
    assert t.ndim == MAX_DIMS
    assert t.permute(*reversed(range(MAX_DIMS))).shape == tuple(reversed(t.shape))
    assert t.transpose(0, -2).shape[0] == 1 and t.mT.shape[-2:] == (2, 1)
    assert t.T.shape == tuple(reversed(t.shape))
    assert t.squeeze().shape == (2, 2)
    assert t.flatten().tolist() == [0., 1., 2., 3.]
    assert t[..., 1].shape == (2,) + (1,) * (MAX_DIMS - 2)
    assert (t + torch.ones(2)).shape == t.shape  # broadcasting to 16 dims
    assert (t + _ones(MAX_DIMS)).shape == t.shape
    assert t.sum(0, keepdim=True).shape == (1,) + t.shape[1:]
    assert t.max(-1, keepdim=True).values.shape == t.shape[:-1] + (1,)
    assert t.argmax(keepdim=True).shape == (1,) * MAX_DIMS
    assert t.cumsum(0).shape == t.shape
    assert t.unbind(0)[1].ndim == MAX_DIMS - 1
    assert t.narrow(0, 1, 1).shape[0] == 1
    assert t.expand_as(t).shape == t.shape and t.view_as(t).shape == t.shape
    assert torch.fft.fftshift(t).shape == t.shape
    m = torch.ones([1] * (MAX_DIMS - 2) + [2, 3])
    assert (m @ torch.ones(3, 2)).shape == (1,) * (MAX_DIMS - 2) + (2, 2)
    assert (torch.ones(2) @ m).shape == (1,) * (MAX_DIMS - 2) + (3,)
    c = torch.ones([1] * MAX_DIMS, dtype=torch.complex64)
    assert c.real.ndim == MAX_DIMS and c.imag.ndim == MAX_DIMS
    with pytest.raises(RuntimeError, match="at most 16 dimensions"):
        torch.zeros([1] * (MAX_DIMS + 1))
    with pytest.raises(RuntimeError, match="at most 16 dimensions"):
        t.permute(*range(MAX_DIMS + 1))


# ---- threads ---------------------------------------------------------------------

def _in_threads(fn, n=8, reps=200):
    errors = []
    barrier = threading.Barrier(n)

    def run():
        try:
            barrier.wait()
            for _ in range(reps):
                fn()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=run) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:3]


def test_threads_numpy_of_views():
    shared = torch.empty(5, 1, dtype=torch.int64).real.unsqueeze(0)

    def work():
        a = torch.empty(5, 1, dtype=torch.int64).real.unsqueeze(0).numpy()
        assert a.shape == (1, 5, 1)
        b = shared.numpy()
        assert b.shape == (1, 5, 1)
        np.asarray(shared.T)
        torch.arange(6.).reshape(2, 3)[:, 1:].numpy().sum()

    _in_threads(work)


def test_threads_numpy_of_views_fresh_interpreter():
    # the first calls of a process race to set up whatever is made lazily
    rc, out = _fresh("""
        import threading
        b = threading.Barrier(8)
        def work():
            b.wait()
            for _ in range(100):
                torch.empty(5, 1, dtype=torch.int64).real.unsqueeze(0).numpy()
                torch.zeros([2, 2, 2, 2], dtype=torch.uint8).reshape(-1, 1).fill_(True)
                torch.ones(3, 4).sum(0)
        ts = [threading.Thread(target=work) for _ in range(8)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print('EXIT OK')
    """)
    assert rc == 0 and "EXIT OK" in out, out[-2000:]


def test_threads_fill_views():
    base = torch.zeros(8, 8)

    def work():
        t = torch.zeros([2, 2, 2, 2], dtype=torch.uint8).reshape(-1, 1).fill_(True)
        assert t.sum().item() == 16
        base[2:6, ::2].fill_(1.0)
        base.T[0].zero_()
        base[1] = torch.ones(8)

    _in_threads(work)
    assert base[2:6, ::2].sum().item() == 12.0  # column 0 zeroed by base.T[0]


@pytest.mark.cuda
def test_cuda_threads_fill_views(balanced):
    def work():
        t = torch.zeros([2, 2, 2, 2], dtype=torch.uint8, device="cuda").reshape(-1, 1).fill_(True)
        assert t.sum().item() == 16

    _in_threads(work, n=4, reps=100)
    _in_threads(work, n=8, reps=50)
    torch.cuda.synchronize()


@pytest.mark.cuda
def test_cuda_views_past_the_limit_leave_allocator_balanced(balanced):
    t = torch.ones([2] + [1] * 15, device="cuda")
    with pytest.raises(IndexError, match="at most 16 dimensions"):
        t[None]
    with pytest.raises(IndexError, match="at most 16 dimensions"):
        t[(None,) * 16] = 1.0
    with pytest.raises(RuntimeError, match="at most 16 dimensions"):
        t.unsqueeze(0)
    with pytest.raises(RuntimeError, match="ambiguous"):
        torch.zeros(0, 1, device="cuda").view(-1, 0, 3)
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        torch.zeros(1, device="cuda").expand(2**62, 4)
    with pytest.raises(RuntimeError, match="overflow"):
        torch.zeros(1, device="cuda").expand(2**62, 2).contiguous()
    with pytest.raises(IndexError, match="no dimensions"):
        torch._C._fft_roll(torch.tensor(0., device="cuda"), [2, 4], [0, 2])
    del t


@pytest.mark.cuda
def test_cuda_fft_from_threads(balanced):
    x = torch.randn(4, 64, device="cuda")

    def work():
        y = torch.fft.fft(x)
        assert y.shape == (4, 64)

    _in_threads(work, n=4, reps=50)
    torch.cuda.synchronize()
    del x
