"""The collective and point-to-point functions of torch.distributed.

Each one checks its arguments as torch does, turns global ranks into group
ranks, checks that the tensors are on a device the group's backend serves
(NCCL: CUDA only), then calls the backend object of the group. With
async_op=True the backend's Work is returned; otherwise it is waited on.
"""
import pickle
import warnings

from ._backend import Backend, ReduceOp
from .distributed_c10d import (_group_or_default, _plugin_of, _rank_not_in_group, get_global_rank,
                               get_group_rank, get_rank)

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter_tensor", "all_to_all_single", "send", "recv", "isend", "irecv",
           "P2POp", "batch_isend_irecv", "broadcast_object_list", "all_gather_object"]


# ---- argument checks ---------------------------------------------------------------------------

def _tensor_type():
    from .. import Tensor
    return Tensor


def _check_single_tensor(param, name):
    if not isinstance(param, _tensor_type()):
        raise TypeError("Invalid function argument. Expected parameter `%s` of type torch.Tensor\n"
                        "             but got %s instead." % (name, type(param)))


def _check_tensor_list(param, name):
    if not isinstance(param, list):
        raise TypeError("Invalid function argument. Expected parameter `%s` of type "
                        "List[torch.Tensor]\n             but got %s instead." % (name, type(param)))
    if not all(isinstance(p, _tensor_type()) for p in param):
        raise TypeError("Invalid function argument. Expected parameter `%s` of type "
                        "List[torch.Tensor]\n             but got %s with elements of type %s."
                        % (name, type(param), [type(p) for p in param]))


def _check_op(op):
    try:
        return ReduceOp.RedOpType(op)
    except ValueError:
        raise ValueError("Invalid reduce op: %r" % (op,)) from None


def _check_devices(pg, tensors):
    """NCCL moves CUDA memory only: a CPU tensor is refused here, not
    copied (the issue rules out home-made CPU collectives)."""
    plugin = _plugin_of(pg)
    for t in tensors:
        dev = t.device.type
        if dev not in plugin.devices:
            backend = pg.name()
            if backend == Backend.NCCL:
                raise RuntimeError(
                    "No backend type associated with device type %s: the NCCL backend needs CUDA "
                    "tensors (move the tensor with .cuda() or .to('cuda:<local rank>'))" % dev)
            raise RuntimeError("No backend type associated with device type %s: the %s backend "
                               "serves %s tensors" % (dev, backend, ", ".join(plugin.devices)))
        if not t.is_contiguous():
            raise ValueError("Tensors must be contiguous")


def _resolve(pg, global_rank, group_rank, name):
    """torch 2.5's rule: pass either the global rank or the group rank (group_src=...)."""
    if global_rank is not None and group_rank is not None:
        raise ValueError("Can't specify both %s and group_%s" % (name, name))
    if group_rank is not None:
        if group_rank < 0 or group_rank >= pg.size():
            raise ValueError("Group rank %d is not part of group %s" % (group_rank, pg))
        return group_rank
    if global_rank is None:
        raise ValueError("Either %s or group_%s must be set" % (name, name))
    return get_group_rank(pg, global_rank)


def _finish(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def _start(op_name, group):
    """The group to run on, or None (after torch's warning) when this rank
    is not in it."""
    if _rank_not_in_group(group):
        warnings.warn("Running %s on global rank %d which does not belong to the given group."
                      % (op_name, get_rank()), stacklevel=3)
        return None
    return _group_or_default(group)


# ---- collectives -------------------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` over the group in place, so every rank holds the result."""
    _check_single_tensor(tensor, "tensor")
    pg = _start("all_reduce", group)
    if pg is None:
        return None
    _check_devices(pg, [tensor])
    return _finish(pg.allreduce([tensor], _check_op(op)), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy `tensor` of rank `src` into `tensor` of every rank."""
    _check_single_tensor(tensor, "tensor")
    pg = _start("broadcast", group)
    if pg is None:
        return None
    root = _resolve(pg, src, group_src, "src")
    _check_devices(pg, [tensor])
    return _finish(pg.broadcast([tensor], root), async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` over the group into `tensor` of rank `dst`."""
    _check_single_tensor(tensor, "tensor")
    pg = _start("reduce", group)
    if pg is None:
        return None
    root = _resolve(pg, dst, group_dst, "dst")
    _check_devices(pg, [tensor])
    return _finish(pg.reduce([tensor], root, _check_op(op)), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] receives `tensor` of group rank i."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    pg = _start("all_gather", group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError("Tensor list input to all_gather must have %d tensors (the group size), "
                         "got %d" % (pg.size(), len(tensor_list)))
    _check_devices(pg, tensor_list + [tensor])
    return _finish(pg.allgather([tensor_list], [tensor]), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """The inputs of all ranks, concatenated (or stacked) into output_tensor."""
    _check_single_tensor(input_tensor, "input_tensor")
    _check_single_tensor(output_tensor, "output_tensor")
    pg = _start("all_gather_into_tensor", group)
    if pg is None:
        return None
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    _check_devices(pg, [output_tensor, input_tensor])
    return _finish(pg._allgather_base(output_tensor, input_tensor), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `input` over the group; rank i keeps the i-th slice in `output`."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    pg = _start("reduce_scatter_tensor", group)
    if pg is None:
        return None
    if input.numel() != output.numel() * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    if output.dtype != input.dtype:
        raise TypeError("input tensor must be the same type as the output tensor.")
    _check_devices(pg, [output, input])
    return _finish(pg._reduce_scatter_base(output, input, _check_op(op)), async_op)


def _check_splits(splits, tensor, size, name):
    if splits is None:
        if tensor.dim() == 0 or tensor.shape[0] % size:
            raise ValueError("Tensor's dim 0 does not divide equally across group size")
        return None
    splits = list(splits)
    if len(splits) != size:
        raise ValueError("Number of tensor splits not equal to group size")
    if sum(splits) != (tensor.shape[0] if tensor.dim() else 0):
        raise ValueError("Split sizes doesn't match total dim 0 size (%s)" % name)
    return splits


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Split `input` along dim 0, send slice i to rank i; `output` receives
    the slices of every rank in rank order."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    pg = _start("all_to_all_single", group)
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    out_splits = _check_splits(output_split_sizes, output, pg.size(), "output")
    in_splits = _check_splits(input_split_sizes, input, pg.size(), "input")
    _check_devices(pg, [output, input])
    return _finish(pg.alltoall_base(output, input, out_splits, in_splits), async_op)


# ---- point to point ----------------------------------------------------------------------------

def _peer(pg, peer, group_peer, name, is_send):
    r = _resolve(pg, peer, group_peer, name)
    if r == pg.rank():
        raise ValueError("Invalid %s rank: %s rank should not be the same as the rank of the "
                         "current process." % (("destination", "destination") if is_send
                                               else ("source", "source")))
    return r


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` without waiting; returns a Work."""
    _check_single_tensor(tensor, "tensor")
    pg = _start("isend", group)
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "dst", True)
    _check_devices(pg, [tensor])
    return pg.send([tensor], peer, tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` without waiting; returns a Work."""
    _check_single_tensor(tensor, "tensor")
    pg = _start("irecv", group)
    if pg is None:
        return None
    _check_devices(pg, [tensor])
    if src is None and group_src is None:
        return pg.recv_anysource([tensor], tag)
    return pg.recv([tensor], _peer(pg, src, group_src, "src", False), tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` and wait until it is sent."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src`; returns the sender's global rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    if src is not None:
        return src
    pg = _group_or_default(group)
    return get_global_rank(pg, group_src if group_src is not None else work.source_rank())


class P2POp:
    """One send or receive of batch_isend_irecv: op is isend or irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        _check_single_tensor(tensor, "tensor")
        self.op = op
        self.tensor = tensor
        self.group = group
        self.peer = peer
        self.tag = tag
        self.group_peer = group_peer

    def __repr__(self):
        return "P2POp(%s pg=%s, group_src/group_dst=%s, %s, %s, %s)" % (
            self.op.__name__, self.group, self.group_peer, self.peer, tuple(self.tensor.shape),
            self.tensor.dtype)


def batch_isend_irecv(p2p_op_list):
    """Run the sends and receives of p2p_op_list as one group (NCCL fuses
    them, which is what lets pairs exchange without deadlock); returns their
    Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    if not p2p_op_list:
        return []
    pg = _group_or_default(p2p_op_list[0].group)
    if any(_group_or_default(p.group) is not pg for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    ops = []
    for p in p2p_op_list:
        peer = _resolve(pg, p.peer, p.group_peer, "peer")
        _check_devices(pg, [p.tensor])
        ops.append((p.op is isend, p.tensor, peer, p.tag))
    return pg._batch_p2p(ops)


# ---- Python objects, pickled into uint8 tensors ------------------------------------------------

def _object_device(pg):
    """NCCL moves objects through the current CUDA device, as torch does."""
    import pycuda_sem
    if pg.name() == Backend.NCCL:
        return pycuda_sem.device("cuda", pycuda_sem.cuda.current_device())
    return pycuda_sem.device("cpu")


def _object_to_tensor(obj, device):
    import pycuda_sem
    data = pickle.dumps(obj)
    return (pycuda_sem.tensor(list(data), dtype=pycuda_sem.uint8, device=device),
            pycuda_sem.tensor([len(data)], dtype=pycuda_sem.int64, device=device))


def _tensor_to_object(tensor, size):
    return pickle.loads(bytes(tensor[:size].cpu().tolist()))


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace object_list on every rank by object_list of rank `src`
    (pickled, so only for trusted peers)."""
    import pycuda_sem
    pg = _start("broadcast_object_list", group)
    if pg is None:
        return
    root = _resolve(pg, src, group_src, "src")
    device = pycuda_sem.device(device) if device is not None else _object_device(pg)
    if pg.rank() == root:
        pairs = [_object_to_tensor(o, device) for o in object_list]
        sizes = pycuda_sem.cat([s for _, s in pairs])
    else:
        sizes = pycuda_sem.zeros(len(object_list), dtype=pycuda_sem.int64, device=device)
    broadcast(sizes, group=pg, group_src=root)
    if pg.rank() == root:
        payload = pycuda_sem.cat([t for t, _ in pairs]) if pairs else sizes.new_empty(0)
        payload = payload.to(pycuda_sem.uint8)
    else:
        payload = pycuda_sem.empty(int(sizes.sum().item()), dtype=pycuda_sem.uint8, device=device)
    broadcast(payload, group=pg, group_src=root)
    if pg.rank() != root:
        offset = 0
        for i, n in enumerate(sizes.cpu().tolist()):
            object_list[i] = _tensor_to_object(payload[offset:offset + n], n)
            offset += n


def all_gather_object(object_list, obj, group=None):
    """object_list[i] becomes `obj` of group rank i; object_list must have
    one slot per rank (pickled, so only for trusted peers)."""
    import pycuda_sem
    pg = _start("all_gather_object", group)
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError("object_list must have %d entries (the group size), got %d"
                         % (pg.size(), len(object_list)))
    device = _object_device(pg)
    data, size = _object_to_tensor(obj, device)
    sizes = pycuda_sem.zeros(pg.size(), dtype=pycuda_sem.int64, device=device)
    all_gather_into_tensor(sizes, size, group=pg)
    longest = int(sizes.max().item())
    padded = pycuda_sem.zeros(longest, dtype=pycuda_sem.uint8, device=device)
    padded[:data.numel()] = data
    out = pycuda_sem.zeros(longest * pg.size(), dtype=pycuda_sem.uint8, device=device)
    all_gather_into_tensor(out, padded, group=pg)
    for i, n in enumerate(sizes.cpu().tolist()):
        object_list[i] = _tensor_to_object(out[i * longest:(i + 1) * longest], n)

