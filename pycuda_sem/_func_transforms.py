"""torch.func's transforms: vmap, grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian and stack_module_state.

torch implements them with batching rules and forward-mode AD inside the
dispatcher. Here they are built from what the project has: vmap runs the
function once per index of the mapped dimension and stacks the results (so
it is exactly the per-sample computation, at the cost of one call a sample),
and the derivative transforms run the reverse-mode engine
(autograd.grad with create_graph where an outer transform needs the graph,
so that grad(grad(f)) and jacrev(jacrev(f)) compose). jacfwd and jvp give
forward-mode results computed in reverse mode: the same values, not the same
cost profile.
"""
import functools

from . import _C
from .autograd.grad_mode import enable_grad as _enable_grad

# ---- pytrees: tensors inside tuples, lists and dicts -------------------------------


def _flatten(tree):
    """(leaves, rebuild): the leaves of nested tuples/lists/dicts, in order,
    and a function that rebuilds the same structure from new leaves."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        counts = [len(p[0]) for p in parts]
        leaves = [x for p in parts for x in p[0]]
        kind = type(tree)

        def rebuild(new):
            out, i = [], 0
            for (_, rb), c in zip(parts, counts):
                out.append(rb(new[i:i + c]))
                i += c
            return kind(out) if kind in (tuple, list) else kind(*out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [_flatten(tree[k]) for k in keys]
        counts = [len(p[0]) for p in parts]
        leaves = [x for p in parts for x in p[0]]

        def rebuild(new):
            out, i = {}, 0
            for k, (_, rb), c in zip(keys, parts, counts):
                out[k] = rb(new[i:i + c])
                i += c
            return out
        return leaves, rebuild
    return [tree], lambda new: new[0]


# ---- vmap ------------------------------------------------------------------------


def _dims_for(args, in_dims):
    """One in_dim per leaf of args (in_dims an int/None, or a tree matching args)."""
    leaves, _ = _flatten(args)
    if in_dims is None or isinstance(in_dims, int):
        return [in_dims if isinstance(x, _C.Tensor) else None for x in leaves]
    if not isinstance(in_dims, (tuple, list)) or len(in_dims) != len(args):
        raise ValueError("vmap: in_dims is not compatible with the structure of inputs: expected "
                         "an int, None or a tuple of %d entries, got %r" % (len(args), in_dims))
    dims = []
    for a, d in zip(args, in_dims):
        la, _ = _flatten(a)
        if d is None or isinstance(d, int):
            dims.extend(d if isinstance(x, _C.Tensor) else None for x in la)
        else:
            ld, _ = _flatten(d)
            if len(ld) != len(la):
                raise ValueError("vmap: in_dims is not compatible with the structure of inputs")
            dims.extend(ld)
    return dims


def _rng_states():
    from . import random as _random, cuda as _cuda
    cpu = _random.get_rng_state()
    gpu = _cuda.get_rng_state_all() if _cuda.is_initialized() else None
    return cpu, gpu


def _set_rng_states(states):
    from . import random as _random, cuda as _cuda
    _random.set_rng_state(states[0])
    if states[1] is not None:
        _cuda.set_rng_state_all(states[1])


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dimension in_dims of its tensor arguments: the results
    of func on each index, stacked along out_dims. randomness='same' gives
    every index the same random draws; 'different' and 'error' let each index
    draw its own ('error' cannot be enforced here: random ops are not
    intercepted)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           "'same'. Got %s" % randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("vmap: chunk_size should be None or greater than 0. (got %r)" % (chunk_size,))
    if not callable(func):
        raise TypeError("vmap: func must be callable, got %s" % type(func).__name__)

    @functools.wraps(func)
    def mapped(*args, **kwargs):
        leaves, rebuild = _flatten(args)
        dims = _dims_for(args, in_dims)
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, _C.Tensor):
                raise ValueError("vmap: in_dim %r was given for an input that is not a tensor (%s)"
                                 % (d, type(x).__name__))
            if not -x.dim() <= d < max(x.dim(), 1) or x.dim() == 0:
                raise ValueError("vmap: Got in_dim=%d for an input but the input is of type %s with "
                                 "%d dims" % (d, type(x).__name__, x.dim()))
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError("vmap: at least one input must be a tensor mapped over a dimension "
                             "(in_dims is None for every input)")
        if any(s != sizes[0] for s in sizes):
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             "dimension, got sizes %s for the mapped dimension" % sizes)
        n = sizes[0]
        start = _rng_states() if randomness == "same" else None
        outs = []
        for i in range(n):
            if start is not None:
                _set_rng_states(start)
            sliced = [x.select(d, i) if d is not None else x for x, d in zip(leaves, dims)]
            outs.append(func(*rebuild(sliced), **kwargs))
        if n == 0:
            raise ValueError("vmap: the mapped dimension has size 0")
        first, rebuild_out = _flatten(outs[0])
        per = [_flatten(o)[0] for o in outs]
        odims = ([out_dims] * len(first) if isinstance(out_dims, int) or out_dims is None
                 else _flatten(out_dims)[0])
        if len(odims) != len(first):
            raise ValueError("vmap: out_dims is not compatible with the structure of outputs")
        stacked = []
        for j, od in enumerate(odims):
            col = [p[j] for p in per]
            if not isinstance(col[0], _C.Tensor):
                raise ValueError("vmap: `%s` must only return Tensors, got type %s"
                                 % (getattr(func, "__name__", "func"), type(col[0]).__name__))
            if od is None:
                stacked.append(col[0])
            else:
                stacked.append(_C.stack(col, od))
        return rebuild_out(stacked)
    return mapped


# ---- reverse-mode transforms -----------------------------------------------------------


_depth = [0]  # transforms whose function is running now (this one's caller among them)


def _outer_graph(leaves=()):
    """Whether something differentiates through this transform's result: an
    enclosing transform (grad(grad(f))), or a caller whose inputs require
    grad; then the derivatives are built with create_graph."""
    if not _C.is_grad_enabled():
        return False
    return _depth[0] > 0 or any(isinstance(x, _C.Tensor) and x.requires_grad for x in leaves)


def _call(func, *args, **kwargs):
    """func run as a transform's function: transforms inside it keep their graphs."""
    _depth[0] += 1
    try:
        with _enable_grad():
            return func(*args, **kwargs)
    finally:
        _depth[0] -= 1


def _prepare(x, keep_graph):
    """A tensor to differentiate with respect to: x itself when an outer
    transform tracks it, else a detached copy that requires grad."""
    if not isinstance(x, _C.Tensor):
        raise TypeError("expected tensors to differentiate with respect to, got %s" % type(x).__name__)
    if keep_graph and x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


def _argnums(argnums, nargs, name):
    many = isinstance(argnums, tuple)
    nums = argnums if many else (argnums,)
    if not nums:
        raise RuntimeError("%s: argnums must be non-empty" % name)
    for a in nums:
        if isinstance(a, bool) or not isinstance(a, int):
            raise RuntimeError("%s: argnums must be int or Tuple[int, ...] but got %r" % (name, argnums))
        if not -nargs <= a < nargs:
            raise RuntimeError("Got argnums=%d, but only %d positional inputs" % (a, nargs))
    return [a % nargs for a in nums], many


def _grad_and_value_impl(func, argnums, has_aux, args, kwargs, name):
    from .autograd import grad as _autograd_grad
    nums, many = _argnums(argnums, len(args), name)
    keep = _outer_graph(_flatten(list(args))[0])
    args = list(args)
    wrt_trees = []
    for a in nums:
        leaves, rebuild = _flatten(args[a])
        prepared = [_prepare(x, keep) for x in leaves]
        wrt_trees.append((prepared, rebuild))
        args[a] = rebuild(prepared)
    out = _call(func, *args, **kwargs)
    with _enable_grad():
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("%s(f)(*args): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True" % name)
            out, aux = out
        if not isinstance(out, _C.Tensor) or out.numel() != 1 or out.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               "Tensor, got tensor with %s dims. Maybe you wanted to use the vjp or "
                               "jacrev APIs instead?"
                               % (out.dim() if isinstance(out, _C.Tensor) else "no",))
        flat = [x for prepared, _ in wrt_trees for x in prepared]
        grads = _autograd_grad(out, flat, create_graph=keep, allow_unused=True)
    grads = [g if g is not None else _C.zeros_like(x) for g, x in zip(grads, flat)]
    res, i = [], 0
    for prepared, rebuild in wrt_trees:
        res.append(rebuild(grads[i:i + len(prepared)]))
        i += len(prepared)
    g = tuple(res) if many else res[0]
    value = out if keep else out.detach()
    return g, (value, aux) if has_aux else value


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of func's scalar output with respect to
    args[argnums], func's value); with has_aux, func returns (value, aux) and
    the result is (gradient, (value, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value_impl(func, argnums, has_aux, args, kwargs, "grad_and_value")
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func's scalar output with respect
    to args[argnums] (a tuple of them for a tuple of argnums; pytrees of
    tensors keep their structure); with has_aux, (gradient, aux)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, v = _grad_and_value_impl(func, argnums, has_aux, args, kwargs, "grad")
        return (g, v[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) is the tuple of vector-
    Jacobian products with respect to each primal (aux appended with has_aux)."""
    from .autograd import grad as _autograd_grad
    keep = _outer_graph(_flatten(list(primals))[0])
    trees = []
    args = []
    for p in primals:
        leaves, rebuild = _flatten(p)
        prepared = [_prepare(x, keep) for x in leaves]
        trees.append((prepared, rebuild))
        args.append(rebuild(prepared))
    out = _call(func, *args)
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                               "if has_aux is True")
        out, aux = out
    out_leaves, rebuild_out = _flatten(out)
    flat_in = [x for prepared, _ in trees for x in prepared]

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        cts, _ = _flatten(cotangents)
        if len(cts) != len(out_leaves):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function")
        for c, o in zip(cts, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError("Mismatch in shape: grad_output[0] has a shape of %s and output[0] "
                                   "has a shape of %s." % (tuple(c.shape), tuple(o.shape)))
        cg = keep if create_graph is None else create_graph
        gs = _autograd_grad(out_leaves, flat_in, grad_outputs=cts, retain_graph=retain_graph,
                            create_graph=cg, allow_unused=True)
        gs = [g if g is not None else _C.zeros_like(x) for g, x in zip(gs, flat_in)]
        res, i = [], 0
        for prepared, rebuild in trees:
            res.append(rebuild(gs[i:i + len(prepared)]))
            i += len(prepared)
        return tuple(res)

    value = rebuild_out([o if keep else o.detach() for o in out_leaves])
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with `tangents`), computed
    by differentiating a vector-Jacobian product (two reverse passes)."""
    from .autograd import grad as _autograd_grad
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same "
                           "python structure")
    pl, _ = _flatten(primals)
    tl, _ = _flatten(tangents)
    for p, t in zip(pl, tl):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                               "same shapes")
    keep = _outer_graph(pl + tl)
    with _enable_grad():
        res = vjp(func, *primals, has_aux=has_aux)
        out, fn = res[0], res[1]
        out_leaves, rebuild_out = _flatten(out)
        # u is a dummy cotangent; the vjp is linear in u, so its derivative
        # with respect to u, applied to the tangents, is J t.
        us = [_C.zeros_like(o).requires_grad_(True) for o in out_leaves]
        g = fn(rebuild_out(us), create_graph=True)
        gl, _ = _flatten(g)
        pairs = [(a, t) for a, t in zip(gl, tl) if a.requires_grad]
        if pairs:
            jt = _autograd_grad([a for a, _ in pairs], us, grad_outputs=[t for _, t in pairs],
                                create_graph=keep, allow_unused=True)
        else:
            jt = [None] * len(us)
    jt = [j if j is not None else _C.zeros_like(o) for j, o in zip(jt, out_leaves)]
    value = rebuild_out([o if keep else o.detach() for o in out_leaves])
    out_t = rebuild_out([j if keep else j.detach() for j in jt])
    return (value, out_t, res[2]) if has_aux else (value, out_t)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """A function returning the Jacobian of func's outputs with respect to
    args[argnums], shaped output.shape + input.shape (tuples for tuple
    argnums), one reverse pass an output element."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, many = _argnums(argnums, len(args), "jacrev")
        args = list(args)
        outer = func if not kwargs else (lambda *a: func(*a, **kwargs))

        def picked(*xs):
            full = list(args)
            for a, x in zip(nums, xs):
                full[a] = x
            return outer(*full)

        res = vjp(picked, *[args[a] for a in nums], has_aux=has_aux)
        out, fn = res[0], res[1]
        out_leaves, rebuild_out = _flatten(out)
        inputs = [args[a] for a in nums]
        jac_per_out = []
        for k, o in enumerate(out_leaves):
            rows = []
            for e in range(o.numel()):
                cts = [_C.zeros_like(q) for q in out_leaves]
                cts[k] = _C.zeros(o.numel(), dtype=o.dtype, device=o.device)
                cts[k][e] = 1
                cts[k] = cts[k].reshape(o.shape)
                rows.append(fn(rebuild_out(cts)))
            per_in = []
            for j, x in enumerate(inputs):
                if rows:
                    stacked = _C.stack([r[j] for r in rows], 0)
                else:
                    stacked = _C.zeros((0,) + tuple(x.shape), dtype=x.dtype, device=x.device)
                per_in.append(stacked.reshape(tuple(o.shape) + tuple(x.shape)))
            jac_per_out.append(tuple(per_in) if many else per_in[0])
        jac = rebuild_out(jac_per_out)
        return (jac, res[2]) if has_aux else jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian as jacrev gives it (forward mode is not implemented: the
    values are the same, computed with reverse passes)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of func's scalar output: jacobian of the jacobian."""
    return jacfwd(jacrev(func, argnums), argnums)


def stack_module_state(models):
    """(params, buffers): dicts of each name's tensors stacked over the models
    (for vmap over an ensemble with functional_call); the stacked params are
    new leaves that require grad as the originals did."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    t0 = type(models[0])
    if not all(type(m) is t0 for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    names = [n for n, _ in models[0].named_parameters()]
    params = {}
    for n in names:
        ps = [dict(m.named_parameters())[n] for m in models]
        st = _C.stack([p.detach() for p in ps])
        params[n] = st.requires_grad_(ps[0].requires_grad)
    buffers = {n: _C.stack([dict(m.named_buffers())[n] for m in models])
               for n, _ in models[0].named_buffers()}
    return params, buffers
