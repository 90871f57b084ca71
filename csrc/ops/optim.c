/* optim.c: the multi-tensor optimizer steps that torch.optim calls on CUDA
 * (pycuda_sem/optim/): _C._fused_adam_, _fused_sgd_, _fused_adagrad_ and
 * _fused_rmsprop_, private, as torch's _fused_adam_ is.
 *
 * Each call updates a whole list of parameters with their gradients and
 * optimizer state in a handful of launches (kernels/optim.cu: up to
 * PCS_OPTIM_BATCH tensors a launch, their pointers passed as kernel
 * parameters), instead of one launch per tensor per elementwise op.
 *
 * The lists are checked before anything runs, so a bad call changes
 * nothing: equal lengths, every tensor a contiguous CUDA tensor of one
 * device and one floating dtype (float16, bfloat16, float32, float64), each
 * state tensor shaped as its parameter. Tensors that do not qualify are the
 * Python side's to route to the composed update; here they raise.
 *
 * Step counters are 0-dim CPU float tensors, as torch keeps them for
 * non-capturable optimizers. The call increments each by one and uses the
 * new value for that tensor's bias corrections, computed here in double:
 * reading a CPU scalar costs no synchronisation. Every tensor written
 * (params, state, steps) has its version counter bumped, as an in-place op
 * would. */
#include "ops/ops.h"

#include <math.h>
#include <string.h>

#include "kernels/optim.h"
#include "runtime/device.h"
#include "runtime/stream.h"

#define T(o) ((PcsTensor *)(o))

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */

typedef struct {
    const char *fname;
    /* by role (optim.h): tuples that own their tensors, NULL for a role the
     * rule does not use */
    PyObject *lists[PCS_OPTIM_LISTS];
    PyObject *steps; /* tuple of step tensors, or NULL */
    Py_ssize_t n;
    int device, dtype;
} optim_call;

static void call_clear(optim_call *c)
{
    for (int l = 0; l < PCS_OPTIM_LISTS; l++)
        Py_CLEAR(c->lists[l]);
    Py_CLEAR(c->steps);
}

/* obj, a sequence of tensors, as a tuple (new reference) in *out; None
 * gives NULL when the list may be absent. -1 with exception otherwise. */
static int take_list(const char *fname, const char *what, PyObject *obj, bool may_be_none,
                     PyObject **out)
{
    *out = NULL;
    if (obj == Py_None && may_be_none)
        return 0;
    if (obj == Py_None || PcsTensor_Check(obj) || !PySequence_Check(obj) || PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be a list of Tensors, not %.100s",
                     fname, what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *tup = PySequence_Tuple(obj);
    if (!tup)
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tup); i++) {
        PyObject *it = PyTuple_GET_ITEM(tup, i);
        if (!PcsTensor_Check(it)) {
            PyErr_Format(PyExc_TypeError, "%s(): expected a Tensor as element %zd of '%s', not %.100s",
                         fname, i, what, Py_TYPE(it)->tp_name);
            Py_DECREF(tup);
            return -1;
        }
    }
    *out = tup;
    return 0;
}

static bool optim_dtype(int dtype)
{
    return dtype == PCS_FLOAT16 || dtype == PCS_BFLOAT16 || dtype == PCS_FLOAT32 ||
           dtype == PCS_FLOAT64;
}

/* The checks every list passes before anything is written. */
static int check_call(optim_call *c, const char *const *names)
{
    PyObject *params = c->lists[0];
    c->n = PyTuple_GET_SIZE(params);
    for (int l = 1; l < PCS_OPTIM_LISTS; l++) {
        if (c->lists[l] && PyTuple_GET_SIZE(c->lists[l]) != c->n) {
            PyErr_Format(PyExc_RuntimeError,
                         "%s(): the tensor lists must have the same length, but '%s' has %zd "
                         "tensors and 'params' %zd",
                         c->fname, names[l], PyTuple_GET_SIZE(c->lists[l]), c->n);
            return -1;
        }
    }
    if (c->steps && PyTuple_GET_SIZE(c->steps) != c->n) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): the tensor lists must have the same length, but 'state_steps' has %zd "
                     "tensors and 'params' %zd",
                     c->fname, PyTuple_GET_SIZE(c->steps), c->n);
        return -1;
    }
    c->device = c->n ? T(PyTuple_GET_ITEM(params, 0))->device : 0;
    c->dtype = c->n ? T(PyTuple_GET_ITEM(params, 0))->dtype : PCS_FLOAT32;
    if (c->device < 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): the multi-tensor optimizer step runs on CUDA tensors only, but "
                     "params[0] is on the CPU",
                     c->fname);
        return -1;
    }
    if (!optim_dtype(c->dtype)) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): params must be float16, bfloat16, float32 or float64, not %s",
                     c->fname, pcs_dtypes[c->dtype].name);
        return -1;
    }
    for (Py_ssize_t i = 0; i < c->n; i++) {
        const PcsTensor *p = T(PyTuple_GET_ITEM(params, i));
        for (int l = 0; l < PCS_OPTIM_LISTS; l++) {
            if (!c->lists[l])
                continue;
            const PcsTensor *t = T(PyTuple_GET_ITEM(c->lists[l], i));
            if (t->device != c->device) {
                pcs_device_mismatch(c->device, t->device);
                return -1;
            }
            if (t->dtype != c->dtype) {
                PyErr_Format(PyExc_RuntimeError,
                             "%s(): all tensors must have one dtype, but %s[%zd] is %s and "
                             "params[0] %s",
                             c->fname, names[l], i, pcs_dtypes[t->dtype].name,
                             pcs_dtypes[c->dtype].name);
                return -1;
            }
            if (!pcs_tensor_is_contiguous(t)) {
                PyErr_Format(PyExc_RuntimeError, "%s(): %s[%zd] is not contiguous", c->fname,
                             names[l], i);
                return -1;
            }
            if (t->ndim != p->ndim || memcmp(t->sizes, p->sizes, (size_t)p->ndim * sizeof(int64_t)) != 0) {
                char a[256], b[256];
                pcs_shape_str(t->ndim, t->sizes, a, sizeof a);
                pcs_shape_str(p->ndim, p->sizes, b, sizeof b);
                PyErr_Format(PyExc_RuntimeError,
                             "%s(): %s[%zd] has shape %s but params[%zd] has shape %s", c->fname,
                             names[l], i, a, i, b);
                return -1;
            }
        }
        if (c->steps) {
            const PcsTensor *s = T(PyTuple_GET_ITEM(c->steps, i));
            if (s->device >= 0 || pcs_tensor_numel(s) != 1 ||
                (s->dtype != PCS_FLOAT32 && s->dtype != PCS_FLOAT64)) {
                PyErr_Format(PyExc_RuntimeError,
                             "%s(): state_steps[%zd] must be a one-element float32 or float64 "
                             "CPU tensor",
                             c->fname, i);
                return -1;
            }
        }
    }
    return 0;
}

/* steps[i] += 1; returns the new value, as the tensor holds it. */
static double bump_step(PcsTensor *s)
{
    double v;
    if (s->dtype == PCS_FLOAT32) {
        float *p = pcs_tensor_data(s);
        *p = *p + 1.0f;
        v = *p;
    } else {
        double *p = pcs_tensor_data(s);
        *p = *p + 1.0;
        v = *p;
    }
    s->storage->version++;
    return v;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                   */

/* How a tensor's step count turns into its two constants (optim.h). */
typedef void (*scal_fn)(const pcs_optim_hyper *h, double extra, double step, double *s0, double *s1);

static void adam_scal(const pcs_optim_hyper *h, double extra, double step, double *s0, double *s1)
{
    PCS_UNUSED(extra);
    *s0 = h->lr / (1.0 - pow(h->beta1, step));
    *s1 = sqrt(1.0 - pow(h->beta2, step));
}

static void adagrad_scal(const pcs_optim_hyper *h, double lr_decay, double step, double *s0,
                         double *s1)
{
    *s0 = h->lr / (1.0 + (step - 1.0) * lr_decay);
    *s1 = 0.0;
}

static int launch_batch(optim_call *c, const pcs_optim_hyper *h, pcs_optim_batch *b, cudaStream_t st)
{
    if (b->n == 0)
        return 0;
    if (pcs_launch_optim(c->dtype, h, b, st) < 0) {
        pcs_not_implemented(c->fname, c->dtype);
        return -1;
    }
    b->n = 0;
    return PCS_CHECK_LAUNCH(st, c->fname);
}

/* Checks, increments the steps, launches; returns None or NULL. Consumes
 * the call's lists. */
static PyObject *optim_run(optim_call *c, const char *const *names, const pcs_optim_hyper *h,
                           scal_fn scal, double extra)
{
    int r = check_call(c, names);
    if (r == 0 && c->n)
        r = pcs_cuda_set_device_raw(c->device);
    if (r < 0 || c->n == 0) {
        call_clear(c);
        return r < 0 ? NULL : Py_NewRef(Py_None);
    }
    cudaStream_t st = pcs_current_stream(c->device);
    pcs_optim_batch b;
    memset(&b, 0, sizeof b);
    for (Py_ssize_t i = 0; i < c->n && r == 0; i++) {
        double step = c->steps ? bump_step(T(PyTuple_GET_ITEM(c->steps, i))) : 0.0;
        const PcsTensor *p = T(PyTuple_GET_ITEM(c->lists[0], i));
        int64_t numel = pcs_tensor_numel(p);
        for (int l = 0; l < PCS_OPTIM_LISTS; l++)
            if (c->lists[l] && l != 1)
                T(PyTuple_GET_ITEM(c->lists[l], i))->storage->version++;
        if (numel == 0)
            continue;
        for (int l = 0; l < PCS_OPTIM_LISTS; l++)
            b.ptr[l][b.n] = c->lists[l] ? pcs_tensor_data(T(PyTuple_GET_ITEM(c->lists[l], i))) : NULL;
        b.numel[b.n] = numel;
        b.scal[0][b.n] = b.scal[1][b.n] = 0.0;
        if (scal)
            scal(h, extra, step, &b.scal[0][b.n], &b.scal[1][b.n]);
        if (++b.n == PCS_OPTIM_BATCH)
            r = launch_batch(c, h, &b, st);
    }
    if (r == 0)
        r = launch_batch(c, h, &b, st);
    call_clear(c);
    return r < 0 ? NULL : Py_NewRef(Py_None);
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */

/* _fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
 *              state_steps, *, lr, beta1, beta2, weight_decay, eps, amsgrad,
 *              maximize, adamw) */
static PyObject *fused_adam(PyObject *m, PyObject *args, PyObject *kw)
{
    PCS_UNUSED(m);
    static char *kwlist[] = {"params", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs",
                             "state_steps", "lr", "beta1", "beta2", "weight_decay", "eps",
                             "amsgrad", "maximize", "adamw", NULL};
    PyObject *o[6];
    pcs_optim_hyper h = {.algo = PCS_OPTIM_ADAM, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    int amsgrad = 0, maximize = 0, adamw = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOO|$dddddppp:_fused_adam_", kwlist, &o[0], &o[1],
                                     &o[2], &o[3], &o[4], &o[5], &h.lr, &h.beta1, &h.beta2,
                                     &h.weight_decay, &h.eps, &amsgrad, &maximize, &adamw))
        return NULL;
    h.flags = (amsgrad ? PCS_OPTIM_AMSGRAD : 0) | (maximize ? PCS_OPTIM_MAXIMIZE : 0) |
              (adamw ? PCS_OPTIM_ADAMW : 0);
    static const char *const names[] = {"params", "grads", "exp_avgs", "exp_avg_sqs",
                                        "max_exp_avg_sqs"};
    optim_call c = {.fname = "_fused_adam_"};
    if (take_list(c.fname, names[0], o[0], false, &c.lists[0]) < 0 ||
        take_list(c.fname, names[1], o[1], false, &c.lists[1]) < 0 ||
        take_list(c.fname, names[2], o[2], false, &c.lists[2]) < 0 ||
        take_list(c.fname, names[3], o[3], false, &c.lists[3]) < 0 ||
        take_list(c.fname, names[4], o[4], !amsgrad, &c.lists[4]) < 0 ||
        take_list(c.fname, "state_steps", o[5], false, &c.steps) < 0) {
        call_clear(&c);
        return NULL;
    }
    if (!amsgrad) /* a list passed anyway is not touched */
        Py_CLEAR(c.lists[4]);
    return optim_run(&c, names, &h, adam_scal, 0.0);
}

/* _fused_sgd_(params, grads, momentum_buffers, *, lr, momentum, dampening,
 *             weight_decay, nesterov, maximize, is_first_step) */
static PyObject *fused_sgd(PyObject *m, PyObject *args, PyObject *kw)
{
    PCS_UNUSED(m);
    static char *kwlist[] = {"params", "grads", "momentum_buffers", "lr", "momentum", "dampening",
                             "weight_decay", "nesterov", "maximize", "is_first_step", NULL};
    PyObject *o[3];
    pcs_optim_hyper h = {.algo = PCS_OPTIM_SGD, .lr = 1e-3};
    int nesterov = 0, maximize = 0, first = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|$ddddppp:_fused_sgd_", kwlist, &o[0], &o[1],
                                     &o[2], &h.lr, &h.momentum, &h.dampening, &h.weight_decay,
                                     &nesterov, &maximize, &first))
        return NULL;
    h.flags = (nesterov ? PCS_OPTIM_NESTEROV : 0) | (maximize ? PCS_OPTIM_MAXIMIZE : 0) |
              (first ? PCS_OPTIM_FIRST_STEP : 0);
    static const char *const names[] = {"params", "grads", "momentum_buffers", "", ""};
    optim_call c = {.fname = "_fused_sgd_"};
    bool mom = h.momentum != 0.0;
    if (take_list(c.fname, names[0], o[0], false, &c.lists[0]) < 0 ||
        take_list(c.fname, names[1], o[1], false, &c.lists[1]) < 0 ||
        take_list(c.fname, names[2], o[2], !mom, &c.lists[2]) < 0) {
        call_clear(&c);
        return NULL;
    }
    if (!mom)
        Py_CLEAR(c.lists[2]);
    return optim_run(&c, names, &h, NULL, 0.0);
}

/* _fused_adagrad_(params, grads, state_sums, state_steps, *, lr, lr_decay,
 *                 weight_decay, eps, maximize) */
static PyObject *fused_adagrad(PyObject *m, PyObject *args, PyObject *kw)
{
    PCS_UNUSED(m);
    static char *kwlist[] = {"params", "grads", "state_sums", "state_steps", "lr", "lr_decay",
                             "weight_decay", "eps", "maximize", NULL};
    PyObject *o[4];
    pcs_optim_hyper h = {.algo = PCS_OPTIM_ADAGRAD, .lr = 1e-2, .eps = 1e-10};
    double lr_decay = 0.0;
    int maximize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO|$ddddp:_fused_adagrad_", kwlist, &o[0], &o[1],
                                     &o[2], &o[3], &h.lr, &lr_decay, &h.weight_decay, &h.eps,
                                     &maximize))
        return NULL;
    h.flags = maximize ? PCS_OPTIM_MAXIMIZE : 0;
    static const char *const names[] = {"params", "grads", "state_sums", "", ""};
    optim_call c = {.fname = "_fused_adagrad_"};
    if (take_list(c.fname, names[0], o[0], false, &c.lists[0]) < 0 ||
        take_list(c.fname, names[1], o[1], false, &c.lists[1]) < 0 ||
        take_list(c.fname, names[2], o[2], false, &c.lists[2]) < 0 ||
        take_list(c.fname, "state_steps", o[3], false, &c.steps) < 0) {
        call_clear(&c);
        return NULL;
    }
    return optim_run(&c, names, &h, adagrad_scal, lr_decay);
}

/* _fused_rmsprop_(params, grads, square_avgs, grad_avgs, momentum_buffers,
 *                 state_steps, *, lr, alpha, eps, weight_decay, momentum,
 *                 centered, maximize) */
static PyObject *fused_rmsprop(PyObject *m, PyObject *args, PyObject *kw)
{
    PCS_UNUSED(m);
    static char *kwlist[] = {"params", "grads", "square_avgs", "grad_avgs", "momentum_buffers",
                             "state_steps", "lr", "alpha", "eps", "weight_decay", "momentum",
                             "centered", "maximize", NULL};
    PyObject *o[6];
    pcs_optim_hyper h = {.algo = PCS_OPTIM_RMSPROP, .lr = 1e-2, .alpha = 0.99, .eps = 1e-8};
    int centered = 0, maximize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOO|$dddddpp:_fused_rmsprop_", kwlist, &o[0],
                                     &o[1], &o[2], &o[3], &o[4], &o[5], &h.lr, &h.alpha, &h.eps,
                                     &h.weight_decay, &h.momentum, &centered, &maximize))
        return NULL;
    h.flags = (centered ? PCS_OPTIM_CENTERED : 0) | (maximize ? PCS_OPTIM_MAXIMIZE : 0);
    static const char *const names[] = {"params", "grads", "square_avgs", "grad_avgs",
                                        "momentum_buffers"};
    optim_call c = {.fname = "_fused_rmsprop_"};
    bool mom = h.momentum > 0.0;
    if (take_list(c.fname, names[0], o[0], false, &c.lists[0]) < 0 ||
        take_list(c.fname, names[1], o[1], false, &c.lists[1]) < 0 ||
        take_list(c.fname, names[2], o[2], false, &c.lists[2]) < 0 ||
        take_list(c.fname, names[3], o[3], !centered, &c.lists[3]) < 0 ||
        take_list(c.fname, names[4], o[4], !mom, &c.lists[4]) < 0 ||
        take_list(c.fname, "state_steps", o[5], true, &c.steps) < 0) {
        call_clear(&c);
        return NULL;
    }
    if (!centered)
        Py_CLEAR(c.lists[3]);
    if (!mom)
        Py_CLEAR(c.lists[4]);
    return optim_run(&c, names, &h, NULL, 0.0);
}

#define VK (METH_VARARGS | METH_KEYWORDS)
#define VFN(f) (PyCFunction)(void (*)(void))(f)

PyMethodDef pcs_ops_optim_functions[] = {
    {"_fused_adam_", VFN(fused_adam), VK,
     "_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, "
     "beta1, beta2, weight_decay, eps, amsgrad, maximize, adamw)\n\nOne Adam (adamw=True: AdamW) "
     "step over lists of contiguous CUDA tensors in a few launches; increments each step tensor "
     "(0-dim CPU float) first. max_exp_avg_sqs may be None unless amsgrad."},
    {"_fused_sgd_", VFN(fused_sgd), VK,
     "_fused_sgd_(params, grads, momentum_buffers, *, lr, momentum, dampening, weight_decay, "
     "nesterov, maximize, is_first_step)\n\nOne SGD step over lists of contiguous CUDA tensors; "
     "is_first_step sets each momentum buffer to the gradient (torch's first step)."},
    {"_fused_adagrad_", VFN(fused_adagrad), VK,
     "_fused_adagrad_(params, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, "
     "maximize)\n\nOne Adagrad step over lists of contiguous CUDA tensors."},
    {"_fused_rmsprop_", VFN(fused_rmsprop), VK,
     "_fused_rmsprop_(params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, *, lr, "
     "alpha, eps, weight_decay, momentum, centered, maximize)\n\nOne RMSprop step over lists of "
     "contiguous CUDA tensors (grad_avgs None unless centered, momentum_buffers None unless "
     "momentum > 0)."},
    {NULL, NULL, 0, NULL},
};
