"""Reinforcement-learning patterns: an actor-critic with orthogonal init, a
Categorical policy (sample, log_prob, entropy), generalised advantage estimates in a
backward loop, the PPO clipped objective over shuffled minibatches, gradient clipping,
and a tanh-squashed Gaussian policy through Normal.rsample.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/ppo_toy.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal

class ActorCritic(nn.Module):
    def __init__(self, obs=4, act=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.pi = nn.Linear(32, act)
        self.v = nn.Linear(32, 1)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, gain=np.sqrt(2))
                nn.init.constant_(m.bias, 0.0)
    def forward(self, x):
        h = self.body(x)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)

def gae(rewards, values, dones, gamma=0.99, lam=0.95):
    adv = torch.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(len(rewards))):
        nonterminal = 1.0 - dones[t]
        next_v = values[t + 1] if t + 1 < len(values) else 0.0
        delta = rewards[t] + gamma * next_v * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv

torch.manual_seed(0)
np.random.seed(0)
net = ActorCritic()
opt = torch.optim.Adam(net.parameters(), lr=3e-4, eps=1e-5)
T = 64
obs = torch.randn(T, 4)
with torch.no_grad():
    dist, values = net(obs)
    actions = dist.sample()
    old_logp = dist.log_prob(actions)
rewards = (actions == 1).float() + 0.1 * torch.randn(T)
dones = torch.zeros(T); dones[31] = 1.0
adv = gae(rewards, values, dones)
returns = adv + values
for epoch in range(4):
    for idx in torch.randperm(T).split(16):
        dist, v = net(obs[idx])
        logp = dist.log_prob(actions[idx])
        ratio = (logp - old_logp[idx]).exp()
        a = adv[idx]
        a = (a - a.mean()) / (a.std() + 1e-8)
        pg = -torch.min(ratio * a, torch.clamp(ratio, 0.8, 1.2) * a).mean()
        vloss = 0.5 * ((v - returns[idx]) ** 2).mean()
        ent = dist.entropy().mean()
        loss = pg + 0.5 * vloss - 0.01 * ent
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        opt.step()
approx_kl = (old_logp - net(obs)[0].log_prob(actions)).mean().item()
print('loss %.4f kl %.5f ent %.4f' % (loss.item(), approx_kl, ent.item()))
# a Gaussian policy head with a learned log-std and tanh squashing
mu = torch.zeros(8, 2, requires_grad=True); log_std = torch.full((2,), -0.5, requires_grad=True)
g = Normal(mu, log_std.exp())
u = g.rsample(); act = torch.tanh(u)
logp = (g.log_prob(u) - torch.log(1 - act.pow(2) + 1e-6)).sum(-1)
logp.mean().backward()
print(mu.grad.shape, log_std.grad is not None)
print('ok')
