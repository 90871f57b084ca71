"""Collectives and DDP over NCCL: pycuda_sem.distributed next to
torch.distributed, in the same processes, in one run.

    python3 benchmarks/bench_dist.py --nproc 2 [--quick]

One process per GPU (stdlib multiprocessing, spawn). Each imports torch FIRST
(importing pycuda_sem before torch crashes torch's import on the GPU machine),
makes a torch NCCL group and a pycuda_sem NCCL group, and times, alternating
the two libraries at each size:
- all_reduce bus bandwidth, 8 B .. 1 GiB, float32 and bfloat16
  (busbw = bytes * 2(n-1)/n / time, nccl-tests' definition);
- all_gather_into_tensor, reduce_scatter_tensor (busbw = total * (n-1)/n /
  time) and broadcast (bytes / time) at 256 MiB;
- a DistributedDataParallel training step of an MLP (6 x Linear(4096, 4096),
  about 10^8 parameters, batch 64 a rank, SGD), and the same step without DDP
  on one GPU, for the weak-scaling efficiency of each library.
Times are host loops of synchronous collectives closed by a synchronize,
median of 5 repetitions. Rank 0 prints the table and writes
benchmarks/results/bench_dist.json.
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _timeit(fn, sync, iters, reps=5, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / iters)
    return statistics.median(times)


def _iters(nbytes):
    return max(3, min(200, int(2e9 / max(nbytes, 1) / 4)))


class _Lib:
    """The same calls on torch and on pycuda_sem."""

    def __init__(self, mod, rank):
        self.mod, self.dist = mod, mod.distributed
        self.dev = mod.device("cuda", rank)

    def sync(self):
        self.mod.cuda.synchronize()


def _collectives(libs, n, quick):
    rows = []
    sizes = [8 * 8 ** k for k in range(11)] if not quick else [8, 8 * 1024, 8 << 20]
    sizes = [s for s in sizes if s <= (1 << 30)]  # 8 B .. 1 GiB (8 * 8**9 = 2**30)
    for dtype_name in ("float32", "bfloat16"):
        for nbytes in sizes:
            row = {"op": "all_reduce", "dtype": dtype_name, "bytes": nbytes}
            for name, lib in libs.items():
                dt = getattr(lib.mod, dtype_name)
                t = lib.mod.ones(max(1, nbytes // (4 if dtype_name == "float32" else 2)),
                                 dtype=dt, device=lib.dev)
                sec = _timeit(lambda: lib.dist.all_reduce(t), lib.sync, _iters(nbytes))
                row[name + "_us"] = sec * 1e6
                row[name + "_busbw"] = nbytes * 2 * (n - 1) / n / sec / 1e9
                del t
            rows.append(row)
    nbytes = (256 << 20) if not quick else (16 << 20)
    for op in ("all_gather_into_tensor", "reduce_scatter_tensor", "broadcast"):
        row = {"op": op, "dtype": "float32", "bytes": nbytes}
        for name, lib in libs.items():
            big = lib.mod.ones(nbytes // 4, device=lib.dev)
            part = lib.mod.ones(nbytes // 4 // n, device=lib.dev)
            if op == "all_gather_into_tensor":
                fn = lambda: lib.dist.all_gather_into_tensor(big, part)  # noqa: E731
            elif op == "reduce_scatter_tensor":
                fn = lambda: lib.dist.reduce_scatter_tensor(part, big)  # noqa: E731
            else:
                fn = lambda: lib.dist.broadcast(big, 0)  # noqa: E731
            sec = _timeit(fn, lib.sync, _iters(nbytes))
            row[name + "_us"] = sec * 1e6
            factor = 1.0 if op == "broadcast" else (n - 1) / n
            row[name + "_busbw"] = nbytes * factor / sec / 1e9
            del big, part
        rows.append(row)
    return rows


def _ddp(libs, rank, quick):
    width, depth, batch = (4096, 6, 64) if not quick else (1024, 4, 64)
    row = {"op": "ddp_mlp_step", "dtype": "float32", "bytes": 0}
    for name, lib in libs.items():
        m = lib.mod
        m.manual_seed(0)
        layers = []
        for _ in range(depth):
            layers += [m.nn.Linear(width, width), m.nn.ReLU()]
        model = m.nn.Sequential(*layers[:-1]).to(lib.dev)
        row["params"] = sum(p.numel() for p in model.parameters())
        x = m.randn(batch, width, device=lib.dev)
        y = m.randn(batch, width, device=lib.dev)

        def stepper(net, opt):
            def step():
                opt.zero_grad()
                m.nn.functional.mse_loss(net(x), y).backward()
                opt.step()
            return step
        # the same step without DDP on each rank's GPU: the one-GPU time that
        # weak scaling (same batch a rank) is measured against
        opt = m.optim.SGD(model.parameters(), lr=1e-4)
        row[name + "_single_us"] = _timeit(stepper(model, opt), lib.sync,
                                           5 if not quick else 3) * 1e6
        ddp = m.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
        opt = m.optim.SGD(ddp.parameters(), lr=1e-4)
        row[name + "_us"] = _timeit(stepper(ddp, opt), lib.sync, 5 if not quick else 3) * 1e6
        del ddp, opt, model
    return [row]


def _worker(rank, n, ports, quick, out):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    import torch  # FIRST: see the docstring
    sys.path.insert(0, ROOT)
    import pycuda_sem
    from datetime import timedelta
    torch.cuda.set_device(rank)
    pycuda_sem.cuda.set_device(rank)
    torch.distributed.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % ports[0],
                                         rank=rank, world_size=n, timeout=timedelta(minutes=5),
                                         device_id=torch.device("cuda", rank))
    pycuda_sem.distributed.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % ports[1],
                                              rank=rank, world_size=n,
                                              timeout=timedelta(minutes=5))
    libs = {"pycuda_sem": _Lib(pycuda_sem, rank), "torch": _Lib(torch, rank)}
    rows = _collectives(libs, n, quick) + _ddp(libs, rank, quick)
    if rank == 0:
        with open(out, "w") as f:
            json.dump(rows, f)
    pycuda_sem.distributed.barrier()
    torch.distributed.barrier()
    pycuda_sem.distributed.destroy_process_group()
    torch.distributed.destroy_process_group()


def _fmt_bytes(b):
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << k:
            return "%g %s" % (b / (1 << k), unit)
    return "%d B" % b


def _print(rows, n):
    print("NCCL collectives and DDP, %d GPUs: pycuda_sem vs torch (same processes)" % n)
    print("%-24s %-9s %9s %12s %12s %10s %10s %7s" % ("op", "dtype", "size", "pcs us",
                                                     "torch us", "pcs GB/s", "torch GB/s",
                                                     "ratio"))
    for r in rows:
        ratio = r["torch_us"] / r["pycuda_sem_us"]  # > 1: pycuda_sem faster
        size = _fmt_bytes(r["bytes"]) if r["bytes"] else "%.0fM par" % (r["params"] / 1e6)
        print("%-24s %-9s %9s %12.1f %12.1f %10s %10s %7.3f" % (
            r["op"], r["dtype"], size, r["pycuda_sem_us"], r["torch_us"],
            "%.2f" % r["pycuda_sem_busbw"] if "pycuda_sem_busbw" in r else "-",
            "%.2f" % r["torch_busbw"] if "torch_busbw" in r else "-", ratio))
    print("ratio = torch time / pycuda_sem time (>= 1: pycuda_sem as fast or faster)")
    for r in rows:
        if "torch_single_us" in r:
            print("DDP weak scaling, 1 -> %d GPUs (same batch a rank; efficiency = one-GPU step "
                  "time / DDP step time):" % n)
            for lib in ("pycuda_sem", "torch"):
                print("  %-10s 1 GPU %10.1f us   %d GPUs %10.1f us   efficiency %.3f" % (
                    lib, r[lib + "_single_us"], n, r[lib + "_us"],
                    r[lib + "_single_us"] / r[lib + "_us"]))


NEEDS_GPUS = 2  # make bench (run.py) runs it with --nproc = every GPU, when there are 2+


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="a few sizes, a small MLP")
    args = ap.parse_args()
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    out = os.path.join(HERE, "results", "bench_dist.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    ports = (_port(), _port())
    procs = [ctx.Process(target=_worker, args=(r, args.nproc, ports, args.quick, out))
             for r in range(args.nproc)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode for p in procs):
        print("bench_dist: a worker failed (exit codes %s)" % [p.exitcode for p in procs])
        return 1
    with open(out) as f:
        _print(json.load(f), args.nproc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
