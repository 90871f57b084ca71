"""Backends of torch.distributed: the names (Backend), the reduction
operations (ReduceOp), the handle of an asynchronous collective (Work), the
interface a backend implements (ProcessGroup) and the registry that maps a
backend name to the function that creates one.

Only NCCL is a real backend here (ProcessGroupNCCL, _nccl.py, over the C
communicator of csrc/distributed/). CPU collectives (gloo) are deliberately
not provided.
"""
import enum
import os
import site
import sys
from datetime import timedelta

__all__ = ["Backend", "ReduceOp", "reduce_op", "Work", "ProcessGroup", "is_nccl_available",
           "is_gloo_available", "is_mpi_available", "is_ucc_available", "is_backend_available"]


# ---- Backend: the names -------------------------------------------------------------------

class Backend(str):
    """torch.distributed.Backend: a backend name ("nccl", "gloo", ...), a str
    lowered and checked; register_backend adds third-party ones."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL}
    backend_capability = {GLOO: ["cpu", "cuda"], NCCL: ["cuda"], UCC: ["cpu", "cuda"],
                          MPI: ["cpu", "cuda"]}
    backend_type_map = {UNDEFINED: 0, GLOO: 1, NCCL: 2, UCC: 3, MPI: 4}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish, but got %s"
                             % type(name))
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None):
        """Register `func(store, rank, world_size, timeout)` (or, with
        extended_api, `func(dist_backend_opts, pg_options)`) as backend `name`
        for the device types `devices` (default: cpu and cuda)."""
        if hasattr(Backend, name.upper()) and name.lower() in _backends:
            raise ValueError("%s backend already exist in torch.distributed.Backend" % name.upper())
        setattr(Backend, name.upper(), name.lower())
        if name.lower() not in Backend.backend_list:
            Backend.backend_list.append(name.lower())
        devices = [devices] if isinstance(devices, str) else list(devices or ["cpu", "cuda"])
        Backend.backend_capability[name.lower()] = devices
        _backends[name.lower()] = _BackendPlugin(func, devices, extended_api)


class ReduceOp:
    """torch.distributed.ReduceOp: SUM, AVG, PRODUCT, MIN, MAX (NCCL's
    reductions), and the bitwise ones torch names."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


class reduce_op:  # noqa: N801 - torch's deprecated name
    """Deprecated alias of ReduceOp's members (torch warns; so do we)."""

    def __getattribute__(self, name):
        import warnings
        warnings.warn("torch.distributed.reduce_op is deprecated, please use "
                      "torch.distributed.ReduceOp instead", FutureWarning, stacklevel=2)
        return getattr(ReduceOp, name)


reduce_op = reduce_op()


# ---- Work: the handle of a collective --------------------------------------------------------

class Work:
    """torch.distributed.Work: returned by a collective with async_op=True.
    This base is a finished, successful work; NCCL's (_nccl._WorkNCCL) holds
    the CUDA event the collective recorded on its stream."""

    def __init__(self, result=None, source_rank=-1):
        self._result = list(result or [])
        self._source_rank = source_rank

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def exception(self):
        return None

    def source_rank(self):
        return self._source_rank

    def result(self):
        return self._result

    def wait(self, timeout=timedelta(0)):
        return True

    def synchronize(self):
        pass

    def get_future(self):
        import concurrent.futures
        f = concurrent.futures.Future()
        f.set_result(self._result)
        return f

    def block_current_stream(self):
        pass


# ---- ProcessGroup: what a backend implements ---------------------------------------------------

class ProcessGroup:
    """torch.distributed.ProcessGroup: the ranks of a group and the backend
    object that runs its collectives. A backend subclasses it and overrides
    the collectives it provides; each returns a Work. The argument checks are
    done before (in the torch.distributed functions), so a backend only moves
    data."""

    def __init__(self, store, rank, size):
        self._store = store
        self._rank = rank
        self._size = size
        self._timeout = getattr(store, "timeout", None)
        self._backend_name = Backend.UNDEFINED
        self.group_name = ""
        self.group_desc = ""

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return self._backend_name

    @property
    def bound_device_id(self):
        return getattr(self, "_device_id", None)

    def _not_provided(self, what):
        raise RuntimeError("the %s backend does not provide %s" % (self._backend_name, what))

    def allreduce(self, tensors, op):
        self._not_provided("allreduce")

    def broadcast(self, tensors, root):
        self._not_provided("broadcast")

    def reduce(self, tensors, root, op):
        self._not_provided("reduce")

    def allgather(self, output_tensors, input_tensors):
        self._not_provided("allgather")

    def _allgather_base(self, output, input):
        self._not_provided("allgather_into_tensor")

    def _reduce_scatter_base(self, output, input, op):
        self._not_provided("reduce_scatter_tensor")

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes):
        self._not_provided("alltoall")

    def send(self, tensors, dst, tag):
        self._not_provided("send")

    def recv(self, tensors, src, tag):
        self._not_provided("recv")

    def recv_anysource(self, tensors, tag):
        self._not_provided("recv from any source")

    def barrier(self):
        """Over the store: backends without a device barrier need nothing
        more. NCCL's is an all_reduce of one element, as torch's."""
        from .distributed_c10d import _store_based_barrier
        _store_based_barrier(self._store, self._rank, self._size, "barrier",
                             self._timeout or timedelta(minutes=30))
        return Work()

    def _batch_p2p(self, ops):
        """[(is_send, tensor, group_peer, tag)] as one group of sends and
        receives (NCCL's ncclGroupStart/End); the default runs them one by one."""
        return [self.send([t], peer, tag) if is_send else self.recv([t], peer, tag)
                for is_send, t, peer, tag in ops]

    def _shutdown(self):
        pass


# ---- The registry -----------------------------------------------------------------------------

class _BackendPlugin:
    def __init__(self, creator, devices, extended_api=False, check=None):
        self.creator = creator
        self.devices = devices
        self.extended_api = extended_api
        self.check = check  # run before the rendezvous: fail fast, not after it


_NCCL_SONAME = "libnccl.so.2"
_nccl_path = None   # the path the C loader opened, once loaded
_nccl_error = None  # why loading failed (tried once)


def _nccl_candidates():
    """Where libnccl.so.2 may be, best first: the nvidia-nccl wheel (torch's
    dependency; when torch is imported first this is the copy it loaded), the
    loader's own search (LD_LIBRARY_PATH, ldconfig), the CUDA toolkit."""
    import importlib.util
    dirs = []
    try:
        spec = importlib.util.find_spec("nvidia")
        dirs += list(spec.submodule_search_locations or []) if spec else []
    except (ImportError, ValueError):
        pass
    roots = list(sys.path)
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # virtualenv's old site module
        pass
    dirs += [os.path.join(d, "nvidia") for d in roots if d]
    out = []
    for d in dirs:
        p = os.path.join(d, "nccl", "lib", _NCCL_SONAME)
        if p not in out and os.path.isfile(p):
            out.append(p)
    out.append(_NCCL_SONAME)
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        for lib in ("lib64", "lib"):
            p = os.path.join(home, lib, _NCCL_SONAME) if home else None
            if p and p not in out and os.path.isfile(p):
                out.append(p)
    return out


def _load_nccl():
    """The path of the NCCL library, loaded by the C side (dlopen) on the
    first call; RuntimeError saying where it looked when it cannot be loaded."""
    global _nccl_path, _nccl_error
    if _nccl_path is not None:
        return _nccl_path
    if _nccl_error is None:
        from .. import _C
        try:
            _nccl_path = _C._nccl_load(_nccl_candidates())
            return _nccl_path
        except RuntimeError as e:
            _nccl_error = str(e)
    raise RuntimeError(_nccl_error if _nccl_error.startswith("the NCCL backend needs") else
                       "the NCCL backend needs libnccl.so.2, which could not be loaded (%s). "
                       "Install the nvidia-nccl-cu13 wheel or put NCCL on LD_LIBRARY_PATH."
                       % _nccl_error)


def is_nccl_available():
    """True when libnccl.so.2 can be loaded (tried once, on the first call)."""
    try:
        _load_nccl()
        return True
    except RuntimeError:
        return False


def is_gloo_available():
    return False


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_backend_available(backend):
    b = str(backend).lower()
    if b == Backend.NCCL:
        return is_nccl_available()
    return b in _backends and b not in (Backend.GLOO, Backend.NCCL)


def _check_nccl(device_id=None):
    _load_nccl()
    from .. import cuda
    if cuda.device_count() == 0:
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")


def _create_nccl(store, rank, world_size, timeout, device_id=None):
    """The NCCL backend: a ProcessGroupNCCL (_nccl.py; the collectives are C
    calls into NCCL on an internal stream per device)."""
    _check_nccl(device_id)
    from ._nccl import ProcessGroupNCCL
    return ProcessGroupNCCL(store, rank, world_size, timeout, device_id=device_id)


def _no_gloo(*args, **kwargs):
    raise RuntimeError("the gloo backend (collectives on CPU tensors) is not provided by "
                       "pycuda_sem: use backend='nccl' with CUDA tensors")


_backends = {
    Backend.NCCL: _BackendPlugin(_create_nccl, ["cuda"], check=_check_nccl),
    Backend.GLOO: _BackendPlugin(_no_gloo, ["cpu"], check=_no_gloo),
}
