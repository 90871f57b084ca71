/* layout.c: the strides of a new tensor made after another one
 * (layout.h). */
#include "tensor/layout.h"

#include "core/iter.h"
#include "tensor/copy.h"

bool pcs_tensor_dense_strides(const PcsTensor *t, int64_t *out)
{
    if (!pcs_tensor_is_dense(t))
        return false;
    for (int i = 0; i < t->ndim; i++)
        if ((out[i] = t->strides[i]) < 0)
            return false;
    return true;
}

PcsTensor *pcs_tensor_empty_as(PcsTensor *like, int fmt, int dtype, int device, bool pinned)
{
    int64_t strides[PCS_MAX_DIMS];
    if (fmt == PCS_FORMAT_PRESERVE || fmt == PCS_FORMAT_KEEP_DENSE) {
        if (pcs_tensor_is_contiguous(like))
            return pcs_tensor_empty(like->ndim, like->sizes, dtype, device, pinned);
        if (!pcs_tensor_dense_strides(like, strides)) {
            if (fmt == PCS_FORMAT_KEEP_DENSE)
                return pcs_tensor_empty(like->ndim, like->sizes, dtype, device, pinned);
            pcs_iter_operand in = {pcs_tensor_data(like), like->ndim, like->sizes, like->strides,
                                   pcs_itemsize(like->dtype)};
            pcs_iter_output_strides(like->ndim, like->sizes, 1, &in, strides);
        }
    } else if (pcs_format_strides(fmt, like->ndim, like->sizes, strides) < 0) {
        return NULL;
    }
    return pcs_tensor_empty_strided(like->ndim, like->sizes, strides, dtype, device, pinned);
}

bool pcs_tensor_in_format(const PcsTensor *t, int fmt)
{
    if (fmt == PCS_FORMAT_CONTIGUOUS)
        return pcs_tensor_is_contiguous(t);
    return pcs_format_matches(fmt, t->ndim, t->sizes, t->strides);
}
