"""Wrong and hostile arguments to autograd's C entry points: each gives a
Python exception (never a crash or a SystemError), nothing leaks, and the
process goes on computing gradients correctly afterwards."""
import itertools

import pytest

import pycuda_sem as torch
from pycuda_sem import _C

JUNK = [None, 0, -1, 2 ** 70, 1.5, "x", b"y", (), [], {}, object(), torch.ones(2),
        (None,), (torch.ones(2),), [torch.ones(2)], torch.ones(2, dtype=torch.int64)]


def _ok_or_error(fn, *args):
    try:
        fn(*args)
    except (TypeError, RuntimeError, ValueError, IndexError, AttributeError, NotImplementedError,
            OverflowError):
        pass
    except SystemError as e:  # an error path that forgot to set an exception
        pytest.fail("SystemError from %r%r: %s" % (fn, args, e))


def _graph():
    x = torch.ones(3, requires_grad=True)
    return x, (x * 2).sum()


def test_run_backward_junk():
    x, y = _graph()
    for a, b in itertools.product(JUNK, repeat=2):
        _ok_or_error(_C._run_backward, a, b, False, False, None, False, True)
    for inputs in JUNK:
        _ok_or_error(_C._run_backward, (y,), (None,), True, False, inputs, False, False)
    for flag in JUNK:
        _ok_or_error(_C._run_backward, (y,), (None,), flag, flag, None, flag, flag)
    _ok_or_error(_C._run_backward, (y,), (None,))


def test_tensor_backward_and_grad_junk():
    x, y = _graph()
    for g in JUNK:
        _ok_or_error(y.backward, g, True)
        _ok_or_error(setattr, x, "grad", g)
        _ok_or_error(setattr, x, "requires_grad", g)
        _ok_or_error(setattr, x, "data", g)
        _ok_or_error(x.register_hook, g)
        _ok_or_error(x.requires_grad_, g)
    for inputs in JUNK:
        _ok_or_error(y.backward, None, True, False, inputs)


def test_function_ctx_and_wire_junk():
    for a in JUNK:
        _ok_or_error(_C._FunctionCtx, a)
        ctx = _C._FunctionCtx((torch.ones(2, requires_grad=True),))
        _ok_or_error(_C._function_wire, ctx, a, (torch.ones(2),), torch.ones(2), None)
        ctx = _C._FunctionCtx((torch.ones(2, requires_grad=True),))
        _ok_or_error(_C._function_wire, ctx, None, a, a, a)
        _ok_or_error(ctx.save_for_backward, a)
        _ok_or_error(ctx.mark_dirty, a)
        _ok_or_error(ctx.mark_non_differentiable, a)
        _ok_or_error(ctx.set_materialize_grads, a)
    x, y = _graph()
    _ok_or_error(_C._function_wire, y.grad_fn, None, (), y, None)  # a built-in node
    _ok_or_error(_C._function_wire)


def test_register_formula_rejects_junk_without_registering():
    before = dict(_C._formula_names())
    for a in JUNK:
        _ok_or_error(_C._register_formula, a, None, (), False)
        _ok_or_error(_C._register_formula, "junk_op_x", a, (), False)
        _ok_or_error(_C._register_formula, "junk_op_y", None, a, False)
        _ok_or_error(_C._register_formula, "junk_op_z", None, (), False, a)
    _ok_or_error(_C._register_formula, "junk_op_w", None, (10 ** 6,), False)
    after = _C._formula_names()
    assert set(after) - set(before) <= {"junk_op_x", "junk_op_y", "junk_op_z", "x"}
    for k in set(after) - set(before):
        assert after[k] is False  # only as "not differentiable", never with a junk fn


def test_node_attributes_after_release_and_on_leaves():
    x = torch.ones(3, requires_grad=True)
    y = x.exp().sum()
    node = y.grad_fn.next_functions[0][0]
    acc = node.next_functions[0][0]
    y.backward()
    for n in (node, acc, y.grad_fn):
        for name in ("args", "kwargs", "result", "shapes", "dtypes", "needs_input_grad",
                     "next_functions", "metadata", "variable", "saved_tensors"):
            _ok_or_error(getattr, n, name)
        _ok_or_error(n.register_hook, 5)
        _ok_or_error(n.register_prehook, 5)
        _ok_or_error(setattr, n, "args", 1)
    assert acc.variable is x


def test_still_correct_after_all_that():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_requires_grad_keyword_only_where_torch_takes_it():
    assert torch.zeros(2, requires_grad=True).requires_grad
    assert torch.rand(2, requires_grad=True).is_leaf
    assert torch.ones(2).new_full((3,), 2.0, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="requires_grad"):
        torch.add(torch.ones(2), 1, requires_grad=True)
    with pytest.raises(TypeError, match="requires_grad"):
        torch.as_tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        torch.zeros(2, dtype=torch.int64, requires_grad=True)
