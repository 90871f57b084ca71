"""torch.__future__: switches for behaviour that torch plans to make the
default. Module conversions (to, cuda, cpu, half, ..., to_empty) read
get_overwrite_module_params_on_conversion: when True they give the module
new Parameter objects instead of swapping the memory of the old ones
through .data (so an optimizer built before the conversion keeps the old
tensors, as in torch). The swap mode (swap_tensors for conversions and
load_state_dict) is not implemented: swap_tensors here cannot change a
tensor's dtype, which model.half() and the like need."""

_overwrite_module_params_on_conversion = False

__all__ = ["set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]


def set_overwrite_module_params_on_conversion(value):
    """Whether module conversions assign new Parameters (True) or change the
    existing ones in place (False, the default)."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = bool(value)


def get_overwrite_module_params_on_conversion():
    """See set_overwrite_module_params_on_conversion; False by default."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value):
    """Only False is accepted: the swap mode is not implemented here."""
    if value:
        raise NotImplementedError(
            "torch.__future__.set_swap_module_params_on_conversion(True) is not implemented in "
            "pycuda_sem: swap_tensors cannot change a tensor's dtype here, which conversions such "
            "as module.half() need; set_overwrite_module_params_on_conversion(True) gives new "
            "Parameters instead")


def get_swap_module_params_on_conversion():
    """Always False (the swap mode is not implemented here)."""
    return False
