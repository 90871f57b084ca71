"""Optimizer steps side by side with torch (issue 16's speed item: "Adam step
over 100 parameter tensors totalling 10^8 floats: at least torch's fused Adam
bandwidth").

- Adam step over 100 float32 CUDA tensors of mixed sizes totalling 10^8
  elements, every parameter with a gradient: ours (the default, the
  multi-tensor C path) against torch's Adam(fused=True) and
  Adam(foreach=True). Bandwidth counts the bytes one step must move: params
  read and written, grads read, exp_avg and exp_avg_sq read and written,
  28 bytes an element (2.8 GB a step).
- The same for SGD with momentum (params r+w, grads r, buffer r+w: 20 bytes
  an element) against torch's fused SGD.
- Adam over the 6 tensors of a 784-256-256-10 MLP: the host cost of a step.

Timed by harness.py: a host loop of steps closed by a synchronize, median of
the repeats; ratio = torch's time / ours (> 1: we are faster).
Run alone (`python benchmarks/bench_optim.py`) or through `make bench`.
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

TITLE = "Optimizer steps (issue 16)"

N_TENSORS = 100
TOTAL = 10 ** 8


def _sizes():
    """100 sizes in the ratio 1:2:...:10, repeated, summing to exactly 10^8."""
    w = [i % 10 + 1 for i in range(N_TENSORS)]
    sizes = [TOTAL * x // sum(w) for x in w]
    sizes[-1] += TOTAL - sum(sizes)
    return sizes


SIZES = _sizes()

_SETUP = """
sizes = %r
ps = [lib.randn(n, device="cuda").requires_grad_() for n in sizes]
for p in ps:
    p.grad = lib.randn(p.numel(), device="cuda")
opt = %s
opt.step()  # the state is made on the first step
lib.cuda.synchronize()
"""

_MLP = """
shapes = [(256, 784), (256,), (256, 256), (256,), (10, 256), (10,)]
ps = [lib.randn(*s, device="cuda").requires_grad_() for s in shapes]
for p in ps:
    p.grad = lib.randn(*p.shape, device="cuda")
opt = lib.optim.Adam(ps, lr=1e-3%s)
opt.step()
lib.cuda.synchronize()
"""


def _setup(opt_ours, opt_torch, template=_SETUP):
    return {"pycuda_sem": "lib = pcs\n" + template % (SIZES, opt_ours),
            "torch": "lib = torch\n" + template % (SIZES, opt_torch)}


def _mlp_setup(torch_kw):
    return {"pycuda_sem": "lib = pcs\n" + _MLP % "", "torch": "lib = torch\n" + _MLP % torch_kw}


CASES = [
    harness.Case("Adam, 100 tensors, 1e8 fp32 (torch fused)", "opt.step()", torch="opt.step()",
                 setup=_setup("lib.optim.Adam(ps, lr=1e-3)",
                              "lib.optim.Adam(ps, lr=1e-3, fused=True)"),
                 number=20, repeat=7, sync=True, bytes_moved=28 * TOTAL),
    harness.Case("Adam, 100 tensors, 1e8 fp32 (torch foreach)", "opt.step()", torch="opt.step()",
                 setup=_setup("lib.optim.Adam(ps, lr=1e-3)",
                              "lib.optim.Adam(ps, lr=1e-3, foreach=True)"),
                 number=20, repeat=7, sync=True, bytes_moved=28 * TOTAL),
    harness.Case("AdamW amsgrad, 100 tensors (torch fused)", "opt.step()", torch="opt.step()",
                 setup=_setup("lib.optim.AdamW(ps, lr=1e-3, amsgrad=True)",
                              "lib.optim.AdamW(ps, lr=1e-3, amsgrad=True, fused=True)"),
                 number=20, repeat=7, sync=True, bytes_moved=36 * TOTAL),
    harness.Case("SGD momentum, 100 tensors (torch fused)", "opt.step()", torch="opt.step()",
                 setup=_setup("lib.optim.SGD(ps, lr=1e-3, momentum=0.9)",
                              "lib.optim.SGD(ps, lr=1e-3, momentum=0.9, fused=True)"),
                 number=20, repeat=7, sync=True, bytes_moved=20 * TOTAL),
    harness.Case("Adam, MLP 784-256-256-10 (torch fused)", "opt.step()", torch="opt.step()",
                 setup=_mlp_setup(", fused=True"), number=2000, repeat=7, sync=True),
    harness.Case("Adam, MLP 784-256-256-10 (torch foreach)", "opt.step()", torch="opt.step()",
                 setup=_mlp_setup(", foreach=True"), number=2000, repeat=7, sync=True),
]


if __name__ == "__main__":
    harness.main("bench_optim", CASES, TITLE)
