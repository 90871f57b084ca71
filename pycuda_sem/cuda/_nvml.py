"""NVML readings for torch.cuda's monitoring functions: utilization,
memory_usage, temperature, power_draw, clock_rate, device_memory_used and
list_gpu_processes.

torch reads these through the pynvml package; this project has no Python
dependencies, so it calls the driver's own libnvidia-ml.so.1 through ctypes
(monitoring is not a hot path). A CUDA ordinal is mapped to NVML's device by
PCI bus id, so CUDA_VISIBLE_DEVICES renumbering is honoured, which NVML's own
indices would not do.
"""
import ctypes
import threading

from .. import _C
from ._extras import _device_index

_lock = threading.Lock()
_lib = None


class NVMLError(RuntimeError):
    """An NVML call failed (the library is missing, or the call returned an error)."""


def _load():
    global _lib
    with _lock:
        if _lib is None:
            try:
                lib = ctypes.CDLL("libnvidia-ml.so.1")
            except OSError as e:
                raise NVMLError("NVML (libnvidia-ml.so.1, part of the NVIDIA driver) could not be "
                                "loaded: %s" % e) from None
            _check(lib, lib.nvmlInit_v2(), "nvmlInit_v2")
            _lib = lib
    return _lib


def _check(lib, ret, what):
    if ret != 0:
        lib.nvmlErrorString.restype = ctypes.c_char_p
        msg = lib.nvmlErrorString(ret)
        raise NVMLError("%s failed: %s (NVML error %d)"
                        % (what, msg.decode() if msg else "unknown error", ret))


def _handle(device):
    """NVML's handle of the CUDA device `device` (None: the current one)."""
    idx = _device_index(device)
    bus = _C.get_device_properties(idx).pci_bus_id  # "dddd:bb:dd"
    lib = _load()
    h = ctypes.c_void_p()
    _check(lib, lib.nvmlDeviceGetHandleByPciBusId_v2((bus + ".0").encode(), ctypes.byref(h)),
           "nvmlDeviceGetHandleByPciBusId_v2")
    return lib, h, idx


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class _Process(ctypes.Structure):  # nvmlProcessInfo_v1_t, the unversioned call's
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


def _utilization(device):
    lib, h, _ = _handle(device)
    u = _Utilization()
    _check(lib, lib.nvmlDeviceGetUtilizationRates(h, ctypes.byref(u)), "nvmlDeviceGetUtilizationRates")
    return u


def utilization(device=None):
    """Percent of the last sample period in which a kernel ran on the device (nvidia-smi's GPU-Util)."""
    return int(_utilization(device).gpu)


def memory_usage(device=None):
    """Percent of the last sample period in which device memory was read or written."""
    return int(_utilization(device).memory)


def temperature(device=None):
    """The GPU's core temperature in degrees Celsius."""
    lib, h, _ = _handle(device)
    t = ctypes.c_uint()
    _check(lib, lib.nvmlDeviceGetTemperature(h, 0, ctypes.byref(t)), "nvmlDeviceGetTemperature")
    return int(t.value)


def power_draw(device=None):
    """The board's power draw in milliwatts."""
    lib, h, _ = _handle(device)
    p = ctypes.c_uint()
    _check(lib, lib.nvmlDeviceGetPowerUsage(h, ctypes.byref(p)), "nvmlDeviceGetPowerUsage")
    return int(p.value)


def clock_rate(device=None):
    """The SM clock in MHz."""
    lib, h, _ = _handle(device)
    c = ctypes.c_uint()
    _check(lib, lib.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(c)), "nvmlDeviceGetClockInfo")
    return int(c.value)


def device_memory_used(device=None):
    """Bytes of device memory in use by every process, as the driver counts them."""
    lib, h, _ = _handle(device)
    m = _Memory()
    _check(lib, lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m)), "nvmlDeviceGetMemoryInfo")
    return int(m.used)


def list_gpu_processes(device=None):
    """A readable list of the processes using the device and their memory,
    in torch's format. Inside a container NVML may not see other processes'
    ids (or this one's)."""
    lib, h, idx = _handle(device)
    n = ctypes.c_uint(0)
    fn = lib.nvmlDeviceGetComputeRunningProcesses
    procs = []
    for _ in range(4):  # the list can grow between the size query and the read
        buf = (_Process * max(n.value, 1))()
        ret = fn(h, ctypes.byref(n), buf)
        if ret == 0:
            procs = buf[:n.value]
            break
        if ret != 7:  # NVML_ERROR_INSUFFICIENT_SIZE: n holds the count now
            _check(lib, ret, "nvmlDeviceGetComputeRunningProcesses")
        n = ctypes.c_uint(n.value + 4)
    lines = ["GPU:%d" % idx]
    if not procs:
        lines.append("no processes are running")
    for p in procs:
        lines.append("process %10d uses %12.3f MB GPU memory" % (p.pid, p.usedGpuMemory / (1024 * 1024)))
    return "\n".join(lines)
