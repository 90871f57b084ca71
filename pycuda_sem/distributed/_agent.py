"""The launcher's worker agent: start the local workers of one node, watch
them, stop them all when one fails, and report as torchrun does
(ChildFailedError with the failing rank's exit code and the tail of its
stderr).

Workers run in their own sessions so that a Ctrl-C at the terminal reaches the
agent only; the agent forwards SIGINT/SIGTERM to every worker, once.
Their stderr passes through the agent (a thread per worker copies it to ours
line by line) so that the last lines can be quoted when a worker fails.
"""
import collections
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime

__all__ = ["ChildFailedError", "WorkerSpec", "LocalAgent"]

_TAIL_LINES = 20
_GRACE_S = 5.0  # how long workers get to exit after SIGTERM before SIGKILL


class ChildFailedError(Exception):
    """torch.distributed.elastic.multiprocessing.errors.ChildFailedError: one
    or more workers failed; `failures` maps global rank to a _Failure."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures
        super().__init__(self.format_msg())

    def get_first_failure(self):
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        width = 60
        root_rank, root = self.get_first_failure()
        others = [f.describe(i) for i, (r, f) in enumerate(sorted(self.failures.items()))
                  if r != root_rank]
        lines = [boarder_delim * width, "%s FAILED" % self.name, section_delim * width,
                 "Failures:"]
        lines += others or ["  <NO_OTHER_FAILURES>"]
        lines += [section_delim * width, "Root Cause (first observed failure):",
                  root.describe(0), boarder_delim * width]
        return "\n" + "\n".join(lines)


class _Failure:
    def __init__(self, rank, local_rank, exitcode, pid, tail):
        self.rank = rank
        self.local_rank = local_rank
        self.exitcode = exitcode
        self.pid = pid
        self.tail = tail
        self.timestamp = time.time()

    def describe(self, idx):
        if self.exitcode < 0:
            try:
                code = "%d (pid: %d)\n  signal_name: %s" % (self.exitcode, self.pid,
                                                           signal.Signals(-self.exitcode).name)
            except ValueError:
                code = "%d (pid: %d)" % (self.exitcode, self.pid)
        else:
            code = "%d (pid: %d)" % (self.exitcode, self.pid)
        tail = "".join("    " + line for line in self.tail) if self.tail else "    <no stderr>\n"
        return ("[%d]:\n  time      : %s\n  host      : %s\n  rank      : %d (local_rank: %d)\n"
                "  exitcode  : %s\n  error_file: <N/A>\n  traceback : last lines of its "
                "stderr:\n%s" % (idx, datetime.fromtimestamp(self.timestamp)
                                 .strftime("%Y-%m-%d_%H:%M:%S"), socket.gethostname(),
                                 self.rank, self.local_rank, code, tail.rstrip("\n")))


class WorkerSpec:
    """What to run and where it sits in the job."""

    def __init__(self, cmd, nproc_per_node, nnodes, node_rank, master_addr, master_port,
                 run_id="none", max_restarts=0, name="worker"):
        self.cmd = cmd
        self.nproc_per_node = nproc_per_node
        self.nnodes = nnodes
        self.node_rank = node_rank
        self.master_addr = master_addr
        self.master_port = master_port
        self.run_id = run_id
        self.max_restarts = max_restarts
        self.name = name

    def env(self, local_rank):
        """The whole environment of the agent (NCCL_NVLS_ENABLE and friends
        included: never unset), plus torchrun's variables for this worker."""
        n, world = self.nproc_per_node, self.nproc_per_node * self.nnodes
        env = dict(os.environ)
        env.update({
            "LOCAL_RANK": str(local_rank), "RANK": str(self.node_rank * n + local_rank),
            "GROUP_RANK": str(self.node_rank), "ROLE_RANK": str(self.node_rank * n + local_rank),
            "ROLE_NAME": "default", "LOCAL_WORLD_SIZE": str(n), "WORLD_SIZE": str(world),
            "GROUP_WORLD_SIZE": str(self.nnodes), "ROLE_WORLD_SIZE": str(world),
            "MASTER_ADDR": self.master_addr, "MASTER_PORT": str(self.master_port),
            "TORCHELASTIC_RESTART_COUNT": "0",
            "TORCHELASTIC_MAX_RESTARTS": str(self.max_restarts),
            "TORCHELASTIC_RUN_ID": self.run_id, "TORCHELASTIC_USE_AGENT_STORE": "False",
            "TORCH_NCCL_ASYNC_ERROR_HANDLING": env.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
        })
        return env


class LocalAgent:
    """Runs the nproc_per_node workers of this node to completion."""

    def __init__(self, spec, monitor_interval=0.1):
        self.spec = spec
        self.monitor_interval = monitor_interval
        self.procs = []
        self.tails = []
        self._threads = []
        self._signal = None

    def _pump(self, stream, tail):
        # Bytes, not text: a worker's partial lines and odd encodings pass unchanged.
        out = sys.stderr.buffer if hasattr(sys.stderr, "buffer") else None
        for line in iter(stream.readline, b""):
            tail.append(line.decode(errors="replace"))
            if out is not None:
                out.write(line)
                out.flush()
            else:
                sys.stderr.write(line.decode(errors="replace"))
        stream.close()

    def _start(self):
        for local_rank in range(self.spec.nproc_per_node):
            p = subprocess.Popen(self.spec.cmd(local_rank), env=self.spec.env(local_rank),
                                 stderr=subprocess.PIPE, start_new_session=True)
            tail = collections.deque(maxlen=_TAIL_LINES)
            t = threading.Thread(target=self._pump, args=(p.stderr, tail), daemon=True)
            t.start()
            self.procs.append(p)
            self.tails.append(tail)
            self._threads.append(t)

    def _on_signal(self, signum, frame):
        if self._signal is None:
            self._signal = signum
            for p in self.procs:
                if p.poll() is None:
                    try:
                        p.send_signal(signum)
                    except ProcessLookupError:
                        pass

    def _stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + _GRACE_S
        for p in self.procs:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def _failure(self, local_rank):
        p = self.procs[local_rank]
        self._threads[local_rank].join(2.0)  # the last lines of its stderr
        return _Failure(self.spec.node_rank * self.spec.nproc_per_node + local_rank, local_rank,
                        p.returncode, p.pid, list(self.tails[local_rank]))

    def run(self):
        """Returns 0 when every worker exited with 0; raises ChildFailedError
        (after stopping the others) when one did not."""
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            self._start()
            while True:
                codes = [p.poll() for p in self.procs]
                if self._signal is not None:
                    print("Received %s death signal, shutting down workers"
                          % signal.Signals(self._signal).name, file=sys.stderr)
                    self._stop_all()
                    return 128 + self._signal
                failed = [i for i, c in enumerate(codes) if c not in (None, 0)]
                if failed:
                    # The first failures seen this round, before the others are
                    # stopped (their SIGTERM deaths are not the cause).
                    failures = {}
                    for i in failed:
                        f = self._failure(i)
                        failures[f.rank] = f
                    self._stop_all()
                    raise ChildFailedError(self.spec.name, failures)
                if all(c == 0 for c in codes):
                    for t in self._threads:
                        t.join(2.0)
                    return 0
                time.sleep(self.monitor_interval)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
