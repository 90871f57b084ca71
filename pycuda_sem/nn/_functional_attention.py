"""Attention for torch.nn.functional: scaled_dot_product_attention in its
math form and multi_head_attention_forward (what nn.MultiheadAttention runs).

Both follow torch's reference code step by step (same mask conventions, same
scaling, same shapes in and out); there is no fused kernel, so a GPU run is
a handful of bmm and softmax launches."""
import math

from .. import _C
from ..amp.autocast_mode import _to_lower

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """softmax(q k^T * scale + bias) v over the last two dims. A bool
    attn_mask says which positions take part (True: attend); a float one is
    added. is_causal masks the upper triangle (then attn_mask must be None).
    dropout_p applies dropout to the attention weights."""
    from .functional import dropout
    from .attention.bias import CausalBias
    if isinstance(attn_mask, CausalBias):  # nn.attention.bias: its triangle as a bool mask
        attn_mask = attn_mask._materialize(query.device)
    query, key, value = _to_lower(query, key, value)
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    if enable_gqa:
        # grouped-query attention: each key/value head serves several query heads
        rep = query.size(-3) // key.size(-3)
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    bias = None
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                               "when is_causal=True")
        allowed = _C.ones(L, S, dtype=_C.bool, device=query.device).tril(0)
        bias = _C.zeros(L, S, dtype=query.dtype, device=query.device).masked_fill(
            allowed.logical_not(), float("-inf"))
    live = None
    if attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            # torch's safe softmax: a query whose mask keeps no key gets an
            # output (and gradients) of 0, not NaN. Found on the mask, not on
            # the scores: such a row attends everywhere (finite weights) and
            # its output is zeroed, so the gradients through it are 0 too.
            live = attn_mask.any(-1, keepdim=True)
            bias = _C.zeros(attn_mask.shape, dtype=query.dtype, device=query.device).masked_fill(
                attn_mask.logical_not() & live, float("-inf"))
        else:
            bias = attn_mask
    scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    out = weights.matmul(value)
    return out if live is None else out.masked_fill(live.logical_not(), 0.0)


def _canonical_mask(mask, name, target_type):
    """MHA's masks: bool True means 'masked out' -> -inf; floats are added."""
    if mask is None:
        return None
    if mask.dtype != _C.bool and not mask.is_floating_point():
        raise AssertionError("only bool and floating types of %s are supported" % name)
    if mask.dtype == _C.bool:
        return _C.zeros(mask.shape, dtype=target_type, device=mask.device).masked_fill(
            mask, float("-inf"))
    return mask


def _pad_last(t):
    # one more key position (bias_k or the zero attention), never masked
    return _C.cat([t, _C.zeros(tuple(t.shape[:-1]) + (1,), dtype=t.dtype, device=t.device)], -1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Sequence-first (L, N, E) multi-head attention with torch's arguments.
    Returns (output, weights); weights are None unless need_weights, and
    averaged over heads when average_attn_weights."""
    from .functional import dropout, linear
    is_batched = query.dim() == 3
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError("was expecting embedding dimension of %d, but got %d"
                             % (embed_dim_to_check, embed_dim))
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError("embed_dim %d not divisible by num_heads %d" % (embed_dim, num_heads))
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not "
                                  "implemented in pycuda_sem")
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to create "
                           "this mask.")
    attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)

    if not use_separate_proj_weight:
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    src_len = key.size(0)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError("The shape of the 2D attn_mask is %s, but should be %s."
                                   % (attn_mask.shape, (tgt_len, src_len)))
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError("The shape of the 3D attn_mask is %s, but should be %s."
                                   % (attn_mask.shape, (bsz * num_heads, tgt_len, src_len)))
        else:
            raise RuntimeError("attn_mask's dimension %d is not supported" % attn_mask.dim())

    if bias_k is not None and bias_v is not None:
        k = _C.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _C.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = _pad_last(attn_mask) if attn_mask is not None else None
        key_padding_mask = _pad_last(key_padding_mask) if key_padding_mask is not None else None

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zeros = _C.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k = _C.cat([k, zeros], 1)
        v = _C.cat([v, zeros], 1)
        attn_mask = _pad_last(attn_mask) if attn_mask is not None else None
        key_padding_mask = _pad_last(key_padding_mask) if key_padding_mask is not None else None
    src_len = k.size(1)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError("expecting key_padding_mask shape of %s, but got %s"
                                 % ((bsz, src_len), tuple(key_padding_mask.shape)))
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    scores = (q * math.sqrt(1.0 / head_dim)).bmm(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    out = weights.bmm(v)  # (N * heads, L, head_dim)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights
