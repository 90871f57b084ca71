"""Independent generators: torch.Generator() (and Generator(device='cuda'))
has a (seed, offset) state of its own. Drawing from it, seeding it or
restoring its state leaves the default generators alone, and the default
ones leave it alone; generator= takes it in every random function (fills,
factories, randperm, the sampling functions built on them) and refuses one
of the wrong device type or a non-generator. The same properties hold in
torch (checked against it where installed); the numbers themselves come
from Philox here and are not torch's."""
import copy
import pickle

import numpy as np
import pytest

import pycuda_sem as torch
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def _npy(t):
    return t.cpu().numpy()


def _independence(lib, device):
    # the default stream's draws with and without draws from g in between
    g = lib.Generator(device=device).manual_seed(0)
    lib.manual_seed(5)
    a = lib.randn(3, device=device)
    lib.manual_seed(5)
    lib.randn(2, generator=g, device=device)
    g.manual_seed(9)
    b = lib.randn(3, device=device)
    return a.cpu().numpy(), b.cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_draws_and_seeds_leave_the_default_stream_alone(device):
    a, b = _independence(torch, device)
    np.testing.assert_array_equal(a, b)
    if real_torch is not None and (device == "cpu" or real_torch.cuda.is_available()):
        ta, tb = _independence(real_torch, device)
        np.testing.assert_array_equal(ta, tb)  # the property is torch's


@pytest.mark.parametrize("device", DEVICES)
def test_the_default_stream_leaves_a_generator_alone(device):
    g = torch.Generator(device=device).manual_seed(11)
    x = torch.rand(5, device=device, generator=g)
    g.manual_seed(11)
    torch.manual_seed(3)
    torch.rand(100, device=device)  # the default stream moves, g does not
    torch.manual_seed(4)
    assert torch.equal(torch.rand(5, device=device, generator=g), x)


def test_fresh_generator_seed_and_state():
    g = torch.Generator()
    assert g.initial_seed() == 67280421310721 and g.device == torch.device("cpu")
    if real_torch is not None:
        assert real_torch.Generator().initial_seed() == g.initial_seed()
    assert g.manual_seed(-1) is g and g.initial_seed() == 2 ** 64 - 1  # wrapped, as torch
    with pytest.raises(RuntimeError):
        g.manual_seed(2 ** 64)
    with pytest.raises(TypeError):
        g.manual_seed("1")
    g.manual_seed(1)
    s = g.get_state()
    assert s.dtype == torch.uint8 and tuple(s.shape) == (16,)
    a = torch.randn(8, generator=g)
    assert g.set_state(s) is g
    assert torch.equal(torch.randn(8, generator=g), a)
    fresh = g.seed()
    assert g.initial_seed() == fresh and 0 <= fresh < 2 ** 63
    torch.manual_seed(7)
    g.seed()
    assert torch.initial_seed() == 7


def test_two_generators_with_one_seed_agree_and_differ_from_another():
    g1, g2, g3 = (torch.Generator().manual_seed(s) for s in (42, 42, 43))
    a = torch.rand(1000, generator=g1)
    assert torch.equal(a, torch.rand(1000, generator=g2))
    assert not torch.equal(a, torch.rand(1000, generator=g3))
    # a generator's next draw continues its own stream
    assert not torch.equal(torch.rand(1000, generator=g1), a)


def test_every_random_function_takes_a_generator():
    def draws(seed):
        g = torch.Generator().manual_seed(seed)
        x = torch.empty(64, dtype=torch.float64)
        out = [torch.rand(4, 4, generator=g), torch.randn(7, generator=g),
               torch.randint(0, 100, (9,), generator=g), torch.randperm(20, generator=g),
               torch.rand_like(x, generator=g), torch.randn_like(x, generator=g),
               x.clone().normal_(2.0, 3.0, generator=g), x.clone().uniform_(-1, 1, generator=g),
               x.clone().bernoulli_(0.3, generator=g), x.clone().exponential_(2.0, generator=g),
               torch.empty(5, dtype=torch.int64).random_(0, 50, generator=g),
               torch.multinomial(torch.tensor([0.2, 0.5, 0.3]), 30, replacement=True, generator=g),
               torch.normal(torch.zeros(6), torch.ones(6), generator=g),
               torch.bernoulli(torch.full((10,), 0.5), generator=g),
               torch.poisson(torch.full((10,), 4.0), generator=g)]
        return [_npy(t) for t in out]
    torch.manual_seed(0)
    first = draws(123)
    torch.manual_seed(99)  # the default generator plays no part
    for a, b in zip(first, draws(123)):
        np.testing.assert_array_equal(a, b)
    assert sorted(first[3].tolist()) == list(range(20))
    assert any(not np.array_equal(a, b) for a, b in zip(first, draws(124)))


def test_default_generator_is_a_handle_on_the_cpu_default():
    d = torch.default_generator
    assert isinstance(d, torch.Generator)
    assert d.manual_seed(5) is d and torch.initial_seed() == 5
    a = torch.rand(3)
    d.manual_seed(5)
    assert torch.equal(torch.rand(3, generator=d), a)
    state = d.get_state()
    assert torch.equal(state, torch.get_rng_state())
    assert pickle.loads(pickle.dumps(d)) is d


def test_pickle_and_deepcopy_keep_device_and_state():
    g = torch.Generator().manual_seed(8)
    torch.rand(3, generator=g)
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert h is not g and isinstance(h, torch.Generator) and h.device == g.device
        assert torch.equal(h.get_state(), g.get_state())
        assert torch.equal(torch.rand(4, generator=h), torch.rand(4, generator=copy.deepcopy(g)))


def test_bad_generator_arguments():
    with pytest.raises(TypeError, match="torch.Generator"):
        torch.rand(3, generator=5)
    with pytest.raises(TypeError, match="torch.Generator"):
        torch.empty(3).normal_(generator="g")
    with pytest.raises(RuntimeError):
        torch.Generator(device="meta")
    with pytest.raises(RuntimeError, match="16 bytes"):
        torch.Generator().set_state(torch.zeros(8, dtype=torch.uint8))
    with pytest.raises(TypeError):
        torch.Generator().set_state([0] * 16)


def test_samplers_with_a_generator_leave_the_default_stream_alone():
    from pycuda_sem.utils.data import DataLoader, RandomSampler, TensorDataset, random_split
    ds = TensorDataset(torch.arange(50))
    torch.manual_seed(0)
    want = torch.rand(4)
    torch.manual_seed(0)

    def loader_order(seed):
        return sum((b[0].tolist() for b in DataLoader(ds, batch_size=10, shuffle=True,
                                                      generator=torch.Generator().manual_seed(seed))), [])
    order1 = list(RandomSampler(ds, generator=torch.Generator().manual_seed(1)))
    batches = loader_order(1)
    parts = random_split(ds, [20, 30], generator=torch.Generator().manual_seed(2))
    assert torch.equal(torch.rand(4), want)
    assert sorted(order1) == list(range(50)) and sorted(batches) == list(range(50))
    assert loader_order(1) == batches and loader_order(2) != batches
    assert order1 == list(RandomSampler(ds, generator=torch.Generator().manual_seed(1)))
    assert sorted(list(parts[0].indices) + list(parts[1].indices)) == list(range(50))


def test_cuda_default_generators_are_generators():
    # a handle needs no GPU to be made (the tuple itself is empty without one)
    from pycuda_sem.cuda import _CudaDefaultGenerator
    h = _CudaDefaultGenerator(0)
    assert isinstance(h, torch.Generator) and h.device == torch.device("cuda", 0)
    assert all(isinstance(d, torch.Generator) for d in torch.cuda.default_generators)
    if real_torch is not None and real_torch.cuda.is_available():
        assert isinstance(real_torch.cuda.default_generators[0], real_torch.Generator)


@pytest.mark.cuda
def test_cuda_generator_is_independent_of_the_device_default():
    d = torch.cuda.default_generators[torch.cuda.current_device()]
    assert pickle.loads(pickle.dumps(d)) is d
    g = torch.Generator(device="cuda").manual_seed(0)
    assert g.device == torch.device("cuda", torch.cuda.current_device())
    d.manual_seed(0)
    a = torch.randn(64, device="cuda", generator=g)
    b = torch.randn(64, device="cuda")  # the default, also at seed 0: the same numbers
    assert torch.equal(a, b)
    g.manual_seed(0)
    torch.randn(1000, device="cuda", generator=g)
    assert d.initial_seed() == 0
    c = torch.randn(64, device="cuda")  # the default went on from b, not from g's draws
    d.manual_seed(0)
    torch.randn(64, device="cuda")
    assert torch.equal(torch.randn(64, device="cuda"), c)


@pytest.mark.cuda
def test_cpu_and_cuda_generators_of_one_seed_give_the_same_numbers():
    gc, gg = torch.Generator().manual_seed(17), torch.Generator(device="cuda").manual_seed(17)
    np.testing.assert_allclose(_npy(torch.rand(1000, generator=gc)),
                               _npy(torch.rand(1000, device="cuda", generator=gg)), rtol=1e-6)
    assert torch.equal(torch.randperm(50, generator=gc.manual_seed(3)).cpu(),
                       torch.randperm(50, device="cuda", generator=gg.manual_seed(3)).cpu())


@pytest.mark.cuda
def test_generator_of_the_wrong_device_type():
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        torch.randn(3, device="cuda", generator=torch.Generator())
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        torch.randn(3, generator=torch.Generator(device="cuda"))
    with pytest.raises(RuntimeError, match="device type"):
        torch.empty(3, device="cuda").normal_(generator=torch.Generator())
    if real_torch is not None and real_torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
            real_torch.randn(3, device="cuda", generator=real_torch.Generator())


def test_rrelu_slopes_from_a_generator():
    x = torch.randn(200, dtype=torch.float64) - 0.5
    a = torch.rrelu(x, training=True, generator=torch.Generator().manual_seed(4))
    torch.manual_seed(1)
    b = torch.rrelu(x, training=True, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a, b)
    neg = _npy(x) < 0
    slopes = _npy(a)[neg] / _npy(x)[neg]
    assert slopes.min() >= 1 / 8 and slopes.max() <= 1 / 3 and slopes.std() > 0.01
    np.testing.assert_array_equal(_npy(a)[~neg], _npy(x)[~neg])
    y = x.clone()
    assert torch.rrelu_(y, training=True, generator=torch.Generator().manual_seed(4)) is y
    assert torch.equal(y, a)
    # eval mode: the mean slope, no draw
    g = torch.Generator().manual_seed(4)
    e = torch.rrelu(x, generator=g)
    np.testing.assert_allclose(_npy(e)[neg], _npy(x)[neg] * (1 / 8 + 1 / 3) / 2)
    assert torch.equal(g.get_state(), torch.Generator().manual_seed(4).get_state())


def test_clone_state_and_offsets():
    g = torch.Generator().manual_seed(3)
    assert g.get_offset() == 0
    torch.rand(10, generator=g)
    off = g.get_offset()
    assert off > 0
    c = g.clone_state()
    assert c is not g and isinstance(c, torch.Generator) and c.initial_seed() == 3
    assert torch.equal(torch.rand(6, generator=c), torch.rand(6, generator=g))
    assert g.set_offset(0) is g and g.get_offset() == 0 and g.initial_seed() == 3
    assert torch.equal(torch.rand(4, generator=g), torch.rand(4, generator=torch.Generator().manual_seed(3)))
    with pytest.raises(NotImplementedError, match="graphsafe_get_state is not supported"):
        g.graphsafe_get_state()
    if real_torch is not None:
        with pytest.raises(NotImplementedError, match="graphsafe_get_state is not supported"):
            real_torch.Generator().graphsafe_get_state()
        assert real_torch.Generator().clone_state() is not None


@pytest.mark.cuda
def test_graphsafe_state_on_a_cuda_generator():
    g = torch.Generator(device="cuda").manual_seed(5)
    s = g.graphsafe_get_state()
    a = torch.rand(8, device="cuda", generator=g)
    g.graphsafe_set_state(s)
    assert torch.equal(torch.rand(8, device="cuda", generator=g), a)
    with pytest.raises(TypeError):
        g.graphsafe_set_state(g.get_state())
