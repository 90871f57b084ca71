"""The NCCL backend of pycuda_sem.distributed and DistributedDataParallel.

CPU part (any machine): the loader's errors, the C communicator's argument
checks without NCCL, DDP refusing what torch refuses. Multi-GPU part
(marked multigpu: two GPUs and NCCL): two spawned processes check every
collective against NumPy, the stream semantics, DDP against single-process
training, and that a dead peer makes the other rank fail within the
group's timeout. The worker bodies are in nccl_workers.py.

    python3 -m pytest -q -m multigpu tests/test_dist_nccl.py
"""
import os
import subprocess
import sys

import pytest

import pycuda_sem
import pycuda_sem.distributed as dist
import pycuda_sem.multiprocessing as mp
from pycuda_sem import _C
from pycuda_sem.distributed import _backend
from dist_helpers import free_port

import nccl_workers


def _needs_nccl():
    if not dist.is_nccl_available():
        pytest.skip("NCCL (libnccl.so.2) cannot be loaded here")


# ---- CPU: loader, errors, DDP's refusals --------------------------------------------------------

def _fresh(code):
    """Runs `code` in a new interpreter (NCCL not loaded yet there)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                          timeout=120)


def test_nccl_load_reports_every_path():
    r = _fresh("import pycuda_sem._C as C\n"
               "try:\n    C._nccl_load(['/nonexistent/a.so', '/nonexistent/b.so'])\n"
               "except RuntimeError as e:\n    print(e)\n"
               "try:\n    C._nccl_version()\n"
               "except RuntimeError as e:\n    print(e)\n"
               "for bad in (5, ['/nonexistent/a.so', 3]):\n"
               "    try:\n        C._nccl_load(bad)\n"
               "    except TypeError as e:\n        print('TypeError', e)\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "the NCCL backend needs libnccl.so.2" in lines[0]
    assert "/nonexistent/a.so" in lines[0] and "/nonexistent/b.so" in lines[0]
    assert "NCCL is not loaded" in lines[1]
    assert lines[2].startswith("TypeError") and lines[3].startswith("TypeError")


def test_candidates_end_with_the_soname():
    cands = _backend._nccl_candidates()
    assert "libnccl.so.2" in cands
    assert all(c == "libnccl.so.2" or os.path.isfile(c) for c in cands)


def test_unique_id_and_comm_argument_checks():
    r = _fresh("import pycuda_sem._C as C\n"
               "try:\n    C._nccl_unique_id()\n"
               "except RuntimeError as e:\n    print(e)\n")
    assert "NCCL is not loaded" in r.stdout, (r.stdout, r.stderr)
    with pytest.raises(ValueError, match="128 bytes"):
        _C._NcclComm(b"short", 2, 0, 0)
    with pytest.raises(ValueError, match="out of range"):
        _C._NcclComm(bytes(128), 2, 2, 0)


def test_reduce_op_checks():
    from pycuda_sem.distributed._nccl import _red
    assert _red(dist.ReduceOp.AVG) == 1
    with pytest.raises(ValueError, match="BAND with NCCL"):
        _red(dist.ReduceOp.BAND)


def test_ddp_needs_a_process_group():
    model = pycuda_sem.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        pycuda_sem.nn.parallel.DistributedDataParallel(model)


def test_ddp_refusals_with_a_group(monkeypatch):
    from dist_helpers import make_fake
    monkeypatch.setitem(dist._backends, "nccl", _backend._BackendPlugin(make_fake, ["cuda"]))
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        DDP = pycuda_sem.nn.parallel.DistributedDataParallel
        frozen = pycuda_sem.nn.Linear(2, 2).requires_grad_(False)
        with pytest.raises(RuntimeError, match="doesn't have any parameter that requires"):
            DDP(frozen)
        with pytest.raises(RuntimeError, match="needs the module on a CUDA device"):
            DDP(pycuda_sem.nn.Linear(2, 2))
    finally:
        dist.destroy_process_group()


def test_ddp_is_in_nn():
    assert pycuda_sem.nn.parallel.DistributedDataParallel is \
        pycuda_sem.nn.DistributedDataParallel


# ---- multi-GPU: two processes ------------------------------------------------------------------

@pytest.mark.multigpu
def test_collectives_match_numpy():
    _needs_nccl()
    mp.spawn(nccl_workers.collectives, args=(free_port(),), nprocs=nccl_workers.WORLD)


@pytest.mark.multigpu
def test_stream_semantics_and_allocator():
    _needs_nccl()
    mp.spawn(nccl_workers.streams, args=(free_port(),), nprocs=nccl_workers.WORLD)


@pytest.mark.multigpu
def test_ddp_matches_single_process():
    _needs_nccl()
    mp.spawn(nccl_workers.ddp, args=(free_port(),), nprocs=nccl_workers.WORLD)


@pytest.mark.multigpu
@pytest.mark.parametrize("mode", ["wait", "watchdog"])
def test_dead_peer_raises_within_timeout(tmp_path, mode):
    _needs_nccl()
    out = tmp_path / "rank0.txt"
    mp.spawn(nccl_workers.dead_peer, args=(free_port(), mode, str(out)),
             nprocs=nccl_workers.WORLD)
    elapsed, outcome = out.read_text().splitlines()[:2]
    assert outcome.startswith("RuntimeError") and "timeout" in outcome, outcome
    assert float(elapsed) < 9.0, elapsed  # the timeout is 3 s; a hang would never return
