/* nccl_lib.c: loading libnccl.so.2 at first use and resolving its entry
 * points (see nccl_lib.h for why NCCL is not linked), and the one place NCCL
 * statuses become Python exceptions.
 *
 * Python: _C._nccl_load(paths) -> the path loaded; _C._nccl_version() ->
 * (major, minor, patch) once loaded. The library is never unloaded: the
 * communicators made from it live until the process ends or they are
 * destroyed, and NCCL's own threads run from its code. */
#include "runtime/nccl_lib.h"

#include <dlfcn.h>
#include <string.h>

static pcs_nccl_api api;
static PyObject *loaded_path; /* str once loaded, else NULL */

const pcs_nccl_api *pcs_nccl(void)
{
    if (!loaded_path) {
        PyErr_SetString(PyExc_RuntimeError,
                        "NCCL is not loaded: create a process group with backend='nccl' first "
                        "(pycuda_sem.distributed loads libnccl.so.2 then)");
        return NULL;
    }
    return &api;
}

/* dlsym each entry point; returns the name of the first missing one. */
static const char *resolve(void *h)
{
#define PCS_SYM(field, name)                                                   \
    do {                                                                       \
        *(void **)(&api.field) = dlsym(h, name);                               \
        if (!api.field)                                                        \
            return name;                                                       \
    } while (0)
    PCS_SYM(GetVersion, "ncclGetVersion");
    PCS_SYM(GetErrorString, "ncclGetErrorString");
    PCS_SYM(GetUniqueId, "ncclGetUniqueId");
    PCS_SYM(CommInitRank, "ncclCommInitRank");
    PCS_SYM(CommDestroy, "ncclCommDestroy");
    PCS_SYM(CommAbort, "ncclCommAbort");
    PCS_SYM(CommGetAsyncError, "ncclCommGetAsyncError");
    PCS_SYM(AllReduce, "ncclAllReduce");
    PCS_SYM(Broadcast, "ncclBroadcast");
    PCS_SYM(Reduce, "ncclReduce");
    PCS_SYM(AllGather, "ncclAllGather");
    PCS_SYM(ReduceScatter, "ncclReduceScatter");
    PCS_SYM(Send, "ncclSend");
    PCS_SYM(Recv, "ncclRecv");
    PCS_SYM(GroupStart, "ncclGroupStart");
    PCS_SYM(GroupEnd, "ncclGroupEnd");
#undef PCS_SYM
    *(void **)(&api.GetLastError) = dlsym(h, "ncclGetLastError"); /* optional */
    return NULL;
}

PyObject *pcs_nccl_load(PyObject *paths)
{
    if (loaded_path)
        return Py_NewRef(loaded_path);
    PyObject *seq = PySequence_Fast(paths, "_nccl_load() expects a sequence of paths");
    if (!seq)
        return NULL;
    PyObject *why = PyList_New(0);
    if (!why) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *p = PySequence_Fast_GET_ITEM(seq, i);
        const char *path = PyUnicode_Check(p) ? PyUnicode_AsUTF8(p) : NULL;
        if (!path) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "_nccl_load() expects str paths");
            goto fail;
        }
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        PyObject *reason;
        if (!h) {
            const char *e = dlerror();
            reason = PyUnicode_FromString(e ? e : path);
        } else {
            const char *missing = resolve(h);
            if (!missing) {
                loaded_path = Py_NewRef(p);
                Py_DECREF(why);
                Py_DECREF(seq);
                return Py_NewRef(loaded_path);
            }
            memset(&api, 0, sizeof api);
            dlclose(h);
            reason = PyUnicode_FromFormat("%s: no symbol %s (NCCL too old?)", path, missing);
        }
        if (!reason || PyList_Append(why, reason) < 0) {
            Py_XDECREF(reason);
            goto fail;
        }
        Py_DECREF(reason);
    }
    PyObject *sep = PyUnicode_FromString("; ");
    PyObject *text = sep ? PyUnicode_Join(sep, why) : NULL;
    Py_XDECREF(sep);
    if (text) {
        PyErr_Format(PyExc_RuntimeError,
                     "the NCCL backend needs libnccl.so.2, which could not be loaded (%U). "
                     "Install the nvidia-nccl-cu13 wheel or put NCCL on LD_LIBRARY_PATH.",
                     text);
        Py_DECREF(text);
    }
fail:
    Py_DECREF(why);
    Py_DECREF(seq);
    return NULL;
}

int pcs_nccl_error(ncclResult_t res, ncclComm_t comm, const char *call, const char *file,
                   int line)
{
    const char *what = loaded_path ? api.GetErrorString(res) : "unknown";
    const char *last = (comm && loaded_path && api.GetLastError) ? api.GetLastError(comm) : NULL;
    PyErr_Format(PyExc_RuntimeError, "NCCL error in %s (%s:%d): %s (ncclResult %d)%s%s", call,
                 file, line, what ? what : "unknown", (int)res, last && *last ? ": " : "",
                 last && *last ? last : "");
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Python                                                                    */

static PyObject *py_nccl_load(PyObject *self, PyObject *paths)
{
    PCS_UNUSED(self);
    return pcs_nccl_load(paths);
}

static PyObject *py_nccl_version(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(self);
    PCS_UNUSED(noargs);
    const pcs_nccl_api *n = pcs_nccl();
    if (!n)
        return NULL;
    int v = 0;
    ncclResult_t r = n->GetVersion(&v);
    if (r != ncclSuccess) {
        pcs_nccl_error(r, NULL, "ncclGetVersion", __FILE__, __LINE__);
        return NULL;
    }
    /* NCCL >= 2.9 encodes major*10000 + minor*100 + patch */
    return Py_BuildValue("(iii)", v / 10000, (v / 100) % 100, v % 100);
}

static PyMethodDef methods[] = {
    {"_nccl_load", py_nccl_load, METH_O,
     "_nccl_load(paths): dlopen the first loadable NCCL library of `paths`; returns its path. "
     "RuntimeError naming each path and why it failed."},
    {"_nccl_version", py_nccl_version, METH_NOARGS,
     "_nccl_version(): (major, minor, patch) of the loaded NCCL."},
    {NULL, NULL, 0, NULL},
};

int pcs_nccl_lib_init(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}
