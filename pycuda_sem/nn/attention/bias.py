"""torch.nn.attention.bias: causal masks for scaled_dot_product_attention
that say which corner the triangle keeps. causal_upper_left(L, S) keeps
key j for query i when j <= i (is_causal's mask); causal_lower_right(L, S)
aligns the diagonal to the lower-right corner, j <= i + S - L, as decoding
with a cache of past keys needs. F.scaled_dot_product_attention takes a
CausalBias as attn_mask and materialises it on the query's device."""
import enum as _enum
import warnings as _warnings

from ... import _C

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(_enum.IntEnum):
    """Which corner a causal bias is aligned to."""
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal attention mask of seq_len_q x seq_len_kv, kept as its shape
    and variant until scaled_dot_product_attention needs it."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError("variant must be a CausalVariant, got %s" % type(variant).__name__)
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            _warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                           stacklevel=2)

    def _materialize(self, device=None):
        """The bool mask [seq_len_q, seq_len_kv] (True: attend)."""
        ones = _C.ones(self.seq_len_q, self.seq_len_kv, dtype=_C.bool, device=device or "cpu")
        diagonal = 0 if self.variant == CausalVariant.UPPER_LEFT else self.seq_len_kv - self.seq_len_q
        return ones.tril(diagonal)

    @property
    def shape(self):
        return _C.Size((self.seq_len_q, self.seq_len_kv))

    def __repr__(self):
        return repr(self._materialize())


def causal_upper_left(*size):
    """The causal bias whose triangle starts at the upper-left corner."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size):
    """The causal bias whose diagonal ends at the lower-right corner."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
