"""torch.utils.benchmark: Timer, Measurement and Compare.

Timer runs a statement with Python's timeit, as torch's does, with a clock
that first waits for the GPU when CUDA is in use, so that a measurement
covers the kernels a statement queued and not only their launches.
Measurement holds the per-run times (median, mean, IQR) and prints as
torch's; Compare prints several as one table. The callgrind and fuzzer parts
of torch's module are not here.
"""
import statistics as _statistics
import timeit as _timeit

__all__ = ["Timer", "Measurement", "Compare", "timer", "select_unit", "trim_sigfig"]


def timer():
    """The default clock: timeit's, after a CUDA synchronize when CUDA is up."""
    from ... import cuda
    if cuda.is_initialized():
        cuda.synchronize()
    return _timeit.default_timer()


def select_unit(t):
    """(unit, scale) for a time in seconds, as torch picks them."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return unit, scale
    return "ns", 1e-9


def trim_sigfig(x, n):
    if x == 0:
        return 0.0
    import math
    magnitude = int(math.ceil(math.log10(abs(x))))
    scale = 10 ** (magnitude - n)
    return float(round(x / scale) * scale)


class Measurement:
    """The times of one Timer: raw_times are seconds per block of
    number_per_run runs; times are seconds per run."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        return _statistics.median(self.times)

    @property
    def mean(self):
        return _statistics.mean(self.times)

    @property
    def iqr(self):
        ts = sorted(self.times)
        if len(ts) < 2:
            return 0.0
        q = _statistics.quantiles(ts, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def has_warnings(self):
        return self.iqr / self.median > 0.1 if len(self.times) >= 4 and self.median else False

    @property
    def title(self):
        return self.task_spec["label"] or self.task_spec["stmt"]

    def __getattr__(self, name):
        spec = self.__dict__.get("task_spec") or {}
        if name in spec:
            return spec[name]
        raise AttributeError(name)

    def __repr__(self):
        unit, scale = select_unit(self.median)
        spec = self.task_spec
        lines = [object.__repr__(self)]
        if spec["label"]:
            lines.append(spec["label"] + (": " + spec["sub_label"] if spec["sub_label"] else ""))
        lines.append(spec["stmt"])
        if spec["setup"] and spec["setup"] != "pass":
            lines.append("setup: " + spec["setup"])
        n = len(self.times)
        if n > 1:
            lines.append("  Median: %.2f %s" % (self.median / scale, unit))
            lines.append("  IQR:    %.2f %s (%.2f to %.2f)" % (self.iqr / scale, unit,
                                                               min(self.times) / scale, max(self.times) / scale)
                         if n >= 4 else "  %d measurements, %d runs per measurement, %d thread"
                         % (n, self.number_per_run, spec["num_threads"]))
            if n >= 4:
                lines.append("  %d measurements, %d runs per measurement, %d thread"
                             % (n, self.number_per_run, spec["num_threads"]))
        else:
            lines.append("  %.2f %s" % (self.median / scale, unit))
            lines.append("  1 measurement, %d runs , %d thread" % (self.number_per_run, spec["num_threads"]))
        return "\n".join(lines)


class Timer:
    """Timer(stmt='pass', setup='pass', global_setup='', timer=timer, globals=None,
    label=None, sub_label=None, description=None, env=None, num_threads=1)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,  # noqa: A002
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language="python"):
        if language not in ("python", "py") and str(language) != "Language.PYTHON":
            raise NotImplementedError("Timer: only Python statements are supported in pycuda_sem")
        if not isinstance(stmt, str) or not isinstance(setup, str):
            raise TypeError("Timer: stmt and setup must be strings")
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError("Timer: num_threads must be a positive int")
        g = dict(globals or {})
        if global_setup:
            exec(global_setup, g)  # noqa: S102 - the caller's setup code, as torch's Timer
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=g)
        self._spec = {"stmt": stmt, "setup": setup, "global_setup": global_setup, "label": label,
                      "sub_label": sub_label, "description": description, "env": env,
                      "num_threads": num_threads}

    def _measure(self, number):
        from ... import get_num_threads, set_num_threads
        prev = get_num_threads()
        set_num_threads(self._spec["num_threads"])
        try:
            return self._timer.timeit(number)
        finally:
            set_num_threads(prev)

    def timeit(self, number=1000000):
        """One block of `number` runs (after one warm-up run)."""
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise ValueError("timeit(): number must be a positive int")
        self._measure(1)
        return Measurement(number, [self._measure(number)], dict(self._spec))

    def _block_size(self, min_block=1e-3):
        n = 1
        while n < 1 << 30:
            if self._measure(n) >= min_block:
                return n
            n *= 10
        return n

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs sized to take at least 1 ms each, repeated until
        min_run_time has passed."""
        n = self._block_size()
        times, total = [], 0.0
        while total < min_run_time or not times:
            t = self._measure(n)
            total += t
            times.append(t)
            if callback is not None:
                callback(n, t)
        return Measurement(n, times, dict(self._spec))

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks until the IQR/median falls under threshold (or max_run_time)."""
        n = self._block_size()
        times, total = [], 0.0
        while total < max_run_time:
            t = self._measure(n)
            total += t
            times.append(t)
            if callback is not None:
                callback(n, t)
            m = Measurement(n, times, dict(self._spec))
            if total >= min_run_time and len(times) >= 4 and m.iqr / m.median < threshold:
                break
        return Measurement(n, times, dict(self._spec))

    def autorange(self, callback=None):
        n, t = self._timer.autorange(callback)
        return Measurement(n, [t], dict(self._spec))

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")


class Compare:
    """Several Measurements as one table: a row per sub_label (or statement),
    a column per description, the median time in the cells."""

    def __init__(self, results):
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError("Expected an instance of `Measurement`, got %s instead." % type(r).__name__)
        self._results = list(results)

    def __str__(self):
        if not self._results:
            return ""
        rows = list(dict.fromkeys(r.task_spec["sub_label"] or r.task_spec["stmt"] for r in self._results))
        cols = list(dict.fromkeys(r.task_spec["description"] or "" for r in self._results))
        cell = {}
        for r in self._results:
            cell[(r.task_spec["sub_label"] or r.task_spec["stmt"], r.task_spec["description"] or "")] = r.median
        unit, scale = select_unit(min(cell.values()))
        label = self._results[0].task_spec["label"] or ""
        w0 = max(len(x) for x in rows + [""]) + 2
        out = ["[%s]" % label.center(max(len(label), 20))]
        out.append(" " * w0 + "|".join(c.center(12) for c in cols))
        for row in rows:
            vals = [("%.1f" % (cell[(row, c)] / scale)) if (row, c) in cell else "" for c in cols]
            out.append(row.ljust(w0) + "|".join(v.rjust(12) for v in vals))
        out.append("\nTimes are in %s (%s)." % (
            {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}[unit], unit))
        return "\n".join(out) + "\n"

    def print(self):
        print(str(self))
