"""torch.autograd.profiler: the older spelling of torch.profiler's
record_function and profile (pycuda_sem.profiler records record_function
ranges, not individual ops)."""
from ..profiler import record_function, EventList, FunctionEventAvg  # noqa: F401
from ..profiler import profile as _profile, ProfilerActivity

__all__ = ["record_function", "profile", "emit_nvtx"]


class profile(_profile):
    """profile(enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, ...):
    the legacy constructor over torch.profiler.profile's recorder."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        acts = [ProfilerActivity.CPU] if use_cpu else []
        if use_cuda or use_device == "cuda":
            acts.append(ProfilerActivity.CUDA)
        self.enabled = enabled
        super().__init__(activities=acts, record_shapes=record_shapes)

    def __enter__(self):
        return self.start() if self.enabled else self

    def __exit__(self, *exc):
        if self.enabled:
            self.stop()
        return False

    def table(self, *args, **kwargs):
        return self.key_averages().table(*args, **kwargs)


class emit_nvtx:
    """torch emits an NVTX range for every op under this context; pycuda_sem
    does not hook individual ops, so entering it raises. record_function
    ranges are NVTX ranges already."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            raise NotImplementedError("autograd.profiler.emit_nvtx: pycuda_sem does not emit an NVTX "
                                      "range per op; record_function ranges are NVTX ranges")
        return self

    def __exit__(self, *exc):
        return False
