#!/bin/sh
# tools/gpu_run.sh: what a session runs on the lent GPU machine, in one call.
#
# The machine starts bare and compiling every kernel there costs minutes of
# the session's device time, so kernel objects built here for sm_90
# (PYCUDA_SEM_ARCH=90 make build, then cp build/temp.*/csrc/kernels/*.o .kobj/,
# or, when the objects pass the 64 MiB a call carries (sm_80 and sm_90 both):
# tar -czf .kobj/kernels.tgz -C build/temp.*/csrc/kernels .)
# can travel with the call (carry [".kobj"]) and are reused; the host files
# are rebuilt there. Then: the given pytest arguments (default: the whole
# suite) and the given benchmark scripts, logs under $OUT.
#   sh tools/gpu_run.sh "tests" "benchmarks/bench_layouts.py --quick"
#   SHARDS=6 sh tools/gpu_run.sh      (the whole suite in 6 processes)
set -u
OUT=${OUT:-/tmp}
K=build/temp.linux-x86_64-cpython-$(python3 -c 'import sys; print("%d%d" % sys.version_info[:2])')/csrc/kernels
if [ -f .kobj/kernels.tgz ]; then
    mkdir -p "$K" && tar -xzf .kobj/kernels.tgz -C "$K" && touch "$K"/*.o
elif [ -d .kobj ] && ls .kobj/*.o >/dev/null 2>&1; then
    mkdir -p "$K" && cp .kobj/*.o "$K"/ && touch "$K"/*.o
fi
export PYCUDA_SEM_ARCH=${PYCUDA_SEM_ARCH:-90}
if ! make build > "$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"
    exit 1
fi
touch "$OUT/.stamp"
TESTS=${1:-tests}
if [ "${SHARDS:-1}" -gt 1 ]; then
    # The whole suite takes longer than a call may on one process: SHARDS
    # pytest processes share the GPU, the test files dealt out by size.
    i=0
    for f in $(ls -S tests/test_*.py); do
        k=$((i % SHARDS)); eval "s$k=\"\${s$k:-} $f\""; i=$((i + 1))
    done
    k=0
    while [ $k -lt "$SHARDS" ]; do
        eval "files=\$s$k"
        timeout "${SHARD_TIMEOUT:-400}" python3 -m pytest -q --tb=short -p no:cacheprovider \
            $files > "$OUT/shard$k.log" 2>&1 &
        k=$((k + 1))
    done
    wait
    k=0
    while [ $k -lt "$SHARDS" ]; do
        echo "shard $k: $(tail -1 "$OUT/shard$k.log")"
        grep -E "^(FAILED|ERROR)" "$OUT/shard$k.log" | head -20
        k=$((k + 1))
    done
else
    python3 -m pytest -q --tb=short -p no:cacheprovider $TESTS > "$OUT/test.log" 2>&1
    echo "pytest exit $?"
    grep -E "^(FAILED|ERROR)" "$OUT/test.log" | head -30
    tail -1 "$OUT/test.log"
fi
shift 2>/dev/null || true
for b in "$@"; do
    python3 $b > "$OUT/bench_$(basename ${b%% *} .py).log" 2>&1
    cat "$OUT/bench_$(basename ${b%% *} .py).log" | grep -v "^written to" | tail -120
done
# only this run's tables: at most 8 files come back
find benchmarks/results -name '*.json' -newer "$OUT/.stamp" -exec cp {} "$OUT"/ \;
rm -f "$OUT/.stamp"
true
