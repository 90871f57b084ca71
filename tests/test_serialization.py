"""torch.save / torch.load (pycuda_sem/serialization.py): torch's zip format,
round trips of tensors of every dtype, views, nested containers, CUDA tensors
and map_location; weights_only refusing any other global before it runs;
and, where torch is installed (the GPU machine), files written here loading
in torch and files written by torch loading here."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import pycuda_sem as torch

from dtype_helpers import DTYPES, rand, same

try:
    import torch as real_torch
except ImportError:
    real_torch = None

needs_real_torch = pytest.mark.skipif(real_torch is None, reason="needs torch installed")


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kw), buf.getvalue()


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips(dtype):
    x = rand((3, 4), dtype)
    y, _ = roundtrip(x)
    same(y, x)


def test_archive_layout_is_torchs():
    _, data = roundtrip({"w": rand((2, 3), "float32")})
    zf = zipfile.ZipFile(io.BytesIO(data))
    names = zf.namelist()
    assert names[0] == "archive/data.pkl"
    for rec in ("archive/byteorder", "archive/version", "archive/data/0",
                "archive/.data/serialization_id"):
        assert rec in names
    assert zf.read("archive/byteorder") == b"little" and zf.read("archive/version") == b"3\n"
    for info in zf.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        if info.filename.startswith("archive/data/"):
            # the bytes start on a 64-byte boundary, as torch writes them
            start = info.header_offset + 30 + len(info.filename) + len(info.extra)
            assert start % 64 == 0
    pkl = zf.read("archive/data.pkl")
    assert b"torch._utils\n_rebuild_tensor_v2" in pkl and b"FloatStorage" in pkl
    assert b"pycuda_sem" not in pkl


def test_views_share_storage_again_and_nested_containers():
    base = rand((4, 6), "float32")
    obj = {"a": base, "t": base.t(), "row": base[1], "step": base[:, ::2],
           "list": [1, 2.5, "s", None, (base[0, :2], True)],
           "od": collections.OrderedDict(x=base[2:]), "size": torch.Size([2, 3]),
           "dtype": torch.float16, "dev": torch.device("cpu"), "bytes": b"\x00\xff"}
    y, data = roundtrip(obj)
    assert sum(n.startswith("archive/data/") for n in zipfile.ZipFile(io.BytesIO(data)).namelist()) == 1
    for k in ("a", "t", "row", "step"):
        same(y[k], obj[k])
    assert y["t"].stride() == obj["t"].stride()
    y["a"][1, 0] = 123.0  # the views share the loaded storage
    assert y["row"][0].item() == 123.0 and y["t"][0, 1].item() == 123.0
    assert y["list"][:4] == [1, 2.5, "s", None] and y["list"][4][1] is True
    same(y["list"][4][0], obj["list"][4][0])
    assert isinstance(y["od"], collections.OrderedDict)
    assert y["size"] == torch.Size([2, 3]) and y["dtype"] is torch.float16
    assert y["dev"] == torch.device("cpu") and y["bytes"] == b"\x00\xff"


def test_file_paths_and_empty_and_zero_dim(tmp_path):
    p = tmp_path / "ckpt.pt"
    obj = [torch.tensor(3.5), torch.empty(0, 3), rand((5,), "int64")]
    torch.save(obj, str(p))
    y = torch.load(p)
    for a, b in zip(y, obj):
        same(a, b)


def test_same_storage_as_two_dtypes_raises():
    x = rand((4,), "float32")
    with pytest.raises(RuntimeError, match="different types"):
        torch.save([x, x.view(torch.int32)], io.BytesIO())


def _archive(payload):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/version", b"3\n")
    buf.seek(0)
    return buf


def test_weights_only_refuses_other_globals_before_running_them(tmp_path):
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch %s" % marker,))

    with pytest.raises(pickle.UnpicklingError, match=r"(posix|os|nt)\.system"):
        torch.load(_archive(pickle.dumps({"w": Evil()}, protocol=2)))
    assert not marker.exists()

    class Cwd:
        def __reduce__(self):
            return (os.getcwd, ())

    with pytest.raises(pickle.UnpicklingError, match="getcwd"):
        torch.load(_archive(pickle.dumps(Cwd(), protocol=2)))
    assert torch.load(_archive(pickle.dumps(Cwd(), protocol=2)), weights_only=False) == os.getcwd()


def test_map_location_forms_on_cpu():
    x = rand((2, 2), "float64")
    for ml in (None, "cpu", torch.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s):
        y, _ = roundtrip(x, map_location=ml)
        same(y, x)


def test_not_a_zip_and_legacy_flags():
    with pytest.raises(NotImplementedError, match="zip format"):
        torch.load(io.BytesIO(pickle.dumps([1, 2])))
    with pytest.raises(NotImplementedError):
        torch.save([1], io.BytesIO(), _use_new_zipfile_serialization=False)


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced")
def test_cuda_tensors_and_map_location():
    x = rand((3, 5), "float32").cuda()
    v = x[:, 1:]
    y, _ = roundtrip({"x": x, "v": v})
    assert y["x"].device == x.device
    same(y["x"], x)
    same(y["v"], v)
    z, _ = roundtrip(x, map_location="cpu")
    assert z.device.type == "cpu"
    same(z, x.cpu())
    c, _ = roundtrip(rand((2,), "float16"), map_location="cuda:0")
    assert c.device == torch.device("cuda:0")
    m, _ = roundtrip(x, map_location=lambda s, loc: s.cpu())
    assert m.device.type == "cpu"
    del y, z, c, m, x, v


@needs_real_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_our_file_loads_in_torch_and_back(dtype, tmp_path):
    x = rand((3, 4), dtype)
    p = tmp_path / "ours.pt"
    torch.save({"x": x, "t": x.t(), "n": 3}, str(p))
    theirs = real_torch.load(str(p), weights_only=True)
    want = x.float() if dtype == "bfloat16" else x
    got = theirs["x"].float() if dtype == "bfloat16" else theirs["x"]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert theirs["t"].stride() == x.t().stride() and theirs["n"] == 3
    assert str(theirs["x"].dtype) == "torch." + dtype
    # and torch's own file loads here
    q = tmp_path / "theirs.pt"
    real_torch.save({"x": theirs["x"], "t": theirs["x"].t(), "sd": real_torch.nn.Linear(2, 3).state_dict()},
                    str(q))
    back = torch.load(str(q))
    same(back["x"], x)
    assert back["t"].stride() == x.t().stride()
    assert tuple(back["sd"]["weight"].shape) == (3, 2)


# ---- autograd: requires_grad, Parameters, models and optimizers --------------------------

nn = torch.nn


def _pkl(data):
    return zipfile.ZipFile(io.BytesIO(data)).read("archive/data.pkl")


def test_requires_grad_round_trips_as_a_leaf():
    w = rand((2, 3), "float32").requires_grad_()
    (w * 2).sum().backward()
    y, data = roundtrip({"w": w, "nonleaf": w * 3, "plain": rand((2,), "float64")})
    assert y["w"].requires_grad and y["w"].is_leaf and y["w"].grad is None
    same(y["w"].detach(), w.detach())
    # torch saves a non-leaf as its values with requires_grad: a leaf on load
    assert y["nonleaf"].requires_grad and y["nonleaf"].is_leaf
    same(y["nonleaf"].detach(), (w * 3).detach())
    assert not y["plain"].requires_grad
    assert b"torch._utils\n_rebuild_tensor_v2" in _pkl(data)
    (y["w"] * 5).sum().backward()  # a leaf of a new graph
    assert y["w"].grad.tolist() == [[5.0] * 3] * 2


def test_parameters_round_trip_as_parameters_under_weights_only():
    p = nn.Parameter(rand((2, 3), "float32"))
    frozen = nn.Parameter(rand((3,), "float64"), requires_grad=False)
    tagged = nn.Parameter(rand((2,), "float32"))
    tagged.no_decay = True
    y, data = roundtrip({"p": p, "again": p, "frozen": frozen, "tagged": tagged,
                         "view": p.data[1]})
    pkl = _pkl(data)
    assert b"torch._utils\n_rebuild_parameter\n" in pkl
    assert b"torch._utils\n_rebuild_parameter_with_state" in pkl and b"pycuda_sem" not in pkl
    assert type(y["p"]) is nn.Parameter and y["p"].requires_grad and y["p"].is_leaf
    same(y["p"].detach(), p.detach())
    assert y["again"] is y["p"]  # one object saved twice loads as one
    assert type(y["frozen"]) is nn.Parameter and not y["frozen"].requires_grad
    assert type(y["tagged"]) is nn.Parameter and y["tagged"].no_decay is True
    # the Parameter and a view of its data share the loaded storage
    with torch.no_grad():
        y["p"][1, 0] = 42.0
    assert y["view"][0].item() == 42.0


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        self.register_buffer("scale", torch.tensor([2.0, 0.5]))

    def forward(self, x):
        return self.body(x) * self.scale


def test_model_state_dict_round_trips_into_a_new_model():
    m = _Net()
    sd, data = roundtrip(m.state_dict())
    assert b"pycuda_sem" not in _pkl(data)
    assert list(sd) == list(m.state_dict()) and isinstance(sd, collections.OrderedDict)
    assert all(type(v) is torch.Tensor and not v.requires_grad for v in sd.values())
    assert sd._metadata == m.state_dict()._metadata
    fresh = _Net()
    fresh.load_state_dict(sd)
    x = rand((5, 3), "float32")
    same(fresh(x).detach(), m(x).detach())


def test_optimizer_state_dict_round_trips_and_training_continues():
    torch.manual_seed(0)
    m = _Net()
    opt = torch.optim.AdamW(m.parameters(), lr=0.01)
    x = rand((8, 3), "float32")
    for _ in range(2):
        opt.zero_grad()
        m(x).square().sum().backward()
        opt.step()
    ckpt, _ = roundtrip({"model": m.state_dict(), "optim": opt.state_dict(), "epoch": 2})
    assert ckpt["epoch"] == 2
    assert ckpt["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert ckpt["optim"]["param_groups"][0]["params"] == [0, 1, 2, 3]
    m2 = _Net()
    m2.load_state_dict(ckpt["model"])
    opt2 = torch.optim.AdamW(m2.parameters(), lr=0.01)
    opt2.load_state_dict(ckpt["optim"])
    for model, o in ((m, opt), (m2, opt2)):
        o.zero_grad()
        model(x).square().sum().backward()
        o.step()
    for a, b in zip(m.parameters(), m2.parameters()):
        same(a.detach(), b.detach())


def test_whole_model_round_trips_with_weights_only_false():
    m = _Net()
    y, data = roundtrip(m, weights_only=False)
    assert type(y) is _Net and y is not m
    assert all(type(p) is nn.Parameter for p in y.parameters())
    x = rand((4, 3), "float32")
    same(y(x).detach(), m(x).detach())
    # the default, weights_only=True, refuses the module class before running it
    with pytest.raises(pickle.UnpicklingError, match="_Net|Sequential|Linear"):
        torch.load(io.BytesIO(data))


class _Tagged(torch.Tensor):
    pass


def test_tensor_subclass_goes_through_rebuild_from_type():
    t = torch.Tensor._make_subclass(_Tagged, rand((3,), "float32"), False)
    t.label = "x"
    y, data = roundtrip({"t": t}, weights_only=False)
    assert type(y["t"]) is _Tagged and y["t"].label == "x"
    assert b"torch._tensor\n_rebuild_from_type_v2" in _pkl(data)
    with pytest.raises(pickle.UnpicklingError, match="_Tagged"):
        torch.load(io.BytesIO(data))
    # a plain tensor with attributes stays a plain tensor, under weights_only too
    p = rand((2,), "float32")
    p.note = "n"
    z, data = roundtrip(p)
    assert type(z) is torch.Tensor and z.note == "n"
    assert b"torch\nTensor" in _pkl(data)


def test_rebuild_functions_check_their_arguments():
    from pycuda_sem.serialization import _Global, _Pickler

    def payload(fn, args):
        class R:
            def __reduce__(self):
                return (_Global(*fn), args)
        buf = io.BytesIO()
        _Pickler(buf, 2).dump(R())
        return buf.getvalue()

    bad = [(("torch._utils", "_rebuild_parameter"), ("not a tensor", True, collections.OrderedDict())),
           (("torch._utils", "_rebuild_tensor_v2"), ("s", 0, (1,), (1,), False, collections.OrderedDict())),
           (("torch._tensor", "_rebuild_from_type_v2"), (collections.OrderedDict, set, (), None))]
    for fn, args in bad:
        with pytest.raises(pickle.UnpicklingError, match="expects a (tensor|storage|Tensor subclass)"):
            torch.load(_archive(payload(fn, args)))


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced")
def test_cuda_parameters_and_requires_grad():
    m = _Net().cuda()
    y, _ = roundtrip({"m": m.state_dict(), "p": m.body[0].weight,
                      "g": torch.ones(2, device="cuda", requires_grad=True)})
    assert type(y["p"]) is nn.Parameter and y["p"].is_cuda and y["p"].requires_grad
    assert y["g"].is_cuda and y["g"].requires_grad
    assert all(v.is_cuda for v in y["m"].values())
    z, _ = roundtrip(m.body[0].weight, map_location="cpu")
    assert type(z) is nn.Parameter and z.device.type == "cpu"
    del m, y, z


@needs_real_torch
def test_parameters_and_requires_grad_load_in_torch_and_back(tmp_path):
    p = tmp_path / "ours.pt"
    torch.save({"p": nn.Parameter(rand((2, 3), "float32")), "g": rand((2,), "float32").requires_grad_(),
                "sd": _Net().state_dict()}, str(p))
    theirs = real_torch.load(str(p), weights_only=True)
    assert isinstance(theirs["p"], real_torch.nn.Parameter) and theirs["p"].requires_grad
    assert theirs["g"].requires_grad and theirs["g"].is_leaf
    q = tmp_path / "theirs.pt"
    lin = real_torch.nn.Linear(2, 3)
    opt = real_torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    lin(real_torch.ones(1, 2)).sum().backward()
    opt.step()
    real_torch.save({"w": lin.weight, "sd": lin.state_dict(), "opt": opt.state_dict(),
                     "g": real_torch.ones(2, requires_grad=True)}, str(q))
    back = torch.load(str(q))
    assert type(back["w"]) is nn.Parameter and back["w"].requires_grad
    assert back["g"].requires_grad and tuple(back["sd"]["weight"].shape) == (3, 2)
    assert back["opt"]["param_groups"][0]["momentum"] == 0.9


def test_protocol_2_builtins_load_under_weights_only():
    # protocol 2 names them __builtin__.set ...: the allow-list sees builtins.set
    obj = {"s": {1, 2}, "f": frozenset([3]), "c": 1 + 2j, "r": range(3), "b": bytearray(b"x")}
    y, data = roundtrip(obj)
    assert b"__builtin__\nset" in _pkl(data)
    assert y == obj
