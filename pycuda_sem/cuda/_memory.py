"""memory_summary(): a readable table of the allocator's statistics.

Presentation only: the numbers come from memory_stats() (C)."""
from .._C import memory_stats, device_count, current_device


def _fmt_bytes(n):
    for unit in ("B  ", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return "%6d %s" % (n, unit) if unit == "B  " else "%6.2f %s" % (n, unit)
        n /= 1024.0


def _fmt_count(n):
    return "%10d" % n


def memory_summary(device=None, abbreviated=False):
    """Return a table of current, peak, allocated and freed figures of the
    caching allocator on `device`, by pool, in the spirit of torch's."""
    stats = memory_stats(device)
    if device is None:
        device = current_device() if device_count() else 0
    width = 76
    lines = ["=" * width,
             " pycuda_sem CUDA memory summary, device %s" % device,
             "-" * width,
             " %-28s | %10s | %10s | %10s | %10s" % ("Metric", "Cur Usage", "Peak Usage",
                                                    "Tot Alloc", "Tot Freed"),
             "-" * width]
    rows = [("Allocated memory", "allocated_bytes", _fmt_bytes),
            ("Active memory", "active_bytes", _fmt_bytes),
            ("Requested memory", "requested_bytes", _fmt_bytes),
            ("GPU reserved memory", "reserved_bytes", _fmt_bytes),
            ("Non-releasable memory", "inactive_split_bytes", _fmt_bytes),
            ("Allocations", "allocation", _fmt_count),
            ("Active allocs", "active", _fmt_count),
            ("GPU reserved segments", "segment", _fmt_count),
            ("Non-releasable allocs", "inactive_split", _fmt_count)]
    pools = [("all", "")] if abbreviated else [("all", ""), ("large_pool", "  from large pool"),
                                               ("small_pool", "  from small pool")]
    for title, key, fmt in rows:
        for pool, label in pools:
            p = "%s.%s." % (key, pool)
            if p + "current" not in stats:
                continue
            lines.append(" %-28s | %10s | %10s | %10s | %10s" % (
                label or title, fmt(stats[p + "current"]), fmt(stats[p + "peak"]),
                fmt(stats[p + "allocated"]), fmt(stats[p + "freed"])))
        lines.append("-" * width)
    for key in ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"):
        lines.append(" %-28s | %10d" % (key, stats.get(key, 0)))
    lines.append("=" * width)
    return "\n".join(lines) + "\n"
