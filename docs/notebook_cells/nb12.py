"""The cells of notebook 12_training (written by docs/make_notebooks.py): the
note's best practices run end to end as a training job."""
from notebook_cells.common import md, code, HEADER, notebook


@notebook("12_training")
def _():
    return [
        md("""
# Training, end to end, the way the note recommends

The best-practices section of the note, put together as one training job: the device
chosen once from the command line (with `--disable-cuda`), the model moved with
`Network().to(device=args.device)`, a `DataLoader` that pins its batches, and copies to
the GPU with `non_blocking=True`. The data set is scikit-learn's bundled handwritten
digits (8x8 images, 10 classes) when scikit-learn is installed, and a synthetic
classification problem of the same shape otherwise. The loss curve is plotted with
matplotlib at the end.
"""),
        code(HEADER),
        md("""
## Device selection

The note's pattern: the argument parser decides, and everything after it uses
`args.device`. A notebook has no command line, so the parser is given an empty one.
"""),
        code("""
import argparse
parser = argparse.ArgumentParser(description='PyTorch Example')
parser.add_argument('--disable-cuda', action='store_true', help='Disable CUDA')
args = parser.parse_args([])
args.device = None
if not args.disable_cuda and torch.cuda.is_available():
    args.device = torch.device('cuda')
else:
    args.device = torch.device('cpu')
print("training on", args.device)
"""),
        md("## The data"),
        code("""
from pycuda_sem.utils.data import DataLoader, TensorDataset
try:
    from sklearn.datasets import load_digits
    digits = load_digits()
    features = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    labels = torch.tensor(digits.target, dtype=torch.int64)
    source = "scikit-learn digits"
except ImportError:
    g = torch.Generator().manual_seed(0)
    features = torch.rand(1797, 64, generator=g)
    labels = (features @ torch.randn(64, 10, generator=g)).argmax(dim=1)
    source = "synthetic (scikit-learn is not installed)"
perm = torch.randperm(len(labels), generator=torch.Generator().manual_seed(1))
train_idx, test_idx = perm[:1500], perm[1500:]
train = TensorDataset(features[train_idx], labels[train_idx])
x_test, y_test = features[test_idx].to(args.device), labels[test_idx].to(args.device)
loader = DataLoader(train, batch_size=64, shuffle=True, pin_memory=args.device.type == 'cuda',
                    generator=torch.Generator().manual_seed(2))
print(source, "| train", len(train), "| test", len(y_test), "| batches/epoch", len(loader))
"""),
        md("""
## The model

A small classifier. The hidden state it starts from is made inside `forward` with
`new_zeros`, so it lands on whatever device and dtype the input has, the note's advice
for device-agnostic code.
"""),
        code("""
from pycuda_sem import nn
torch.manual_seed(0)

class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(64, 128)
        self.rec = nn.Linear(128, 128)
        self.out = nn.Linear(128, 10)

    def forward(self, x):
        h0 = x.new_zeros(x.shape[0], 128)
        h = torch.relu(self.inp(x) + self.rec(h0))
        return self.out(h)

net = Network().to(device=args.device)
optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
loss_fn = nn.CrossEntropyLoss()
print(net)
print("parameters on", {str(p.device) for p in net.parameters()})
"""),
        md("""
## Training

Each batch comes out of the loader in pinned memory and goes to the GPU with
`non_blocking=True`: the copy is queued on the current stream and the host goes on to
queue the forward pass.
"""),
        code("""
losses, t0 = [], time.perf_counter()
pinned = set()
for epoch in range(15):
    total = 0.0
    for xb, yb in loader:
        pinned.add(xb.is_pinned())
        xb = xb.to(args.device, non_blocking=True)
        yb = yb.to(args.device, non_blocking=True)
        optimizer.zero_grad()
        loss = loss_fn(net(xb), yb)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        total += losses[-1]
    if epoch % 3 == 2:
        print("epoch %2d  mean loss %.4f" % (epoch + 1, total / len(loader)))
print("batches pinned:", pinned, "| %.2f s for %d steps" % (time.perf_counter() - t0, len(losses)))
with torch.no_grad():
    accuracy = (net(x_test).argmax(dim=1) == y_test).float().mean().item()
print("held-out accuracy: %.3f" % accuracy)
"""),
        md("## The loss curve"),
        code("""
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.plot(losses, lw=0.8)
    ax.set_xlabel("step"); ax.set_ylabel("cross-entropy loss"); ax.set_yscale("log")
    ax.set_title("training loss on %s" % args.device)
    fig.tight_layout()
else:
    # no matplotlib here: the same curve as text, one row per 10 % of the steps
    step = max(1, len(losses) // 10)
    for i in range(0, len(losses), step):
        chunk = losses[i:i + step]
        v = sum(chunk) / len(chunk)
        print("step %4d  %.4f  %s" % (i, v, "#" * int(40 * v / max(losses))))
    fig = None
fig
"""),
        md("""
Every tensor of the run is gone once the names are deleted. What stays allocated is
the cuBLAS workspace (32 MiB on Hopper, 4 MiB before it): the first matrix product took
it from the caching allocator, and it lives as long as its cuBLAS handle, as in torch.
"""),
        code("""
del net, optimizer, loss, xb, yb, x_test, y_test
torch.cuda.synchronize()
print("memory_allocated after the run:", torch.cuda.memory_allocated(), "bytes")
"""),
    ]
