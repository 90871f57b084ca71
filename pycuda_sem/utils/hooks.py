"""torch.utils.hooks.RemovableHandle: what `register_hook` and friends return.

A handle remembers the dict its hook was stored in, weakly (a handle kept by the
user must not keep a freed tensor's hooks alive), and the hook's key, a number
unique in the process. `remove()` deletes that key if it is still there; it can
be called any number of times, and the handle is a context manager that removes
the hook when the block ends.
"""
import itertools
import weakref

__all__ = ["RemovableHandle", "unserializable_hook"]

_next_id = itertools.count()  # next() on a count is atomic under the GIL


def _ref(d):
    """A weak reference to d; a strong one for a plain dict, which cannot be
    weakly referenced (torch stores hooks in OrderedDicts, which can)."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d


class RemovableHandle:
    """A handle which provides the capability to remove a hook.

    Args:
        hooks_dict (dict): A dictionary of hooks, indexed by hook ``id``.
        extra_dict (Union[dict, List[dict]]): An additional dictionary or list of
            dictionaries whose keys will be deleted when the same keys are
            removed from ``hooks_dict``.
    """

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = _ref(hooks_dict)
        self.id = next(_next_id)
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (_ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(_ref(d) for d in extra_dict)
        else:
            self.extra_dict_ref = ()

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        if self.extra_dict_ref:
            return (self.hooks_dict_ref(), self.id,
                    tuple(ref() for ref in self.extra_dict_ref))
        return (self.hooks_dict_ref(), self.id)

    def __setstate__(self, state):
        self.hooks_dict_ref = _ref({} if state[0] is None else state[0])
        self.id = state[1]
        extra = state[2] if len(state) > 2 else ()
        self.extra_dict_ref = tuple(_ref({} if d is None else d) for d in extra)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def unserializable_hook(f):
    """Mark a function as an unserializable hook (kept for torch parity)."""
    f.__torch_unserializable__ = True
    return f
