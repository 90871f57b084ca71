"""Runs each replica on its own device, one thread per device as torch does,
so that the host work of one replica overlaps the kernels of the others.
Grad mode is per thread: the caller's is carried into each worker."""
import threading

from ... import _C, cuda
from ...autograd.grad_mode import is_grad_enabled, set_grad_enabled

__all__ = ["parallel_apply"]


def _device_index(x):
    if isinstance(x, _C.Tensor):
        return x.get_device()
    if isinstance(x, (list, tuple)):
        for y in x:
            d = _device_index(y)
            if d is not None and d >= 0:
                return d
    if isinstance(x, dict):
        return _device_index(list(x.values()))
    return None


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    if len(modules) != len(inputs):
        raise AssertionError("The number of modules %d is not equal to the number of inputs %d"
                             % (len(modules), len(inputs)))
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    if devices is None:
        devices = [_device_index(x) for x in inputs]
    devices = [d.index if isinstance(d, _C.device) else d for d in devices]
    grad_enabled = is_grad_enabled()
    results = {}
    lock = threading.Lock()

    def worker(i, module, input, kwargs, device):
        try:
            with set_grad_enabled(grad_enabled), cuda.device(device):
                if not isinstance(input, (list, tuple)):
                    input = (input,)
                out = module(*input, **kwargs)
            with lock:
                results[i] = out
        except Exception as e:  # re-raised in the caller's thread below
            with lock:
                results[i] = e

    if len(modules) > 1:
        threads = [threading.Thread(target=worker, args=(i, m, x, k, d))
                   for i, (m, x, k, d) in enumerate(zip(modules, inputs, kwargs_tup, devices))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        worker(0, modules[0], inputs[0], kwargs_tup[0], devices[0])
    outputs = []
    for i in range(len(inputs)):
        out = results[i]
        if isinstance(out, Exception):
            raise out
        outputs.append(out)
    return outputs
