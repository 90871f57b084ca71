"""make bench: every benchmark table, pycuda_sem next to torch and CuPy, from
one run on one machine; the tables are also written to benchmarks/results/."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402
import pycuda_sem  # noqa: E402


def main():
    if not pycuda_sem.cuda.is_available():
        print("make bench: no CUDA GPU here; the benchmarks compare GPU runtimes and need one.")
        return 0
    import bench_runtime
    tables = [harness.run(bench_runtime.CASES, "Runtime overheads")]
    for extra in ("bench_tensor", "bench_compute"):
        try:
            mod = __import__(extra)
        except ImportError:
            continue
        tables.append(harness.run(mod.CASES, mod.TITLE))
    harness.save(tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
