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
#   SHARDS=10 sh tools/gpu_run.sh     (the whole suite in 10 processes)
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
    # pytest processes share the GPU. The two slowest files get a process
    # each; the others are dealt out by size (CUDA files counted twice), the
    # next to the lightest shard. 10 shards ran the suite in 3.5 minutes on
    # the H100 (2026-11-28).
    python3 - "$SHARDS" > "$OUT/shards.txt" <<'PY'
import glob, os, sys
n = int(sys.argv[1])
alone = [f for f in ("tests/test_softmax_cuda.py", "tests/test_layouts_cuda.py") if os.path.exists(f)][:n - 1]
rest = [f for f in sorted(glob.glob("tests/test_*.py")) if f not in alone]
size = {f: os.path.getsize(f) * (2 if "cuda" in f else 1) for f in rest}
shards, load = [[f] for f in alone] + [[] for _ in range(n - len(alone))], [float("inf")] * len(alone) + [0] * (n - len(alone))
for f in sorted(rest, key=size.get, reverse=True):
    k = load.index(min(load))
    shards[k].append(f)
    load[k] += size[f]
print("\n".join(" ".join(s) for s in shards if s))
PY
    # The shard logs stay outside $OUT (a call brings back few files): a
    # progress file there is rewritten every 15 s, so a call cut short by
    # its time limit still returns each shard's last line and failures, and
    # the logs are joined into $OUT/suite.log at the end.
    SH=${TMPDIR:-/tmp}/pcs_shards
    rm -rf "$SH" && mkdir -p "$SH"
    k=0
    pids=""
    while read -r files; do
        timeout "${SHARD_TIMEOUT:-400}" python3 -m pytest -q --tb=short -p no:cacheprovider \
            $files > "$SH/shard$k.log" 2>&1 &
        pids="$pids $!"
        k=$((k + 1))
    done < "$OUT/shards.txt"
    SHARDS=$k
    progress() {
        j=0
        while [ $j -lt "$SHARDS" ]; do
            echo "shard $j: $(tail -c 300 "$SH/shard$j.log" | tail -1)"
            grep -E "^(FAILED|ERROR)" "$SH/shard$j.log" | head -20
            j=$((j + 1))
        done
    }
    ( while true; do sleep 15; progress > "$OUT/progress.tmp" && mv "$OUT/progress.tmp" "$OUT/progress.txt"; done ) &
    watcher=$!
    wait $pids
    kill $watcher 2>/dev/null
    progress | tee "$OUT/progress.txt"
    cat "$SH"/shard*.log > "$OUT/suite.log"
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
