"""Batch, instance and group normalisation layers: BatchNorm1d/2d/3d
(running statistics as buffers, torch's momentum rule, momentum=None a
cumulative average), InstanceNorm1d/2d/3d and GroupNorm. Weight 1 and bias 0 at start, as torch."""
from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d"]


def _affine_params(module, n, affine, device, dtype, bias=True):
    # weight and bias of n channels (initialised by reset_parameters), or
    # None; bias=False (torch 2.15's argument) keeps the weight only
    if affine:
        module.weight = Parameter(_C.empty(n, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(_C.empty(n, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


class _BatchNorm(Module):
    _dims = ()  # the input dims this class accepts
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.use_bias = bool(bias)
        self.track_running_stats = track_running_stats
        _affine_params(self, num_features, affine, device, dtype, bias)
        if track_running_stats:
            self.register_buffer("running_mean", _C.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", _C.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 _C.tensor(0, dtype=_C.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            raise ValueError("expected %s input (got %dD input)"
                             % (" or ".join("%dD" % d for d in self._dims), input.dim()))

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = (1.0 / float(self.num_batches_tracked) if self.momentum is None
                      else self.momentum)
        # eval without running statistics normalises with the batch's, as torch
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias,
                            bn_training, factor, self.eps)

    def extra_repr(self):
        # bias= only when False: torch 2.15 added the argument (and prints it
        # always); earlier releases print no bias, as here by default
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, ".format(**self.__dict__)
                + ("bias=False, " if self.affine and not self.use_bias else "")
                + "track_running_stats={track_running_stats}".format(**self.__dict__))


class BatchNorm1d(_BatchNorm):
    """Over (N, C) or (N, C, L) inputs."""
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over (N, C, H, W) inputs."""
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Over (N, C, D, H, W) inputs."""
    _dims = (5,)


class GroupNorm(Module):
    """Normalises groups of channels of each sample (num_channels divisible
    by num_groups), then a per-channel affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        self.use_bias = bool(bias)
        _affine_params(self, num_channels, affine, device, dtype, bias)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}".format(**self.__dict__)
                + (", bias=False" if self.affine and not self.use_bias else ""))


class _InstanceNorm(_BatchNorm):
    """Each channel of each sample normalised over its spatial dims; no
    affine and no running statistics by default, as torch."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = input.dim() == self._dims[0]
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.1, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Over (N, C, L) or unbatched (C, L) inputs."""
    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Over (N, C, H, W) or unbatched (C, H, W) inputs."""
    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Over (N, C, D, H, W) or unbatched (C, D, H, W) inputs."""
    _dims = (4, 5)


class SyncBatchNorm(_BatchNorm):
    """BatchNorm whose statistics would be shared by the ranks of a process
    group. Without an initialised process group of more than one rank it is
    BatchNorm over any input of 2 or more dims, as torch's falls back to;
    with one, training mode raises NotImplementedError: the cross-rank
    statistics (two all-reduces forward, two backward) are not implemented
    yet. convert_sync_batchnorm swaps it in for every BatchNorm of a model."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError("expected at least 2D input (got {}D input)".format(input.dim()))

    def forward(self, input):
        if self.training:
            from ... import distributed as dist
            if dist.is_available() and dist.is_initialized() and dist.get_world_size(self.process_group) > 1:
                raise NotImplementedError("SyncBatchNorm across %d ranks is not implemented in pycuda_sem: "
                                          "use BatchNorm (per-rank statistics) or a single process"
                                          % dist.get_world_size(self.process_group))
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*D replaced by a SyncBatchNorm holding
        the same parameters and running statistics (returned, as torch's)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                from ... import no_grad
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
