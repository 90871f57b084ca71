"""functional_call: run a module with some of its parameters and buffers
replaced by given tensors, for one call (torch.func.functional_call; the
deprecated torch.nn.utils.stateless form warns and calls it).

The module's own entries in _parameters / _buffers are swapped for the given
tensors (any Tensor, differentiable: gradients flow to them, not to the
module's parameters) and put back afterwards, even if the call raises.
Tied weights (one tensor under several names) are replaced together unless
tie_weights=False."""
import warnings

from ... import _C

__all__ = ["functional_call"]


def _owner(module, name):
    *path, leaf = name.split(".")
    for p in path:
        sub = module._modules.get(p)
        if sub is None:
            raise AttributeError("%s has no attribute `%s`" % (module._get_name(), p))
        module = sub
    return module, leaf


def _merge(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        out = {}
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in out:
                    raise ValueError("%s appeared in multiple dictionaries; behavior of "
                                     "functional call is ambiguous" % k)
                out[k] = v
        return out
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
                     "but got %s" % type(parameter_and_buffer_dicts))


def _tied_names(module):
    """{name: [every name of the same tensor]} over parameters and buffers."""
    by_id = {}
    for name, t in module.named_parameters(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    for name, t in module.named_buffers(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() for n in names}


def _functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named tensors in place of its own."""
    given = _merge(parameter_and_buffer_dicts)
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    if tie_weights:
        tied = _tied_names(module)
        for name, value in list(given.items()):
            for other in tied.get(name, ()):
                if other in given and given[other] is not value:
                    raise ValueError("functional_call got multiple values for keys %s, which "
                                     "are tied. Consider using tie_weights=False"
                                     % sorted(tied[name]))
                given.setdefault(other, value)
    if strict:
        own = set(n for n, _ in module.named_parameters(remove_duplicate=False))
        own |= set(n for n, _ in module.named_buffers(remove_duplicate=False))
        missing = sorted(own - set(given))
        unexpected = sorted(set(given) - own)
        if missing or unexpected:
            msg = []
            if unexpected:
                msg.append("Unexpected key(s): %s." % ", ".join(repr(k) for k in unexpected))
            if missing:
                msg.append("Missing key(s): %s." % ", ".join(repr(k) for k in missing))
            raise RuntimeError("Error(s) in reparametrizing for %s:\n\t%s"
                               % (module._get_name(), "\n\t".join(msg)))
    saved = []
    try:
        for name, value in given.items():
            owner, leaf = _owner(module, name)
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError("functional_call: the value for %r must be a Tensor, not %s"
                                % (name, type(value).__name__))
            if leaf in owner._parameters:
                store = owner._parameters
            elif leaf in owner._buffers:
                store = owner._buffers
            else:
                # a plain attribute (or a new name): set, and removed afterwards
                saved.append((owner, None, leaf, owner.__dict__.get(leaf, _ABSENT)))
                object.__setattr__(owner, leaf, value)
                continue
            saved.append((owner, store, leaf, store[leaf]))
            store[leaf] = value
        return module(*args, **kwargs)
    finally:
        for owner, store, leaf, old in reversed(saved):
            if store is not None:
                store[leaf] = old
            elif old is _ABSENT:
                owner.__dict__.pop(leaf, None)
            else:
                object.__setattr__(owner, leaf, old)


_ABSENT = object()


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                                tie_weights=True, strict=False):
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                           strict=strict)
_functional_call.__name__ = "functional_call"
