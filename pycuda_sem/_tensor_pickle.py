"""Tensor.__deepcopy__, __copy__ and __reduce_ex__: copying and pickling tensors.

The Tensor type is static (C), so these live here and the type's methods of
the same names forward to them (csrc/python/tensor_type.c). They follow
torch's `Tensor.__deepcopy__` and `__reduce_ex__` (torch/_tensor.py):

- deepcopy copies the whole storage once per memo (the copies are kept in the
  memo under one key, as torch keeps them under memo['torch']), so views
  deep-copied together, e.g. inside one `copy.deepcopy(model)`, share memory
  again; the copy keeps the offset, sizes and strides, and gets
  requires_grad, a deep copy of .grad and of the tensor's attributes. Only
  leaves can be deep-copied, with torch's RuntimeError otherwise.
- copy.copy gives a new leaf over the same memory (what torch's reduce gives
  copy.copy, since its storage is not copied there).
- pickle writes the storage's bytes (CUDA storages from a host copy), the
  dtype by name, the device, offset, sizes, strides and requires_grad;
  unpickling rebuilds on the same device. Subclasses and tensors with
  attributes go through `_rebuild_from_type_v2` as in torch. As in torch,
  views pickled separately do not share memory after loading.

torch.save/load do not come here: serialization.py writes torch's own
records for tensors.
"""
import copy
import copyreg
import pickle

import numpy as np

from . import _C

__all__ = []

# Where a deepcopy memo keeps the storage copies: {id(storage): (storage,
# copy)}; the original is kept so that its id cannot be reused meanwhile.
_MEMO_KEY = "pycuda_sem.storages"

# NumPy has no bfloat16: its bytes travel as int16
_NP_STANDIN = {"bfloat16": np.int16}


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


def _flat(t):
    """All of t's storage as a 1-D tensor of t's dtype (t detached)."""
    numel = t.untyped_storage().nbytes() // t.element_size()
    return t.detach().as_strided((numel,), (1,), 0)


def _get_state(t):
    """The tensor's Python state as torch's _get_obj_state gives it: its
    __dict__, or (dict, slots) where the class has slots; None if empty."""
    state = t.__dict__ if t.__dict__ else None
    slots = {}
    for name in copyreg._slotnames(type(t)):
        if hasattr(t, name):
            slots[name] = getattr(t, name)
    if slots:
        return (state, slots)
    return state


def _set_state(t, state):
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError("Invalid serialized state: %r" % (state,))
        dict_state, slots = state
    else:
        dict_state, slots = state, None
    if dict_state:
        for k, v in dict_state.items():
            setattr(t, k, v)
    if slots:
        for k, v in slots.items():
            setattr(t, k, v)
    return t


def _as_type(t, new_type):
    """t as an object of new_type (a Tensor subclass), sharing its memory."""
    if type(t) is new_type:
        return t
    if not (isinstance(new_type, type) and issubclass(new_type, _C.Tensor)):
        raise TypeError("cannot rebuild a tensor as %r: not a Tensor subclass" % (new_type,))
    return _C.Tensor._make_subclass(new_type, t, t.requires_grad)


# ---- copy.deepcopy / copy.copy ----------------------------------------------------

def _copy_storage_view(t, memo):
    """A tensor with t's geometry over a copy of t's storage, the copy made
    once per storage and memo."""
    copies = memo.setdefault(_MEMO_KEY, {})
    st = t.untyped_storage()
    hit = copies.get(id(st))
    if hit is not None and hit[1].element_size() == t.element_size():
        flat = hit[1] if hit[1].dtype == t.dtype else hit[1].view(t.dtype)
    else:
        flat = _flat(t).clone()
        if hit is None:
            copies[id(st)] = (st, flat)
    return flat.as_strided(tuple(t.shape), t.stride(), t.storage_offset())


def deepcopy(t, memo):
    """Tensor.__deepcopy__(memo), as torch's."""
    if not t.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user "
            "(graph leaves) support the deepcopy protocol at the moment.  "
            "If you were attempting to deepcopy a module, this may be because "
            "of a torch.nn.utils.weight_norm usage, "
            "see https://github.com/pytorch/pytorch/pull/103001")
    if memo is None:
        memo = {}
    if id(t) in memo:
        return memo[id(t)]
    with _no_grad():
        new = _as_type(_copy_storage_view(t, memo), type(t))
        if t.requires_grad:
            new.requires_grad_()
        if t.grad is not None:
            new.grad = t.grad.__deepcopy__(memo)
        if type(t) is not _C.Tensor:
            for name in copyreg._slotnames(type(t)):
                if hasattr(t, name):
                    setattr(new, name, copy.deepcopy(getattr(t, name), memo))
        if t.__dict__:
            new.__dict__ = copy.deepcopy(t.__dict__, memo)
        memo[id(t)] = new
        return new


def shallow_copy(t):
    """Tensor.__copy__(): a new leaf over the same memory, with t's type,
    requires_grad and attributes (not its grad)."""
    new = _as_type(t.detach(), type(t))
    if t.requires_grad and not new.requires_grad:
        new.requires_grad_()
    state = _get_state(t)
    if state:
        _set_state(new, copy.copy(state) if isinstance(state, dict) else state)
    return new


# ---- pickle -----------------------------------------------------------------------

def reduce_ex(t, proto):
    """Tensor.__reduce_ex__(proto): (rebuild function, args)."""
    flat = _flat(t)
    name = _dtype_name(t.dtype)
    if name in _NP_STANDIN:
        flat = flat.view(_C.int16)
    data = flat.cpu().numpy().tobytes()
    args = (data, name, str(t.device), t.storage_offset(), tuple(t.shape), tuple(t.stride()),
            t.requires_grad)
    state = _get_state(t)
    if type(t) is _C.Tensor and not state:
        return (_rebuild_tensor, args)
    return (_rebuild_from_type_v2, (_rebuild_tensor, type(t), args, state))


def _rebuild_tensor(data, dtype, device, storage_offset, size, stride, requires_grad):
    """The tensor reduce_ex described: a fresh storage on `device`."""
    dt = getattr(_C, dtype, None) if isinstance(dtype, str) else None
    if not isinstance(dt, _C.dtype):
        raise pickle.UnpicklingError("unknown dtype %r in a pickled tensor" % (dtype,))
    npdt = _NP_STANDIN.get(dtype, None) or np.dtype(dtype)
    flat = _C.from_numpy(np.frombuffer(data, dtype=npdt).copy())
    if dtype in _NP_STANDIN:
        flat = flat.view(dt)
    dev = _C.device(device)
    if dev.type == "cuda":
        from . import cuda
        if not cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                               "torch.cuda.is_available() is False. (device: %s)" % device)
        flat = flat.to(dev)
    t = flat.as_strided(tuple(size), tuple(stride), int(storage_offset))
    if requires_grad:
        t.requires_grad_()
    return t


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: func(*args) as new_type, with state."""
    ret = _as_type(func(*args), new_type)
    if state:
        setstate = getattr(type(ret), "__setstate__", None)
        if setstate is not None and setstate is not getattr(_C.Tensor, "__setstate__", None):
            ret.__setstate__(state)
        else:
            _set_state(ret, state)
    return ret

