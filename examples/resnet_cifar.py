"""Image-classifier training patterns: a small ResNet with BatchNorm and Kaiming init,
channels_last, a custom Dataset with collate_fn and WeightedRandomSampler, mixup,
label smoothing, SGD with Nesterov momentum and OneCycleLR, torch.compile, an EMA of
the weights through torch._foreach_lerp_, and a full checkpoint (model, optimizer,
scheduler) saved and restored.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/resnet_cifar.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import copy, os, tempfile
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader, WeightedRandomSampler

class BasicBlock(nn.Module):
    expansion = 1
    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))

class ResNet(nn.Module):
    def __init__(self, nb=(1, 1), num_classes=10):
        super().__init__()
        self.in_planes = 8
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = self._make(8, nb[0], 1)
        self.layer2 = self._make(16, nb[1], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.linear = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
    def _make(self, planes, n, stride):
        layers = []
        for s in [stride] + [1] * (n - 1):
            layers.append(BasicBlock(self.in_planes, planes, s))
            self.in_planes = planes
        return nn.Sequential(*layers)
    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer2(self.layer1(out))
        return self.linear(torch.flatten(self.avgpool(out), 1))

class Toy(Dataset):
    def __init__(self, n=96):
        g = torch.Generator().manual_seed(0)
        self.x = torch.rand(n, 3, 12, 12, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)
    def __len__(self):
        return len(self.y)
    def __getitem__(self, i):
        img = self.x[i]
        if torch.rand(1).item() < 0.5:
            img = torch.flip(img, dims=[2])
        return img, self.y[i].item()

def collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs), torch.tensor(ys)

torch.backends.cudnn.benchmark = True
torch.set_float32_matmul_precision('high')
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
ds = Toy()
weights = torch.ones(len(ds), dtype=torch.double)
sampler = WeightedRandomSampler(weights, num_samples=len(ds), replacement=True)
loader = DataLoader(ds, batch_size=32, sampler=sampler, collate_fn=collate, drop_last=True)
model = ResNet().to(device).to(memory_format=torch.channels_last)
ema = copy.deepcopy(model).eval()
for p in ema.parameters():
    p.requires_grad_(False)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
epochs = 2
sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, epochs=epochs, steps_per_epoch=len(loader))
cmodel = torch.compile(model)
for epoch in range(epochs):
    model.train()
    for x, y in loader:
        x = x.to(device, non_blocking=True).contiguous(memory_format=torch.channels_last)
        y = y.to(device, non_blocking=True)
        lam = float(np.random.beta(1.0, 1.0))
        perm = torch.randperm(x.size(0), device=device)
        xm = lam * x + (1 - lam) * x[perm]
        out = cmodel(xm)
        loss = lam * criterion(out, y) + (1 - lam) * criterion(out, y[perm])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        sched.step()
        with torch.no_grad():
            ema_p = list(ema.parameters()); mp = list(model.parameters())
            torch._foreach_lerp_(ema_p, mp, 0.01)
            for b_ema, b in zip(ema.buffers(), model.buffers()):
                b_ema.copy_(b)
    print(epoch, loss.item(), sched.get_last_lr()[0])
ckpt = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'sched': sched.state_dict(), 'epoch': epoch}
path = os.path.join(tempfile.mkdtemp(), 'ckpt.pth')
torch.save(ckpt, path)
ck = torch.load(path, map_location='cpu')
model.load_state_dict(ck['model']); optimizer.load_state_dict(ck['optimizer']); sched.load_state_dict(ck['sched'])
model.eval()
with torch.inference_mode():
    acc = (ema(ds.x.to(device)).argmax(1).cpu() == ds.y).float().mean()
print('acc', acc.item(), 'params', sum(p.numel() for p in model.parameters() if p.requires_grad))
print('ok')
