"""The layer rule of csrc/ (DESIGN.md): a folder includes only headers from
folders below it and calls only functions defined below it. The include check
reads the sources; the call check reads the build's objects with nm and skips
where they or nm are missing."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import check_layers  # noqa: E402


def test_includes_go_only_down():
    assert check_layers.include_breaches(ROOT) == []


def test_every_source_sits_in_a_layer_folder():
    top = [f for f in os.listdir(os.path.join(ROOT, "csrc"))
           if os.path.isfile(os.path.join(ROOT, "csrc", f))]
    assert top == []


def test_calls_go_only_down():
    if shutil.which("nm") is None:
        pytest.skip("nm is not installed")
    breaches, n = check_layers.symbol_breaches(ROOT)
    if n == 0:
        pytest.skip("no build objects under build/")
    assert breaches == []


def test_checker_reports_an_upward_include(tmp_path):
    (tmp_path / "csrc" / "core").mkdir(parents=True)
    (tmp_path / "csrc" / "core" / "x.c").write_text('#include "ops/ops.h"\n')
    out = check_layers.include_breaches(str(tmp_path))
    assert len(out) == 1 and "layer above" in out[0]
