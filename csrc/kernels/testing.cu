// testing.cu: kernels that exist for tests and benchmarks, not for users'
// math. The sleep kernel holds a stream busy for a known number of cycles so
// that tests can observe ordering (a later allocation must not reuse memory
// a busy stream still uses), concurrency (two busy streams overlap) and event
// timing (elapsed_time grows with the cycles). The same kernel with too many
// threads a block is a launch that fails before it runs.
#include "kernels.h"
#include "launch.cuh"

__global__ void sleep_kernel(int64_t cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

extern "C" void pcs_launch_sleep(int64_t cycles, cudaStream_t stream)
{
    pcs::launch_kernel(sleep_kernel, 1, 1, stream, cycles);
}

extern "C" void pcs_launch_bad_config(cudaStream_t stream)
{
    pcs::launch_kernel(sleep_kernel, 1, 4096, stream, (int64_t)0);
}
