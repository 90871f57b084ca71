"""The cells of notebook 01_device_placement (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


@notebook("01_device_placement")
def _():
    return [
        md("""
# Device placement

The note's first section: `torch.cuda` tracks a *current device* per thread; a tensor
created with `device='cuda'` lands there, and operations run on the device of their
operands, whatever the current device is. Operations that mix devices are refused; only
copies (`copy_`, `to`, `cuda`) cross devices.
"""),
        code(HEADER),
        md("""
The note's example names `cuda:1` and `cuda:2`, so it runs unchanged only where three
or more GPUs are visible. The next cell is the note's code, verbatim; on a smaller
machine the runner skips it and says so.
"""),
        code("""
# needs-gpus: 3
cuda = torch.device('cuda')     # Default CUDA device
cuda0 = torch.device('cuda:0')
cuda2 = torch.device('cuda:2')  # GPU 2 (these are 0-indexed)

x = torch.tensor([1., 2.], device=cuda0)
# x.device is device(type='cuda', index=0)
y = torch.tensor([1., 2.]).cuda()
# y.device is device(type='cuda', index=0)

with torch.cuda.device(1):
    # allocates a tensor on GPU 1
    a = torch.tensor([1., 2.], device=cuda)

    # transfers a tensor from CPU to GPU 1
    b = torch.tensor([1., 2.]).cuda()
    # a.device and b.device are device(type='cuda', index=1)

    # You can also use ``Tensor.to`` to transfer a tensor:
    b2 = torch.tensor([1., 2.]).to(device=cuda)
    # b.device and b2.device are device(type='cuda', index=1)

    c = a + b
    # c.device is device(type='cuda', index=1)

    z = x + y
    # z.device is device(type='cuda', index=0)

    # even within a context, you can specify the device
    # (or give a GPU index to the .cuda call)
    d = torch.randn(2, device=cuda2)
    e = torch.randn(2).to(cuda2)
    f = torch.randn(2).cuda(cuda2)
    # d.device, e.device, and f.device are all device(type='cuda', index=2)
"""),
        md("""
The same code with the GPU numbers folded onto the GPUs this machine has: `1` becomes
`min(1, n-1)` and `2` becomes `min(2, n-1)`. With one GPU every index is 0, so the
example still shows the rules about the current device, just not a second device.
"""),
        code("""
one, two = min(1, n_gpus - 1), min(2, n_gpus - 1)
cuda = torch.device('cuda')
cuda0 = torch.device('cuda:0')
cuda2 = torch.device('cuda', two)

x = torch.tensor([1., 2.], device=cuda0)
y = torch.tensor([1., 2.]).cuda()
with torch.cuda.device(one):
    a = torch.tensor([1., 2.], device=cuda)
    b = torch.tensor([1., 2.]).cuda()
    b2 = torch.tensor([1., 2.]).to(device=cuda)
    c = a + b
    z = x + y
    d = torch.randn(2, device=cuda2)
    e = torch.randn(2).to(cuda2)
    f = torch.randn(2).cuda(cuda2)
    print("inside torch.cuda.device(%d): current_device() =" % one, torch.cuda.current_device())
print("after the block: current_device() =", torch.cuda.current_device())
"""),
        md("What the comments of the note claim, checked:"),
        code("""
for name in ("x", "y", "a", "b", "b2", "c", "z", "d", "e", "f"):
    print("%-3s %r" % (name, globals()[name].device))
"""),
        md("""
`z = x + y` ran inside `torch.cuda.device(1)` but its operands are on `cuda:0`, so the
result is on `cuda:0` too: the current device only decides where *new* tensors go.

Mixing devices in one operation is an error. With two GPUs the cell below adds a
`cuda:0` tensor to a `cuda:1` tensor; with one, mixing the GPU and the CPU shows the
same check.
"""),
        code("""
# needs-gpus: 2
try:
    torch.ones(2, device='cuda:0') + torch.ones(2, device='cuda:1')
except RuntimeError as err:
    print("RuntimeError:", err)
"""),
        code("""
try:
    torch.ones(2, device='cuda:0') + torch.ones(2)
except RuntimeError as err:
    print("RuntimeError:", err)
# a 0-dim CPU tensor or a Python number may join a CUDA op, as in PyTorch
print(torch.ones(2, device='cuda:0') + torch.tensor(3.), torch.ones(2, device='cuda') * 2)
"""),
        md("Copies are the exception: `to`, `cuda` and `copy_` move data between devices."),
        code("""
g = torch.arange(4.).to('cuda')
h = torch.empty(4)
h.copy_(g)
print(g.device, "->", h.device, h)
"""),
    ]
