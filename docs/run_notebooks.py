"""Execute the notebooks in docs/notebooks/ without Jupyter.

No nbclient, no kernel: the .ipynb JSON is read, its code cells are executed
in order in one namespace, and for each cell the runner captures stdout,
stderr, the value of a final expression (as Jupyter displays it: a matplotlib
figure as a PNG) and any exception. Each notebook runs in a fresh interpreter
of its own, so that statistics such as memory_allocated() start from zero as
in a new kernel.

A code cell whose first line is `# needs-gpus: N` is run only when at least N
GPUs are visible; otherwise its output says that it was skipped and why.

    python3 docs/run_notebooks.py                  # run all, report, exit 1 on an error
    python3 docs/run_notebooks.py --write          # ... and store the outputs in the .ipynb files
    python3 docs/run_notebooks.py --write --outdir DIR   # also bundle them as DIR/notebooks.tar.gz
    python3 docs/run_notebooks.py NAME.ipynb ...   # only these notebooks
"""
import argparse
import ast
import base64
import contextlib
import datetime
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NOTEBOOK_DIR = os.path.join(HERE, "notebooks")
NEEDS_GPUS = re.compile(r"^#\s*needs-gpus:\s*(\d+)\s*$")


def cell_source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def needed_gpus(source):
    first = source.lstrip("\n").split("\n", 1)[0]
    m = NEEDS_GPUS.match(first.strip())
    return int(m.group(1)) if m else 0


def _lines(text):
    return text.splitlines(True)


def run_cell(source, namespace, filename):
    """Execute one cell; return (outputs, error) in nbformat-4 output form."""
    out, err = io.StringIO(), io.StringIO()
    outputs, error, result = [], None, None
    try:
        tree = ast.parse(source, filename=filename)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                result = eval(compile(last, filename, "eval"), namespace)
    except BaseException as e:  # noqa: BLE001 (a notebook shows every error)
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        error = {"output_type": "error", "ename": type(e).__name__, "evalue": str(e),
                 "traceback": [line.rstrip("\n") for line in tb]}
    if out.getvalue():
        outputs.append({"output_type": "stream", "name": "stdout", "text": _lines(out.getvalue())})
    if err.getvalue():
        outputs.append({"output_type": "stream", "name": "stderr", "text": _lines(err.getvalue())})
    if result is not None and hasattr(result, "savefig"):
        # a matplotlib figure as the last expression: shown as Jupyter shows it, a PNG
        png = io.BytesIO()
        result.savefig(png, format="png", dpi=80)
        outputs.append({"output_type": "display_data", "metadata": {},
                        "data": {"image/png": base64.b64encode(png.getvalue()).decode("ascii"),
                                 "text/plain": _lines(repr(result))}})
    elif result is not None:
        outputs.append({"output_type": "execute_result", "execution_count": None, "metadata": {},
                        "data": {"text/plain": _lines(repr(result))}})
    if error:
        outputs.append(error)
    return outputs, error


def execute_notebook(path):
    """Run every code cell of the notebook at `path` in this process.

    Returns (notebook dict with outputs filled in, list of (cell index, error))."""
    sys.path.insert(0, ROOT)
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    import pycuda_sem  # noqa: F401  (the notebooks import it as torch)
    n_gpus = pycuda_sem.cuda.device_count()
    namespace = {"__name__": "__main__"}
    errors = []
    count = 0
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        count += 1
        source = cell_source(cell)
        need = needed_gpus(source)
        if need > n_gpus:
            outputs = [{"output_type": "stream", "name": "stdout",
                        "text": ["[skipped by docs/run_notebooks.py: this cell needs %d GPUs, this "
                                 "machine has %d]\n" % (need, n_gpus)]}]
        else:
            outputs, error = run_cell(source, namespace, "<%s cell %d>" % (os.path.basename(path), count))
            if error:
                errors.append((index, error))
        cell["outputs"] = outputs
        cell["execution_count"] = count
        for o in outputs:
            if o["output_type"] == "execute_result":
                o["execution_count"] = count
    gpu = ", ".join(pycuda_sem.cuda.get_device_name(i) for i in range(n_gpus)) or "no GPU"
    nb.setdefault("metadata", {}).setdefault("pycuda_sem", {})["executed_on"] = "%s, %s" % (
        gpu, datetime.date.today().isoformat())
    return nb, errors


def _child(path, write):
    t0 = time.perf_counter()
    nb, errors = execute_notebook(path)
    if write:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write("\n")
    for index, error in errors:
        print("cell %d: %s" % (index, "\n".join(error["traceback"])), file=sys.stderr)
    print(json.dumps({"notebook": os.path.basename(path), "errors": len(errors),
                      "seconds": round(time.perf_counter() - t0, 2),
                      "executed_on": nb["metadata"]["pycuda_sem"]["executed_on"]}))
    return 1 if errors else 0


def run_in_subprocess(path, write=False, timeout=300):
    """Run one notebook in a fresh interpreter; return (returncode, output)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", path] + (["--write"] if write else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return p.returncode, p.stdout + p.stderr


def all_notebooks():
    return sorted(os.path.join(NOTEBOOK_DIR, n) for n in os.listdir(NOTEBOOK_DIR)
                  if n.endswith(".ipynb"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", help="notebooks to run (default: all)")
    ap.add_argument("--write", action="store_true", help="store outputs in the .ipynb files")
    ap.add_argument("--outdir", help="also bundle the notebooks as OUTDIR/notebooks.tar.gz")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child, args.write)
    paths = [os.path.abspath(p) for p in args.notebooks] or all_notebooks()
    failed = 0
    t0 = time.perf_counter()
    for path in paths:
        rc, output = run_in_subprocess(path, write=args.write)
        failed += rc != 0
        print(("FAIL " if rc else "ok   ") + output.strip().splitlines()[-1] if output.strip()
              else "FAIL %s (no output)" % path)
        if rc:
            print(output)
    print("%d notebook(s), %d failed, %.1f s" % (len(paths), failed, time.perf_counter() - t0))
    if args.outdir:
        os.makedirs(args.outdir, exist_ok=True)
        bundle = os.path.join(args.outdir, "notebooks.tar.gz")
        with tarfile.open(bundle, "w:gz") as tar:
            for path in paths:
                tar.add(path, arcname=os.path.basename(path))
        print("bundled into", bundle)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
