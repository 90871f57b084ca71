"""Tensor creation and transfers (issue 3): empty on the GPU, small and large
host<->device copies from pageable and pinned memory, device-to-device and
peer copies. Figures are microseconds per statement; copies report GB/s."""
from harness import Case

TITLE = "Tensors: creation and copies"

MB256 = 256 << 20
GB1 = 1 << 30

SETUP = {
    "pycuda_sem": """
h4 = pcs.empty(1024); d4 = pcs.empty(1024, device='cuda')
hp = pcs.empty(MB256 // 4); hpin = pcs.empty(MB256 // 4, pin_memory=True)
dbig = pcs.empty(MB256 // 4, device='cuda')
d1a = pcs.empty(GB1 // 4, device='cuda'); d1b = pcs.empty(GB1 // 4, device='cuda')
""",
    "torch": """
h4 = torch.empty(1024); d4 = torch.empty(1024, device='cuda')
hp = torch.empty(MB256 // 4); hpin = torch.empty(MB256 // 4, pin_memory=True)
dbig = torch.empty(MB256 // 4, device='cuda')
d1a = torch.empty(GB1 // 4, device='cuda'); d1b = torch.empty(GB1 // 4, device='cuda')
""",
    "cupy": """
import numpy as np
h4 = np.empty(1024, np.float32); d4 = cupy.empty(1024, cupy.float32)
hp = np.empty(MB256 // 4, np.float32)
hpin = np.frombuffer(cupy.cuda.alloc_pinned_memory(MB256), np.float32, MB256 // 4)
dbig = cupy.empty(MB256 // 4, cupy.float32)
d1a = cupy.empty(GB1 // 4, cupy.float32); d1b = cupy.empty(GB1 // 4, cupy.float32)
""",
}
SETUP = {k: "MB256 = %d; GB1 = %d\n" % (MB256, GB1) + v for k, v in SETUP.items()}

CASES = [
    Case("empty(1024, device='cuda') create+free", "pcs.empty(1024, device='cuda')",
         "torch.empty(1024, device='cuda')", "cupy.empty(1024, cupy.float32)", setup=SETUP),
    Case("H2D 4 KB (pageable)", "d4.copy_(h4)", "d4.copy_(h4)", "d4.set(h4)", setup=SETUP,
         number=2000),
    Case("D2H 4 KB (pageable)", "h4.copy_(d4)", "h4.copy_(d4)", "d4.get(out=h4)", setup=SETUP,
         number=2000),
    # Pageable rows are blocking copies (the host waits for the data): the
    # pipeline of csrc/tensor/copy_pageable.c against the driver's staging.
    Case("H2D 256 MiB pageable", "dbig.copy_(hp)", "dbig.copy_(hp)", "dbig.set(hp)",
         setup=SETUP, number=3, repeat=5, bytes_moved=MB256),
    Case("H2D 256 MiB pageable, non_blocking", "dbig.copy_(hp, non_blocking=True)",
         "dbig.copy_(hp, non_blocking=True)", "dbig.set(hp)", setup=SETUP, number=3,
         repeat=5, sync=True, bytes_moved=MB256),
    Case("D2H 256 MiB pageable", "hp.copy_(dbig)", "hp.copy_(dbig)", "dbig.get(out=hp)",
         setup=SETUP, number=3, repeat=5, bytes_moved=MB256),
    Case("H2D 256 MiB pinned", "dbig.copy_(hpin, non_blocking=True)",
         "dbig.copy_(hpin, non_blocking=True)", "dbig.set(hpin)", setup=SETUP, number=3,
         repeat=5, sync=True, bytes_moved=MB256),
    Case("D2H 256 MiB pinned", "hpin.copy_(dbig, non_blocking=True)",
         "hpin.copy_(dbig, non_blocking=True)", "dbig.get(out=hpin)", setup=SETUP, number=3,
         repeat=5, sync=True, bytes_moved=MB256),
    Case("D2D 1 GiB copy", "d1b.copy_(d1a)", "d1b.copy_(d1a)", "d1b[...] = d1a", setup=SETUP,
         number=5, repeat=5, sync=True, bytes_moved=2 * GB1),
]
