/* dtype.h: dtype objects (torch.float32 ...), their sizes and names, the one
 * type-promotion table and the default dtype.
 *
 * The ids are pcs_dtype from kernels/kernels.h so that host and device code
 * agree; a dtype object is a singleton per id. */
#ifndef PCS_DTYPE_H
#define PCS_DTYPE_H

#include "core/common.h"
#include "kernels/kernels.h"

typedef struct {
    PyObject_HEAD
    int id; /* pcs_dtype */
} PcsDType;

extern PyTypeObject PcsDType_Type;
#define PcsDType_Check(o) PyObject_TypeCheck((o), &PcsDType_Type)

/* Static facts about a dtype. */
typedef struct {
    const char *name;        /* "float32" */
    const char *legacy;      /* "Float" as in FloatTensor */
    const char *np_typestr;  /* "<f4"; NULL where NumPy has no such type */
    int itemsize;
    bool is_floating_point;  /* float16, bfloat16, float32, float64 */
    bool is_complex;
    bool is_signed;
} pcs_dtype_info;

extern const pcs_dtype_info pcs_dtypes[PCS_NUM_DTYPES];

static inline int pcs_itemsize(int dtype) { return pcs_dtypes[dtype].itemsize; }
static inline bool pcs_is_float(int dtype) { return pcs_dtypes[dtype].is_floating_point; }
static inline bool pcs_is_complex(int dtype) { return pcs_dtypes[dtype].is_complex; }
static inline bool pcs_is_integral(int dtype, bool include_bool)
{
    return !pcs_is_float(dtype) && !pcs_is_complex(dtype) &&
           (include_bool || dtype != PCS_BOOL);
}

/* Borrowed reference to the singleton dtype object of `dtype`. */
PyObject *pcs_dtype_object(int dtype);

/* The dtype an argument names: a dtype object, or None (-> `dflt`, which may
 * be -1 to mean "not given"). Returns the id, or -2 with TypeError set. */
int pcs_dtype_arg(PyObject *obj, int dflt);

/* NumPy typestr ("<f4", "|b1" ...) -> id; -1 (no exception) if unsupported. */
int pcs_dtype_from_typestr(const char *typestr);

/* torch.promote_types. */
int pcs_promote_types(int a, int b);

/* The default floating dtype (float32 unless set_default_dtype changed it)
 * and the complex dtype that goes with it. */
int pcs_default_dtype(void);
int pcs_default_complex_dtype(void);

/* The complex dtype whose parts are `real` (float32 -> complex64), and back. */
int pcs_complex_of(int real);
int pcs_real_of(int cplx);

int pcs_dtype_init(PyObject *module);

#endif
