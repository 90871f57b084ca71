/* tensor_type.c: completes the Tensor type object. The tensor layer defines
 * the type with its own methods; the methods and operators that the op
 * files own (arithmetic, reductions, matmul, random fills, new_*) are gathered
 * here, above both layers, so the tensor layer never calls up into ops. */
#include "tensor/tensor.h"

#include <string.h>

#include "autograd/autograd.h"
#include "ops/blas.h"
#include "ops/factories.h"
#include "ops/ops.h"
#include "ops/random.h"
#include "tensor/copy.h"

/* ---- copy and pickle ----------------------------------------------------------
 * __deepcopy__, __copy__ and __reduce_ex__ are Python (_tensor_pickle.py), as
 * torch writes them: they run once per tensor, off the hot path, and follow
 * torch's rules (storage memo, leaves only, rebuild functions) line by line.
 * The type is static, so Python cannot add them: these forward. */

/* pycuda_sem._tensor_pickle.name (borrowed: the module keeps it), or NULL
 * with exception. */
static PyObject *pickle_fn(const char *name)
{
    static PyObject *mod = NULL;
    return pcs_py_attr(&mod, "pycuda_sem._tensor_pickle", name);
}

static PyObject *m_deepcopy(PyObject *self, PyObject *memo)
{
    PyObject *f = pickle_fn("deepcopy");
    return f ? PyObject_CallFunctionObjArgs(f, self, memo, NULL) : NULL;
}

static PyObject *m_copy(PyObject *self, PyObject *unused)
{
    PCS_UNUSED(unused);
    PyObject *f = pickle_fn("shallow_copy");
    return f ? PyObject_CallOneArg(f, self) : NULL;
}

static PyObject *m_reduce_ex(PyObject *self, PyObject *proto)
{
    PyObject *f = pickle_fn("reduce_ex");
    return f ? PyObject_CallFunctionObjArgs(f, self, proto, NULL) : NULL;
}

/* share_memory_ and is_shared: Python (utils/data/_shm.py), which owns the
 * shared-memory files; csrc/tensor/storage_share.c moves the storage. */
static PyObject *shm_fn(const char *name)
{
    static PyObject *mod = NULL;
    return pcs_py_attr(&mod, "pycuda_sem.utils.data._shm", name);
}

static PyObject *m_share_memory_(PyObject *self, PyObject *unused)
{
    PCS_UNUSED(unused);
    PyObject *f = shm_fn("share_memory_");
    return f ? PyObject_CallOneArg(f, self) : NULL;
}

static PyObject *m_is_shared(PyObject *self, PyObject *unused)
{
    PCS_UNUSED(unused);
    PyObject *f = shm_fn("is_shared");
    return f ? PyObject_CallOneArg(f, self) : NULL;
}

static PyMethodDef pickle_methods[] = {
    {"__deepcopy__", m_deepcopy, METH_O,
     "copy.deepcopy: a leaf with its own copy of the storage (views copied with one "
     "memo share it), requires_grad and grad copied."},
    {"__copy__", m_copy, METH_NOARGS, "copy.copy: a new leaf sharing this tensor's memory."},
    {"__reduce_ex__", m_reduce_ex, METH_O,
     "pickle: the storage's bytes (from the host), dtype, device, geometry, requires_grad."},
    {"share_memory_", m_share_memory_, METH_NOARGS,
     "Moves a CPU tensor's storage into shared memory, in place (every view follows); a "
     "no-op for CUDA tensors and when it is there already. Returns self."},
    {"is_shared", m_is_shared, METH_NOARGS,
     "True for CUDA tensors and for CPU tensors whose storage is in shared memory."},
    {NULL, NULL, 0, NULL},
};

static size_t count_methods(const PyMethodDef *m)
{
    size_t n = 0;
    while (m[n].ml_name)
        n++;
    return n;
}

static size_t count_getset(const PyGetSetDef *g)
{
    size_t n = 0;
    while (g[n].name)
        n++;
    return n;
}

int pcs_tensor_type_init(PyObject *m)
{
    pcs_ops_install_number_slots(&pcs_tensor_as_number); /* ops.c: operators, comparisons, op methods */
    /* One method table for the type, gathered from the files that own the
     * methods (allocated once, lives as long as the process). */
    const PyMethodDef *parts[] = {pcs_tensor_core_methods, pcs_tensor_view_methods,
                                  pcs_tensor_copy_methods, pcs_tensor_random_methods, pcs_tensor_blas_methods,
                                  pcs_tensor_ops_methods, pcs_tensor_factory_methods,
                                  pcs_ag_tensor_methods, pickle_methods};
    size_t total = 1;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        total += count_methods(parts[i]);
    PyMethodDef *all = PyMem_RawCalloc(total, sizeof(PyMethodDef));
    if (!all)
        return PyErr_NoMemory(), -1;
    size_t k = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t n = count_methods(parts[i]);
        memcpy(all + k, parts[i], n * sizeof(PyMethodDef));
        k += n;
    }
    size_t ng1 = count_getset(pcs_tensor_core_getset), ng2 = count_getset(pcs_tensor_view_getset);
    size_t ng3 = count_getset(pcs_ag_tensor_getset), ng4 = count_getset(pcs_ops_py_getset);
    PyGetSetDef *gs = PyMem_RawCalloc(ng1 + ng2 + ng3 + ng4 + 1, sizeof(PyGetSetDef));
    if (!gs)
        return PyErr_NoMemory(), -1;
    memcpy(gs, pcs_tensor_core_getset, ng1 * sizeof(PyGetSetDef));
    memcpy(gs + ng1, pcs_tensor_view_getset, ng2 * sizeof(PyGetSetDef));
    memcpy(gs + ng1 + ng2, pcs_ag_tensor_getset, ng3 * sizeof(PyGetSetDef));
    memcpy(gs + ng1 + ng2 + ng3, pcs_ops_py_getset, ng4 * sizeof(PyGetSetDef));
    PcsTensor_Type.tp_methods = all;
    PcsTensor_Type.tp_getset = gs;

    pcs_tensor_as_number.nb_matrix_multiply = pcs_blas_nb_matmul; /* blas.c */
    pcs_tensor_as_number.nb_inplace_matrix_multiply = pcs_blas_nb_imatmul;
    /* autograd wraps the operators last, so every slot above records */
    pcs_ag_wrap_slots(&pcs_tensor_as_number, PcsTensor_Type.tp_as_mapping);
    if (pcs_size_init(m) < 0 || PyType_Ready(&PcsTensor_Type) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "Tensor", (PyObject *)&PcsTensor_Type) < 0)
        return -1;
    if (pcs_copy_init(m) < 0)
        return -1;
    if (pcs_factories_init(m) < 0)
        return -1;
    return pcs_ranges_init(m);
}

