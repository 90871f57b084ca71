"""Side-by-side timing harness: pycuda_sem, torch and CuPy in one process.

Each case gives one statement per library (and a setup run once). A statement
is timed with timeit in a host loop; when `sync` is set the loop is closed by
a device synchronize so that queued GPU work is counted. Without `sync` the
figure is the host's cost of a call: the loop runs in bursts that start on an
empty launch queue and are too short to fill it, with an untimed synchronize
between them (see HOST_BURST). The figure is the median over `repeat` loops,
in microseconds per statement. Libraries that do not import (or have no GPU)
are shown as '-'.
"""
import json
import os
import platform
import statistics
import time
import timeit


def _try_import(name):
    try:
        return __import__(name)
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return None


# torch (2.11+cu130 on the GPU machine) and CuPy are imported here, before the
# bench scripts import pycuda_sem: importing torch into a process that already
# holds pycuda_sem, with CUDA not yet started, crashed inside torch's import
# (the pytest run, whose conftest starts CUDA first, does not).
_try_import("torch")
_try_import("cupy")


class Case:
    def __init__(self, name, ours, torch=None, cupy=None, setup="", number=10000, repeat=15,
                 sync=False, unit="us", bytes_moved=None, count=1):
        # count: how many operations one statement performs; the figure is
        # per operation (a C loop of launches is one statement of many).
        self.name, self.number, self.repeat, self.count = name, number, repeat, count
        self.stmts = {"pycuda_sem": ours, "torch": torch, "cupy": cupy}
        self.setup, self.sync, self.unit, self.bytes_moved = setup, sync, unit, bytes_moved


def _namespace():
    import pycuda_sem
    ns = {"pcs": pycuda_sem}
    t = _try_import("torch")
    if t is not None and t.cuda.is_available():
        ns["torch"] = t
    cp = _try_import("cupy")
    if cp is not None:
        try:
            cp.cuda.runtime.getDeviceCount()
            ns["cupy"] = cp
        except Exception:  # noqa: BLE001
            pass
    return ns


_SYNC = {"pycuda_sem": "pcs.cuda.synchronize()", "torch": "torch.cuda.synchronize()",
         "cupy": "cupy.cuda.Device().synchronize()"}

# Launches a burst of a host-cost loop may queue. A loop of thousands of calls
# with no synchronize fills the GPU's launch queue (about a thousand pending
# launches) and from then on waits for the GPU to drain it, timing the GPU's
# rate of tiny kernels (an empty kernel: 2.6 to 3.5 us a launch on the H100,
# bench_compute's cuda._sleep(0) row) instead of the host's cost; bursts of
# this many launches, each after an untimed synchronize, never wait.
HOST_BURST = 256


def _host_loop(timer, sync, number, count):
    """Seconds a statement takes on the host, over `number` statements timed
    in bursts of at most HOST_BURST launches (count launches a statement),
    each burst started on an empty queue."""
    burst = max(1, HOST_BURST // max(1, count))
    left, total = number, 0.0
    while left > 0:
        n = min(left, burst)
        sync.timeit(1)  # not timed: the queue is empty when the burst starts
        total += timer.timeit(n)
        left -= n
    return total / number


def time_case(case, ns):
    out = {}
    for lib, stmt in case.stmts.items():
        modname = "pcs" if lib == "pycuda_sem" else lib
        if stmt is None or modname not in ns:
            out[lib] = None
            continue
        g = dict(ns)
        exec(case.setup.get(lib, "") if isinstance(case.setup, dict) else case.setup, g)
        body = stmt + ("\n" + _SYNC[lib] if case.sync else "")
        if case.sync:
            # one statement per loop iteration, synchronize once per loop
            timer = timeit.Timer("for _i in range(%d):\n    %s\n%s" % (
                case.number, stmt.replace("\n", "\n    "), _SYNC[lib]), globals=g)
            timer.timeit(1)  # warm up
            runs = [timer.timeit(1) / case.number for _ in range(case.repeat)]
        else:
            timer = timeit.Timer(body, globals=g)
            sync = timeit.Timer(_SYNC[lib], globals=g)
            _host_loop(timer, sync, max(1, case.number // 10), case.count)  # warm up
            runs = [_host_loop(timer, sync, case.number, case.count) for _ in range(case.repeat)]
        out[lib] = statistics.median(runs) * 1e6 / case.count
    return out


def fmt(v):
    if v is None:
        return "-"
    if v >= 1000:
        return "%.0f" % v
    return "%.3g" % v


def run(cases, title):
    """Times the cases and prints each row as soon as it is measured (a run
    cut short by a time limit keeps the rows it finished). PCS_BENCH_ONLY, a
    comma-separated list of substrings, keeps only the cases whose names
    contain one of them (PCS_BENCH_ONLY=float16,bfloat16 for the 16-bit rows)."""
    ns = _namespace()
    only = [w for w in os.environ.get("PCS_BENCH_ONLY", "").split(",") if w]
    if only:
        cases = [c for c in cases if any(w in c.name for w in only)]
    gpu = "cpu"
    if "torch" in ns:
        gpu = ns["torch"].cuda.get_device_name(0)
    elif ns["pcs"].cuda.is_available():
        gpu = ns["pcs"].cuda.get_device_name(0)
    print("\n%s on %s (median us per call; ratio = other / pycuda_sem, >1 means we are faster)"
          % (title, gpu))
    hdr = "%-38s %10s %10s %10s %9s %9s" % ("case", "pycuda_sem", "torch", "cupy", "x torch", "x cupy")
    print(hdr)
    print("-" * len(hdr), flush=True)
    results = []
    for c in cases:
        r = time_case(c, ns)
        ours = r["pycuda_sem"]
        rt = (r["torch"] / ours) if (ours and r["torch"]) else None
        rc = (r["cupy"] / ours) if (ours and r["cupy"]) else None
        extra = ""
        if c.bytes_moved and ours:
            extra = "  (%.0f GB/s ours%s)" % (c.bytes_moved / ours / 1e3, (
                ", %.0f torch" % (c.bytes_moved / r["torch"] / 1e3)) if r["torch"] else "")
        print("%-38s %10s %10s %10s %9s %9s%s" % (c.name, fmt(ours), fmt(r["torch"]), fmt(r["cupy"]),
                                                 "%.2f" % rt if rt else "-",
                                                 "%.2f" % rc if rc else "-", extra), flush=True)
        results.append({"case": c.name, "us": r, "ratio_torch": rt, "ratio_cupy": rc,
                        "bytes": c.bytes_moved})
    return {"title": title, "gpu": gpu, "rows": results}


def save(tables):
    import pycuda_sem
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S")
    gpu = tables[0]["gpu"] if tables else "cpu"
    info = {"date": stamp, "gpu": gpu, "python": platform.python_version(),
            "pycuda_sem": pycuda_sem.__version__, "cuda": pycuda_sem.version.cuda,
            "tables": tables}
    t = _try_import("torch")
    if t is not None:
        info["torch"] = t.__version__
    here = os.path.dirname(os.path.abspath(__file__))
    safe = "".join(ch if ch.isalnum() else "_" for ch in gpu)
    path = os.path.join(here, "results", "%s-%s.json" % (safe, stamp))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(dumps_rows(info))
    print("\nwritten to", os.path.relpath(path))
    return path


def dumps_rows(info):
    """info as JSON with one table row a line: a whole layout table stays a
    few hundred lines instead of ten per row."""
    tables = info.get("tables", [])
    head = json.dumps({k: v for k, v in info.items() if k != "tables"}, indent=1)[:-2]
    parts = []
    for t in tables:
        meta = json.dumps({k: v for k, v in t.items() if k != "rows"})[:-1]
        rows = ",\n".join("   " + json.dumps(r) for r in t.get("rows", []))
        parts.append('  %s, "rows": [\n%s\n  ]}' % (meta, rows))
    return '%s,\n "tables": [\n%s\n ]\n}\n' % (head, ",\n".join(parts))


def main(name, cases, title):
    """What a benchmark file runs when started alone: its table, saved, or
    a line saying there is no GPU to measure on."""
    import sys
    import pycuda_sem
    if not pycuda_sem.cuda.is_available():
        print("%s: no CUDA GPU here; the benchmarks compare GPU runtimes and need one." % name)
        sys.exit(0)
    save([run(cases, title)])
