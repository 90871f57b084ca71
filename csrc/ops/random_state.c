/* random_state.c: the random generators' state, one (seed, Philox offset)
 * for the CPU and one per CUDA device, and the functions that seed them and
 * read or restore them (manual_seed, seed, initial_seed, get/set_rng_state
 * and their cuda.* forms). random.c's fills draw blocks through
 * pcs_rng_reserve.
 *
 * Seeding needs no GPU: the CUDA states are plain host memory, as PyTorch's
 * lazy seeding is, so manual_seed works on a machine without one. */
#include "ops/random.h"
#include "runtime/device.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/scalar.h"
#include "tensor/copy.h"

static pcs_gen cpu_gen = {PCS_DEFAULT_SEED, 0};
static pcs_gen cuda_gens[PCS_MAX_DEVICES];
static bool cuda_gens_ready = false;

/* The state of `device` (-1: the CPU). */
static pcs_gen *gen_of(int device)
{
    if (!cuda_gens_ready) {
        for (int i = 0; i < PCS_MAX_DEVICES; i++)
            cuda_gens[i] = (pcs_gen){PCS_DEFAULT_SEED, 0};
        cuda_gens_ready = true;
    }
    return device < 0 ? &cpu_gen : &cuda_gens[device];
}

static void seed_all(uint64_t seed)
{
    gen_of(-1)->seed = seed;
    cpu_gen.offset = 0;
    for (int i = 0; i < PCS_MAX_DEVICES; i++)
        cuda_gens[i] = (pcs_gen){seed, 0};
}

/* A seed from the OS (seed(), cuda.seed()): /dev/urandom, else the clock. */
uint64_t pcs_fresh_seed(void)
{
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&s, sizeof s, 1, f) != 1)
            s = 0;
        fclose(f);
    }
    if (!s) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec;
    }
    /* PyTorch's seeds fit in 63 bits, and scripts store them in int64 */
    return s & 0x7fffffffffffffffULL;
}

int pcs_seed_arg(PyObject *obj, uint64_t *out)
{
    if (!PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "manual_seed expected an int, got %s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *i = PyNumber_Index(obj);
    if (!i)
        return -1;
    /* PyTorch reads a seed as uint64, else as int64 wrapped modulo 2^64, and
     * refuses the rest: the rule for int scalars, so one function keeps it. */
    pcs_scalar s;
    int r = pcs_scalar_from_py(i, &s);
    Py_DECREF(i);
    if (r < 0)
        return -1;
    *out = (uint64_t)s.i;
    return 0;
}

pcs_gen *pcs_default_gen(int device) { return gen_of(device); }

void pcs_gen_reserve(pcs_gen *g, uint64_t blocks, uint64_t *seed, uint64_t *offset)
{
    *seed = g->seed;
    *offset = g->offset;
    g->offset += blocks;
}

void pcs_rng_reserve(int device, uint64_t blocks, uint64_t *seed, uint64_t *offset)
{
    pcs_gen_reserve(gen_of(device), blocks, seed, offset);
}

/* ------------------------------------------------------------------------ */
/* Seeds and states                                                          */

static PyObject *f_manual_seed(PyObject *m, PyObject *seed)
{
    PCS_UNUSED(m);
    uint64_t s;
    if (pcs_seed_arg(seed, &s) < 0)
        return NULL;
    seed_all(s);
    Py_RETURN_NONE;
}

/* default_generator.manual_seed: the CPU generator alone, as in torch
 * (manual_seed() seeds the CUDA ones too). */
static PyObject *f_manual_seed_cpu(PyObject *m, PyObject *seed)
{
    PCS_UNUSED(m);
    uint64_t s;
    if (pcs_seed_arg(seed, &s) < 0)
        return NULL;
    *gen_of(-1) = (pcs_gen){s, 0};
    Py_RETURN_NONE;
}

static PyObject *f_seed(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    uint64_t s = pcs_fresh_seed();
    seed_all(s);
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *f_initial_seed(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyLong_FromUnsignedLongLong(gen_of(-1)->seed);
}

/* States travel as 16-byte uint8 CPU tensors: seed, then offset, little
 * endian (what get_rng_state returns and set_rng_state takes). */
PyObject *pcs_gen_state_tensor(const pcs_gen *g)
{
    int64_t n = 16;
    PcsTensor *t = pcs_tensor_empty(1, &n, PCS_UINT8, -1, false);
    if (!t)
        return NULL;
    memcpy(pcs_tensor_data(t), &g->seed, 8);
    memcpy((char *)pcs_tensor_data(t) + 8, &g->offset, 8);
    return (PyObject *)t;
}

int pcs_gen_state_from(PyObject *obj, pcs_gen *g)
{
    if (!PcsTensor_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "set_rng_state expects a torch.ByteTensor");
        return -1;
    }
    PcsTensor *t = (PcsTensor *)obj;
    if (t->dtype != PCS_UINT8 || pcs_tensor_numel(t) != 16) {
        PyErr_SetString(PyExc_RuntimeError,
                        "RNG state must be a uint8 tensor of 16 bytes (from get_rng_state)");
        return -1;
    }
    PcsTensor *h = pcs_tensor_to(t, PCS_UINT8, -1, false, false, false);
    if (!h)
        return -1;
    PcsTensor *c = pcs_tensor_contiguous(h, false);
    Py_DECREF(h);
    if (!c)
        return -1;
    memcpy(&g->seed, pcs_tensor_data(c), 8);
    memcpy(&g->offset, (char *)pcs_tensor_data(c) + 8, 8);
    Py_DECREF(c);
    return 0;
}

static PyObject *f_get_rng_state(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return pcs_gen_state_tensor(gen_of(-1));
}

static PyObject *f_set_rng_state(PyObject *m, PyObject *state)
{
    PCS_UNUSED(m);
    if (pcs_gen_state_from(state, gen_of(-1)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* The CUDA device a cuda.* random function means: None / 'cuda' -> the
 * current device (no CUDA initialisation needed), an int or device object. */
static int cuda_device_arg(PyObject *obj)
{
    if (!obj || obj == Py_None)
        return pcs_current_device();
    if (PyLong_Check(obj)) {
        long d = PyLong_AsLong(obj);
        if (d == -1 && PyErr_Occurred())
            return -2;
        if (d < 0 || d >= PCS_MAX_DEVICES) {
            PyErr_Format(PyExc_RuntimeError, "invalid device ordinal %ld", d);
            return -2;
        }
        return (int)d;
    }
    int d = pcs_device_arg(obj, -1);
    if (d == -1) {
        PyErr_SetString(PyExc_ValueError, "expected a CUDA device");
        return -2;
    }
    return d;
}

static PyObject *f_cuda_manual_seed(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    uint64_t s;
    if (nargs != 1 || pcs_seed_arg(args[0], &s) < 0)
        return nargs != 1 ? PyErr_Format(PyExc_TypeError, "manual_seed(seed)") : NULL;
    *gen_of(pcs_current_device()) = (pcs_gen){s, 0};
    Py_RETURN_NONE;
}

static PyObject *f_cuda_manual_seed_all(PyObject *m, PyObject *seed)
{
    PCS_UNUSED(m);
    uint64_t s;
    if (pcs_seed_arg(seed, &s) < 0)
        return NULL;
    gen_of(0);
    for (int i = 0; i < PCS_MAX_DEVICES; i++)
        cuda_gens[i] = (pcs_gen){s, 0};
    Py_RETURN_NONE;
}

static PyObject *f_cuda_seed(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    *gen_of(pcs_current_device()) = (pcs_gen){pcs_fresh_seed(), 0};
    Py_RETURN_NONE;
}

static PyObject *f_cuda_seed_all(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    uint64_t s = pcs_fresh_seed();
    gen_of(0);
    for (int i = 0; i < PCS_MAX_DEVICES; i++)
        cuda_gens[i] = (pcs_gen){s, 0};
    Py_RETURN_NONE;
}

static PyObject *f_cuda_initial_seed(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyLong_FromUnsignedLongLong(gen_of(pcs_current_device())->seed);
}

static PyObject *f_cuda_get_rng_state(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    int d = cuda_device_arg(nargs > 0 ? args[0] : NULL);
    return d < 0 ? NULL : pcs_gen_state_tensor(gen_of(d));
}

static PyObject *f_cuda_set_rng_state(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs < 1)
        return PyErr_Format(PyExc_TypeError, "set_rng_state(new_state, device='cuda')");
    int d = cuda_device_arg(nargs > 1 ? args[1] : NULL);
    if (d < 0 || pcs_gen_state_from(args[0], gen_of(d)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef random_state_methods[] = {
    {"_manual_seed", f_manual_seed, METH_O, "Seeds the CPU and every CUDA generator."},
    {"_manual_seed_cpu", f_manual_seed_cpu, METH_O, "Seeds the CPU generator alone."},
    {"_seed", f_seed, METH_NOARGS, "Seeds every generator from the OS; returns the seed."},
    {"initial_seed", f_initial_seed, METH_NOARGS, "The CPU generator's seed."},
    {"get_rng_state", f_get_rng_state, METH_NOARGS, "The CPU generator state (uint8 tensor)."},
    {"set_rng_state", f_set_rng_state, METH_O, "Restores the CPU generator state."},
    {"_cuda_manual_seed", (PyCFunction)(void (*)(void))f_cuda_manual_seed, METH_FASTCALL, NULL},
    {"_cuda_manual_seed_all", f_cuda_manual_seed_all, METH_O, NULL},
    {"_cuda_seed", f_cuda_seed, METH_NOARGS, NULL},
    {"_cuda_seed_all", f_cuda_seed_all, METH_NOARGS, NULL},
    {"_cuda_initial_seed", f_cuda_initial_seed, METH_NOARGS, NULL},
    {"_cuda_get_rng_state", (PyCFunction)(void (*)(void))f_cuda_get_rng_state, METH_FASTCALL, NULL},
    {"_cuda_set_rng_state", (PyCFunction)(void (*)(void))f_cuda_set_rng_state, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

int pcs_random_state_init(PyObject *module) { return PyModule_AddFunctions(module, random_state_methods); }
