"""What every notebook definition shares: the cell constructors, the header
cell, and the registry that make_notebooks.py writes from."""

HEADER = '''import pycuda_sem as torch
import os, sys, time
n_gpus = torch.cuda.device_count()
print("pycuda_sem", torch.__version__, "| built for CUDA", torch.version.cuda)
print("GPUs:", n_gpus, "|", ", ".join(torch.cuda.get_device_name(i) for i in range(n_gpus)) or "none")'''


def md(text):
    return ("markdown", text.strip("\n"))


def code(text):
    return ("code", text.strip("\n"))


NOTEBOOKS = {}


def notebook(name, needs_gpu=True):
    def register(fn):
        NOTEBOOKS[name] = (needs_gpu, fn())
        return fn
    return register
