"""nn.Module, nn.Parameter, the containers, nn.utils and DataParallel: the
registration rules, iteration order, hooks, conversion keeping parameter
identity, state_dict round trips and torch's error texts, printed forms."""
import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2, bias=False)
        self.register_buffer("steps", torch.zeros(1))
        self.register_buffer("scratch", torch.ones(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


# ---- Parameter ---------------------------------------------------------------------

def test_parameter_is_a_leaf_tensor_sharing_memory():
    t = torch.randn(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, torch.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == t.data_ptr()
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    # ops on a Parameter give plain tensors, as in torch
    assert type(p * 2) is torch.Tensor and type(p.detach()) is torch.Tensor


def test_parameter_repr_and_copies():
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.data_ptr() != p.data_ptr()
    assert q.tolist() == [1.0, 2.0]
    m = copy.deepcopy(nn.Linear(2, 2))  # parameters only: plain tensors do not deepcopy yet
    assert type(m.weight) is nn.Parameter and m.weight.requires_grad


def test_parameter_of_a_graph_output_is_a_leaf():
    x = torch.randn(3, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None


# ---- registration ------------------------------------------------------------------

def test_setattr_sorts_values_into_the_three_dicts():
    m = Net()
    assert list(m._parameters) == []
    assert list(m._modules) == ["fc1", "act", "fc2"]
    assert list(m._buffers) == ["steps", "scratch"]
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "fc2"]
    assert len(list(m.parameters())) == 3 and len(list(m.modules())) == 4
    assert list(m.children())[1] is m.act
    assert m.fc2.bias is None and "bias" in m.fc2._parameters


def test_reassigning_moves_between_dicts_and_delattr():
    m = nn.Module()
    m.x = nn.Parameter(torch.zeros(1))
    with pytest.raises(TypeError, match="as parameter 'x'"):  # a parameter slot takes only those
        m.x = nn.Linear(1, 1)
    del m.x
    m.register_buffer("x", torch.zeros(1))
    m.x = nn.Linear(1, 1)  # a module now: gone from _buffers
    assert "x" not in m._buffers and "x" in m._modules
    m.x = None  # None keeps the slot
    assert m._modules["x"] is None
    m.register_buffer("b", torch.zeros(1), persistent=False)
    m.b = torch.ones(1)
    assert m._buffers["b"].tolist() == [1.0]
    del m.b
    assert "b" not in m._buffers and "b" not in m._non_persistent_buffers_set
    del m.x
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'x'"):
        m.x


def test_registration_errors_are_torchs():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"cannot assign 'pycuda_sem.FloatTensor' as parameter "
                                        r"'weight' \(torch.nn.Parameter or None expected\)"):
        m.weight = torch.zeros(2, 2)
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.register_buffer("weight", torch.zeros(1))
    with pytest.raises(KeyError, match=r'buffer name can\\\'t contain "\."'):
        m.register_buffer("a.b", torch.zeros(1))
    with pytest.raises(KeyError, match='parameter name can\\\\\'t be empty string ""'):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="parameter name should be a string. Got int"):
        m.register_parameter(1, None)
    with pytest.raises(TypeError, match=r"cannot assign 'int' object to buffer 'z' \(torch Tensor "
                                        r"or None required\)"):
        m.register_buffer("z", 3)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("c", 3)
    with pytest.raises(TypeError, match=r"cannot assign 'pycuda_sem.FloatTensor' object to "
                                        r"parameter 'q' \(torch.nn.Parameter or None required\)"):
        m.register_parameter("q", nn.Parameter(torch.zeros(1)) * 2)
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module 'act'"):
        n = Net()
        n.act = 3


def test_attribute_before_init_is_an_error():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(torch.zeros(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) "
                                             r"call"):
        Bad()


def test_dir_lists_members_but_not_digits():
    m = Net()
    d = dir(m)
    assert {"fc1", "steps", "forward", "training"} <= set(d)
    s = nn.Sequential(nn.ReLU())
    assert "0" not in dir(s)


def test_shared_parameters_are_listed_once():
    m = nn.Module()
    lin = nn.Linear(2, 2)
    m.a, m.b = lin, lin
    assert len(list(m.parameters())) == 2
    assert [n for n, _ in m.named_modules()] == ["", "a"]
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4


def test_get_submodule_parameter_buffer():
    m = nn.Sequential(Net())
    assert m.get_submodule("0.fc1") is m[0].fc1
    assert m.get_parameter("0.fc1.bias") is m[0].fc1.bias
    assert m.get_buffer("0.steps") is m[0].steps
    with pytest.raises(AttributeError):
        m.get_submodule("0.nope")


# ---- modes, apply, grads -----------------------------------------------------------

def test_train_eval_apply_requires_grad_zero_grad():
    m = Net()
    assert m.training and m.fc1.training
    assert m.eval() is m and not m.fc1.training
    m.train()
    assert m.act.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(1)
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    m(torch.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and float(p.grad.abs().sum()) == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_dropout_follows_train_and_eval():
    torch.manual_seed(1)
    d = nn.Sequential(nn.Dropout(0.5))
    x = torch.ones(1000)
    y = d(x).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 350 < (y == 0).sum() < 650
    d.eval()
    assert d(x) is x


# ---- hooks -------------------------------------------------------------------------

def test_forward_hooks_run_in_order_and_can_replace():
    m = nn.Linear(2, 2)
    log = []
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
    m.register_forward_hook(lambda mod, args, out: log.append("post"))
    m.register_forward_pre_hook(lambda mod, args, kw: log.append(("prekw", kw)), with_kwargs=True)
    m(torch.zeros(1, 2))
    assert log == ["pre0", "pre1", ("prekw", {}), "post"]
    h1.remove()
    log.clear()
    m(torch.zeros(1, 2))
    assert log == ["pre0", ("prekw", {}), "post"]

    n = nn.Identity()
    n.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    n.register_forward_hook(lambda mod, args, out: out + 1)
    n.register_forward_hook(lambda mod, args, kw, out: out * 10, with_kwargs=True)
    assert n(torch.tensor([1.0])).tolist() == [30.0]
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        k = nn.Identity()
        k.register_forward_pre_hook(lambda mod, a, kw: 5, with_kwargs=True)
        k(torch.zeros(1))


def test_always_call_hook_sees_a_failing_forward():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    seen = []
    m.register_forward_hook(lambda mod, a, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError):
        m(1)
    assert seen == [None]


# ---- conversion --------------------------------------------------------------------

def test_to_keeps_parameter_identity_and_casts_floats_only():
    m = Net()
    m.register_buffer("count", torch.zeros(2, dtype=torch.int64))
    w = m.fc1.weight
    m(torch.randn(2, 3)).sum().backward()
    opt_view = list(m.parameters())
    assert m.to(torch.float64) is m
    assert m.fc1.weight is w and w.dtype == torch.float64 and type(w) is nn.Parameter
    assert w.grad.dtype == torch.float64
    assert m.count.dtype == torch.int64 and m.steps.dtype == torch.float64
    assert list(m.parameters()) == opt_view or all(a is b for a, b in zip(m.parameters(), opt_view))
    m.half()
    assert w.dtype == torch.float16
    m.float()
    assert w.dtype == torch.float32
    m.to("cpu", torch.float64, non_blocking=True)
    assert w.dtype == torch.float64
    m.to(dtype=torch.float32)
    m.to(torch.zeros(1, dtype=torch.float64))
    assert w.dtype == torch.float64
    m.double().bfloat16()
    assert w.dtype == torch.bfloat16
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex "
                                        "dtypes, but got desired dtype="):
        m.to(torch.int32)
    assert m.cpu() is m and w.requires_grad


@pytest.mark.cuda
def test_cuda_round_trip_keeps_identity():
    m = Net()
    w = m.fc1.weight
    m.cuda()
    assert w.is_cuda and m.fc1.weight is w and m.steps.is_cuda
    y = m(torch.randn(4, 3, device="cuda"))
    y.sum().backward()
    assert w.grad.is_cuda
    m.to(device=torch.device("cuda", 0), non_blocking=True)
    m.cpu()
    assert not w.is_cuda and not w.grad.is_cuda


# ---- state_dict --------------------------------------------------------------------

def test_state_dict_keys_values_and_metadata():
    m = Net()
    sd = m.state_dict()
    # own tensors first, then the children's; scratch is not persistent
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert isinstance(sd, OrderedDict)
    assert not sd["fc1.weight"].requires_grad and type(sd["fc1.weight"]) is torch.Tensor
    assert sd["fc1.weight"].data_ptr() == m.fc1.weight.data_ptr()
    assert sd._metadata[""] == {"version": 1} and "fc1" in sd._metadata
    kv = m.state_dict(keep_vars=True)
    assert kv["fc1.weight"] is m.fc1.weight
    assert list(m.state_dict(prefix="net."))[1] == "net.fc1.weight"


def test_state_dict_round_trip():
    torch.manual_seed(0)
    a, b = Net(), Net()
    x = torch.randn(3, 3)
    assert not np.allclose(a(x).detach().numpy(), b(x).detach().numpy())
    w = b.fc1.weight
    r = b.load_state_dict(a.state_dict())
    assert r.missing_keys == [] and r.unexpected_keys == []
    assert repr(r) == "<All keys matched successfully>"
    assert b.fc1.weight is w  # copied in place
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    # through torch.save / torch.load as well
    import io
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    c = Net()
    c.load_state_dict(torch.load(buf))
    np.testing.assert_array_equal(a(x).detach().numpy(), c(x).detach().numpy())


def test_load_state_dict_strict_errors():
    m = Net()
    sd = m.state_dict()
    del sd["fc1.bias"]
    sd["fc3.weight"] = torch.zeros(1)
    sd["extra"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in '
                            'state_dict: "fc1.bias". \n\tUnexpected key(s) in state_dict: '
                            '"fc3.weight", "extra". ')
    r = m.load_state_dict(sd, strict=False)
    assert r.missing_keys == ["fc1.bias"] and r.unexpected_keys == ["fc3.weight", "extra"]
    assert repr(r) == ("_IncompatibleKeys(missing_keys=['fc1.bias'], "
                       "unexpected_keys=['fc3.weight', 'extra'])")
    bad = m.state_dict()
    bad["fc1.weight"] = torch.zeros(5, 5)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc1.weight: copying a param with "
                                           r"shape pycuda_sem.Size\(\[5, 5\]\) from checkpoint, the "
                                           r"shape in current model is pycuda_sem.Size\(\[4, 3\]\)"):
        m.load_state_dict(bad)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1])


def test_load_state_dict_assign():
    m = nn.Linear(2, 2)
    new = {"weight": torch.ones(2, 2), "bias": torch.zeros(2)}
    m.load_state_dict(new, assign=True)
    assert type(m.weight) is nn.Parameter and m.weight.requires_grad
    assert m.weight.data_ptr() == new["weight"].data_ptr()


# ---- repr --------------------------------------------------------------------------

def test_repr_matches_torch():
    assert repr(Net()) == ("Net(\n"
                           "  (fc1): Linear(in_features=3, out_features=4, bias=True)\n"
                           "  (act): ReLU()\n"
                           "  (fc2): Linear(in_features=4, out_features=2, bias=False)\n"
                           ")")
    nested = nn.Sequential(nn.Sequential(nn.Linear(1, 1), nn.GELU(approximate="tanh")), nn.Tanh())
    assert repr(nested) == ("Sequential(\n"
                            "  (0): Sequential(\n"
                            "    (0): Linear(in_features=1, out_features=1, bias=True)\n"
                            "    (1): GELU(approximate='tanh')\n"
                            "  )\n"
                            "  (1): Tanh()\n"
                            ")")
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])) == (
        "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"

    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(1, 2)

        def extra_repr(self):
            return "k=1"

    assert repr(WithExtra()) == ("WithExtra(\n  k=1\n  (lin): Linear(in_features=1, out_features=2, "
                                 "bias=True)\n)")


# ---- containers --------------------------------------------------------------------

def test_sequential_indexing_slicing_append():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and list(s) == [a, b, c]
    sub = s[1:]
    assert type(sub) is nn.Sequential and list(sub) == [b, c]
    assert list(sub._modules) == ["1", "2"]  # torch keeps the original names
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s.append(nn.Sigmoid())
    assert len(s) == 4 and "3" in s._modules
    del s[1]
    assert list(s._modules) == ["0", "1", "2"] and s[1] is c
    named = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert named.first is a and named[1] is b
    x = torch.randn(4, 2)
    np.testing.assert_allclose(nn.Sequential(a, b, c)(x).detach().numpy(),
                               c(b(a(x))).detach().numpy())


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml.insert(0, nn.Sigmoid())
    assert [type(m).__name__ for m in ml] == ["Sigmoid", "Linear", "ReLU", "Tanh"]
    assert len(list(ml.parameters())) == 2 and type(ml[1:3]) is nn.ModuleList
    md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    assert list(md.keys()) == ["b", "a"] and "a" in md and len(md) == 2
    md["c"] = nn.Linear(1, 1)
    assert [n for n, _ in md.named_parameters()] == ["c.weight", "c.bias"]
    assert type(md.pop("b")) is nn.ReLU and list(md) == ["a", "c"]


def test_parameter_list_and_dict():
    pl = nn.ParameterList([torch.zeros(2), nn.Parameter(torch.ones(3))])
    assert all(type(p) is nn.Parameter for p in pl) and len(pl) == 2
    pl.append(torch.zeros(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert repr(nn.ParameterList([torch.zeros(2, 3)])) == (
        "ParameterList(  (0): Parameter containing: [pycuda_sem.float32 of size 2x3])")
    pd = nn.ParameterDict({"w": torch.zeros(2)})
    pd["b"] = nn.Parameter(torch.ones(1))
    assert list(pd.keys()) == ["w", "b"] and type(pd["w"]) is nn.Parameter
    assert [n for n, _ in pd.named_parameters()] == ["w", "b"]
    assert "b" in pd and len(pd) == 2
    del pd["w"]
    assert list(pd.keys()) == ["b"]


# ---- nn.utils ----------------------------------------------------------------------

def test_clip_grad_norm_one_norm_over_all_grads():
    a = nn.Parameter(torch.zeros(3))
    b = nn.Parameter(torch.zeros(4))
    a.grad = torch.tensor([3.0, 0.0, 0.0])
    b.grad = torch.tensor([0.0, 4.0, 0.0, 0.0])
    total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert abs(float(total) - 5.0) < 1e-6
    np.testing.assert_allclose(a.grad.numpy(), [0.6, 0, 0], rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), [0, 0.8, 0, 0], rtol=1e-5)
    # under the limit: untouched
    total = nn.utils.clip_grad_norm_([a, b], 10.0)
    np.testing.assert_allclose(a.grad.numpy(), [0.6, 0, 0], rtol=1e-5)
    a.grad = torch.tensor([1.0, -7.0, 2.0])
    assert float(nn.utils.clip_grad_norm_(a, 100, norm_type="inf")) == 7.0
    a.grad = torch.tensor([float("nan"), 1.0, 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite"):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(torch.zeros(1))], 1.0)) == 0.0


def test_clip_grad_value_and_vectors():
    p = nn.Parameter(torch.zeros(3))
    p.grad = torch.tensor([-5.0, 0.5, 5.0])
    nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]
    m = nn.Linear(2, 3)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (9,)
    np.testing.assert_array_equal(v[:6].detach().numpy(), m.weight.detach().numpy().ravel())
    w = m.weight
    nn.utils.vector_to_parameters(torch.arange(9.0), m.parameters())
    assert m.weight is w and m.weight.tolist() == [[0, 1], [2, 3], [4, 5]]
    assert m.bias.tolist() == [6, 7, 8]


# ---- training ----------------------------------------------------------------------

def test_tiny_mlp_learns():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 4)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)
    X, Y = torch.from_numpy(x), torch.from_numpy(y)
    net = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
    lossf = nn.CrossEntropyLoss()
    losses = []
    for _ in range(200):
        net.zero_grad()
        loss = lossf(net(X), Y)
        loss.backward()
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.5 * p.grad
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]
    acc = (net(X).argmax(1) == Y).float().mean()
    assert float(acc) > 0.85


@pytest.mark.cuda
def test_tiny_mlp_learns_on_cuda():
    torch.manual_seed(0)
    X = torch.randn(256, 8, device="cuda")
    Y = (X[:, 0] > 0).long()
    net = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 2)).cuda()
    first = None
    for _ in range(100):
        net.zero_grad()
        loss = F.cross_entropy(net(X), Y)
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.2 * p.grad
        first = float(loss) if first is None else first
    assert float(loss) < 0.5 * first


# ---- DataParallel ------------------------------------------------------------------

def test_data_parallel_without_gpus_calls_the_module():
    m = nn.Linear(3, 2)
    with pytest.warns(UserWarning, match="DistributedDataParallel"):
        dp = nn.DataParallel(m)
    x = torch.randn(4, 3)
    if torch.cuda.device_count() == 0:
        np.testing.assert_array_equal(dp(x).detach().numpy(), m(x).detach().numpy())
    assert list(dp.state_dict())[0] == "module.weight"


@pytest.mark.multigpu
def test_data_parallel_scatters_and_gathers_with_gradients():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2)).cuda()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp = nn.DataParallel(m)
    x = torch.randn(9, 3, device="cuda")
    y = dp(x)
    assert y.shape == (9, 2) and y.device == torch.device("cuda", 0)
    ref = m(x)
    np.testing.assert_allclose(y.detach().cpu().numpy(), ref.detach().cpu().numpy(), rtol=1e-5,
                               atol=1e-6)
    y.square().sum().backward()
    grads = [p.grad.cpu().numpy().copy() for p in m.parameters()]
    m.zero_grad()
    ref.square().sum().backward()
    for g, p in zip(grads, m.parameters()):
        np.testing.assert_allclose(g, p.grad.cpu().numpy(), rtol=1e-4, atol=1e-5)


def test_data_parallel_machinery_on_the_cpu():
    """replicate / scatter / parallel_apply (threads) / gather with two CPU
    'devices': the multi-GPU path's logic, gradients included, runs here."""
    from pycuda_sem.nn.parallel import gather, parallel_apply, replicate, scatter_kwargs
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    x = torch.randn(9, 3)
    replicas = replicate(m, ["cpu", "cpu"])
    assert replicas[1][0].weight.grad_fn is not None  # a differentiable copy, not the Parameter
    inputs, kwargs = scatter_kwargs((x,), {"unused": None}, ["cpu", "cpu"])
    assert [i[0].shape[0] for i in inputs] == [5, 4] and kwargs[1] == {"unused": None}
    outputs = parallel_apply(replicas, [i for i in inputs], None, [None, None])
    y = gather(outputs, -1)
    ref = m(x)
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    y.square().sum().backward()
    grads = [p.grad.numpy().copy() for p in m.parameters()]
    m.zero_grad()
    ref.square().sum().backward()
    for g, p in zip(grads, m.parameters()):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-5, atol=1e-6)
    boom = nn.Linear(3, 2)
    with pytest.raises(RuntimeError):  # a replica's exception reaches the caller
        parallel_apply([boom, boom], [(torch.randn(2, 4),), (torch.randn(2, 3),)], None, [None, None])


def test_buffer_marker_registers_on_assignment():
    """nn.Buffer (torch 2.5+): assigning one registers a buffer; persistent=False keeps it out of the state dict."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.b = nn.Buffer(torch.zeros(3))
            self.c = nn.Buffer(torch.ones(2), persistent=False)
            self.d = torch.ones(1)  # a plain tensor stays a plain attribute

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["b", "c"] and list(m.state_dict()) == ["b"]
    assert isinstance(m.b, torch.Tensor) and isinstance(m.b, nn.Buffer) and not isinstance(m.d, nn.Buffer)
    m.b = torch.full((3,), 2.0)  # reassigning a registered buffer keeps it one
    assert m.state_dict()["b"].tolist() == [2.0, 2.0, 2.0]
    assert nn.Buffer().shape == (0,)
