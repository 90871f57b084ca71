"""Property-based tests (Hypothesis) for the argument parsers, views and
indexing, data conversion and printing, against NumPy as the oracle.

Each property runs a bounded number of examples (PYCUDA_SEM_HYPOTHESIS_N,
default 60) with no deadline, so CI stays fast; the module skips where
Hypothesis is not installed (the GPU machine has no network to install it).
Bad input must raise one of the exceptions torch raises, never SystemError
or anything else, and must leave the process working."""
import os

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import pycuda_sem as torch  # noqa: E402

N = int(os.environ.get("PYCUDA_SEM_HYPOTHESIS_N", "60"))
SETTINGS = settings(max_examples=N, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TORCH_ERRORS = (TypeError, ValueError, IndexError, RuntimeError, OverflowError)

NP_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
             np.float32, np.float64, np.complex64, np.complex128]

shapes = hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4)


@st.composite
def arrays(draw, dtypes=NP_DTYPES):
    dt = draw(st.sampled_from(dtypes))
    shape = draw(shapes)
    elements = None
    if np.issubdtype(dt, np.floating) or np.issubdtype(dt, np.complexfloating):
        elements = st.floats(-1e3, 1e3, allow_nan=False, width=16 if dt == np.float16 else 32)
    return draw(hnp.arrays(dt, shape, elements=elements))


# ---------------------------------------------------------------------------
# Data conversion: NumPy arrays, nested lists, scalars


@SETTINGS
@given(arrays())
def test_from_numpy_and_back_is_exact(a):
    t = torch.from_numpy(a)
    assert tuple(t.shape) == a.shape
    np.testing.assert_array_equal(t.numpy(), a)
    c = torch.tensor(a)  # a copy
    np.testing.assert_array_equal(c.numpy(), a)
    assert c.tolist() == a.tolist()


@SETTINGS
@given(arrays(dtypes=[np.bool_, np.int64, np.float64, np.complex128]))
def test_tensor_of_nested_lists_matches_numpy(a):
    t = torch.tensor(a.tolist())
    ref = np.array(a.tolist())  # [] of shape (0, 0) lists as [], shape (0,)
    np.testing.assert_array_equal(t.numpy(), ref)
    assert tuple(t.shape) == ref.shape


@SETTINGS
@given(st.recursive(st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                              st.booleans(), st.none(), st.text(max_size=2)),
                    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner),
                    max_leaves=12))
def test_tensor_of_arbitrary_data_raises_cleanly(data):
    try:
        t = torch.tensor(data)
    except TORCH_ERRORS:
        return
    assert t.numel() >= 0
    t.tolist()


@SETTINGS
@given(st.one_of(st.integers(-2**64, 2**64), st.floats(allow_nan=True, allow_infinity=True),
                 st.complex_numbers(allow_nan=True), st.booleans()),
       st.sampled_from([None, torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64,
                        torch.float16, torch.bfloat16, torch.float32, torch.float64,
                        torch.complex64]))
def test_scalars_convert_or_raise(value, dtype):
    try:
        t = torch.tensor(value, dtype=dtype)
    except TORCH_ERRORS:
        return
    assert t.dim() == 0
    t.item()
    try:
        torch.full((2,), value, dtype=dtype).tolist()
    except TORCH_ERRORS:
        pass


# ---------------------------------------------------------------------------
# Argument parsers: sizes


size_items = st.one_of(st.integers(-3, 5), st.integers(2**31, 2**64), st.none(),
                       st.floats(allow_nan=True), st.text(max_size=1))


@SETTINGS
@given(st.lists(size_items, max_size=20))
def test_factories_take_sizes_or_raise(sizes):
    if all(isinstance(s, int) and s >= 0 for s in sizes) and \
            int(np.prod(sizes, dtype=object)) * 8 > 2**27:
        return  # valid but too big to make here; the bad-value cases are the point
    for make in (torch.zeros, torch.empty, torch.ones):
        try:
            t = make(sizes)
        except TORCH_ERRORS:
            continue
        assert list(t.shape) == sizes
        assert t.numel() == int(np.prod(sizes, dtype=object)) if sizes else t.numel() == 1


# ---------------------------------------------------------------------------
# Views and indexing against NumPy


@st.composite
def array_and_index(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    index = draw(hnp.basic_indices(shape, min_dims=0, max_dims=6, allow_newaxis=True,
                                   allow_ellipsis=True))
    return a, index


def _negative_step(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, slice) and i.step is not None and i.step < 0 for i in items)


@SETTINGS
@given(array_and_index())
def test_basic_indexing_matches_numpy(ai):
    a, index = ai
    t = torch.from_numpy(a)
    if _negative_step(index):  # torch has no negative steps
        with pytest.raises(ValueError, match="step must be greater than zero"):
            t[index]
        return
    want = a[index]
    got = t[index]
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.numpy() if got.dim() else np.array(got.item()), want)


@SETTINGS
@given(array_and_index(), st.integers(-100, 100))
def test_basic_setitem_matches_numpy(ai, value):
    a, index = ai
    b = a.copy()
    t = torch.from_numpy(b.copy())
    if _negative_step(index):
        with pytest.raises(ValueError, match="step must be greater than zero"):
            t[index] = value
        return
    b[index] = value
    t[index] = value
    np.testing.assert_array_equal(t.numpy(), b)


@SETTINGS
@given(hnp.array_shapes(min_dims=1, max_dims=5, min_side=1, max_side=4), st.data())
def test_views_match_numpy(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t = torch.from_numpy(a)
    perm = data.draw(st.permutations(range(len(shape))))
    np.testing.assert_array_equal(t.permute(*perm).numpy(), a.transpose(perm))
    np.testing.assert_array_equal(t.permute(*perm).contiguous().numpy(), a.transpose(perm))
    d0, d1 = data.draw(st.integers(0, len(shape) - 1)), data.draw(st.integers(0, len(shape) - 1))
    np.testing.assert_array_equal(t.transpose(d0, d1).numpy(), np.swapaxes(a, d0, d1))
    np.testing.assert_array_equal(t.reshape(-1).numpy(), a.reshape(-1))
    k = data.draw(st.integers(-len(shape) - 1, len(shape)))
    np.testing.assert_array_equal(t.unsqueeze(k).numpy(), np.expand_dims(a, k))
    target = tuple(data.draw(st.sampled_from([s, 1])) if s == 1 else s for s in shape)
    big = tuple(data.draw(st.integers(1, 3)) if s == 1 else s for s in target)
    np.testing.assert_array_equal(t.reshape(target).expand(*big).numpy(),
                                  np.broadcast_to(a.reshape(target), big))


@SETTINGS
@given(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
       st.lists(st.integers(-5, 30), max_size=5))
def test_view_and_reshape_sizes_match_numpy_or_raise(shape, new):
    a = np.zeros(shape, dtype=np.int16)
    t = torch.zeros(shape, dtype=torch.int16)
    try:
        want = a.reshape(new).shape
    except ValueError:
        with pytest.raises(RuntimeError):
            t.reshape(new)
        return
    try:
        assert tuple(t.reshape(new).shape) == want
    except RuntimeError:
        # torch refuses a -1 it cannot infer for 0 elements, where NumPy picks 0
        assert -1 in new and a.size == 0


# ---------------------------------------------------------------------------
# Printing


@SETTINGS
@given(arrays(dtypes=[np.bool_, np.int64, np.float32, np.float64, np.complex64]))
def test_printing_never_fails_and_names_the_values(a):
    t = torch.from_numpy(a)
    s = repr(t)
    assert s.startswith("tensor(")
    str(t)
    format(t) if t.dim() else format(t, "")
    if a.size == 1 and a.dtype == np.int64:
        assert str(a.reshape(-1)[0]) in s
