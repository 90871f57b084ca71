"""fuzz/fuzz_api.py: the coverage-guided fuzzer (`make fuzz`, FUZZ_ENGINE=atheris).

libFuzzer, through atheris, mutates byte strings; programs.py turns each into
a program of API calls. Coverage comes from pycuda_sem's Python (atheris'
bytecode instrumentation) and from the C extension, built with clang and
-fsanitize=address,fuzzer-no-link into build-fuzz/ (`make fuzz-build`).
A program that raises SystemError raises it out of TestOneInput, so libFuzzer
records the input as a crash, as it does for ASan reports and signals.

Run through `make fuzz`; by hand:
    PYCUDA_SEM_FUZZ_PKG=build-fuzz/pkg LD_PRELOAD=build-fuzz/asan_with_fuzzer.so \\
    ASAN_OPTIONS=detect_leaks=0:protect_shadow_gap=0 PYTHONMALLOC=malloc \\
    .venv/bin/python fuzz/fuzz_api.py -max_total_time=60 fuzz/corpus
libFuzzer's -fork mode starts copies of argv[0], so argv[0] becomes
fuzz/fuzz_api.sh, which runs this file again with the same Python.
"""
import os
import sys

import atheris

from _load import HERE, load

torch = load(atheris.instrument_imports(include=["pycuda_sem", "programs", "values"]))
import programs  # noqa: E402


def test_one_input(data):
    programs.run_program(torch, data)


def main():
    os.environ.setdefault("PYCUDA_SEM_FUZZ_PY", sys.executable)
    argv = [os.path.join(HERE, "fuzz_api.sh")] + sys.argv[1:]
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
