"""pycuda_sem.multiprocessing.spawn and start_processes (CPU tests): args,
a raising child's traceback in the parent, exit codes and signals, join
with a timeout, and the rule that a child forked after CUDA was used cannot
use CUDA."""
import os
import signal
import sys
import time

import pytest

import pycuda_sem.multiprocessing as mp


def _write_rank(i, directory, word):
    with open(os.path.join(directory, "r%d" % i), "w") as f:
        f.write("%s %d %s" % (word, i, os.environ.get("NCCL_NVLS_ENABLE")))


def test_spawn_passes_index_and_args(tmp_path, monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    assert mp.spawn(_write_rank, args=(str(tmp_path), "hello"), nprocs=3) is None
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == [
        "hello 0 0", "hello 1 0", "hello 2 0"]


def _raise_in_one(i):
    if i == 1:
        raise ValueError("boom in child %d" % i)
    time.sleep(30)  # stopped by the parent once child 1 fails


def test_raising_child_gives_its_traceback():
    start = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(_raise_in_one, nprocs=3)
    assert time.monotonic() - start < 25
    msg = str(info.value)
    assert "-- Process 1 terminated with the following error:" in msg
    assert "Traceback (most recent call last)" in msg and "ValueError: boom in child 1" in msg
    assert info.value.error_index == 1 and info.value.pid > 0


def _exit_with(i, code):
    sys.exit(code)


def _kill_self(i):
    os.kill(os.getpid(), signal.SIGKILL)


def test_exit_code_and_signal():
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as e:
        mp.spawn(_exit_with, args=(3,), nprocs=1)
    assert e.value.exit_code == 3 and e.value.signal_name is None
    with pytest.raises(mp.ProcessExitedException, match="terminated with signal SIGKILL") as e:
        mp.spawn(_kill_self, nprocs=1)
    assert e.value.exit_code == -signal.SIGKILL and e.value.signal_name == "SIGKILL"


def _sleep(i, seconds):
    time.sleep(seconds)


def test_join_false_and_timeout():
    ctx = mp.spawn(_sleep, args=(1.0,), nprocs=2, join=False)
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 2
    assert ctx.join(timeout=0.01) is False
    deadline = time.monotonic() + 30
    while not ctx.join(timeout=1):
        assert time.monotonic() < deadline


def test_start_method_warning():
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(_sleep, args=(0,), nprocs=1, start_method="fork")


def _cuda_in_forked_grandchild(i):
    # In a throwaway child: marking CUDA as used cannot be undone.
    import multiprocessing

    import pycuda_sem
    assert not pycuda_sem.cuda._is_in_bad_fork()
    pycuda_sem._C._mark_cuda_used_for_tests()
    q = multiprocessing.get_context("fork").SimpleQueue()

    def grandchild():
        try:
            pycuda_sem.cuda.init()
            q.put((pycuda_sem.cuda._is_in_bad_fork(), "no error"))
        except RuntimeError as e:
            q.put((pycuda_sem.cuda._is_in_bad_fork(), str(e)))

    p = multiprocessing.get_context("fork").Process(target=grandchild)
    p.start()
    bad, msg = q.get()
    p.join()
    assert bad, msg
    assert msg.startswith("Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                          "multiprocessing, you must use the 'spawn' start method"), msg


def test_fork_after_cuda_is_a_clear_error():
    mp.spawn(_cuda_in_forked_grandchild, nprocs=1)
