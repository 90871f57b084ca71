"""Compute: elementwise ops and reductions. Small sizes measure the path from
Python to cudaLaunchKernel (host loop, no sync per call); 1 GiB sizes measure
bandwidth (sync closes each loop; bytes_moved gives GB/s)."""
from harness import Case

N_SMALL = 1024
N_BIG = (1 << 30) // 4  # 1 GiB of float32

SMALL = {
    "pycuda_sem": "a = pcs.ones(%d, device='cuda'); b = pcs.ones(%d, device='cuda')" % (N_SMALL, N_SMALL),
    "torch": "a = torch.ones(%d, device='cuda'); b = torch.ones(%d, device='cuda')" % (N_SMALL, N_SMALL),
    "cupy": "a = cupy.ones(%d, dtype=cupy.float32); b = cupy.ones(%d, dtype=cupy.float32)" % (N_SMALL, N_SMALL),
}
BIG = {
    "pycuda_sem": "a = pcs.ones(%d, device='cuda'); b = pcs.ones(%d, device='cuda')" % (N_BIG, N_BIG),
    "torch": "a = torch.ones(%d, device='cuda'); b = torch.ones(%d, device='cuda')" % (N_BIG, N_BIG),
    "cupy": "a = cupy.ones(%d, dtype=cupy.float32); b = cupy.ones(%d, dtype=cupy.float32)" % (N_BIG, N_BIG),
}
BIG1 = {k: v.split(";")[0] for k, v in BIG.items()}
COPY = {
    "pycuda_sem": BIG1["pycuda_sem"] + "; c = pcs.empty_like(a)",
    "torch": BIG1["torch"] + "; c = torch.empty_like(a)",
    "cupy": BIG1["cupy"] + "; c = cupy.empty_like(a)",
}

TITLE = "Compute"

CASES = [
    # The floor under every small op: one launch of an empty kernel from
    # Python, no result tensor (both libraries' cuda._sleep(0)).
    Case("kernel launch, cuda._sleep(0) (host loop)", "pcs.cuda._sleep(0)", "torch.cuda._sleep(0)",
         None, number=20000),
    # The floor under that: the same empty launch repeated by a C loop, no
    # Python at all, i.e. what the CUDA driver itself costs per launch.
    Case("kernel launch from a C loop (driver floor)", "pcs._C._launch_loop(100)", None, None,
         number=200, count=100),
    Case("a + b, 1024 floats (host loop)", "a + b", "a + b", "a + b", setup=SMALL, number=20000),
    Case("sum, 1024 floats (host loop)", "a.sum()", "a.sum()", "a.sum()", setup=SMALL, number=20000),
    Case("a * 2, 1024 floats (host loop)", "a * 2", "a * 2", "a * 2", setup=SMALL, number=20000),
    Case("a + b, 1 GiB float32", "a + b", "a + b", "a + b", setup=BIG, number=20, repeat=5,
         sync=True, bytes_moved=3 * (1 << 30)),
    Case("copy_ 1 GiB (device-to-device)", "c.copy_(a)", "c.copy_(a)", "c[...] = a", setup=COPY,
         number=20, repeat=5, sync=True, bytes_moved=2 * (1 << 30)),
    Case("sum, 1 GiB float32", "a.sum()", "a.sum()", "a.sum()", setup=BIG1, number=20, repeat=5,
         sync=True, bytes_moved=1 << 30),
    Case("max, 1 GiB float32", "a.max()", "a.max()", "a.max()", setup=BIG1, number=20, repeat=5,
         sync=True, bytes_moved=1 << 30),
    Case("sum(dim=1), 8192 x 32768 float32", "x.sum(1)", "x.sum(1)", "x.sum(1)",
         setup={"pycuda_sem": "x = pcs.ones(8192, 32768, device='cuda')",
                "torch": "x = torch.ones(8192, 32768, device='cuda')",
                "cupy": "x = cupy.ones((8192, 32768), dtype=cupy.float32)"},
         number=20, repeat=5, sync=True, bytes_moved=1 << 30),
]
