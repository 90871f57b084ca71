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

try:
    import torch as real_torch
except ImportError:
    real_torch = None

needs_real_torch = pytest.mark.skipif(real_torch is None, reason="needs torch installed")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128"]


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) * 10
    if dtype.startswith("complex"):
        v = v + 1j * rng.standard_normal(shape)
    if dtype == "bool":
        v = v > 0
    elif dtype in ("int64", "int32", "int16", "int8", "uint8"):
        v = np.abs(v).astype(np.int64) % 100
    return torch.tensor(v.tolist(), dtype=getattr(torch, dtype))


def same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape) and a.device == b.device
    if a.dtype == torch.bfloat16:
        a, b = a.float(), b.float()
    np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())


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
