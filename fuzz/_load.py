"""fuzz/_load.py: imports pycuda_sem for the fuzz scripts: the instrumented copy
in build-fuzz/pkg when PYCUDA_SEM_FUZZ_PKG names it (`make fuzz`), else the
repository's own build."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load(instrument=None):
    """pycuda_sem, imported under `instrument` (a context manager) when given."""
    sys.path.insert(0, os.environ.get("PYCUDA_SEM_FUZZ_PKG") or ROOT)
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    if instrument is None:
        import pycuda_sem
        return pycuda_sem
    with instrument:
        import pycuda_sem
        import programs  # noqa: F401  (coverage of the interpreter guides the fuzzer too)
        import values  # noqa: F401
    return pycuda_sem
