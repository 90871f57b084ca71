"""pycuda_sem.export: the names of torch.export, each raising
NotImplementedError. torch.export traces a model into a graph program;
pycuda_sem runs eagerly and has no tracer, so there is nothing to export,
save or load. Export with torch itself (save the state_dict here and load it
into the torch model)."""

__all__ = ["export", "load", "save", "draft_export", "unflatten", "register_dataclass", "dims",
           "Dim", "ExportedProgram", "ExportGraphSignature", "ExportBackwardSignature",
           "ModuleCallEntry", "ModuleCallSignature", "UnflattenedModule", "ShapesCollection",
           "AdditionalInputs", "Constraint", "FlatArgsAdapter", "CustomDecompTable",
           "default_decompositions", "dynamic_shapes"]


def _missing(name):
    return NotImplementedError("torch.export.%s is not implemented in pycuda_sem: it runs eagerly and has "
                               "no graph tracer (export with torch itself from a saved state_dict)" % name)


def export(mod, args=(), kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=()):
    raise _missing("export")


def draft_export(mod, args=(), kwargs=None, *, dynamic_shapes=None, **kw):
    raise _missing("draft_export")


def load(f, *, extra_files=None, expected_opset_version=None):
    raise _missing("load")


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    raise _missing("save")


def unflatten(module, flat_args_adapter=None):
    raise _missing("unflatten")


def register_dataclass(cls, *, serialized_type_name=None):
    raise _missing("register_dataclass")


def dims(*names, min=None, max=None):
    raise _missing("dims")


def default_decompositions():
    raise _missing("default_decompositions")


class _Unavailable:
    _name = ""

    def __init__(self, *args, **kwargs):
        raise _missing(self._name)


class Dim(_Unavailable):
    _name = "Dim"
    # Dim.AUTO / Dim.STATIC / Dim.DYNAMIC are read at import by some scripts;
    # they are markers only (export itself raises).
    AUTO = "AUTO"
    STATIC = "STATIC"
    DYNAMIC = "DYNAMIC"


class ExportedProgram(_Unavailable):
    _name = "ExportedProgram"


class ExportGraphSignature(_Unavailable):
    _name = "ExportGraphSignature"


class ExportBackwardSignature(_Unavailable):
    _name = "ExportBackwardSignature"


class ModuleCallEntry(_Unavailable):
    _name = "ModuleCallEntry"


class ModuleCallSignature(_Unavailable):
    _name = "ModuleCallSignature"


class UnflattenedModule(_Unavailable):
    _name = "UnflattenedModule"


class ShapesCollection(_Unavailable):
    _name = "ShapesCollection"


class AdditionalInputs(_Unavailable):
    _name = "AdditionalInputs"


class Constraint(_Unavailable):
    _name = "Constraint"


class FlatArgsAdapter(_Unavailable):
    _name = "FlatArgsAdapter"


class CustomDecompTable(_Unavailable):
    _name = "CustomDecompTable"


class _DynamicShapes:
    """torch.export.dynamic_shapes: its names raise as the rest of export."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _missing("dynamic_shapes." + name)


dynamic_shapes = _DynamicShapes()
