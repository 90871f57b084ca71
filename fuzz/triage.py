"""fuzz/triage.py: group saved crashing inputs by where they crash.

    python fuzz/triage.py [--asan] [--keep N] [--prune] FILE_OR_DIR...

Each input is replayed alone in a child (replay.py -v). With --asan the child
loads the instrumented build (`make fuzz-build`) under AddressSanitizer, and
the signature is ASan's verdict plus the first frame in csrc/; without it, the
signal (or SystemError) plus the call that was running. Prints one line per
distinct signature: how many inputs, the signature, the call as Python, an
example file. --prune deletes all but --keep inputs of each signature (and
their .txt traces), which keeps fuzz/crashes/ to distinct crashes.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ASAN_OPTIONS = ("detect_leaks=0:protect_shadow_gap=0:allocator_may_return_null=1:"
                "max_allocation_size_mb=2048:symbolize=1")


def child_env(asan):
    env = dict(os.environ)
    if asan:
        env.update(PYCUDA_SEM_FUZZ_PKG=os.path.join(ROOT, "build-fuzz", "pkg"),
                   LD_PRELOAD=os.path.join(ROOT, "build-fuzz", "asan_with_fuzzer.so"),
                   ASAN_OPTIONS=ASAN_OPTIONS, PYTHONMALLOC="malloc")
    return env


def last_call(lines):
    calls = [ln[4:] for ln in lines if ln.startswith(">>> ")]  # replay.py -v marks calls
    return calls[-1] if calls else "?"


def signature(path, asan, timeout):
    try:
        out = subprocess.run([sys.executable, os.path.join(HERE, "replay.py"), "-v", path],
                             capture_output=True, text=True, timeout=timeout, env=child_env(asan),
                             errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", "?"
    lines = out.stderr.splitlines()
    err = [ln for ln in lines if "ERROR: AddressSanitizer" in ln]
    frame = [m.group(1) for m in (re.search(r" in (\S+ \S*csrc/\S+)", ln) for ln in lines) if m]
    sysm = [ln for ln in lines if ln.startswith("SystemError")]
    fatal = [ln for ln in lines if ln.startswith("Fatal Python error")]
    if err:
        kind = re.sub(r".*AddressSanitizer: (\S+( on unknown address)?).*", r"\1", err[0])
        where = re.sub(r"^\S*csrc/", "", frame[0].split(" ", 1)[1]) if frame else "?"
        func = frame[0].split(" ")[0] if frame else "?"
        sig = "ASan %s in %s (%s)" % (kind, func, re.sub(r":\d+$", "", where))
        return sig + " @" + where.rsplit(":", 1)[-1] if frame else sig, last_call(lines)
    if sysm:
        return re.sub(r"0x[0-9a-f]+", "0x..", sysm[0]), last_call(lines)
    if fatal:
        return fatal[0], last_call(lines)
    if out.returncode < 0:
        return "signal %d" % -out.returncode, last_call(lines)
    if out.returncode != 0:
        return "exit %d" % out.returncode, last_call(lines)
    return "no crash", "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--asan", action="store_true")
    ap.add_argument("--keep", type=int, default=2)
    ap.add_argument("--prune", action="store_true")
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p)
                            if not f.endswith((".txt", ".md")) and not f.startswith("."))
        else:
            files.append(p)
    groups = collections.OrderedDict()
    for f in files:
        sig, call = signature(f, args.asan, args.timeout)
        # keep the line's key without the exact line number: one site, many lines
        key = re.sub(r" @\d+$", "", sig)
        groups.setdefault(key, []).append((f, call, sig))
    for key, items in groups.items():
        print("%4d  %s\n      %s\n      e.g. %s" % (len(items), items[0][2], items[0][1][:300],
                                                  items[0][0]))
        if args.prune and key != "no crash":
            for f, _, _ in items[args.keep:]:
                for victim in (f, f + ".txt"):
                    if os.path.exists(victim):
                        os.unlink(victim)
    return 0


if __name__ == "__main__":
    sys.exit(main())
