"""make bench: every benchmark table, pycuda_sem next to torch and CuPy, from
one run on one machine; the tables are also written to benchmarks/results/."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:  # torch before pycuda_sem: importing it into a process already holding pycuda_sem crashed
    import torch  # noqa: F401,E402
except ImportError:
    pass

import harness  # noqa: E402
import pycuda_sem  # noqa: E402


def main():
    if not pycuda_sem.cuda.is_available():
        print("make bench: no CUDA GPU here; the benchmarks compare GPU runtimes and need one.")
        return 0
    # every benchmarks/bench_*.py, sorted, after the runtime table; names on
    # the command line (e.g. `run.py bench_blas_fft`) select a subset
    here = os.path.dirname(os.path.abspath(__file__))
    names = sorted(f[:-3] for f in os.listdir(here)
                   if f.startswith("bench_") and f.endswith(".py") and f != "bench_runtime.py")
    wanted = sys.argv[1:]
    tables = []
    if not wanted or "bench_runtime" in wanted:
        import bench_runtime
        tables.append(harness.run(bench_runtime.CASES, "Runtime overheads"))
    for name in names:
        if wanted and name not in wanted:
            continue
        mod = __import__(name)
        if not hasattr(mod, "CASES"):  # a script with its own table (bench_autograd)
            print("\n%s: no harness cases; run `python benchmarks/%s.py`" % (name, name))
            continue
        if not mod.CASES:  # e.g. peer copies with one GPU
            continue
        tables.append(harness.run(mod.CASES, mod.TITLE))
    harness.save(tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
