"""cosine_similarity and pairwise_distance for torch.nn.functional
(re-exported by functional.py), with torch's formulas: cosine similarity
divides by max(|x1| |x2|, eps) after broadcasting; the pairwise distance is
the p-norm of x1 - x2 + eps over the last dim."""
from .. import _C
from .._math import broadcast_tensors

__all__ = ["cosine_similarity", "pairwise_distance"]


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    x1, x2 = broadcast_tensors(x1, x2)
    dot = (x1 * x2).sum(dim)
    n1 = x1.square().sum(dim)
    n2 = x2.square().sum(dim)
    return dot / (n1 * n2).clamp(min=eps * eps).sqrt()


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = x1 - x2 + eps
    if p == float("inf"):
        return d.abs().amax(-1, keepdim=keepdim)
    if p == 0:
        return (d != 0).to(d.dtype).sum(-1, keepdim=keepdim)
    return d.abs().pow(p).sum(-1, keepdim=keepdim).pow(1.0 / p)
