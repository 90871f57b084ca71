/* index_check.h: the range-check records of CUDA indexing
 * (ops/index_check.c), used by the indexing engine (ops/index_exec.c). */
#ifndef PCS_OPS_INDEX_CHECK_H
#define PCS_OPS_INDEX_CHECK_H

#include "ops/index.h"

typedef struct pcs_index_check pcs_index_check;

/* A record for one launch on `device` (the current device), cleared, or
 * NULL with exception. */
pcs_index_check *pcs_index_check_take(int device);

/* What its launch reports into. need: some index tensor came from the
 * device (as passed to pcs_index_check_finish); without it the launch gets
 * no block counter, so it never touches the record, which goes back at
 * once. */
pcs_index_report pcs_index_check_report(pcs_index_check *c, bool need);

/* The end of a launch that reports into c. r: the launch check's result;
 * none: nothing was launched; need: some index tensor of p came from the
 * device (else every index was checked on the host and c is given back at
 * once). Queues the record (or, under CUDA_LAUNCH_BLOCKING=1, waits and
 * raises), and returns r or -1 with exception; after a failed launch the
 * record is leaked (the kernel may still write it). */
int pcs_index_check_finish(pcs_index_check *c, const pcs_index_plan *p, cudaStream_t st, int device,
                           int r, bool none, bool need);

#endif
