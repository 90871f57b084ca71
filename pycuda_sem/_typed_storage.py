"""Tensor.storage() and TypedStorage: the typed view of a tensor's memory
that older code reads (t.storage().data_ptr(), .size(), .tolist()).

torch deprecates it in favour of untyped_storage() and warns once; so does
this. A TypedStorage here is the tensor's UntypedStorage seen as elements
of the tensor's dtype: size() counts elements from the storage's start
(not the tensor's offset), and indexing reads and writes through a 1-D view
of the whole storage, so writes show in every tensor over it.
"""
import warnings as _warnings

from . import _C

_warned = [False]


def _warn():
    if not _warned[0]:
        _warned[0] = True
        _warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                       "UntypedStorage will be the only storage class. This should only matter to "
                       "you if you are using storages directly.  To access UntypedStorage directly, "
                       "use tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                       stacklevel=3)


class TypedStorage:
    """The memory of a tensor as elements of its dtype."""

    def __init__(self, *args, **kwargs):
        raise TypeError("TypedStorage: create one with tensor.storage() in pycuda_sem")

    @classmethod
    def _of(cls, tensor):
        self = object.__new__(cls)
        self._untyped = tensor.untyped_storage()
        self.dtype = tensor.dtype
        n = self._untyped.nbytes() // tensor.element_size()
        self._flat = tensor.detach().as_strided((n,), (1,), 0)
        return self

    @property
    def device(self):
        return self._untyped.device

    @property
    def is_cuda(self):
        return self._untyped.is_cuda

    def size(self):
        return self._flat.numel()

    def __len__(self):
        return self._flat.numel()

    def nbytes(self):
        return self._untyped.nbytes()

    def element_size(self):
        return self._flat.element_size()

    def data_ptr(self):
        return self._untyped.data_ptr()

    def untyped(self):
        return self._untyped

    def is_pinned(self, device="cuda"):
        return self._untyped.is_pinned()

    def tolist(self):
        return self._flat.tolist()

    def _index(self, idx):
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise TypeError("can't index a TypedStorage with %s" % type(idx).__name__)
        n = len(self)
        if not -n <= idx < n:
            raise IndexError("index %d out of range for storage of size %d" % (idx, n))
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._flat[idx].tolist()
        return self._flat[self._index(idx)].item()

    def __setitem__(self, idx, value):
        if isinstance(idx, slice):
            self._flat[idx] = value
        else:
            self._flat[self._index(idx)] = value

    def fill_(self, value):
        self._flat.fill_(value)
        return self

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        body = "\n".join(" %s" % v for v in self.tolist()[:20])
        more = "\n ..." if len(self) > 20 else ""
        return "%s\n[%s(dtype=%s, device=%s) of size %d]" % (
            body + more, type(self).__name__, str(self.dtype).split(".")[-1], self.device, len(self))


def storage(tensor):
    """tensor.storage(): the tensor's memory as a (deprecated) TypedStorage."""
    if not isinstance(tensor, _C.Tensor):
        raise TypeError("storage(): expected a tensor, got %s" % type(tensor).__name__)
    _warn()
    return TypedStorage._of(tensor)
