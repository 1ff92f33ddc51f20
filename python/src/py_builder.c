/*
 * py_builder.c — the front-end builder (compiler.h) as the Python type Builder.
 *
 * One Builder per compile: it owns the IrModule. Values cross to Python as integer
 * handles (IrRef) and types as integer ids (IrType). Operand parameters accept either
 * an object with a 'handle' attribute (a triton.language tensor) or a Python literal
 * (bool, int, float), so Triton's literal promotion rules apply in C. Every failure
 * raises BuilderError with the builder's message; python/triton adds the location.
 */
#include "py_int.h"

#include <string.h>

#define B(self) (((PyBuilder *)(self))->b)
#define M(self) (((PyBuilder *)(self))->m)

static PyObject *
fail(PyObject *self)
{
    const char *e = ir_builder_error(B(self));
    return py_err(py_BuilderError, "%s", e && *e ? e : "invalid operation");
}

static PyObject *
ret_ref(PyObject *self, IrRef r)
{
    if (!r)
        return fail(self);
    return PyLong_FromUnsignedLong(r);
}

static PyObject *
ret_rc(PyObject *self, int rc)
{
    if (rc < 0)
        return fail(self);
    Py_RETURN_NONE;
}

/* A literal or a tensor-like object → IrOperand. */
static int
opnd(PyObject *o, IrOperand *out)
{
    memset(out, 0, sizeof *out);
    if (PyBool_Check(o)) {
        out->kind = IR_OPND_BOOL;
        out->i = o == Py_True;
        return 0;
    }
    if (PyLong_Check(o)) {
        out->kind = IR_OPND_INT;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (PyErr_Occurred()) {
                PyErr_Clear();
                py_err(py_BuilderError, "Integer literal out of range (must fit in 64 bits)");
                return -1;
            }
            out->is_u64 = true;
            out->u = u;
            out->i = (int64_t)u;
            return 0;
        }
        if (overflow < 0) {
            py_err(py_BuilderError, "Integer literal out of range (must fit in 64 bits)");
            return -1;
        }
        out->i = v;
        return 0;
    }
    if (PyFloat_Check(o)) {
        out->kind = IR_OPND_FLOAT;
        out->f = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    PyObject *h = PyObject_GetAttrString(o, "handle");
    if (!h) {
        PyErr_Clear();
        PyObject *r = PyObject_Repr(o);
        py_err(py_BuilderError, "unsupported operand %s (expected a tensor or a number)", r ? PyUnicode_AsUTF8(r) : "?");
        Py_XDECREF(r);
        return -1;
    }
    out->kind = IR_OPND_VALUE;
    out->ref = (IrRef)PyLong_AsUnsignedLong(h);
    Py_DECREF(h);
    return PyErr_Occurred() ? -1 : 0;
}

/* Optional value: None → IR_NONE, tensor-like → its handle, int → handle. */
static int
optref(PyObject *o, IrRef *r)
{
    *r = IR_NONE;
    if (o == Py_None)
        return 0;
    if (PyLong_Check(o)) {
        *r = (IrRef)PyLong_AsUnsignedLong(o);
        return PyErr_Occurred() ? -1 : 0;
    }
    IrOperand op;
    if (opnd(o, &op) < 0)
        return -1;
    if (op.kind != IR_OPND_VALUE) {
        py_err(py_BuilderError, "expected a tensor, got a number");
        return -1;
    }
    *r = op.ref;
    return 0;
}

static int
refs(PyObject *seq, IrRef *out, int max)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of values");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        Py_DECREF(fast);
        py_err(py_BuilderError, "too many values (%zd > %d)", n, max);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (optref(PySequence_Fast_GET_ITEM(fast, i), &out[i]) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return (int)n;
}

static PyObject *
ref_list(const IrRef *r, int n)
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++)
        PyList_SET_ITEM(l, i, PyLong_FromUnsignedLong(r[i]));
    return l;
}

/* ---- lifecycle ------------------------------------------------------------------------ */

static int
builder_init(PyObject *self, PyObject *args, PyObject *kw)
{
    PyBuilder *pb = (PyBuilder *)self;
    pb->m = ir_module_create();
    pb->b = ir_builder_create(pb->m);
    return 0;
}

static void
builder_dealloc(PyObject *self)
{
    PyBuilder *pb = (PyBuilder *)self;
    ir_builder_destroy(pb->b);
    ir_module_destroy(pb->m);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
set_loc(PyObject *self, PyObject *args)
{
    const char *file;
    int line, col;
    if (!PyArg_ParseTuple(args, "sii", &file, &line, &col))
        return NULL;
    ir_builder_set_loc(B(self), file, line, col);
    Py_RETURN_NONE;
}

static PyObject *
error_(PyObject *self, PyObject *args)
{
    return PyUnicode_FromString(ir_builder_error(B(self)));
}

/* ---- types ------------------------------------------------------------------------------ */

static PyObject *
t_scalar(PyObject *self, PyObject *args)
{
    int d;
    if (!PyArg_ParseTuple(args, "i", &d))
        return NULL;
    if (d < 0 || d >= IR_DTYPE_COUNT)
        return py_err(PyExc_ValueError, "bad dtype code %d", d);
    return PyLong_FromUnsignedLong(ir_type_scalar(M(self), (IrDtype)d));
}

static PyObject *
t_ptr(PyObject *self, PyObject *args)
{
    unsigned t;
    int as = 0;
    if (!PyArg_ParseTuple(args, "I|i", &t, &as))
        return NULL;
    return PyLong_FromUnsignedLong(ir_type_ptr(M(self), t, as));
}

static PyObject *
t_tensor(PyObject *self, PyObject *args)
{
    unsigned t;
    PyObject *shape;
    if (!PyArg_ParseTuple(args, "IO", &t, &shape))
        return NULL;
    int64_t s[IR_MAX_RANK];
    int n = py_int64_seq(shape, s, IR_MAX_RANK, "shape");
    if (n < 0)
        return NULL;
    return PyLong_FromUnsignedLong(ir_type_tensor(M(self), t, n, s));
}

static PyObject *
type_of(PyObject *self, PyObject *args)
{
    unsigned r;
    if (!PyArg_ParseTuple(args, "I", &r))
        return NULL;
    return PyLong_FromUnsignedLong(ir_b_type(B(self), r));
}

/* ("scalar", dtype) | ("ptr", pointee_tid, addrspace) | ("tensor", elem_tid, shape) */
static PyObject *
type_desc(PyObject *self, PyObject *args)
{
    unsigned t;
    if (!PyArg_ParseTuple(args, "I", &t))
        return NULL;
    IrModule *m = M(self);
    if (ir_type_is_tensor(m, t)) {
        int r = ir_type_rank(m, t);
        const int64_t *s = ir_type_shape(m, t);
        PyObject *shape = PyTuple_New(r);
        for (int i = 0; i < r; i++)
            PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(s[i]));
        return Py_BuildValue("(sIN)", "tensor", ir_type_elem(m, t), shape);
    }
    if (ir_type_is_ptr(m, t))
        return Py_BuildValue("(sIi)", "ptr", ir_type_pointee(m, t), 0);
    return Py_BuildValue("(si)", "scalar", ir_type_dtype(m, t));
}

/* ---- functions ------------------------------------------------------------------------------ */

static PyObject *
func_begin(PyObject *self, PyObject *args)
{
    const char *name;
    int pub;
    PyObject *types, *divs;
    if (!PyArg_ParseTuple(args, "spOO", &name, &pub, &types, &divs))
        return NULL;
    int64_t t[256], d[256];
    int n = py_int64_seq(types, t, 256, "param types"), nd = py_int64_seq(divs, d, 256, "divisibility");
    if (n < 0 || nd < 0)
        return NULL;
    IrType tt[256];
    int32_t dd[256];
    for (int i = 0; i < n; i++) {
        tt[i] = (IrType)t[i];
        dd[i] = i < nd ? (int32_t)d[i] : 0;
    }
    return ret_rc(self, ir_b_func_begin(B(self), name, pub, n, tt, dd));
}

static PyObject *
param(PyObject *self, PyObject *args)
{
    int i;
    if (!PyArg_ParseTuple(args, "i", &i))
        return NULL;
    return ret_ref(self, ir_b_param(B(self), i));
}

static PyObject *
func_end(PyObject *self, PyObject *args)
{
    return ret_rc(self, ir_b_func_end(B(self)));
}

/* ---- construction ------------------------------------------------------------------------------ */

static PyObject *
const_(PyObject *self, PyObject *args)
{
    PyObject *v;
    int d = -1;
    if (!PyArg_ParseTuple(args, "O|i", &v, &d))
        return NULL;
    IrOperand o;
    if (opnd(v, &o) < 0)
        return NULL;
    return ret_ref(self, ir_b_const(B(self), o, d));
}

static PyObject *
program_id(PyObject *self, PyObject *args)
{
    int a;
    if (!PyArg_ParseTuple(args, "i", &a))
        return NULL;
    return ret_ref(self, ir_b_program_id(B(self), a));
}

static PyObject *
num_programs(PyObject *self, PyObject *args)
{
    int a;
    if (!PyArg_ParseTuple(args, "i", &a))
        return NULL;
    return ret_ref(self, ir_b_num_programs(B(self), a));
}

static PyObject *
arange(PyObject *self, PyObject *args)
{
    long long s, e;
    if (!PyArg_ParseTuple(args, "LL", &s, &e))
        return NULL;
    return ret_ref(self, ir_b_arange(B(self), s, e));
}

static PyObject *
full(PyObject *self, PyObject *args)
{
    PyObject *shape, *v;
    int d;
    if (!PyArg_ParseTuple(args, "OOi", &shape, &v, &d))
        return NULL;
    int64_t s[IR_MAX_RANK];
    int n = py_int64_seq(shape, s, IR_MAX_RANK, "shape");
    IrOperand o;
    if (n < 0 || opnd(v, &o) < 0)
        return NULL;
    return ret_ref(self, ir_b_full(B(self), n, s, o, d));
}

#define SHAPE_OP(fn, call)                                                                 \
    static PyObject *fn(PyObject *self, PyObject *args)                                    \
    {                                                                                      \
        unsigned x;                                                                        \
        PyObject *shape;                                                                   \
        int flag = 0;                                                                      \
        if (!PyArg_ParseTuple(args, "IO|p", &x, &shape, &flag))                             \
            return NULL;                                                                   \
        int64_t s[IR_MAX_RANK];                                                                      \
        int n = py_int64_seq(shape, s, IR_MAX_RANK, "shape");                                        \
        if (n < 0)                                                                         \
            return NULL;                                                                   \
        (void)flag;                                                                        \
        return ret_ref(self, call);                                                        \
    }
SHAPE_OP(splat, ir_b_splat(B(self), x, n, s))
SHAPE_OP(broadcast_to, ir_b_broadcast_to(B(self), x, n, s))
SHAPE_OP(reshape, ir_b_reshape(B(self), x, n, s, flag))
SHAPE_OP(permute, ir_b_permute(B(self), x, n, s))

static PyObject *
expand_dims(PyObject *self, PyObject *args)
{
    unsigned x;
    int a;
    if (!PyArg_ParseTuple(args, "Ii", &x, &a))
        return NULL;
    return ret_ref(self, ir_b_expand_dims(B(self), x, a));
}

static PyObject *
cat(PyObject *self, PyObject *args)
{
    unsigned x, y;
    int r = 0;
    if (!PyArg_ParseTuple(args, "II|p", &x, &y, &r))
        return NULL;
    return ret_ref(self, ir_b_cat(B(self), x, y, r));
}

static PyObject *
join(PyObject *self, PyObject *args)
{
    unsigned x, y;
    if (!PyArg_ParseTuple(args, "II", &x, &y))
        return NULL;
    return ret_ref(self, ir_b_join(B(self), x, y));
}

static PyObject *
split(PyObject *self, PyObject *args)
{
    unsigned x;
    if (!PyArg_ParseTuple(args, "I", &x))
        return NULL;
    IrRef out[2];
    if (ir_b_split(B(self), x, out) < 0)
        return fail(self);
    return Py_BuildValue("(II)", out[0], out[1]);
}

/* ---- arithmetic ------------------------------------------------------------------------------ */

static PyObject *
binop(PyObject *self, PyObject *args)
{
    int op;
    PyObject *a, *c;
    if (!PyArg_ParseTuple(args, "iOO", &op, &a, &c))
        return NULL;
    IrOperand x, y;
    if (opnd(a, &x) < 0 || opnd(c, &y) < 0)
        return NULL;
    return ret_ref(self, ir_b_binop(B(self), (IrBinop)op, x, y));
}

static PyObject *
unop(PyObject *self, PyObject *args)
{
    int op;
    PyObject *a;
    if (!PyArg_ParseTuple(args, "iO", &op, &a))
        return NULL;
    IrOperand x;
    if (opnd(a, &x) < 0)
        return NULL;
    return ret_ref(self, ir_b_unop(B(self), (IrUnop)op, x));
}

static PyObject *
math(PyObject *self, PyObject *args)
{
    const char *fn;
    PyObject *a;
    if (!PyArg_ParseTuple(args, "sO", &fn, &a))
        return NULL;
    IrOperand x;
    if (opnd(a, &x) < 0)
        return NULL;
    return ret_ref(self, ir_b_math(B(self), fn, x));
}

static PyObject *
fma_(PyObject *self, PyObject *args)
{
    PyObject *a, *b, *c;
    if (!PyArg_ParseTuple(args, "OOO", &a, &b, &c))
        return NULL;
    IrOperand x, y, z;
    if (opnd(a, &x) < 0 || opnd(b, &y) < 0 || opnd(c, &z) < 0)
        return NULL;
    return ret_ref(self, ir_b_fma(B(self), x, y, z));
}

static PyObject *
where(PyObject *self, PyObject *args)
{
    PyObject *a, *b, *c;
    if (!PyArg_ParseTuple(args, "OOO", &a, &b, &c))
        return NULL;
    IrOperand x, y, z;
    if (opnd(a, &x) < 0 || opnd(b, &y) < 0 || opnd(c, &z) < 0)
        return NULL;
    return ret_ref(self, ir_b_where(B(self), x, y, z));
}

static PyObject *
clamp(PyObject *self, PyObject *args)
{
    PyObject *a, *b, *c;
    int nan = 0;
    if (!PyArg_ParseTuple(args, "OOO|p", &a, &b, &c, &nan))
        return NULL;
    IrOperand x, y, z;
    if (opnd(a, &x) < 0 || opnd(b, &y) < 0 || opnd(c, &z) < 0)
        return NULL;
    return ret_ref(self, ir_b_clamp(B(self), x, y, z, nan));
}

static PyObject *
cast(PyObject *self, PyObject *args)
{
    PyObject *a;
    unsigned t;
    int bitcast = 0, rounding = 0;
    if (!PyArg_ParseTuple(args, "OI|pi", &a, &t, &bitcast, &rounding))
        return NULL;
    IrOperand x;
    if (opnd(a, &x) < 0)
        return NULL;
    return ret_ref(self, ir_b_cast(B(self), x, t, bitcast, rounding));
}

static PyObject *
to_value(PyObject *self, PyObject *args)
{
    PyObject *a;
    if (!PyArg_ParseTuple(args, "O", &a))
        return NULL;
    IrOperand x;
    if (opnd(a, &x) < 0)
        return NULL;
    return ret_ref(self, ir_b_to_value(B(self), x));
}

/* ---- memory ------------------------------------------------------------------------------------ */

static PyObject *
load(PyObject *self, PyObject *args)
{
    PyObject *p, *mask, *other, *bc;
    int padding = 0, cache = 0, evict = 0, vol = 0;
    if (!PyArg_ParseTuple(args, "OOOO|iiip", &p, &mask, &other, &bc, &padding, &cache, &evict, &vol))
        return NULL;
    IrRef pr, mr;
    IrOperand o = {IR_OPND_VALUE, IR_NONE};
    int64_t b[IR_MAX_RANK];
    int nb;
    if (optref(p, &pr) < 0 || optref(mask, &mr) < 0 || (nb = py_int64_seq(bc, b, IR_MAX_RANK, "boundary_check")) < 0)
        return NULL;
    if (other != Py_None && opnd(other, &o) < 0)
        return NULL;
    return ret_ref(self, ir_b_load(B(self), pr, mr, o, nb, b, (IrPadding)padding, cache, evict, vol));
}

static PyObject *
store(PyObject *self, PyObject *args)
{
    PyObject *p, *v, *mask, *bc;
    int cache = 0, evict = 0;
    if (!PyArg_ParseTuple(args, "OOOO|ii", &p, &v, &mask, &bc, &cache, &evict))
        return NULL;
    IrRef pr, mr;
    IrOperand o;
    int64_t b[IR_MAX_RANK];
    int nb;
    if (optref(p, &pr) < 0 || optref(mask, &mr) < 0 || opnd(v, &o) < 0 ||
        (nb = py_int64_seq(bc, b, IR_MAX_RANK, "boundary_check")) < 0)
        return NULL;
    return ret_rc(self, ir_b_store(B(self), pr, o, mr, nb, b, cache, evict));
}

static int
opnds(PyObject *seq, IrOperand *out, int max)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        Py_DECREF(fast);
        py_err(py_BuilderError, "too many entries (%zd > %d)", n, max);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (opnd(PySequence_Fast_GET_ITEM(fast, i), &out[i]) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    Py_DECREF(fast);
    return (int)n;
}

static PyObject *
make_block_ptr(PyObject *self, PyObject *args)
{
    PyObject *base, *shape, *strides, *offsets, *block, *order;
    if (!PyArg_ParseTuple(args, "OOOOOO", &base, &shape, &strides, &offsets, &block, &order))
        return NULL;
    IrOperand bo, s[IR_MAX_RANK], st[IR_MAX_RANK], of[IR_MAX_RANK];
    int64_t bl[IR_MAX_RANK], or[IR_MAX_RANK];
    if (opnd(base, &bo) < 0)
        return NULL;
    int n1 = opnds(shape, s, IR_MAX_RANK), n2 = opnds(strides, st, IR_MAX_RANK), n3 = opnds(offsets, of, IR_MAX_RANK);
    int n4 = py_int64_seq(block, bl, IR_MAX_RANK, "block_shape"), n5 = py_int64_seq(order, or, IR_MAX_RANK, "order");
    if (n1 < 0 || n2 < 0 || n3 < 0 || n4 < 0 || n5 < 0)
        return NULL;
    if (n1 != n4 || n2 != n4 || n3 != n4 || n5 != n4)
        return py_err(py_BuilderError, "Expected shape/strides/offsets/block_shape to have the same length");
    return ret_ref(self, ir_b_make_block_ptr(B(self), bo, n4, s, st, of, bl, or));
}

/* smt_alloc(shape, dtype_code, storage) -> ref of a pointer to a local buffer */
static PyObject *
smt_alloc(PyObject *self, PyObject *args)
{
    PyObject *shape;
    int dt;
    const char *storage;
    if (!PyArg_ParseTuple(args, "Ois", &shape, &dt, &storage))
        return NULL;
    int64_t sh[IR_MAX_RANK];
    int n = py_int64_seq(shape, sh, IR_MAX_RANK, "shape");
    if (n < 0)
        return NULL;
    return ret_ref(self, ir_b_smt_alloc(B(self), n, sh, dt, storage));
}

/* block_ptr_reblock(bp, delta_offsets, block_shape) -> ref */
static PyObject *
block_ptr_reblock(PyObject *self, PyObject *args)
{
    unsigned p;
    PyObject *offs, *block;
    if (!PyArg_ParseTuple(args, "IOO", &p, &offs, &block))
        return NULL;
    IrOperand of[IR_MAX_RANK];
    int64_t bl[IR_MAX_RANK];
    int n = opnds(offs, of, IR_MAX_RANK), m = py_int64_seq(block, bl, IR_MAX_RANK, "block_shape");
    if (n < 0 || m < 0)
        return NULL;
    if (n != m)
        return py_err(py_BuilderError, "Expected as many offsets as block dimensions");
    return ret_ref(self, ir_b_block_ptr_reblock(B(self), p, n, of, bl));
}

static PyObject *
advance(PyObject *self, PyObject *args)
{
    unsigned p;
    PyObject *offs;
    if (!PyArg_ParseTuple(args, "IO", &p, &offs))
        return NULL;
    IrOperand of[IR_MAX_RANK];
    int n = opnds(offs, of, IR_MAX_RANK);
    if (n < 0)
        return NULL;
    return ret_ref(self, ir_b_advance(B(self), p, n, of));
}

static PyObject *
atomic_rmw(PyObject *self, PyObject *args)
{
    const char *kind, *sem, *scope;
    PyObject *p, *v, *mask;
    if (!PyArg_ParseTuple(args, "sOOOss", &kind, &p, &v, &mask, &sem, &scope))
        return NULL;
    IrRef pr, mr;
    IrOperand o;
    if (optref(p, &pr) < 0 || optref(mask, &mr) < 0 || opnd(v, &o) < 0)
        return NULL;
    return ret_ref(self, ir_b_atomic_rmw(B(self), kind, pr, o, mr, sem, scope));
}

static PyObject *
atomic_cas(PyObject *self, PyObject *args)
{
    const char *sem, *scope;
    PyObject *p, *c, *v;
    if (!PyArg_ParseTuple(args, "OOOss", &p, &c, &v, &sem, &scope))
        return NULL;
    IrRef pr;
    IrOperand co, vo;
    if (optref(p, &pr) < 0 || opnd(c, &co) < 0 || opnd(v, &vo) < 0)
        return NULL;
    return ret_ref(self, ir_b_atomic_cas(B(self), pr, co, vo, sem, scope));
}

/* ---- compute ---------------------------------------------------------------------------------- */

static PyObject *
dot(PyObject *self, PyObject *args)
{
    unsigned a, b;
    PyObject *acc;
    int out = -1, prec = 0, maxacc = 0;
    if (!PyArg_ParseTuple(args, "IIO|iii", &a, &b, &acc, &out, &prec, &maxacc))
        return NULL;
    IrRef ar;
    if (optref(acc, &ar) < 0)
        return NULL;
    return ret_ref(self, ir_b_dot(B(self), a, b, ar, out, prec, maxacc));
}

static PyObject *
reduce(PyObject *self, PyObject *args)
{
    int kind, keep = 0, dtype = -1;
    unsigned x;
    PyObject *axis;
    if (!PyArg_ParseTuple(args, "iIO|pi", &kind, &x, &axis, &keep, &dtype))
        return NULL;
    int ax = IR_AXIS_NONE;
    if (axis != Py_None) {
        ax = (int)PyLong_AsLong(axis);
        if (PyErr_Occurred())
            return NULL;
    }
    return ret_ref(self, ir_b_reduce(B(self), (IrReduceKind)kind, x, ax, keep, dtype));
}

static PyObject *
region_begin(PyObject *self, PyObject *args, int is_scan)
{
    PyObject *ins;
    int axis, rev = 0;
    if (!PyArg_ParseTuple(args, "Oi|p", &ins, &axis, &rev))
        return NULL;
    IrRef in[16], a[32];
    int n = refs(ins, in, 16);
    if (n < 0)
        return NULL;
    int rc = is_scan ? ir_b_scan_begin(B(self), in, n, axis, rev, a) : ir_b_reduce_begin(B(self), in, n, axis, a);
    if (rc < 0)
        return fail(self);
    return ref_list(a, 2 * n);
}

static PyObject *reduce_begin(PyObject *self, PyObject *args) { return region_begin(self, args, 0); }
static PyObject *scan_begin(PyObject *self, PyObject *args) { return region_begin(self, args, 1); }

static PyObject *
results(PyObject *self, int n)
{
    IrRef r[128];
    for (int i = 0; i < n && i < 128; i++)
        r[i] = ir_b_region_result(B(self), i);
    return ref_list(r, n);
}

static PyObject *
region_end(PyObject *self, PyObject *args, int is_scan)
{
    PyObject *vals;
    if (!PyArg_ParseTuple(args, "O", &vals))
        return NULL;
    IrRef v[16];
    int n = refs(vals, v, 16);
    if (n < 0)
        return NULL;
    if ((is_scan ? ir_b_scan_end(B(self), v, n) : ir_b_reduce_end(B(self), v, n)) < 0)
        return fail(self);
    return results(self, n);
}

static PyObject *reduce_end(PyObject *self, PyObject *args) { return region_end(self, args, 0); }
static PyObject *scan_end(PyObject *self, PyObject *args) { return region_end(self, args, 1); }

/* ---- control flow -------------------------------------------------------------------------------- */

static PyObject *
for_begin(PyObject *self, PyObject *args)
{
    PyObject *lb, *ub, *st, *inits;
    int parallel = 0;
    if (!PyArg_ParseTuple(args, "OOOO|p", &lb, &ub, &st, &inits, &parallel))
        return NULL;
    IrOperand l, u, s;
    IrRef in[64], body[65];
    int n;
    if (opnd(lb, &l) < 0 || opnd(ub, &u) < 0 || opnd(st, &s) < 0 || (n = refs(inits, in, 64)) < 0)
        return NULL;
    if (ir_b_for_begin(B(self), l, u, s, in, n, body) < 0 || (parallel && ir_b_for_parallel(B(self)) < 0))
        return fail(self);
    return ref_list(body, n + 1);
}

static PyObject *
for_end(PyObject *self, PyObject *args)
{
    PyObject *ys;
    if (!PyArg_ParseTuple(args, "O", &ys))
        return NULL;
    IrRef y[64];
    int n = refs(ys, y, 64);
    if (n < 0)
        return NULL;
    if (ir_b_for_end(B(self), y, n) < 0)
        return fail(self);
    return results(self, n);
}

static PyObject *
if_begin(PyObject *self, PyObject *args)
{
    unsigned c;
    if (!PyArg_ParseTuple(args, "I", &c))
        return NULL;
    return ret_rc(self, ir_b_if_begin(B(self), c));
}

static PyObject *
if_else(PyObject *self, PyObject *args)
{
    return ret_rc(self, ir_b_if_else(B(self)));
}

static PyObject *
if_block(PyObject *self, PyObject *args)
{
    int which;
    if (!PyArg_ParseTuple(args, "i", &which))
        return NULL;
    return ret_rc(self, ir_b_if_block(B(self), which));
}

static PyObject *
if_end(PyObject *self, PyObject *args)
{
    PyObject *t, *e;
    if (!PyArg_ParseTuple(args, "OO", &t, &e))
        return NULL;
    IrRef ty[64], ey[64];
    int n = refs(t, ty, 64), m = refs(e, ey, 64);
    if (n < 0 || m < 0)
        return NULL;
    if (n != m)
        return py_err(py_BuilderError, "if branches yield different numbers of values");
    if (ir_b_if_end(B(self), ty, ey, n) < 0)
        return fail(self);
    return results(self, n);
}

static PyObject *
while_begin(PyObject *self, PyObject *args)
{
    PyObject *inits;
    if (!PyArg_ParseTuple(args, "O", &inits))
        return NULL;
    IrRef in[64], a[64];
    int n = refs(inits, in, 64);
    if (n < 0)
        return NULL;
    if (ir_b_while_begin(B(self), in, n, a) < 0)
        return fail(self);
    return ref_list(a, n);
}

static PyObject *
while_cond(PyObject *self, PyObject *args)
{
    unsigned c;
    PyObject *vals;
    if (!PyArg_ParseTuple(args, "IO", &c, &vals))
        return NULL;
    IrRef v[64], a[64];
    int n = refs(vals, v, 64);
    if (n < 0)
        return NULL;
    if (ir_b_while_cond(B(self), c, v, n, a) < 0)
        return fail(self);
    return ref_list(a, n);
}

static PyObject *
while_end(PyObject *self, PyObject *args)
{
    PyObject *ys;
    if (!PyArg_ParseTuple(args, "O", &ys))
        return NULL;
    IrRef y[64];
    int n = refs(ys, y, 64);
    if (n < 0)
        return NULL;
    if (ir_b_while_end(B(self), y, n) < 0)
        return fail(self);
    return results(self, n);
}

static PyObject *scratch_begin(PyObject *self, PyObject *a) { return ret_rc(self, ir_b_scratch_begin(B(self))); }
static PyObject *scratch_end(PyObject *self, PyObject *a) { return ret_rc(self, ir_b_scratch_end(B(self))); }

static PyObject *
placeholder(PyObject *self, PyObject *args)
{
    unsigned t;
    if (!PyArg_ParseTuple(args, "I", &t))
        return NULL;
    return ret_ref(self, ir_b_placeholder(B(self), t));
}

/* ---- debugging, profiling, text --------------------------------------------------------------- */

static PyObject *
print_(PyObject *self, PyObject *args)
{
    const char *prefix;
    int hex;
    PyObject *vals;
    if (!PyArg_ParseTuple(args, "spO", &prefix, &hex, &vals))
        return NULL;
    IrRef v[64];
    int n = refs(vals, v, 64);
    if (n < 0)
        return NULL;
    return ret_rc(self, ir_b_print(B(self), prefix, hex, v, n));
}

static PyObject *
assert_(PyObject *self, PyObject *args)
{
    unsigned c;
    const char *msg;
    if (!PyArg_ParseTuple(args, "Is", &c, &msg))
        return NULL;
    return ret_rc(self, ir_b_assert(B(self), c, msg));
}

static PyObject *
proton_record(PyObject *self, PyObject *args)
{
    int start;
    const char *name;
    if (!PyArg_ParseTuple(args, "ps", &start, &name))
        return NULL;
    return ret_rc(self, ir_b_proton_record(B(self), start, name));
}

static PyObject *
fail_(PyObject *self, PyObject *args)
{
    const char *msg;
    if (!PyArg_ParseTuple(args, "s", &msg))
        return NULL;
    ir_builder_fail(B(self), "%s", msg);
    return fail(self);
}

static PyObject *
ttir(PyObject *self, PyObject *args)
{
    int locs = 0;
    if (!PyArg_ParseTuple(args, "|p", &locs))
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PyErr_NoMemory();
    ir_print_module(f, M(self), locs ? IR_PRINT_LOCS : 0);
    fclose(f);
    PyObject *s = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
    free(buf);
    return s;
}

static PyMethodDef builder_methods[] = {
#define M0(n) {#n, (PyCFunction)n, METH_NOARGS, NULL}
#define M1(n) {#n, (PyCFunction)n, METH_VARARGS, NULL}
    M1(set_loc), {"error", (PyCFunction)error_, METH_NOARGS, NULL},
    M1(t_scalar), M1(t_ptr), M1(t_tensor), M1(type_of), M1(type_desc),
    M1(func_begin), M1(param), M0(func_end),
    {"const", (PyCFunction)const_, METH_VARARGS, NULL},
    M1(program_id), M1(num_programs), M1(arange), M1(full), M1(splat), M1(broadcast_to), M1(expand_dims),
    M1(reshape), M1(permute), M1(cat), M1(join), M1(split),
    M1(binop), M1(unop), M1(math), {"fma", (PyCFunction)fma_, METH_VARARGS, NULL}, M1(where), M1(clamp),
    M1(cast), M1(to_value),
    M1(load), M1(store), M1(make_block_ptr), M1(advance), M1(smt_alloc), M1(block_ptr_reblock), M1(atomic_rmw), M1(atomic_cas),
    M1(dot), M1(reduce), M1(reduce_begin), M1(reduce_end), M1(scan_begin), M1(scan_end),
    M1(for_begin), M1(for_end), M1(if_begin), M0(if_else), M1(if_block), M1(if_end),
    M1(while_begin), M1(while_cond), M1(while_end), M0(scratch_begin), M0(scratch_end), M1(placeholder),
    {"print", (PyCFunction)print_, METH_VARARGS, NULL}, {"assert_", (PyCFunction)assert_, METH_VARARGS, NULL},
    M1(proton_record), {"fail", (PyCFunction)fail_, METH_VARARGS, NULL}, M1(ttir),
#undef M0
#undef M1
    {NULL, NULL, 0, NULL},
};

PyTypeObject PyBuilder_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tritium.Builder",
    .tp_basicsize = sizeof(PyBuilder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Front-end IR builder of one kernel compile.",
    .tp_new = PyType_GenericNew,
    .tp_init = builder_init,
    .tp_dealloc = builder_dealloc,
    .tp_methods = builder_methods,
};

int
py_builder_init_type(PyObject *mod)
{
    if (PyType_Ready(&PyBuilder_Type) < 0)
        return -1;
    return PyModule_AddObjectRef(mod, "Builder", (PyObject *)&PyBuilder_Type);
}
