"""Fuzz actions for the tensor API of issue 14: joining and splitting,
rearranging, softmax, sorting and selection, scans, searches, histograms,
indexing ops (gather, scatter, index_*, masked_*, nonzero) and the math ops. Each action draws an op and hostile arguments (dims far out of
range, objects whose __index__ raises or clears its list, bad sequences,
lists of tensors on mixed devices and dtypes) from the program's bytes and
returns (trace text, thunk), as the actions of programs.py do."""
from values import (BadBool, BadIndex, BadLen, Clearing, gen_bad_sequence, gen_dim, gen_dtype,
                    gen_evil_int, gen_scalar, gen_small_int)


def _dims(r, p):
    return r.pick([(1, 0), (0,), (0, 1, 2), (0, 0), (-1, 0), (17,), (), tuple(range(17)),
                   [1, BadIndex()], [Clearing(0)]])


def _int(r, p):
    return r.pick([gen_small_int(r, p), gen_small_int(r, p), gen_evil_int(r, p), 2**62, -1])


def _tensors(p):
    """A list (or something pretending to be one) of tensors."""
    r = p.r
    k = r.below(5)
    items = [p.tensor() if i == 0 else p.other() for i in range(k)]
    return r.pick([items, items, tuple(items), BadLen(items), [items[0] if items else 1, "x"],
                   gen_bad_sequence(r, p)])


JOIN = ["cat", "concat", "stack", "hstack", "vstack", "dstack", "broadcast_tensors",
        "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d"]
SHAPE = ["split", "chunk", "tensor_split", "unbind", "narrow", "movedim", "swapaxes",
         "diagonal", "diag", "diag_embed", "tril", "triu", "flip", "fliplr", "flipud", "roll",
         "repeat", "tile", "repeat_interleave", "broadcast_to", "softmax", "log_softmax"]
SORT = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique",
        "unique_consecutive", "count_nonzero", "cummax", "cummin", "logcumsumexp", "cumsum",
        "bincount", "histc"]
PAIR = ["searchsorted", "bucketize", "cross", "outer", "dist", "cdist", "isclose", "allclose",
        "equal"]
EINSUM = ["ij,jk->ik", "ii", "i,i", "...ij->...ji", "bij,bjk->bik", "ij->", "i,j->ij", "a",
          "ij,ij,ij->i", "->", "ij->jj", "i->i i", "\x00", "ab,b" * 20]


def act_join(p):
    r = p.r
    op, ts = r.pick(JOIN), _tensors(p)
    kwargs = {}
    if op in ("cat", "concat", "stack") and r.below(3):
        kwargs["dim"] = gen_dim(r, p)
    if op == "meshgrid" and r.chance(2):
        kwargs["indexing"] = r.pick(["ij", "xy", "zz", None, 3])
    f = getattr(p.torch, op)
    if op in ("broadcast_tensors", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d") \
            and isinstance(ts, list) and r.chance(2):
        return "torch.%s(*%r)" % (op, ts), lambda: f(*ts, **kwargs)
    return "torch.%s(%r, %r)" % (op, ts, kwargs), lambda: f(ts, **kwargs)


def act_shape(p):
    r = p.r
    t, op = p.tensor(), r.pick(SHAPE)
    d, i = gen_dim(r, p), _int(r, p)
    args = {
        "split": lambda: (r.pick([i, [1, 2], [i, i], _dims(r, p)]), d),
        "chunk": lambda: (i, d), "tensor_split": lambda: (r.pick([i, [1, 3], (0, -1), p.other()]), d),
        "unbind": lambda: (d,), "narrow": lambda: (d, i, _int(r, p)),
        "movedim": lambda: (r.pick([d, _dims(r, p)]), r.pick([gen_dim(r, p), _dims(r, p)])),
        "swapaxes": lambda: (d, gen_dim(r, p)), "diagonal": lambda: (i, d, gen_dim(r, p)),
        "diag": lambda: (i,), "diag_embed": lambda: (i, d, gen_dim(r, p)),
        "tril": lambda: (i,), "triu": lambda: (i,), "flip": lambda: (_dims(r, p),),
        "fliplr": lambda: (), "flipud": lambda: (),
        "roll": lambda: (r.pick([i, [1, 2], (i,)]), r.pick([None, d, _dims(r, p)])),
        "repeat": lambda: (r.pick([(2, 1), (i,), (1,) * 17, [i, i, i], (0, 2, 3)]),),
        "tile": lambda: (r.pick([(2,), (i, 1), (1,) * 17]),),
        "repeat_interleave": lambda: (r.pick([i, p.other(), 2]), r.pick([None, d])),
        "broadcast_to": lambda: (r.pick([(2, 3), (i,), (-1, 4), (1,) * 17]),),
        "softmax": lambda: (d,), "log_softmax": lambda: (d,),
    }[op]()
    kwargs = {}
    if op in ("softmax", "log_softmax") and r.chance(3):
        kwargs["dtype"] = gen_dtype(r, p)
    if r.chance(3) and hasattr(p.torch, op):
        f = getattr(p.torch, op)
        return "torch.%s(%s, *%r, **%r)" % (op, p.name(t), args, kwargs), lambda: f(t, *args, **kwargs)
    return "%s.%s(*%r, **%r)" % (p.name(t), op, args, kwargs), lambda: getattr(t, op)(*args, **kwargs)


def act_sort(p):
    r = p.r
    t, op = p.tensor(), r.pick(SORT)
    kwargs = {}
    if op in ("sort", "argsort", "topk", "kthvalue", "median", "nanmedian", "mode",
              "count_nonzero", "cummax", "cummin", "logcumsumexp", "cumsum", "unique",
              "unique_consecutive") and r.below(3):
        kwargs["dim"] = r.pick([gen_dim(r, p), _dims(r, p)]) if op == "count_nonzero" \
            else gen_dim(r, p)
    if op in ("sort", "argsort", "topk") and r.chance(2):
        kwargs[r.pick(["descending", "stable", "largest", "sorted"])] = r.pick(
            [True, False, BadBool(), None])
    if op in ("unique", "unique_consecutive") and r.chance(2):
        kwargs[r.pick(["return_inverse", "return_counts", "sorted"])] = r.pick([True, BadBool()])
    if op in ("median", "mode", "kthvalue") and r.chance(3):
        kwargs["keepdim"] = r.pick([True, False, BadBool()])
    args = ()
    if op in ("topk", "kthvalue"):
        args = (_int(r, p),)
    if op == "histc" and r.chance(2):
        kwargs.update(bins=_int(r, p), min=gen_scalar(r, p), max=gen_scalar(r, p))
    if op == "bincount" and r.chance(3):
        kwargs[r.pick(["weights", "minlength"])] = r.pick([p.other(), _int(r, p)])
    if op in ("unique", "unique_consecutive") and kwargs.get("dim") is not None and r.chance(2):
        kwargs.pop("sorted", None)
    f = getattr(p.torch, op)
    return "torch.%s(%s, *%r, **%r)" % (op, p.name(t), args, kwargs), lambda: f(t, *args, **kwargs)


def act_pair(p):
    r = p.r
    a, b, op = p.tensor(), p.other(), r.pick(PAIR)
    kwargs = {}
    if op in ("searchsorted", "bucketize") and r.chance(2):
        kwargs[r.pick(["right", "out_int32", "side", "sorter"])] = r.pick(
            [True, BadBool(), "left", "middle", p.other()])
    if op == "cross" and r.chance(2):
        kwargs["dim"] = gen_dim(r, p)
    if op in ("dist", "cdist") and r.chance(2):
        kwargs["p"] = r.pick([0, 1, 2, 3.5, float("inf"), -1, "x"])
    if op in ("isclose", "allclose") and r.chance(2):
        kwargs[r.pick(["rtol", "atol", "equal_nan"])] = gen_scalar(r, p)
    f = getattr(p.torch, op)
    return "torch.%s(%s, %s, **%r)" % (op, p.name(a), p.name(b), kwargs), lambda: f(a, b, **kwargs)


INDEX = ["index_select", "gather", "take", "take_along_dim", "index_fill", "index_add",
         "index_copy", "scatter", "scatter_add", "scatter_reduce", "index_put", "masked_fill",
         "masked_select", "masked_scatter", "nonzero", "argwhere", "where"]


def _index_tensor(p):
    r = p.r
    return r.pick([p.other(), p.torch.tensor([0, -1, 1]), p.torch.tensor([[5, 2**40]]),
                   p.torch.tensor([True, False]), p.torch.tensor([0.5]), p.torch.zeros(0, dtype=p.torch.int64),
                   p.torch.tensor([1, 0]).cuda() if p.r.chance(4) and p.torch.cuda.is_available() else
                   p.torch.tensor([2, 1]), [0, 1], None, BadIndex()])


def act_index(p):
    r = p.r
    t, op = p.tensor(), r.pick(INDEX)
    d, i = gen_dim(r, p), _index_tensor(p)
    v = r.pick([p.other(), gen_scalar(r, p), _index_tensor(p)])
    args = {
        "index_select": lambda: (d, i), "gather": lambda: (d, i), "take": lambda: (i,),
        "take_along_dim": lambda: (i, r.pick([None, d])), "index_fill": lambda: (d, i, v),
        "index_add": lambda: (d, i, v), "index_copy": lambda: (d, i, v),
        "scatter": lambda: (d, i, v), "scatter_add": lambda: (d, i, v),
        "scatter_reduce": lambda: (d, i, v, r.pick(["sum", "prod", "mean", "amax", "amin", "x"])),
        "index_put": lambda: (r.pick([(i,), (i, i), [i], (None, i), i]), v,
                              r.pick([False, True, BadBool()])),
        "masked_fill": lambda: (i, v), "masked_select": lambda: (i,),
        "masked_scatter": lambda: (i, v), "nonzero": lambda: (), "argwhere": lambda: (),
        "where": lambda: (),
    }[op]()
    kwargs = {}
    if op == "nonzero" and r.chance(2):
        kwargs["as_tuple"] = r.pick([True, False, BadBool()])
    if op == "scatter" and r.chance(3):
        kwargs["reduce"] = r.pick(["add", "multiply", "nope"])
    if op == "scatter_reduce" and r.chance(3):
        kwargs["include_self"] = r.pick([True, False, BadBool()])
    if r.chance(3) and op not in ("where",):
        name = op + "_" if hasattr(t, op + "_") and r.chance(2) else op
        return ("%s.%s(*%r, **%r)" % (p.name(t), name, args, kwargs),
                lambda: getattr(t, name)(*args, **kwargs))
    f = getattr(p.torch, op)
    return "torch.%s(%s, *%r, **%r)" % (op, p.name(t), args, kwargs), lambda: f(t, *args, **kwargs)


def act_einsum(p):
    r = p.r
    eq = r.pick(EINSUM)
    ops = [p.tensor() if i == 0 else p.other() for i in range(r.below(4))]
    return "torch.einsum(%r, %r)" % (eq, ops), lambda: p.torch.einsum(eq, *ops)


FAMILIES = [act_join, act_shape, act_shape, act_sort, act_sort, act_pair, act_einsum,
            act_index, act_index, act_index]


def act_tensor_api(p):
    """One call of the tensor API of issue 14, family first."""
    return p.r.pick(FAMILIES)(p)


def act_autograd(p):
    """A float64 leaf that requires grad, one call of the tensor API on the
    program's tensors (the leaf among them), and a backward of every result
    that requires grad: random ops, random hostile arguments, through the
    recording wrappers and the engine. Not in FAMILIES (that would change how
    saved inputs decode): run it with `run_random.py --only act_autograd`."""
    r = p.r
    t = p.tensor()
    p.call("%s.detach().double().requires_grad_()" % p.name(t),
           lambda: t.detach().double().requires_grad_())
    built = p.build(r.pick(FAMILIES))
    if not built:
        return "pass", lambda: None
    text, thunk = built
    how = r.below(4)
    torch = p.torch

    def run():
        out = thunk()
        outs = out if isinstance(out, (tuple, list)) else [out]
        for o in outs:
            if not (isinstance(o, torch.Tensor) and o.requires_grad):
                continue
            if how == 0:
                o.sum().backward()
            elif how == 1:
                o.sum().backward(create_graph=True)
            elif how == 2:
                o.backward(torch.ones_like(o), retain_graph=True)
                o.backward(torch.ones_like(o))
            else:
                leaves = [v for v in p.env if isinstance(v, torch.Tensor) and v.requires_grad]
                torch.autograd.grad(o.sum(), leaves[-1:], allow_unused=True)
        return out
    return "%s  # then backward (%d)" % (text, how), run
