"""torch.ops: the namespace object through which registered operators are
reached, ``torch.ops.<namespace>.<name>(...)``.

Operators land here when pycuda_sem.library defines them (custom_op,
library.define, Library.define). There is no C++ dispatcher behind this:
each entry is a Python object that picks a kernel by the inputs' device.
``torch.ops.aten.<name>`` resolves to the top-level pycuda_sem function of
that name where there is one (its overloads, ``.default``, ``.Tensor`` and so
on, are the same function); other aten names raise AttributeError saying so.
"""
import types as _types

_REGISTRY = {}  # "ns::name" -> the op object (library.CustomOpDef)


def _register(qualname, op):
    _REGISTRY[qualname] = op


def _lookup(qualname):
    return _REGISTRY.get(qualname)


class OpOverloadPacket:
    """``torch.ops.ns.name``: callable, with the overloads as attributes
    (``.default`` is the op itself; a schema here has one overload)."""

    def __init__(self, qualname, op):
        self._qualname = qualname
        self._op = op
        self.default = op

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def overloads(self):
        return ["default"]

    def __getattr__(self, name):
        raise AttributeError("The underlying op of '%s' has no overload name '%s'"
                             % (self._qualname.replace("::", "."), name))

    def __repr__(self):
        return "<OpOverloadPacket(op='%s')>" % self._qualname.replace("::", ".")


class _AtenOverloads:
    """``torch.ops.aten.<name>``: the pycuda_sem function of that name, its
    overload attributes (``.default``, ``.Tensor``, ``.Scalar``, ...) being the
    same function (the Python function takes each overload's arguments)."""

    def __init__(self, name, fn):
        self._name = name
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, overload):
        if overload.startswith("_"):
            raise AttributeError(overload)
        return self._fn

    def __repr__(self):
        return "<aten op %s (pycuda_sem.%s)>" % (self._name, self._name)


class _OpNamespace(_types.ModuleType):
    """``torch.ops.<ns>``: the operators registered under one namespace."""

    def __init__(self, ns):
        super().__init__("torch.ops." + ns)
        self._ns = ns

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        op = _lookup(self._ns + "::" + name)
        if op is None:
            if self._ns == "aten":
                return self._aten(name)
            raise AttributeError("'_OpNamespace' '%s' object has no attribute '%s'" % (self._ns, name))
        return OpOverloadPacket(self._ns + "::" + name, op)

    def _aten(self, name):
        import pycuda_sem
        fn = getattr(pycuda_sem, name, None)
        if not callable(fn) or isinstance(fn, type):
            raise AttributeError("'_OpNamespace' 'aten' object has no attribute '%s': pycuda_sem has no "
                                 "aten dispatcher, and torch.ops.aten.<name> reaches only the top-level "
                                 "pycuda_sem functions (there is no pycuda_sem.%s)" % (name, name))
        return _AtenOverloads(name, fn)

    def __dir__(self):
        prefix = self._ns + "::"
        return sorted(q[len(prefix):] for q in _REGISTRY if q.startswith(prefix))


class _Ops(_types.ModuleType):
    """``torch.ops``: ``torch.ops.<ns>`` is the namespace of that name (made
    on first use, as torch's)."""

    def __init__(self):
        super().__init__("torch.ops")
        self._namespaces = {}

    def __getattr__(self, ns):
        if ns.startswith("__"):
            raise AttributeError(ns)
        if ns not in self._namespaces:
            self._namespaces[ns] = _OpNamespace(ns)
        return self._namespaces[ns]

    def load_library(self, path):
        raise NotImplementedError("torch.ops.load_library is not implemented in pycuda_sem: it cannot load "
                                  "C++ operator libraries built against libtorch (%s); register Python "
                                  "kernels with pycuda_sem.library.custom_op instead" % (path,))


ops = _Ops()
