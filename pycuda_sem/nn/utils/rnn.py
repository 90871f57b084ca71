"""torch.nn.utils.rnn: pad_sequence / unpad_sequence, and PackedSequence
with pack_padded_sequence, pad_packed_sequence, pack_sequence,
unpack_sequence and invert_permutation in torch's layout (data: the
time-major steps of the sequences sorted longest first; batch_sizes: on
the CPU, how many sequences are still running at each step). Packing and
unpacking are one index_select / index_copy each, differentiable. RNN, LSTM
and GRU take PackedSequence inputs (nn/modules/rnn.py steps the packed rows)."""
import collections

from ... import _C

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


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


_PackedSequenceBase = collections.namedtuple(
    "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as torch's;
    made by pack_padded_sequence / pack_sequence, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # torch's (data, batch_sizes) pair form
            data, batch_sizes = data[0], data[1]
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """data moved/cast; the indices follow data's device; batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        idx = [None if t is None else t.to(data.device)
               for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, idx[0], idx[1])

    def cuda(self, *args, **kwargs):
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self):
        return self.to("cpu")

    @property
    def is_cuda(self):
        return self.data.is_cuda


def invert_permutation(permutation):
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    if permutation is None:
        return None
    out = _C.empty_like(permutation)
    out.scatter_(0, permutation, _C.arange(permutation.numel(), device=permutation.device))
    return out


def _lengths_list(lengths):
    if isinstance(lengths, _C.Tensor):
        if lengths.dim() != 1 or lengths.is_cuda:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got %dD %s "
                               "tensor" % (lengths.dim(), lengths.device))
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch [T, B, *] ([B, T, *] with batch_first) of the
    given lengths; enforce_sorted=False sorts the batch first (and records
    the permutation)."""
    lens = _lengths_list(lengths)
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    batch_dim = 0 if batch_first else 1
    if len(lens) != input.size(batch_dim):
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got %d "
                           "(batch_size=%d)" % (len(lens), input.size(batch_dim)))
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                               "pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])  # stable, longest first
        lens = [lens[i] for i in order]
        sorted_indices = _C.tensor(order, dtype=_C.int64, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
    x = input.transpose(0, 1) if batch_first else input
    steps, batch = x.size(0), x.size(1)
    if lens[0] > steps:
        raise RuntimeError("Expected sequence length to be at most %d, but got %d"
                           % (steps, lens[0]))
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    # flat (t, b) positions of the live steps, in time-major order
    rows = [t * batch + b for t in range(lens[0]) for b in range(batch_sizes[t])]
    idx = _C.tensor(rows, dtype=_C.int64, device=input.device)
    data = x.reshape((steps * batch,) + tuple(x.shape[2:])).index_select(0, idx)
    return PackedSequence(data, _C.tensor(batch_sizes, dtype=_C.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded batch, lengths): the inverse of pack_padded_sequence, in the
    original batch order; total_length pads the time dim to that length."""
    batch_sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    batch = batch_sizes[0] if batch_sizes else 0
    steps = max_len
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             "sequence in input, but got total_length=%d and max sequence length "
                             "being %d" % (total_length, max_len))
        steps = total_length
    data = sequence.data
    rows = [t * batch + b for t in range(max_len) for b in range(batch_sizes[t])]
    idx = _C.tensor(rows, dtype=_C.int64, device=data.device)
    out = _C.full((steps * batch,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                  device=data.device)
    out = out.index_copy(0, idx, data).reshape((steps, batch) + tuple(data.shape[1:]))
    lengths = _C.tensor([sum(1 for s in batch_sizes if s > b) for b in range(batch)],
                        dtype=_C.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.cpu())
    return (out.transpose(0, 1) if batch_first else out), lengths


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of [L_i, *] tensors (longest first unless enforce_sorted=False)."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of [L_i, *] tensors a PackedSequence holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
