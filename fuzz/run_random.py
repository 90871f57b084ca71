"""fuzz/run_random.py: the fuzzer without atheris or clang (`make fuzz
FUZZ_ENGINE=random`; the default where atheris is missing, e.g. the GPU machine).

Seeded random byte strings go through the same interpreter (programs.py) as
libFuzzer's. Programs run in batches in a forked child: the parent imports
pycuda_sem but never touches CUDA, so every child starts CUDA afresh. The
child tells the parent, through a pipe, which seed it is about to run; when
it dies of a signal (or stops for --timeout seconds), that seed runs again
alone in a fresh child to confirm, and a confirmed crash's bytes are saved in
--crashes as crash-random-<seed> with its trace beside it (.txt). A SystemError
is reported by the child and confirmed the same way.

    python fuzz/run_random.py --seconds 600 --crashes fuzz/crashes [--seed N] [--only ACTION]
"""
import argparse
import collections
import os
import re
import random
import select
import signal
import sys
import time

from _load import load

torch = load()
import programs  # noqa: E402

BATCH = 200


def program_bytes(seed):
    rng = random.Random(seed)
    return rng.randbytes(rng.choice([4, 8, 16, 32, 64, 128, 256]))


def child(first, count, wfd, echo):
    """Run seeds first..first+count-1; report each start and each SystemError."""
    for seed in range(first, first + count):
        os.write(wfd, b"S %d\n" % seed)
        try:
            programs.run_program(torch, program_bytes(seed), echo)
        except SystemError as e:
            os.write(wfd, b"E %d %s\n" % (seed, repr(e)[:200].encode("utf-8", "replace")))
    os._exit(0)


def run_batch(first, count, timeout, trace_path=None):
    """Fork a child over a batch. Returns (seeds run, [(seed, what)] failures)."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        child(first, count, wfd, open(trace_path, "w") if trace_path else None)
    os.close(wfd)
    last, failures, buf, stamp = None, [], b"", time.time()
    while True:
        ready, _, _ = select.select([rfd], [], [], 1.0)
        if ready:
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                kind, seed, *rest = line.decode("utf-8", "replace").split(" ", 2)
                if kind == "S":
                    last, stamp = int(seed), time.time()
                else:
                    failures.append((int(seed), "SystemError " + (rest[0] if rest else "")))
        elif time.time() - stamp > timeout:
            os.kill(pid, signal.SIGKILL)
            failures.append((last, "timeout"))
            break
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
        failures.append((last, "signal %s" % signal.Signals(os.WTERMSIG(status)).name))
    elif os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0:
        failures.append((last, "exit %d" % os.WEXITSTATUS(status)))
    ran = (last - first + 1) if last is not None else 0
    return ran, failures


def crash_key(what, trace_path):
    """What failed, and the call that was running without its arguments:
    the random engine keeps only KEEP inputs of each (triage.py --asan says
    exactly where each crashes)."""
    with open(trace_path) as f:
        calls = [ln[4:].strip() for ln in f if ln.startswith(">>> ")]
    call = re.sub(r"^in \d threads: ", "", calls[-1] if calls else "")
    call = re.sub(r"^v\d+", "v", re.split(r"[([]", call, maxsplit=1)[0])
    return re.sub(r"0x[0-9a-f]+", "", what), call


KEEP = 2
seen = collections.Counter()


def confirm(seed, timeout, crashes):
    """Run one seed alone; save it when it fails again and is not the KEEP+1th
    of its kind. Returns the verdict."""
    path = os.path.join(crashes, "crash-random-%d" % seed)
    ran, failures = run_batch(seed, 1, timeout, path + ".txt")
    what = [w for s, w in failures if s == seed and w != "timeout"]
    key = crash_key(what[0], path + ".txt") if what else None
    if key:
        seen[key] += 1
    if not what or seen[key] > KEEP:
        os.unlink(path + ".txt")
        return what[0] + " (seen %d times)" % seen[key] if what else None
    with open(path, "wb") as f:
        f.write(program_bytes(seed))
    with open(path + ".txt", "a") as f:
        f.write("# %s\n" % what[0])
    return what[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--crashes", default=os.path.join(os.path.dirname(__file__), "crashes"))
    ap.add_argument("--seed", type=int, default=int(time.time()) % 10**9 * 1000)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--only", help="run only this action of programs.ACTIONS (e.g. "
                    "act_tensor_api); saved inputs then replay only under the same --only")
    args = ap.parse_args()
    if args.only:
        programs.ACTIONS[:] = [getattr(programs, args.only)]
    os.makedirs(args.crashes, exist_ok=True)
    end, seed, total, found, failed = time.time() + args.seconds, args.seed, 0, [], 0
    print("random fuzzing from seed %d for %.0f s" % (seed, args.seconds), flush=True)
    while time.time() < end:
        ran, failures = run_batch(seed, BATCH, args.timeout)
        total += ran
        for s, what in failures:
            if s is None:
                continue
            verdict = confirm(s, args.timeout, args.crashes)
            if verdict is None:
                print("seed %d: %s (not alone: not saved)" % (s, what), flush=True)
            elif "(seen" not in verdict:
                print("seed %d: %s" % (s, what), flush=True)
                found.append(s)
            failed += 1
        seed += max(ran, 1)  # resume after the seed that stopped the batch
    print("random fuzzing: %d programs, %d failed, %d kinds of failure, %d inputs saved in %s"
          % (total, failed, len(seen), len(found), args.crashes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
