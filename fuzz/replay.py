"""fuzz/replay.py: run saved fuzzer inputs through the program interpreter.

    python fuzz/replay.py [-v] FILE...

-v prints each call, as Python and after ">>> ", before making it (the last line printed before
a crash is the call that crashed). Exit status 0: every program ended without
SystemError; 3: SystemError (its traceback is printed); a crash kills the
process with its signal. tests/test_fuzz_regressions.py runs one file a child.
"""
import sys
import traceback

from _load import load

torch = load()
import programs  # noqa: E402


def main(args):
    echo = sys.stderr if "-v" in args else None
    status = 0
    for path in [a for a in args if a != "-v"]:
        with open(path, "rb") as f:
            data = f.read()
        try:
            programs.run_program(torch, data, echo)
        except SystemError:
            traceback.print_exc()
            print("SystemError in %s" % path, file=sys.stderr)
            status = 3
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
