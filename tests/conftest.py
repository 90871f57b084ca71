"""Test configuration: tests marked ``cuda`` need a GPU, ``multigpu`` two or
more. On a machine without one they are skipped, never passed vacuously."""
import gc
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pycuda_sem  # noqa: E402
from pycuda_sem import cuda  # noqa: E402

N_GPUS = pycuda_sem.cuda.device_count()


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA GPU")
    config.addinivalue_line("markers", "multigpu: needs two or more CUDA GPUs")


def pytest_collection_modifyitems(config, items):
    no_gpu = pytest.mark.skip(reason="needs a CUDA GPU (none available)")
    one_gpu = pytest.mark.skip(reason="needs two or more CUDA GPUs")
    for item in items:
        if "cuda" in item.keywords and N_GPUS == 0:
            item.add_marker(no_gpu)
        if "multigpu" in item.keywords and N_GPUS < 2:
            item.add_marker(one_gpu)


def pytest_report_header(config):
    return "pycuda_sem sees %d CUDA GPU(s)" % N_GPUS


# ---- memory balance --------------------------------------------------------------
# A test that leaks a device tensor (a missed decref in C, a cycle that keeps a
# storage alive) passes on its own results; only the allocator's statistics show
# it. `balanced` makes a test fail unless cuda.memory_allocated() ends where it
# began. gc.collect() before the baseline, so that garbage of earlier tests is
# not freed mid-test (the figure would drop: a false failure, or a leak hidden);
# gc.collect() after, so that cycles the test made itself are not counted as a
# leak; synchronize() both times, so that no queued work is in flight when the
# figure is read.
# Use it as an argument, or for a whole module as
# pytest.mark.usefixtures("balanced") in pytestmark. test_allocator.py keeps a
# fixture of its own under the same name (it also empties the cache).


@pytest.fixture
def balanced_warmup():
    """Runs before the baseline is taken. A module whose tests create
    per-device state that lives on, and holds allocator memory, on first use
    overrides it to create that state first, so it is not counted as a leak
    (test_blas.py: the cuBLAS handle and its workspace). Nothing by default."""


@pytest.fixture
def balanced(balanced_warmup):
    gc.collect()  # garbage of earlier tests must not be freed mid-test
    cuda.synchronize()
    before = cuda.memory_allocated()
    yield
    gc.collect()
    cuda.synchronize()
    assert cuda.memory_allocated() == before



# ---- float32 products in full precision ------------------------------------------
# TF32 is on by default here (the CUDA note's default), so float32 products on
# CUDA keep 10 mantissa bits; tests that hold them to float64 references turn it
# off for their duration with pytestmark = pytest.mark.usefixtures("no_tf32").


@pytest.fixture
def no_tf32():
    prev = pycuda_sem.backends.cuda.matmul.allow_tf32
    pycuda_sem.backends.cuda.matmul.allow_tf32 = False
    yield
    pycuda_sem.backends.cuda.matmul.allow_tf32 = prev

# ---- a time limit per test -------------------------------------------------------
# A test that waits forever (a deadlock, a lost message from a child process)
# would hold CI until its own limit kills the run, with nothing in the log to
# say where. Past PYCUDA_SEM_TEST_TIMEOUT seconds (300 by default, 0 turns
# it off) SIGALRM raises in the test's main thread, which interrupts lock and
# queue waits there: the test fails with the stack where it waited, and the
# run goes on. A wait that no signal interrupts (inside C) is caught by
# faulthandler 60 s later: it prints every thread's stack and ends the run.
# No test comes near the limit (the slowest takes a few seconds).
import faulthandler  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402

_TEST_TIMEOUT = float(os.environ.get("PYCUDA_SEM_TEST_TIMEOUT", "300"))


class TestTimeout(BaseException):
    """BaseException: a test's `except Exception` must not swallow it."""


def _on_alarm(signum, frame):
    raise TestTimeout("test still running after %g s (PYCUDA_SEM_TEST_TIMEOUT)" % _TEST_TIMEOUT)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    armed = (_TEST_TIMEOUT > 0 and hasattr(signal, "setitimer")
             and threading.current_thread() is threading.main_thread())
    if armed:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, _TEST_TIMEOUT)
        faulthandler.dump_traceback_later(_TEST_TIMEOUT + 60, exit=True)
    try:
        yield
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            faulthandler.cancel_dump_traceback_later()
            signal.signal(signal.SIGALRM, old)
