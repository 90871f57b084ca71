#!/bin/sh
# tools/gpu_run.sh: what a session runs on the lent GPU machine, in one call.
#
# The machine starts bare and compiling every kernel there costs minutes of
# the session's device time, so kernel objects built here for sm_90
# (PYCUDA_SEM_ARCH=90 make build, then cp build/temp.*/csrc/kernels/*.o .kobj/)
# can travel with the call (carry [".kobj"]) and are reused; the host files
# are rebuilt there. Then: the given pytest arguments (default: the whole
# suite) and the given benchmark scripts, logs under $OUT.
#   sh tools/gpu_run.sh "tests" "benchmarks/bench_layouts.py --quick"
set -u
OUT=${OUT:-/tmp}
K=build/temp.linux-x86_64-cpython-$(python3 -c 'import sys; print("%d%d" % sys.version_info[:2])')/csrc/kernels
if [ -d .kobj ] && ls .kobj/*.o >/dev/null 2>&1; then
    mkdir -p "$K" && cp .kobj/*.o "$K"/ && touch "$K"/*.o
fi
export PYCUDA_SEM_ARCH=${PYCUDA_SEM_ARCH:-90}
if ! make build > "$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"
    exit 1
fi
TESTS=${1:-tests}
python3 -m pytest -q --tb=short -p no:cacheprovider $TESTS > "$OUT/test.log" 2>&1
echo "pytest exit $?"
grep -E "^(FAILED|ERROR)" "$OUT/test.log" | head -30
tail -1 "$OUT/test.log"
shift 2>/dev/null || true
for b in "$@"; do
    python3 $b > "$OUT/bench_$(basename ${b%% *} .py).log" 2>&1
    cat "$OUT/bench_$(basename ${b%% *} .py).log" | grep -v "^written to" | tail -120
done
cp benchmarks/results/*.json "$OUT"/ 2>/dev/null
true
