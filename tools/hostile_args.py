"""Calls every callable of pycuda_sem._C (and the Tensor methods) with hostile
arguments and reports the calls that kill the interpreter or raise SystemError.

    python tools/hostile_args.py [NAME_SUBSTRING ...]

Each callable runs in a child interpreter of its own, so a crash names the
call that caused it (the child prints each call before making it). Bad input
should get TypeError, ValueError, IndexError, RuntimeError (or
NotImplementedError) from the extension; SystemError means a C function broke
CPython's error convention, a signal means memory was misused. Exit status 1
when anything was found.
"""
import itertools
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r'''
import itertools, sys, warnings
sys.path.insert(0, %(root)r)
warnings.simplefilter("ignore")
import numpy as np
import pycuda_sem as torch
from pycuda_sem import _C

class BadIndex:
    def __index__(self): raise ValueError("bad __index__")
    def __float__(self): raise ValueError("bad __float__")
    def __len__(self): raise ValueError("bad __len__")

def clearing(n=3):
    l = []
    class C:
        def __index__(self): l.clear(); return 1
        def __float__(self): l.clear(); return 1.0
    l[:] = [C() for _ in range(n)]
    return l

class FakeArray:
    def __init__(self, **ai): self.__array_interface__ = ai

VALUES = [
    None, 0, 1, -1, 2**62, 2**63, 2**64, 1.5, float("nan"), 1j, True, "x", b"x",
    [], [None], [2**62, 2**62], [-1], (1,) * 20, {}, object(), torch, BadIndex(),
    clearing(), [clearing()], torch.float64, torch.zeros(2), torch.tensor(0.),
    torch.zeros(2, 3).t(), torch.zeros(0), np.zeros(2), np.float32(1),
    FakeArray(shape=(2,), typestr="<f8", data=(), version=3),
    FakeArray(shape=(2,), typestr="<f8", data=(0, False), version=3),
    FakeArray(shape=(2,), typestr="<f8", data=(0,), version=3),
    FakeArray(shape=(2,), typestr="<f8", data=(np.zeros(2).ctypes.data, False),
              strides=[4], version=3),
]
KEYS = ["dtype", "device", "size", "dim"]

def calls(nargs_max):
    yield (), {}
    t = torch.zeros(2, 3)
    for v in VALUES:
        yield (v,), {}
        yield (t, v), {}
        for k in KEYS:
            yield (), {k: v}
        if nargs_max >= 2:
            for w in (0, 1, None, [2], t, BadIndex(), clearing()):
                yield (v, w), {}
                yield (w, v), {}
                yield (t, v, w), {}
                yield (v, w, t), {}

target = %(target)r
if target.startswith("Tensor."):
    fn = getattr(torch.Tensor, target[7:])
    recv = lambda: [torch.zeros(2, 3), torch.tensor(1.), torch.zeros(0, dtype=torch.int64)]
else:
    fn = getattr(_C, target)
    recv = lambda: [None]
for r in recv():
    for args, kw in calls(3):
        if r is not None:
            args = (r,) + args
        try:
            print("CALL", target, len(args), sorted(kw), [type(a).__name__ for a in args],
                  flush=True)
        except Exception:
            pass
        try:
            fn(*args, **kw)
        except SystemError as e:
            print("SYSTEMERROR", target, repr(e)[:300], flush=True)
        except BaseException:
            pass
print("DONE", flush=True)
'''

# Calls that would hang or end the process on purpose, not bugs.
SKIP = {"_sleep", "_fault", "_abort", "synchronize"}


def targets():
    sys.path.insert(0, HERE)
    import pycuda_sem as torch
    from pycuda_sem import _C
    names = [n for n in dir(_C) if callable(getattr(_C, n)) and not n.startswith("__")]
    names = [n for n in names if not isinstance(getattr(_C, n), type)]
    meths = ["Tensor." + n for n in dir(torch.Tensor)
             if not n.startswith("__") or n in ("__format__", "__getitem__", "__setitem__")]
    return names + [m for m in meths if callable(getattr(torch.Tensor, m[7:], None))]


def main(argv):
    found = 0
    for name in targets():
        if argv and not any(a in name for a in argv):
            continue
        if any(s in name for s in SKIP):
            continue
        src = CHILD % {"root": HERE, "target": name}
        try:
            r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                               timeout=120, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        except subprocess.TimeoutExpired:
            print("HANG", name)
            found += 1
            continue
        lines = r.stdout.splitlines()
        for line in lines:
            if line.startswith("SYSTEMERROR"):
                print(line)
                found += 1
        if r.returncode != 0 or not lines or lines[-1] != "DONE":
            last = [l for l in lines if l.startswith("CALL")][-1:] or ["(before any call)"]
            print("CRASH rc=%d in %s" % (r.returncode, last[0]))
            print("   ", (r.stderr.strip().splitlines() or [""])[-1][:300])
            found += 1
    print("%d finding(s)" % found)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
