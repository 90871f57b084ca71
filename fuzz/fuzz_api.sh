#!/bin/sh
# libFuzzer's -fork mode re-runs argv[0]: run fuzz_api.py with the same Python.
exec "${PYCUDA_SEM_FUZZ_PY:-python3}" "$(dirname "$0")/fuzz_api.py" "$@"
