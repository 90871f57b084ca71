"""DDPM patterns on 2-D points: sinusoidal time embeddings, an MLP with GroupNorm and
SiLU, a linear beta schedule with cumprod, the extract-by-gather helper, q_sample and
the epsilon-prediction loss, an EMA copy kept by hand with mul_/add_(alpha=) under
no_grad and one kept by swa_utils.AveragedModel with get_ema_multi_avg_fn, a warmup
LambdaLR, gradient clipping, a seeded torch.Generator for the noise, and ancestral
sampling with randn_like.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/ddpm_toy.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=x.device) * -emb)
        emb = x[:, None] * emb[None, :]
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class Denoiser(nn.Module):
    def __init__(self, dim=2, hidden=128, tdim=32):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(tdim), nn.Linear(tdim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.inp = nn.Linear(dim, hidden)
        self.blocks = nn.ModuleList([nn.Sequential(nn.GroupNorm(8, hidden), nn.SiLU(), nn.Linear(hidden, hidden)) for _ in range(3)])
        self.out = nn.Linear(hidden, dim)

    def forward(self, x, t):
        h = self.inp(x) + self.time_mlp(t.float())
        for blk in self.blocks:
            h = h + blk(h)
        return self.out(F.silu(h))


def extract(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


def sample_data(n, gen, device):
    # two Gaussian blobs
    c = torch.randint(0, 2, (n, 1), generator=gen).float() * 2 - 1
    return (torch.randn(n, 2, generator=gen) * 0.15 + torch.cat([c * 1.5, c * 0.5], 1)).to(device)


device = 'cuda' if torch.cuda.is_available() else 'cpu'
torch.manual_seed(0)
gen = torch.Generator().manual_seed(0)
T = 100
betas = torch.linspace(1e-4, 0.05, T, dtype=torch.float64)
alphas = 1. - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)
alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.)
buf = {k: v.float().to(device) for k, v in dict(
    betas=betas, sqrt_alphas_cumprod=torch.sqrt(alphas_cumprod),
    sqrt_one_minus_alphas_cumprod=torch.sqrt(1. - alphas_cumprod),
    sqrt_recip_alphas=torch.sqrt(1.0 / alphas),
    posterior_variance=betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)).items()}

model = Denoiser().to(device)
ema = copy.deepcopy(model).requires_grad_(False)
swa_ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99))
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20))
losses = []
for step in range(300):
    x0 = sample_data(256, gen, device)
    t = torch.randint(0, T, (x0.shape[0],), device=device).long()
    noise = torch.randn_like(x0)
    x_t = extract(buf['sqrt_alphas_cumprod'], t, x0.shape) * x0 + extract(buf['sqrt_one_minus_alphas_cumprod'], t, x0.shape) * noise
    loss = F.mse_loss(model(x_t, t), noise)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    with torch.no_grad():
        for ema_p, p in zip(ema.parameters(), model.parameters()):
            ema_p.mul_(0.99).add_(p.detach(), alpha=0.01)
    swa_ema.update_parameters(model)
    losses.append(loss.item())
print('loss %.3f -> %.3f' % (sum(losses[:20]) / 20, sum(losses[-20:]) / 20))
assert sum(losses[-20:]) < 0.8 * sum(losses[:20])
# the two EMAs follow the same rule
for a, b in zip(ema.parameters(), swa_ema.module.parameters()):
    assert torch.allclose(a, b, atol=1e-5), (a - b).abs().max()


@torch.no_grad()
def p_sample_loop(net, n):
    x = torch.randn(n, 2, device=device)
    for i in reversed(range(T)):
        t = torch.full((n,), i, device=device, dtype=torch.long)
        eps = net(x, t)
        mean = extract(buf['sqrt_recip_alphas'], t, x.shape) * (
            x - extract(buf['betas'], t, x.shape) / extract(buf['sqrt_one_minus_alphas_cumprod'], t, x.shape) * eps)
        if i > 0:
            x = mean + torch.sqrt(extract(buf['posterior_variance'], t, x.shape)) * torch.randn_like(x)
        else:
            x = mean
    return x


samples = p_sample_loop(ema, 512).clamp(-3, 3)
right = (samples[:, 0] > 0).float().mean().item()
print('samples mean %s, right blob %.2f' % ([round(v, 2) for v in samples.abs().mean(0).tolist()], right))
assert 0.25 < right < 0.75 and samples[:, 0].abs().mean() > 0.9
print('ok')
