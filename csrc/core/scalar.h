/* scalar.h: one element of any dtype on the host.
 *
 * A pcs_scalar holds a value in the widest form of its kind (int64 for bool
 * and integers, double for floats, two doubles for complex numbers). Loading
 * from and storing to memory of any dtype goes through a table in scalar.c,
 * so CPU casts, fill values, item() and list parsing share one conversion
 * rule set, the same one the GPU cast kernels follow. */
#ifndef PCS_SCALAR_H
#define PCS_SCALAR_H

#include "core/common.h"
#include "core/dtype.h"

typedef enum { PCS_SK_BOOL, PCS_SK_INT, PCS_SK_FLOAT, PCS_SK_COMPLEX } pcs_scalar_kind;

typedef struct {
    pcs_scalar_kind kind;
    int64_t i;     /* BOOL, INT */
    double re, im; /* FLOAT (re), COMPLEX */
    bool u64;      /* INT: a Python int in [2^63, 2^64), i its bit pattern */
} pcs_scalar;

/* Reads the element at p (of `dtype`). */
pcs_scalar pcs_scalar_load(int dtype, const void *p);
/* Writes s converted to `dtype` at p (C casts; complex -> real keeps the real
 * part; anything -> bool is "non-zero"). */
void pcs_scalar_store(int dtype, void *p, pcs_scalar s);

/* The exact [lo, hi] of an integer dtype (not bool). */
void pcs_int_range(int dtype, int64_t *lo, int64_t *hi);

/* PyTorch's checked_convert: 0 when s fits `dtype`, else -1 with RuntimeError
 * "value cannot be converted to type <name> without overflow". Negative ints
 * fit uint8 down to -255 (they wrap, so that a - b can be a + 255 * b);
 * floats must lie in the target's range, and NaN fits no integer. An int in
 * [2^63, 2^64) fits no integer dtype (there is no uint64 here): a fill says
 * so as above, torch.tensor() as "Overflow when unpacking long". */
typedef enum {
    PCS_CHECK_DATA, /* torch.tensor() elements: integer dtypes only, named "int8" */
    PCS_CHECK_FILL, /* full, fill_, setitem: all but bool, named as C++ does: "int8_t" */
} pcs_check_mode;
int pcs_scalar_check_fits(int dtype, pcs_scalar s, pcs_check_mode mode);

/* Python number (bool, int, float, complex, or anything with __index__ /
 * __float__, e.g. NumPy scalars and one-element tensors) -> scalar.
 * -1 with TypeError when obj is not a number. */
int pcs_scalar_from_py(PyObject *obj, pcs_scalar *out);
/* The real part as a double: an int's true value (u64 ones included, which
 * a plain (double)s.i would read as negative), a float's or complex's re.
 * Use it wherever a scalar's value is wanted as a double. */
double pcs_scalar_as_double(pcs_scalar s);
/* Scalar -> Python bool/int/float/complex following the dtype's kind. */
PyObject *pcs_scalar_to_py(int dtype, pcs_scalar s);

/* The dtype torch infers for a Python scalar of this kind. */
int pcs_scalar_default_dtype(pcs_scalar_kind kind);

/* IEEE half and bfloat16 <-> float, round to nearest even. */
float pcs_half_to_float(uint16_t h);
uint16_t pcs_float_to_half(float f);
float pcs_bf16_to_float(uint16_t b);
uint16_t pcs_float_to_bf16(float f);

#endif
