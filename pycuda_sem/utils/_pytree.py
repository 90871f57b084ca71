"""torch.utils._pytree: nested containers seen as a flat list of leaves and
a TreeSpec that rebuilds them.

Libraries built on torch (and this project's func transforms) walk
arguments with it. The containers known by default are torch's: tuple,
list, dict (keys in insertion order), OrderedDict, defaultdict, deque and
namedtuples; register_pytree_node adds others. Everything else, None
included, is a leaf.
"""
import collections as _collections
import dataclasses as _dataclasses

__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten",
           "tree_leaves", "tree_structure", "tree_map", "tree_map_", "tree_map_only",
           "tree_all", "tree_any", "tree_all_only", "tree_any_only", "treespec_pprint",
           "SUPPORTED_NODES", "is_namedtuple", "is_namedtuple_class"]


@_dataclasses.dataclass(frozen=True)
class NodeDef:
    type: type
    flatten_fn: object
    unflatten_fn: object


SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make `cls` a container: flatten_fn(obj) -> (children, context) and
    unflatten_fn(children, context) -> obj."""
    if not isinstance(cls, type):
        raise TypeError("register_pytree_node(): cls must be a type, not %s" % type(cls).__name__)
    if cls in SUPPORTED_NODES:
        raise ValueError("%s is already registered as pytree node." % cls)
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


def is_namedtuple_class(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields") \
        and isinstance(getattr(cls, "_fields"), tuple)


def is_namedtuple(obj):
    return is_namedtuple_class(type(obj))


register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c))
register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())),
                     lambda c, keys: dict(zip(keys, c)))
register_pytree_node(_collections.OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                     lambda c, keys: _collections.OrderedDict(zip(keys, c)))
register_pytree_node(_collections.defaultdict,
                     lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                     lambda c, ctx: _collections.defaultdict(ctx[0], zip(ctx[1], c)))
register_pytree_node(_collections.deque, lambda d: (list(d), d.maxlen),
                     lambda c, maxlen: _collections.deque(c, maxlen=maxlen))


def _node_type(obj):
    t = type(obj)
    if t in SUPPORTED_NODES:
        return t
    if is_namedtuple(obj):
        return _collections.namedtuple  # the marker of every namedtuple class
    return None


class TreeSpec:
    """A container's type, its context (keys, namedtuple class, ...) and its
    children's specs; a leaf is LeafSpec()."""

    def __init__(self, type, context, children_specs):  # noqa: A002 - torch's name
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self):
        return self.type is None

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type and self.context == other.context
                and self.children_specs == other.children_specs)

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self.children_specs)))

    def __repr__(self):
        if self.is_leaf():
            return "*"
        name = "namedtuple" if self.type is _collections.namedtuple else self.type.__name__
        return "TreeSpec(%s, %r, [%s])" % (name, self.context,
                                             ", ".join(repr(c) for c in self.children_specs))

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])


def _flatten(tree, is_leaf, leaves):
    t = None if (is_leaf is not None and is_leaf(tree)) else _node_type(tree)
    if t is None:
        leaves.append(tree)
        return LeafSpec()
    if t is _collections.namedtuple:
        children, context = list(tree), type(tree)
    else:
        children, context = SUPPORTED_NODES[t].flatten_fn(tree)
    return TreeSpec(t, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    """(leaves, spec): the leaves in order and the structure around them."""
    leaves = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def _build(spec, it):
    if spec.is_leaf():
        return next(it)
    children = [_build(c, it) for c in spec.children_specs]
    if spec.type is _collections.namedtuple:
        return spec.context(*children)
    return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec.context)


def tree_unflatten(leaves, treespec):
    """The structure of treespec rebuilt around `leaves`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError("tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
                        "TreeSpec but got item of type %s." % type(treespec).__name__)
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError("treespec.unflatten(leaves): `leaves` has length %d but the spec refers to "
                         "a pytree that holds %d items (%r)." % (len(leaves), treespec.num_leaves, treespec))
    return _build(treespec, iter(leaves))


def tree_map(func, tree, *rests, is_leaf=None):
    """func applied to the leaves of tree (and the matching leaves of rests),
    in the same structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = []
    for r in rests:
        rl, rs = tree_flatten(r, is_leaf)
        if rs != spec:
            raise ValueError("tree_map: the trees have different structures: %r and %r" % (spec, rs))
        others.append(rl)
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func, tree, *rests, is_leaf=None):
    """func called on every leaf for its effect; returns tree."""
    leaves = tree_leaves(tree, is_leaf)
    others = [tree_leaves(r, is_leaf) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _only(types, func):
    return lambda x: func(x) if isinstance(x, types) else x


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    """func applied to the leaves that are instances of type_or_types; others kept."""
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any(pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, type_or_types))


def treespec_pprint(treespec):
    return repr(treespec)
