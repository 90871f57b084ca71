"""CUDA tensors sent between processes (torch.multiprocessing's CUDA IPC,
pycuda_sem/multiprocessing/_cuda_ipc.py).

CPU part: the C entry points refuse what they must, and a receiver that
cannot map the memory releases the sender at once. GPU part (`cuda`): a
spawned child receives views of the parent's tensors through a Queue, sees
the values the parent wrote (after a long kernel: the event orders them),
writes into the shared memory, and counts none of it in its own allocator;
the parent's allocator statistics return to their baseline once the child
has released the memory and ipc_collect() ran."""
import os

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.multiprocessing as mp
from pycuda_sem import _C
from pycuda_sem.multiprocessing import _cuda_ipc


# ---- CPU: refusals ---------------------------------------------------------------------


def test_share_refuses_what_is_not_an_allocator_block():
    with pytest.raises(TypeError, match="expects a Tensor"):
        _C._cuda_ipc_share(3)
    with pytest.raises(RuntimeError, match="needs a CUDA tensor"):
        _C._cuda_ipc_share(torch.ones(3))


def test_open_and_storage_check_their_arguments():
    with pytest.raises((RuntimeError, ValueError)):
        _C._cuda_ipc_open(0, b"too short")
    with pytest.raises(TypeError):
        _C._cuda_ipc_open(0, "not bytes")
    with pytest.raises(ValueError, match="whole number"):
        _C._cuda_ipc_storage(0, -4, 0, None, torch.float32)
    with pytest.raises(ValueError, match="whole number of float32"):
        _C._cuda_ipc_storage(0, 6, 0, None, torch.float32)
    with pytest.raises(TypeError):
        _C._cuda_ipc_storage(0, 8, 0, None, "float32")
    with pytest.raises(RuntimeError):
        _C._cuda_ipc_storage(0, 8, 1 << 20, None, torch.float32)


def test_a_receiver_that_cannot_map_releases_the_sender(tmp_path):
    ack = tmp_path / "ack"
    ack.write_bytes(b"")
    with pytest.raises((RuntimeError, ValueError)):
        _cuda_ipc.rebuild_cuda_tensor(0, b"\0" * 64, 0, 16, b"\0" * 64, str(ack), torch.float32,
                                      (4,), (1,), 0, False)
    assert not ack.exists()


def test_ipc_collect_with_nothing_sent():
    assert _cuda_ipc.ipc_collect() == 0
    torch.cuda.ipc_collect()


# ---- GPU: a spawned receiver -----------------------------------------------------------


def _child(inbox, outbox):
    """Receives (a, b); reports what it saw and its own allocator's figure;
    writes a += 1 into the shared memory; drops them on request."""
    a, b = inbox.get()
    outbox.put(("got", a.cpu().numpy(), b.cpu().numpy(), a.is_cuda, tuple(a.stride()),
                torch.cuda.memory_allocated()))
    a.add_(1)
    torch.cuda.synchronize()
    outbox.put(("written",))
    assert inbox.get() == "drop"
    del a, b
    outbox.put(("dropped",))
    inbox.get()  # the parent says when to exit


@pytest.mark.cuda
def test_tensors_shared_with_a_spawned_process():
    ctx = mp.get_context("spawn")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_child, args=(inbox, outbox), daemon=True)
    p.start()
    try:
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        base = torch.zeros(4, 6, device="cuda")
        b = torch.arange(10, dtype=torch.int64, device="cuda")
        # a long kernel first: without the event the child would read zeros
        torch.cuda._sleep(200_000_000)
        base.copy_(torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6))
        a = base[1:, ::2]  # offset and strides travel too
        inbox.put((a, b))
        msg = outbox.get(timeout=120)
        assert msg[0] == "got", msg
        _, got_a, got_b, is_cuda, stride, child_allocated = msg
        expect = np.arange(24, dtype=np.float32).reshape(4, 6)[1:, ::2]
        assert is_cuda and stride == (6, 2)
        assert np.array_equal(got_a, expect) and np.array_equal(got_b, np.arange(10))
        assert child_allocated == 0  # mapped memory is not the child's allocator's
        assert outbox.get(timeout=120) == ("written",)
        assert np.array_equal(a.cpu().numpy(), expect + 1)  # one memory, two processes
        kept = torch.cuda.memory_allocated()
        del a, base, b
        torch.cuda.ipc_collect()
        assert torch.cuda.memory_allocated() == kept  # the child still holds them
        inbox.put("drop")
        assert outbox.get(timeout=120) == ("dropped",)
        torch.cuda.ipc_collect()
        assert torch.cuda.memory_allocated() == before
        inbox.put("exit")
        p.join(60)
        assert p.exitcode == 0
    finally:
        if p.is_alive():
            p.kill()
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(_cuda_ipc._PREFIX)]


@pytest.mark.cuda
def test_a_received_tensor_cannot_be_sent_on():
    t = torch.ones(4, device="cuda")
    handle, at, nbytes = _C._cuda_ipc_share(t)
    assert len(handle) == 64 and nbytes == 16 and at >= 0
    # in one process CUDA refuses to map its own handle, so the refusal of a
    # received storage is checked on a storage wrapped the same way
    flat = _C._cuda_ipc_storage(t.data_ptr(), nbytes, 0, t, torch.float32)
    assert flat.is_cuda and flat.dtype == torch.float32 and flat.numel() == 4
    assert torch.equal(flat, t)
    flat.record_stream(torch.cuda.Stream())  # memory the allocator does not own: nothing to do
    with pytest.raises(RuntimeError, match="send a clone"):
        _C._cuda_ipc_share(flat)
