"""torch.profiler over record_function ranges: profile, record_function,
schedule, ProfilerActivity, tensorboard_trace_handler.

torch's profiler (Kineto) records every aten op and every kernel. This one
records the ranges the program marks: record_function blocks and the
profile's own ProfilerStep#N ranges, each with its host time and, when CUDA
is among the activities, its GPU time between two timing events on the
current stream. Each range is also an NVTX range, so Nsight Systems shows
it beside the kernels. Individual ops are not listed: a profile says so with
a warning when it starts, rather than printing a table that looks complete.
"""
import collections as _collections
import enum as _enum
import json as _json
import os as _os
import socket as _socket
import threading as _threading
import time as _time
import warnings as _warnings

from .. import _C

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction",
           "tensorboard_trace_handler", "supported_activities"]


class ProfilerActivity(_enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(_enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities():
    acts = {ProfilerActivity.CPU}
    if _C.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The step -> ProfilerAction function of torch: skip_first steps, then
    cycles of wait, warmup and active steps (the last active one saves),
    `repeat` cycles (0: forever)."""
    for n, v in (("wait", wait), ("warmup", warmup), ("active", active), ("repeat", repeat),
                 ("skip_first", skip_first)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError("schedule(): %s must be a non-negative int, got %r" % (n, v))
    if active <= 0:
        raise ValueError("Invalid profiler schedule arguments")
    if warmup == 0:
        _warnings.warn("Profiler won't be using warmup, this can skew profiler results")

    def fn(step):
        if step < 0:
            raise ValueError("Invalid step: %d" % step)
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and step < wait:
            return ProfilerAction.NONE
        num = wait + warmup + active
        if repeat > 0 and step // num >= repeat:
            return ProfilerAction.NONE
        mod = step % num
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < num - 1 else ProfilerAction.RECORD_AND_SAVE
    return fn


def _default_schedule(_step):
    return ProfilerAction.RECORD


_state = _threading.local()
_active = []  # profiles recording now (any thread records into them)
_lock = _threading.Lock()


class _Range:
    __slots__ = ("name", "tid", "start_ns", "end_ns", "depth", "ev0", "ev1", "kind")

    def __init__(self, name, kind, cuda):
        self.name, self.kind = name, kind
        self.tid = _threading.get_ident()
        self.depth = getattr(_state, "depth", 0)
        self.ev0 = self.ev1 = None
        if cuda:
            self.ev0 = _C.Event(enable_timing=True)
            self.ev0.record()
        self.start_ns = _time.perf_counter_ns()
        self.end_ns = None


class record_function:
    """Marks a block (or, as a decorator, a function) as a named range:
    an NVTX range always, and a recorded range while a profile records."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError("record_function(): name must be a str, not %s" % type(name).__name__)
        self.name = name
        self.args = args
        self._ranges = []
        self._nvtx = False

    def __enter__(self):
        with _lock:
            profs = [p for p in _active if p._recording]
        cuda = any(p._cuda for p in profs)
        r = _Range(self.name, "user_annotation", cuda and _C.is_initialized())
        self._ranges.append((r, profs))
        _state.depth = r.depth + 1
        try:
            from ..cuda import nvtx
            nvtx.range_push(self.name)
            self._nvtx = True
        except Exception:  # noqa: BLE001 - NVTX is optional: no library, no range
            self._nvtx = False
        return self

    def __exit__(self, *exc):
        r, profs = self._ranges.pop()
        if r.ev0 is not None:
            r.ev1 = _C.Event(enable_timing=True)
            r.ev1.record()
        r.end_ns = _time.perf_counter_ns()
        _state.depth = r.depth
        if self._nvtx:
            from ..cuda import nvtx
            nvtx.range_pop()
        for p in profs:
            p._add(r)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name, self.args):
                return fn(*a, **k)
        return wrapper


def _fmt_us(us):
    if us >= 1e6:
        return "%.3fs" % (us / 1e6)
    if us >= 1e3:
        return "%.3fms" % (us / 1e3)
    return "%.3fus" % us


class FunctionEventAvg:
    """The totals of one range name: counts and host/device times in us."""

    def __init__(self, key):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.is_user_annotation = True
        self.input_shapes = None

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self):
        return self.device_time_total / self.count if self.count else 0.0

    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_time = property(lambda self: self.device_time)

    def __repr__(self):
        return ("<FunctionEventAvg key=%s self_cpu_time=%s cpu_time=%s device_time=%s count=%d>"
                % (self.key, _fmt_us(self.self_cpu_time_total), _fmt_us(self.cpu_time_total),
                   _fmt_us(self.device_time_total), self.count))


class EventList(list):
    """key_averages()' list, with torch's table()."""

    def __init__(self, items, use_device):
        super().__init__(items)
        self._use_device = use_device

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        rows = list(self)
        keys = {"cpu_time_total", "self_cpu_time_total", "cpu_time", "count", "device_time_total",
                "self_device_time_total", "cuda_time_total", "self_cuda_time_total", "device_time"}
        if sort_by is not None:
            if sort_by not in keys:
                raise AttributeError("'FunctionEventAvg' object has no attribute '%s'" % sort_by)
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total_self = sum(e.self_cpu_time_total for e in self) or 1.0
        total_dev = sum(e.self_device_time_total for e in self)
        cols = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if self._use_device:
            cols += ["Self CUDA", "CUDA total", "CUDA time avg"]
        cols.append("# of Calls")
        name_w = max([len(c) for c in cols[:1]] + [min(len(e.key), max_name_column_width) for e in rows])
        widths = [name_w] + [12] * (len(cols) - 1)
        line = "  ".join("-" * w for w in widths) + "  "
        out = [] if header is None else [header]
        out += [line, "  ".join(c.rjust(w) for c, w in zip(cols, widths)) + "  ", line]
        for e in rows:
            vals = [e.key[:max_name_column_width],
                    "%.2f%%" % (100.0 * e.self_cpu_time_total / total_self), _fmt_us(e.self_cpu_time_total),
                    "%.2f%%" % (100.0 * e.cpu_time_total / total_self), _fmt_us(e.cpu_time_total),
                    _fmt_us(e.cpu_time)]
            if self._use_device:
                vals += [_fmt_us(e.self_device_time_total), _fmt_us(e.device_time_total),
                         _fmt_us(e.device_time)]
            vals.append(str(e.count))
            out.append("  ".join(v.rjust(w) for v, w in zip(vals, widths)) + "  ")
        out.append(line)
        out.append("Self CPU time total: %s" % _fmt_us(sum(e.self_cpu_time_total for e in self)))
        if self._use_device:
            out.append("Self CUDA time total: %s" % _fmt_us(total_dev))
        out.append("(pycuda_sem records record_function ranges only, not individual ops)")
        return "\n".join(out) + "\n"

    def __str__(self):
        return self.table()


class profile:
    """torch.profiler.profile over record_function ranges (see the module's
    docstring): start()/stop() or a with block, step() with a schedule and
    on_trace_ready, key_averages().table(), export_chrome_trace()."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 use_cuda=None, custom_trace_id_callback=None):
        acts = set(activities) if activities is not None else supported_activities()
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError("profile(): activities must be ProfilerActivity values, got %r" % (a,))
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        self.activities = acts
        self._cuda = ProfilerActivity.CUDA in acts
        if self._cuda and not _C.is_available():
            raise RuntimeError("profile(): CUDA activity requested but no CUDA GPU is available")
        self.schedule = schedule or _default_schedule
        self._record_steps = schedule is not None  # ProfilerStep#N ranges, as torch: with a schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.step_num = 0
        self._ranges = []
        self._saved = []
        self._recording = False
        self._step_rf = None
        self._started = False

    def _add(self, r):
        with _lock:
            self._ranges.append(r)

    def _set_action(self, action):
        rec = action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if rec and not self._recording:
            self._ranges = []
        self._recording = rec

    def start(self):
        if self._started:
            raise RuntimeError("profile.start(): the profiler is already running")
        _warnings.warn("pycuda_sem's profiler records record_function ranges and profiler steps only; "
                      "individual ops are not listed", UserWarning, stacklevel=2)
        self._started = True
        with _lock:
            _active.append(self)
        self._set_action(self.schedule(self.step_num))
        self._enter_step()
        return self

    def _enter_step(self):
        if self._record_steps:
            self._step_rf = record_function("ProfilerStep#%d" % self.step_num)
            self._step_rf.__enter__()

    def _leave_step(self):
        if self._step_rf is not None:
            self._step_rf.__exit__(None, None, None)
            self._step_rf = None

    def step(self):
        """End the current step and begin the next, moving through the schedule."""
        if not self._started:
            return
        self._leave_step()
        prev = self.schedule(self.step_num)
        self.step_num += 1
        if prev == ProfilerAction.RECORD_AND_SAVE:
            self._finish_cycle()
        self._set_action(self.schedule(self.step_num))
        self._enter_step()

    def _finish_cycle(self):
        self._saved = list(self._ranges)
        self._recording = False
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def stop(self):
        if not self._started:
            return
        self._leave_step()
        with _lock:
            if self in _active:
                _active.remove(self)
        if self._recording or self.schedule is _default_schedule:
            self._finish_cycle()
        self._started = False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def _done(self):
        rs = self._saved if self._saved or not self._recording else self._ranges
        if self._cuda and any(r.ev1 is not None for r in rs):
            _C.synchronize()
        return [r for r in rs if r.end_ns is not None]

    def events(self):
        return self._done()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        rs = self._done()
        child_cpu = _collections.defaultdict(float)
        child_dev = _collections.defaultdict(float)
        dev_of = {}
        for r in rs:
            dev_of[id(r)] = (r.ev0.elapsed_time(r.ev1) * 1000.0) if r.ev1 is not None else 0.0
        # a range's self time: its time minus that of the ranges directly inside it
        for r in rs:
            parent = None
            for q in rs:
                if (q is not r and q.tid == r.tid and q.depth == r.depth - 1
                        and q.start_ns <= r.start_ns and r.end_ns <= q.end_ns):
                    parent = q
                    break
            if parent is not None:
                child_cpu[id(parent)] += (r.end_ns - r.start_ns) / 1000.0
                child_dev[id(parent)] += dev_of[id(r)]
        avgs = _collections.OrderedDict()
        for r in rs:
            a = avgs.setdefault(r.name, FunctionEventAvg(r.name))
            total = (r.end_ns - r.start_ns) / 1000.0
            a.count += 1
            a.cpu_time_total += total
            a.self_cpu_time_total += max(total - child_cpu[id(r)], 0.0)
            a.device_time_total += dev_of[id(r)]
            a.self_device_time_total += max(dev_of[id(r)] - child_dev[id(r)], 0.0)
        return EventList(list(avgs.values()), self._cuda)

    def export_chrome_trace(self, path):
        """The ranges as a Chrome trace (chrome://tracing, Perfetto): host
        ranges on their threads, GPU ranges on a 'cuda' row."""
        rs = self._done()
        pid = _os.getpid()
        t0 = min((r.start_ns for r in rs), default=0)
        evs = []
        for r in rs:
            evs.append({"ph": "X", "cat": r.kind, "name": r.name, "pid": pid, "tid": r.tid,
                        "ts": (r.start_ns - t0) / 1000.0, "dur": (r.end_ns - r.start_ns) / 1000.0})
            if r.ev1 is not None:
                evs.append({"ph": "X", "cat": "gpu_user_annotation", "name": r.name, "pid": pid,
                            "tid": "cuda", "ts": (r.start_ns - t0) / 1000.0,
                            "dur": r.ev0.elapsed_time(r.ev1) * 1000.0})
        with open(path, "w", encoding="utf-8") as f:
            _json.dump({"traceEvents": evs, "displayTimeUnit": "ms"}, f)
        return path


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready that writes each cycle's Chrome trace into dir_name
    as <worker>.<ms>.pt.trace.json."""
    if use_gzip:
        raise NotImplementedError("tensorboard_trace_handler(use_gzip=True) is not implemented in pycuda_sem")

    def handler(prof):
        _os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or "%s_%d" % (_socket.gethostname(), _os.getpid())
        prof.export_chrome_trace(_os.path.join(dir_name, "%s.%d.pt.trace.json"
                                              % (worker, int(_time.time() * 1000))))
    return handler
