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
BIN(S_GETITEM, ag_getitem)
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

