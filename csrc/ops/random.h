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

/* One generator's state: its seed and the next Philox block to draw. */
typedef struct pcs_gen {
    uint64_t seed, offset;
} pcs_gen;

/* PyTorch's default seed, so that initial_seed() reads the same before any
 * manual_seed (of the default generators and of a new Generator). */
#define PCS_DEFAULT_SEED 67280421310721ULL

/* The default generator of `device` (-1: the CPU). */
pcs_gen *pcs_default_gen(int device);

/* Reserves `blocks` Philox blocks of g: *seed and *offset are where they
 * start; g's offset moves past them. */
void pcs_gen_reserve(pcs_gen *g, uint64_t blocks, uint64_t *seed, uint64_t *offset);

/* pcs_gen_reserve on `device`'s default generator (-1: the CPU), for a
 * caller that draws its own numbers (dropout). */
void pcs_rng_reserve(int device, uint64_t blocks, uint64_t *seed, uint64_t *offset);

/* What seeding and states share (random_state.c): a seed argument as
 * PyTorch reads one (0, or -1 with exception); a seed from the OS; a state
 * as a 16-byte uint8 CPU tensor (seed, then offset, little endian) and
 * back (0, or -1 with exception). */
int pcs_seed_arg(PyObject *obj, uint64_t *out);
uint64_t pcs_fresh_seed(void);
PyObject *pcs_gen_state_tensor(const pcs_gen *g);
int pcs_gen_state_from(PyObject *obj, pcs_gen *g);

/* The generator a random function draws from for a result on `device`
 * (generator.c): the device's default generator when g is NULL, None or a
 * handle on a default generator (an object with _pcs_default_generator);
 * an independent Generator's own state, when its device type is the
 * result's. NULL with exception otherwise. g is borrowed: the caller holds
 * it for as long as it uses the state. */
pcs_gen *pcs_generator_arg(PyObject *g, int device);

/* Registers _C._Generator, the independent generators' base type. */
int pcs_generator_init(PyObject *module);

#endif
