"""nn layers, activations, attention, padding and nn.init: values against
NumPy in float64, gradients against central finite differences, default
initialisation against torch's bounds and statistics, reprs against the
strings torch prints. Where torch imports, a few layers are also compared
with it on identical weights."""
import math

import re

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F
from pycuda_sem.nn import init

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means no oracle
    real_torch = None

needs_real_torch = pytest.mark.skipif(real_torch is None, reason="torch is not importable")


def t64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def fd_check(fn, arrays, eps=1e-6, rtol=1e-4, atol=1e-6):
    """Autograd gradients of sum(fn(*tensors)) against central differences."""
    ts = [t64(a, True) for a in arrays]
    out = fn(*ts)
    out.sum().backward()
    for i, a in enumerate(arrays):
        num = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(a.shape):
            hi, lo = [np.array(x, dtype=np.float64) for x in arrays], [np.array(x, dtype=np.float64) for x in arrays]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            num[idx] = (float(fn(*map(t64, hi)).sum()) - float(fn(*map(t64, lo)).sum())) / (2 * eps)
        np.testing.assert_allclose(ts[i].grad.numpy(), num, rtol=rtol, atol=atol)


rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4)) * 2


# ---- activations -------------------------------------------------------------------

def _erf(a):
    return np.vectorize(math.erf)(a)


ACTS = [
    ("relu", F.relu, lambda a: np.maximum(a, 0)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda a: np.where(a > 0, a, 0.2 * a)),
    ("gelu", F.gelu, lambda a: a * 0.5 * (1 + _erf(a / math.sqrt(2)))),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))),
    ("silu", F.silu, lambda a: a / (1 + np.exp(-a))),
    ("elu", lambda x: F.elu(x, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a))),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=3.0),
     lambda a: np.where(2 * a > 3.0, a, np.log1p(np.exp(2 * a)) / 2)),
    ("mish", F.mish, lambda a: a * np.tanh(np.log1p(np.exp(a)))),
    ("tanh", F.tanh, np.tanh),
    ("sigmoid", F.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    ("logsigmoid", F.logsigmoid, lambda a: -np.log1p(np.exp(-a))),
    ("selu", F.selu, lambda a: 1.0507009873554805 * np.where(a > 0, a, 1.6732632423543772 * np.expm1(a))),
    ("relu6", F.relu6, lambda a: np.clip(a, 0, 6)),
]


@pytest.mark.parametrize("name,fn,ref", ACTS, ids=[a[0] for a in ACTS])
def test_activation_values_and_gradients(name, fn, ref):
    np.testing.assert_allclose(fn(t64(X)).numpy(), ref(X), rtol=1e-6, atol=1e-7)
    fd_check(fn, [X])


def test_activations_do_not_overflow():
    big = t64([-1000.0, -50.0, 0.0, 50.0, 1000.0], True)
    for fn in (F.softplus, F.elu, F.mish, F.logsigmoid, F.silu):
        y = fn(big)
        y.sum().backward()
        assert np.isfinite(y.detach().numpy()).all() and np.isfinite(big.grad.numpy()).all(), fn
        big.grad = None


def test_activation_modules_and_reprs():
    x = t64(X)
    pairs = [(nn.ReLU(), "ReLU()", F.relu(x)), (nn.ReLU(inplace=True), "ReLU(inplace=True)", None),
             (nn.LeakyReLU(0.1), "LeakyReLU(negative_slope=0.1)", F.leaky_relu(x, 0.1)),
             (nn.GELU(), "GELU(approximate='none')", F.gelu(x)),
             (nn.GELU("tanh"), "GELU(approximate='tanh')", F.gelu(x, approximate="tanh")),
             (nn.SiLU(), "SiLU()", F.silu(x)), (nn.Tanh(), "Tanh()", x.tanh()),
             (nn.Sigmoid(), "Sigmoid()", x.sigmoid()), (nn.Softmax(dim=1), "Softmax(dim=1)", x.softmax(1)),
             (nn.LogSoftmax(dim=-1), "LogSoftmax(dim=-1)", x.log_softmax(-1)),
             (nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)", F.softplus(x)),
             (nn.ELU(), "ELU(alpha=1.0)", F.elu(x)), (nn.ELU(inplace=True), "ELU(alpha=1.0, inplace=True)", None),
             (nn.Mish(), "Mish()", F.mish(x)), (nn.Identity(3, k=2), "Identity()", x),
             (nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)", x),
             (nn.Dropout(0.25), "Dropout(p=0.25, inplace=False)", None)]
    for module, text, expected in pairs:
        assert repr(module) == text
        if expected is not None:
            np.testing.assert_allclose(module(x).numpy(), expected.numpy())


def test_leaky_relu_inplace_and_relu_inplace():
    x = torch.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    y = torch.tensor([-1.0, 2.0])
    F.leaky_relu(y, 0.5, inplace=True)
    assert y.tolist() == [-0.5, 2.0]


# ---- linear layers -----------------------------------------------------------------

def test_linear_default_init_bounds_and_values():
    torch.manual_seed(0)
    m = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) comes to this
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert np.abs(b).max() <= bound
    x = rng.normal(size=(5, 400)).astype(np.float32)
    np.testing.assert_allclose(m(torch.from_numpy(x)).detach().numpy(), x @ w.T + b, rtol=1e-4, atol=1e-4)
    x3 = rng.normal(size=(2, 5, 400)).astype(np.float32)  # leading dims pass through
    np.testing.assert_allclose(m(torch.from_numpy(x3)).detach().numpy(), x3 @ w.T + b, rtol=1e-4,
                               atol=1e-4)
    assert nn.Linear(3, 2, bias=False).bias is None
    assert nn.Linear(3, 2, dtype=torch.float64).weight.dtype == torch.float64


def test_linear_and_bilinear_gradients():
    W, b = rng.normal(size=(2, 4)), rng.normal(size=2)
    fd_check(lambda x, w, bb: F.linear(x, w, bb), [X, W, b])
    A = rng.normal(size=(2, 3, 4))
    x1, x2 = rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
    ref = np.einsum("ni,oij,nj->no", x1, A, x2) + b
    np.testing.assert_allclose(F.bilinear(t64(x1), t64(x2), t64(A), t64(b)).numpy(), ref, rtol=1e-10)
    fd_check(lambda p, q, a: F.bilinear(p, q, a), [x1[:2], x2[:2], A])
    m = nn.Bilinear(3, 4, 2)
    bound = 1 / math.sqrt(3)
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    assert repr(m) == "Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)"


# ---- normalisation -----------------------------------------------------------------

def test_layer_norm_against_numpy_and_gradients():
    x = rng.normal(size=(2, 3, 4))
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    w, b = rng.normal(size=4), rng.normal(size=4)
    ref = (x - mu) / np.sqrt(var + 1e-5) * w + b
    np.testing.assert_allclose(F.layer_norm(t64(x), (4,), t64(w), t64(b)).numpy(), ref, rtol=1e-10)
    mu2 = x.mean((-2, -1), keepdims=True)
    ref2 = (x - mu2) / np.sqrt(x.var((-2, -1), keepdims=True) + 1e-5)
    np.testing.assert_allclose(F.layer_norm(t64(x), [3, 4]).numpy(), ref2, rtol=1e-10)
    fd_check(lambda a, ww, bb: F.layer_norm(a, (4,), ww, bb) * t64(np.arange(4.0)), [x[0], w, b])
    ln = nn.LayerNorm(4)
    assert ln.weight.tolist() == [1.0] * 4 and ln.bias.tolist() == [0.0] * 4
    assert repr(ln) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"
    assert nn.LayerNorm(4, bias=False).bias is None
    assert nn.LayerNorm([3, 4], elementwise_affine=False).weight is None
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape "
                                           r"\[\*, 5\], but got input of size\[2, 3, 4\]"):
        F.layer_norm(t64(x), (5,))


def test_rms_norm_against_numpy():
    x = rng.normal(size=(3, 4))
    w = rng.normal(size=4)
    ref = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + np.finfo(np.float64).eps) * w
    np.testing.assert_allclose(F.rms_norm(t64(x), (4,), t64(w)).numpy(), ref, rtol=1e-10)
    ref = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 0.1)
    np.testing.assert_allclose(F.rms_norm(t64(x), [4], eps=0.1).numpy(), ref, rtol=1e-10)
    fd_check(lambda a, ww: F.rms_norm(a, (4,), ww, 1e-3) * t64(np.arange(4.0)), [x, w])
    m = nn.RMSNorm(4)
    assert m.weight.tolist() == [1.0] * 4
    assert repr(m) == "RMSNorm((4,), eps=None, elementwise_affine=True)"
    half = F.rms_norm(torch.randn(2, 4).half(), (4,))
    assert half.dtype == torch.float16


# ---- embedding ---------------------------------------------------------------------

def test_embedding_lookup_init_and_padding():
    torch.manual_seed(0)
    e = nn.Embedding(1000, 20, padding_idx=3)
    w = e.weight.detach().numpy()
    assert np.all(w[3] == 0) and abs(w.std() - 1.0) < 0.03 and abs(w.mean()) < 0.03
    idx = torch.tensor([[3, 5], [7, 3]])
    out = e(idx)
    assert out.shape == (2, 2, 20)
    np.testing.assert_array_equal(out.detach().numpy(), w[[[3, 5], [7, 3]]])
    (out * torch.arange(20.0)).sum().backward()
    g = e.weight.grad.numpy()
    assert np.all(g[3] == 0)  # no gradient into the padding row
    np.testing.assert_allclose(g[5], np.arange(20.0))
    assert repr(e) == "Embedding(1000, 20, padding_idx=3)"
    assert nn.Embedding(5, 2, padding_idx=-1).padding_idx == 4
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 2, padding_idx=5)


def test_embedding_from_pretrained_and_max_norm():
    pre = torch.tensor([[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]])
    e = nn.Embedding.from_pretrained(pre)
    assert not e.weight.requires_grad and e.weight.data_ptr() == pre.data_ptr()
    assert e(torch.tensor([1])).tolist() == [[3.0, 4.0]]
    assert nn.Embedding.from_pretrained(pre, freeze=False).weight.requires_grad
    m = nn.Embedding.from_pretrained(pre.clone(), max_norm=1.0)
    out = m(torch.tensor([1]))
    assert abs(float(out.norm()) - 1.0) < 1e-5
    assert abs(float(m.weight[1].norm()) - 1.0) < 1e-5 and m.weight[0].tolist() == [1.0, 2.0]


# ---- dropout -----------------------------------------------------------------------

def test_dropout_statistics_reproducibility_and_gradient():
    x = torch.ones(20000, requires_grad=True)
    torch.manual_seed(3)
    y = F.dropout(x, 0.3)
    a = y.detach().numpy()
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((a == 0).mean() - 0.3) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), a)  # grad is the mask times 1/(1-p)
    torch.manual_seed(3)
    np.testing.assert_array_equal(F.dropout(torch.ones(20000), 0.3).numpy(), a)
    assert F.dropout(x, 0.3, training=False) is x
    assert float(F.dropout(x, 1.0).sum()) == 0.0
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


# ---- shape layers and pad ----------------------------------------------------------

def test_flatten_unflatten():
    x = torch.randn(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12) and nn.Flatten(0, 1)(x).shape == (6, 4)
    u = nn.Unflatten(1, (3, 1))
    assert u(torch.randn(2, 3)).shape == (2, 3, 1)
    assert nn.Unflatten(-1, (2, -1))(x).shape == (2, 3, 2, 2)
    assert repr(u) == "Unflatten(dim=1, unflattened_size=(3, 1))"


def test_pad_modes_against_numpy():
    a = rng.normal(size=(2, 3, 4))
    x = t64(a)
    np.testing.assert_array_equal(F.pad(x, (1, 2)).numpy(), np.pad(a, ((0, 0), (0, 0), (1, 2))))
    np.testing.assert_array_equal(F.pad(x, (1, 0, 0, 2), value=7.0).numpy(),
                                  np.pad(a, ((0, 0), (0, 2), (1, 0)), constant_values=7.0))
    np.testing.assert_array_equal(F.pad(x, (-1, 1)).numpy(), np.pad(a, ((0, 0), (0, 0), (0, 1)))[..., 1:])
    np.testing.assert_array_equal(F.pad(x, (2, 3), mode="reflect").numpy(),
                                  np.pad(a, ((0, 0), (0, 0), (2, 3)), mode="reflect"))
    np.testing.assert_array_equal(F.pad(x, (2, 1, 1, 1), mode="replicate").numpy(),
                                  np.pad(a, ((0, 0), (1, 1), (2, 1)), mode="edge"))
    np.testing.assert_array_equal(F.pad(x, (1, 2), mode="circular").numpy(),
                                  np.pad(a, ((0, 0), (0, 0), (1, 2)), mode="wrap"))
    fd_check(lambda t: F.pad(t, (1, 1, 2, 0)) * 3, [a[0]])
    fd_check(lambda t: F.pad(t, (2, 1), mode="reflect") * t64(np.arange(7.0)), [a[0]])
    with pytest.raises(ValueError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))


# ---- attention ---------------------------------------------------------------------

def _np_softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_sdpa_against_numpy():
    q, k, v = rng.normal(size=(2, 3, 5, 8)), rng.normal(size=(2, 3, 6, 8)), rng.normal(size=(2, 3, 6, 4))
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(8)
    ref = _np_softmax(scores) @ v
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    causal = np.tril(np.ones((5, 6), bool))
    ref = _np_softmax(np.where(causal, scores, -np.inf)) @ v
    np.testing.assert_allclose(F.scaled_dot_product_attention(t64(q), t64(k), t64(v), is_causal=True).numpy(),
                               ref, rtol=1e-10)
    mask = rng.random((5, 6)) > 0.3
    mask[:, 0] = True
    ref = _np_softmax(np.where(mask, scores, -np.inf)) @ v
    np.testing.assert_allclose(F.scaled_dot_product_attention(t64(q), t64(k), t64(v),
                                                              attn_mask=torch.from_numpy(mask)).numpy(),
                               ref, rtol=1e-10)
    bias = rng.normal(size=(5, 6))
    ref = _np_softmax(q @ k.swapaxes(-1, -2) * 0.5 + bias) @ v
    np.testing.assert_allclose(F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=t64(bias),
                                                              scale=0.5).numpy(), ref, rtol=1e-10)
    fd_check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
             [q[0, 0, :3, :2], k[0, 0, :3, :2], v[0, 0, :3, :2]])
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=t64(bias), is_causal=True)
    torch.manual_seed(0)
    dropped = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), dropout_p=0.5)
    assert dropped.shape == (2, 3, 5, 4)


def _np_mha(m, q, k, v, key_padding_mask=None, attn_mask=None):
    """torch's MHA in NumPy, sequence-first (L, N, E)."""
    W = m.in_proj_weight.detach().numpy().astype(np.float64)
    b = m.in_proj_bias.detach().numpy().astype(np.float64)
    E, H = m.embed_dim, m.num_heads
    d = E // H
    Q, K, V = q @ W[:E].T + b[:E], k @ W[E:2 * E].T + b[E:2 * E], v @ W[2 * E:].T + b[2 * E:]
    L, N, S = q.shape[0], q.shape[1], k.shape[0]

    def heads(t, n):  # (n, N, E) -> (N, H, n, d)
        return t.reshape(n, N, H, d).transpose(1, 2, 0, 3)

    s = heads(Q, L) @ heads(K, S).swapaxes(-1, -2) / math.sqrt(d)
    if attn_mask is not None:
        s = np.where(attn_mask, -np.inf, s)
    if key_padding_mask is not None:
        s = np.where(key_padding_mask[:, None, None, :], -np.inf, s)
    w = _np_softmax(s)
    o = (w @ heads(V, S)).transpose(2, 0, 1, 3).reshape(L, N, E)
    o = o @ m.out_proj.weight.detach().numpy().T + m.out_proj.bias.detach().numpy()
    return o, w.mean(1)


def test_multihead_attention_against_numpy():
    torch.manual_seed(0)
    m = nn.MultiheadAttention(8, 2).double()
    E = 8
    assert m.in_proj_bias.tolist() == [0.0] * 24 and m.out_proj.bias.tolist() == [0.0] * 8
    assert np.abs(m.in_proj_weight.detach().numpy()).max() <= math.sqrt(6 / (8 + 24))
    with torch.no_grad():
        m.in_proj_bias.normal_()
        m.out_proj.bias.normal_()
    q, k, v = rng.normal(size=(4, 3, E)), rng.normal(size=(5, 3, E)), rng.normal(size=(5, 3, E))
    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    am = np.triu(np.ones((4, 5), bool), 2)
    out, w = m(t64(q), t64(k), t64(v), key_padding_mask=torch.from_numpy(kpm), attn_mask=torch.from_numpy(am))
    ref_o, ref_w = _np_mha(m, q, k, v, kpm, am)
    np.testing.assert_allclose(out.detach().numpy(), ref_o, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(w.detach().numpy(), ref_w, rtol=1e-9, atol=1e-12)
    out2, none = m(t64(q), t64(k), t64(v), need_weights=False)
    assert none is None
    np.testing.assert_allclose(out2.detach().numpy(), _np_mha(m, q, k, v)[0], rtol=1e-9, atol=1e-12)
    # batch_first is a transpose of the same computation
    mb = nn.MultiheadAttention(8, 2, batch_first=True).double()
    mb.load_state_dict(m.state_dict())
    ob, _ = mb(t64(q.swapaxes(0, 1)), t64(k.swapaxes(0, 1)), t64(v.swapaxes(0, 1)))
    np.testing.assert_allclose(ob.detach().numpy().swapaxes(0, 1), _np_mha(m, q, k, v)[0], rtol=1e-9,
                               atol=1e-12)
    out.sum().backward()
    assert m.in_proj_weight.grad is not None and m.out_proj.weight.grad is not None
    names = [n for n, _ in m.named_parameters()]
    assert names == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert repr(m) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear("
                       "in_features=8, out_features=8, bias=True)\n)")


def test_multihead_attention_variants():
    m = nn.MultiheadAttention(6, 3, kdim=4, vdim=5, add_bias_kv=True, add_zero_attn=True, dropout=0.1)
    assert m.in_proj_weight is None and m.q_proj_weight.shape == (6, 6)
    assert m.k_proj_weight.shape == (6, 4) and m.bias_k.shape == (1, 1, 6)
    m.eval()
    o, w = m(torch.randn(2, 3, 6), torch.randn(4, 3, 4), torch.randn(4, 3, 5),
             key_padding_mask=torch.zeros(3, 4, dtype=torch.bool))
    assert o.shape == (2, 3, 6) and w.shape == (3, 2, 6)  # 4 keys + bias_k + zero attention
    o, w = m(torch.randn(2, 6), torch.randn(4, 4), torch.randn(4, 5), average_attn_weights=False)
    assert o.shape == (2, 6) and w.shape == (3, 2, 6)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask"):
        m(torch.randn(2, 3, 6), torch.randn(4, 3, 4), torch.randn(4, 3, 5), attn_mask=torch.zeros(3, 3))


# ---- nn.init -----------------------------------------------------------------------

def test_init_bounds_and_statistics():
    torch.manual_seed(0)
    w = torch.empty(300, 200)
    assert init.calculate_gain("relu") == math.sqrt(2) and init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert init._calculate_fan_in_and_fan_out(torch.empty(3, 4, 5, 6)) == (120, 90)
    with pytest.raises(ValueError):
        init._calculate_fan_in_and_fan_out(torch.empty(3))
    a = init.xavier_uniform_(w, gain=2.0).numpy()
    bound = 2.0 * math.sqrt(6 / 500)
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.99 * bound
    a = init.xavier_normal_(w).numpy()
    assert abs(a.std() - math.sqrt(2 / 500)) < 0.02 * math.sqrt(2 / 500)
    a = init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu").numpy()
    bound = math.sqrt(2) * math.sqrt(3 / 300)
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.99 * bound
    a = init.kaiming_normal_(w).numpy()
    assert abs(a.std() - math.sqrt(2 / 200)) < 0.02 * math.sqrt(2 / 200)
    a = init.uniform_(w, -3, -2).numpy()
    assert a.min() >= -3 and a.max() <= -2
    a = init.normal_(w, 5, 0.5).numpy()
    assert abs(a.mean() - 5) < 0.01 and abs(a.std() - 0.5) < 0.01
    a = init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=2.0).numpy()
    assert a.min() >= -1 and a.max() <= 2
    # mean of N(1, 4) truncated to [-1, 2]: 1 + 2 (phi(-1) - phi(0.5)) / (Phi(0.5) - Phi(-1))
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    Phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    expect = 1 + 2 * (phi(-1) - phi(0.5)) / (Phi(0.5) - Phi(-1))
    assert abs(a.mean() - expect) < 0.02
    assert init.constant_(w, 0.25).numpy().max() == 0.25 and init.zeros_(w).numpy().max() == 0
    assert init.ones_(w).numpy().min() == 1
    q = init.orthogonal_(torch.empty(6, 4), gain=2.0).numpy()
    np.testing.assert_allclose(q.T @ q, 4 * np.eye(4), atol=1e-5)
    q = init.orthogonal_(torch.empty(3, 5)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-5)
    assert init.eye_(torch.empty(2, 3)).tolist() == [[1, 0, 0], [0, 1, 0]]


def test_init_is_not_recorded_and_generator_reproduces():
    p = nn.Parameter(torch.empty(10, 10))
    init.kaiming_uniform_(p, a=math.sqrt(5))
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    g = torch.Generator()
    g.manual_seed(7)
    a = init.normal_(torch.empty(5), generator=g).tolist()
    g.manual_seed(7)
    assert init.normal_(torch.empty(5), generator=g).tolist() == a


# ---- torch as the oracle, where it imports ------------------------------------------

@needs_real_torch
def test_layers_match_torch_on_the_same_weights():
    tm = real_torch.nn.Sequential(real_torch.nn.Linear(5, 7), real_torch.nn.GELU(),
                                  real_torch.nn.LayerNorm(7), real_torch.nn.Linear(7, 3)).double()
    m = nn.Sequential(nn.Linear(5, 7), nn.GELU(), nn.LayerNorm(7), nn.Linear(7, 3)).double()
    m.load_state_dict({k: t64(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = rng.normal(size=(4, 5))
    np.testing.assert_allclose(m(t64(x)).detach().numpy(),
                               tm(real_torch.from_numpy(x)).detach().numpy(), rtol=1e-10)
    # torch 2.15 prints the norm layers' bias=True; 2.11, as we do
    assert repr(m) == re.sub(r"(affine=(?:True|False)), bias=(?:True|False)", r"\1", repr(tm))


@pytest.mark.cuda
def test_layers_on_cuda_match_cpu():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 8), nn.SiLU(), nn.RMSNorm(8), nn.Dropout(0.0), nn.Linear(8, 4))
    e = nn.Embedding(10, 6, padding_idx=0)
    idx = torch.tensor([[0, 3], [4, 9]])
    ref = m(e(idx)).detach().numpy()
    m.cuda()
    e.cuda()
    # TF32 (on by default here, as the note says) rounds the matmul inputs to
    # 10 mantissa bits: compared with the CPU's float32 at TF32's precision
    out = m(e(idx.cuda()))
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref, rtol=1e-5, atol=5e-3)
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        exact = m(e(idx.cuda()))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = True
    np.testing.assert_allclose(exact.detach().cpu().numpy(), ref, rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert float(e.weight.grad[0].abs().sum().cpu()) == 0
    q = torch.randn(2, 2, 5, 4, device="cuda")
    a = F.scaled_dot_product_attention(q, q, q, is_causal=True).cpu().numpy()
    qc = q.cpu()
    np.testing.assert_allclose(a, F.scaled_dot_product_attention(qc, qc, qc, is_causal=True).numpy(),
                               rtol=1e-5, atol=1e-6)
    mha = nn.MultiheadAttention(4, 2, batch_first=True).cuda()
    o, w = mha(q[0], q[0], q[0])
    assert o.is_cuda and w.shape == (2, 5, 5)
