"""Runtime overheads (the foundation): allocation, contexts, queries, events."""
from harness import Case

SETUP = {
    "pycuda_sem": "s = pcs.cuda.Stream(); dev = pcs.device('cuda:0'); S = pcs.UntypedStorage",
    "torch": "s = torch.cuda.Stream(); dev = torch.device('cuda:0'); S = torch.UntypedStorage",
    "cupy": "s = cupy.cuda.Stream(non_blocking=True); D = cupy.cuda.Device(0); "
            "pool = cupy.get_default_memory_pool()",
}

CASES = [
    Case("allocate+free 4 KB", "S(4096, device=dev)", "S(4096, device=dev)",
         "cupy.cuda.alloc(4096)", setup=SETUP),
    Case("with cuda.device(0)", "with pcs.cuda.device(0): pass",
         "with torch.cuda.device(0): pass", "with D: pass", setup=SETUP),
    Case("with cuda.stream(s)", "with pcs.cuda.stream(s): pass",
         "with torch.cuda.stream(s): pass", "with s: pass", setup=SETUP),
    Case("current_stream()", "pcs.cuda.current_stream()", "torch.cuda.current_stream()",
         "cupy.cuda.get_current_stream()", setup=SETUP),
    Case("memory_allocated()", "pcs.cuda.memory_allocated()", "torch.cuda.memory_allocated()",
         "pool.used_bytes()", setup=SETUP),
    Case("Event() + record()", "pcs.cuda.Event().record()", "torch.cuda.Event().record()",
         "cupy.cuda.Event().record()", setup=SETUP),
]
