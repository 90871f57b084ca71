/* Test-only kernels that fault on purpose (tests/test_faults.py): an
 * out-of-range global write, to show how a device fault surfaces. Reached only
 * through pycuda_sem._C._fault(); never used by the library itself. */
#include "kernels.h"

__global__ void fault_kernel(int *p)
{
    /* A write far past any allocation: an illegal address on every GPU. */
    p[(int64_t)1 << 40] = 1;
}

extern "C" void pcs_launch_fault(cudaStream_t stream)
{
    fault_kernel<<<1, 1, 0, stream>>>((int *)(uintptr_t)0x10);
}
