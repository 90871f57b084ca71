"""torch.nn.parallel.DistributedDataParallel: one process per GPU, gradients
averaged over the process group while backward runs.

At construction rank 0's parameters and buffers are broadcast to every rank
(one NCCL group). The parameters that require grad are split into buckets of
about bucket_cap_mb (25 MiB), in reverse order of module.parameters() (the
order backward usually produces their gradients), one dtype a bucket; each
bucket owns a flat buffer. A post-accumulate-grad hook on every parameter
copies its fresh .grad into its slot; when the last slot of a bucket is
filled, the bucket is all-reduced (ReduceOp.AVG) asynchronously on the NCCL
stream, so communication overlaps the rest of backward (buckets are launched
in index order, so that every rank issues the same collectives in the same
order, as torch's reducer does). When the last bucket has been launched,
the caller's stream waits for every bucket and the averaged values are
copied back into .grad (or .grad becomes a view of the
bucket with gradient_as_bucket_view=True).

no_sync() skips all of that (gradients accumulate locally; the first
backward outside it averages the accumulated sum). find_unused_parameters
walks the autograd graph of the forward's outputs and marks the parameters it
does not reach as ready at once (their slots are zero), so the buckets still
complete; without it, a parameter that gets no gradient leaves the reduction
unfinished, which the next forward reports as torch does.
"""
import contextlib

from ... import _C
from ...autograd.grad_mode import is_grad_enabled
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

# The NCCL backend moves CUDA memory only; the CPU tests of the bucketing turn
# this off with a test backend whose all-reduce of one rank is the identity.
_REQUIRE_CUDA = True

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing loss. "
    "You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss. Parameter "
    "indices which did not receive grad for rank %d: %s")


class _Bucket:
    __slots__ = ("params", "indices", "buffer", "views", "pending", "work")

    def __init__(self):
        self.params, self.indices, self.views = [], [], []
        self.buffer = None
        self.pending = 0
        self.work = None


def _tensors_in(obj, out):
    from ... import Tensor
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def _to_device(obj, device):
    from ... import Tensor
    if isinstance(obj, Tensor):
        return obj if obj.device == device else obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(_to_device(o, device) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    return obj


class DistributedDataParallel(Module):
    """DistributedDataParallel(module, device_ids=None, output_device=None,
    dim=0, broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
    find_unused_parameters=False, check_reduction=False,
    gradient_as_bucket_view=False, static_graph=False)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None):
        super().__init__()
        from ... import distributed as dist
        from ...distributed.distributed_c10d import _group_or_default
        self.module = module
        self.process_group = _group_or_default(process_group)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have "
                               "any parameter that requires a gradient.")
        devices = {p.device for p in module.parameters()}
        if len(devices) > 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type of "
                             "devices, but input module parameters locate in %s."
                             % sorted(str(d) for d in devices))
        device = next(iter(devices))
        if device.type != "cuda" and _REQUIRE_CUDA:
            raise RuntimeError("DistributedDataParallel with the NCCL backend needs the module "
                               "on a CUDA device (found %s): move it with "
                               "module.to('cuda:<local rank>') first" % device)
        if device_ids is not None and (len(device_ids) != 1 or (
                _C.device("cuda", device_ids[0]) if isinstance(device_ids[0], int)
                else _C.device(device_ids[0])) != device):
            raise ValueError("device_ids can only be None or contain a single element: the "
                             "module's device (%s), got %s" % (device, device_ids))
        self.device = device
        self.device_ids = [device.index] if device_ids is not None and device.type == "cuda" \
            else None
        self.output_device = device if output_device is None else _C.device(
            "cuda", output_device) if isinstance(output_device, int) else _C.device(output_device)
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._params = params
        self._index = {id(p): i for i, p in enumerate(params)}
        if init_sync:
            self._sync_module_states(list(module.parameters()) + list(module.buffers()))
        self._build_buckets()
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(i))
                       for i, p in enumerate(params)]
        self._expect_sync = False
        self._ready = [False] * len(params)
        self._launched = 0
        self._locally_unused = set()
        dist.get_world_size(self.process_group)  # a member of the group, or ValueError

    # ---- construction ---------------------------------------------------------------------

    def _sync_module_states(self, tensors):
        """Rank 0's values into every rank, one NCCL group for all of them."""
        from ... import no_grad
        tensors = [t.detach() for t in tensors if t.numel()]
        if not tensors or self.process_group.size() == 1:
            return
        pg = self.process_group
        with no_grad():
            if hasattr(pg, "_broadcast_many"):  # NCCL: one group for all of them
                pg._broadcast_many(tensors, 0).wait()
            else:
                for t in tensors:
                    pg.broadcast([t], 0).wait()

    def _build_buckets(self):
        from ... import zeros
        # torch's rule: a parameter joins the open bucket of its dtype, which
        # closes once it holds bucket_cap bytes or more
        buckets, open_by_dtype, filled = [], {}, {}
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            b = open_by_dtype.get(p.dtype)
            if b is None:
                b = _Bucket()
                buckets.append(b)
                open_by_dtype[p.dtype] = b
                filled[id(b)] = 0
            b.params.append(p)
            b.indices.append(i)
            filled[id(b)] += p.numel() * p.element_size()
            if filled[id(b)] >= self.bucket_bytes_cap:
                del open_by_dtype[p.dtype]
        self._bucket_of = [None] * len(self._params)
        self._slot_of = [None] * len(self._params)
        for k, b in enumerate(buckets):
            total = sum(p.numel() for p in b.params)
            b.buffer = zeros(total, dtype=b.params[0].dtype, device=self.device)
            off = 0
            for j, p in enumerate(b.params):
                b.views.append(b.buffer[off:off + p.numel()].view(p.shape))
                off += p.numel()
                self._bucket_of[b.indices[j]] = k
                self._slot_of[b.indices[j]] = j
            b.pending = len(b.params)
        self._buckets = buckets

    # ---- forward ---------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        if self._expect_sync and self._launched < len(self._buckets) and any(self._ready):
            missing = [i for i, r in enumerate(self._ready) if not r]
            raise RuntimeError(_UNFINISHED % (self.process_group.rank(), missing))
        if self.require_forward_param_sync and self.broadcast_buffers:
            bufs = list(self.module.buffers())
            if bufs:
                self._sync_module_states(bufs)
        if self.device_ids is not None:
            inputs = _to_device(inputs, self.device)
            kwargs = _to_device(kwargs, self.device)
        output = self.module(*inputs, **kwargs)
        self._prepare_for_backward(output)
        return output

    def _prepare_for_backward(self, output):
        self._expect_sync = is_grad_enabled() and self.require_backward_grad_sync
        self._ready = [False] * len(self._params)
        self._launched = 0
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._locally_unused = set()
        if not self._expect_sync or not self.find_unused_parameters:
            return
        used = set()
        seen = set()
        stack = [t.grad_fn for t in _tensors_in(output, []) if t.grad_fn is not None]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if var is not None:
                used.add(id(var))
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        for i, p in enumerate(self._params):
            if id(p) not in used:
                self._locally_unused.add(i)
                self._views(i).zero_()
                self._mark_ready(i)

    # ---- backward: hooks, buckets, the final wait ----------------------------------------------

    def _views(self, i):
        return self._buckets[self._bucket_of[i]].views[self._slot_of[i]]

    def _make_hook(self, i):
        from ... import no_grad

        def hook(param):
            if not self._expect_sync or self._ready[i]:
                return
            grad = param.grad
            view = self._views(i)
            with no_grad():
                if grad is None:
                    view.zero_()
                elif grad.data_ptr() != view.data_ptr():
                    view.copy_(grad)
                self._mark_ready(i)
        return hook

    def _mark_ready(self, i):
        self._ready[i] = True
        b = self._buckets[self._bucket_of[i]]
        b.pending -= 1
        if b.pending:
            return
        # Buckets are launched in index order, whatever order they fill in:
        # every rank must issue the same collectives in the same order.
        from ... import distributed as dist
        buckets = self._buckets
        while self._launched < len(buckets) and buckets[self._launched].pending == 0:
            nb = buckets[self._launched]
            nb.work = self.process_group.allreduce([nb.buffer], dist.ReduceOp.AVG)
            self._launched += 1
        if self._launched == len(buckets):
            self._finalize()

    def _finalize(self):
        """The caller's stream waits for every bucket; .grad gets the averages."""
        from ... import no_grad
        self._expect_sync = False
        with no_grad():
            for b in self._buckets:
                b.work.wait()
                b.work = None
                for j, p in enumerate(b.params):
                    view = b.views[j]
                    if p.grad is None:
                        p.grad = view if self.gradient_as_bucket_view else view.clone()
                    elif p.grad.data_ptr() != view.data_ptr():
                        if self.gradient_as_bucket_view and p.grad.shape == view.shape:
                            p.grad = view
                        else:
                            p.grad.copy_(view)

    # ---- the rest of torch's surface -----------------------------------------------------------

    @contextlib.contextmanager
    def no_sync(self):
        """Inside it, backward accumulates .grad locally without communication."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _get_ddp_logging_data(self):
        return {"bucket_cap_bytes": self.bucket_bytes_cap, "num_buckets": len(self._buckets),
                "find_unused_parameters": self.find_unused_parameters,
                "gradient_as_bucket_view": self.gradient_as_bucket_view}

    def _set_static_graph(self):
        self.static_graph = True

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("DistributedDataParallel.register_comm_hook is not provided by "
                                  "pycuda_sem: gradients are averaged with ReduceOp.AVG")

    def join(self, *args, **kwargs):
        raise NotImplementedError("DistributedDataParallel.join (uneven inputs) is not provided "
                                  "by pycuda_sem")
