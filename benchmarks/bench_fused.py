"""Fused training layers (issue 16, "fused kernels where they pay"): layer_norm
forward+backward of [8192, 4096] in float32 and bfloat16, cross_entropy
forward+backward of [8192, 32000] float32 and [8192, 50257] bfloat16 logits
(GPT-2's vocabulary: rows off 16-byte boundaries), dropout(p=0.1) of 2^26 float32,
gelu forward+backward of 2^26 float32, next to torch. Inputs made once per
library; sync closes each loop.

Run with the others by `make bench`, or alone:
    python3 benchmarks/bench_fused.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import Case  # noqa: E402

TITLE = "Fused training layers: layer norm, cross entropy, dropout, GELU"


def _setup(body):
    return {"pycuda_sem": "import pycuda_sem.nn.functional as F; m = pcs; " + body,
            "torch": "import torch.nn.functional as F; m = torch; " + body}


def _ln(dtype):
    return _setup("x = m.randn(8192, 4096, device='cuda').to(m.%s).requires_grad_(); "
                  "w = m.ones(4096, device='cuda').to(m.%s).requires_grad_(); "
                  "b = m.zeros(4096, device='cuda').to(m.%s).requires_grad_(); "
                  "g = m.randn(8192, 4096, device='cuda').to(m.%s)" % ((dtype,) * 4))


XENT = _setup("x = m.randn(8192, 32000, device='cuda').requires_grad_(); "
              "t = m.randint(0, 32000, (8192,), device='cuda')")
XENT_GPT2 = _setup("x = m.randn(8192, 50257, device='cuda').to(m.bfloat16).requires_grad_(); "
                   "t = m.randint(0, 50257, (8192,), device='cuda')")
BIG = _setup("x = m.randn(1 << 26, device='cuda').requires_grad_(); g = m.randn(1 << 26, device='cuda')")

LN = "F.layer_norm(x, (4096,), w, b).backward(g)"
XE = "F.cross_entropy(x, t).backward()"
XE_LS = "F.cross_entropy(x, t, label_smoothing=0.1).backward()"


def _big(name, stmt, setup):
    return Case(name, stmt, stmt, None, setup=setup, number=10, repeat=7, sync=True)


CASES = [
    _big("layer_norm fwd+bwd [8192, 4096] float32", LN, _ln("float32")),
    _big("layer_norm fwd+bwd [8192, 4096] bfloat16", LN, _ln("bfloat16")),
    _big("layer_norm fwd [8192, 4096] float32", "F.layer_norm(x.detach(), (4096,), w.detach(), b.detach())",
         _ln("float32")),
    _big("cross_entropy fwd+bwd [8192, 32000] float32", XE, XENT),
    _big("cross_entropy fwd+bwd [8192, 32000], label_smoothing 0.1", XE_LS, XENT),
    _big("cross_entropy fwd+bwd [8192, 50257] bfloat16 (rows off 16-byte boundaries)", XE, XENT_GPT2),
    _big("dropout(p=0.1) 2^26 float32", "F.dropout(x.detach(), 0.1)", BIG),
    _big("gelu fwd+bwd 2^26 float32", "F.gelu(x).backward(g)", BIG),
    _big("gelu(tanh) fwd+bwd 2^26 float32", "F.gelu(x, approximate='tanh').backward(g)", BIG),
]


if __name__ == "__main__":
    import harness
    harness.main("bench_fused", CASES, TITLE)
