/* iter.c: the iteration core (see iter.h): operands -> launch plan, the
 * reduction block test, torch's memory-overlap rules.
 *
 * Plan steps, as ATen's TensorIterator: broadcast strides (0 where an
 * operand is broadcast), drop size-1 dims, order the dims by the output's
 * strides (the next operand breaks ties) so that the fastest dim is last,
 * then merge a dim into its outer neighbour wherever every operand allows
 * (stride_outer == size_inner * stride_inner). A transposed or stepped
 * operand keeps its dims; a contiguous one collapses to a single dim. */
#include "core/iter.h"
#include "core/memory_format.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Broadcasting                                                              */

int pcs_iter_broadcast(int nops, const pcs_iter_operand *ops, int64_t *shape, int64_t bad[3])
{
    int ndim = 0;
    for (int i = 0; i < nops; i++)
        if (ops[i].ndim > ndim)
            ndim = ops[i].ndim;
    for (int d = 0; d < ndim; d++)
        shape[d] = 1;
    for (int i = 0; i < nops; i++) {
        for (int d = 0; d < ops[i].ndim; d++) {
            int64_t s = ops[i].sizes[d], *o = &shape[ndim - ops[i].ndim + d];
            if (s == *o || s == 1)
                continue;
            if (*o == 1) {
                *o = s;
                continue;
            }
            bad[0] = *o;
            bad[1] = s;
            bad[2] = d;
            return -1;
        }
    }
    return ndim;
}

/* ------------------------------------------------------------------------ */
/* The plan                                                                  */

static int64_t mag(int64_t x) { return x < 0 ? -x : x; }

/* Does dim a go outside dim b? The first operand whose strides differ (and
 * are both non-zero) decides; otherwise the logical order stays. */
static bool outer_of(const pcs_ew_geom *g, int nops, int a, int b)
{
    for (int k = 0; k < nops; k++) {
        int64_t sa = mag(g->strides[k][a]), sb = mag(g->strides[k][b]);
        if (sa == 0 || sb == 0 || sa == sb)
            continue;
        return sa > sb;
    }
    return a < b;
}

void pcs_iter_build(pcs_iter_plan *p, int ndim, const int64_t *shape, int nops,
                    const pcs_iter_operand *ops)
{
    pcs_ew_geom full;
    memset(p, 0, sizeof *p);
    p->numel = 1;
    for (int d = 0; d < ndim; d++)
        p->numel *= shape[d];
    /* Broadcast strides, size-1 dims dropped. */
    int n = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1)
            continue;
        full.sizes[n] = shape[d];
        for (int k = 0; k < PCS_EW_OPERANDS; k++) {
            int64_t st = 0;
            if (k < nops && ops[k].data) {
                int od = d - (ndim - ops[k].ndim);
                if (od >= 0 && ops[k].sizes[od] != 1)
                    st = ops[k].strides[od];
            }
            full.strides[k][n] = st;
        }
        n++;
    }
    /* Order: insertion sort of dim indices, outermost first. */
    int perm[PCS_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && !outer_of(&full, nops, perm[j - 1], i); j--)
            perm[j] = perm[j - 1];
        perm[j] = i;
    }
    /* Coalesce in that order. */
    pcs_ew_geom *g = &p->geom;
    int k = 0;
    for (int i = 0; i < n; i++) {
        int d = perm[i];
        bool merge = k > 0;
        for (int o = 0; merge && o < nops; o++)
            merge = g->strides[o][k - 1] == full.sizes[d] * full.strides[o][d];
        if (merge) {
            g->sizes[k - 1] *= full.sizes[d];
            for (int o = 0; o < PCS_EW_OPERANDS; o++)
                g->strides[o][k - 1] = full.strides[o][d];
            continue;
        }
        g->sizes[k] = full.sizes[d];
        for (int o = 0; o < PCS_EW_OPERANDS; o++)
            g->strides[o][k] = full.strides[o][d];
        k++;
    }
    g->ndim = k;
    /* 32-bit offsets: the count and every operand's furthest offset fit. */
    bool fits = p->numel <= INT32_MAX;
    for (int o = 0; fits && o < nops; o++) {
        int64_t reach = 0;
        for (int d = 0; d < k; d++)
            reach += (g->sizes[d] - 1) * mag(g->strides[o][d]);
        fits = reach <= INT32_MAX;
    }
    g->index32 = fits;
    /* Contiguous: at most one dim left and every operand with memory walks
     * it with stride 1. */
    bool contig = k <= 1, aligned = true;
    for (int o = 0; o < nops; o++) {
        if (!ops[o].data)
            continue;
        if (k == 1 && g->strides[o][0] != 1)
            contig = false;
        if (((uintptr_t)ops[o].data) % 16 != 0)
            aligned = false;
    }
    p->contiguous = contig;
    p->vectorized = contig && aligned;
}

/* ------------------------------------------------------------------------ */
/* The layout of a new output                                                */

/* torch's TensorIterator order test for dims a and b (stride-0 operands are
 * skipped; equal strides: the smaller dim goes inside): 1 when a is to be
 * the faster of the two, -1 when b is, 0 when no operand decides. */
static int faster_first(int nin, int64_t (*st)[PCS_MAX_DIMS], const int64_t *shape, int a, int b)
{
    for (int k = 0; k < nin; k++) {
        int64_t sa = st[k][a], sb = st[k][b];
        if (sa == 0 || sb == 0)
            continue;
        if (sa != sb)
            return sa < sb ? -1 : 1;
        if (shape[a] > shape[b])
            return 1;
    }
    return 0;
}

/* torch's fast set-up: inputs of the result's shape that are all
 * contiguous give a contiguous result, all channels-last (4-D) a
 * channels-last one, all dense with the very same strides those strides.
 * Returns false when none applies. */
static bool same_layout(int ndim, const int64_t *shape, int nin, const pcs_iter_operand *ins,
                        int64_t *strides)
{
    int n = 0;
    bool contig = true, same = true, cl = ndim == 4;
    const pcs_iter_operand *first = NULL;
    for (int k = 0; k < nin; k++) {
        if (!ins[k].data)
            continue;
        if (ins[k].ndim != ndim || memcmp(ins[k].sizes, shape, ndim * sizeof(int64_t)) != 0)
            return false;
        n++;
        contig = contig && pcs_format_matches(PCS_FORMAT_CONTIGUOUS, ndim, shape, ins[k].strides);
        cl = cl && pcs_format_matches(PCS_FORMAT_CHANNELS_LAST, ndim, shape, ins[k].strides);
        if (!first)
            first = &ins[k];
        else
            same = same && memcmp(first->strides, ins[k].strides, ndim * sizeof(int64_t)) == 0;
    }
    if (!n)
        return false;
    /* neither format can fail here: channels-last was only matched at 4 dims */
    if (contig || cl)
        return pcs_format_strides(contig ? PCS_FORMAT_CONTIGUOUS : PCS_FORMAT_CHANNELS_LAST, ndim, shape,
                                  strides) == 0;
    if (same && pcs_iter_dense(first)) {
        memcpy(strides, first->strides, ndim * sizeof(int64_t));
        return true;
    }
    return false;
}

void pcs_iter_output_strides(int ndim, const int64_t *shape, int nin, const pcs_iter_operand *ins,
                             int64_t *strides)
{
    if (same_layout(ndim, shape, nin, ins, strides))
        return;
    int64_t st[PCS_EW_OPERANDS][PCS_MAX_DIMS];
    int n = 0;
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++)
        numel *= shape[d];
    for (int k = 0; k < nin && n < PCS_EW_OPERANDS; k++) {
        if (!ins[k].data)
            continue;
        for (int d = 0; d < ndim; d++) {
            int od = d - (ndim - ins[k].ndim);
            bool bcast = od < 0 || (ins[k].sizes[od] == 1 && shape[d] != 1);
            st[n][d] = bcast ? 0 : mag(ins[k].strides[od]);
        }
        n++;
    }
    /* perm[0] is the fastest dim; start from the logical order (last dim
     * fastest) and let the inputs reorder it by insertion, as torch does. */
    int perm[PCS_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        perm[i] = ndim - 1 - i;
    if (numel > 0) {
        for (int i = 1; i < ndim; i++) {
            int d1 = i;
            for (int d0 = i - 1; d0 >= 0; d0--) {
                int c = faster_first(n, st, shape, perm[d0], perm[d1]);
                if (c > 0) {
                    int t = perm[d0];
                    perm[d0] = perm[d1];
                    perm[d1] = t;
                    d1 = d0;
                } else if (c < 0) {
                    break;
                }
            }
        }
    }
    int64_t next = 1;
    for (int i = 0; i < ndim; i++) {
        strides[perm[i]] = next;
        next *= shape[perm[i]] > 1 ? shape[perm[i]] : 1;
    }
}

/* ------------------------------------------------------------------------ */
/* Reductions                                                                */

/* The dims of size > 1 in memory order, outermost first (a stable
 * insertion by stride) into perm; their count, or -1 unless the strides
 * pack the elements densely. */
static int memory_order(int ndim, const int64_t *sizes, const int64_t *strides, int *perm)
{
    int n = 0;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] == 1)
            continue;
        int j = n++;
        for (; j > 0 && strides[perm[j - 1]] < strides[d]; j--)
            perm[j] = perm[j - 1];
        perm[j] = d;
    }
    int64_t expect = 1;
    for (int i = n - 1; i >= 0; i--) {
        if (strides[perm[i]] != expect)
            return -1;
        expect *= sizes[perm[i]];
    }
    return n;
}

bool pcs_iter_reduce_blocks(int ndim, const int64_t *sizes, const int64_t *strides,
                            const bool *mask, int64_t *A, int64_t *K, int64_t *B)
{
    *A = *K = *B = 1;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] == 0) { /* nothing to read: any [A, K, B] of the right counts */
            for (int e = 0; e < ndim; e++)
                *(mask[e] ? K : A) *= sizes[e];
            return true;
        }
    }
    /* Dense, and in memory order: kept* reduced* kept*, kept ascending. */
    int perm[PCS_MAX_DIMS], n = memory_order(ndim, sizes, strides, perm);
    if (n < 0)
        return false;
    int phase = 0, last_kept = -1; /* 0 before the run, 1 in it, 2 after */
    for (int i = 0; i < n; i++) {
        int d = perm[i];
        if (mask[d]) {
            if (phase == 2)
                return false;
            phase = 1;
            *K *= sizes[d];
        } else {
            if (d < last_kept)
                return false;
            last_kept = d;
            if (phase == 1)
                phase = 2;
            *(phase == 0 ? A : B) *= sizes[d];
        }
    }
    return true;
}

bool pcs_iter_reduce_split(int ndim, const int64_t *sizes, const int64_t *strides,
                           const bool *mask, int64_t blk[5])
{
    for (int d = 0; d < ndim; d++)
        if (sizes[d] == 0)
            return false; /* the one-pass path handles empty inputs */
    int perm[PCS_MAX_DIMS], n = memory_order(ndim, sizes, strides, perm);
    if (n < 0)
        return false;
    /* Memory order must read kept* reduced+ kept* reduced+ kept*, the kept
     * dims ascending: blocks P, K1, M, K2, Q. */
    for (int i = 0; i < 5; i++)
        blk[i] = 1;
    int slot = 0, last_kept = -1; /* even slots kept, odd reduced */
    for (int i = 0; i < n; i++) {
        int d = perm[i];
        bool red = mask[d];
        if (red != (slot % 2 == 1)) {
            slot++;
            if (slot > 4)
                return false;
        }
        if (!red) {
            if (d < last_kept)
                return false;
            last_kept = d;
        }
        blk[slot] *= sizes[d];
    }
    return slot >= 3; /* two reduced runs; one run is pcs_iter_reduce_blocks' */
}

/* ------------------------------------------------------------------------ */
/* Overlap                                                                   */

bool pcs_iter_dense(const pcs_iter_operand *t)
{
    int perm[PCS_MAX_DIMS];
    return memory_order(t->ndim, t->sizes, t->strides, perm) >= 0;
}

static int64_t numel_of(const pcs_iter_operand *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->sizes[d];
    return n;
}

int pcs_iter_check_overlap(const pcs_iter_operand *out, int nin, const pcs_iter_operand *ins)
{
    if (numel_of(out) == 0)
        return 0;
    for (int d = 0; d < out->ndim; d++)
        if (out->strides[d] == 0 && out->sizes[d] > 1) {
            PyErr_SetString(PyExc_RuntimeError,
                            "unsupported operation: more than one element of the written-to tensor "
                            "refers to a single memory location. Please clone() the tensor before "
                            "performing the operation.");
            return -1;
        }
    if (!pcs_iter_dense(out))
        return 0; /* torch's "too hard": not checked */
    const char *ob = out->data, *oe = ob + numel_of(out) * out->itemsize;
    for (int i = 0; i < nin; i++) {
        const pcs_iter_operand *t = &ins[i];
        if (!t->data || numel_of(t) == 0 || !pcs_iter_dense(t))
            continue;
        const char *b = t->data, *e = b + numel_of(t) * t->itemsize;
        bool partial;
        if (b == ob && e == oe)
            partial = t->ndim != out->ndim ||
                      memcmp(t->strides, out->strides, t->ndim * sizeof(int64_t)) != 0;
        else
            partial = b < oe && ob < e;
        if (partial) {
            PyErr_SetString(PyExc_RuntimeError,
                            "unsupported operation: some elements of the input tensor and the "
                            "written-to tensor refer to a single memory location. Please clone() "
                            "the tensor before performing the operation.");
            return -1;
        }
    }
    return 0;
}
