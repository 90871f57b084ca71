"""torch.utils._pytree, torch.utils.benchmark, torch.hub / model_zoo and
torch._dynamo (utils/_pytree.py, utils/benchmark/, hub.py, _dynamo/):
structures round trip and match torch's leaves, the timer measures and
prints, checkpoints download once into the cache (file:// URLs, no network),
local hubconf entrypoints load, and the compiler knobs keep eager results."""
import collections
import hashlib
import os

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.utils._pytree as pytree
import pycuda_sem.utils.benchmark as benchmark

from torch_oracle import _torch as real_torch  # torch where it imports, else None

NT = collections.namedtuple("NT", "x y")


def _trees():
    return [{"a": (1, [2, 3]), "b": None}, NT(4, {"k": [5]}), [collections.OrderedDict(z=6, a=7)],
            collections.defaultdict(int, {"k": 8}), collections.deque([9, 10], maxlen=3), 11, ()]


def test_pytree_round_trips_and_matches_torch():
    for tree in _trees():
        leaves, spec = pytree.tree_flatten(tree)
        back = pytree.tree_unflatten(leaves, spec)
        assert back == tree and type(back) is type(tree)
        assert spec.num_leaves == len(leaves)
        if real_torch is not None:
            import torch.utils._pytree as rp
            assert leaves == rp.tree_flatten(tree)[0]
    t = {"w": torch.ones(2), "b": [torch.zeros(1), 3]}
    doubled = pytree.tree_map_only(torch.Tensor, lambda x: x * 2, t)
    assert doubled["b"][1] == 3 and float(doubled["w"].sum()) == 4.0
    summed = pytree.tree_map(lambda a, b: a + b, (1, [2]), (10, [20]))
    assert summed == (11, [22])
    with pytest.raises(ValueError, match="different structures"):
        pytree.tree_map(lambda a, b: a, (1, 2), [1, 2])
    with pytest.raises(ValueError, match="has length 1"):
        pytree.tree_unflatten([1], pytree.tree_structure((1, 2)))
    assert pytree.tree_all(lambda x: x > 0, (1, [2])) and not pytree.tree_any(lambda x: x > 5, (1, [2]))
    assert pytree.tree_leaves([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple)) == [1, (2, 3)]

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))
    try:
        leaves, spec = pytree.tree_flatten([Pair(1, (2, 3))])
        assert leaves == [1, 2, 3] and pytree.tree_unflatten([4, 5, 6], spec)[0].b == (5, 6)
        with pytest.raises(ValueError, match="already registered"):
            pytree.register_pytree_node(Pair, None, None)
    finally:
        pytree.SUPPORTED_NODES.pop(Pair)


def test_benchmark_timer_measures_and_prints():
    t = benchmark.Timer("x * 2", setup="x = torch.ones(64)", globals={"torch": torch},
                        label="mul", sub_label="64", description="cpu")
    m = t.timeit(200)
    assert m.number_per_run == 200 and len(m.times) == 1 and 0 < m.median < 0.1
    r = repr(m)
    assert "mul: 64" in r and "x * 2" in r and "1 measurement, 200 runs" in r
    b = t.blocked_autorange(min_run_time=0.02)
    assert len(b.times) >= 1 and b.median > 0 and b.iqr >= 0
    table = str(benchmark.Compare([m, b]))
    assert "mul" in table and "64" in table and "Times are in" in table
    with pytest.raises(NotImplementedError):
        t.repeat()
    with pytest.raises(ValueError):
        t.timeit(0)
    with pytest.raises(ValueError):
        benchmark.Compare([1])


def test_hub_downloads_once_and_checks_hashes(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    path = src / "weights.pt"
    torch.save({"w": torch.arange(4.0)}, str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    hashed = src / ("weights-%s.pt" % digest[:8])
    hashed.write_bytes(path.read_bytes())
    torch.hub.set_dir(str(tmp_path / "hub"))
    try:
        sd = torch.hub.load_state_dict_from_url(path.as_uri())
        assert sd["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
        assert os.listdir(tmp_path / "hub" / "checkpoints") == ["weights.pt"]
        path.write_bytes(b"not a checkpoint any more")  # the cached copy is used now
        assert torch.utils.model_zoo.load_url(path.as_uri())["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
        assert torch.hub.load_state_dict_from_url(hashed.as_uri(), check_hash=True)["w"].shape == (4,)
        bad = src / "weights-deadbeef.pt"
        bad.write_bytes(hashed.read_bytes())
        with pytest.raises(RuntimeError, match="invalid hash value"):
            torch.hub.load_state_dict_from_url(bad.as_uri(), check_hash=True)
        assert not (tmp_path / "hub" / "checkpoints" / "weights-deadbeef.pt").exists()
        repo = tmp_path / "repo"
        repo.mkdir()
        (repo / "hubconf.py").write_text("def tiny(scale=1):\n    'A tiny entrypoint.'\n"
                                         "    import pycuda_sem as torch\n"
                                         "    return torch.nn.Linear(2, 2) if scale else None\n")
        assert torch.hub.list(str(repo), source="local") == ["tiny"]
        assert torch.hub.help(str(repo), "tiny", source="local") == "A tiny entrypoint."
        assert isinstance(torch.hub.load(str(repo), "tiny", source="local"), torch.nn.Linear)
        with pytest.raises(NotImplementedError, match="GitHub"):
            torch.hub.load("owner/repo", "model")
    finally:
        torch.hub._hub_dir = None


def test_dynamo_knobs_leave_eager_results():
    d = torch._dynamo
    d.config.cache_size_limit = 64
    assert d.config.cache_size_limit == 64
    with d.config.patch(suppress_errors=True):
        assert d.config.suppress_errors is True
    assert d.config.suppress_errors is False
    d.reset()
    f = d.disable(lambda x: x + 1)
    assert f(1) == 2 and d.disable()(abs)(-3) == 3 and d.optimize("inductor")(abs)(-2) == 2
    x = torch.ones(3)
    d.mark_dynamic(x, 0)
    d.mark_static(x)
    assert d.is_compiling() is False
    with pytest.raises(TypeError):
        d.mark_dynamic(3, 0)
    with pytest.raises(NotImplementedError):
        d.explain(abs)
    m = torch.nn.Linear(3, 2)
    np.testing.assert_array_equal(torch.compile(m)(x).detach().numpy(), m(x).detach().numpy())


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_typed_storage_views_the_whole_memory(device):
    base = torch.arange(6.0, device=device)
    t = base[2:]
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        import pycuda_sem._typed_storage as ts
        ts._warned[0] = False
        s = t.storage()
    assert isinstance(s, torch.TypedStorage)
    assert len(s) == s.size() == 6 and s.element_size() == 4 and s.nbytes() == 24
    assert s.dtype == torch.float32 and s.device == base.device and s.is_cuda == (device == "cuda")
    assert s.data_ptr() == t.untyped_storage().data_ptr() == base.data_ptr()
    assert s[0] == 0.0 and s[-1] == 5.0 and s[1:3] == [1.0, 2.0]
    s[1] = 9.0
    assert base[1].item() == 9.0 and s.tolist() == [0.0, 9.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(IndexError):
        s[6]
    with pytest.raises(TypeError):
        s["a"]
    with pytest.raises(TypeError):
        torch.TypedStorage()
