"""Dynamic audit of the error convention: hostile arguments to every entry point.

Every callable in pycuda_sem._C, every public function of pycuda_sem,
pycuda_sem.cuda and pycuda_sem.fft, and every Tensor method (on a 2-d, a 0-dim
and an empty tensor) is called with a battery of hostile arguments: none, None,
wrong types, 2**63, -1, nan, a 0-dim tensor, objects whose __index__ or
__float__ raises, one whose __index__ empties its list, deep lists, a device
that does not exist. Any exception is fine except SystemError, which CPython
raises when a C function returned NULL without an exception or a value with
one. The calls run in child processes, so a crash (SIGSEGV, abort) is caught
and pinned on the target that caused it.

One test per target; targets with a known bug are xfail(strict=True), the
reason holding a one-line reproducer, so fixing the bug flips the test to an
unexpected pass and the mark is removed with it. tools/check_errors.py is the
static side of the same audit.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading

import pytest

# Not called: each does what it is asked and that is the danger, not a bug.
SKIP = {
    "_C:_fault": "faults a kernel on purpose (tests/test_faults.py)",
    "_C:_sleep": "spins the GPU for as many cycles as asked",
    "_C:_launch_loop": "launches as many kernels as asked",
    "_C:_memset_async": "writes through a raw device pointer, by contract",
    "_C:ExternalStream": "wraps a raw cudaStream_t pointer, by contract (torch crashes too)",
    "_C:_cuda_ipc_storage": "wraps a raw device address, by contract (CUDA IPC's receiver)",
    "_C:_cuda_ipc_open": "hands a handle to the driver, by contract (test_cuda_ipc.py checks it)",
    "cuda:ExternalStream": "same object as _C.ExternalStream",
}

# Known bugs this audit found and that are not fixed on this branch: target ->
# reproducer. Strict xfail: a fix makes the test fail until the entry goes.
KNOWN = {
    # target -> reproducer of a known crash, run as xfail(strict=True) so a fix
    # is noticed. Empty: the borrowed-item class (a list item's __index__ or
    # __float__ clearing the list) was fixed by reading tuple snapshots.
}

CHILD = r'''
import math, sys, time, json
import pycuda_sem as torch
import pycuda_sem.cuda, pycuda_sem.fft
from pycuda_sem import _C

class BadIndex:
    def __index__(self): raise ValueError("bad __index__")
    def __int__(self): raise ValueError("bad __int__")
class BadFloat:
    def __float__(self): raise ValueError("bad __float__")
    def __complex__(self): raise ValueError("bad __complex__")
class BadLen:
    def __len__(self): raise ValueError("bad __len__")
    def __getitem__(self, i): raise ValueError("bad __getitem__")
class Clearer:
    """An int-like whose __index__ empties the list that holds it."""
    def __init__(self): self.home = None
    def __index__(self):
        if self.home is not None: self.home.clear()
        return 1
    __int__ = __index__
    def __float__(self): self.__index__(); return 1.0
def clearing_list():
    c = Clearer(); l = [2, c, 3, c]; c.home = l; return l
def deep(n):
    l = [1.0]
    for _ in range(n): l = [l]
    return l

HOSTILE = [
    ("None", lambda: None), ("'x'", lambda: "x"), ("2**63", lambda: 2**63),
    ("-2**63-1", lambda: -2**63 - 1), ("2**64", lambda: 2**64), ("-1", lambda: -1),
    ("0", lambda: 0), ("nan", lambda: float("nan")), ("-inf", lambda: float("-inf")),
    ("1.5", lambda: 1.5), ("1j", lambda: 1j), ("True", lambda: True), ("[]", lambda: []),
    ("()", lambda: ()), ("[1,[2]]", lambda: [1, [2]]), ("deep(40)", lambda: deep(40)),
    ("[2**63]", lambda: [2**63]), ("[-1,-1]", lambda: [-1, -1]), ("[0]*17", lambda: [0] * 17),
    ("[1]*17", lambda: [1] * 17), ("BadIndex()", BadIndex), ("BadFloat()", BadFloat),
    ("BadLen()", BadLen), ("[BadIndex()]", lambda: [BadIndex()]),
    ("clearing_list()", clearing_list), ("object()", object),
    ("tensor(0.)", lambda: torch.tensor(0.)), ("zeros(0,3)", lambda: torch.zeros(0, 3)),
    ("torch.float32", lambda: torch.float32), ("'cuda:9'", lambda: "cuda:9"),
    ("{'a': 1}", lambda: {"a": 1}), ("b'x'", lambda: b"x"), ("slice(None)", lambda: slice(None)),
    ("Ellipsis", lambda: Ellipsis), ("torch", lambda: torch),
]
T = ("arange(6.).reshape(2,3)", lambda: torch.arange(6.).reshape(2, 3))
PATTERNS = [  # (positional, keyword) with "H" for the hostile value, "T" for a tensor
    ((), {}), (("H",), {}), (("T", "H"), {}), (("H", "T"), {}), (("H", "H"), {}),
    (("T", "T", "H"), {}), (("T",), {"dim": "H"}), (("T",), {"dtype": "H"}),
    (("T",), {"out": "H"}), (("T",), {"device": "H"}), (("H",), {"dtype": "H"}),
]
RECEIVERS = {
    "2d": lambda: torch.arange(6.).reshape(2, 3),
    "0d": lambda: torch.tensor(3, dtype=torch.int64),
    "empty": lambda: torch.zeros(0, dtype=torch.bool),
}

def resolve(target):
    space, _, name = target.partition(":")
    if space == "Tensor":
        return None, name
    mod = {"_C": _C, "torch": torch, "cuda": torch.cuda, "fft": torch.fft,
           "accelerator": torch.accelerator}[space]
    return getattr(mod, name), name

def calls(target):
    fn, name = resolve(target)
    recvs = [None] if fn is not None else list(RECEIVERS)
    for recv in recvs:
        for hname, hmake in HOSTILE:
            for pos, kw in PATTERNS:
                if "H" not in pos and "H" not in kw.values() and hname != "None":
                    continue
                def build(pos=pos, kw=kw, hmake=hmake, recv=recv):
                    a = [hmake() if p == "H" else T[1]() for p in pos]
                    k = {key: (hmake() if v == "H" else T[1]()) for key, v in kw.items()}
                    f = fn if recv is None else getattr(RECEIVERS[recv](), name)
                    return f, a, k
                text = lambda pos=pos, kw=kw, hname=hname, recv=recv: "%s(%s)" % (
                    target if recv is None else "%s.%s" % (recv, name),
                    ", ".join([hname if p == "H" else T[0] for p in pos] +
                              ["%s=%s" % (key, hname if v == "H" else T[0]) for key, v in kw.items()]))
                yield build, text

def run(target, verbose):
    t0 = time.monotonic()
    for build, text in calls(target):
        if verbose:
            print("CALL " + text(), flush=True)
        try:
            f, a, k = build()
            r = f(*a, **k)
            if hasattr(r, "__iter__") and not isinstance(r, (str, bytes, torch.Tensor)):
                r = None
        except SystemError as e:
            return "SystemError: %s: %s" % (text(), str(e).splitlines()[0][:200])
        except BaseException:
            pass
        if time.monotonic() - t0 > 2.0:
            return "SLOW"
    return "ok"

verbose = sys.argv[1] == "-v"
for line in sys.stdin:
    target = line.strip()
    if target:
        print("DONE " + json.dumps([target, run(target, verbose)]), flush=True)
'''


def _targets():
    import pycuda_sem as torch
    import pycuda_sem.cuda
    import pycuda_sem.fft
    from pycuda_sem import _C

    seen, out = set(), []

    def add(space, obj, name):
        f = getattr(obj, name, None)
        if not callable(f) or (space != "Tensor" and id(f) in seen):
            return
        if space != "Tensor":
            seen.add(id(f))
        out.append("%s:%s" % (space, name))

    for space, mod in (("torch", torch), ("cuda", torch.cuda), ("fft", torch.fft),
                       ("accelerator", torch.accelerator)):
        for name in sorted(dir(mod)):
            if not name.startswith("_"):
                add(space, mod, name)
    for name in sorted(dir(_C)):
        if not name.startswith("__"):
            add("_C", _C, name)
    for name in sorted(dir(torch.Tensor)):
        f = getattr(torch.Tensor, name)
        if name.startswith("_") and (f is getattr(object, name, None) or not name.startswith("__")):
            continue
        if name in ("__init_subclass__", "__subclasshook__", "__new__"):
            continue  # object's protocol, not the tensor's
        add("Tensor", torch.Tensor, name)
    return [t for t in out if t not in SKIP]


def _run_child(targets, verbose=False, timeout=120):
    """Runs targets in one child; returns ({target: result}, rc, output tail)."""
    with tempfile.TemporaryDirectory() as cwd:  # anything a call writes lands here
        # debug malloc fills freed memory, so a use after free crashes every
        # time instead of now and then
        env = dict(os.environ, PYTHONMALLOC="debug", PYTHONPATH=os.pathsep.join(
            [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))] +
            [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        try:
            p = subprocess.run([sys.executable, "-c", CHILD, "-v" if verbose else "-q"],
                               input="\n".join(targets) + "\n", capture_output=True, text=True,
                               cwd=cwd, env=env, timeout=timeout)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc = "timeout"
    done = {}
    for line in out.splitlines():
        if line.startswith("DONE "):
            t, r = json.loads(line[5:])
            done[t] = r
    return done, rc, out


def _run_all(targets):
    results = {}

    def worker(chunk):
        pending = list(chunk)
        while pending:
            done, rc, _ = _run_child(pending)
            results.update(done)
            rest = [t for t in pending if t not in done]
            if rc == 0 or not rest:
                break
            bad = rest[0]  # the child died in its first unfinished target
            _, rc2, out = _run_child([bad], verbose=True, timeout=60)
            last = [l[5:] for l in out.splitlines() if l.startswith("CALL ")]
            results[bad] = "process died (%s) in %s" % (rc2, last[-1] if last else "?")
            pending = rest[1:]

    # Known crashers each run alone (a crash costs a fresh interpreter, and a
    # reproducer is already in KNOWN); the rest in a few shared children.
    alone = [t for t in targets if t in KNOWN]
    shared = [t for t in targets if t not in KNOWN]

    def solo(ts):
        for t in ts:
            done, rc, _ = _run_child([t])
            results[t] = done.get(t, "process died (%s)" % rc)

    n = max(2, min(4, os.cpu_count() or 2))
    threads = [threading.Thread(target=worker, args=(shared[i::n],)) for i in range(n)]
    threads += [threading.Thread(target=solo, args=(alone[i::n],)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return results


_RESULTS = {}


def _result(target):
    if not _RESULTS:
        _RESULTS.update(_run_all(_targets()) or {"": ""})
    return _RESULTS.get(target, "not run")


def _params():
    ps = []
    for t in _targets():
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[t])] if t in KNOWN else []
        ps.append(pytest.param(t, marks=marks, id=t))
    return ps


@pytest.mark.parametrize("target", _params())
def test_hostile_arguments(target):
    r = _result(target)
    assert r in ("ok", "SLOW"), r
