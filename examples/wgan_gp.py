"""Gradient-penalty and utility patterns: autograd.grad with create_graph through a
padded conv net (WGAN-GP), parameters_to_vector, forward hooks, non-reentrant
checkpointing, load_state_dict(strict=False), one_hot, unique, bucketize, einsum,
interpolate and normalize.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/wgan_gp.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import torch, torch.nn as nn
torch.manual_seed(0)
D = nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(4, 8, 4, 2, 1), nn.LayerNorm([8, 4, 4]), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(128, 1)).double()
real = torch.randn(6, 1, 16, 16, dtype=torch.float64); fake = torch.randn(6, 1, 16, 16, dtype=torch.float64)
alpha = torch.rand(6, 1, 1, 1, dtype=torch.float64)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
d_interp = D(interp)
grads = torch.autograd.grad(outputs=d_interp, inputs=interp, grad_outputs=torch.ones_like(d_interp), create_graph=True, retain_graph=True, only_inputs=True)[0]
gp = ((grads.view(grads.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
loss = D(fake).mean() - D(real).mean() + 10 * gp
loss.backward()
print('gp', gp.item(), 'g', sum(p.grad.abs().sum().item() for p in D.parameters()))
# parameters_to_vector etc
v = torch.nn.utils.parameters_to_vector(D.parameters()); torch.nn.utils.vector_to_parameters(v * 1.0, D.parameters())
print(v.shape)
# hooks
acts = {}
h = D[0].register_forward_hook(lambda m, i, o: acts.__setitem__('c0', o.detach()))
D(real); h.remove(); print(acts['c0'].shape)
# checkpoint
from torch.utils.checkpoint import checkpoint
x = real.clone().requires_grad_(True)
y = checkpoint(D, x, use_reentrant=False); y.sum().backward(); print(x.grad.abs().sum().item())
sd = D.state_dict(); sd.pop('6.bias'); r = D.load_state_dict(sd, strict=False); print(r.missing_keys, r.unexpected_keys)
print(torch.nn.functional.one_hot(torch.tensor([0, 2]), 3), torch.unique(torch.tensor([3, 1, 3]), return_counts=True))
print(torch.bucketize(torch.tensor([0.1, 0.5]), torch.tensor([0.0, 0.3, 1.0])), torch.einsum('bij,bjk->bik', torch.ones(2, 2, 3), torch.ones(2, 3, 1)).shape)
print(torch.nn.functional.interpolate(real, scale_factor=2, mode='bilinear', align_corners=False).shape, torch.nn.functional.normalize(real.view(6, -1), dim=1).norm(dim=1)[:2])
print('ok')
