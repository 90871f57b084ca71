"""torch.compile, in eager mode.

pycuda_sem has no graph compiler: its ops are already single C calls over
fused CUDA kernels. compile() checks its arguments as torch does and hands
back the model itself, so a script that compiles its model runs unchanged
(and gets the same numbers it would get uncompiled). One difference a script
can see: torch wraps a module in an OptimizedModule whose state_dict keys
gain an "_orig_mod." prefix; here the module is returned as it is, so its
keys do not change.
"""

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,  # noqa: A001
            options=None, disable=False, **kwargs):
    """Return model unchanged (run eagerly); with model None, a decorator."""
    if mode not in _MODES:
        raise RuntimeError("Unrecognized mode=%s, should be one of: %s"
                           % (mode, ", ".join(m for m in _MODES if m)))
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at "
                           "the same time.")
    if not (isinstance(backend, str) or callable(backend) or backend is None):
        raise TypeError("compile(): backend must be a string or a callable")
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable, **kwargs)
        return decorate
    if not callable(model):
        raise RuntimeError("compile(): model must be callable, got %s" % type(model).__name__)
    return model
