"""check_layers.py: the layer rule of csrc/, checked.

csrc/ has one folder a layer, from the bottom: kernels, core, runtime, tensor,
ops, autograd, distributed, python. A file may include only headers of its own
folder or of folders below it, and (when the build's objects are there) may
call only functions defined in its own layer or below. Run it from the
repository root; it prints each breach and exits 1 if there is one.

    python3 tools/check_layers.py            # includes only
    python3 tools/check_layers.py --objects  # and the objects' symbols (nm)
"""
import glob
import os
import re
import subprocess
import sys

LAYERS = ["kernels", "core", "runtime", "tensor", "ops", "autograd", "distributed", "python"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    parts = os.path.normpath(path).split(os.sep)
    return parts[parts.index("csrc") + 1] if "csrc" in parts else None


def include_breaches(root):
    out = []
    files = [f for f in glob.glob(os.path.join(root, "csrc", "**", "*"), recursive=True)
             if f.endswith((".c", ".h", ".cu", ".cuh"))]
    for f in sorted(files):
        me = layer_of(f)
        if me not in RANK:
            out.append("%s: not in a layer folder" % f)
            continue
        for inc in INCLUDE.findall(open(f, encoding="utf-8").read()):
            if me == "kernels" and "/" not in inc:
                continue  # kernels include their neighbours by bare name
            top = inc.split("/")[0]
            if top not in RANK:
                out.append("%s: include \"%s\" names no layer folder" % (f, inc))
            elif RANK[top] > RANK[me]:
                out.append("%s (%s) includes \"%s\" from the layer above (%s)" % (f, me, inc, top))
    return out


def symbol_breaches(root):
    objs = glob.glob(os.path.join(root, "build", "temp*", "csrc", "*", "*.o"))
    defined, undefined = {}, {}
    for o in objs:
        nm = subprocess.run(["nm", o], capture_output=True, text=True).stdout
        for line in nm.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBR":
                defined[p[2]] = o
            elif len(p) == 2 and p[0] == "U":
                undefined.setdefault(o, set()).add(p[1])
    out = []
    for o, syms in sorted(undefined.items()):
        me = layer_of(o)
        for s in sorted(syms):
            if s in defined and RANK[layer_of(defined[s])] > RANK[me]:
                out.append("%s (%s) calls %s of %s" % (os.path.basename(o), me, s,
                                                      os.path.basename(defined[s])))
    return out, len(objs)


def main(argv):
    root = os.getcwd()
    breaches = include_breaches(root)
    if "--objects" in argv:
        more, n = symbol_breaches(root)
        if n == 0:
            print("no objects under build/: run make build first")
            return 2
        breaches += more
    for b in breaches:
        print(b)
    print("%d breach(es) of the layer rule" % len(breaches))
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
