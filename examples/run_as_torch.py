"""Run an ordinary PyTorch script with `torch` resolving to pycuda_sem.

    python examples/run_as_torch.py examples/mnist_cnn.py [args...]

A finder placed first on sys.meta_path answers every `torch` and `torch.*`
import with the pycuda_sem module of the same name, so the script runs
unchanged, as if its first line were `import pycuda_sem as torch`.
"""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pycuda_sem  # noqa: E402,F401


class _TorchIsPycudaSem(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("pycuda_sem" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass  # already imported by create_module


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: run_as_torch.py script.py [args...]")
    sys.meta_path.insert(0, _TorchIsPycudaSem())
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
