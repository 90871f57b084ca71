"""torch.nn.utils.convert_conv2d_weight_memory_format /
convert_conv3d_weight_memory_format: re-lay the weights of every Conv and
ConvTranspose (2-D, resp. 3-D) in a module tree in the given memory format
(channels_last / channels_last_3d), in place, keeping the Parameter objects."""
from ...autograd.grad_mode import no_grad

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        with no_grad():
            module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Conv2d / ConvTranspose2d weights of module and its children in memory_format."""
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Conv3d / ConvTranspose3d weights of module and its children in memory_format."""
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
