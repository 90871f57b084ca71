"""pycuda_sem.fx: the decorator model code applies at import time, and clear
errors for the rest. There is no graph tracer: wrap() marks a function as a
leaf for a tracer and returns it unchanged, as it would run eagerly;
symbolic_trace, GraphModule, Graph, Proxy and Tracer raise
NotImplementedError."""

__all__ = ["wrap", "symbolic_trace", "GraphModule", "Graph", "Proxy", "Tracer"]


def wrap(fn_or_name):
    """The function (or name) unchanged: calls run eagerly."""
    return fn_or_name


def _missing(name):
    return NotImplementedError("torch.fx.%s is not implemented in pycuda_sem: there is no graph "
                               "tracer; run the module eagerly" % name)


def symbolic_trace(*args, **kwargs):
    raise _missing("symbolic_trace")


class _Unavailable:
    _name = ""

    def __init__(self, *args, **kwargs):
        raise _missing(self._name)


class GraphModule(_Unavailable):
    _name = "GraphModule"


class Graph(_Unavailable):
    _name = "Graph"


class Proxy(_Unavailable):
    _name = "Proxy"


class Tracer(_Unavailable):
    _name = "Tracer"
