"""torch.nn.modules.utils: the small argument helpers that layers (and
third-party code, which imports them from here) use: _single/_pair/_triple/
_quadruple turn an int or an iterable into a tuple of n, _reverse_repeat_tuple
turns a conv padding into F.pad's order, and consume_prefix_in_state_dict_if_present
strips a DataParallel/DDP "module." prefix from a state_dict in place."""
import collections.abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _as_tuple(v, d):
    """v as a d-tuple: a list or tuple as it is, anything else repeated (the
    layers' own form: a string or tensor argument is repeated, not iterated)."""
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * d


def _reverse_repeat_tuple(t, n):
    """t reversed, each element n times: a conv's (padH, padW) as F.pad's
    (padW, padW, padH, padH) for n = 2."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with its None entries taken from the
    input's trailing sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError("Input dimension should be at least %d" % (len(out_size) + 1))
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips `prefix` from the keys of state_dict (and of its _metadata) in
    place, so a DataParallel/DDP checkpoint loads into the bare model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:
        for key in list(meta.keys()):
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                meta[key[len(prefix):]] = meta.pop(key)
