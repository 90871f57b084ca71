/* nccl_lib.h: NCCL, loaded with dlopen at first use.
 *
 * The module is not linked against NCCL, so `import pycuda_sem` works where
 * it is absent, and the build needs no nccl.h: the few types and entry points
 * used are declared here, with NCCL's ABI (nccl.h of NCCL 2.x; ncclAvg needs
 * 2.10). The Python side finds candidate paths (the loader's own search, the
 * nvidia-nccl wheel under site-packages) and hands them to pcs_nccl_load. */
#ifndef PCS_NCCL_LIB_H
#define PCS_NCCL_LIB_H

#include "core/common.h"

typedef struct pcs_ncclComm *ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
} ncclResult_t;

typedef enum {
    ncclInt8 = 0,
    ncclUint8 = 1,
    ncclInt32 = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6,
    ncclFloat32 = 7,
    ncclFloat64 = 8,
    ncclBfloat16 = 9,
} ncclDataType_t;

typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;

/* The entry points, resolved once by pcs_nccl_load. */
typedef struct {
    ncclResult_t (*GetVersion)(int *version);
    const char *(*GetErrorString)(ncclResult_t result);
    const char *(*GetLastError)(ncclComm_t comm); /* may be NULL (NCCL < 2.13) */
    ncclResult_t (*GetUniqueId)(ncclUniqueId *id);
    ncclResult_t (*CommInitRank)(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
    ncclResult_t (*CommDestroy)(ncclComm_t comm);
    ncclResult_t (*CommAbort)(ncclComm_t comm);
    ncclResult_t (*CommGetAsyncError)(ncclComm_t comm, ncclResult_t *error);
    ncclResult_t (*AllReduce)(const void *send, void *recv, size_t count, ncclDataType_t type,
                              ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*Broadcast)(const void *send, void *recv, size_t count, ncclDataType_t type,
                              int root, ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*Reduce)(const void *send, void *recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*AllGather)(const void *send, void *recv, size_t sendcount,
                              ncclDataType_t type, ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*ReduceScatter)(const void *send, void *recv, size_t recvcount,
                                  ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                  cudaStream_t stream);
    ncclResult_t (*Send)(const void *send, size_t count, ncclDataType_t type, int peer,
                         ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*Recv)(void *recv, size_t count, ncclDataType_t type, int peer,
                         ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
} pcs_nccl_api;

/* The loaded API, or NULL with RuntimeError when pcs_nccl_load has not
 * succeeded yet. */
const pcs_nccl_api *pcs_nccl(void);

/* Tries each path of the sequence `paths` (str) in order with dlopen and
 * resolves the entry points from the first that loads. Returns a new
 * reference to the path loaded, or NULL with RuntimeError naming every path
 * tried and why it failed. Once loaded, later calls return the same path. */
PyObject *pcs_nccl_load(PyObject *paths);

/* Sets RuntimeError for an NCCL status (with ncclGetLastError's detail when
 * there is a communicator) naming the call and where it was made; returns -1. */
int pcs_nccl_error(ncclResult_t res, ncclComm_t comm, const char *call, const char *file,
                   int line);

#define PCS_NCCL_CHECK(call, comm)                                             \
    do {                                                                       \
        ncclResult_t pcs_nres_ = (call);                                       \
        if (pcs_nres_ != ncclSuccess)                                          \
            return pcs_nccl_error(pcs_nres_, (comm), #call, __FILE__, __LINE__); \
    } while (0)

int pcs_nccl_lib_init(PyObject *module);

#endif
