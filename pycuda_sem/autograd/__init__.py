"""torch.autograd: reverse-mode automatic differentiation.

The engine is C (csrc/autograd/): ops record nodes, `_C._run_backward` runs
them. This package is the Python face of it, as in torch: `backward` and
`grad` (argument normalisation and torch's checks of the initial gradients,
here), the grad modes (grad_mode.py), `Function` (function.py), `gradcheck`
(gradcheck.py), `functional.jacobian`/`vjp`/... (functional.py) and the legacy
`Variable` (variable.py).
"""
from .. import _C
from . import grad_mode  # noqa: F401
from . import _formulas  # noqa: F401  (registers the backward formulas with the engine)
from .grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled, is_multithreading_enabled, set_multithreading_enabled,
    is_view_replay_enabled, _force_original_view_tracking,
)
from .variable import Variable  # noqa: F401
from .function import Function  # noqa: F401
from . import function  # noqa: F401
from . import functional  # noqa: F401
from . import anomaly_mode  # noqa: F401
from . import graph  # noqa: F401
from . import forward_ad  # noqa: F401
from . import profiler  # noqa: F401 - torch.autograd.profiler (record_function, profile)
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
# As in torch, the names gradcheck/gradgradcheck in this namespace are the
# functions; the module stays importable as pycuda_sem.autograd.gradcheck
# (`from pycuda_sem.autograd.gradcheck import GradcheckError`).
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401,E402

__all__ = ["Variable", "Function", "backward", "grad", "grad_mode", "gradcheck", "gradgradcheck",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "functional",
           "detect_anomaly", "set_detect_anomaly", "graph", "forward_ad",
           "is_multithreading_enabled", "set_multithreading_enabled", "is_view_replay_enabled"]

_Tensor = _C.Tensor


# ---- argument normalisation ---------------------------------------------------------

def _as_tensor_tuple(tensors):
    """A tensor (or a graph.GradientEdge) -> (it,); any other iterable -> tuple of it."""
    if isinstance(tensors, (_Tensor, graph.GradientEdge)):
        return (tensors,)
    return tuple(tensors)


def _grads_tuple(grads, length):
    if grads is None:
        return (None,) * length
    if isinstance(grads, _Tensor):
        return (grads,)
    return tuple(grads)


def _make_grads(outputs, grads):
    """torch's checks of the initial gradients, and ones for scalar outputs."""
    new_grads = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(g, _Tensor):
            if out.shape != g.shape:
                raise RuntimeError("Mismatch in shape: grad_output[%d] has a shape of %s and "
                                   "output[%d] has a shape of %s."
                                   % (i, g.shape, i, out.shape))
            if out.dtype.is_complex != g.dtype.is_complex:
                raise RuntimeError("For complex Tensors, both grad_output and output are required "
                                   "to have the same dtype. Mismatch in dtype: grad_output[%d] has "
                                   "a dtype of %s and output[%d] has a dtype of %s."
                                   % (i, g.dtype, i, out.dtype))
            new_grads.append(g)
        elif g is None:
            if isinstance(out, _Tensor) and out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       "outputs but got %s" % (out.dtype,))
                new_grads.append(_C.ones_like(out))
            else:
                new_grads.append(None)
        else:
            raise TypeError("gradients can be either Tensors or None, but got "
                            + type(g).__name__)
    return tuple(new_grads)


# ---- backward, grad --------------------------------------------------------------------

def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate into the leaves' ``.grad`` the gradients of ``tensors``
    (vector-Jacobian products with ``grad_tensors``; implicit ones for scalar
    outputs). ``inputs``: accumulate only into these. The graph is freed
    unless ``retain_graph`` (default: ``create_graph``)."""
    if grad_variables is not None:
        import warnings
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _as_tensor_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        if any(isinstance(i, graph.GradientEdge) for i in inputs):
            raise NotImplementedError("backward(inputs=GradientEdge): pycuda_sem accepts gradient "
                                      "edges as inputs of autograd.grad only")
    tensors = _as_tensor_tuple(tensors)
    grads = _make_grads(tensors, _grads_tuple(grad_tensors, len(tensors)))
    if retain_graph is None:
        retain_graph = create_graph
    _C._run_backward(tensors, grads, retain_graph, create_graph, inputs, True, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` (a tuple,
    one per input), without touching any ``.grad``. An input the outputs do not
    depend on is an error unless ``allow_unused`` (then None, or zeros with
    ``materialize_grads``)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        import warnings
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                      "To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) needs vmap, which pycuda_sem "
                                  "does not have; call grad once per grad_output instead")
    outputs = _as_tensor_tuple(outputs)
    if any(isinstance(o, graph.GradientEdge) for o in outputs):
        raise NotImplementedError("autograd.grad(outputs=GradientEdge): pycuda_sem accepts gradient "
                                  "edges as inputs only")
    inputs = _as_tensor_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    grads = _make_grads(outputs, _grads_tuple(grad_outputs, len(outputs)))
    if retain_graph is None:
        retain_graph = create_graph
    result = _C._run_backward(outputs, grads, retain_graph, create_graph, inputs,
                              allow_unused, False)
    if materialize_grads:
        result = tuple(_C.zeros_like(inp, requires_grad=create_graph) if g is None else g
                       for g, inp in zip(result, inputs))
    return result
