"""fuzz/fuzz_api.py: the coverage-guided fuzzer (`make fuzz`, FUZZ_ENGINE=atheris).

libFuzzer, through atheris, mutates byte strings; programs.py turns each into
a program of API calls. Coverage comes from pycuda_sem's Python (atheris'
bytecode instrumentation) and from the C extension, built with clang and
-fsanitize=address,fuzzer-no-link into build-fuzz/ (`make fuzz-build`).
ASan reports and signals are libFuzzer's crashes; a SystemError is saved in
fuzz/crashes/ by the harness itself (see SYSERR below), or raised out of
TestOneInput with PYCUDA_SEM_FUZZ_SYSERR=raise, which libFuzzer records as a crash.

Run through `make fuzz`; by hand:
    PYCUDA_SEM_FUZZ_PKG=build-fuzz/pkg LD_PRELOAD=build-fuzz/asan_with_fuzzer.so \\
    ASAN_OPTIONS=detect_leaks=0:protect_shadow_gap=0 PYTHONMALLOC=malloc \\
    .venv/bin/python fuzz/fuzz_api.py -max_total_time=60 fuzz/corpus
libFuzzer's -fork mode starts copies of argv[0], so argv[0] becomes
fuzz/fuzz_api.sh, which runs this file again with the same Python.
"""
import hashlib
import os
import re
import sys

import atheris

from _load import HERE, load

torch = load(atheris.instrument_imports(include=["pycuda_sem", "programs", "values"]))
import programs  # noqa: E402


# A SystemError is an easy find (set_default_dtype(None) is three bytes away):
# crashing on it restarts the process, and with -fork the fuzzer then spends
# its time restarting instead of going deeper. So by default the input is saved
# here, twice at most per message, and fuzzing goes on; only signals and ASan
# reports stop a run. PYCUDA_SEM_FUZZ_SYSERR=raise raises instead.
SYSERR = os.environ.get("PYCUDA_SEM_FUZZ_SYSERR", "save")
CRASHES = os.path.join(HERE, "crashes")
seen = {}


def test_one_input(data):
    try:
        programs.run_program(torch, data)
    except SystemError as e:
        if SYSERR == "raise":
            raise
        key = re.sub(r"0x[0-9a-f]+", "", str(e))
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= 2:
            name = "crash-syserr-" + hashlib.sha1(data).hexdigest()
            with open(os.path.join(CRASHES, name), "wb") as f:
                f.write(data)


def main():
    os.environ.setdefault("PYCUDA_SEM_FUZZ_PY", sys.executable)
    argv = [os.path.join(HERE, "fuzz_api.sh")] + sys.argv[1:]
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
