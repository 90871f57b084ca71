"""pycuda_sem/_C.pyi matches the C module (CPU test).

The stub is parsed with ast: every public name of pycuda_sem._C has an entry (the
stub also covers the private helpers the Python layer calls, but new private test
hooks need not be added), the stub defines no function or class the module lacks, and each class in the stub lists exactly the public members of the
runtime class."""
import ast
import os

import pytest

import pycuda_sem
import pycuda_sem._C as C

PKG = os.path.dirname(os.path.abspath(pycuda_sem.__file__))
STUB = os.path.join(PKG, "_C.pyi")

# Type aliases the stub defines for its own annotations (not module names).
ALIASES = {"_bool", "_int", "_float", "_str", "_Number", "_DeviceLike", "_Size",
           "_TensorOrNumber", "_Dims", "_dtype", "_device"}


def _parse(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), filename=path)


def _tree():
    """_C.pyi with the stub files it re-exports (`from ._C_x import ...`)
    folded in: together they describe the one runtime module."""
    tree = _parse(STUB)
    for node in list(tree.body):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module.startswith("_C_"):
            part = _parse(os.path.join(PKG, node.module + ".pyi"))
            tree.body.extend(n for n in part.body if not isinstance(n, ast.ImportFrom))
    return tree


def _stub_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names - ALIASES


def _runtime_names():
    return {n for n in dir(C) if not (n.startswith("__") and n.endswith("__"))}


def test_stub_files_exist():
    assert os.path.isfile(STUB)
    assert os.path.isfile(os.path.join(PKG, "py.typed"))


def test_every_public_runtime_name_is_in_the_stub():
    public = {n for n in _runtime_names() if not n.startswith("_")}
    missing = sorted(public - _stub_names(_tree()))
    assert not missing, "missing from _C.pyi: %s" % missing


def test_stub_names_only_what_exists():
    extra = sorted(_stub_names(_tree()) - _runtime_names())
    assert not extra, "_C.pyi names what _C lacks: %s" % extra


def test_constants_are_annotated_with_their_type():
    for node in _tree().body:
        if isinstance(node, ast.AnnAssign):
            want = {"dtype": C.dtype, "memory_format": C.memory_format}[node.annotation.id]
            assert isinstance(getattr(C, node.target.id), want), node.target.id


def _members(cls_node):
    names = set()
    for node in cls_node.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def test_class_members_match():
    problems = []
    classes = {n.name: n for n in _tree().body if isinstance(n, ast.ClassDef)}
    for node in classes.values():
        if not isinstance(node, ast.ClassDef) or node.name == "OutOfMemoryError":
            continue
        cls = getattr(C, node.name)
        stub = _members(node)
        for base in node.bases:  # members inherited from a class of the stub
            if isinstance(base, ast.Name) and base.id in classes:
                stub |= _members(classes[base.id])
        runtime = {n for n in dir(cls) if not n.startswith("_")}
        if node.name == "_CudaDeviceProperties" or node.name.startswith("_return_types_"):
            runtime -= {"count", "index", "n_fields", "n_sequence_fields", "n_unnamed_fields"}
        if node.name == "Size":  # tuple's own methods come from the base class
            runtime -= {"count", "index"}
        if stub - runtime:
            problems.append("%s: stub only %s" % (node.name, sorted(stub - runtime)))
        if runtime - stub:
            problems.append("%s: runtime only %s" % (node.name, sorted(runtime - stub)))
    assert not problems, "; ".join(problems)


def test_public_classes_and_exception_are_in_the_stub():
    names = _stub_names(_tree())
    assert {n for n in dir(C) if isinstance(getattr(C, n), type)} <= names


def test_stub_mentions_the_context_managers():
    names = _stub_names(_tree())
    assert {"DeviceContext", "StreamContext", "Stream", "ExternalStream", "Event",
            "UntypedStorage", "Tensor", "Size", "dtype", "device"} <= names


USE = '''
import pycuda_sem._C as C
x: C.Tensor = C.randn(3, 3, device="cuda")
s = C.Stream()
with C.StreamContext(s):
    y = C.matmul(x, x) + 1
e = C.Event(enable_timing=True)
e.record(s)
ms: float = e.elapsed_time(e)
d: C.dtype = x.dtype
n: int = C.memory_allocated()
size: C.Size = x.shape
p: C._CudaDeviceProperties = C.get_device_properties(0)
print(y.sum(dim=1).item(), d.itemsize, size.numel(), C.float32.is_floating_point, p.name)
'''


def test_type_checker_accepts_stub_and_usage(tmp_path):
    """Runs mypy (strict on the stub) where it is installed; skipped elsewhere."""
    api = pytest.importorskip("mypy.api")
    use = tmp_path / "use.py"
    use.write_text(USE)
    env_path = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = os.path.dirname(PKG)
    try:
        out, err, rc = api.run(["--strict", "--follow-imports=silent", "--no-incremental",
                                STUB, str(use)])
    finally:
        if env_path is None:
            os.environ.pop("MYPYPATH", None)
        else:
            os.environ["MYPYPATH"] = env_path
    assert rc == 0, out + err
