"""copy.deepcopy, copy.copy and pickle of tensors, Parameters and modules
(pycuda_sem/_tensor_pickle.py), with torch's rules: a deep copy owns a copy of
the storage and keeps offset, sizes and strides; views deep-copied within one
memo share memory again; requires_grad and .grad are copied for leaves and a
non-leaf raises; pickling keeps dtype (bfloat16 too), geometry, device and
requires_grad; Parameters stay Parameters."""
import copy
import gc
import pickle

import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

from dtype_helpers import DTYPES, rand, same

nn = torch.nn


def pickled(obj, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(obj, protocol=protocol))


def own_memory(a, b):
    return a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr()


# ---- deepcopy -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_deepcopy_every_dtype(dtype):
    x = rand((3, 4), dtype)
    y = copy.deepcopy(x)
    same(y, x)
    assert type(y) is torch.Tensor and own_memory(x, y)
    assert y.stride() == x.stride() and y.storage_offset() == 0


def test_deepcopy_keeps_geometry_of_views():
    base = torch.arange(24.).reshape(4, 6)
    for v in (base.t(), base[1:, ::2], base[2], base.as_strided((2, 2), (1, 6), 3)):
        y = copy.deepcopy(v)
        same(y, v)
        assert y.stride() == v.stride() and y.storage_offset() == v.storage_offset()
        # torch copies the whole storage, not only the viewed elements
        assert y.untyped_storage().nbytes() == base.untyped_storage().nbytes()
        assert own_memory(y, v) and y._base is None and y.is_leaf


def test_deepcopy_zero_dim_and_empty():
    s = torch.tensor(2.5)
    y = copy.deepcopy(s)
    assert y.shape == () and y.item() == 2.5 and own_memory(s, y)
    e = torch.empty(0, 3)
    y = copy.deepcopy(e)
    assert y.shape == (0, 3) and y.dtype == e.dtype and y.stride() == e.stride()


def test_deepcopy_values_are_independent():
    x = torch.zeros(3)
    y = copy.deepcopy(x)
    y += 1
    assert x.tolist() == [0.0, 0.0, 0.0] and y.tolist() == [1.0, 1.0, 1.0]


def test_views_copied_in_one_memo_share_memory_again():
    x = torch.arange(6.)
    v = x[2:].view(2, 2)
    w = x.view(torch.int32)  # same storage, another dtype of the same size
    cx, cv, cw = copy.deepcopy([x, v, w])
    assert cx.untyped_storage() is cv.untyped_storage() is cw.untyped_storage()
    assert cv.storage_offset() == 2 and cw.dtype == torch.int32
    cx[2] = 100.
    assert cv[0, 0].item() == 100. and x[2].item() == 2.
    # separate deepcopy calls: separate memory
    assert own_memory(copy.deepcopy(x), copy.deepcopy(v))


def test_deepcopy_memo_gives_the_same_copy_for_the_same_tensor():
    x = torch.ones(2)
    a, b = copy.deepcopy([x, x])
    assert a is b


def test_deepcopy_requires_grad_and_grad():
    w = torch.randn(3, requires_grad=True)
    (w * 2).sum().backward()
    c = copy.deepcopy(w)
    assert c.requires_grad and c.is_leaf and c.grad_fn is None
    same(c, w.detach())
    same(c.grad, w.grad)
    assert own_memory(c.grad, w.grad)
    # the copy is a new leaf of its own graph
    (c * 3).sum().backward()
    assert c.grad.tolist() == [5.0, 5.0, 5.0] and w.grad.tolist() == [2.0, 2.0, 2.0]
    n = copy.deepcopy(torch.ones(2))
    assert not n.requires_grad and n.grad is None


def test_deepcopy_of_a_non_leaf_raises_torchs_error():
    w = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user "
                                           r"\(graph leaves\) support the deepcopy protocol"):
        copy.deepcopy(w * 2)


def test_deepcopy_copies_attributes():
    x = torch.ones(2)
    x.tag = {"name": [1, 2]}
    y = copy.deepcopy(x)
    assert y.tag == {"name": [1, 2]} and y.tag is not x.tag


class MyTensor(torch.Tensor):
    pass


def test_deepcopy_and_pickle_of_a_subclass_keep_its_type():
    t = torch.Tensor._make_subclass(MyTensor, torch.arange(3.), False)
    t.note = "n"
    for y in (copy.deepcopy(t), pickled(t), copy.copy(t)):
        assert type(y) is MyTensor and y.note == "n"
        same(torch.Tensor._make_subclass(torch.Tensor, y), torch.arange(3.))


def test_copy_copy_shares_memory_like_torch():
    w = torch.randn(3, requires_grad=True)
    c = copy.copy(w)
    assert c is not w and c.data_ptr() == w.data_ptr()
    assert c.requires_grad and c.is_leaf and c.grad is None


# ---- pickle -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_every_dtype(dtype, protocol):
    x = rand((3, 4), dtype)
    y = pickled(x, protocol)
    same(y, x)
    assert type(y) is torch.Tensor and own_memory(x, y) and not y.requires_grad


def test_pickle_keeps_geometry_zero_dim_and_empty():
    base = torch.arange(24.).reshape(4, 6)
    for v in (base.t(), base[1:, ::2], base[2], torch.tensor(7), torch.empty(0, 3),
              torch.empty(2, 0, dtype=torch.bfloat16)):
        y = pickled(v)
        same(y, v)
        assert y.stride() == v.stride() and y.storage_offset() == v.storage_offset()


def test_pickle_requires_grad_and_bfloat16():
    w = torch.randn(2, 3, dtype=torch.bfloat16).requires_grad_()
    y = pickled(w)
    assert y.dtype == torch.bfloat16 and y.requires_grad and y.is_leaf
    same(y.detach(), w.detach())
    # a non-leaf pickles as torch's: a leaf that requires grad
    z = pickled(w.float() * 2)
    assert z.requires_grad and z.is_leaf and z.dtype == torch.float32


def test_pickle_keeps_attributes_and_containers():
    x = torch.ones(2)
    x.meta = ("a", 1)
    d = pickled({"x": x, "l": [torch.zeros(1, dtype=torch.int64), 3]})
    assert d["x"].meta == ("a", 1) and d["l"][1] == 3 and d["l"][0].dtype == torch.int64


# ---- Parameters and modules ----------------------------------------------------------------

def test_parameter_deepcopy_and_pickle_stay_parameters():
    p = nn.Parameter(torch.randn(2, 3))
    p.grad = torch.ones(2, 3)
    for y in (copy.deepcopy(p), pickled(p), pickled(p, 2)):
        assert type(y) is nn.Parameter and y.requires_grad and y.is_leaf
        same(y.detach(), p.detach())
        assert own_memory(y, p)
    # torch's Parameter.__deepcopy__ clones the data only: no grad
    assert copy.deepcopy(p).grad is None
    q = nn.Parameter(torch.zeros(2), requires_grad=False)
    q.no_decay = True
    for y in (copy.deepcopy(q), pickled(q)):
        assert type(y) is nn.Parameter and not y.requires_grad
    assert pickled(q).no_decay is True
    c = copy.copy(p)
    assert type(c) is nn.Parameter and c.data_ptr() == p.data_ptr()


class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("running", torch.arange(3.))
        self.register_buffer("count", torch.tensor(0, dtype=torch.int64))

    def forward(self, x):
        return self.lin(x) + self.running


def test_deepcopy_of_a_sequential_with_buffers():
    shared = nn.Linear(3, 3)
    m = nn.Sequential(WithBuffer(), nn.ReLU(), shared, shared)
    m[2].weight.grad = torch.ones(3, 3)
    c = copy.deepcopy(m)
    assert type(c) is nn.Sequential and type(c[0]) is WithBuffer
    # new parameters and buffers, the same values
    for (n1, a), (n2, b) in zip(m.named_parameters(), c.named_parameters()):
        assert n1 == n2 and type(b) is nn.Parameter and b is not a and own_memory(a, b)
        same(a.detach(), b.detach())
    for a, b in zip(m.buffers(), c.buffers()):
        assert b is not a and own_memory(a, b)
        same(a, b)
    # a module used twice stays one module with one set of parameters
    assert c[2] is c[3] and c[2].weight is c[3].weight
    assert len(list(c.parameters())) == len(list(m.parameters()))
    x = torch.randn(2, 3)
    same(c(x).detach(), m(x).detach())
    # training the copy leaves the original alone (the EMA / best-model pattern)
    with torch.no_grad():
        for p in c.parameters():
            p.add_(1.0)
        c[0].running.add_(5.0)
    assert m[0].running.tolist() == [0.0, 1.0, 2.0]
    assert not torch.equal(c[2].weight, m[2].weight)
    assert c[2].weight.grad is None


def test_pickle_of_a_module():
    m = nn.Sequential(WithBuffer(), nn.Linear(3, 2))
    c = pickled(m)
    x = torch.randn(4, 3)
    same(c(x).detach(), m(x).detach())
    assert all(type(p) is nn.Parameter for p in c.parameters())
    assert list(c.state_dict()) == list(m.state_dict())


def test_state_dict_deepcopy_keeps_the_best_model_pattern():
    m = nn.Linear(2, 2)
    best = copy.deepcopy(m.state_dict())
    with torch.no_grad():
        m.weight.zero_()
    assert not torch.equal(best["weight"], m.weight.detach())
    m.load_state_dict(best)
    assert torch.equal(best["weight"], m.weight.detach())


# ---- CUDA ------------------------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "int64", "bool", "complex64"])
def test_cuda_deepcopy_and_pickle(dtype, balanced):
    x = rand((3, 5), dtype, device="cuda")[:, 1:]
    for y in (copy.deepcopy(x), pickled(x)):
        assert y.device == x.device and y.stride() == x.stride()
        assert y.storage_offset() == x.storage_offset() and own_memory(x, y)
        same(y, x)
    del x, y


@pytest.mark.cuda
def test_cuda_module_deepcopy_memory_returns_to_baseline(balanced):
    m = nn.Sequential(WithBuffer(), nn.Linear(3, 2)).cuda()
    w = torch.randn(4, device="cuda", requires_grad=True)
    (w * w).sum().backward()
    cuda.synchronize()
    before = cuda.memory_allocated()
    c = copy.deepcopy(m)
    cw = copy.deepcopy(w)
    assert cw.grad.device == w.device and cw.requires_grad
    assert all(p.is_cuda for p in c.parameters()) and c[0].running.is_cuda
    assert cuda.memory_allocated() > before
    p = pickled(c)
    assert all(t.is_cuda for t in p.state_dict().values())
    del c, cw, p
    gc.collect()
    cuda.synchronize()
    assert cuda.memory_allocated() == before
    del m, w


@pytest.mark.cuda
@pytest.mark.multigpu
def test_cuda_pickle_keeps_the_device_index():
    x = torch.arange(4., device="cuda:1")
    y = pickled(x)
    assert y.device == torch.device("cuda:1")
    same(y, x)
