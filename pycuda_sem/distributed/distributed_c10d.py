"""torch.distributed.distributed_c10d: the process groups of this process.

init_process_group runs the rendezvous (a store, this rank, the world size)
and asks the backend's creator for the default group; new_group makes
subgroups over the same store. All of it is bookkeeping in Python: the data
never passes here, only through the backend objects (see _backend.py).

Every rank must create groups in the same order: a group's name is a counter,
and the name prefixes its keys in the store (PrefixStore), so the groups of one
job never read each other's keys.
"""
import os
import warnings
from datetime import timedelta

from ._backend import Backend, ProcessGroup, _backends
from ._store import DistStoreError, PrefixStore
from .rendezvous import rendezvous

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_torchelastic_launched",
           "get_rank", "get_world_size", "get_backend", "new_group", "barrier", "group", "GroupMember",
           "get_group_rank", "get_global_rank", "get_process_group_ranks", "get_node_local_rank",
           "monitored_barrier", "default_pg_timeout", "get_default_backend_for_device"]

default_pg_timeout = timedelta(minutes=30)
default_pg_nccl_timeout = timedelta(minutes=10)


class _World:
    """The process groups of this process (torch's _World)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.default_pg = None
        self.pg_map = {}         # pg -> (backend name, its PrefixStore)
        self.pg_names = {}       # pg -> group name
        self.pg_group_ranks = {}  # pg -> {global rank: group rank}
        self.pg_store = {}       # pg -> the store the rendezvous made (subgroups share it)
        self.group_count = 0


_world = _World()


class _WorldMeta(type):
    """Makes group.WORLD and GroupMember.WORLD read the current default group."""

    @property
    def WORLD(cls):  # noqa: N802 - torch's name
        return _world.default_pg


class group(metaclass=_WorldMeta):  # noqa: N801 - torch's name
    """group.WORLD: the default process group (None before init_process_group)."""


class GroupMember(metaclass=_WorldMeta):
    """GroupMember.WORLD, and NON_GROUP_MEMBER: what new_group returns to the
    ranks it does not include."""

    NON_GROUP_MEMBER = -100


def _rank_not_in_group(pg):
    return pg is not None and not isinstance(pg, ProcessGroup) and pg == GroupMember.NON_GROUP_MEMBER


def _get_default_group():
    if _world.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _world.default_pg


def _group_or_default(pg):
    return _get_default_group() if pg is None or pg is GroupMember.WORLD else pg


def _warn_not_in_group(op_name):
    warnings.warn("Running %s on global rank %d which does not belong to the given group."
                  % (op_name, get_rank()), stacklevel=3)


def _plugin_of(pg):
    return _backends[_world.pg_map[pg][0]]


def is_initialized():
    """True once init_process_group has made the default group."""
    return _world.default_pg is not None


def is_torchelastic_launched():
    """True in a process started by the launcher (torchrun sets this variable)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_default_backend_for_device(device):
    dev = device if isinstance(device, str) else device.type
    dev = dev.split(":")[0]
    if dev not in Backend.default_device_backend_map:
        raise ValueError("Default backend not registered for device : %s" % dev)
    return Backend.default_device_backend_map[dev]


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK set by the launcher, or `fallback_rank`."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to "
                       "allow `get_node_local_rank` to work, assuming you are not running in a "
                       "multi-device context and want the code to run locally instead.")


# ---- creating and destroying groups ------------------------------------------------------------

def _new_group_name():
    name = str(_world.group_count)
    _world.group_count += 1
    return name


def _new_process_group_helper(group_size, group_rank, global_ranks, backend, store, group_name,
                              timeout, device_id=None):
    plugin = _backends[backend]
    prefix_store = PrefixStore(group_name, store)
    if plugin.extended_api:
        opts = _DistributedBackendOptions(prefix_store, group_rank, group_size, timeout,
                                          group_name, global_ranks)
        pg = plugin.creator(opts, None)
    elif backend == Backend.NCCL:
        pg = plugin.creator(prefix_store, group_rank, group_size, timeout, device_id=device_id)
    else:
        pg = plugin.creator(prefix_store, group_rank, group_size, timeout)
    if not isinstance(pg, ProcessGroup):
        raise TypeError("the %s backend's creator returned %s, not a ProcessGroup"
                        % (backend, type(pg).__name__))
    pg._backend_name = Backend(backend)
    pg.group_name = group_name
    if device_id is not None:
        pg._device_id = device_id
    _world.pg_map[pg] = (backend, prefix_store)
    _world.pg_names[pg] = group_name
    _world.pg_group_ranks[pg] = {g: i for i, g in enumerate(global_ranks)}
    _world.pg_store[pg] = store
    return pg


class _DistributedBackendOptions:
    """What an extended_api backend creator receives (torch's names)."""

    def __init__(self, store, group_rank, group_size, timeout, group_id, global_ranks_in_group):
        self.store = store
        self.group_rank = group_rank
        self.group_size = group_size
        self.timeout = timeout
        self.group_id = group_id
        self.global_ranks_in_group = global_ranks_in_group


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Make the default process group. init_method is 'env://' (the default),
    'tcp://host:port' or 'file:///path'; or pass a store with rank and
    world_size. backend is 'nccl' (the default); see _backend.py."""
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    if store is not None:
        if world_size <= 0:
            raise ValueError("world_size must be positive if using store")
        if rank < 0:
            raise ValueError("rank must be non-negative if using store")
    elif init_method is None:
        init_method = "env://"
    backend = Backend(backend if backend else Backend.NCCL)
    if backend not in _backends:
        raise ValueError("Invalid backend: '%s'" % backend)
    if timeout is None:
        timeout = default_pg_nccl_timeout if backend == Backend.NCCL else default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError("Expected timeout argument to be of type datetime.timedelta, got %s"
                        % type(timeout))
    plugin = _backends[backend]
    if plugin.check is not None:
        # Fail before the rendezvous: a rank that cannot make its backend must
        # not leave the others waiting for it.
        plugin.check(device_id)
    if store is None:
        store, rank, world_size = next(rendezvous(init_method, rank, world_size, timeout=timeout))
        store.set_timeout(timeout)
    name = group_name or _new_group_name()
    pg = _new_process_group_helper(world_size, rank, list(range(world_size)), backend, store,
                                   name, timeout, device_id)
    _world.default_pg = pg
    if os.environ.get("TORCH_DIST_INIT_BARRIER", "0") == "1":
        pg.barrier().wait()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of `ranks` (global ranks; all of them when None). Every rank of
    the default group must call it, in the same order as the others; ranks
    outside `ranks` get GroupMember.NON_GROUP_MEMBER."""
    default_pg = _get_default_group()
    global_rank, world = default_pg.rank(), default_pg.size()
    if not ranks:
        ranks = list(range(world))
    else:
        ranks = sorted(ranks)
        if len(ranks) > world:
            raise ValueError("the new group's world size should be less or equal to the world "
                             "size set by init_process_group")
        for r in ranks:
            if r < 0 or r >= world:
                raise ValueError("The new group's rank should be within the world_size set by "
                                 "init_process_group")
    backend = Backend(backend) if backend else _world.pg_map[default_pg][0]
    if backend not in _backends:
        raise ValueError("Invalid backend: '%s'" % backend)
    timeout = timeout or default_pg._timeout or default_pg_timeout
    name = _new_group_name()
    if global_rank not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    pg = _new_process_group_helper(len(ranks), ranks.index(global_rank), ranks, backend,
                                   _world.pg_store[default_pg], name, timeout,
                                   device_id if device_id is not None else default_pg.bound_device_id)
    pg.group_desc = group_desc or "undefined"
    return pg


def destroy_process_group(group=None):
    """Destroy `group`, or every group (and the default one) when None."""
    if _rank_not_in_group(group):
        return
    pg = _group_or_default(group)
    if pg not in _world.pg_map:
        raise ValueError("Invalid process group specified")
    if group is None or group is GroupMember.WORLD:
        for p in list(_world.pg_map):
            p._shutdown()
        _world.reset()
    else:
        pg._shutdown()
        for table in (_world.pg_map, _world.pg_names, _world.pg_group_ranks, _world.pg_store):
            table.pop(pg, None)


# ---- queries ---------------------------------------------------------------------------------

def get_rank(group=None):
    """This process's rank in `group` (the default group when None); -1 when
    it is not a member."""
    if _rank_not_in_group(group):
        return -1
    default_pg = _get_default_group()
    if group is None or group is GroupMember.WORLD:
        return default_pg.rank()
    return get_group_rank(group, default_pg.rank())


def get_world_size(group=None):
    """The number of ranks of `group`; -1 when this process is not a member."""
    if _rank_not_in_group(group):
        return -1
    return _group_or_default(group).size()


def get_backend(group=None):
    """The backend name of `group` (the default group when None)."""
    pg = _group_or_default(group)
    if _rank_not_in_group(pg) or pg not in _world.pg_map:
        raise ValueError("Invalid process group specified")
    return Backend(_world.pg_map[pg][0])


def _check_registered(pg):
    if pg not in _world.pg_group_ranks:
        raise ValueError("Group %s is not registered, please create group with "
                         "torch.distributed.new_group API" % pg)


def get_group_rank(group, global_rank):
    """The rank in `group` of the process whose global rank is `global_rank`."""
    if group is GroupMember.WORLD:
        return global_rank
    _check_registered(group)
    ranks = _world.pg_group_ranks[group]
    if global_rank not in ranks:
        raise ValueError("Global rank %d is not part of group %s" % (global_rank, group))
    return ranks[global_rank]


def get_global_rank(group, group_rank):
    """The global rank of rank `group_rank` of `group`."""
    if group is GroupMember.WORLD:
        return group_rank
    _check_registered(group)
    for g, r in _world.pg_group_ranks[group].items():
        if r == group_rank:
            return g
    raise ValueError("Group rank %d is not part of group %s" % (group_rank, group))


def get_process_group_ranks(group):
    """The global ranks of `group`, in group-rank order."""
    pg = _group_or_default(group)
    _check_registered(pg)
    return sorted(_world.pg_group_ranks[pg], key=_world.pg_group_ranks[pg].get)


# ---- barriers ---------------------------------------------------------------------------------

def barrier(group=None, async_op=False, device_ids=None):
    """Block until every rank of `group` has reached it (the backend's
    barrier; over the store unless the backend has a faster one)."""
    if _rank_not_in_group(group):
        _warn_not_in_group("barrier")
        return None
    work = _group_or_default(group).barrier()
    if async_op:
        return work
    work.wait()
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier over the store that names the ranks that did not arrive
    within `timeout` (torch runs it on gloo; the store is enough)."""
    if _rank_not_in_group(group):
        _warn_not_in_group("monitored_barrier")
        return None
    pg = _group_or_default(group)
    _store_based_barrier(_world.pg_map[pg][1], pg.rank(), pg.size(), "monitored_barrier",
                         timeout or pg._timeout or default_pg_timeout, name_missing=True)
    return None


def _store_based_barrier(store, rank, world_size, key, timeout, name_missing=False):
    """Every rank adds itself to a counter; the last to arrive publishes
    `key/done`, which the others wait for. Then each one departs, and rank 0
    (the TCPStore server, usually) waits until all have: a server process that
    exited first would cut off the replies of the others' waits."""
    epoch = store.add(key + "/epoch/%d" % rank, 1)  # this rank's n-th barrier on `key`
    k = "%s/%d" % (key, epoch)
    arrived = store.add(k + "/arrived", 1)
    if name_missing:
        store.set(k + "/rank/%d" % rank, "1")
    if arrived == world_size:
        store.set(k + "/done", "1")
    try:
        store.wait([k + "/done"], timeout)
    except DistStoreError as e:
        joined = store.add(k + "/arrived", 0)
        if name_missing:
            missing = [r for r in range(world_size) if not store.check([k + "/rank/%d" % r])]
            raise DistStoreError("Rank(s) %s failed to pass monitoredBarrier in %s"
                                 % (missing, timeout)) from None
        raise DistStoreError(
            "Timed out initializing process group in store based barrier on rank %d, for key: %s "
            "(world_size=%d, num_workers_joined=%d, timeout=%s error=%s)"
            % (rank, k, world_size, joined, timeout, e)) from None
    if store.add(k + "/departed", 1) == world_size:
        store.set(k + "/left", "1")
    if rank == 0:
        store.wait([k + "/left"], timeout)
        for suffix in ("/arrived", "/done", "/departed", "/left"):
            store.delete_key(k + suffix)
