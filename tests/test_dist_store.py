"""torch.distributed stores: TCPStore and FileStore shared by 3 spawned
processes, PrefixStore and HashStore, and the timeouts (CPU tests)."""
import os
import time
from datetime import timedelta

import pytest

import pycuda_sem.distributed as dist
import pycuda_sem.multiprocessing as mp
from dist_helpers import free_port

WORLD = 3


def _open(kind, arg, rank):
    if kind == "tcp":
        return dist.TCPStore("127.0.0.1", arg, WORLD, rank == 0, timedelta(seconds=30))
    store = dist.FileStore(arg, WORLD)
    store.set_timeout(timedelta(seconds=30))
    return store


def _store_worker(rank, kind, arg):
    store = _open(kind, arg, rank)
    store.set("key%d" % rank, "value%d" % rank)
    total = store.add("counter", rank + 1)
    assert 1 <= total <= 6
    store.wait(["key%d" % r for r in range(WORLD)])
    assert [store.get("key%d" % r) for r in range(WORLD)] == [b"value0", b"value1", b"value2"]
    # Exactly one rank wins the race to set "winner"; everyone sees the winner.
    winner = store.compare_set("winner", "", str(rank))
    assert store.get("winner") == winner
    assert store.compare_set("winner", "wrong", "x") == winner
    store.set("ready%d" % rank, b"")
    store.wait(["ready%d" % r for r in range(WORLD)])
    assert store.add("counter", 0) == 6
    if rank == 1:
        store.set_timeout(timedelta(milliseconds=300))
        start = time.monotonic()
        with pytest.raises(dist.DistStoreError, match="wait timeout after 300ms"):
            store.get("never")
        with pytest.raises(dist.DistStoreError, match="keys: never"):
            store.wait(["never"], timedelta(milliseconds=100))
        assert time.monotonic() - start < 5
        store.set_timeout(timedelta(seconds=30))
    store.set("checked%d" % rank, b"")
    store.wait(["checked%d" % r for r in range(WORLD)])
    if rank == 0:
        assert store.delete_key("key0") is True
        assert store.delete_key("key0") is False
        assert not store.check(["key0"]) and store.check(["key1", "key2"])
        store.set("deleted", b"")
    store.wait(["deleted"])
    assert not store.check(["key0"])
    # Rank 0 holds the TCPStore server: it leaves last.
    store.set("done%d" % rank, b"")
    if rank == 0:
        store.wait(["done%d" % r for r in range(WORLD)])


def test_tcpstore_across_processes():
    mp.spawn(_store_worker, args=("tcp", free_port()), nprocs=WORLD)


def test_filestore_across_processes(tmp_path):
    path = str(tmp_path / "store")
    mp.spawn(_store_worker, args=("file", path), nprocs=WORLD)
    assert not os.path.exists(path)  # the last FileStore removed its file


def test_tcpstore_in_one_process():
    server = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=5))
    assert server.port > 0 and server.host == "127.0.0.1"
    client = dist.TCPStore("127.0.0.1", server.port, is_master=False,
                           timeout=timedelta(seconds=5))
    client.set("a", b"\x00\xffbinary")
    assert server.get("a") == b"\x00\xffbinary"
    assert client.add("n", 5) == 5 and server.add("n", -2) == 3
    assert server.get("n") == b"3"
    client.append("a", "!")
    assert server.get("a") == b"\x00\xffbinary!"
    assert client.multi_get(["a", "n"]) == [b"\x00\xffbinary!", b"3"]
    assert server.num_keys() == 2
    assert isinstance(dist.DistStoreError("x"), RuntimeError)
    assert server.timeout == timedelta(seconds=5)


def test_compare_set_rules():
    store = dist.HashStore()
    assert store.compare_set("k", "x", "y") == b"x"  # missing key, expected not empty: unchanged
    assert not store.check(["k"])
    assert store.compare_set("k", "", "first") == b"first"
    assert store.compare_set("k", "first", "second") == b"second"
    assert store.compare_set("k", "nope", "third") == b"second"


def test_tcpstore_timeouts():
    port = free_port()
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="waiting for clients. 1/2 clients joined"):
        dist.TCPStore("127.0.0.1", port, 2, True, timedelta(milliseconds=300))
    with pytest.raises(dist.DistNetworkError):
        dist.TCPStore("127.0.0.1", free_port(), is_master=False,
                      timeout=timedelta(milliseconds=300))
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(milliseconds=200))
    with pytest.raises(dist.DistStoreError, match="wait timeout after 200ms"):
        store.get("missing")
    assert time.monotonic() - start < 10


def test_prefix_store():
    base = dist.HashStore()
    a, b = dist.PrefixStore("a", base), dist.PrefixStore("b", base)
    a.set("k", "1")
    b.set("k", "2")
    assert a.get("k") == b"1" and b.get("k") == b"2"
    assert base.get("a/k") == b"1" and a.underlying_store is base
    assert a.add("n", 2) == 2 and base.get("a/n") == b"2"
    assert a.check(["k"]) and not a.check(["other"])
    assert a.delete_key("k") and not base.check(["a/k"]) and b.check(["k"])
    nested = dist.PrefixStore("inner", a)
    nested.set("x", "y")
    assert base.get("a/inner/x") == b"y"
    with pytest.raises(dist.DistStoreError):
        a.wait(["absent"], timedelta(milliseconds=50))


def test_hash_store_wait_wakes_on_set():
    import threading
    store = dist.HashStore()
    threading.Timer(0.1, store.set, ("late", "v")).start()
    assert store.get("late") == b"v"
    assert store.num_keys() == 1


def test_store_values_must_be_str_or_bytes():
    with pytest.raises(TypeError):
        dist.HashStore().set("k", 3)


def test_clone_is_usable_while_the_original_waits():
    """torch's Store.clone: a TCPStore clone is its own connection, so a
    thread can use it while another thread's wait() holds the original."""
    import threading
    master = dist.TCPStore("127.0.0.1", free_port(), 1, True, timeout=timedelta(seconds=10))
    waiter = threading.Thread(target=master.wait, args=(["late"],))
    waiter.start()
    clone = dist.PrefixStore("p", master).clone()
    assert isinstance(clone, dist.PrefixStore) and clone.underlying_store is not master
    t0 = time.monotonic()
    clone.set("k", b"v")  # on one socket it would queue behind the wait (10 s)
    assert clone.underlying_store.get("p/k") == b"v"
    clone.underlying_store.set("late", b"1")  # ends the wait
    waiter.join(5)
    assert not waiter.is_alive() and time.monotonic() - t0 < 5
    assert master.get("p/k") == b"v"
    hs = dist.HashStore()
    assert hs.clone() is hs
