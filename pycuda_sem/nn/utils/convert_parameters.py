"""Parameters as one flat vector and back (torch.nn.utils.convert_parameters)."""
from ... import _C

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_device):
    if old_device is None:
        return param.device
    if param.device != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_device


def parameters_to_vector(parameters):
    """cat of the flattened parameters (differentiable: a view per parameter)."""
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.reshape(-1))
    return _C.cat(vec)


def vector_to_parameters(vec, parameters):
    """Points each parameter's .data at its slice of vec (shared memory)."""
    if not isinstance(vec, _C.Tensor):
        raise TypeError("expected torch.Tensor, but got: %s" % type(vec).__name__)
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
