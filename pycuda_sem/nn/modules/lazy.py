"""Lazy modules, as torch.nn's: LazyLinear, LazyConv1d/2d/3d,
LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d.

Until the first forward their parameters are UninitializedParameters (and
their running statistics UninitializedBuffers). A forward pre-hook reads the
input's feature or channel count (dim 1; the last dim for Linear, dim 0 of
an unbatched conv input), materializes the parameters in place (an
optimizer built before keeps the same tensors), initialises them as the
eager module would (its reset_parameters), and switches the module's class
to cls_to_become (Linear, Conv2d, ...), so it is then the ordinary module.
load_state_dict into a lazy module materializes its parameters from the
checkpoint's shapes first, as torch's load hook does."""
import itertools

from ... import _C
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d,
                        InstanceNorm3d)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


def _materialize(module, name, shape):
    """Materializes module.<name>: a parameter in place (same object); a
    buffer replaced by a plain tensor of its device and dtype (a Python
    Tensor subclass cannot become the C Tensor type)."""
    if name in module._parameters:
        module._parameters[name].materialize(shape)
    else:
        old = module._buffers[name]
        module._buffers[name] = _C.empty(shape, device=old.data.device, dtype=old.data.dtype)


class LazyModuleMixin:
    """Mixed in before the eager class: its __init__ registers the forward
    pre-hook that infers the shapes on the first call."""
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                        self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError("initialize_parameters is not implemented for %s"
                                  % type(self).__name__)

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError("module %s has not been fully initialized" % module._get_name())
        module._initialize_hook.remove()
        del module.__dict__["_initialize_hook"]
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # uninitialized tensors go in as they are (detach() on them is refused)
        for name, t in self._parameters.items():
            if t is not None:
                destination[prefix + name] = t if (is_lazy(t) or keep_vars) else t.detach()
        for name, t in self._buffers.items():
            if t is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = t if (is_lazy(t) or keep_vars) else t.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # torch's _lazy_load_hook: take the checkpoint's shapes, then load as usual
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and t is not None and is_lazy(t):
                src = state_dict[key]
                if not is_lazy(src):
                    _materialize(self, name, tuple(src.shape))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
        # a lazy module fully loaded is the ordinary one (torch keeps the hook
        # and class until the next forward, which then finds nothing to infer)

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize the "
                           "modules")


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last dim of the first input."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            _materialize(self, "weight", (self.out_features, self.in_features))
            if self.bias is not None:
                _materialize(self, "bias", (self.out_features,))
            self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    _conv_d = 0

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        d = self._conv_d
        if input.dim() not in (d + 1, d + 2):
            raise RuntimeError("Expected %dD (unbatched) or %dD (batched) input to %s, but got "
                               "input of size: %s" % (d + 1, d + 2, type(self).__name__,
                                                      list(input.shape)))
        return input.shape[1] if input.dim() == d + 2 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            k = tuple(self.kernel_size)
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups) + k
            else:
                shape = (self.out_channels, self.in_channels // self.groups) + k
            _materialize(self, "weight", shape)
            if self.bias is not None:
                _materialize(self, "bias", (self.out_channels,))
            self.reset_parameters()


def _lazy_conv_init(self, out_channels, bias, device, dtype):
    # the eager __init__ ran with in_channels=0 and no bias: the weight and
    # the bias become placeholders; groups divide in_channels=0, so
    # in_channels is checked against groups at the first forward
    self.weight = UninitializedParameter(device=device, dtype=dtype)
    self.out_channels = out_channels
    if bias:
        self.bias = UninitializedParameter(device=device, dtype=dtype)


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    cls_to_become = Conv1d
    _conv_d = 1

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)
        _lazy_conv_init(self, out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    cls_to_become = Conv2d
    _conv_d = 2

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)
        _lazy_conv_init(self, out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    cls_to_become = Conv3d
    _conv_d = 3

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)
        _lazy_conv_init(self, out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    cls_to_become = ConvTranspose1d
    _conv_d = 1

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode)
        _lazy_conv_init(self, out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    cls_to_become = ConvTranspose2d
    _conv_d = 2

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode)
        _lazy_conv_init(self, out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
    _conv_d = 3

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode)
        _lazy_conv_init(self, out_channels, bias, device, dtype)


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        # the eager __init__ with no affine and no statistics; the
        # placeholders go in after
        super().__init__(0, eps, momentum, False, False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("running_var", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 _C.tensor(0, dtype=_C.int64, device=device))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                _materialize(self, "weight", (self.num_features,))
                _materialize(self, "bias", (self.num_features,))
            if self.track_running_stats:
                _materialize(self, "running_mean", (self.num_features,))
                _materialize(self, "running_var", (self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    cls_to_become = BatchNorm3d


class _LazyInstanceNorm(_LazyNormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None):
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype)

    def initialize_parameters(self, input):
        # the channel dim of an unbatched input is 0
        if self.has_uninitialized_params():
            batched = input.dim() == self._dims[-1]
            self.num_features = input.shape[1] if batched else input.shape[0]
            if self.affine:
                _materialize(self, "weight", (self.num_features,))
                _materialize(self, "bias", (self.num_features,))
            if self.track_running_stats:
                _materialize(self, "running_mean", (self.num_features,))
                _materialize(self, "running_var", (self.num_features,))
            self.reset_parameters()


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
