"""torch.nn.DataParallel: one process driving every visible GPU.

Each forward scatters the batch along `dim`, runs a replica of the module per
device (replicas made afresh each call from the live parameters), and
gathers the outputs on output_device. With one device, or none, it simply
calls the module, as torch does. The legacy note recommends
DistributedDataParallel instead, and so does the warning this class emits."""
import warnings
from itertools import chain

from ... import _C, cuda
from ...autograd.grad_mode import is_grad_enabled
from ..modules.module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _index(d):
    if isinstance(d, int):
        return d
    d = _C.device(d)
    return d.index if d.index is not None else cuda.current_device()


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        warnings.warn("nn.DataParallel runs one process over all GPUs; it is recommended to use "
                      "DistributedDataParallel instead, even on a single machine.", UserWarning,
                      stacklevel=2)
        self.module = module
        self.dim = dim
        if not cuda.is_available():
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(output_device)
        self.src_device_obj = _C.device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers on device %s "
                                   "(device_ids[0]) but found one of them on device: %s"
                                   % (self.src_device_obj, t.device))
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        # under no_grad the replicas need no graph back to the originals
        return replicate(module, device_ids, not is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form: one DataParallel-style call without a wrapper module."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if device_ids is None:
        device_ids = list(range(cuda.device_count()))
    if not device_ids:
        return module(*inputs, **(module_kwargs or {}))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_index(d) for d in device_ids]
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[:len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, _index(output_device), dim)
