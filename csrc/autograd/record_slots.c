/* record_slots.c: the operator slots of Tensor (+ - * / // % ** @, unary
 * - + abs, the in-place forms, x[i] and x[i] = v) wrapped like the methods:
 * pcs_ag_wrap_slots saves the ops' slot functions before PyType_Ready and
 * puts these in their place; each checks the fast path and otherwise hands
 * the call to the common slow path of record.c under the op's name. */
#include "autograd/record.h"

#include "autograd/grad_mode.h"

/* ---- the operator slots ------------------------------------------------------------ */

enum {
    S_ADD, S_SUB, S_MUL, S_DIV, S_FLOORDIV, S_MOD, S_MATMUL,
    S_IADD, S_ISUB, S_IMUL, S_IDIV, S_IFLOORDIV, S_IMOD, S_IMATMUL,
    S_NEG, S_POS, S_ABS, S_POW, S_IPOW, S_GETITEM, S_SETITEM, S_COUNT
};
static const char *const slot_names[S_COUNT] = {
    "add", "sub", "mul", "div", "floor_divide", "remainder", "matmul",
    "add_", "sub_", "mul_", "div_", "floor_divide_", "remainder_", "matmul_",
    "neg", "pos", "abs", "pow", "pow_", "__getitem__", "__setitem__",
};
static PcsAgOp *slots[S_COUNT];
static binaryfunc slot_bin[S_COUNT];
static unaryfunc slot_un[S_COUNT];
static ternaryfunc slot_pow[S_COUNT];
static objobjargproc slot_set;

static PyObject *slot2(int s, PyObject *a, PyObject *b)
{
    PcsAgOp *w = slots[s];
    if (!(w->flags & F_INPLACE) && !(pcs_grad_enabled() && (pcs_ag_is_rg(a) || pcs_ag_is_rg(b))))
        return slot_bin[s](a, b);
    PyObject *args[2] = {a, b};
    return pcs_ag_op_slow(w, args, 2, NULL);
}

static PyObject *slot1(int s, PyObject *a)
{
    if (!(pcs_grad_enabled() && pcs_ag_is_rg(a)))
        return slot_un[s](a);
    return pcs_ag_op_slow(slots[s], &a, 1, NULL);
}

#define BIN(S, fname) static PyObject *fname(PyObject *a, PyObject *b) { return slot2(S, a, b); }
BIN(S_ADD, ag_add) BIN(S_SUB, ag_sub) BIN(S_MUL, ag_mul) BIN(S_DIV, ag_div)
BIN(S_FLOORDIV, ag_floordiv) BIN(S_MOD, ag_mod) BIN(S_MATMUL, ag_matmul)
BIN(S_IADD, ag_iadd) BIN(S_ISUB, ag_isub) BIN(S_IMUL, ag_imul) BIN(S_IDIV, ag_idiv)
BIN(S_IFLOORDIV, ag_ifloordiv) BIN(S_IMOD, ag_imod) BIN(S_IMATMUL, ag_imatmul)

/* ---- x[key]'s node name ----------------------------------------------------------
 * torch names the node of x[key] after the last view op its indexing applied
 * (SelectBackward0, SliceBackward0, UnsqueezeBackward0; AliasBackward0 when
 * none was), or IndexBackward0 when the key holds an advanced index (an
 * integer or bool tensor of one or more dims, a bool, a list). Inside a tuple
 * it skips a slice that starts at 0 with step 1 and stops at or past the
 * dim's end; a lone slice is always applied. A 0-dim integer tensor selects,
 * as an int does. Only the name is decided here: the op itself is __getitem__
 * with its one formula. */
enum { NM_ALIAS, NM_SELECT, NM_SLICE, NM_UNSQUEEZE, NM_INDEX, NM_COUNT };

static bool selects(PyObject *k)
{
    if (PcsTensor_Check(k)) {
        const PcsTensor *t = (const PcsTensor *)k;
        return t->ndim == 0 && pcs_is_integral(t->dtype, false) && t->dtype != PCS_UINT8;
    }
    return !PyBool_Check(k) && PyIndex_Check(k);
}

/* Dims of x an item of a tuple key stands for (Ellipsis: 0 here). */
static int dims_taken(PyObject *k)
{
    if (k == Py_None || k == Py_Ellipsis || PyBool_Check(k))
        return 0;
    if (PcsTensor_Check(k) && !selects(k)) {
        const PcsTensor *t = (const PcsTensor *)k;
        return t->dtype == PCS_BOOL || t->dtype == PCS_UINT8 ? t->ndim : 1;
    }
    return 1;
}

/* torch's treatSequenceAsTuple, for lists: one holding a slice, None,
 * Ellipsis, a tensor or a sequence is read as a tuple of indices. */
static bool list_as_tuple(PyObject *k)
{
    if (!PyList_Check(k) || PyList_GET_SIZE(k) >= 32)
        return false;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(k); i++) {
        PyObject *o = PyList_GET_ITEM(k, i);
        if (o == Py_None || o == Py_Ellipsis || PySlice_Check(o) || PcsTensor_Check(o) ||
            PyList_Check(o) || PyTuple_Check(o))
            return true;
    }
    return false;
}

static int name_kind(const PcsTensor *x, PyObject *key)
{
    if (key == Py_None)
        return NM_UNSQUEEZE;
    if (key == Py_Ellipsis)
        return NM_ALIAS;
    if (PySlice_Check(key))
        return NM_SLICE;
    if (selects(key))
        return NM_SELECT;
    bool tuple = PyTuple_Check(key);
    if (!tuple && !list_as_tuple(key))
        return NM_INDEX;
    /* the items are borrowed from a tuple or list that the caller's key
     * reference keeps alive; nothing below calls back into Python */
    Py_ssize_t n = PySequence_Fast_GET_SIZE(key);
    PyObject *const *items = PySequence_Fast_ITEMS(key);
    int taken = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        taken += dims_taken(items[i]);
    int kind = NM_ALIAS, d = 0;
    bool advanced = false;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = items[i];
        if (k == Py_None) {
            kind = NM_UNSQUEEZE;
        } else if (k == Py_Ellipsis) {
            d += x->ndim - taken > 0 ? x->ndim - taken : 0;
        } else if (PySlice_Check(k)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(k, &start, &stop, &step) < 0) {
                PyErr_Clear(); /* the op took the key: a name is not worth an error */
                return NM_INDEX;
            }
            if (!(start == 0 && step == 1 && d < x->ndim && stop >= x->sizes[d]))
                kind = NM_SLICE;
            d++;
        } else if (selects(k)) {
            kind = NM_SELECT;
            d++;
        } else {
            advanced = true;
            d += dims_taken(k);
        }
    }
    return advanced ? NM_INDEX : kind;
}

static PyObject *getitem(PyObject *x, PyObject *key)
{
    static PyObject *names[NM_COUNT];
    static const char *const text[NM_COUNT] = {"AliasBackward0", "SelectBackward0", "SliceBackward0",
                                               "UnsqueezeBackward0", "IndexBackward0"};
    if (!(pcs_grad_enabled() && (pcs_ag_is_rg(x) || pcs_ag_is_rg(key))))
        return slot_bin[S_GETITEM](x, key);
    PyObject *args[2] = {x, key};
    PyObject *r = pcs_ag_op_slow(slots[S_GETITEM], args, 2, NULL);
    /* rename only the node this call made (it carries the registered name) */
    pcs_meta *m = r && r != x && PcsTensor_Check(r) && PcsTensor_Check(x) ? pcs_ag_meta(r) : NULL;
    if (!m || !m->grad_fn || PyUnicode_CompareWithASCIIString(m->grad_fn->name, "IndexBackward0") != 0)
        return r;
    int kind = name_kind((const PcsTensor *)x, key);
    if (!names[kind] && !(names[kind] = PyUnicode_InternFromString(text[kind]))) {
        Py_DECREF(r);
        return NULL;
    }
    Py_SETREF(m->grad_fn->name, Py_NewRef(names[kind]));
    return r;
}

static PyObject *ag_getitem(PyObject *a, PyObject *b) { return getitem(a, b); }
static PyObject *ag_neg(PyObject *a) { return slot1(S_NEG, a); }
static PyObject *ag_pos(PyObject *a) { return slot1(S_POS, a); }
static PyObject *ag_abs(PyObject *a) { return slot1(S_ABS, a); }

static PyObject *powslot(int s, PyObject *a, PyObject *b, PyObject *mod)
{
    PcsAgOp *w = slots[s];
    if (mod != Py_None || (!(w->flags & F_INPLACE) && !(pcs_grad_enabled() && (pcs_ag_is_rg(a) || pcs_ag_is_rg(b)))))
        return slot_pow[s](a, b, mod);
    PyObject *args[2] = {a, b};
    return pcs_ag_op_slow(w, args, 2, NULL);
}
static PyObject *ag_pow(PyObject *a, PyObject *b, PyObject *m) { return powslot(S_POW, a, b, m); }
static PyObject *ag_ipow(PyObject *a, PyObject *b, PyObject *m) { return powslot(S_IPOW, a, b, m); }

static int ag_setitem(PyObject *x, PyObject *idx, PyObject *v)
{
    if (!v) /* del x[i]: the op refuses it */
        return slot_set(x, idx, v);
    PyObject *args[3] = {x, idx, v};
    PyObject *r = pcs_ag_op_slow(slots[S_SETITEM], args, 3, NULL);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

void pcs_ag_wrap_slots(PyNumberMethods *nb, PyMappingMethods *mp)
{
#define WRAPB(S, field, fn) do { if (nb->field) { slot_bin[S] = nb->field; nb->field = fn; } } while (0)
    WRAPB(S_ADD, nb_add, ag_add);
    WRAPB(S_SUB, nb_subtract, ag_sub);
    WRAPB(S_MUL, nb_multiply, ag_mul);
    WRAPB(S_DIV, nb_true_divide, ag_div);
    WRAPB(S_FLOORDIV, nb_floor_divide, ag_floordiv);
    WRAPB(S_MOD, nb_remainder, ag_mod);
    WRAPB(S_MATMUL, nb_matrix_multiply, ag_matmul);
    WRAPB(S_IADD, nb_inplace_add, ag_iadd);
    WRAPB(S_ISUB, nb_inplace_subtract, ag_isub);
    WRAPB(S_IMUL, nb_inplace_multiply, ag_imul);
    WRAPB(S_IDIV, nb_inplace_true_divide, ag_idiv);
    WRAPB(S_IFLOORDIV, nb_inplace_floor_divide, ag_ifloordiv);
    WRAPB(S_IMOD, nb_inplace_remainder, ag_imod);
    WRAPB(S_IMATMUL, nb_inplace_matrix_multiply, ag_imatmul);
#undef WRAPB
    if (nb->nb_negative) { slot_un[S_NEG] = nb->nb_negative; nb->nb_negative = ag_neg; }
    if (nb->nb_positive) { slot_un[S_POS] = nb->nb_positive; nb->nb_positive = ag_pos; }
    if (nb->nb_absolute) { slot_un[S_ABS] = nb->nb_absolute; nb->nb_absolute = ag_abs; }
    if (nb->nb_power) { slot_pow[S_POW] = nb->nb_power; nb->nb_power = ag_pow; }
    if (nb->nb_inplace_power) { slot_pow[S_IPOW] = nb->nb_inplace_power; nb->nb_inplace_power = ag_ipow; }
    if (mp->mp_subscript) { slot_bin[S_GETITEM] = mp->mp_subscript; mp->mp_subscript = ag_getitem; }
    if (mp->mp_ass_subscript) { slot_set = mp->mp_ass_subscript; mp->mp_ass_subscript = ag_setitem; }
}

int pcs_ag_make_slot_ops(void)
{
    for (int s = 0; s < S_COUNT; s++) {
        bool inplace = (s >= S_IADD && s <= S_IMATMUL) || s == S_IPOW || s == S_SETITEM;
        int kind = s == S_POW || s == S_IPOW ? K_POW : s == S_SETITEM ? K_SETITEM
                 : (s >= S_NEG && s <= S_ABS) ? K_UN : K_BIN;
        if (!(slots[s] = pcs_ag_op_new(kind, slot_names[s], inplace)))
            return -1;
        slots[s]->bin = slot_bin[s];
        slots[s]->un = slot_un[s];
        slots[s]->pow = slot_pow[s];
        slots[s]->setitem = slot_set;
    }
    return 0;
}

