"""Stand-ins for the names of torch's tracers and exporters (fx, export):
each raises NotImplementedError that names it when called or built, so a
script fails at the line that needs a graph, with the reason."""


def unavailable(module, name, why):
    """The error for torch.<module>.<name>."""
    return NotImplementedError("torch.%s.%s is not implemented in pycuda_sem: %s" % (module, name, why))


def unavailable_class(module, name, why):
    """A class named `name` whose construction raises unavailable(...)."""
    def __init__(self, *args, **kwargs):
        raise unavailable(module, name, why)

    return type(name, (), {"__init__": __init__, "__module__": "pycuda_sem." + module,
                           "__doc__": "torch.%s.%s: not available (%s)." % (module, name, why)})
