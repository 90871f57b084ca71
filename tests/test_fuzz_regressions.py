"""Regression tests for what the fuzzer found (issue 18): no program, however
hostile, kills the interpreter or raises SystemError; bad input gets the
exception torch raises.

* every input the fuzzer saved in fuzz/crashes/ (crash-*) is replayed through
  fuzz/replay.py, alone, in a fresh interpreter;
* each program of issue 18's table runs as its own test, in a fresh
  interpreter under PYTHONMALLOC=debug (so heap corruption is caught where
  it happens, not at some later free), and checks torch's behaviour.

A child that dies of a signal, prints SystemError, or fails its own check
fails the test with the child's output."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRASHES = os.path.join(ROOT, "fuzz", "crashes")
TIMEOUT = 300


def _child(args, debug_malloc=True):
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONFAULTHANDLER="1")
    env.pop("PYCUDA_SEM_FUZZ_PKG", None)
    if debug_malloc:
        env["PYTHONMALLOC"] = "debug"
    return subprocess.run([sys.executable] + args, capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=ROOT, env=env, errors="replace")


def _check(out):
    report = "exit status %d\n--- stdout\n%s\n--- stderr\n%s" % (
        out.returncode, out.stdout[-4000:], out.stderr[-6000:])
    assert out.returncode == 0, report
    assert "SystemError" not in out.stderr + out.stdout, report


# ---- saved fuzzer inputs -----------------------------------------------------------

def _saved_inputs():
    if not os.path.isdir(CRASHES):
        return []
    return sorted(f for f in os.listdir(CRASHES) if f.startswith("crash-") and "." not in f)


@pytest.mark.parametrize("name", _saved_inputs())
def test_saved_crash_input_replays_cleanly(name):
    _check(_child([os.path.join(ROOT, "fuzz", "replay.py"), os.path.join(CRASHES, name)],
                  debug_malloc=False))


# ---- issue 18's table ----------------------------------------------------------------

PRELUDE = """
import threading
import numpy as np
import pycuda_sem as torch

def raises(excs, f, *a, **k):
    try:
        r = f(*a, **k)
    except excs:
        return None
    except Exception as e:
        raise AssertionError("expected %r, got %r" % (excs, e))
    raise AssertionError("expected %r, got the result %r" % (excs, r))

def ok_or_raises(excs, f, *a, **k):
    '''torch accepts some of these, refuses others: either is fine, a crash is not.'''
    try:
        return f(*a, **k)
    except excs:
        return None

class BadIndex:
    def __index__(self):
        raise ValueError("BadIndex.__index__")
    __int__ = __index__
    def __float__(self):
        raise ValueError("BadIndex.__float__")

class Clearing:
    '''Clears the list that holds it when asked for a number.'''
    def __init__(self, value, box):
        self.value, self.box = value, box
    def __index__(self):
        self.box.clear()
        return int(self.value)
    __int__ = __index__
    def __float__(self):
        self.box.clear()
        return float(self.value)

class Fake:
    def __init__(self, **iface):
        self.buf = np.arange(8, dtype=np.float64)
        d = {"typestr": "<f8", "shape": (2,), "version": 3,
             "data": (self.buf.__array_interface__["data"][0], False)}
        d.update(iface)
        self.__array_interface__ = d
"""

DIMS_EXC = "(RuntimeError, IndexError)"
ARG_EXC = "(TypeError, ValueError, RuntimeError, IndexError)"

PROGRAMS = {
    "getitem_16_nones_past_max_dims": """
        t = torch.arange(6).reshape(2, 1, 3)
        v = ok_or_raises(%s, lambda: t[(None,) * 16])
        assert v is None or tuple(v.shape) == (1,) * 16 + (2, 1, 3)
    """ % DIMS_EXC,
    "view_of_17_dims_then_exit": """
        v = ok_or_raises(%s, lambda: torch.ones([2] + [1] * 15)[None])
        assert v is None or tuple(v.shape) == (1, 2) + (1,) * 15
        del v
    """ % DIMS_EXC,
    "setitem_past_max_dims": """
        v = torch.from_numpy(np.arange(2).reshape([2] + [1] * 15))
        def set_():
            v[(None,) * 16] = [[1]]
            return False
        if ok_or_raises(%s, set_) is not False:  # set_ returns False when it wrote
            assert v.tolist() == np.arange(2).reshape([2] + [1] * 15).tolist()
        else:
            assert v.tolist() == np.ones([2] + [1] * 15, dtype=np.int64).tolist()
    """ % DIMS_EXC,
    "tensor_of_list_cleared_by_float": """
        l = [1.5, 2.5]
        l.insert(0, Clearing(3.0, l))
        ok_or_raises(%s, torch.tensor, l)
        l = [[1, 2], [3, 4]]
        l[0].append(Clearing(5, l))
        ok_or_raises(%s, torch.tensor, l)
    """ % (ARG_EXC, ARG_EXC),
    "randint_size_list_cleared_by_index": """
        l = [300, 2]
        l.insert(0, Clearing(2, l))
        ok_or_raises(%s, torch.randint, 0, 5, l)
    """ % ARG_EXC,
    "fftshift_dims_list_cleared_by_index": """
        t = torch.arange(12.).reshape(3, 4)
        for fn in (torch.fft.fftshift, torch.fft.ifftshift):
            l = [1]
            l.insert(0, Clearing(0, l))
            ok_or_raises(%s, fn, t, dim=l)
    """ % ARG_EXC,
    "array_interface_empty_data_tuple": """
        raises(%s, torch.tensor, Fake(data=()))
    """ % ARG_EXC,
    "array_interface_one_item_data_tuple": """
        raises(%s, torch.tensor, Fake(data=(0,)))
    """ % ARG_EXC,
    "array_interface_strides_short_of_itemsize": """
        f = Fake(strides=(4,))
        t = ok_or_raises(%s, torch.tensor, f)
        if t is not None:
            assert t.tolist() == np.asarray(f).tolist()
    """ % ARG_EXC,
    "fft_roll_dims_of_0dim_tensor": """
        raises(%s, torch._C._fft_roll, torch.tensor(0.), [2, 4], [0, 2])
    """ % DIMS_EXC,
    "numpy_of_view_from_threads": """
        v = torch.empty(5, 1, dtype=torch.int64).real.unsqueeze(0)
        errors = []
        def body():
            try:
                for _ in range(200):
                    a = v.numpy()
                    assert a.shape == (1, 5, 1)
            except BaseException as e:
                errors.append(e)
        ts = [threading.Thread(target=body) for _ in range(8)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert not errors, errors
    """,
    "randint_dtype_low_and_raising_index": """
        raises((TypeError, ValueError), torch.randint, torch.float64, BadIndex(), torch.default_generator)
    """,
    "view_infers_minus_one_from_zero_size": """
        t = torch.arange(0.).reshape(0, 0).reshape(-1, 1)
        raises(RuntimeError, t.view, -1, 0, 3)
        raises(RuntimeError, t.reshape, -1, 0, 3)
    """,
    "expand_numel_overflow_then_max": """
        def run():
            return torch.zeros(1).expand([2**63 - 1, -1]).max()
        raises((RuntimeError, ValueError), run)
    """,
    "reduction_of_empty_tensor_with_huge_dim": """
        # found by the fuzzer: torch gives 0 (sum) and empty or NaN results here
        t = torch.zeros(0, 2**62)
        r = ok_or_raises(RuntimeError, t.sum)
        assert r is None or r.item() == 0
        for f in (lambda: t.std(dim=1), lambda: t.norm(keepdim=True), lambda: t.all(keepdim=True),
                  lambda: t.any(dtype=torch.int8), lambda: t.argmin(dim=0)):
            ok_or_raises((RuntimeError, IndexError, TypeError), f)
    """,
    "set_default_dtype_none": """
        raises(TypeError, torch.set_default_dtype, None)
        assert torch.get_default_dtype() == torch.float32
    """,
    "format_with_non_string_spec": """
        t = torch.tensor(1.5)
        for spec in (torch, None, 3):
            raises(TypeError, t.__format__, spec)
        assert format(t, ".2f") == "1.50"
    """,
}

CUDA_PROGRAMS = {
    "fill_of_cuda_view_from_threads": """
        t = torch.zeros([2, 2, 2, 2], dtype=torch.uint8, device="cuda").reshape(-1, 1)
        errors = []
        def body():
            try:
                for _ in range(100):
                    t.fill_(True)
            except BaseException as e:
                errors.append(e)
        ts = [threading.Thread(target=body) for _ in range(4)]
        [x.start() for x in ts]
        [x.join() for x in ts]
        torch.cuda.synchronize()
        assert not errors, errors
        assert t.cpu().tolist() == [[1]] * 16
    """,
}


def _run_program(body):
    code = PRELUDE + textwrap.dedent(body) + "\nprint('OK')\n"
    out = _child(["-c", code])
    _check(out)
    assert "OK" in out.stdout


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_issue18_program(name):
    _run_program(PROGRAMS[name])


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(CUDA_PROGRAMS))
def test_issue18_cuda_program(name):
    _run_program(CUDA_PROGRAMS[name])
