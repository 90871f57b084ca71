/* optim.h: the door into kernels/optim.cu, the multi-tensor optimizer
 * steps behind torch.optim on CUDA (ops/optim.c calls them).
 *
 * A header of its own rather than more lines in kernels.h: every .cu file
 * includes kernels.h, so the optimizer's declarations living there would
 * tie every kernel's rebuild to them. Same contract as kernels.h: plain C,
 * raw pointers, no Python; the caller checks the launch. */
#ifndef PCS_KERNELS_OPTIM_H
#define PCS_KERNELS_OPTIM_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The update rules (torch's, as its fused kernels write them). */
typedef enum { PCS_OPTIM_ADAM = 0, PCS_OPTIM_SGD, PCS_OPTIM_ADAGRAD, PCS_OPTIM_RMSPROP } pcs_optim_algo;

/* flags of pcs_optim_hyper */
enum {
    PCS_OPTIM_MAXIMIZE = 1,
    PCS_OPTIM_AMSGRAD = 2,    /* Adam: list 4 holds max_exp_avg_sq */
    PCS_OPTIM_ADAMW = 4,      /* Adam: decoupled weight decay */
    PCS_OPTIM_NESTEROV = 8,   /* SGD */
    PCS_OPTIM_FIRST_STEP = 16, /* SGD: the momentum buffer is set to the gradient */
    PCS_OPTIM_CENTERED = 32,  /* RMSprop: list 3 holds grad_avg */
};

/* Hyperparameters of one call, shared by every tensor of it. Doubles, so
 * that float64 parameters step with float64 constants; each kernel converts
 * them once to the type it computes in. Unused fields are ignored. */
typedef struct {
    int algo, flags;
    double lr, weight_decay, eps;
    double beta1, beta2;         /* Adam */
    double momentum, dampening;  /* SGD, RMSprop (momentum) */
    double alpha;                /* RMSprop */
} pcs_optim_hyper;

/* The lists, by role: 0 params (read, written), 1 grads (read only), 2..4
 * the state (read, written): Adam exp_avg, exp_avg_sq, max_exp_avg_sq;
 * SGD momentum_buffer; Adagrad sum; RMSprop square_avg, grad_avg,
 * momentum_buffer. A NULL pointer leaves a role out (its list is not used
 * by the rule). */
#define PCS_OPTIM_LISTS 5

/* Tensors per launch: their pointers and sizes travel as kernel parameters
 * (the multi_tensor_apply idea), and the batch must stay under the 4 KiB
 * that every CUDA version accepts. 48 tensors of 5 lists: ~3.3 KiB. */
#define PCS_OPTIM_BATCH 48

/* One launch's tensors: contiguous, non-empty, all of one dtype; per-tensor
 * constants that depend on the tensor's own step count: Adam: scal[0] =
 * lr / (1 - beta1^step), scal[1] = sqrt(1 - beta2^step); Adagrad: scal[0]
 * = lr / (1 + (step - 1) lr_decay). chunk_start is the launcher's
 * business (filled by it). */
typedef struct {
    void *ptr[PCS_OPTIM_LISTS][PCS_OPTIM_BATCH];
    int64_t numel[PCS_OPTIM_BATCH];
    double scal[2][PCS_OPTIM_BATCH];
    int32_t chunk_start[PCS_OPTIM_BATCH + 1];
    int n;
} pcs_optim_batch;

/* One step of h->algo over the batch's tensors of `dtype` (float16,
 * bfloat16, float32: math in float; float64: in double). Returns 0, or -1
 * for another dtype or algo (nothing launched). */
int pcs_launch_optim(int dtype, const pcs_optim_hyper *h, const pcs_optim_batch *b,
                     cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
