/* generator.c: independent random generators (torch.Generator()) and the
 * generator= argument of the random functions.
 *
 * A Generator owns a (seed, Philox offset) pair of its own, on the CPU or
 * on one CUDA device: drawing from it moves its offset and no other, and
 * seeding it leaves the default generators alone. The fills take the same
 * kernels either way (random.c, kernels/random.cu): only where the seed and
 * offset come from differs. _C._Generator is the C half; pycuda_sem.Generator
 * (random.py) subclasses it to parse the device and to print. */
#include "ops/random.h"

#include "core/common.h"

typedef struct {
    PyObject_HEAD
    pcs_gen st;
    int device; /* -1: the CPU, else a CUDA device index */
} PcsGenerator;

static PyTypeObject PcsGenerator_Type;

#define PcsGenerator_Check(o) PyObject_TypeCheck(o, &PcsGenerator_Type)

/* _Generator(device_index=-1): a fresh generator at PyTorch's default seed. */
static int Generator_init(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device_index", NULL};
    int device = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:_Generator", names, &device))
        return -1;
    if (device < -1 || device >= PCS_MAX_DEVICES) {
        PyErr_Format(PyExc_RuntimeError, "invalid device ordinal %d for a generator", device);
        return -1;
    }
    PcsGenerator *g = (PcsGenerator *)self;
    g->st = (pcs_gen){PCS_DEFAULT_SEED, 0};
    g->device = device;
    return 0;
}

static PyObject *Generator_manual_seed(PyObject *self, PyObject *seed)
{
    uint64_t s;
    if (pcs_seed_arg(seed, &s) < 0)
        return NULL;
    ((PcsGenerator *)self)->st = (pcs_gen){s, 0};
    return Py_NewRef(self);
}

static PyObject *Generator_seed(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    uint64_t s = pcs_fresh_seed();
    ((PcsGenerator *)self)->st = (pcs_gen){s, 0};
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *Generator_initial_seed(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromUnsignedLongLong(((PcsGenerator *)self)->st.seed);
}

static PyObject *Generator_get_state(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return pcs_gen_state_tensor(&((PcsGenerator *)self)->st);
}

static PyObject *Generator_set_state(PyObject *self, PyObject *state)
{
    pcs_gen st;
    if (pcs_gen_state_from(state, &st) < 0)
        return NULL;
    ((PcsGenerator *)self)->st = st;
    return Py_NewRef(self);
}

static PyObject *Generator_device_index(PyObject *self, void *closure)
{
    PCS_UNUSED(closure);
    return PyLong_FromLong(((PcsGenerator *)self)->device);
}

static PyMethodDef generator_methods[] = {
    {"manual_seed", Generator_manual_seed, METH_O, "Seeds this generator (offset back to 0); returns it."},
    {"seed", Generator_seed, METH_NOARGS, "Seeds this generator from the OS; returns the seed."},
    {"initial_seed", Generator_initial_seed, METH_NOARGS, "This generator's seed."},
    {"get_state", Generator_get_state, METH_NOARGS, "This generator's state (16-byte uint8 tensor)."},
    {"set_state", Generator_set_state, METH_O, "Restores a state from get_state; returns the generator."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef generator_getset[] = {
    {"_device_index", Generator_device_index, NULL, "-1 for the CPU, else the CUDA device index", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PcsGenerator_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem._C._Generator",
    .tp_basicsize = sizeof(PcsGenerator),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "An independent random generator: its own seed and Philox offset.",
    .tp_methods = generator_methods,
    .tp_getset = generator_getset,
    .tp_init = Generator_init,
    .tp_new = PyType_GenericNew,
};

pcs_gen *pcs_generator_arg(PyObject *g, int device)
{
    if (!g || g == Py_None)
        return pcs_default_gen(device);
    /* handles on a default generator (default_generator,
     * cuda.default_generators[i]) draw from the result's device's own */
    PyObject *mark = PyObject_GetAttrString(g, "_pcs_default_generator");
    if (mark) {
        Py_DECREF(mark);
        return pcs_default_gen(device);
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return NULL;
    PyErr_Clear();
    if (!PcsGenerator_Check(g)) {
        PyErr_Format(PyExc_TypeError, "generator must be a torch.Generator, not %s", Py_TYPE(g)->tp_name);
        return NULL;
    }
    PcsGenerator *gen = (PcsGenerator *)g;
    if ((gen->device < 0) != (device < 0)) {
        PyErr_Format(PyExc_RuntimeError, "Expected a '%s' device type for generator but found '%s'",
                     device < 0 ? "cpu" : "cuda", gen->device < 0 ? "cpu" : "cuda");
        return NULL;
    }
    return &gen->st;
}

int pcs_generator_init(PyObject *module)
{
    if (PyType_Ready(&PcsGenerator_Type) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "_Generator", (PyObject *)&PcsGenerator_Type);
}
