/* dlpack.c: zero-copy tensor exchange with other libraries through DLPack
 * capsules (the Python side, Tensor.__dlpack__ and from_dlpack with the
 * stream handshake, is pycuda_sem/utils/dlpack.py).
 *
 *   _to_dlpack(tensor, versioned=False, read_only=False)
 *       -> a "dltensor" (v0.8) or "dltensor_versioned" (v1.0) capsule viewing
 *          the tensor's memory; the capsule keeps the storage alive until the
 *          consumer calls the deleter (or, unconsumed, until the capsule dies)
 *   _from_dlpack(capsule)
 *       -> a tensor over the producer's memory; the capsule is renamed
 *          "used_dltensor[_versioned]" and the producer's deleter runs exactly
 *          once, when the last tensor over that memory dies
 *
 * Ownership follows the DLPack rules: whoever holds an unconsumed capsule owns
 * the managed tensor; consuming it moves the ownership to the consumer. */
#include <string.h>

#include "runtime/device.h"
#include "tensor/dlpack.h"
#include "tensor/tensor.h"

#define CAP_V0 "dltensor"
#define CAP_V0_USED "used_dltensor"
#define CAP_V1 "dltensor_versioned"
#define CAP_V1_USED "used_dltensor_versioned"
#define CAP_OWNER "pycuda_sem.dlpack_import"

/* ------------------------------------------------------------------------ */
/* dtype mapping                                                             */

static int dl_dtype_of(int dtype, DLDataType *out)
{
    out->lanes = 1;
    out->bits = (uint8_t)(pcs_itemsize(dtype) * 8);
    if (dtype == PCS_BOOL)
        out->code = kDLBool;
    else if (dtype == PCS_UINT8)
        out->code = kDLUInt;
    else if (dtype == PCS_BFLOAT16)
        out->code = kDLBfloat;
    else if (pcs_is_complex(dtype))
        out->code = kDLComplex;
    else if (pcs_is_float(dtype))
        out->code = kDLFloat;
    else
        out->code = kDLInt;
    return 0;
}

static int pcs_dtype_of_dl(DLDataType t)
{
    if (t.lanes != 1) {
        PyErr_Format(PyExc_BufferError, "from_dlpack: vector dtypes (lanes=%d) are not supported",
                     (int)t.lanes);
        return -1;
    }
    switch (t.code) {
    case kDLBool:
        if (t.bits == 8)
            return PCS_BOOL;
        break;
    case kDLUInt:
        if (t.bits == 8)
            return PCS_UINT8;
        break;
    case kDLInt:
        switch (t.bits) {
        case 8: return PCS_INT8;
        case 16: return PCS_INT16;
        case 32: return PCS_INT32;
        case 64: return PCS_INT64;
        }
        break;
    case kDLFloat:
        switch (t.bits) {
        case 16: return PCS_FLOAT16;
        case 32: return PCS_FLOAT32;
        case 64: return PCS_FLOAT64;
        }
        break;
    case kDLBfloat:
        if (t.bits == 16)
            return PCS_BFLOAT16;
        break;
    case kDLComplex:
        if (t.bits == 64)
            return PCS_COMPLEX64;
        if (t.bits == 128)
            return PCS_COMPLEX128;
        break;
    }
    PyErr_Format(PyExc_BufferError, "from_dlpack: unsupported DLPack dtype (code %d, %d bits)",
                 (int)t.code, (int)t.bits);
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Export                                                                    */

/* One allocation holds the managed tensor (first, so the deleter's argument
 * is also the Export), the shape and strides it points to, and the storage
 * it keeps alive. The storage, not the tensor: a later resize_/set_ of the
 * tensor must not move memory the consumer is reading. */
typedef struct {
    union {
        DLManagedTensor v0;
        DLManagedTensorVersioned v1;
    } m;
    PyObject *owner;
    int64_t shape[PCS_MAX_DIMS];
    int64_t strides[PCS_MAX_DIMS];
} Export;

static void export_free(Export *e)
{
    /* Consumers may call the deleter from any thread, with or without the
     * GIL; at interpreter exit the storage goes with the process. */
    if (Py_IsInitialized()) {
        PyGILState_STATE g = PyGILState_Ensure();
        Py_XDECREF(e->owner);
        PyGILState_Release(g);
    }
    PyMem_RawFree(e);
}

static void export_deleter_v0(DLManagedTensor *self) { export_free((Export *)self); }
static void export_deleter_v1(DLManagedTensorVersioned *self) { export_free((Export *)self); }

/* An unconsumed capsule owns its managed tensor: release it. A consumed one
 * ("used_...") belongs to the consumer now. */
static void export_capsule_dtor(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, CAP_V0_USED) || PyCapsule_IsValid(cap, CAP_V1_USED))
        return;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb); /* a destructor may run while an exception is set */
    if (PyCapsule_IsValid(cap, CAP_V1)) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, CAP_V1);
        if (m && m->deleter)
            m->deleter(m);
    } else {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, CAP_V0);
        if (m && m->deleter)
            m->deleter(m);
    }
    if (PyErr_Occurred())
        PyErr_WriteUnraisable(cap); /* no caller to raise to */
    PyErr_Restore(et, ev, tb);
}

static PyObject *py_to_dlpack(PyObject *self, PyObject *args)
{
    PCS_UNUSED(self);
    PyObject *tobj;
    int versioned = 0, read_only = 0;
    if (!PyArg_ParseTuple(args, "O!|pp:_to_dlpack", &PcsTensor_Type, &tobj, &versioned,
                          &read_only))
        return NULL;
    PcsTensor *t = (PcsTensor *)tobj;
    Export *e = PyMem_RawCalloc(1, sizeof *e);
    if (!e)
        return PyErr_NoMemory();
    DLTensor *dl = versioned ? &e->m.v1.dl_tensor : &e->m.v0.dl_tensor;
    dl->data = pcs_tensor_data(t);
    dl->byte_offset = 0;
    if (t->device >= 0) {
        dl->device.device_type = kDLCUDA;
        dl->device.device_id = t->device;
    } else {
        /* pinned host memory is kDLCUDAHost, as torch's __dlpack_device__ */
        dl->device.device_type = pcs_tensor_is_pinned(t) ? kDLCUDAHost : kDLCPU;
        dl->device.device_id = 0;
    }
    dl->ndim = t->ndim;
    dl_dtype_of(t->dtype, &dl->dtype);
    memcpy(e->shape, t->sizes, sizeof e->shape);
    memcpy(e->strides, t->strides, sizeof e->strides);
    dl->shape = e->shape;
    dl->strides = e->strides;
    e->owner = Py_NewRef((PyObject *)t->storage);
    PyObject *cap;
    if (versioned) {
        e->m.v1.version.major = PCS_DLPACK_MAJOR;
        e->m.v1.version.minor = PCS_DLPACK_MINOR;
        e->m.v1.manager_ctx = e;
        e->m.v1.deleter = export_deleter_v1;
        e->m.v1.flags = read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
        cap = PyCapsule_New(&e->m.v1, CAP_V1, export_capsule_dtor);
    } else {
        e->m.v0.manager_ctx = e;
        e->m.v0.deleter = export_deleter_v0;
        cap = PyCapsule_New(&e->m.v0, CAP_V0, export_capsule_dtor);
    }
    if (!cap) {
        Py_DECREF(e->owner);
        PyMem_RawFree(e);
    }
    return cap;
}

/* ------------------------------------------------------------------------ */
/* Import                                                                    */

/* The consumer's record of a managed tensor it took over: its deleter runs
 * when the last storage over the memory dies, and only if the import got
 * that far (armed), so a failed import leaves the producer's capsule owning
 * it. */
typedef struct {
    void *managed;
    bool versioned;
    bool armed;
} Import;

static void import_owner_dtor(PyObject *cap)
{
    Import *im = PyCapsule_GetPointer(cap, CAP_OWNER);
    if (!im) {
        PyErr_Clear();
        return;
    }
    if (im->armed) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        if (im->versioned) {
            DLManagedTensorVersioned *m = im->managed;
            if (m->deleter)
                m->deleter(m);
        } else {
            DLManagedTensor *m = im->managed;
            if (m->deleter)
                m->deleter(m);
        }
        if (PyErr_Occurred())
            PyErr_WriteUnraisable(cap);
        PyErr_Restore(et, ev, tb);
    }
    PyMem_Free(im);
}

/* The device a DLTensor's memory is on: -1 for host memory, an ordinal, or
 * -2 with exception. */
static int import_device(DLDevice d)
{
    switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost: /* pinned host memory: readable as host memory */
        return -1;
    case kDLCUDA:
    case kDLCUDAManaged:
        if (pcs_check_device(d.device_id) < 0)
            return -2;
        return d.device_id;
    default:
        PyErr_Format(PyExc_BufferError,
                     "from_dlpack: unsupported device_type %d (only CPU and CUDA memory)",
                     (int)d.device_type);
        return -2;
    }
}

static PyObject *py_from_dlpack(PyObject *self, PyObject *cap)
{
    PCS_UNUSED(self);
    if (!PyCapsule_CheckExact(cap)) {
        PyErr_Format(PyExc_TypeError,
                     "from_dlpack() expects an object with __dlpack__ or a DLPack capsule, "
                     "got %.100s", Py_TYPE(cap)->tp_name);
        return NULL;
    }
    bool versioned;
    void *managed;
    DLTensor *dl;
    if (PyCapsule_IsValid(cap, CAP_V1)) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, CAP_V1);
        if (!m)
            return NULL;
        if (m->version.major > PCS_DLPACK_MAJOR) {
            PyErr_Format(PyExc_BufferError,
                         "from_dlpack: DLPack version %u.%u is newer than the supported %d.%d",
                         m->version.major, m->version.minor, PCS_DLPACK_MAJOR, PCS_DLPACK_MINOR);
            return NULL;
        }
        versioned = true;
        managed = m;
        dl = &m->dl_tensor;
    } else if (PyCapsule_IsValid(cap, CAP_V0)) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, CAP_V0);
        if (!m)
            return NULL;
        versioned = false;
        managed = m;
        dl = &m->dl_tensor;
    } else {
        PyErr_SetString(PyExc_RuntimeError,
                        "from_dlpack received an invalid capsule. Note that DLTensor capsules can "
                        "be consumed only once, so you might have already constructed a tensor "
                        "from it once.");
        return NULL;
    }

    int dtype = pcs_dtype_of_dl(dl->dtype);
    if (dtype < 0)
        return NULL;
    int device = import_device(dl->device);
    if (device == -2)
        return NULL;
    if (dl->ndim < 0 || pcs_check_ndim(dl->ndim, PyExc_RuntimeError) < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_BufferError, "from_dlpack: invalid ndim %d", (int)dl->ndim);
        return NULL;
    }
    int ndim = dl->ndim;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        sizes[i] = dl->shape[i];
        if (sizes[i] < 0) {
            PyErr_SetString(PyExc_BufferError, "from_dlpack: negative size");
            return NULL;
        }
    }
    if (pcs_check_shape(ndim, sizes) < 0)
        return NULL;
    if (dl->strides) {
        for (int i = 0; i < ndim; i++) {
            strides[i] = dl->strides[i];
            if (strides[i] < 0) {
                PyErr_SetString(PyExc_BufferError,
                                "from_dlpack: negative strides are not supported");
                return NULL;
            }
        }
    } else {
        pcs_contiguous_strides(ndim, sizes, strides);
    }
    /* bytes the view reaches: itemsize * (1 + sum((size - 1) * stride)) */
    uint64_t span = 0;
    bool empty = false;
    for (int i = 0; i < ndim; i++)
        empty |= sizes[i] == 0;
    if (!empty) {
        uint64_t last = 0, term;
        for (int i = 0; i < ndim; i++) {
            if (__builtin_mul_overflow((uint64_t)(sizes[i] - 1), (uint64_t)strides[i], &term) ||
                __builtin_add_overflow(last, term, &last))
                goto too_big;
        }
        if (__builtin_add_overflow(last, (uint64_t)1, &last) ||
            __builtin_mul_overflow(last, (uint64_t)pcs_itemsize(dtype), &span) ||
            span > (uint64_t)INT64_MAX)
            goto too_big;
    }

    Import *im = PyMem_Malloc(sizeof *im);
    if (!im)
        return PyErr_NoMemory();
    im->managed = managed;
    im->versioned = versioned;
    im->armed = false;
    PyObject *owner = PyCapsule_New(im, CAP_OWNER, import_owner_dtor);
    if (!owner) {
        PyMem_Free(im);
        return NULL;
    }
    char *data = (char *)dl->data + dl->byte_offset;
    PcsStorage *s = pcs_storage_wrap(data, (size_t)span, owner);
    Py_DECREF(owner); /* the storage holds it now */
    if (!s)
        return NULL;
    s->device = device;
    PcsTensor *t = pcs_tensor_make_view(s, 0, ndim, sizes, strides, dtype);
    Py_DECREF(s);
    if (!t)
        return NULL;
    /* Past every failure: the memory is ours to release, the capsule's is not. */
    if (PyCapsule_SetName(cap, versioned ? CAP_V1_USED : CAP_V0_USED) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    im->armed = true;
    return (PyObject *)t;

too_big:
    PyErr_SetString(PyExc_BufferError, "from_dlpack: the tensor's extent overflows int64");
    return NULL;
}

static PyMethodDef dlpack_methods[] = {
    {"_to_dlpack", py_to_dlpack, METH_VARARGS,
     "_to_dlpack(tensor, versioned=False, read_only=False)\n\nA DLPack capsule viewing the "
     "tensor's memory (\"dltensor\", or \"dltensor_versioned\" for DLPack 1.0)."},
    {"_from_dlpack", py_from_dlpack, METH_O,
     "_from_dlpack(capsule)\n\nA tensor sharing the memory of a DLPack capsule (consumes it)."},
    {NULL, NULL, 0, NULL},
};

int pcs_dlpack_init(PyObject *module) { return PyModule_AddFunctions(module, dlpack_methods); }
