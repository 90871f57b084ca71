"""The notebooks of docs/notebooks/: each one is executed cell by cell by the
in-repo runner (docs/run_notebooks.py), in a fresh interpreter. Notebooks that
need a GPU are marked cuda and skip without one; cells that need more GPUs than
the machine has are skipped by the runner itself (`# needs-gpus: N`)."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "docs"))

import make_notebooks  # noqa: E402
import run_notebooks  # noqa: E402

NOTEBOOKS = run_notebooks.all_notebooks()


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _param(path):
    needs_gpu = _load(path)["metadata"]["pycuda_sem"]["needs_gpu"]
    marks = [pytest.mark.cuda] if needs_gpu else []
    return pytest.param(path, marks=marks, id=os.path.basename(path))


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS])
def test_notebook_runs(path):
    rc, output = run_notebooks.run_in_subprocess(path)
    assert rc == 0, output


def test_one_notebook_per_section():
    names = {os.path.splitext(os.path.basename(p))[0] for p in NOTEBOOKS}
    assert names == set(make_notebooks.NOTEBOOKS)
    assert len(names) >= 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_matches_generator(path):
    """The committed notebooks hold the generator's cells (outputs aside)."""
    nb = _load(path)
    assert nb["nbformat"] == 4
    needs_gpu, cells = make_notebooks.NOTEBOOKS[os.path.splitext(os.path.basename(path))[0]]
    assert [(c["cell_type"], run_notebooks.cell_source(c)) for c in nb["cells"]] == list(cells)
    first_code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    assert run_notebooks.cell_source(first_code).startswith("import pycuda_sem as torch\n")


def test_runner_captures_output_results_errors_and_skips(tmp_path):
    nb = make_notebooks.to_ipynb(False, [
        ("code", "x = 6 * 7\nprint('hello')"),
        ("markdown", "text"),
        ("code", "x + 1"),
        ("code", "# needs-gpus: 99\nraise SystemExit('must not run')"),
        ("code", "1 / 0"),
        ("code", "import sys\nprint('late', file=sys.stderr)"),
    ])
    path = tmp_path / "t.ipynb"
    path.write_text(json.dumps(nb))
    out, errors = run_notebooks.execute_notebook(str(path))
    code = [c for c in out["cells"] if c["cell_type"] == "code"]
    assert code[0]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": ["hello\n"]}]
    assert code[1]["outputs"][0]["data"]["text/plain"] == ["43"]
    assert "needs 99 GPUs" in code[2]["outputs"][0]["text"][0]
    assert code[3]["outputs"][0]["ename"] == "ZeroDivisionError"
    assert code[4]["outputs"][0]["name"] == "stderr"
    assert [e["ename"] for _, e in errors] == ["ZeroDivisionError"]
    assert "executed_on" in out["metadata"]["pycuda_sem"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_committed_outputs_come_from_a_gpu_run(path):
    """Every code cell carries outputs from a run on a GPU, and the first cell
    says which GPU (docs/run_notebooks.py --write on the GPU machine)."""
    nb = _load(path)
    assert "executed_on" in nb["metadata"]["pycuda_sem"], "run docs/run_notebooks.py --write"
    assert not nb["metadata"]["pycuda_sem"]["executed_on"].startswith("no GPU")
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] for c in code)
    first = "".join("".join(o.get("text", [])) for o in code[0]["outputs"])
    assert "GPUs: " in first and "| none" not in first
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
