"""torch.nn.utils.skip_init. torch builds the module on the meta device and
then gives it uninitialized memory; pycuda_sem has no meta device, so the
module is built on the target device directly and its initialisers do run.
The contract is the same (the values are unspecified); only the time spent
initialising is not saved."""
import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) on kwargs' device (cpu by default)."""
    from ..modules.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError("Expected a Module; got %s" % module_cls)
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs)
