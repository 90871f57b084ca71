"""torch.utils.hooks: the handle that register_hook returns."""
import weakref


def _ref(d):
    """A weak reference where the dict type allows one (OrderedDict), else a
    strong one (the C core keeps hooks in plain dicts)."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d


class RemovableHandle:
    """Removes the hook it was made for from its dict on remove() (or on
    leaving a with block). It holds the dict weakly, as torch's does."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = _ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        if extra_dict is not None:
            self.extra_dict_ref = (_ref(extra_dict),)

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None and self.id in d:
            del d[self.id]
        for ref in self.extra_dict_ref:
            e = ref()
            if e is not None and self.id in e:
                del e[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()
