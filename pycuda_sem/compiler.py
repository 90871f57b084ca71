"""torch.compiler: the public face of torch.compile, in eager mode.

compile() runs the model eagerly here (_compile.py), so these keep torch's
names and signatures with the eager meaning: disable() and allow_in_graph()
return their function (from _dynamo), assume_constant_result() returns its
function (with no tracing, the function simply runs each call), reset()
has nothing cached to clear, cudagraph_mark_step_begin() has no CUDA-graph
step to mark, and the is_* queries answer False (nothing is ever traced or
exported)."""
from ._compile import compile  # noqa: F401,A004 - torch.compiler.compile is torch.compile
from ._dynamo import allow_in_graph, reset  # noqa: F401
from . import _dynamo

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "allow_in_graph", "assume_constant_result", "reset", "cudagraph_mark_step_begin"]


def disable(fn=None, recursive=True, *, reason=None):
    """fn itself (it already runs eagerly); with fn None, a decorator."""
    return _dynamo.disable(fn, recursive, reason=reason)


def assume_constant_result(fn):
    """fn itself: without tracing, nothing is folded into a graph."""
    if not callable(fn):
        raise TypeError("assume_constant_result expects a callable, got %s" % type(fn).__name__)
    return fn


def cudagraph_mark_step_begin():
    """Nothing to mark: compile() records no CUDA graphs here."""


def is_compiling():
    """False: nothing here is traced by the compiler."""
    return False


def is_dynamo_compiling():
    """False: there is no dynamo tracing."""
    return False


def is_exporting():
    """False: there is no torch.export."""
    return False
