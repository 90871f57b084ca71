"""pycuda_sem.fx: the decorator model code applies at import time, and clear
errors for the rest. There is no graph tracer: wrap() marks a function as a
leaf for a tracer and returns it unchanged, as it would run eagerly;
symbolic_trace, GraphModule, Graph, Proxy and Tracer raise
NotImplementedError."""

from .._unavailable import unavailable as _unavailable, unavailable_class as _unavailable_class

__all__ = ["wrap", "symbolic_trace", "GraphModule", "Graph", "Proxy", "Tracer"]


def wrap(fn_or_name):
    """The function (or name) unchanged: calls run eagerly."""
    return fn_or_name


_WHY = "there is no graph tracer; run the module eagerly"


def symbolic_trace(*args, **kwargs):
    raise _unavailable("fx", "symbolic_trace", _WHY)


GraphModule = _unavailable_class("fx", "GraphModule", _WHY)
Graph = _unavailable_class("fx", "Graph", _WHY)
Proxy = _unavailable_class("fx", "Proxy", _WHY)
Tracer = _unavailable_class("fx", "Tracer", _WHY)
