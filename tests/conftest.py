"""Test configuration: tests marked ``cuda`` need a GPU, ``multigpu`` two or
more. On a machine without one they are skipped, never passed vacuously."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pycuda_sem  # noqa: E402

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
