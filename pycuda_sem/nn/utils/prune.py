"""torch.nn.utils.prune: masking parameters of a module.

Pruning `module.<name>` moves the Parameter to `<name>_orig`, stores a 0/1 mask
(same shape and dtype) as the buffer `<name>_mask`, and makes `<name>` a plain
tensor attribute equal to `orig * mask`, recomputed by a forward pre-hook (the
pruning method object itself) before each forward. Gradients therefore reach
`<name>_orig` through the mask, so masked entries get zero gradient.

Pruning the same tensor again wraps the methods in a PruningContainer: the new
method only sees what is still unpruned (the kept entries for unstructured
methods, the kept channels for structured ones) and its mask is merged into the
old one. `remove` folds the mask into the Parameter for good.

Selection rules follow torch so that masks agree: L1 pruning zeroes the `k`
smallest magnitudes found by `topk(largest=False)`, Ln structured pruning keeps
the channels found by `topk(norm, largest=True)`, and a float `amount` is turned
into a count with Python's `round` (half to even).
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ...autograd.grad_mode import no_grad

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


def _torch():
    # The package is imported lazily: nn.utils is loaded while pycuda_sem itself loads.
    import pycuda_sem
    return pycuda_sem


class BasePruningMethod(ABC):
    """Base class of pruning methods; a subclass defines `compute_mask` and PRUNING_TYPE
    ("unstructured", "structured" with a `dim` attribute, or "global")."""

    _tensor_name = None

    def __call__(self, module, inputs):
        # The forward pre-hook: refresh the pruned tensor from orig and mask.
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for tensor `t` (importance scores), combined with `default_mask`."""

    def apply_mask(self, module):
        """`<name>_orig * <name>_mask` for the tensor this method prunes."""
        if self._tensor_name is None:
            raise AssertionError("Module %s has to be pruned" % (module,))
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune `module.<name>` with `cls(*args, **kwargs)` (joined with an earlier
        pruning of the same tensor into a PruningContainer); returns the method."""
        old_key, old_method = None, None
        for key, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                if old_method is not None:
                    raise AssertionError(
                        "Avoid adding multiple pruning hooks to the same tensor %s of module %s. "
                        "Use a PruningContainer." % (name, module))
                old_key, old_method = key, hook
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:
            container = (old_method if isinstance(old_method, PruningContainer)
                         else PruningContainer(old_method))
            previous = container._pruning_methods
            container.add_pruning_method(method)
            method = container

        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise AssertionError(
                    "importance_scores should have the same shape as parameter %s of %s, got %s vs %s"
                    % (name, module, tuple(importance_scores.shape), tuple(orig.shape)))
        else:
            importance_scores = orig

        first = old_method is None
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _torch().ones_like(orig)
        else:
            old_mask = getattr(module, name + "_mask")
            default_mask = old_mask.detach().clone(memory_format=_torch().contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
        except Exception:
            # Leave the module as it was: the Parameter back in place, or the
            # earlier pruning (its mask and hook) untouched.
            if first:
                module._buffers.pop(name + "_mask", None)
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            else:
                container._pruning_methods = previous
                module.register_buffer(name + "_mask", old_mask)
            raise
        if old_key is not None:
            del module._forward_pre_hooks[old_key]
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` times the mask computed from `importance_scores` (default `t`)."""
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(t.shape):
                raise AssertionError("importance_scores should have the same shape as tensor t")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = _torch().ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruned tensor permanent: `<name>` becomes the original Parameter
        object holding `orig * mask`; `<name>_orig` and `<name>_mask` go away."""
        if self._tensor_name is None:
            raise AssertionError("Module %s has to be pruned before pruning can be removed" % (module,))
        name = self._tensor_name
        with no_grad():
            weight = self.apply_mask(module).detach()
        if name in module.__dict__:
            object.__delattr__(module, name)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods applied one after the other to one tensor; the
    last one added acts on what the earlier ones left unpruned."""

    def __init__(self, *args):
        self._pruning_methods = tuple()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod) and isinstance(args[0], Iterable):
            args = tuple(args[0])
        if args:
            self._tensor_name = args[0]._tensor_name if isinstance(args[0], BasePruningMethod) else None
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Append `method` (it must prune the same tensor name)."""
        if method is None:
            return
        if not isinstance(method, BasePruningMethod):
            raise TypeError("%s is not a BasePruningMethod subclass" % type(method))
        if self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named '%s' to PruningContainer %s. "
                "Found '%s'" % (self._tensor_name, self, method._tensor_name))
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """Run the last method on the part of `t` that `default_mask` still keeps and
        write its answer into a copy of `default_mask`."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = getattr(method, "PRUNING_TYPE", None)
        if kind == "unstructured":
            # The kept entries, flattened in row-major order.
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the "
                                     "attribute `dim` defined.")
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError("Index is out of bounds for tensor with dimensions %d" % ndim)
            # A channel stays in play while any of its entries is kept.
            others = [d for d in range(ndim) if d != dim]
            keep = default_mask.sum(dim=others) != 0 if others else default_mask != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            slc = tuple(slice(None) for _ in range(t.dim()))
        else:
            raise ValueError("Unrecognized PRUNING_TYPE %s" % (kind,))
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (useful to reparameterise a tensor)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _UnstructuredByScore(BasePruningMethod):
    """Unstructured pruning of `amount` entries: the subclass says which k
    (`_pruned(t, k)`, flat indices); the count, its checks and the mask are
    shared."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.nelement()
        k = _count(self.amount, size)
        _check_amount_fits(k, size)
        mask = default_mask.clone(memory_format=_torch().contiguous_format)
        if k != 0:
            mask.view(-1)[self._pruned(t, k)] = 0
        return mask


class RandomUnstructured(_UnstructuredByScore):
    """Prunes `amount` entries chosen uniformly at random."""

    def _pruned(self, t, k):
        # The k largest of one uniform draw per entry are a uniform random k-subset.
        return _torch().topk(_torch().rand_like(t, dtype=_float_dtype(t)).view(-1), k=k).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredByScore):
    """Prunes the `amount` entries of smallest absolute value."""

    def _pruned(self, t, k):
        return _torch().topk(t.abs().reshape(-1), k=k, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        _check_dim(t, self.dim)
        nch = t.shape[self.dim]
        k = _count(self.amount, nch)
        _check_amount_fits(k, nch)
        if k == 0:
            return default_mask
        draw = _torch().rand(nch, device=t.device)
        keep = _torch().topk(draw, k=nch - k).indices
        mask = _channel_mask(t, self.dim, keep)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm (`n` as torch.norm's
    `p`: a number, inf, -inf, 'fro' or 'nuc')."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        _check_dim(t, self.dim)
        nch = t.shape[self.dim]
        k = _count(self.amount, nch)
        _check_amount_fits(k, nch)
        if k == 0:
            return default_mask
        d = self.dim % t.dim()
        norms = _torch().norm(t, p=self.n, dim=[i for i in range(t.dim()) if i != d])
        keep = _torch().topk(norms, k=nch - k, largest=True).indices
        mask = _channel_mask(t, self.dim, keep)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (combined with any earlier mask)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError("default_mask and mask must have the same shape, got %s vs %s"
                                 % (tuple(default_mask.shape), tuple(self.mask.shape)))
        return default_mask * self.mask.to(dtype=default_mask.dtype, device=default_mask.device)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Reparameterise `module.<name>` with an all-ones mask; returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune `amount` random entries of `module.<name>`; returns module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the `amount` entries of smallest |importance_scores| (default the tensor)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune `amount` random channels of `module.<name>` along `dim`; returns module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the `amount` channels along `dim` of smallest Ln norm; returns module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) pairs in `parameters` together: `pruning_method(**kwargs)`
    (an unstructured method class) picks entries over all of them as one vector."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    from .convert_parameters import parameters_to_vector
    torch = _torch()
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    # Entries pruned before stay pruned and are not counted again.
    default_mask = parameters_to_vector(
        [getattr(m, n + "_mask") if hasattr(m, n + "_mask") else torch.ones_like(getattr(m, n))
         for m, n in parameters])
    method = pruning_method(**kwargs)
    if getattr(method, "PRUNING_TYPE", None) != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        "Found method %s of type %s"
                        % (pruning_method, getattr(method, "PRUNING_TYPE", None)))
    method._tensor_name = "temp"
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for m, n in parameters:
        param = getattr(m, n)
        count = param.numel()
        custom_from_mask(m, n, mask=final_mask[start:start + count].view_as(param))
        start += count


def custom_from_mask(module, name, mask):
    """Prune `module.<name>` where `mask` is 0; returns module."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of `module.<name>` permanent (see BasePruningMethod.remove)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError("Parameter '%s' of module %s has to be pruned before pruning can be removed"
                     % (name, module))


def is_pruned(module):
    """Whether `module` or any submodule has a pruning pre-hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())


# -- helpers ------------------------------------------------------------------------------

def _check_amount(amount):
    """torch's checks at construction: a real number, an int >= 0 or a float in [0, 1]."""
    if not isinstance(amount, numbers.Real):
        raise TypeError("Invalid type for amount: %s. Must be int or float." % (amount,))
    if isinstance(amount, numbers.Integral):
        bad = amount < 0
    else:
        bad = float(amount) > 1.0 or float(amount) < 0.0
    if bad:
        raise ValueError("amount=%s should either be a float in the range [0, 1] or a "
                         "non-negative integer" % (amount,))


def _count(amount, size):
    """How many of `size` units `amount` stands for (Python's round for a fraction)."""
    return amount if isinstance(amount, numbers.Integral) else round(amount * size)


def _check_amount_fits(k, size):
    if k > size:
        raise ValueError("amount=%s should be smaller than the number of parameters to prune=%s"
                         % (k, size))


def _check_structured(t):
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         "Found tensor of shape %s with %d dims" % (tuple(t.shape), t.dim()))


def _check_dim(t, dim):
    if dim >= t.dim():
        raise IndexError("Invalid index %s for tensor of size %s" % (dim, tuple(t.shape)))


def _float_dtype(t):
    return t.dtype if t.is_floating_point() else _torch().get_default_dtype()


def _channel_mask(t, dim, keep):
    """A mask like `t` that is 1 on the channels `keep` along `dim` and 0 elsewhere."""
    mask = _torch().zeros_like(t)
    slc = [slice(None)] * t.dim()
    slc[dim] = keep
    mask[tuple(slc)] = 1
    return mask
