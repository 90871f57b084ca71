// launch.cu: kernel launches through the driver's cuLaunchKernel.
//
// cudaLaunchKernel finds the driver function of a kernel's host stub on
// every call (a lookup keyed by the stub and the current context) before it
// calls cuLaunchKernel. Doing that lookup once per (kernel, context) and
// calling the driver directly measured 0.3 us less a launch on the H100
// machines (3.4 -> 3.1 us, a bare launch loop), which is about a tenth of
// the host time of a small op. The module links only the runtime, so the
// two driver functions come through cudaGetDriverEntryPointByVersion, as
// the memsets of runtime/driver.c do.
//
// Anything unusual falls back to cudaLaunchKernel, so that errors reach the
// caller's PCS_CHECK_LAUNCH (cudaGetLastError) exactly as before: no
// context current on the thread yet (the runtime then creates it), a full
// cache, a failed lookup, and a failed driver launch (a launch that failed
// did not run, so the runtime may try it once more and report why).
#include "launch.cuh"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include <cuda.h>

namespace pcs {
namespace {

typedef CUresult (*drv_launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, CUstream, void **, void **);
typedef CUresult (*drv_ctx_fn)(CUcontext *);
typedef CUresult (*drv_launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

// 0 not resolved yet, 1 resolved, -1 the driver lacks them (runtime only)
std::atomic<int> drv_state{0};
drv_launch_fn drv_launch;
drv_ctx_fn drv_current;
drv_launch_ex_fn drv_launch_ex; // NULL where the driver lacks it: PDL launches go through the runtime
std::mutex drv_lock;

bool resolve_driver()
{
    int s = drv_state.load(std::memory_order_acquire);
    if (s)
        return s > 0;
    std::lock_guard<std::mutex> hold(drv_lock);
    if (!drv_state.load(std::memory_order_relaxed)) {
        void *l = nullptr, *c = nullptr;
        cudaDriverEntryPointQueryResult fl = cudaDriverEntryPointSymbolNotFound, fc = fl;
        cudaError_t el = cudaGetDriverEntryPointByVersion("cuLaunchKernel", &l, 12000, cudaEnableDefault, &fl);
        cudaError_t ec = cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &c, 12000, cudaEnableDefault, &fc);
        bool ok = el == cudaSuccess && ec == cudaSuccess && fl == cudaDriverEntryPointSuccess &&
                  fc == cudaDriverEntryPointSuccess && l && c;
        void *x = nullptr;
        cudaDriverEntryPointQueryResult fx = cudaDriverEntryPointSymbolNotFound;
        if (ok && (cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", &x, 12000, cudaEnableDefault, &fx) !=
                       cudaSuccess ||
                   fx != cudaDriverEntryPointSuccess))
            x = nullptr;
        if (!ok || !x)
            (void)cudaGetLastError(); // not an error of the caller's launch
        drv_launch_ex = (drv_launch_ex_fn)x;
        drv_launch = (drv_launch_fn)l;
        drv_current = (drv_ctx_fn)c;
        drv_state.store(ok ? 1 : -1, std::memory_order_release);
    }
    return drv_state.load(std::memory_order_relaxed) > 0;
}

// (kernel, context) -> driver function, open addressing, entries never
// removed: a context lives as long as the process (nothing in pycuda_sem
// resets a device; a reset would free every allocation too). A slot is
// published by its kernel pointer (release), written last under the lock,
// so a reader that sees the pointer sees the rest.
struct Slot {
    std::atomic<const void *> kernel;
    CUcontext ctx;
    CUfunction fn;
};
constexpr unsigned kSlots = 4096; // ~250 kernels a device, 16 devices
Slot slots[kSlots];

unsigned slot_of(const void *kernel, CUcontext ctx)
{
    uint64_t h = ((uint64_t)(uintptr_t)kernel ^ ((uint64_t)(uintptr_t)ctx << 7)) * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 52) & (kSlots - 1);
}

CUfunction find(const void *kernel, CUcontext ctx)
{
    for (unsigned i = slot_of(kernel, ctx), n = 0; n < kSlots; i = (i + 1) & (kSlots - 1), n++) {
        const void *k = slots[i].kernel.load(std::memory_order_acquire);
        if (!k)
            return nullptr;
        if (k == kernel && slots[i].ctx == ctx)
            return slots[i].fn;
    }
    return nullptr;
}

// The kernel's function in the current context (the runtime's current
// device's primary context, which is what cudaSetDevice makes current).
CUfunction add(const void *kernel, CUcontext ctx)
{
    cudaFunction_t f = nullptr;
    if (cudaGetFuncBySymbol(&f, kernel) != cudaSuccess || !f) {
        (void)cudaGetLastError(); // the runtime launch will report it
        return nullptr;
    }
    std::lock_guard<std::mutex> hold(drv_lock);
    unsigned i = slot_of(kernel, ctx);
    for (unsigned n = 0; n < kSlots; i = (i + 1) & (kSlots - 1), n++) {
        const void *k = slots[i].kernel.load(std::memory_order_relaxed);
        if (k == kernel && slots[i].ctx == ctx)
            return slots[i].fn;
        if (!k) {
            slots[i].ctx = ctx;
            slots[i].fn = (CUfunction)f;
            slots[i].kernel.store(kernel, std::memory_order_release);
            return (CUfunction)f;
        }
    }
    return (CUfunction)f; // full: launch this time, look up again next time
}

// The kernel's driver function in the current context, or NULL (the caller
// then launches through the runtime).
CUfunction driver_function(const void *kernel)
{
    CUcontext ctx = nullptr;
    if (!resolve_driver() || drv_current(&ctx) != CUDA_SUCCESS || !ctx)
        return nullptr;
    CUfunction fn = find(kernel, ctx);
    return fn ? fn : add(kernel, ctx);
}

} // namespace

void launch_raw(const void *kernel, dim3 grid, dim3 block, size_t smem, void **params, cudaStream_t stream)
{
    CUfunction fn = driver_function(kernel);
    if (fn && drv_launch(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)smem, (CUstream)stream,
                         params, nullptr) == CUDA_SUCCESS)
        return;
    (void)cudaLaunchKernel(kernel, grid, block, params, smem, stream);
}

// PYCUDA_SEM_PDL=0 in the environment launches every kernel the plain way:
// a switch for timing the early launch against the plain one in one build,
// and for ruling it out when a result looks wrong. Read once a process.
static bool pdl_enabled()
{
    static const bool on = [] {
        const char *v = getenv("PYCUDA_SEM_PDL");
        return !(v && v[0] == '0' && v[1] == '\0');
    }();
    return on;
}

// cudaLaunchKernelExC with the given launch attributes: the runtime's path
// for the launches that take attributes (the early launch when the driver
// entry is missing, the cluster launch). Returns the launch's own status.
static cudaError_t launch_ex_runtime(const void *kernel, dim3 grid, dim3 block, size_t smem, void **params,
                                     cudaStream_t stream, cudaLaunchAttribute *attrs, unsigned nattrs)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = attrs;
    cfg.numAttrs = nattrs;
    return cudaLaunchKernelExC(&cfg, kernel, params);
}

void launch_raw_pdl(const void *kernel, dim3 grid, dim3 block, size_t smem, void **params, cudaStream_t stream)
{
    if (!pdl_enabled()) {
        launch_raw(kernel, grid, block, smem, params, stream);
        return;
    }
    CUfunction fn = driver_function(kernel);
    if (fn && drv_launch_ex) {
        CUlaunchAttribute attr = {};
        attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig cfg = {};
        cfg.gridDimX = grid.x;
        cfg.gridDimY = grid.y;
        cfg.gridDimZ = grid.z;
        cfg.blockDimX = block.x;
        cfg.blockDimY = block.y;
        cfg.blockDimZ = block.z;
        cfg.sharedMemBytes = (unsigned)smem;
        cfg.hStream = (CUstream)stream;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        if (drv_launch_ex(&cfg, fn, params, nullptr) == CUDA_SUCCESS)
            return;
    }
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    (void)launch_ex_runtime(kernel, grid, block, smem, params, stream, attr, 1);
}

// launch_raw in clusters of cluster_x blocks along x (compute capability
// 9.0), early (pdl.cuh) unless PYCUDA_SEM_PDL=0, through the runtime.
cudaError_t launch_raw_cluster(const void *kernel, dim3 grid, dim3 block, size_t smem, void **params, cudaStream_t stream,
                        unsigned cluster_x)
{
    cudaLaunchAttribute attr[2];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster_x;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[1].val.programmaticStreamSerializationAllowed = 1;
    return launch_ex_runtime(kernel, grid, block, smem, params, stream, attr, pdl_enabled() ? 2 : 1);
}

} // namespace pcs
