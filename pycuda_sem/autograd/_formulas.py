"""autograd/_formulas.py: the backward formula of every differentiable op.

The C engine (csrc/autograd/) records one node per op call and, at backward,
calls the Python function registered under the op's name (the contract:
notes/autograd_interface.md). This file holds the registry and the helpers
every formula uses; the formulas themselves live by concept:

    _formulas_math.py     elementwise unary/binary/ternary ops, casts, moves
    _formulas_reduce.py   reductions, scans, sorting and selection
    _formulas_shape.py    views, reshapes, joining and splitting
    _formulas_index.py    indexing, gather/scatter, masks, x[i], x[i] = v
    _formulas_linalg.py   the matmul family, softmax, FFT

Rules every formula keeps (so that create_graph=True and double backward
work, and so that the engine's automatic fix-ups apply):
- gradients are built only from differentiable tensor ops of pycuda_sem,
  never from NumPy or in-place updates of `grads` or saved tensors;
- complex inputs follow torch's convention (the gradient is the conjugate
  Wirtinger derivative: grad * conj(f'(z)) for holomorphic f);
- a returned gradient may have the op's broadcast shape, the output's dtype
  and device: the engine sums it to the input's shape, casts and moves it.
  Only the complex -> real case is settled here (`fit`), because the real
  part is torch's answer and a cast would be a choice of the engine's.
"""
from .. import _C

# ---- the registry ---------------------------------------------------------------
# REGISTRY maps an op name to (fn, save_args, save_result, node_name,
# materialize). fn None
# marks an op whose outputs never require grad (factories, random fills).
# The test suite enumerates it: every differentiable entry needs a gradcheck
# case there (tests/test_autograd_ops.py), so no op slips in untested.

REGISTRY = {}
_engine_register = getattr(_C, "_register_formula", None)


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_"))


def register(names, fn, save=(), result=False, node_name=None, materialize=True, save_when=None):
    """Register fn under every name of the space-separated `names`. The
    first name is the canonical op: aliases and in-place variants share its
    node name (torch: x.mul_(y).grad_fn is MulBackward0). materialize=False:
    outputs that got no gradient reach fn as None instead of zeros (for ops
    with side outputs that are rarely differentiated, where zeros would cost
    whole passes over the input). result: True (every output kept for fn as
    ctx.result), False, or a tuple of output indices (the others read as
    None there). save_when, as long as save: None (always
    kept) or the index k of the input whose requires_grad decides whether
    that saved arg is kept (what only that input's gradient reads); ~k
    keeps it only when input k does not require grad."""
    names = names.split()
    if node_name is None:
        node_name = _camel(names[0].rstrip("_")) + "Backward0"
    save = tuple(save)
    for n in names:
        res = tuple(result) if isinstance(result, (tuple, list)) else bool(result)
        REGISTRY[n] = (fn, save, res, node_name if fn is not None else None,
                       bool(materialize))
        if _engine_register is not None:
            _engine_register(n, fn, save, res, node_name, bool(materialize),
                             None if save_when is None else tuple(save_when))


def formula(names, save=(), result=False, node_name=None, materialize=True, save_when=None):
    """Decorator form of register()."""
    def deco(fn):
        register(names, fn, save, result, node_name, materialize, save_when)
        return fn
    return deco


def not_differentiable(names):
    register(names, None)


def differentiable_ops():
    """Names of the registered ops that have a backward formula."""
    return sorted(n for n, e in REGISTRY.items() if e[0] is not None)


# ---- reading the call -----------------------------------------------------------
# ctx.args holds the positional args as passed (self first for a method);
# a parameter given by keyword is in ctx.kwargs.

def arg(ctx, i, name, default=None):
    """Parameter i (positional) or `name` (keyword) of the call."""
    a = ctx.args
    if i < len(a):
        return a[i]
    return ctx.kwargs.get(name, default)


def needs(ctx, i):
    """Does positional arg i need a gradient?"""
    n = ctx.needs_input_grad
    return i < len(n) and n[i] is True


def shape(ctx, i):
    return ctx.shapes[i]


def fit(ctx, i, g):
    """g as the gradient of positional arg i: the real part when the input
    is real and g complex (torch's handle_r_to_c)."""
    if g is None:
        return None
    dt = ctx.dtypes[i] if i < len(ctx.dtypes) else None
    if dt is not None and not dt.is_complex and g.is_complex():
        return g.real
    return g


def is_tensor(x):
    return isinstance(x, _C.Tensor)


# ---- tensor helpers written with differentiable ops --------------------------------

def conj(t):
    """Complex conjugate (pycuda_sem has no conj op; real/imag are
    differentiable properties, so this is too). Real tensors and numbers
    are returned as they are."""
    if isinstance(t, complex):
        return t.conjugate()
    if is_tensor(t) and t.is_complex():
        return t.real - t.imag * 1j
    return t


def sgn(x):
    """sign for real x, x / |x| (0 at 0) for complex x."""
    if not x.is_complex():
        return x.sign()
    a = x.abs()
    return _C.where(a == 0, 0, x / _C.where(a == 0, 1, a))


def zeros(shape, like):
    return _C.zeros(tuple(shape), dtype=like.dtype, device=like.device)


def ones(shape, like):
    return _C.ones(tuple(shape), dtype=like.dtype, device=like.device)


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def sum_to(t, shape):
    """Sum t down to `shape` (t has a broadcast of it)."""
    shape = tuple(shape)
    if tuple(t.shape) == shape:
        return t
    lead = t.dim() - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and t.shape[lead + i] != 1)
    if dims:
        t = t.sum(dims, keepdim=True)
    return t.reshape(shape)


def reduced_dims(dim, ndim):
    """The wrapped dims a reduction with `dim` reduced (None, () -> all)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        return tuple(sorted(int(d) % max(ndim, 1) for d in dim)) if ndim else ()
    return (int(dim) % max(ndim, 1),) if ndim else ()


def unreduce(g, in_shape, dim, keepdim):
    """g of a reduction over `dim` (as the op got it), with the reduced dims
    put back as size 1, ready to broadcast against the input."""
    ndim = len(in_shape)
    if ndim == 0:
        return g.reshape(())
    if keepdim:
        return g
    for d in reduced_dims(dim, ndim):
        g = g.unsqueeze(d)
    return g


def index_map(in_shape, device):
    """The flat position of every element of a tensor of in_shape, as an
    int64 tensor of that shape. An op that only selects, moves or repeats
    elements, applied to it, says where each output element came from."""
    return _C.arange(numel(in_shape), device=device).view(tuple(in_shape))


def scatter_back(g, in_shape, pos):
    """The gradient of a selection: g's elements summed into a zero tensor of
    in_shape at the flat positions pos (same shape as g)."""
    flat = zeros((numel(in_shape),), g)
    return flat.index_add(0, pos.reshape(-1), g.reshape(-1)).view(tuple(in_shape))


def via_map(g, in_shape, select):
    """Gradient of out = select(x) for a pure selection op (narrow, x[i],
    repeat, take ...): select applied to the index map."""
    return scatter_back(g, in_shape, select(index_map(in_shape, g.device)))


def zero_grad(ctx, *grads):
    """Backward of ops whose derivative is zero almost everywhere (floor,
    sign, round ...): torch keeps them in the graph with a zero gradient."""
    g = grads[0]
    return (_C.zeros_like(g),)


# ---- ops that are not differentiable ------------------------------------------------
# Factories, *_like, new_* and random fills: their outputs never require grad
# (requires_grad=True on a factory makes a leaf, which the engine handles).

not_differentiable(
    "empty zeros ones full empty_strided arange linspace logspace eye tensor as_tensor "
    "from_numpy empty_like zeros_like ones_like full_like rand randn rand_like randn_like "
    "randint randperm new new_empty new_full new_ones new_tensor new_zeros "
    "bernoulli_ exponential_ normal_ uniform_ random_")

# the formulas, by concept (each module registers at import)
from . import _formulas_math  # noqa: E402,F401
from . import _formulas_reduce  # noqa: E402,F401
from . import _formulas_shape  # noqa: E402,F401
from . import _formulas_index  # noqa: E402,F401
from . import _formulas_linalg  # noqa: E402,F401
from . import _formulas_nn  # noqa: E402,F401
