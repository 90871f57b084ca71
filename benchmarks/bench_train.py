"""Training steps side by side with torch (issue 16's speed item: "Training
step (forward, loss, backward, Adam) of a small MLP (784-256-256-10, batch 64):
host time per step at most half of torch's eager").

One step is what a training loop does per batch: forward through
nn.Sequential(Linear, ReLU, Linear, ReLU, Linear), CrossEntropyLoss on class
indices, backward, optimizer step, zero_grad (set_to_none, the default of
both). The batch stays on the GPU and nothing reads a value back, so the GPU
work (a few microseconds of kernels) never limits the loop: the time per
step is the host's cost of issuing it.

- Adam, torch's default (foreach on CUDA) and torch's fused=True;
- SGD with momentum 0.9, torch's default (foreach) and fused=True;
- forward + loss + backward alone, to split the step's cost.

Both libraries use TF32 matmuls (pycuda_sem's default, as the note says;
torch is switched to it in each setup). Timed by harness.py: a host loop of
steps closed by one synchronize, median of the repeats; ratio = torch's time /
ours (> 1: we are faster; the issue asks for >= 2 on the Adam rows).
Run alone (`python benchmarks/bench_train.py`) or through `make bench`;
`python benchmarks/bench_train.py --check` runs each case's setup and one step
on the CPU, to catch a broken statement on a machine without a GPU.
"""
try:  # torch first: importing it into a process already holding pycuda_sem crashed
    import torch  # noqa: F401
except ImportError:  # pragma: no cover
    torch = None

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402

TITLE = "Training steps, MLP 784-256-256-10, batch 64 (issue 16)"

# `lib` is pycuda_sem or torch; `dev` the device; %s the optimizer expression
_SETUP = """
lib.backends.cuda.matmul.allow_tf32 = True
lib.manual_seed(0)
nn = lib.nn
model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 10)).to(dev)
loss_fn = nn.CrossEntropyLoss()
opt = %s
x = lib.randn(64, 784, device=dev)
y = lib.randint(0, 10, (64,), device=dev)

def step():
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()

def fwd_bwd():
    loss_fn(model(x), y).backward()
    model.zero_grad()

step()  # the optimizer state and the caches are made on the first step
if dev != "cpu":
    lib.cuda.synchronize()
"""


def _setup(opt_ours, opt_torch, dev="cuda"):
    return {"pycuda_sem": "lib = pcs\ndev = %r\n" % dev + _SETUP % opt_ours,
            "torch": "lib = torch\ndev = %r\n" % dev + _SETUP % opt_torch}


_ADAM = "lib.optim.Adam(model.parameters(), lr=1e-3%s)"
_SGD = "lib.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9%s)"

# (name, statement, our optimizer, torch's optimizer)
_ROWS = [
    ("train step, Adam (torch default)", "step()", _ADAM % "", _ADAM % ""),
    ("train step, Adam (torch fused)", "step()", _ADAM % "", _ADAM % ", fused=True"),
    ("train step, SGD mom. (torch default)", "step()", _SGD % "", _SGD % ""),
    ("train step, SGD mom. (torch fused)", "step()", _SGD % "", _SGD % ", fused=True"),
    ("fwd + loss + bwd only", "fwd_bwd()", _ADAM % "", _ADAM % ""),
]

CASES = [harness.Case(name, stmt, torch=stmt, setup=_setup(ours, theirs),
                      number=2000, repeat=7, sync=True)
         for name, stmt, ours, theirs in _ROWS]


def check():
    """Every case's setup and one step, on the CPU, for both libraries
    (torch where it imports); fused torch optimizers need CUDA, so torch's
    fused rows are run with its default optimizer here."""
    import pycuda_sem
    libs = {"pycuda_sem": pycuda_sem}
    if torch is not None:
        libs["torch"] = torch
    for name, stmt, ours, theirs in _ROWS:
        setups = _setup(ours, theirs.replace(", fused=True", ""), dev="cpu")
        for lib, mod in libs.items():
            g = {"pcs": pycuda_sem, "torch": mod}
            tf32 = mod.backends.cuda.matmul.allow_tf32
            try:
                exec(setups[lib], g)
                exec(stmt, g)
            finally:
                mod.backends.cuda.matmul.allow_tf32 = tf32
        print("ok  %-40s (%s)" % (name, ", ".join(libs)))


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        check()
        sys.exit(0)
    import pycuda_sem
    if not pycuda_sem.cuda.is_available():
        print("bench_train: no GPU, nothing measured (--check runs the cases once on the CPU)")
        sys.exit(0)
    harness.save([harness.run(CASES, TITLE)])
