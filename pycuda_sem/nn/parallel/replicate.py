"""Copies of a module on other devices whose parameters are differentiable
copies (Tensor.to) of the originals, so backward through a replica
accumulates into the original Parameter's .grad."""
from collections import OrderedDict

from ... import _C

__all__ = ["replicate"]


def replicate(network, devices, detach=False):
    """One replica of network per device; a replica on the original's device
    shares its storage (an alias view that gradients flow back through)."""
    devices = [_C.device("cuda", d) if isinstance(d, int) else _C.device(d) for d in devices]
    modules = list(network.modules())
    replicas = []
    for device in devices:
        memo = {}  # id(original module) -> its replica on this device
        for module in modules:
            r = module._replicate_for_data_parallel()
            memo[id(module)] = r
        for module in modules:
            r = memo[id(module)]
            r._parameters = OrderedDict()
            for name, p in module._parameters.items():
                if p is None:
                    r._parameters[name] = None
                else:
                    q = p.to(device)
                    if detach:
                        q = q.detach()
                    elif q is p:
                        # to() hands back a tensor already on the device; a
                        # replica's parameter must still be a differentiable
                        # copy (a non-leaf), as torch's Broadcast makes it
                        q = p.view_as(p)
                    r._parameters[name] = q
            for name, b in module._buffers.items():
                r._buffers[name] = None if b is None else b.to(device)
            r._modules = OrderedDict((name, None if m is None else memo[id(m)])
                                     for name, m in module._modules.items())
        replicas.append(memo[id(network)])
    return replicas
