"""U-Net segmentation patterns: DoubleConv blocks (Conv2d, BatchNorm2d, ReLU), max-pool
down and ConvTranspose2d up, F.pad to match skip sizes, torch.cat skips, bilinear
F.interpolate, a Dice + BCEWithLogits loss, channels_last memory format, float16
autocast with GradScaler on the GPU, OneCycleLR, flips and rot90 as augmentation,
and IoU from logical_and / logical_or.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/unet_seg.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DoubleConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, mid_channels=None):
        mid_channels = mid_channels or out_channels
        super().__init__(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels), nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(inplace=True))


class Down(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    def __init__(self, in_channels, out_channels, bilinear=True):
        super().__init__()
        if bilinear:
            self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
            self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
        else:
            self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
            self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        return self.conv(torch.cat([x2, x1], dim=1))


class UNet(nn.Module):
    def __init__(self, n_channels=3, n_classes=1, bilinear=False, base=8):
        super().__init__()
        self.inc = DoubleConv(n_channels, base)
        self.down1 = Down(base, base * 2)
        self.down2 = Down(base * 2, base * 4)
        factor = 2 if bilinear else 1
        self.down3 = Down(base * 4, base * 8 // factor)
        self.up1 = Up(base * 8, base * 4 // factor, bilinear)
        self.up2 = Up(base * 4, base * 2 // factor, bilinear)
        self.up3 = Up(base * 2, base, bilinear)
        self.outc = nn.Conv2d(base, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x = self.up1(x4, x3)
        x = self.up2(x, x2)
        x = self.up3(x, x1)
        return self.outc(x)


def dice_loss(logits, target, eps=1e-6):
    p = torch.sigmoid(logits).flatten(1)
    t = target.flatten(1)
    inter = (p * t).sum(dim=1)
    return 1 - ((2 * inter + eps) / (p.sum(dim=1) + t.sum(dim=1) + eps)).mean()


def make_batch(n, size, gen, device):
    # bright discs on noise: the mask is the disc
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing='ij')
    cx = torch.randint(7, size - 7, (n, 1, 1), generator=gen)
    cy = torch.randint(7, size - 7, (n, 1, 1), generator=gen)
    r = torch.randint(4, 7, (n, 1, 1), generator=gen)
    mask = (((xx - cx) ** 2 + (yy - cy) ** 2) <= r ** 2).float().unsqueeze(1)
    img = torch.randn(n, 3, size, size, generator=gen) * 0.3 + mask * torch.tensor([1.0, 0.5, -0.5]).view(1, 3, 1, 1)
    return img.to(device), mask.to(device)


device = 'cuda' if torch.cuda.is_available() else 'cpu'
for bilinear in (False, True):
    # each variant from the same seeds: 30 steps from another start can land
    # on a poor mask (a second model drawn after the first once did)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = UNet(bilinear=bilinear).to(device).to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    steps = 30 if device == "cuda" else 20
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=steps)
    scaler = torch.cuda.amp.GradScaler(enabled=device == 'cuda') if bilinear else torch.amp.GradScaler(device, enabled=device == 'cuda')
    bce = nn.BCEWithLogitsLoss()
    xv, mv = make_batch(6, 24, gen, device)
    for step in range(steps):
        x, m = make_batch(6, 24, gen, device)
        if step % 2:
            x, m = torch.flip(x, dims=[3]), torch.flip(m, dims=[3])
        else:
            x, m = torch.rot90(x, 1, [2, 3]), torch.rot90(m, 1, [2, 3])
        x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast(device_type=device, dtype=torch.float16, enabled=device == 'cuda'):
            logits = model(x)
            loss = bce(logits, m) + dice_loss(logits.float(), m)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        sched.step()
    model.eval()
    with torch.no_grad():
        pred = torch.sigmoid(model(xv)) > 0.5
    inter = torch.logical_and(pred, mv.bool()).sum().item()
    union = torch.logical_or(pred, mv.bool()).sum().item()
    iou = inter / max(union, 1)
    print('bilinear' if bilinear else 'transposed', 'loss %.3f iou %.3f' % (loss.item(), iou), tuple(logits.shape))
    assert logits.shape == (6, 1, 24, 24) and iou > 0.5, iou
print(F.interpolate(torch.arange(4.).view(1, 1, 2, 2), scale_factor=2, mode='bilinear', align_corners=True)[0, 0, 0].tolist())
print('ok')
