"""Write docs/notebooks/*.ipynb: one notebook per section of the CUDA semantics note.

The notebooks are defined in notebook_cells/ (one module a notebook) as lists
of cells, so that their code can be
reviewed and diffed as Python. This script writes them; when a
notebook's code cells are unchanged it keeps the outputs already stored in
the .ipynb (so prose edits keep the last real run), otherwise (or with
--clear) it writes no outputs. `python3 docs/run_notebooks.py --write`
executes them on a GPU machine and stores the outputs.

A code cell whose first line is `# needs-gpus: N` is run only when at least N
GPUs are visible; otherwise the runner records that it was skipped and why.
Notebook metadata `pycuda_sem.needs_gpu` tells tests/test_notebooks.py whether
the notebook needs a GPU at all.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "notebooks")
sys.path.insert(0, HERE)
from notebook_cells.common import NOTEBOOKS  # noqa: E402

# One module a notebook under notebook_cells/; importing registers its cells.
for _f in sorted(os.listdir(os.path.join(HERE, "notebook_cells"))):
    if _f.startswith("nb") and _f.endswith(".py"):
        __import__("notebook_cells." + _f[:-3])


def to_ipynb(needs_gpu, cells):
    nb_cells = []
    for kind, src in cells:
        lines = src.splitlines(True)
        if kind == "markdown":
            nb_cells.append({"cell_type": "markdown", "metadata": {}, "source": lines})
        else:
            nb_cells.append({"cell_type": "code", "execution_count": None, "metadata": {},
                             "outputs": [], "source": lines})
    return {
        "cells": nb_cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "pycuda_sem": {"needs_gpu": needs_gpu},
        },
        "nbformat": 4,
        "nbformat_minor": 4,
    }


def _code_sources(nb):
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def carry_outputs(old, new):
    """Copy outputs from `old` into `new` when their code cells are identical, so
    that prose edits keep the outputs of the last real run. Returns True if kept."""
    if _code_sources(old) != _code_sources(new):
        return False
    old_code = [c for c in old["cells"] if c["cell_type"] == "code"]
    new_code = [c for c in new["cells"] if c["cell_type"] == "code"]
    for o, n in zip(old_code, new_code):
        n["outputs"] = o.get("outputs", [])
        n["execution_count"] = o.get("execution_count")
    executed = old.get("metadata", {}).get("pycuda_sem", {}).get("executed_on")
    if executed:
        new["metadata"]["pycuda_sem"]["executed_on"] = executed
    return True


def main(argv):
    clear = "--clear" in argv
    os.makedirs(OUT, exist_ok=True)
    for name, (needs_gpu, cells) in NOTEBOOKS.items():
        path = os.path.join(OUT, name + ".ipynb")
        nb = to_ipynb(needs_gpu, cells)
        note = "without outputs"
        if not clear and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                if carry_outputs(json.load(f), nb):
                    note = "outputs kept (code unchanged)"
                else:
                    note = "code changed: outputs dropped, rerun docs/run_notebooks.py --write"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print("wrote", os.path.relpath(path), "-", note)


if __name__ == "__main__":
    main(sys.argv[1:])
