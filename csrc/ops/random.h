/* random.h: generator state (seed, Philox offset) for the CPU and for each
 * CUDA device, and the random fills built on it (random.c, kernels/random.cu,
 * the numbering scheme in kernels/philox.h). */
#ifndef PCS_RANDOM_H
#define PCS_RANDOM_H

#include "tensor/tensor.h"

/* rand_, normal_, uniform_, bernoulli_, exponential_, random_ */
extern PyMethodDef pcs_tensor_random_methods[];

/* Module functions: rand/randn/randint/randperm/..._like, and (through
 * pcs_random_state_init, random_state.c) seeds and states. */
int pcs_random_init(PyObject *module);
int pcs_random_state_init(PyObject *module);

/* Reserves `blocks` Philox blocks of `device`'s generator (-1: the CPU) for a
 * caller that draws its own numbers (dropout): *seed and *offset are where
 * they start; the generator's offset moves past them. */
void pcs_rng_reserve(int device, uint64_t blocks, uint64_t *seed, uint64_t *offset);

#endif
