"""Splitting a batch over devices and joining the outputs on one.

Both directions are ordinary differentiable ops (chunk, to, cat), so the
backward pass sends each replica's gradient back to the device and slice of
the input it came from without any code here."""
import warnings

from ... import _C

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _device(d):
    return _C.device("cuda", d) if isinstance(d, int) else _C.device(d)


def scatter(inputs, target_gpus, dim=0):
    """Tensors are chunked along dim, one chunk per device (fewer when the
    batch is smaller than the device count); tuples, lists and dicts are
    scattered element by element; anything else is repeated."""
    def scatter_map(obj):
        if isinstance(obj, _C.Tensor):
            chunks = obj.chunk(len(target_gpus), dim)
            return [c.to(_device(d), non_blocking=True) for c, d in zip(chunks, target_gpus)]
        if isinstance(obj, tuple) and len(obj) > 0:
            if hasattr(obj, "_fields"):  # namedtuple
                return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter for (args, kwargs), padded so both have one entry per replica."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenates corresponding tensors of the outputs on target_device
    (-1: the CPU); structures are gathered element by element."""
    target = _C.device("cpu") if target_device == -1 else _device(target_device)

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, _C.Tensor):
            if all(o.dim() == 0 for o in outs) and dim == 0:
                warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                              "scalars; will instead unsqueeze and return a vector.")
                outs = [o.reshape(1) for o in outs]
            return _C.cat([o.to(target) for o in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if hasattr(out, "_fields"):
            return type(out)._make(map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))

    return gather_map(outputs)
