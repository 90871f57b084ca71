"""The cells of notebook 09_hip_version_checks (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


@notebook("09_hip_version_checks", needs_gpu=False)
def _():
    return [
        md("""
# The HIP note: checking which GPU runtime you have

ROCm builds of PyTorch reuse the `torch.cuda` names, so the device example of the first
notebook is unchanged there. Code that must tell the two apart checks `torch.version`:
`version.hip` is set on ROCm builds, `version.cuda` on CUDA builds. pycuda_sem is a CUDA
build. This notebook runs without a GPU too.
"""),
        code(HEADER),
        code("""
print("torch.version.cuda =", repr(torch.version.cuda))
print("torch.version.hip  =", repr(torch.version.hip))
"""),
        md("""
The note's check. Its branches hold only comments, which Python does not accept as a
block, so each branch prints instead:
"""),
        code("""
if torch.cuda.is_available() and torch.version.hip:
    # do something specific for HIP
    print("HIP build")
elif torch.cuda.is_available() and torch.version.cuda:
    # do something specific for CUDA
    print("CUDA build, CUDA", torch.version.cuda)
else:
    print("no GPU visible")
"""),
        md("""
The HIP note's other points, for pycuda_sem: the device strings are `'cuda'` (neither
`'rocm'` nor `'hip'` is accepted), TF32 and the cuFFT cache are CUDA features, and the
memory-management functions are the same (see `05_memory_management`).
"""),
        code("""
for spec in ("hip", "rocm"):
    try:
        torch.device(spec)
    except RuntimeError as err:
        print("RuntimeError:", err)
"""),
    ]
