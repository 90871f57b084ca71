"""Key-value stores for the rendezvous of torch.distributed.

Every process group starts with a store that all ranks can reach: ranks
publish what the others need (NCCL's unique id, later) and count each other
at barriers. torch's stores are C++; these are Python because they run a few
times per job, never per step.

- HashStore: one process, a dict under a condition variable.
- TCPStore: the master process runs a small threaded socket server; every
  instance (master included) is a client of it. Requests and replies are
  length-prefixed binary frames (see _send_frame), so values are any bytes.
- FileStore: a file shared by processes on one machine (or a shared file
  system), read and rewritten under an fcntl lock.
- PrefixStore: a namespace ("prefix/key") over another store.

Blocking reads (get, wait) wait until the key exists or the store's timeout
passes, then raise DistStoreError as torch does.
"""
import fcntl
import os
import pickle
import socket
import struct
import threading
import time
from datetime import timedelta

__all__ = ["DistError", "DistStoreError", "DistNetworkError", "DistBackendError", "Store",
           "HashStore", "TCPStore", "FileStore", "PrefixStore"]

_DEFAULT_TIMEOUT = timedelta(seconds=300)


class DistError(RuntimeError):
    """torch.distributed.DistError: base of the errors of torch.distributed."""


class DistBackendError(DistError):
    """An error of a communication backend (NCCL)."""


class DistStoreError(DistError):
    """A store operation failed or timed out."""


class DistNetworkError(DistError):
    """The network failed: a store server could not be reached."""


def _to_bytes(value):
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise TypeError("a store value must be str or bytes, got %s" % type(value).__name__)


def _seconds(timeout):
    return timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)


def _timeout_error(timeout_s, keys):
    return DistStoreError("wait timeout after %dms, keys: %s"
                          % (round(timeout_s * 1000), ", ".join(keys)))


# ---- Store: the interface --------------------------------------------------------------

class Store:
    """torch.distributed.Store: the base class. Subclasses provide set, get,
    add, compare_set, delete_key, num_keys, check and wait."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout if isinstance(timeout, timedelta) else timedelta(seconds=timeout)

    def set(self, key, value):
        raise NotImplementedError

    def get(self, key):
        raise NotImplementedError

    def add(self, key, amount):
        raise NotImplementedError

    def compare_set(self, key, expected_value, desired_value):
        raise NotImplementedError

    def delete_key(self, key):
        raise NotImplementedError

    def num_keys(self):
        raise NotImplementedError

    def check(self, keys):
        raise NotImplementedError

    def wait(self, keys, timeout=None):
        raise NotImplementedError

    def append(self, key, value):
        """Append to the value of `key` (create it when missing). Not atomic
        across processes here unless the store's compare_set is; every store
        of this module does it under its own lock."""
        raise NotImplementedError

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def clone(self):
        """A store over the same keys that another thread can use while this
        one waits (torch's Store.clone). HashStore and FileStore are safe to
        share between threads, so they are their own clone."""
        return self

    def multi_set(self, keys, values):
        for k, v in zip(keys, values):
            self.set(k, v)


# ---- The key-value logic, shared by HashStore and the TCPStore server ---------------------

class _Table:
    """A dict of bytes with the store operations, under one condition
    variable so that waiters wake when a key appears."""

    def __init__(self):
        self.data = {}
        self.cond = threading.Condition()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def add(self, key, amount):
        with self.cond:
            value = int(self.data.get(key, b"0")) + int(amount)
            self.data[key] = str(value).encode()
            self.cond.notify_all()
            return value

    def append(self, key, value):
        with self.cond:
            self.data[key] = self.data.get(key, b"") + value
            self.cond.notify_all()

    def compare_set(self, key, expected, desired):
        # torch's rule: a missing key is set only when `expected` is empty;
        # the reply is the value the key holds afterwards (or `expected`).
        with self.cond:
            if key not in self.data:
                if expected == b"":
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return expected
            if self.data[key] == expected:
                self.data[key] = desired
                self.cond.notify_all()
            return self.data[key]

    def delete(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def wait(self, keys, timeout_s):
        """True once every key exists, False after timeout_s seconds."""
        deadline = time.monotonic() + timeout_s
        with self.cond:
            while not all(k in self.data for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True


class HashStore(Store):
    """torch.distributed.HashStore: a store inside one process (threads)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def set(self, key, value):
        self._table.set(key, _to_bytes(value))

    def get(self, key):
        self.wait([key])
        with self._table.cond:
            return self._table.data[key]

    def add(self, key, amount):
        return self._table.add(key, amount)

    def append(self, key, value):
        self._table.append(key, _to_bytes(value))

    def compare_set(self, key, expected_value, desired_value):
        return self._table.compare_set(key, _to_bytes(expected_value), _to_bytes(desired_value))

    def delete_key(self, key):
        return self._table.delete(key)

    def num_keys(self):
        with self._table.cond:
            return len(self._table.data)

    def check(self, keys):
        with self._table.cond:
            return all(k in self._table.data for k in keys)

    def wait(self, keys, timeout=None):
        t = _seconds(timeout if timeout is not None else self._timeout)
        if not self._table.wait(list(keys), t):
            raise _timeout_error(t, keys)


# ---- TCPStore: the wire protocol ---------------------------------------------------------
# A frame is a u32 count of fields, then each field as a u32 length and its
# bytes. A request's first field is the operation name; a reply's first field
# is b"ok", b"timeout" or b"error" followed by the results.

_U32 = struct.Struct("!I")


def _send_frame(sock, fields):
    parts = [_U32.pack(len(fields))]
    for f in fields:
        parts.append(_U32.pack(len(f)))
        parts.append(f)
    sock.sendall(b"".join(parts))


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the store connection was closed")
        buf += chunk
    return bytes(buf)


def _recv_frame(sock):
    (count,) = _U32.unpack(_recv_exact(sock, 4))
    fields = []
    for _ in range(count):
        (n,) = _U32.unpack(_recv_exact(sock, 4))
        fields.append(_recv_exact(sock, n))
    return fields


class _TCPServer:
    """The master's server: one listening socket, one thread per client.
    Daemon threads, so that a finished job never hangs on its store."""

    def __init__(self, host, port):
        self.table = _Table()
        self.clients = 0  # connections so far: wait_for_workers counts them
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
        except OSError as e:
            self.sock.close()
            raise DistNetworkError("The server socket has failed to bind to %s:%d (errno: %d - %s)."
                                   % (host, port, e.errno or 0, e.strerror)) from None
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="TCPStore-server").start()

    def close(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.table.cond:
                self.clients += 1
                self.table.cond.notify_all()
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            while True:
                req = _recv_frame(conn)
                try:
                    reply = self._handle(req[0].decode(), req[1:])
                except Exception as e:  # noqa: BLE001 - the client raises it
                    reply = [b"error", str(e).encode()]
                _send_frame(conn, reply)
        except (ConnectionError, OSError, struct.error):
            pass
        finally:
            conn.close()

    def _handle(self, op, args):
        t = self.table
        if op == "set":
            t.set(args[0], args[1])
            return [b"ok"]
        if op == "get":  # args: key, timeout in ms
            if not t.wait([args[0]], int(args[1]) / 1000):
                return [b"timeout"]
            with t.cond:
                return [b"ok", t.data[args[0]]]
        if op == "wait":  # args: timeout in ms, keys...
            return [b"ok" if t.wait(args[1:], int(args[0]) / 1000) else b"timeout"]
        if op == "add":
            return [b"ok", str(t.add(args[0], int(args[1]))).encode()]
        if op == "append":
            t.append(args[0], args[1])
            return [b"ok"]
        if op == "compare_set":
            return [b"ok", t.compare_set(args[0], args[1], args[2])]
        if op == "delete":
            return [b"ok", b"1" if t.delete(args[0]) else b"0"]
        if op == "num_keys":
            with t.cond:
                return [b"ok", str(len(t.data)).encode()]
        if op == "check":
            with t.cond:
                return [b"ok", b"1" if all(k in t.data for k in args) else b"0"]
        if op == "clients":  # args: how many, timeout in ms
            deadline = time.monotonic() + int(args[1]) / 1000
            with t.cond:
                while self.clients < int(args[0]):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return [b"timeout", str(self.clients).encode()]
                    t.cond.wait(left)
            return [b"ok"]
        raise ValueError("unknown store operation %r" % op)


# Servers of this process by port, for multi_tenant=True (several TCPStore
# objects of one process sharing one server, as torch allows).
_tenant_servers = {}
_tenant_lock = threading.Lock()


class TCPStore(Store):
    """torch.distributed.TCPStore: the process with is_master=True runs the
    server on host_name:port (port 0 picks a free one, see .port); the
    others connect, retrying until `timeout` while the server starts."""

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=_DEFAULT_TIMEOUT, wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__()
        self.set_timeout(timeout)
        self._host = host_name
        self._server = None
        self._lock = threading.Lock()  # one request at a time on the socket
        if is_master:
            with _tenant_lock:
                srv = _tenant_servers.get(port) if multi_tenant and port else None
                if srv is None or srv.closed:
                    srv = _TCPServer(host_name, port)
                    if multi_tenant:
                        _tenant_servers[srv.port] = srv
            self._server = srv
            port = srv.port
        self._port = port
        self._sock = self._connect(_seconds(self._timeout))
        if wait_for_workers and is_master and world_size is not None and world_size > 0:
            reply = self._request([b"clients", str(world_size).encode(), self._ms(None)])
            if reply[0] == b"timeout":
                raise DistStoreError(
                    "Timed out after %d seconds waiting for clients. %s/%d clients joined."
                    % (round(_seconds(self._timeout)), reply[1].decode(), world_size))

    @property
    def host(self):
        return self._host

    @property
    def port(self):
        return self._port

    @property
    def libuvBackend(self):  # noqa: N802 - torch's name
        return False

    def _connect(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                sock = socket.create_connection((self._host, self._port), timeout=max(timeout_s, 1))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise DistNetworkError(
                        "The client socket has timed out after %ds while trying to connect to "
                        "(%s, %d): %s" % (round(timeout_s), self._host, self._port, e)) from None
                time.sleep(0.05)

    def clone(self):
        """A second client connection to the same server: requests on one
        socket go one at a time, so a thread must not share it with a
        thread that may be blocked in wait()."""
        return TCPStore(self._host, self._port, is_master=False, timeout=self._timeout,
                        wait_for_workers=False)

    def _ms(self, timeout):
        t = _seconds(timeout if timeout is not None else self._timeout)
        return str(int(t * 1000)).encode()

    def _request(self, fields):
        with self._lock:
            try:
                _send_frame(self._sock, fields)
                reply = _recv_frame(self._sock)
            except (ConnectionError, OSError) as e:
                raise DistNetworkError("the TCPStore at %s:%d is unreachable: %s"
                                       % (self._host, self._port, e)) from None
        if reply[0] == b"error":
            raise DistStoreError(reply[1].decode())
        return reply

    def set(self, key, value):
        self._request([b"set", key.encode(), _to_bytes(value)])

    def get(self, key):
        reply = self._request([b"get", key.encode(), self._ms(None)])
        if reply[0] == b"timeout":
            raise _timeout_error(_seconds(self._timeout), [key])
        return reply[1]

    def add(self, key, amount):
        return int(self._request([b"add", key.encode(), str(int(amount)).encode()])[1])

    def append(self, key, value):
        self._request([b"append", key.encode(), _to_bytes(value)])

    def compare_set(self, key, expected_value, desired_value):
        return self._request([b"compare_set", key.encode(), _to_bytes(expected_value),
                              _to_bytes(desired_value)])[1]

    def delete_key(self, key):
        return self._request([b"delete", key.encode()])[1] == b"1"

    def num_keys(self):
        return int(self._request([b"num_keys"])[1])

    def check(self, keys):
        return self._request([b"check"] + [k.encode() for k in keys])[1] == b"1"

    def wait(self, keys, timeout=None):
        reply = self._request([b"wait", self._ms(timeout)] + [k.encode() for k in keys])
        if reply[0] == b"timeout":
            raise _timeout_error(_seconds(timeout if timeout is not None else self._timeout), keys)

    def __del__(self):
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()
        srv = getattr(self, "_server", None)
        if srv is not None and srv not in _tenant_servers.values():
            srv.close()


# ---- FileStore ---------------------------------------------------------------------------

class FileStore(Store):
    """torch.distributed.FileStore: the table lives in `file_name`, a pickled
    dict read and rewritten under an exclusive fcntl lock, so processes that
    share the file share the store. Waiting polls the file. The last instance
    to go away (over all processes) removes the file, as torch's does."""

    _POLL_S = 0.01
    _REFS = "\0refs"  # how many FileStore instances use the file (not a user key)

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self._path = file_name
        self._world_size = world_size
        self._transact(lambda d: d.__setitem__(self._REFS, d.get(self._REFS, 0) + 1))
        self._alive = True

    @property
    def path(self):
        return self._path

    def _transact(self, fn):
        """Run fn(table) under the lock; write the table back if fn changed it."""
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "r+b") as f:
                raw = f.read()
                table = pickle.loads(raw) if raw else {}
                before = dict(table)
                result = fn(table)
                if table != before:
                    f.seek(0)
                    f.truncate()
                    f.write(pickle.dumps(table))
                    f.flush()
            return result
        finally:
            os.close(fd)  # also releases the lock

    def set(self, key, value):
        value = _to_bytes(value)
        self._transact(lambda d: d.__setitem__(key, value))

    def get(self, key):
        self.wait([key])
        return self._transact(lambda d: d[key])

    def add(self, key, amount):
        def op(d):
            d[key] = str(int(d.get(key, b"0")) + int(amount)).encode()
            return int(d[key])
        return self._transact(op)

    def append(self, key, value):
        value = _to_bytes(value)
        self._transact(lambda d: d.__setitem__(key, d.get(key, b"") + value))

    def compare_set(self, key, expected_value, desired_value):
        expected, desired = _to_bytes(expected_value), _to_bytes(desired_value)

        def op(d):
            if key not in d:
                if expected == b"":
                    d[key] = desired
                    return desired
                return expected
            if d[key] == expected:
                d[key] = desired
            return d[key]
        return self._transact(op)

    def delete_key(self, key):
        return self._transact(lambda d: d.pop(key, None) is not None)

    def num_keys(self):
        return self._transact(lambda d: sum(1 for k in d if k != self._REFS))

    def check(self, keys):
        return self._transact(lambda d: all(k in d for k in keys))

    def wait(self, keys, timeout=None):
        t = _seconds(timeout if timeout is not None else self._timeout)
        deadline = time.monotonic() + t
        while not self.check(keys):
            if time.monotonic() >= deadline:
                raise _timeout_error(t, keys)
            time.sleep(self._POLL_S)

    def __del__(self):
        if not getattr(self, "_alive", False):
            return
        self._alive = False
        try:
            def release(d):
                d[self._REFS] = d.get(self._REFS, 1) - 1
                return d[self._REFS]
            if self._transact(release) <= 0:
                os.unlink(self._path)
        except (OSError, TypeError, AttributeError):
            pass  # at interpreter exit, os and pickle may already be gone


# ---- PrefixStore ---------------------------------------------------------------------------

class PrefixStore(Store):
    """torch.distributed.PrefixStore: every key of `store` seen through this
    object is "prefix/key", so process groups do not see each other's keys."""

    def __init__(self, prefix, store):
        super().__init__()
        self._prefix = prefix
        self._store = store
        self._timeout = store.timeout

    @property
    def underlying_store(self):
        return self._store

    def _k(self, key):
        return self._prefix + "/" + key

    def clone(self):
        return PrefixStore(self._prefix, self._store.clone())

    def set_timeout(self, timeout):
        super().set_timeout(timeout)
        self._store.set_timeout(timeout)

    def set(self, key, value):
        self._store.set(self._k(key), value)

    def get(self, key):
        return self._store.get(self._k(key))

    def add(self, key, amount):
        return self._store.add(self._k(key), amount)

    def append(self, key, value):
        self._store.append(self._k(key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self._store.compare_set(self._k(key), expected_value, desired_value)

    def delete_key(self, key):
        return self._store.delete_key(self._k(key))

    def num_keys(self):
        return self._store.num_keys()

    def check(self, keys):
        return self._store.check([self._k(k) for k in keys])

    def wait(self, keys, timeout=None):
        self._store.wait([self._k(k) for k in keys], timeout)
