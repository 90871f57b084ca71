"""The docs/api*.md reference files name every public name
of the public modules (CPU test)."""
import os
import re

import pycuda_sem
import pycuda_sem.accelerator
import pycuda_sem.backends
import pycuda_sem.backends.cuda
import pycuda_sem.backends.cudnn
import pycuda_sem.cuda
import pycuda_sem.distributed
import pycuda_sem.fft
import pycuda_sem.linalg
import pycuda_sem.nn
import pycuda_sem.nn.functional
import pycuda_sem.nn.init
import pycuda_sem.nn.parallel
import pycuda_sem.nn.utils
import pycuda_sem.optim
import pycuda_sem.optim.lr_scheduler
import pycuda_sem.profiler
import pycuda_sem.hub
import pycuda_sem.nn.attention
import pycuda_sem.random
import pycuda_sem.compiler
import pycuda_sem.quasirandom
import pycuda_sem.serialization
import pycuda_sem.signal.windows
import pycuda_sem.utils.checkpoint
import pycuda_sem.testing
import pycuda_sem.utils.data
import pycuda_sem.version
import pycuda_sem.library
import pycuda_sem.overrides
import pycuda_sem.types
import pycuda_sem.export
import pycuda_sem.ao.quantization
import pycuda_sem.func
import pycuda_sem.cuda.random
import pycuda_sem.cuda.memory
import pycuda_sem.cuda.streams
import pycuda_sem.cuda.graphs

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
API_MDS = [os.path.join(DOCS, n) for n in ("api.md", "api_cuda.md", "api_training.md", "api_ops.md",
                                            "api_distributions.md", "api_nn.md", "api_compat.md")]

MODULES = [pycuda_sem, pycuda_sem.cuda, pycuda_sem.backends, pycuda_sem.backends.cuda,
           pycuda_sem.backends.cudnn, pycuda_sem.fft, pycuda_sem.version, pycuda_sem.random,
           pycuda_sem.linalg, pycuda_sem.testing, pycuda_sem.nn, pycuda_sem.nn.functional,
           pycuda_sem.nn.init, pycuda_sem.nn.utils, pycuda_sem.nn.parallel,
           pycuda_sem.optim, pycuda_sem.optim.lr_scheduler, pycuda_sem.utils.data,
           pycuda_sem.distributed, pycuda_sem.special, pycuda_sem.jit, pycuda_sem.backends.mps,
           pycuda_sem.accelerator, pycuda_sem.foreach, pycuda_sem.profiler,
           pycuda_sem.onnx, pycuda_sem.fx,
           pycuda_sem.nn.attention, pycuda_sem.hub, pycuda_sem._dynamo, pycuda_sem.compiler,
           pycuda_sem.quasirandom, pycuda_sem.serialization, pycuda_sem.signal,
           pycuda_sem.signal.windows, pycuda_sem.utils.checkpoint, pycuda_sem.library,
           pycuda_sem.overrides, pycuda_sem.types, pycuda_sem.export, pycuda_sem.ao.quantization, pycuda_sem.func,
           pycuda_sem.cuda.random, pycuda_sem.cuda.memory, pycuda_sem.cuda.streams,
           pycuda_sem.cuda.graphs, pycuda_sem.ops]

ENV_VARS = ["CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "PYTORCH_NO_CUDA_MEMORY_CACHING",
            "PYCUDA_SEM_ARCH", "PYCUDA_SEM_JOBS", "CUDA_HOME"]

# Modules imported by a module for its own use are not part of its API.
IMPORTED_HELPERS = {"sys", "types", "math", "warnings", "contextlib", "collections", "enum", "io",
                    "os", "pickle", "pickletools", "struct", "zipfile", "np"}


def _public(module):
    return sorted(n for n in dir(module) if not n.startswith("_")
                  and not (n in IMPORTED_HELPERS and type(getattr(module, n)).__name__ == "module"))


def _words():
    words = set()
    for path in API_MDS:
        with open(path, encoding="utf-8") as f:
            words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
    return words


def test_every_public_name_is_documented():
    words = _words()
    missing = ["%s.%s" % (m.__name__, n) for m in MODULES for n in _public(m) if n not in words]
    assert not missing, "docs/api.md does not mention: " + ", ".join(missing)


def test_multiprocessing_additions_are_documented():
    # The module re-exports the standard multiprocessing (documented by Python);
    # only the names it adds are checked.
    import pycuda_sem.multiprocessing as mp
    words = _words()
    own = [n for n in mp.__all__ if n not in __import__("multiprocessing").__all__]
    assert own and [n for n in own if n not in words] == []


def test_every_public_tensor_method_is_documented():
    words = _words()
    missing = [n for n in dir(pycuda_sem.Tensor) if not n.startswith("_") and n not in words]
    assert not missing, "docs/api.md does not mention Tensor." + ", Tensor.".join(missing)


def test_class_members_are_documented():
    words = _words()
    classes = [pycuda_sem.cuda.Stream, pycuda_sem.cuda.Event, pycuda_sem.UntypedStorage,
               pycuda_sem.device, pycuda_sem.dtype, pycuda_sem.Size,
               pycuda_sem.backends.cuda.cuFFTPlanCache, pycuda_sem.optim.Optimizer,
               pycuda_sem.optim.lr_scheduler.LRScheduler, pycuda_sem.distributed.TCPStore,
               pycuda_sem.distributed.FileStore, pycuda_sem.distributed.PrefixStore,
               pycuda_sem.distributed.Work, pycuda_sem.distributed.ProcessGroup,
               pycuda_sem.quasirandom.SobolEngine]
    missing = ["%s.%s" % (c.__name__, n) for c in classes for n in vars(c)
               if not n.startswith("_") and n not in words]
    assert not missing, "docs/api.md does not mention: " + ", ".join(missing)


def test_environment_variables_are_documented():
    words = _words()
    assert [v for v in ENV_VARS if v not in words] == []
