"""Build pycuda_sem._C: C11 host files with the C compiler, .cu files with nvcc.

The CUDA toolkit is found through CUDA_HOME (or CUDA_PATH), else through nvcc on
the PATH, else /usr/local/cuda. GPU architectures come from PYCUDA_SEM_ARCH
(for example "90" or "80;90"), else from the local GPU when nvidia-smi sees one,
else sm_80 and sm_90 with PTX so that newer GPUs can JIT the code.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def find_cuda_home():
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    if os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda"
    sys.exit("pycuda_sem: no CUDA toolkit found; set CUDA_HOME or put nvcc on the PATH")


def local_arches():
    """Compute capabilities of the GPUs nvidia-smi reports, e.g. ['90']."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    caps = sorted({line.strip().replace(".", "") for line in out.stdout.splitlines()
                   if line.strip()})
    return [c for c in caps if c.isdigit()]


def gencode_flags():
    env = os.environ.get("PYCUDA_SEM_ARCH", "").replace(",", ";")
    arches = [a.strip() for a in env.split(";") if a.strip()] or local_arches()
    ptx = False
    if not arches:
        arches, ptx = ["80", "90"], True
    flags = ["-gencode=arch=compute_%s,code=sm_%s" % (a, a) for a in arches]
    if ptx:
        flags.append("-gencode=arch=compute_%s,code=compute_%s" % (arches[-1], arches[-1]))
    return flags


def arch_list():
    """The gencode targets as torch.cuda.get_arch_list() names them
    ("sm_90", "compute_90"), for module.c's _cuda_arch_flags."""
    return " ".join(f.rsplit(",code=", 1)[1] for f in gencode_flags())


CUDA_HOME = find_cuda_home()
CUDA_INC = os.path.join(CUDA_HOME, "include")
CUDA_LIB = os.path.join(CUDA_HOME, "lib64")
if not os.path.isdir(CUDA_LIB):
    CUDA_LIB = os.path.join(CUDA_HOME, "lib")
NVCC = os.path.join(CUDA_HOME, "bin", "nvcc")


class BuildExt(build_ext):
    """Compiles .cu sources with nvcc, the rest with the configured C compiler."""

    def build_extensions(self):
        cc = self.compiler
        cc.src_extensions.append(".cu")
        default_compile = cc._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            if src.endswith(".cu"):
                # hidden visibility: CUB/Thrust/libcu++ instantiate inline
                # variables and vtables (cuda::cuda_error, nvtx statics) that
                # would otherwise be exported as process-wide GNU_UNIQUE
                # symbols, shared with torch's own copies of the same names
                cmd = [NVCC, "-c", src, "-o", obj, "-O3", "-std=c++17",
                       "--compiler-options", "-fPIC,-Wall,-Wextra,-fvisibility=hidden",
                       "-I" + os.path.join(HERE, "csrc")] + gencode_flags()
                if os.environ.get("PYCUDA_SEM_DEBUG"):
                    cmd += ["-lineinfo"]
                self.spawn(cmd)
            else:
                default_compile(obj, src, ext, cc_args, extra_postargs["c"], pp_opts)

        cc._compile = compile_one

        def parallel_compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                             extra_preargs=None, extra_postargs=None, depends=None):
            # setuptools compiles one file at a time; the kernels take most of
            # the build, so compile every object concurrently, .cu files first.
            macros, objects, extra_postargs, pp_opts, build = cc._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = cc._get_cc_args(pp_opts, debug, extra_preargs)

            # An object newer than its source and every header is kept, so a
            # change to one C file rebuilds one object, not every kernel.
            # Device code includes only csrc/kernels/ headers (the layer rule):
            # a .cu file is rebuilt when a header it includes (directly or
            # through another kernels header) changed, so a host header, or a
            # launcher header like kernels/index.h, leaves the others alone.
            def newest(headers):
                return max((os.path.getmtime(h) for h in headers if os.path.exists(h)),
                           default=0.0)

            headers = depends or []
            newest_host = newest(headers)
            include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

            def kernel_headers(path, seen):
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for name in include.findall(text):
                    h = os.path.normpath(os.path.join(os.path.dirname(path), name))
                    if not os.path.exists(h):
                        h = os.path.normpath(os.path.join(HERE, "csrc", name))
                    if os.path.exists(h) and h not in seen:
                        seen.add(h)
                        kernel_headers(h, seen)
                return seen

            def one(obj):
                src, ext = build[obj]
                hdr = newest(kernel_headers(src, set())) if src.endswith(".cu") else newest_host
                if (not self.force and os.path.exists(obj) and os.path.getmtime(obj)
                        >= max(os.path.getmtime(src), hdr)):
                    return
                cc._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

            order = sorted(build, key=lambda o: not build[o][0].endswith(".cu"))
            jobs = int(os.environ.get("PYCUDA_SEM_JOBS", os.cpu_count() or 2))
            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                list(pool.map(one, order))
            return objects

        cc.compile = parallel_compile
        build_ext.build_extensions(self)


c_flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
           "-Wno-cast-function-type", "-fvisibility=hidden",
           "-Werror=implicit-function-declaration"]
if os.environ.get("PYCUDA_SEM_SANITIZE"):
    c_flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-O1", "-g"]
# `make fuzz`: clang, ASan, and libFuzzer's coverage hooks (resolved at run time
# by the preloaded ASan+libFuzzer runtime, so nothing extra is linked in).
if os.environ.get("PYCUDA_SEM_FUZZ"):
    c_flags += ["-fsanitize=address,fuzzer-no-link", "-fno-omit-frame-pointer", "-O1", "-g"]

# One folder a layer (csrc/core, runtime, tensor, ops, autograd, distributed, python;
# kernels for .cu). NCCL is not linked: csrc/runtime/nccl_lib.c dlopens it at first use.
sources = sorted(glob.glob("csrc/*/*.c")) + sorted(glob.glob("csrc/kernels/*.cu"))

ext = Extension(
    "pycuda_sem._C",
    sources=sources,
    # NumPy's C-API headers: csrc/core/numpy_interop.c is the one file that uses them
    include_dirs=["csrc", CUDA_INC, numpy.get_include()],
    library_dirs=[CUDA_LIB],
    runtime_library_dirs=[CUDA_LIB],
    # cudart is linked statically so the module does not depend on where the
    # runtime library lives; cuBLAS and cuFFT are shared libraries. The C++
    # runtime is named by its soname: a plain -lstdc++ takes libstdc++.a where
    # the compiler has no libstdc++.so link (the GPU machine), and that copy's
    # exported locale facet ids (std::numpunct<char>::id ...) then captured
    # libstdc++.so.6's own references, so a later `import torch` crashed
    # formatting a number. --exclude-libs keeps every symbol of the static
    # archives (cudart_static's too) out of the module's dynamic table.
    libraries=["cudart_static", "cublas", "cublasLt", "cufft", "rt", "dl", "pthread",
               ":libstdc++.so.6"],
    extra_compile_args={"c": c_flags},
    extra_link_args=["-Wl,--exclude-libs,ALL"]
    + (["-fsanitize=address,undefined"] if os.environ.get("PYCUDA_SEM_SANITIZE") else []),
    depends=sorted(glob.glob("csrc/**/*.h", recursive=True))
    + sorted(glob.glob("csrc/**/*.cuh", recursive=True)),
    define_macros=[("PY_SSIZE_T_CLEAN", None), ("PCS_ARCH_LIST", '"%s"' % arch_list())],
)

setup(ext_modules=[ext], cmdclass={"build_ext": BuildExt})
