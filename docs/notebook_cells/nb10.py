"""The cells of notebook 10_legacy_api (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


@notebook("10_legacy_api")
def _():
    return [
        md("""
# The legacy API (the oldest version of the note)

The first version of the note used typed constructors (`torch.cuda.FloatTensor`),
`get_device()`, `new()` and `type()`. pycuda_sem keeps them: the typed names are
factories that make ordinary tensors of one dtype.
"""),
        code(HEADER),
        md("The device example. Its `with torch.cuda.device(1):` part needs two GPUs, its last line three:"),
        code("""
x = torch.cuda.FloatTensor(1)
# x.get_device() == 0
y = torch.FloatTensor(1).cuda()
# y.get_device() == 0
print(x.get_device(), y.get_device(), x.type(), y.type())
"""),
        code("""
# needs-gpus: 3
with torch.cuda.device(1):
    # allocates a tensor on GPU 1
    a = torch.cuda.FloatTensor(1)
    # transfers a tensor from CPU to GPU 1
    b = torch.FloatTensor(1).cuda()
    # a.get_device() == b.get_device() == 1
    c = a + b
    # c.get_device() == 1
    z = x + y
    # z.get_device() == 0
    # even within a context, you can give a GPU id to the .cuda call
    d = torch.randn(2).cuda(2)
    # d.get_device() == 2
print(a.get_device(), b.get_device(), c.get_device(), z.get_device(), d.get_device())
"""),
        code("""
with torch.cuda.device(n_gpus - 1):
    a = torch.cuda.FloatTensor(1)
    b = torch.FloatTensor(1).cuda()
    c = a + b
    z = x + y
print("with cuda.device(%d): a, b, c on %d, %d, %d; z on %d" % (
    n_gpus - 1, a.get_device(), b.get_device(), c.get_device(), z.get_device()))
"""),
        md("The old device-agnostic flag (again with `parse_args([])`):"),
        code("""
import argparse
parser = argparse.ArgumentParser(description='PyTorch Example')
parser.add_argument('--disable-cuda', action='store_true',
                    help='Disable CUDA')
args = parser.parse_args([])
args.cuda = not args.disable_cuda and torch.cuda.is_available()

x = torch.Tensor(8, 42)
if args.cuda:
    x = x.cuda()
print(args.cuda, x.type(), x.shape)
"""),
        md("""
Casting with a legacy type. The note wraps the result in `Variable`;
`pycuda_sem.autograd.Variable(t)` returns `t.detach()`, as torch's does today, so the
note's line runs as written (`tests/test_grad_mode.py` runs it); the cast is shown:
"""),
        code("""
dtype = torch.cuda.FloatTensor
train_loader = [torch.DoubleTensor(2, 2).fill_(i) for i in range(2)]
for i, x in enumerate(train_loader):
    x = x.type(dtype)
    print(i, x.type(), isinstance(x, torch.cuda.FloatTensor))
"""),
        md("`new()` keeps type and device, as `new_*` does today:"),
        code("""
x_cpu = torch.FloatTensor(1)
x_gpu = torch.cuda.FloatTensor(1)
x_cpu_long = torch.LongTensor(1)
y_cpu = x_cpu.new(8, 10, 10).fill_(0.3)
y_gpu = x_gpu.new(x_gpu.size()).fill_(-5)
y_cpu_long = x_cpu_long.new([[1, 2, 3]])
print(y_cpu.type(), tuple(y_cpu.shape), "|", y_gpu.type(), y_gpu, "|", y_cpu_long)
"""),
        code("""
x_cpu = torch.FloatTensor(1)
x_gpu = torch.cuda.FloatTensor(1)
y_cpu = torch.ones_like(x_cpu)
y_gpu = torch.zeros_like(x_gpu)
print(y_cpu, y_gpu)
"""),
        md("""
The old pinned-memory text passes `async=True` to `cuda()`. `async` has been a Python
keyword since 3.7, so that line is a syntax error today; `non_blocking=True` is its
replacement:
"""),
        code("""
h = torch.FloatTensor(4).fill_(1).pin_memory()
g = h.cuda(non_blocking=True)
print(g)
"""),
    ]
