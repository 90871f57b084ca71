"""torch.autograd.functional: derivatives of whole functions, built on
autograd.grad. vjp (one backward), jvp (the double-backward trick: the
backward is linear in its grad_output, so differentiating it with respect to
that grad_output gives J v), jacobian (one backward per output element),
hessian (the jacobian of the jacobian), vhp and hvp (two backwards).

As in torch: inputs are a tensor or a tuple of tensors, and results mirror
that structure; inputs are replaced by fresh tensors that require grad
(detached copies, or views when create_graph), so that grads flow to exactly
those; an input the outputs do not depend on gets zeros, or an error with
strict=True; results are detached unless create_graph=True.
"""
from .. import _C
from .grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_Tensor = _C.Tensor


# ---- helpers (torch's, with torch's messages) -------------------------------------------

def _as_tuple(inp, arg_name, fn_name):
    """(was it a tuple, tuple of tensors); TypeError for anything else."""
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, _Tensor):
            if is_tuple:
                raise TypeError("The %s given to %s must be either a Tensor or a tuple of Tensors "
                                "but the value at index %d has type %s."
                                % (arg_name, fn_name, i, type(el)))
            raise TypeError("The %s given to %s must be either a Tensor or a tuple of Tensors but "
                            "the given %s has type %s." % (arg_name, fn_name, arg_name, type(el)))
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo _as_tuple: to_unpack is one flag, or (outer, inner) for nested results."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh tensor objects for the inputs: a differentiable view when the
    graph must reach the originals, else a detached leaf."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], _Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError("v is a tuple of invalid length: should be %d but got %d."
                               % (len(other), len(v)))
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = "Entry %d in " % idx if is_other_tuple else ""
            raise RuntimeError("%sv has invalid size: should be %s but got %s."
                               % (prepend, el_other.size(), el_v.size()))


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError("The output of the user-provided function is independent of "
                               "input %d. This is not allowed in strict mode." % i)
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                "The hessian of the user-provided function with respect to input %d is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs." % i)
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input %d is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)." % i)
        if input_type == "grad_inputs":
            raise RuntimeError(
                "The gradient with respect to input %d is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode." % i)
        raise RuntimeError(
            "Output %d of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode." % i)


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad that skips outputs which are None or do not require grad
    (all None when none is left) and allows unused inputs."""
    from . import grad as _grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = (), ()
    for out, g in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs += (out,)
            new_grad_outputs += (g,)
    if not new_outputs:
        return (None,) * len(inputs)
    return _grad(new_outputs, inputs, new_grad_outputs, allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph)


_STRICT_NONE_MSGS = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it prevents "
                         "from using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = ()
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE_MSGS[stage].format(i=i))
            g = _C.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError("The %s of the user-provided function is independent of input %d. "
                               "This is not allowed in strict mode when create_graph=True."
                               % (what, i))
        res += (g,)
    return res


# ---- public API ----------------------------------------------------------------------------



def _outputs_of(func, inputs, strict, fn_name):
    """func(*inputs) as a tuple (and whether it was one), each output
    checked to require grad where strict asks for it."""
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_outputs_tuple, outputs


def _inputs_and_v(inputs, v, create_graph, fn_name):
    """The inputs as a tuple ready to differentiate, and v checked against
    them (None is allowed only for a single one-element input)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return is_inputs_tuple, inputs, v

def _finish(outputs, of, wrt, v, like, create_graph, strict, stage, is_outputs_tuple, result_tuple):
    """The last step every product function shares: the gradients of `of`
    with respect to `wrt` weighted by v (zeros where unused, shaped like
    `like`), post-processed together with the outputs."""
    with set_grad_enabled(True if create_graph else _C.is_grad_enabled()):
        grad_res = _autograd_grad(of, wrt, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, like, strict, create_graph, stage)
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, result_tuple))

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at ``inputs``.
    ``v`` may be omitted when func returns a single one-element tensor."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "vjp")
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    return _finish(outputs, outputs, inputs, v, inputs, create_graph, strict, "back",
                   is_outputs_tuple, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward
    trick. ``v`` may be omitted when the input is a single one-element tensor."""
    with enable_grad():
        is_inputs_tuple, inputs, v = _inputs_and_v(inputs, v, create_graph, "jvp")
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "jvp")
        # the backward is linear in grad_outputs: their value does not matter
        # (zeros, which hold no inf or nan), only the graph through them
        grad_outputs = tuple(_C.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    return _finish(outputs, grad_inputs, grad_outputs, v,
                   outputs, create_graph, strict, "back_trick",
                   is_outputs_tuple, is_outputs_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j a tensor of
    shape output_i.shape + input_j.shape (nested tuples mirror the tuple-ness
    of inputs and outputs). ``vectorize`` is accepted and computes the same
    values row by row (pycuda_sem has no vmap)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, "forward-mode" '
                             'tends to be more performant. Otherwise, prefer to use '
                             '"reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        raise NotImplementedError('jacobian(strategy="forward-mode") needs forward-mode AD, '
                                  'which pycuda_sem does not have; use strategy="reverse-mode"')
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "jacobian")
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        jac = ()
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)  # rows[k]: one entry per element of out
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent of "
                                "input %d. This is not allowed in strict mode when "
                                "create_graph=True." % i)
                        row.append(g)
                    else:
                        if strict:
                            raise RuntimeError(
                                "Output %d of the user-provided function is independent of "
                                "input %d. This is not allowed in strict mode." % (i, k))
                        row.append(_C.zeros_like(inp))
            jac += (tuple(_stack_rows(row, out, inputs[k]) for k, row in enumerate(rows)),)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _stack_rows(rows, out, inp):
    shape = tuple(out.shape) + tuple(inp.shape)
    if not rows:  # an empty output
        return _C.zeros(shape, dtype=inp.dtype, device=inp.device)
    return _C.stack(rows, dim=0).view(shape)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning a single one-element tensor: for
    inputs i, j a tensor of shape input_i.shape + input_j.shape."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, _Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_grad(func, inputs, v, create_graph, strict, fn_name):
    """The first half of vhp/hvp: preprocessed inputs and v, func's output,
    and its gradient built with create_graph=True."""
    is_inputs_tuple, inputs, v = _inputs_and_v(inputs, v, create_graph, fn_name)
    is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, fn_name)
    if is_outputs_tuple or not isinstance(outputs[0], _Tensor):
        raise RuntimeError("The function given to %s should return a single Tensor" % fn_name)
    if outputs[0].nelement() != 1:
        raise RuntimeError("The Tensor returned by the function given to %s should contain a "
                           "single element" % fn_name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, is_outputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a function returning one one-element tensor."""
    with enable_grad():
        is_inputs_tuple, is_outputs_tuple, inputs, v, outputs, jac = _scalar_function_grad(
            func, inputs, v, create_graph, strict, "vhp")
    return _finish(outputs, jac, inputs, v, inputs, create_graph, strict, "double_back",
                   is_outputs_tuple, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function returning one one-element tensor,
    by the double-backward trick."""
    with enable_grad():
        is_inputs_tuple, is_outputs_tuple, inputs, v, outputs, jac = _scalar_function_grad(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(_C.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    return _finish(outputs, double_back, grad_jac, v,
                   inputs, create_graph, strict, "double_back_trick",
                   is_outputs_tuple, is_inputs_tuple)
