"""torch.nn.attention.flex_attention, as torch runs it without torch.compile:
the unfused reference. The scores [B, H, L, S] are materialised, score_mod
and the block mask's mask_mod are evaluated once over broadcast index grids
(b [B,1,1,1], h [1,H,1,1], q_idx [1,1,L,1], kv_idx [1,1,1,S]) rather than
through vmap, so a mod written with tensor ops (comparisons, arithmetic,
where, indexing a tensor with the indices) gives torch's values; a mod that
branches in Python on an index's value does not work here (nor under vmap).
Autograd flows through every step. Rows that every key masks give 0 and an
lse of -inf, as torch's.

create_block_mask keeps torch's block structure (kv_num_blocks/kv_indices
for the partial blocks, full_kv_* for the full ones, their q-side
transposes, to_dense, sparsity and the printed map), worked out from the
dense mask padded with False to whole blocks.
"""
import inspect
import math
import warnings
from typing import NamedTuple

from ... import _C

__all__ = ["BlockMask", "flex_attention", "create_block_mask", "create_mask", "and_masks", "or_masks",
           "noop_mask", "AuxRequest", "AuxOutput"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_warned = [False]


class AuxRequest(NamedTuple):
    """Which extra outputs flex_attention returns (return_aux=)."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The extra outputs flex_attention returns: lse and max_scores, or None."""
    lse: object = None
    max_scores: object = None


def noop_mask(batch, head, token_q, token_kv):
    """A mask_mod that keeps every score."""
    return batch.new_ones((), dtype=_C.bool)


def _check_callables(mods):
    if not all(callable(m) for m in mods):
        raise RuntimeError("All inputs should be callable mask_mods: %s" % (mods,))


def and_masks(*mask_mods):
    """A mask_mod keeping what every one of mask_mods keeps."""
    _check_callables(mask_mods)

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=_C.bool)
        for mod in mask_mods:
            result = result & mod(b, h, q_idx, kv_idx)
        return result
    return and_mask


def or_masks(*mask_mods):
    """A mask_mod keeping what any one of mask_mods keeps."""
    _check_callables(mask_mods)

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=_C.bool)
        for mod in mask_mods:
            result = result | mod(b, h, q_idx, kv_idx)
        return result
    return or_mask


def _grids(B, H, L, S, device):
    from ... import arange
    return (arange(B, device=device).view(B, 1, 1, 1), arange(H, device=device).view(1, H, 1, 1),
            arange(L, device=device).view(1, 1, L, 1), arange(S, device=device).view(1, 1, 1, S))


def _n_params(fn):
    try:
        return sum(1 for p in inspect.signature(fn).parameters.values()
                   if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty)
    except (TypeError, ValueError):
        return 4


def _dense_mask(mask_mod, B, H, L, S, device):
    b, h, q, k = _grids(B, H, L, S, device)
    m = mask_mod(b, h, q, k)
    if not isinstance(m, _C.Tensor):
        m = _C.tensor(bool(m), device=device)
    return m.to(_C.bool).expand(B, H, L, S)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense [B, H, Q_LEN, KV_LEN] result of mod_fn: a bool mask for a
    mask_mod (four arguments), the modified zero scores for a score_mod."""
    B, H = B or 1, H or 1
    if _n_params(mod_fn) == 5:
        from ... import zeros
        b, h, q, k = _grids(B, H, Q_LEN, KV_LEN, device)
        return mod_fn(zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, q, k).expand(B, H, Q_LEN, KV_LEN)
    return _dense_mask(mod_fn, B, H, Q_LEN, KV_LEN, device).contiguous()


def _ordered(dense):
    """(count, indices) of a dense [.., rows, cols] block map: the listed
    blocks first, each group in ascending order, as torch's."""
    counts = dense.sum(-1).to(_C.int32)
    idx = dense.to(_C.int32).argsort(dim=-1, descending=True, stable=True).to(_C.int32)
    return counts, idx


class BlockMask:
    """Which blocks of the scores attention computes: kv_num_blocks[b, h, i]
    partial blocks of query block i, listed first in kv_indices[b, h, i],
    and full_kv_num_blocks / full_kv_indices its full ones (mask_mod not
    needed there); q_* are the same by key block. Made by create_block_mask;
    flex_attention applies mask_mod itself, densely."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                 q_num_blocks, q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE, mask_mod):
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @property
    def shape(self):
        return tuple(self.kv_num_blocks.shape[:-1]) + self.seq_lengths

    def numel(self):
        return math.prod(self.shape)

    def to_dense(self):
        """The block map [B, H, query blocks, key blocks]: 1 where computed."""
        from ... import arange
        nk = self.kv_indices.shape[-1]
        out = _C.zeros(tuple(self.kv_indices.shape[:-1]) + (nk,), dtype=_C.int32, device=self.kv_indices.device)
        rank = arange(nk, device=out.device).view(*([1] * (out.dim() - 1)), nk)
        for counts, idx in ((self.kv_num_blocks, self.kv_indices), (self.full_kv_num_blocks, self.full_kv_indices)):
            if counts is None:
                continue
            listed = rank < counts.unsqueeze(-1)
            out = out.scatter_add(-1, idx.to(_C.int64), listed.to(_C.int32))
        return out

    def sparsity(self):
        """The percentage of blocks not computed."""
        total = math.prod(self.kv_num_blocks.shape[:-1])
        for n, bs in zip(self.seq_lengths, self.BLOCK_SIZE):
            total *= -(-n // bs)
        computed = int(self.kv_num_blocks.sum())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum())
        return 100 * (1 - computed / total)

    def to_string(self, grid_size=(20, 20), limit=4):
        """The block map of the first `limit` (b, h) pairs, a block drawn
        as two characters (at most grid_size blocks a side)."""
        dense = self.to_dense()
        B, H = dense.shape[0], dense.shape[1]
        lines = []
        for b in range(B):
            for h in range(H):
                if len(lines) // (grid_size[0] + 3) >= limit:
                    lines.append("...")
                    return "\n".join(lines)
                lines += ["", "(%d, %d)" % (b, h)]
                rows = dense[b, h].tolist()
                for row in rows[:grid_size[0]]:
                    lines.append("".join("\u2588\u2588" if v else "  " for v in row[:grid_size[1]]))
        return "\n".join(lines)

    def __repr__(self):
        return "BlockMask(shape=%s, sparsity=%.2f%%, %s\n)" % (self.shape, self.sparsity(), self.to_string())


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False,
                      dq_kv_order=True):
    """The BlockMask of mask_mod over [B, H, Q_LEN, KV_LEN] (B or H None: 1,
    broadcast), in blocks of BLOCK_SIZE (an int or a (q, kv) pair)."""
    if _n_params(mask_mod) != 4:
        raise RuntimeError("create-block_mask requires a mask_mod function! Got a score_mod: %s" % (mask_mod,))
    if device is None:
        from ... import cuda
        device = "cuda" if cuda.is_available() else "cpu"
    qb, kb = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
    B, H = B or 1, H or 1
    nq, nk = -(-Q_LEN // qb), -(-KV_LEN // kb)
    dense = _dense_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    from ...nn import functional as F
    # padded with False to whole blocks: a block past the end is never full
    padded = F.pad(dense.to(_C.int32), (0, nk * kb - KV_LEN, 0, nq * qb - Q_LEN))
    blocks = padded.view(B, H, nq, qb, nk, kb)
    any_ = blocks.amax(dim=(3, 5)) > 0
    all_ = blocks.amin(dim=(3, 5)) > 0
    if separate_full_blocks:
        partial, full = any_ & ~all_, all_
    else:
        partial, full = any_, None
    kv_num, kv_idx = _ordered(partial)
    q_num, q_idx = _ordered(partial.transpose(-2, -1))
    full_kv_num = full_kv_idx = full_q_num = full_q_idx = None
    if full is not None:
        full_kv_num, full_kv_idx = _ordered(full)
        full_q_num, full_q_idx = _ordered(full.transpose(-2, -1))
    return BlockMask((Q_LEN, KV_LEN), kv_num, kv_idx, full_kv_num, full_kv_idx, q_num, q_idx, full_q_num,
                     full_q_idx, (qb, kb), mask_mod)


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    """softmax(score_mod(q @ k^T * scale) masked by block_mask) @ v over
    [B, H, L, E] queries, [B, Hkv, S, E] keys and [B, Hkv, S, Ev] values
    (Hkv a divisor of H with enable_gqa). Returns the output, and the
    log-sum-exp of every query's scores with return_lse (or return_aux)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() != 4:
            raise ValueError("flex_attention: %s must be 4-D [B, H, seq, dim], got %d-D" % (name, t.dim()))
    if query.size(-1) != key.size(-1):
        raise ValueError("Expect query and key/value to have the same embedding dimension but got E=%d "
                         "and E=%d." % (query.size(-1), key.size(-1)))
    B, Hq, L, E = query.shape
    Hkv, S = key.size(1), key.size(2)
    if value.size(1) != Hkv or value.size(2) != S:
        raise ValueError("flex_attention: key and value must have the same heads and length")
    if Hq != Hkv:
        if not enable_gqa:
            raise ValueError("Expect query and key/value to have the same number of heads but got Hq=%d "
                             "and Hkv=%d. Try setting enable_gqa=True for GQA." % (Hq, Hkv))
        if Hq % Hkv:
            raise ValueError("Expect number of query heads to be a multiple of kv heads for GQA but got "
                             "Hq=%d and Hkv=%d." % (Hq, Hkv))
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    if block_mask is not None and tuple(block_mask.seq_lengths) != (L, S):
        raise ValueError("block_mask was created for seq_lengths %s, but got q_len=%d and kv_len=%d"
                         % (block_mask.seq_lengths, L, S))
    if return_lse:
        warnings.warn("return_lse is deprecated and will be removed in v2.10. Please use "
                      "return_aux=AuxRequest(lse=True) instead.", FutureWarning, stacklevel=2)
    if not _warned[0]:
        _warned[0] = True
        warnings.warn("flex_attention here is the unfused reference: it materializes the full "
                      "[B, H, L, S] scores (there is no fused kernel)", UserWarning, stacklevel=2)
    acc = _C.float64 if query.dtype == _C.float64 else _C.float32
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = query.to(acc).matmul(key.to(acc).transpose(-2, -1)) * scale
    if score_mod is not None:
        b, h, q, k = _grids(B, Hq, L, S, query.device)
        scores = score_mod(scores, b, h, q, k).to(acc).expand(B, Hq, L, S)
    if block_mask is not None:
        bb, hb = block_mask.shape[0], block_mask.shape[1]
        keep = _dense_mask(block_mask.mask_mod, bb, hb, L, S, query.device).expand(B, Hq, L, S)
        scores = scores.masked_fill(~keep, float("-inf"))
    lse = scores.logsumexp(-1)
    row = lse.masked_fill(lse == float("-inf"), 0.0)  # a row that every key masks: weights 0
    out = (scores - row.unsqueeze(-1)).exp().matmul(value.to(acc)).to(query.dtype)
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None,
                              max_scores=scores.amax(-1) if return_aux.max_scores else None)
    return (out, lse) if return_lse else out
