"""make bench: every benchmark table, pycuda_sem next to torch and CuPy, from
one run on one machine; the tables are also written to benchmarks/results/."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:  # torch before pycuda_sem: importing it into a process already holding pycuda_sem crashed
    import torch  # noqa: F401,E402
except ImportError:
    pass

import harness  # noqa: E402
import pycuda_sem  # noqa: E402


def run_script(here, name, needs):
    n = pycuda_sem.cuda.device_count()
    if n < needs:
        print("\n%s: needs %d GPUs, this machine has %d" % (name, needs, n))
        return
    args = [sys.executable, os.path.join(here, name + ".py")]
    if needs > 1:
        args += ["--nproc", str(n)]
    print("\n%s (%s)" % (name, " ".join(os.path.basename(a) for a in args[1:])), flush=True)
    subprocess.run(args, check=False)


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
        if not hasattr(mod, "CASES"):
            # a script with its own table (bench_autograd, bench_dist): run as
            # it runs alone, in a fresh interpreter, its table printed here
            run_script(here, name, getattr(mod, "NEEDS_GPUS", 1))
            continue
        if not mod.CASES:  # e.g. peer copies with one GPU
            continue
        tables.append(harness.run(mod.CASES, mod.TITLE))
    harness.save(tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
