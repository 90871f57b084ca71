"""pycuda_sem.export: the names of torch.export, each raising
NotImplementedError. torch.export traces a model into a graph program;
pycuda_sem runs eagerly and has no tracer, so there is nothing to export,
save or load. Export with torch itself (save the state_dict here and load it
into the torch model)."""

from ._unavailable import unavailable as _unavailable, unavailable_class as _unavailable_class

__all__ = ["export", "load", "save", "draft_export", "unflatten", "register_dataclass", "dims",
           "Dim", "ExportedProgram", "ExportGraphSignature", "ExportBackwardSignature",
           "ModuleCallEntry", "ModuleCallSignature", "UnflattenedModule", "ShapesCollection",
           "AdditionalInputs", "Constraint", "FlatArgsAdapter", "CustomDecompTable",
           "default_decompositions", "dynamic_shapes"]


_WHY = "it runs eagerly and has no graph tracer (export with torch itself from a saved state_dict)"


def _missing(name):
    return _unavailable("export", name, _WHY)


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


class Dim(_unavailable_class("export", "Dim", _WHY)):
    # Dim.AUTO / Dim.STATIC / Dim.DYNAMIC are read at import by some scripts;
    # they are markers only (export itself raises).
    AUTO = "AUTO"
    STATIC = "STATIC"
    DYNAMIC = "DYNAMIC"


ExportedProgram = _unavailable_class("export", "ExportedProgram", _WHY)
ExportGraphSignature = _unavailable_class("export", "ExportGraphSignature", _WHY)
ExportBackwardSignature = _unavailable_class("export", "ExportBackwardSignature", _WHY)
ModuleCallEntry = _unavailable_class("export", "ModuleCallEntry", _WHY)
ModuleCallSignature = _unavailable_class("export", "ModuleCallSignature", _WHY)
UnflattenedModule = _unavailable_class("export", "UnflattenedModule", _WHY)
ShapesCollection = _unavailable_class("export", "ShapesCollection", _WHY)
AdditionalInputs = _unavailable_class("export", "AdditionalInputs", _WHY)
Constraint = _unavailable_class("export", "Constraint", _WHY)
FlatArgsAdapter = _unavailable_class("export", "FlatArgsAdapter", _WHY)
CustomDecompTable = _unavailable_class("export", "CustomDecompTable", _WHY)


class _DynamicShapes:
    """torch.export.dynamic_shapes: its names raise as the rest of export."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _missing("dynamic_shapes." + name)


dynamic_shapes = _DynamicShapes()
