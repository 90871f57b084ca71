"""Tabular and representation-learning patterns: EmbeddingBag (mean) over ragged
categorical features with offsets, torch.bucketize to bin a numeric column,
BCEWithLogitsLoss with pos_weight, a WeightedRandomSampler and random_split with a
seeded generator, a custom collate_fn, ReduceLROnPlateau in max mode with early
stopping on a best state_dict deep-copied, AUROC from argsort and cumsum; then a
SimCLR NT-Xent loss (F.normalize, a self-mask from torch.eye, masked_fill_) and
knowledge distillation with KLDivLoss(reduction='batchmean', log_target=True).

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/tabular_contrastive.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler, random_split


class Rows(Dataset):
    def __init__(self, n, gen):
        self.num = torch.randn(n, 3, generator=gen)
        self.tags = [torch.randint(0, 50, (int(k),), generator=gen) for k in torch.randint(1, 5, (n,), generator=gen)]
        score = self.num[:, 0] * 1.5 - self.num[:, 1] + torch.tensor([float((t < 10).any()) for t in self.tags]) * 2
        self.y = (score > 1.8).float()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.num[i], self.tags[i], self.y[i]


def collate(batch):
    num = torch.stack([b[0] for b in batch])
    tags = [b[1] for b in batch]
    offsets = torch.tensor([0] + [len(t) for t in tags[:-1]]).cumsum(dim=0)
    return num, torch.cat(tags), offsets, torch.stack([b[2] for b in batch])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(50, 8, mode='mean')
        self.bins = nn.Embedding(6, 4)
        self.register_buffer('edges', torch.tensor([-1.5, -0.5, 0.0, 0.5, 1.5]))
        self.mlp = nn.Sequential(nn.Linear(3 + 8 + 4, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 1))

    def forward(self, num, tags, offsets):
        b = self.bins(torch.bucketize(num[:, 0].contiguous(), self.edges))
        return self.mlp(torch.cat([num, self.bag(tags, offsets), b], dim=1)).squeeze(1)


def auroc(scores, labels):
    order = torch.argsort(scores, descending=True)
    l = labels[order]
    tps, fps = torch.cumsum(l, 0), torch.cumsum(1 - l, 0)
    tpr, fpr = tps / tps[-1], fps / fps[-1]
    return torch.trapz(tpr, fpr).item()


device = 'cuda' if torch.cuda.is_available() else 'cpu'
torch.manual_seed(0)
gen = torch.Generator().manual_seed(0)
data = Rows(3000, gen)
train, val = random_split(data, [0.8, 0.2], generator=torch.Generator().manual_seed(1))
ytr = data.y[torch.tensor(train.indices)]
pos = ytr.mean().item()
weights = torch.where(ytr > 0, 0.5 / pos, 0.5 / (1 - pos))
sampler = WeightedRandomSampler(weights.double(), num_samples=len(train), replacement=True)
tl = DataLoader(train, batch_size=128, sampler=sampler, collate_fn=collate)
vl = DataLoader(val, batch_size=256, shuffle=False, collate_fn=collate)
model = Net().to(device)
crit = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0], device=device))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode='max', factor=0.5, patience=1)
best, best_state, bad = -1.0, None, 0
for epoch in range(8):
    model.train()
    for num, tags, offsets, y in tl:
        num, tags, offsets, y = num.to(device), tags.to(device), offsets.to(device), y.to(device)
        loss = crit(model(num, tags, offsets), y)
        opt.zero_grad(); loss.backward(); opt.step()
    model.eval()
    with torch.inference_mode():
        s, l = zip(*[(model(n.to(device), t.to(device), o.to(device)).cpu(), y) for n, t, o, y in vl])
    auc = auroc(torch.cat(s), torch.cat(l))
    plateau.step(auc)
    if auc > best:
        best, best_state, bad = auc, copy.deepcopy(model.state_dict()), 0
    else:
        bad += 1
        if bad >= 3:
            break
print('best auroc %.3f, lr %.4f' % (best, opt.param_groups[0]['lr']))
assert best > 0.9, best
model.load_state_dict(best_state)


def nt_xent(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    n = z1.shape[0]
    sim = z @ z.T / temperature
    sim.masked_fill_(torch.eye(2 * n, dtype=torch.bool, device=z.device), -9e15)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


enc = nn.Sequential(nn.Linear(3, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 16)).to(device)
opt = torch.optim.SGD(enc.parameters(), lr=0.1, momentum=0.9, nesterov=True)
first = None
for step in range(40):
    x = data.num[torch.randint(0, len(data), (64,), generator=gen)].to(device)
    v1, v2 = x + 0.1 * torch.randn_like(x), x * (1 + 0.1 * torch.randn_like(x))
    loss = nt_xent(enc(v1), enc(v2))
    opt.zero_grad(); loss.backward(); opt.step()
    first = loss.item() if first is None else first
print('nt-xent %.3f -> %.3f' % (first, loss.item()))
assert loss.item() < first

student = nn.Linear(3, 2).to(device)
teacher = nn.Sequential(nn.Linear(3, 2)).to(device).eval()
kd = nn.KLDivLoss(reduction='batchmean', log_target=True)
opt = torch.optim.Adam(student.parameters(), lr=5e-2)
Tk = 2.0
for step in range(60):
    x = torch.randn(128, 3, device=device)
    with torch.no_grad():
        t_logp = F.log_softmax(teacher(x) / Tk, dim=-1)
    loss = kd(F.log_softmax(student(x) / Tk, dim=-1), t_logp) * Tk * Tk
    opt.zero_grad(); loss.backward(); opt.step()
print('kd %.4f' % loss.item())
assert loss.item() < 0.05
print('ok')
