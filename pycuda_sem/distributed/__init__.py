"""torch.distributed: process groups over NCCL, their rendezvous and stores.

The stores (TCPStore, FileStore, PrefixStore, HashStore), the rendezvous of
init_process_group (env://, tcp://, file://, store=), the group bookkeeping
(ranks, new_group, destroy), the launcher (`python -m
pycuda_sem.distributed.run`) and the collectives, which check their
arguments and call the group's backend: NCCL, the only one (ProcessGroupNCCL
in _nccl.py over the C communicator of csrc/distributed/). Nothing imports or
loads NCCL until a process group asks for it.
"""
from ._backend import (  # noqa: F401
    Backend, ReduceOp, reduce_op, Work, ProcessGroup,
    is_nccl_available, is_gloo_available, is_mpi_available, is_ucc_available,
    is_backend_available,
)
from ._store import (  # noqa: F401
    DistError, DistBackendError, DistStoreError, DistNetworkError,
    Store, HashStore, TCPStore, FileStore, PrefixStore,
)
from .distributed_c10d import (  # noqa: F401
    init_process_group, destroy_process_group, is_initialized, is_torchelastic_launched,
    get_rank, get_world_size, get_backend, new_group, barrier, monitored_barrier,
    group, GroupMember, get_group_rank, get_global_rank, get_process_group_ranks,
    get_node_local_rank, default_pg_timeout, get_default_backend_for_device,
)
from ._collectives import (  # noqa: F401
    all_reduce, broadcast, reduce, all_gather, all_gather_into_tensor, reduce_scatter_tensor,
    all_to_all_single, send, recv, isend, irecv, P2POp, batch_isend_irecv,
    broadcast_object_list, all_gather_object,
)
from .rendezvous import rendezvous, register_rendezvous_handler  # noqa: F401
from ._backend import _backends  # noqa: F401 - the registry of backends ('nccl': ProcessGroupNCCL)


def is_available():
    """True: torch.distributed exists here (its NCCL backend may not; see
    is_nccl_available)."""
    return True
