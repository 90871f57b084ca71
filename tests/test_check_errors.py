"""tools/check_errors.py: it finds each kind of mistake, and the tree has none."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "check_errors.py")


def run(*files):
    return subprocess.run([sys.executable, TOOL, *files], capture_output=True, text=True)


def test_finds_each_rule_in_a_bad_sample():
    p = run(os.path.join(ROOT, "tests", "data", "check_errors_bad.c"))
    assert p.returncode == 1
    for rule, line in [("set-then-ok", 5), ("bare-null", 9), ("malloc-null", 12),
                       ("unchecked", 13), ("unchecked", 14), ("set-then-ok", 20), ("truth", 34)]:
        assert ":%d: [%s]" % (line, rule) in p.stdout, p.stdout
    assert "check_errors: 7 finding(s)" in p.stdout  # c() and d()'s checked calls pass


def test_csrc_follows_the_convention():
    p = run()
    assert p.returncode == 0, p.stdout
