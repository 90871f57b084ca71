"""The bodies of the multi-GPU NCCL tests (test_dist_nccl.py), run in
processes started by pycuda_sem.multiprocessing.spawn: each worker is rank
`rank` on cuda:<rank>, checks its results against NumPy references it
computes from every rank's (seeded) inputs, and raises on a mismatch (spawn
then raises in the test). WORLD is every visible GPU up to four (2 on an
nvidia-h200-x2, 4 on an -x4; CUDA_VISIBLE_DEVICES picks fewer)."""
import os
import time
from datetime import timedelta

import numpy as np

import pycuda_sem as torch
import pycuda_sem.distributed as dist

WORLD = max(2, min(torch.cuda.device_count(), 4))


def _init(rank, port, timeout=timedelta(seconds=60), world=None):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=world or WORLD, timeout=timeout)


def _data(r, shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed * 100 + r).standard_normal(shape).astype(dtype)


def _all(shape, dtype=np.float32, seed=0):
    return [_data(r, shape, dtype, seed) for r in range(WORLD)]


def _cuda(a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def _close(t, ref, rtol=1e-5, atol=1e-5):
    got = t.cpu().numpy()
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


RANK_SUM = WORLD * (WORLD + 1) / 2  # every rank contributing rank + 1


# ---- collectives -------------------------------------------------------------------------------

def _exchange(rank, to, frm, xs, shape):
    """One batch_isend_irecv: xs[rank] to `to`, xs[frm] from `frm`."""
    got = torch.empty(shape, device="cuda")
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, _cuda(xs[rank]), to),
                                    dist.P2POp(dist.irecv, got, frm)])
    for w in works:
        w.wait()
    _close(got, xs[frm])


def _pairs(rank, peer, xs, shape):
    """send/recv, batch_isend_irecv and isend/irecv between two ranks; the
    lower one sends first."""
    t = _cuda(xs[rank])
    if rank < peer:
        dist.send(t, dst=peer)
    else:
        got = torch.empty(shape, device="cuda")
        assert dist.recv(got, src=peer) == peer
        _close(got, xs[peer])
    _exchange(rank, peer, peer, xs, shape)
    got = torch.empty(shape, device="cuda")
    ws = [dist.isend(_cuda(xs[rank]), peer), dist.irecv(got, peer)] if rank < peer else \
        [dist.irecv(got, peer), dist.isend(_cuda(xs[rank]), peer)]
    for w in ws:
        w.wait()
    _close(got, xs[peer])


def collectives(rank, port):
    _init(rank, port)
    try:
        shape = (37, 5)
        xs = _all(shape)
        reds = {dist.ReduceOp.SUM: np.sum, dist.ReduceOp.AVG: np.mean, dist.ReduceOp.MAX: np.max,
                dist.ReduceOp.MIN: np.min, dist.ReduceOp.PRODUCT: np.prod}
        for op, fn in reds.items():
            t = _cuda(xs[rank])
            dist.all_reduce(t, op=op)
            _close(t, fn(np.stack(xs), axis=0))
        # async_op: a Work that the caller's stream waits on
        t = _cuda(xs[rank])
        w = dist.all_reduce(t, async_op=True)
        assert isinstance(w, dist.Work)
        w.wait()
        _close(t, np.sum(np.stack(xs), axis=0))
        torch.cuda.synchronize()
        assert w.is_completed() and w.is_success()
        assert w.result()[0] is t
        t = _cuda(xs[rank])
        out = torch.empty((WORLD * shape[0], shape[1]), device="cuda")
        works = [dist.broadcast(t, src=1, async_op=True),
                 dist.all_gather_into_tensor(out, _cuda(xs[rank]), async_op=True)]
        for w in works:
            w.wait()
        _close(t, xs[1])
        _close(out, np.concatenate(xs))
        # integers and bfloat16
        ints = [np.arange(10, dtype=np.int64) * (r + 1) for r in range(WORLD)]
        t = _cuda(ints[rank])
        dist.all_reduce(t)
        assert (t.cpu().numpy() == sum(ints)).all()
        t = _cuda(xs[rank]).to(torch.bfloat16)
        dist.all_reduce(t)
        _close(t.float(), np.sum(np.stack(xs), axis=0), rtol=3e-2, atol=3e-2)
        # broadcast and reduce
        for root in range(WORLD):
            t = _cuda(xs[rank])
            dist.broadcast(t, src=root)
            _close(t, xs[root])
            t = _cuda(xs[rank])
            dist.reduce(t, dst=root, op=dist.ReduceOp.SUM)
            if rank == root:
                _close(t, np.sum(np.stack(xs), axis=0))
        # gathers and reduce-scatter
        outs = [torch.empty(shape, device="cuda") for _ in range(WORLD)]
        dist.all_gather(outs, _cuda(xs[rank]))
        for r in range(WORLD):
            _close(outs[r], xs[r])
        out = torch.empty((WORLD * shape[0], shape[1]), device="cuda")
        dist.all_gather_into_tensor(out, _cuda(xs[rank]))
        _close(out, np.concatenate(xs))
        big = _all((WORLD * 6, 3), seed=1)
        out = torch.empty((6, 3), device="cuda")
        dist.reduce_scatter_tensor(out, _cuda(big[rank]))
        _close(out, np.sum(np.stack(big), axis=0)[rank * 6:(rank + 1) * 6])
        out = torch.empty((6, 3), device="cuda")
        dist.reduce_scatter_tensor(out, _cuda(big[rank]), op=dist.ReduceOp.AVG)
        _close(out, np.mean(np.stack(big), axis=0)[rank * 6:(rank + 1) * 6])
        # all_to_all_single, equal and uneven splits
        a2a = _all((WORLD * 4, 3), seed=2)
        out = torch.empty((WORLD * 4, 3), device="cuda")
        dist.all_to_all_single(out, _cuda(a2a[rank]))
        _close(out, np.concatenate([a2a[r][rank * 4:(rank + 1) * 4] for r in range(WORLD)]))
        # rank r sends in_splits[r][d] rows to rank d: uneven, some empty
        in_splits = [[(r + 2 * d) % 4 for d in range(WORLD)] for r in range(WORLD)]
        src = [_data(r, (sum(in_splits[r]), 3), seed=3) for r in range(WORLD)]
        out_rows = [in_splits[r][rank] for r in range(WORLD)]
        out = torch.empty((sum(out_rows), 3), device="cuda")
        dist.all_to_all_single(out, _cuda(src[rank]), output_split_sizes=out_rows,
                               input_split_sizes=in_splits[rank])
        ref = []
        for r in range(WORLD):
            off = sum(in_splits[r][:rank])
            ref.append(src[r][off:off + in_splits[r][rank]])
        _close(out, np.concatenate(ref))
        # point to point, in pairs (0, 1), (2, 3); a last odd rank sits out
        peer = rank ^ 1
        if peer < WORLD:
            _pairs(rank, peer, xs, shape)
        # a ring: everyone sends to the next rank and receives from the last
        _exchange(rank, (rank + 1) % WORLD, (rank - 1) % WORLD, xs, shape)
        # objects and the barrier
        objs = [{"rank": rank, "x": list(range(rank + 3))}, "s" * (rank + 1)]
        dist.broadcast_object_list(objs, src=1)
        assert objs == [{"rank": 1, "x": [0, 1, 2, 3]}, "ss"]
        gathered = [None] * WORLD
        dist.all_gather_object(gathered, ("hello", rank))
        assert gathered == [("hello", r) for r in range(WORLD)]
        dist.barrier()
        # a subgroup of ranks 0 and 1 has its own communicator; the others
        # are no members of it
        g = dist.new_group([0, 1])
        if rank < 2:
            t = torch.ones(3, device="cuda") * (rank + 1)
            dist.all_reduce(t, group=g)
            assert t.cpu().tolist() == [3.0, 3.0, 3.0]
        else:
            assert g is dist.GroupMember.NON_GROUP_MEMBER
        dist.barrier()
        # the errors torch gives
        for bad, exc in ((torch.ones(3), RuntimeError),
                         (torch.ones(4, 4, device="cuda").t(), ValueError)):
            try:
                dist.all_reduce(bad)
            except exc as e:
                assert "CUDA tensors" in str(e) or "contiguous" in str(e), e
            else:
                raise AssertionError("no error for %r" % (bad,))
    finally:
        dist.destroy_process_group()


# ---- stream semantics ----------------------------------------------------------------------------

def streams(rank, port):
    _init(rank, port)
    try:
        n = 1 << 20
        # the NCCL stream waits for the caller's stream: data written after a
        # long sleep on it must be what is reduced
        for _ in range(3):
            t = torch.zeros(n, device="cuda")
            torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time
            t.fill_(rank + 1.0)
            dist.all_reduce(t)
            assert t.min().item() == RANK_SUM and t.max().item() == RANK_SUM
        # on a side stream too; wait() orders the caller's stream after the result
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            t = torch.zeros(n, device="cuda")
            torch.cuda._sleep(200_000_000)
            t.fill_(rank + 1.0)
            w = dist.all_reduce(t, async_op=True)
            w.wait()
            t.mul_(2)
        s.synchronize()
        assert t.min().item() == 2 * RANK_SUM and t.max().item() == 2 * RANK_SUM
        # the caching allocator keeps an input in use by NCCL: freed at once,
        # its block must not come back while the collective waits behind a sleep
        out = torch.empty(WORLD * n, device="cuda")
        torch.cuda._sleep(400_000_000)
        inp = torch.full((n,), rank + 1.0, device="cuda")
        ptr = inp.data_ptr()
        w = dist.all_gather_into_tensor(out, inp, async_op=True)
        del inp
        stale = torch.full((n,), 99.0, device="cuda")
        assert stale.data_ptr() != ptr or w.is_completed()
        w.wait()
        got = out.cpu().numpy().reshape(WORLD, n)
        assert all((got[r] == r + 1.0).all() for r in range(WORLD))
    finally:
        dist.destroy_process_group()


# ---- DistributedDataParallel ---------------------------------------------------------------------

def _mlp(seed, unused=False):
    torch.manual_seed(seed)
    layers = [torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4)]
    m = torch.nn.Sequential(*layers)
    return _WithUnused(m) if unused else m


class _WithUnused(torch.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.extra = torch.nn.Linear(8, 8)  # never used by forward

    def forward(self, x):
        return self.body(x)


def _batch(seed, n=None):
    """A batch of 8 rows a rank."""
    n = n or 8 * WORLD
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, 8)).astype(np.float32),
            rng.standard_normal((n, 4)).astype(np.float32))


def ddp(rank, port):
    _init(rank, port)
    try:
        for bucket_cap_mb, as_view in ((25, False), (0.0005, False), (0.0005, True)):
            ref = _mlp(10).cuda()  # rank 0's initial module
            local = _mlp(rank + 10).cuda()  # different on each rank: DDP broadcasts rank 0's
            model = torch.nn.parallel.DistributedDataParallel(
                local, device_ids=[rank], bucket_cap_mb=bucket_cap_mb,
                gradient_as_bucket_view=as_view)
            for p, q in zip(model.module.parameters(), ref.parameters()):
                _close(p, q.detach().cpu().numpy(), rtol=0, atol=0)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
            for step in range(3):
                x, y = _batch(step)
                opt.zero_grad()
                xs, ys = _cuda(x[rank * 8:(rank + 1) * 8]), _cuda(y[rank * 8:(rank + 1) * 8])
                torch.nn.functional.mse_loss(model(xs), ys).backward()
                opt.step()
                ref_opt.zero_grad()
                torch.nn.functional.mse_loss(ref(_cuda(x)), _cuda(y)).backward()
                ref_opt.step()
            # float32 sums in another order over 3 steps: 1e-5 relative
            for p, q in zip(model.module.parameters(), ref.parameters()):
                _close(p, q.detach().cpu().numpy(), rtol=1e-5, atol=1e-5)
            assert list(model.state_dict())[0].startswith("module.")
        # no_sync: accumulate a micro-batch locally, average on the next backward
        ref = _mlp(1).cuda()
        model = torch.nn.parallel.DistributedDataParallel(_mlp(1).cuda(), device_ids=[rank])
        (xa, ya), (xb, yb) = _batch(100), _batch(101)
        sl = slice(rank * 8, (rank + 1) * 8)
        with model.no_sync():
            torch.nn.functional.mse_loss(model(_cuda(xa[sl])), _cuda(ya[sl])).backward()
        g_local = [p.grad.cpu().numpy().copy() for p in model.module.parameters()]
        torch.nn.functional.mse_loss(model(_cuda(xb[sl])), _cuda(yb[sl])).backward()
        torch.nn.functional.mse_loss(ref(_cuda(xa)), _cuda(ya)).backward()
        torch.nn.functional.mse_loss(ref(_cuda(xb)), _cuda(yb)).backward()
        for p, q in zip(model.module.parameters(), ref.parameters()):
            _close(p.grad, q.grad.cpu().numpy(), rtol=1e-5, atol=1e-5)
        ref_a = _mlp(1).cuda()
        torch.nn.functional.mse_loss(ref_a(_cuda(xa[sl])), _cuda(ya[sl])).backward()
        for g, q in zip(g_local, ref_a.parameters()):  # no_sync did not communicate
            np.testing.assert_allclose(g, q.grad.cpu().numpy(), rtol=1e-5, atol=1e-5)
        # find_unused_parameters: a parameter outside the graph does not block
        model = torch.nn.parallel.DistributedDataParallel(_mlp(2, unused=True).cuda(),
                                                          device_ids=[rank],
                                                          find_unused_parameters=True)
        for step in range(2):
            model.zero_grad()
            torch.nn.functional.mse_loss(model(_cuda(xa[sl])), _cuda(ya[sl])).backward()
        assert model.module.body[0].weight.grad is not None
        # without it, the unfinished reduction is reported by the next forward
        model = torch.nn.parallel.DistributedDataParallel(_mlp(2, unused=True).cuda(),
                                                          device_ids=[rank])
        torch.nn.functional.mse_loss(model(_cuda(xa[sl])), _cuda(ya[sl])).backward()
        try:
            model(_cuda(xa[sl]))
        except RuntimeError as e:
            assert "Expected to have finished reduction" in str(e)
        else:
            raise AssertionError("no error for an unused parameter")
        torch.cuda.synchronize()
    finally:
        dist.destroy_process_group()


# ---- a peer that dies --------------------------------------------------------------------------

def dead_peer(rank, port, mode, result_path):
    """Rank 1 leaves after the first collective; rank 0's next one must fail
    within the group's timeout (5 s), not hang. mode 'wait': Work.wait(timeout)
    blocks the host; mode 'watchdog': a plain synchronize, the watchdog aborts.
    (5 s, not less: the rendezvous shares the timeout, and both processes
    must start within it.)"""
    _init(rank, port, timeout=timedelta(seconds=5), world=2)
    t = torch.ones(1024, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    if rank == 1:
        os._exit(0)
    start = time.monotonic()
    outcome = "no error"
    try:
        if mode == "wait":
            w = dist.all_reduce(t, async_op=True)
            w.wait(timeout=timedelta(seconds=5))
        else:
            dist.all_reduce(t)
            torch.cuda.synchronize()
            time.sleep(10)  # the watchdog's exception arrives at a bytecode
    except RuntimeError as e:
        outcome = "RuntimeError: %s" % e
    with open(result_path, "w") as f:
        f.write("%.2f\n%s\n" % (time.monotonic() - start, outcome))
    os._exit(0)  # the communicator is aborted; skip the teardown
