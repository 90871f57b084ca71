"""torch.utils: hooks (RemovableHandle), data (datasets, samplers,
collation, DataLoader), checkpoint (activation checkpointing), _pytree
(nested containers as leaves and a spec) and model_zoo (hub's loader);
benchmark (Timer, Compare) and dlpack load when imported. swap_tensors
exchanges two tensors' contents in place."""
import copyreg as _copyreg
import weakref as _weakref

from . import data, hooks  # noqa: F401
from . import checkpoint  # noqa: F401
from . import _pytree, model_zoo  # noqa: F401

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: only classes made in Python can change __class__


def swap_tensors(t1, t2):
    """Exchange the contents of t1 and t2 in place, each keeping its
    identity: memory, sizes, strides and device, requires_grad and .grad,
    the Python attributes (and slots), and the class when both are Python
    subclasses. Tensors of different dtypes, tensors made by a recorded op
    (grad_fn), and a plain Tensor against a subclass cannot be swapped in
    this package's C Tensor: NotImplementedError for those."""
    from .. import _C
    for name, t in (("t1", t1), ("t2", t2)):
        if not isinstance(t, _C.Tensor):
            raise TypeError("swap_tensors(): %s must be a Tensor, not %s"
                            % (name, type(t).__name__))
        if _weakref.getweakrefs(t):
            raise RuntimeError("Cannot swap %s because it has weakref associated with it" % name)
    slots = set(_copyreg._slotnames(type(t1)))
    if slots != set(_copyreg._slotnames(type(t2))):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    if t1.dtype != t2.dtype:
        raise NotImplementedError("swap_tensors: tensors of different dtypes (%s, %s) cannot be "
                                  "swapped in pycuda_sem (a tensor's dtype is fixed)"
                                  % (t1.dtype, t2.dtype))
    if t1.grad_fn is not None or t2.grad_fn is not None:
        raise NotImplementedError("swap_tensors: only leaf tensors (no grad_fn) can be swapped in "
                                  "pycuda_sem")
    c1, c2 = type(t1), type(t2)
    if c1 is not c2:
        if not (c1.__flags__ & _HEAPTYPE and c2.__flags__ & _HEAPTYPE):
            raise NotImplementedError("swap_tensors: a %s and a %s cannot exchange classes in "
                                      "pycuda_sem (the base Tensor type is a static C type)"
                                      % (c1.__name__, c2.__name__))
        t1.__class__ = c2  # first: it is the step that can still refuse
        try:
            t2.__class__ = c1
        except TypeError:
            t1.__class__ = c1
            raise
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in slots:
        v1 = getattr(t1, slot, _MISSING)
        v2 = getattr(t2, slot, _MISSING)
        for t, v in ((t1, v2), (t2, v1)):
            if v is _MISSING:
                if hasattr(t, slot):
                    delattr(t, slot)
            else:
                setattr(t, slot, v)
    g1, g2 = t1.grad, t2.grad
    r1, r2 = t1.requires_grad, t2.requires_grad
    t1.grad = t2.grad = None
    a1, a2 = t1.detach(), t2.detach()  # each keeps its old storage and geometry
    _C._tensor_set_geometry(t1, a2, a2.storage_offset(), list(a2.size()), list(a2.stride()))
    _C._tensor_set_geometry(t2, a1, a1.storage_offset(), list(a1.size()), list(a1.stride()))
    t1.requires_grad_(r2)
    t2.requires_grad_(r1)
    t1.grad, t2.grad = g2, g1


_MISSING = object()
