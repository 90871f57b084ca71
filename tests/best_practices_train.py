"""The CUDA semantics note's best practices as one training script, written as
a PyTorch user writes it (only the import differs): argparse device selection
with --disable-cuda, a tensor made on args.device, `Network().to(device=
args.device)`, a module that makes its initial hidden state with `new_zeros`
inside forward (the note's device-agnostic advice), a DataLoader that pins its
batches when CUDA is in use and `non_blocking=True` copies to the device.
The data set is synthetic: 20 features, 4 classes from a fixed linear teacher.

Run it: `python tests/best_practices_train.py [--disable-cuda] [--epochs N]
[--num-workers N]`; tests/test_best_practices_training.py imports `main`.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pycuda_sem as torch  # noqa: E402
from pycuda_sem import nn  # noqa: E402
from pycuda_sem.utils.data import DataLoader, TensorDataset  # noqa: E402

FEATURES, HIDDEN, CLASSES = 20, 64, 4


class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATURES, HIDDEN)
        self.rec = nn.Linear(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        # a new tensor made during forward: new_zeros keeps x's device and dtype
        h0 = x.new_zeros(x.shape[0], HIDDEN)
        h = torch.tanh(self.inp(x) + self.rec(h0))
        return self.out(h)


def synthetic_data(n=2048, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, FEATURES, generator=g)
    teacher = torch.randn(FEATURES, CLASSES, generator=g)
    return TensorDataset(x, (x @ teacher).argmax(dim=1))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='PyTorch Example')
    parser.add_argument('--disable-cuda', action='store_true',
                        help='Disable CUDA')
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--num-workers', type=int, default=0)
    args = parser.parse_args(argv)
    args.device = None
    if not args.disable_cuda and torch.cuda.is_available():
        args.device = torch.device('cuda')
    else:
        args.device = torch.device('cpu')
    return args


def main(argv=None):
    """Trains; returns (args, mean loss per epoch, accuracy on the training
    set, facts seen along the way for the tests)."""
    args = parse_args(argv)
    use_cuda = args.device.type == 'cuda'
    torch.manual_seed(0)

    x = torch.empty((8, 42), device=args.device)
    net = Network().to(device=args.device)

    kwargs = {'num_workers': args.num_workers, 'pin_memory': use_cuda}
    train_loader = DataLoader(synthetic_data(), batch_size=64, shuffle=True,
                              generator=torch.Generator().manual_seed(1), **kwargs)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    seen = {'empty_device': x.device, 'param_devices': {p.device for p in net.parameters()},
            'pinned': set(), 'batch_devices': set()}

    epoch_losses = []
    for epoch in range(args.epochs):
        net.train()
        total, count = 0.0, 0
        for i, (data, target) in enumerate(train_loader):
            seen['pinned'].add(data.is_pinned())
            data = data.to(args.device, non_blocking=True)
            target = target.to(args.device, non_blocking=True)
            seen['batch_devices'].add(data.device)
            optimizer.zero_grad()
            loss = loss_fn(net(data), target)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(target)
            count += len(target)
        epoch_losses.append(total / count)
        print('epoch %d: mean loss %.4f' % (epoch, epoch_losses[-1]))

    net.eval()
    with torch.no_grad():
        data, target = train_loader.dataset.tensors
        pred = net(data.to(args.device)).argmax(dim=1).cpu()
        accuracy = (pred == target).float().mean().item()
    print('device %s, training accuracy %.3f' % (args.device, accuracy))
    return args, epoch_losses, accuracy, seen


if __name__ == '__main__':
    main()
