"""default_collate and default_convert, as torch.utils.data._utils.collate:
a list of samples becomes one batch of the same structure, with tensors
stacked along a new first dimension. Inside a worker the stacked tensor is
made in shared memory, so that sending it to the main process copies nothing."""
import collections.abc
import copy
import re

import numpy as np

import pycuda_sem as _t

from . import _shm
from ._worker import get_worker_info

__all__ = ["default_collate", "default_convert"]

_np_str_obj = re.compile(r"[SaUO]")
_err = ("default_collate: batch must contain tensors, numpy arrays, numbers, "
        "dicts or lists; found {}")


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


RECURSE = object()


def map_batch(data, leaf):
    """`data` with leaf(x) in place of every x for which it does not return
    RECURSE, through mappings (same type where it can be rebuilt), namedtuples,
    tuples (as lists, as torch) and other sequences; other objects as they
    are. default_convert and pin_memory share this walk."""
    r = leaf(data)
    if r is not RECURSE:
        return r
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: map_batch(v, leaf) for k, v in data.items()})
                return clone
            return type(data)({k: map_batch(v, leaf) for k, v in data.items()})
        except TypeError:
            return {k: map_batch(v, leaf) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(map_batch(d, leaf) for d in data))
    if isinstance(data, tuple):
        return [map_batch(d, leaf) for d in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = map_batch(d, leaf)
                return clone
            return type(data)([map_batch(d, leaf) for d in data])
        except TypeError:
            return [map_batch(d, leaf) for d in data]
    return data


def _convert_leaf(data):
    if isinstance(data, _t.Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if _np_str_obj.search(data.dtype.str) is not None else _t.as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return _t.as_tensor(data)
    return RECURSE


def default_convert(data):
    """NumPy arrays and scalars to tensors, recursively through mappings,
    namedtuples and sequences; anything else as it is (the collate of
    batch_size=None)."""
    return map_batch(data, _convert_leaf)


def _collate_tensors(batch):
    elem = batch[0]
    if get_worker_info() is not None and elem.device.type == "cpu":
        # stack straight into shared memory: the send then copies nothing
        out = _shm.empty_shared((len(batch),) + tuple(elem.shape), elem.dtype)
        return _t.stack(batch, 0, out=out)
    return _t.stack(batch, 0)


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors -> stack; NumPy arrays ->
    tensors, stacked; NumPy scalars -> a tensor of their dtype; float ->
    float64, int -> int64, bool -> bool tensors; str/bytes -> the list;
    mappings, namedtuples and sequences -> the same structure collated per
    key or position (tuples give lists, as torch)."""
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, _t.Tensor):
        return _collate_tensors(batch)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_", "string_"):
        if isinstance(elem, np.ndarray):
            if _np_str_obj.search(elem.dtype.str) is not None:
                raise TypeError(_err.format(elem.dtype))
            return default_collate([_t.as_tensor(b) for b in batch])
        if elem.shape == ():  # NumPy scalars
            return _t.as_tensor(np.array(batch))
    if isinstance(elem, float):
        return _t.tensor(batch, dtype=_t.float64)
    if isinstance(elem, int):  # bool too: a bool tensor
        return _t.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: default_collate([d[k] for d in batch]) for k in elem})
                return clone
            return elem_type({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if _is_namedtuple(elem):
        return elem_type(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(list(s)) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = default_collate(list(s))
                return clone
            return elem_type([default_collate(list(s)) for s in transposed])
        except TypeError:
            return [default_collate(list(s)) for s in transposed]
    raise TypeError(_err.format(elem_type))


def tensor_dataset_batch(dataset, indices):
    """default_collate of TensorDataset rows without the per-sample tuples:
    per tensor, a stack of its rows (into shared memory inside a worker). The
    same list of stacked tensors."""
    return [_collate_tensors([t[i] for i in indices]) for t in dataset.tensors]
