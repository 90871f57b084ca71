"""torch.nn.utils.rnn: pad_sequence. PackedSequence and its functions are
not implemented: the recurrent layers here take padded batches."""
from ... import _C

__all__ = ["pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpad_sequence"]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors of shapes [L_i, *] into [max L, B, *] ([B, max L, *]
    with batch_first), filling with padding_value on padding_side."""
    if padding_side not in ("left", "right"):
        raise ValueError("Expected padding_side to be one of left or right, but got %s."
                         % padding_side)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    longest = max(s.size(0) for s in sequences)
    first = sequences[0]
    out = _C.full((len(sequences), longest) + trailing, padding_value, dtype=first.dtype,
                  device=first.device)
    for i, s in enumerate(sequences):
        n = s.size(0)
        start = 0 if padding_side == "right" else longest - n
        out[i, start:start + n] = s
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The inverse of pad_sequence for right padding: a list of [L_i, *]."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(lengths)]


def _packed(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError("torch.nn.utils.rnn.%s: PackedSequence is not implemented in "
                                  "pycuda_sem; pad the batch (pad_sequence) and mask instead"
                                  % name)
    refuse.__name__ = name
    return refuse


pack_padded_sequence = _packed("pack_padded_sequence")
pad_packed_sequence = _packed("pad_packed_sequence")
pack_sequence = _packed("pack_sequence")
