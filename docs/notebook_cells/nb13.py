"""The cells of notebook 13_distributed (written by docs/make_notebooks.py): the
note's recommendation, DistributedDataParallel with one process per GPU started
by the launcher, run for real over NCCL."""
from notebook_cells.common import md, code, HEADER, notebook

_SCRIPT = '''
import os, sys
import pycuda_sem as torch
import pycuda_sem.distributed as dist
from pycuda_sem import nn
from pycuda_sem.nn.parallel import DistributedDataParallel as DDP
from pycuda_sem.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dev = torch.device("cuda", torch.cuda.current_device())

# a collective first: every rank adds its rank + 1
t = torch.full((4,), float(rank + 1), device=dev)
dist.all_reduce(t)
print("rank %d of %d on %s: all_reduce(rank + 1) = %s" % (rank, world, dev, t.tolist()), flush=True)

g = torch.Generator().manual_seed(0)
X = torch.randn(4096, 32, generator=g)
Y = (X @ torch.randn(32, 4, generator=g)).argmax(dim=1)
data = TensorDataset(X, Y)
sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=1)
loader = DataLoader(data, batch_size=64, sampler=sampler, pin_memory=True)

torch.manual_seed(rank)        # different initial weights on purpose:
model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 4)).to(dev)
ddp = DDP(model, device_ids=[dev.index])   # rank 0's weights are broadcast here
opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(4):
    sampler.set_epoch(epoch)
    total = torch.zeros((), device=dev)
    for xb, yb in loader:
        xb, yb = xb.to(dev, non_blocking=True), yb.to(dev, non_blocking=True)
        opt.zero_grad()
        loss = loss_fn(ddp(xb), yb)
        loss.backward()            # gradients are averaged across ranks, bucket by bucket
        opt.step()
        total += loss.detach()
    dist.all_reduce(total, op=dist.ReduceOp.AVG)
    if rank == 0:
        print("epoch %d  mean loss over all ranks %.4f" % (epoch + 1, total.item() / len(loader)), flush=True)

# every rank ends with the same weights
flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
both = [torch.empty_like(flat) for _ in range(world)]
dist.all_gather(both, flat)
if rank == 0:
    print("parameters identical on every rank:", all(torch.equal(both[0], b) for b in both[1:]), flush=True)
dist.destroy_process_group()
'''


@notebook("13_distributed")
def _():
    return [
        md("""
# DistributedDataParallel over NCCL, one process per GPU

The note closes its multi-GPU advice by recommending `DistributedDataParallel`, one
process per GPU, over `multiprocessing` or `DataParallel`. This notebook writes a
training script as one would for torch (only the import differs), starts it with the
launcher (`python -m pycuda_sem.distributed.run`, torchrun's counterpart) on every GPU
of this machine, and shows its output. The collectives run on NCCL; the launcher hands
each worker torchrun's variables (`RANK`, `LOCAL_RANK`, `WORLD_SIZE`, `MASTER_ADDR`,
...) and the whole environment, NCCL's settings included.
"""),
        code(HEADER),
        md("""
## The script

Each rank starts from different random weights on purpose: the wrapper broadcasts rank
0's parameters when it is built, so training starts from one model everywhere. The
`DistributedSampler` gives each rank its own share of every epoch. During `backward()`
the gradients are all-reduced (averaged) in buckets as they become ready, so that the
communication overlaps the rest of the backward pass.
"""),
        code('''
import subprocess, tempfile
script = r"""%s"""
path = os.path.join(tempfile.mkdtemp(), "train_ddp.py")
with open(path, "w") as f:
    f.write(script)
print(len(script.splitlines()), "lines written to", os.path.basename(path))
''' % _SCRIPT.strip("\n")),
        md("""
## Run it on every GPU

Two or more GPUs are needed; the launcher waits for all workers, and a failing rank
would stop the others and make it exit non-zero with that rank's error.
"""),
        code("""
# needs-gpus: 2
root = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
env = dict(os.environ, PYTHONPATH=root)
t0 = time.perf_counter()
run = subprocess.run([sys.executable, "-m", "pycuda_sem.distributed.run", "--standalone",
                      "--nproc-per-node", str(n_gpus), path],
                     env=env, capture_output=True, text=True, timeout=300)
print("\\n".join(sorted(run.stdout.splitlines(), key=lambda l: not l.startswith("rank"))))
print("launcher exit code", run.returncode, "| %.1f s" % (time.perf_counter() - t0))
if run.returncode:
    print(run.stderr[-3000:])
"""),
        md("""
Across machines the same script runs unchanged: start the launcher on each host with
`--nnodes`, `--node-rank`, and the first host's address and a free port in
`--master-addr`/`--master-port` (see `docs/api_training.md`, "The launcher").
"""),
    ]
