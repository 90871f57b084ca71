"""torch.multiprocessing.spawn: run fn(i, *args) in nprocs new processes and
turn a child's failure into an exception in the parent: the child's
traceback (ProcessRaisedException) or its exit code or signal
(ProcessExitedException). When one child fails the others are stopped.

A child that raises writes its formatted traceback to a temporary file (as
torch 2.x does, not a queue, so a huge traceback cannot block the child's
exit). The children get the parent's environment unchanged.
"""
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return (type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                             self.signal_name))


def _set_pdeathsig(sig):
    """Linux: this child gets `sig` when its parent dies, so an aborted
    parent leaves no orphans."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").prctl(1, int(sig))  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _wrap(fn, i, args, error_file):
    _set_pdeathsig(signal.SIGINT)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # stopped by the parent: nothing to report
    except Exception:  # noqa: BLE001 - reported to the parent
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes of one spawn; join() waits and raises on a failure."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _stop_others(self, grace_period):
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + (grace_period if grace_period is not None else 5.0)
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in self.processes:
            if p.is_alive():
                p.kill()
                p.join()

    def join(self, timeout=None, grace_period=None):
        """True when every process has exited successfully; False when
        `timeout` passed first. Raises when one failed, after stopping the
        others (SIGTERM, then SIGKILL after grace_period seconds)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        self._stop_others(grace_period)
        failed = self.processes[error_index]
        path = self.error_files[error_index]
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            code = failed.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException("process %d terminated with signal %s"
                                             % (error_index, name), error_index, failed.pid,
                                             code, name)
            raise ProcessExitedException("process %d terminated with exit code %d"
                                         % (error_index, code), error_index, failed.pid, code)
        with open(path, "rb") as fh:
            original_trace = pickle.load(fh)
        msg = "\n\n-- Process %d terminated with the following error:\n" % error_index
        raise ProcessRaisedException(msg + original_trace, error_index, failed.pid)

    def __del__(self):
        for path in getattr(self, "error_files", []):
            try:
                os.unlink(path)
            except OSError:
                pass


class SpawnContext(ProcessContext):
    """Deprecated name of ProcessContext (torch warns too)."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      FutureWarning, stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start nprocs processes of `start_method` running fn(i, *args). With
    join, wait for them (and raise on a failure); otherwise return the
    ProcessContext."""
    ctx = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="pycuda_sem_spawn_", suffix=".err")
        os.close(fd)
        os.unlink(path)  # the child creates it only when it has an error to report
        error_files.append(path)
        p = ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn: start_processes with the 'spawn' method,
    the only one that is safe once CUDA has been used."""
    if start_method != "spawn":
        warnings.warn("This method only supports start_method=spawn (got: %s).\n"
                      "To use a different start_method use:\n\t\t"
                      " torch.multiprocessing.start_processes(...)" % start_method,
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
