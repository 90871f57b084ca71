/* dtype.c: the dtype type, its singletons and aliases, the promotion table
 * and the default dtype.
 *
 * A dtype is a tiny immutable object; identity comparison (`t.dtype is
 * torch.float32`) works because there is exactly one object per id. */
#include "core/dtype.h"

#include <string.h>

const pcs_dtype_info pcs_dtypes[PCS_NUM_DTYPES] = {
    /* name        legacy    typestr itemsize float  complex signed */
    [PCS_BOOL] = {"bool", "Bool", "|b1", 1, false, false, false},
    [PCS_UINT8] = {"uint8", "Byte", "|u1", 1, false, false, false},
    [PCS_INT8] = {"int8", "Char", "|i1", 1, false, false, true},
    [PCS_INT16] = {"int16", "Short", "<i2", 2, false, false, true},
    [PCS_INT32] = {"int32", "Int", "<i4", 4, false, false, true},
    [PCS_INT64] = {"int64", "Long", "<i8", 8, false, false, true},
    [PCS_FLOAT16] = {"float16", "Half", "<f2", 2, true, false, true},
    [PCS_BFLOAT16] = {"bfloat16", "BFloat16", NULL, 2, true, false, true},
    [PCS_FLOAT32] = {"float32", "Float", "<f4", 4, true, false, true},
    [PCS_FLOAT64] = {"float64", "Double", "<f8", 8, true, false, true},
    [PCS_COMPLEX64] = {"complex64", "ComplexFloat", "<c8", 8, false, true, true},
    [PCS_COMPLEX128] = {"complex128", "ComplexDouble", "<c16", 16, false, true, true},
};

/* torch.promote_types, in PyTorch's published table (c10 ScalarType.cpp),
 * re-ordered to our ids. Rows and columns: b1 u1 i1 i2 i4 i8 f2 bf f4 f8 c4 c8. */
#define b1 PCS_BOOL
#define u1 PCS_UINT8
#define i1 PCS_INT8
#define i2 PCS_INT16
#define i4 PCS_INT32
#define i8 PCS_INT64
#define f2 PCS_FLOAT16
#define bf PCS_BFLOAT16
#define f4 PCS_FLOAT32
#define f8 PCS_FLOAT64
#define c4 PCS_COMPLEX64
#define c8 PCS_COMPLEX128
static const unsigned char promote_table[PCS_NUM_DTYPES][PCS_NUM_DTYPES] = {
    /*        b1  u1  i1  i2  i4  i8  f2  bf  f4  f8  c4  c8 */
    /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, c4, c8},
    /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, c4, c8},
    /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, c4, c8},
    /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, c4, c8},
    /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, c4, c8},
    /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, c4, c8},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, c4, c8},
    /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, c4, c8},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, c4, c8},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c8, c8},
    /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c4, c4, c8, c4, c8},
    /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
};
#undef b1
#undef u1
#undef i1
#undef i2
#undef i4
#undef i8
#undef f2
#undef bf
#undef f4
#undef f8
#undef c4
#undef c8

int pcs_promote_types(int a, int b) { return promote_table[a][b]; }

/* The default dtype is process-wide in PyTorch too. */
static int default_dtype = PCS_FLOAT32;

int pcs_default_dtype(void) { return default_dtype; }
int pcs_default_complex_dtype(void) { return pcs_complex_of(default_dtype); }

int pcs_complex_of(int real)
{
    return real == PCS_FLOAT64 ? PCS_COMPLEX128 : PCS_COMPLEX64;
}

int pcs_real_of(int cplx)
{
    return cplx == PCS_COMPLEX128 ? PCS_FLOAT64 : cplx == PCS_COMPLEX64 ? PCS_FLOAT32 : cplx;
}

int pcs_dtype_from_typestr(const char *ts)
{
    /* '=' and '<' both mean native (little-endian) order on our platforms;
     * '|' is "not applicable" for one-byte types. */
    if (!ts || !*ts || ts[0] == '>')
        return -1;
    for (int i = 0; i < PCS_NUM_DTYPES; i++) {
        const char *np = pcs_dtypes[i].np_typestr;
        if (np && strcmp(np + 1, ts + 1) == 0)
            return i;
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* The dtype object                                                          */

static PcsDType dtype_objects[PCS_NUM_DTYPES];

PyObject *pcs_dtype_object(int dtype) { return (PyObject *)&dtype_objects[dtype]; }

int pcs_dtype_arg(PyObject *obj, int dflt)
{
    if (obj == NULL || obj == Py_None)
        return dflt;
    if (PcsDType_Check(obj))
        return ((PcsDType *)obj)->id;
    /* Python's own types, as torch accepts them in dtype= arguments. */
    if (obj == (PyObject *)&PyFloat_Type)
        return PCS_FLOAT64;
    if (obj == (PyObject *)&PyLong_Type)
        return PCS_INT64;
    if (obj == (PyObject *)&PyBool_Type)
        return PCS_BOOL;
    if (obj == (PyObject *)&PyComplex_Type)
        return PCS_COMPLEX128;
    PyErr_Format(PyExc_TypeError, "dtype must be a pycuda_sem.dtype, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -2;
}

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("pycuda_sem.%s", pcs_dtypes[((PcsDType *)self)->id].name);
}

static PyObject *dtype_get_is_floating_point(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyBool_FromLong(pcs_is_float(((PcsDType *)self)->id));
}

static PyObject *dtype_get_is_complex(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyBool_FromLong(pcs_is_complex(((PcsDType *)self)->id));
}

static PyObject *dtype_get_is_signed(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyBool_FromLong(pcs_dtypes[((PcsDType *)self)->id].is_signed);
}

static PyObject *dtype_get_itemsize(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromLong(pcs_itemsize(((PcsDType *)self)->id));
}

static PyObject *dtype_reduce(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    /* Pickles as the module attribute, so identity survives a round trip. */
    return PyUnicode_FromString(pcs_dtypes[((PcsDType *)self)->id].name);
}

static PyObject *dtype_to_complex(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    int id = ((PcsDType *)self)->id;
    if (pcs_is_complex(id))
        return Py_NewRef(self);
    return Py_NewRef(pcs_dtype_object(pcs_complex_of(id)));
}

static PyObject *dtype_to_real(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return Py_NewRef(pcs_dtype_object(pcs_real_of(((PcsDType *)self)->id)));
}

static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_get_is_floating_point, NULL, "float16/bfloat16/float32/float64", NULL},
    {"is_complex", dtype_get_is_complex, NULL, "complex64/complex128", NULL},
    {"is_signed", dtype_get_is_signed, NULL, "can hold negative values", NULL},
    {"itemsize", dtype_get_itemsize, NULL, "bytes per element", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, NULL},
    {"to_complex", dtype_to_complex, METH_NOARGS, "The complex dtype with these parts."},
    {"to_real", dtype_to_real, METH_NOARGS, "The real dtype of a complex dtype's parts."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject PcsDType_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.dtype",
    .tp_basicsize = sizeof(PcsDType),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The element type of a tensor, e.g. pycuda_sem.float32.",
    .tp_repr = dtype_repr,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
};

/* ------------------------------------------------------------------------ */
/* Module functions                                                          */

static PyObject *get_default_dtype(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(self);
    PCS_UNUSED(noargs);
    return Py_NewRef(pcs_dtype_object(default_dtype));
}

static PyObject *set_default_dtype(PyObject *self, PyObject *arg)
{
    PCS_UNUSED(self);
    int d = arg == Py_None ? -1 : pcs_dtype_arg(arg, -2); /* None: the default, not an error */
    if (d == -2)
        return NULL;
    if (d < 0 || !pcs_is_float(d)) {
        PyErr_Format(PyExc_TypeError,
                     "only floating-point types are supported as the default type");
        return NULL;
    }
    default_dtype = d;
    Py_RETURN_NONE;
}

static PyObject *promote_types(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(self);
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "promote_types(type1, type2) takes two dtypes");
        return NULL;
    }
    int a = pcs_dtype_arg(args[0], -2), b = a == -2 ? -2 : pcs_dtype_arg(args[1], -2);
    if (a == -2 || b == -2) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "promote_types expects two dtypes");
        return NULL;
    }
    return Py_NewRef(pcs_dtype_object(pcs_promote_types(a, b)));
}

static PyMethodDef dtype_module_methods[] = {
    {"get_default_dtype", get_default_dtype, METH_NOARGS,
     "The default floating point dtype (float32 unless changed)."},
    {"set_default_dtype", set_default_dtype, METH_O,
     "Sets the default floating point dtype (a floating dtype)."},
    {"promote_types", (PyCFunction)(void (*)(void))promote_types, METH_FASTCALL,
     "The smallest dtype both arguments can be promoted to (PyTorch's table)."},
    {NULL, NULL, 0, NULL},
};

int pcs_dtype_init(PyObject *m)
{
    static const struct {
        const char *alias;
        int id;
    } aliases[] = {
        {"half", PCS_FLOAT16},  {"float", PCS_FLOAT32},    {"double", PCS_FLOAT64},
        {"short", PCS_INT16},   {"int", PCS_INT32},        {"long", PCS_INT64},
        {"cfloat", PCS_COMPLEX64}, {"cdouble", PCS_COMPLEX128},
    };
    if (PyType_Ready(&PcsDType_Type) < 0)
        return -1;
    for (int i = 0; i < PCS_NUM_DTYPES; i++) {
        /* Statically allocated singletons: immortal for our purposes. */
        PyObject_Init((PyObject *)&dtype_objects[i], &PcsDType_Type);
        dtype_objects[i].id = i;
        if (PyModule_AddObjectRef(m, pcs_dtypes[i].name, pcs_dtype_object(i)) < 0)
            return -1;
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (PyModule_AddObjectRef(m, aliases[i].alias, pcs_dtype_object(aliases[i].id)) < 0)
            return -1;
    if (PyModule_AddObjectRef(m, "dtype", (PyObject *)&PcsDType_Type) < 0)
        return -1;
    return PyModule_AddFunctions(m, dtype_module_methods);
}
