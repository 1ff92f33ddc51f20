/*
 * ir_build.c — the front-end builder: functions, tile construction and shape
 * operations, structured control flow, debugging ops.
 *
 * Semantics follow triton.language (semantic.py of Triton 3.x, with the
 * spine-triton changes listed in shared/reference/spine-triton.md §3). Type
 * promotion and arithmetic live in ir_build_arith.c, memory and compute ops in
 * ir_build_mem.c.
 */
#include "ir_build_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- lifecycle, errors, emission ------------------------------------------------ */

IrBuilder *
ir_builder_create(IrModule *m)
{
    IrBuilder *b = calloc(1, sizeof *b);
    if (!b)
        ir_die("out of memory");
    b->m = m;
    return b;
}

void ir_builder_destroy(IrBuilder *b) { free(b); }
IrModule *ir_builder_module(IrBuilder *b) { return b->m; }
const char *ir_builder_error(IrBuilder *b) { return b->err; }

void
ir_builder_set_loc(IrBuilder *b, const char *file, int line, int col)
{
    b->loc.file = ir_str_intern(b->m, file);
    b->loc.line = (uint32_t)(line > 0 ? line : 0);
    b->loc.col = (uint32_t)(col > 0 ? col : 0);
}

IrRef
ir_builder_fail(IrBuilder *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err, sizeof b->err, fmt, ap);
    va_end(ap);
    ir_diag(b->m, b->loc, 0, "%s", b->err);
    return IR_NONE;
}

IrOp *
bemit_op(IrBuilder *b, IrOpc opc, const IrRef *args, uint32_t nargs, IrType restype)
{
    if (!b->blk)
        ir_die("builder has no insertion point (no function begun)");
    IrOp *op = ir_op_create(b->fn, opc, args, nargs, &restype, restype ? 1 : 0, 0);
    op->loc = b->loc;
    ir_block_append(b->blk, op);
    return op;
}

IrRef
bemit(IrBuilder *b, IrOpc opc, const IrRef *args, uint32_t nargs, IrType restype)
{
    return bemit_op(b, opc, args, nargs, restype)->res[0];
}

IrRef
bconst_int(IrBuilder *b, int64_t v, IrType t)
{
    IrOp *op = bemit_op(b, IR_CONST, NULL, 0, t);
    op->i[0] = v;
    return op->res[0];
}

IrRef
bconst_float(IrBuilder *b, double v, IrType t)
{
    IrOp *op = bemit_op(b, IR_CONST, NULL, 0, t);
    op->f = v;
    return op->res[0];
}

/* ---- type helpers ------------------------------------------------------------------ */

IrType btype(IrBuilder *b, IrRef v) { return b->fn->vals[v].type; }
bool bis_tensor(IrBuilder *b, IrRef v) { return ir_type_is_tensor(b->m, btype(b, v)); }
int brank(IrBuilder *b, IrRef v) { return ir_type_rank(b->m, btype(b, v)); }
const int64_t *bshape(IrBuilder *b, IrRef v) { return ir_type_shape(b->m, btype(b, v)); }
IrType belem(IrBuilder *b, IrRef v) { return ir_type_elem(b->m, btype(b, v)); }
int bdtype(IrBuilder *b, IrRef v) { return ir_type_dtype(b->m, btype(b, v)); }
bool bis_ptr(IrBuilder *b, IrRef v) { return ir_type_is_ptr(b->m, belem(b, v)); }
IrType ir_b_type(IrBuilder *b, IrRef v) { return btype(b, v); }

IrType
bwith_elem(IrBuilder *b, IrRef v, IrType elem)
{
    return ir_type_tensor(b->m, elem, brank(b, v), bshape(b, v));
}

/* Triton spells types as fp32, int32, pointer<fp32>, <128xfp32> ... in errors. */
static size_t
tname(IrBuilder *b, IrType t, char *buf, size_t cap)
{
    const IrTypeInfo *ti = ir_type_info(b->m, t);
    size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__))
    switch (ti->kind) {
    case IR_TK_SCALAR:
        PUT("%s", ir_dtype_name((IrDtype)ti->dtype));
        break;
    case IR_TK_PTR:
        PUT("pointer<");
        n += tname(b, ti->elem, buf + (n < cap ? n : cap), n < cap ? cap - n : 0);
        PUT(">");
        break;
    case IR_TK_TENSOR:
        PUT("<[");
        for (int i = 0; i < ti->rank; i++)
            PUT("%s%lld", i ? ", " : "", (long long)ti->shape[i]);
        PUT("], ");
        n += tname(b, ti->elem, buf + (n < cap ? n : cap), n < cap ? cap - n : 0);
        PUT(">");
        break;
    default:
        PUT("void");
    }
#undef PUT
    return n;
}

const char *
btype_name(IrBuilder *b, IrType t, char *buf, size_t cap)
{
    tname(b, t, buf, cap);
    return buf;
}

static void
shape_str(char *buf, size_t cap, int rank, const int64_t *shape)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* ---- functions ------------------------------------------------------------------------ */

int
ir_b_func_begin(IrBuilder *b, const char *name, bool is_public, int nparams, const IrType *ptypes,
                const int32_t *divisibility)
{
    if (b->depth)
        return (int)bfail(b, "nested function definition") - 1;
    b->fn = ir_func_create(b->m, name, is_public);
    b->fn->loc = b->loc;
    b->fn->argattrs = ir_newv(&b->m->arena, IrArgAttr, nparams ? nparams : 1);
    for (int i = 0; i < nparams; i++) {
        ir_block_add_arg(b->fn->body, ptypes[i]);
        b->fn->argattrs[i].divisibility = divisibility ? divisibility[i] : 0;
    }
    b->blk = b->fn->body;
    b->stack[b->depth++] = (IrbFrame){.kind = FR_FUNC};
    return 0;
}

IrRef
ir_b_param(IrBuilder *b, int i)
{
    if (!b->fn || i < 0 || (uint32_t)i >= b->fn->body->nargs)
        return bfail(b, "parameter index %d out of range", i);
    return b->fn->body->args[i];
}

int
ir_b_func_end(IrBuilder *b)
{
    if (b->depth != 1 || b->stack[0].kind != FR_FUNC)
        return (int)bfail(b, "unbalanced control flow at end of function") - 1;
    bemit_op(b, IR_RETURN, NULL, 0, 0);
    b->depth = 0;
    b->blk = NULL;
    return 0;
}

/* ---- tile construction ---------------------------------------------------------------- */

IrRef
ir_b_program_id(IrBuilder *b, int axis)
{
    if (axis < 0 || axis > 2)
        return bfail(b, "program_id axis must be 0, 1, or 2 but got %d", axis);
    IrOp *op = bemit_op(b, IR_GET_PROGRAM_ID, NULL, 0, ir_type_scalar(b->m, IR_I32));
    op->i[0] = axis;
    return op->res[0];
}

IrRef
ir_b_num_programs(IrBuilder *b, int axis)
{
    if (axis < 0 || axis > 2)
        return bfail(b, "num_programs axis must be 0, 1, or 2 but got %d", axis);
    IrOp *op = bemit_op(b, IR_GET_NUM_PROGRAMS, NULL, 0, ir_type_scalar(b->m, IR_I32));
    op->i[0] = axis;
    return op->res[0];
}

static bool
is_pow2(int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

IrRef
ir_b_arange(IrBuilder *b, int64_t start, int64_t end)
{
    if (start < INT32_MIN || start > INT32_MAX || end < INT32_MIN || end > INT32_MAX)
        return bfail(b, "arange's arguments must be within int32 range");
    if (end <= start)
        return bfail(b, "arange's end argument must be greater than the start argument");
    int64_t n = end - start;
    if (!is_pow2(n))
        return bfail(b, "arange's range must be a power of 2");
    IrType t = ir_type_tensor(b->m, ir_type_scalar(b->m, IR_I32), 1, &n);
    IrOp *op = bemit_op(b, IR_MAKE_RANGE, NULL, 0, t);
    op->i[0] = start;
    op->i[1] = end;
    return op->res[0];
}

static int
check_shape(IrBuilder *b, int rank, const int64_t *shape, const char *what)
{
    if (rank > IR_MAX_RANK) {
        bfail(b, "%s: rank %d exceeds the maximum of %d", what, rank, IR_MAX_RANK);
        return -1;
    }
    for (int i = 0; i < rank; i++) {
        if (shape[i] <= 0 || !is_pow2(shape[i])) {
            char s[256];
            shape_str(s, sizeof s, rank, shape);
            bfail(b, "Shape element %d must be a power of 2 (shape %s in %s)", i, s, what);
            return -1;
        }
    }
    return 0;
}

IrRef
ir_b_full(IrBuilder *b, int rank, const int64_t *shape, IrOperand value, int dtype)
{
    if (check_shape(b, rank, shape, "full") < 0)
        return IR_NONE;
    IrRef v;
    if (value.kind == IR_OPND_VALUE) {
        v = value.ref;
        if (bis_tensor(b, v))
            return bfail(b, "full: value must be a scalar");
        if (dtype >= 0 && bdtype(b, v) != dtype)
            v = bcast(b, v, ir_type_scalar(b->m, (IrDtype)dtype), 0);
    } else {
        v = bvalue(b, value, dtype);
    }
    if (!v)
        return IR_NONE;
    return bsplat(b, v, rank, shape);
}

/* Splat of a constant folds into a splat constant so the IR stays small. */
IrRef
bsplat(IrBuilder *b, IrRef x, int rank, const int64_t *shape)
{
    if (rank == 0)
        return x;
    IrType t = ir_type_tensor(b->m, btype(b, x), rank, shape);
    IrOp *def = b->fn->vals[x].def;
    if (def && def->opc == IR_CONST) {
        IrOp *op = bemit_op(b, IR_CONST, NULL, 0, t);
        op->i[0] = def->i[0];
        op->f = def->f;
        return op->res[0];
    }
    return bemit(b, IR_SPLAT, &x, 1, t);
}

IrRef
ir_b_splat(IrBuilder *b, IrRef x, int rank, const int64_t *shape)
{
    if (bis_tensor(b, x))
        return bfail(b, "splat: value must be a scalar");
    if (check_shape(b, rank, shape, "splat") < 0)
        return IR_NONE;
    return bsplat(b, x, rank, shape);
}

IrRef
bbroadcast_shape(IrBuilder *b, IrRef x, int rank, const int64_t *shape)
{
    if (!bis_tensor(b, x))
        return bsplat(b, x, rank, shape);
    int xr = brank(b, x);
    const int64_t *xs = bshape(b, x);
    if (xr != rank) {
        char s1[256], s2[256];
        shape_str(s1, sizeof s1, xr, xs);
        shape_str(s2, sizeof s2, rank, shape);
        return bfail(b, "Cannot broadcast, rank mismatch: %s, %s", s1, s2);
    }
    if (memcmp(xs, shape, sizeof(int64_t) * rank) == 0)
        return x;
    for (int i = 0; i < rank; i++) {
        if (xs[i] != shape[i] && xs[i] != 1)
            return bfail(b,
                         "Cannot broadcast, the expanded size of the tensor (%lld) must match the "
                         "existing size (%lld) at non-singleton dimension %d: [%lld], [%lld]",
                         (long long)shape[i], (long long)xs[i], i, (long long)xs[i],
                         (long long)shape[i]);
    }
    return bemit(b, IR_BROADCAST, &x, 1, ir_type_tensor(b->m, belem(b, x), rank, shape));
}

IrRef
ir_b_broadcast_to(IrBuilder *b, IrRef x, int rank, const int64_t *shape)
{
    if (check_shape(b, rank, shape, "broadcast_to") < 0)
        return IR_NONE;
    return bbroadcast_shape(b, x, rank, shape);
}

IrRef
ir_b_expand_dims(IrBuilder *b, IrRef x, int axis)
{
    int r = brank(b, x);
    if (axis < 0)
        axis += r + 1;
    if (axis < 0 || axis > r)
        return bfail(b, "expand_dims: axis %d out of range for rank %d", axis, r);
    if (!bis_tensor(b, x)) {
        int64_t one = 1;
        return bsplat(b, x, 1, &one);
    }
    if (r + 1 > IR_MAX_RANK)
        return bfail(b, "expand_dims: rank would exceed %d", IR_MAX_RANK);
    int64_t shape[IR_MAX_RANK];
    const int64_t *xs = bshape(b, x);
    for (int i = 0, j = 0; i <= r; i++)
        shape[i] = i == axis ? 1 : xs[j++];
    IrOp *op = bemit_op(b, IR_EXPAND_DIMS, &x, 1, ir_type_tensor(b->m, belem(b, x), r + 1, shape));
    op->i[0] = axis;
    return op->res[0];
}

int
bbroadcast_pair(IrBuilder *b, IrRef *x, IrRef *y)
{
    bool tx = bis_tensor(b, *x), ty = bis_tensor(b, *y);
    if (tx && !ty) {
        *y = bsplat(b, *y, brank(b, *x), bshape(b, *x));
        return 0;
    }
    if (!tx && ty) {
        *x = bsplat(b, *x, brank(b, *y), bshape(b, *y));
        return 0;
    }
    if (!tx && !ty)
        return 0;
    while (brank(b, *x) < brank(b, *y))
        *x = ir_b_expand_dims(b, *x, 0);
    while (brank(b, *y) < brank(b, *x))
        *y = ir_b_expand_dims(b, *y, 0);
    int r = brank(b, *x);
    const int64_t *xs = bshape(b, *x), *ys = bshape(b, *y);
    int64_t out[IR_MAX_RANK];
    for (int i = 0; i < r; i++) {
        if (xs[i] == 1)
            out[i] = ys[i];
        else if (ys[i] == 1 || ys[i] == xs[i])
            out[i] = xs[i];
        else {
            bfail(b, "Cannot make_shape_compatible: incompatible dimensions at index %d: %lld and %lld",
                  i, (long long)xs[i], (long long)ys[i]);
            return -1;
        }
    }
    *x = bbroadcast_shape(b, *x, r, out);
    *y = bbroadcast_shape(b, *y, r, out);
    return (*x && *y) ? 0 : -1;
}

IrRef
ir_b_reshape(IrBuilder *b, IrRef x, int rank, const int64_t *shape, bool can_reorder)
{
    if (check_shape(b, rank, shape, "reshape") < 0)
        return IR_NONE;
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    if (n != ir_type_numel(b->m, btype(b, x)))
        return bfail(b, "reshape() cannot change total number of elements in tensor");
    if (!bis_tensor(b, x))
        return bsplat(b, x, rank, shape);
    IrOp *op = bemit_op(b, IR_RESHAPE, &x, 1, ir_type_tensor(b->m, belem(b, x), rank, shape));
    op->i[0] = can_reorder;
    return op->res[0];
}

IrRef
ir_b_permute(IrBuilder *b, IrRef x, int rank, const int64_t *dims)
{
    int r = brank(b, x);
    if (rank != r)
        return bfail(b, "permute dims must have the same length as input shape, got %d and %d", rank, r);
    bool seen[IR_MAX_RANK] = {0};
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || dims[i] >= r || seen[dims[i]])
            return bfail(b, "permute dims must be a permutation of 0, 1, ..., n-1");
        seen[dims[i]] = true;
    }
    const int64_t *xs = bshape(b, x);
    int64_t shape[IR_MAX_RANK];
    bool ident = true;
    for (int i = 0; i < r; i++) {
        shape[i] = xs[dims[i]];
        ident &= dims[i] == i;
    }
    if (ident)
        return x;
    IrOp *op = bemit_op(b, IR_TRANS, &x, 1, ir_type_tensor(b->m, belem(b, x), r, shape));
    ir_op_set_ints(b->fn, op, dims, (uint32_t)rank);
    return op->res[0];
}

IrRef
ir_b_cat(IrBuilder *b, IrRef x, IrRef y, bool can_reorder)
{
    if (brank(b, x) != 1 || brank(b, y) != 1)
        return bfail(b, "cat: only 1-D tensors are supported, got ranks %d and %d", brank(b, x), brank(b, y));
    if (belem(b, x) != belem(b, y))
        return bfail(b, "cat: element types differ");
    int64_t n = bshape(b, x)[0] + bshape(b, y)[0];
    if (!is_pow2(n))
        return bfail(b, "cat: result size %lld must be a power of 2", (long long)n);
    IrRef args[2] = {x, y};
    return bemit(b, IR_CAT, args, 2, ir_type_tensor(b->m, belem(b, x), 1, &n));
}

IrRef
ir_b_join(IrBuilder *b, IrRef x, IrRef y)
{
    if (bbroadcast_pair(b, &x, &y) < 0)
        return IR_NONE;
    if (belem(b, x) != belem(b, y))
        return bfail(b, "join: element types differ");
    int r = brank(b, x);
    if (r + 1 > IR_MAX_RANK)
        return bfail(b, "join: rank too large");
    int64_t shape[IR_MAX_RANK];
    memcpy(shape, bshape(b, x), sizeof(int64_t) * r);
    shape[r] = 2;
    IrRef args[2] = {x, y};
    return bemit(b, IR_JOIN, args, 2, ir_type_tensor(b->m, belem(b, x), r + 1, shape));
}

int
ir_b_split(IrBuilder *b, IrRef x, IrRef out[2])
{
    int r = brank(b, x);
    if (r < 1 || bshape(b, x)[r - 1] != 2) {
        bfail(b, "split: last dimension must have size 2");
        return -1;
    }
    IrType t = ir_type_tensor(b->m, belem(b, x), r - 1, bshape(b, x));
    IrType ts[2] = {t, t};
    IrOp *op = ir_op_create(b->fn, IR_SPLIT, &x, 1, ts, 2, 0);
    op->loc = b->loc;
    ir_block_append(b->blk, op);
    out[0] = op->res[0];
    out[1] = op->res[1];
    return 0;
}

/* ---- structured control flow ------------------------------------------------------------ */

static int
push(IrBuilder *b, int kind, IrOp *op, int n)
{
    if (b->depth == IRB_MAX_DEPTH) {
        bfail(b, "control flow nested too deeply");
        return -1;
    }
    b->stack[b->depth++] = (IrbFrame){.kind = kind, .op = op, .saved = b->blk, .n = n};
    return 0;
}

static IrbFrame *
top(IrBuilder *b, int kind)
{
    if (!b->depth || b->stack[b->depth - 1].kind != kind)
        ir_die("builder control-flow stack mismatch (expected frame %d)", kind);
    return &b->stack[b->depth - 1];
}

/* Checks yields against the loop-carried types; names are the front end's job. */
static int
check_yields(IrBuilder *b, const IrRef *vals, const IrType *types, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        if (btype(b, vals[i]) != types[i]) {
            char a[256], c[256];
            bfail(b, "%s: value %d has type %s but %s was expected", what, i,
                  btype_name(b, btype(b, vals[i]), a, sizeof a), btype_name(b, types[i], c, sizeof c));
            return -1;
        }
    }
    return 0;
}

static IrRef
loop_bound(IrBuilder *b, IrOperand o, int dtype)
{
    IrRef v = bvalue(b, o, o.kind == IR_OPND_VALUE ? -1 : dtype);
    if (!v)
        return IR_NONE;
    if (bis_tensor(b, v) || !ir_dtype_is_int((IrDtype)bdtype(b, v)) || bdtype(b, v) == IR_I1)
        return bfail(b, "for loop bounds must be integer scalars");
    return v;
}

/* Sign of a loop step: 1 when known positive (a positive constant, the grid size,
 * an unsigned type), -1 for a negative constant, 0 when only the run knows. */
static int
step_sign(IrBuilder *b, IrRef s)
{
    if (!ir_dtype_is_signed((IrDtype)bdtype(b, s)))
        return 1;
    IrOp *d = b->fn->vals[s].def;
    if (d && d->opc == IR_CONST)
        return d->i[0] > 0 ? 1 : d->i[0] < 0 ? -1 : 0;
    return d && d->opc == IR_GET_NUM_PROGRAMS ? 1 : 0;
}

IrRef
bbin(IrBuilder *b, IrOpc opc, IrRef x, IrRef y)
{
    IrRef args[2] = {x, y};
    return bemit(b, opc, args, 2, btype(b, x));
}

IrRef
bselect(IrBuilder *b, IrRef c, IrRef x, IrRef y)
{
    IrRef args[3] = {c, x, y};
    return bemit(b, IR_SELECT, args, 3, btype(b, x));
}

int
ir_b_for_begin(IrBuilder *b, IrOperand lb, IrOperand ub, IrOperand step, const IrRef *inits, int n,
               IrRef *body_args)
{
    IrRef l = loop_bound(b, lb, IR_I32), u = loop_bound(b, ub, IR_I32), s = loop_bound(b, step, IR_I32);
    if (!l || !u || !s)
        return -1;
    /* Bounds share one type: the widest, like upstream's iv type. */
    int dt = bdtype(b, l);
    if (ir_dtype_bits((IrDtype)bdtype(b, u)) > ir_dtype_bits((IrDtype)dt))
        dt = bdtype(b, u);
    if (ir_dtype_bits((IrDtype)bdtype(b, s)) > ir_dtype_bits((IrDtype)dt))
        dt = bdtype(b, s);
    IrType it = ir_type_scalar(b->m, (IrDtype)dt);
    l = bcast(b, l, it, 0);
    u = bcast(b, u, it, 0);
    s = bcast(b, s, it, 0);
    /* scf.for counts up by a positive step; Python's range (upstream's semantics)
     * also counts down. A step below zero runs the loop from 'u' up to 'l' by -step
     * and the body sees l + u - iv: l, l + step, ... down to above u, as range does.
     * A step of unknown sign picks either form at run time with selects. */
    int sign = step_sign(b, s);
    IrRef down = IR_NONE, mirror = IR_NONE;
    if (sign <= 0) {
        mirror = bbin(b, IR_ADDI, l, u);
        IrRef zero = bconst_int(b, 0, it), neg = bbin(b, IR_SUBI, zero, s);
        if (sign < 0) {
            IrRef t = l;
            l = u, u = t, s = neg;
        } else {
            IrRef args[2] = {s, zero};
            IrOp *lt = bemit_op(b, IR_CMPI, args, 2, ir_type_scalar(b->m, IR_I1));
            lt->i[0] = IR_CMPI_SLT;
            down = lt->res[0];
            IrRef l2 = bselect(b, down, u, l), u2 = bselect(b, down, l, u);
            s = bselect(b, down, neg, s);
            l = l2, u = u2;
        }
    }
    IrRef args[3 + 64];
    if (n > 64)
        return (int)bfail(b, "too many loop-carried values (%d)", n) - 1;
    args[0] = l, args[1] = u, args[2] = s;
    IrType rt[64] = {0};
    for (int i = 0; i < n; i++) {
        args[3 + i] = inits[i];
        rt[i] = btype(b, inits[i]);
    }
    IrOp *op = ir_op_create(b->fn, IR_FOR, args, 3 + (uint32_t)n, rt, (uint32_t)n, 1);
    op->loc = b->loc;
    ir_block_append(b->blk, op);
    IrBlock *body = op->regs[0];
    body_args[0] = ir_block_add_arg(body, it);
    for (int i = 0; i < n; i++)
        body_args[1 + i] = ir_block_add_arg(body, rt[i]);
    if (push(b, FR_FOR, op, n) < 0)
        return -1;
    b->blk = body;
    if (mirror) {
        IrRef rev = bbin(b, IR_SUBI, mirror, body_args[0]);
        body_args[0] = down ? bselect(b, down, rev, body_args[0]) : rev;
    }
    return 0;
}

int
ir_b_for_parallel(IrBuilder *b)
{
    IrbFrame *fr = top(b, FR_FOR);
    if (fr->n)
        return (int)bfail(b, "smt.parallel loops carry no values from one iteration to the next") - 1;
    fr->op->i[0] = 1;
    return 0;
}

int
ir_b_for_end(IrBuilder *b, const IrRef *yields, int n)
{
    IrbFrame *fr = top(b, FR_FOR);
    IrOp *op = fr->op;
    IrType rt[64] = {0};
    for (int i = 0; i < fr->n; i++)
        rt[i] = btype(b, op->res[i]);
    if (n != fr->n) {
        bfail(b, "for loop yields %d values but carries %d", n, fr->n);
        return -1;
    }
    if (check_yields(b, yields, rt, n, "loop-carried value") < 0)
        return -1;
    bemit_op(b, IR_YIELD, yields, (uint32_t)n, 0);
    b->blk = fr->saved;
    b->depth--;
    b->closed = op;
    return 0;
}

int
ir_b_if_begin(IrBuilder *b, IrRef cond)
{
    if (bis_tensor(b, cond))
        return (int)bfail(b, "if condition must be a scalar, not a tensor") - 1;
    if (bdtype(b, cond) != IR_I1)
        cond = bcmp_ne_zero(b, cond);
    if (!cond)
        return -1;
    IrOp *op = ir_op_create(b->fn, IR_IF, &cond, 1, NULL, 0, 2);
    op->loc = b->loc;
    ir_block_append(b->blk, op);
    if (push(b, FR_IF_THEN, op, 0) < 0)
        return -1;
    b->blk = op->regs[0];
    return 0;
}

int
ir_b_if_else(IrBuilder *b)
{
    IrbFrame *fr = top(b, FR_IF_THEN);
    fr->kind = FR_IF_ELSE;
    b->blk = fr->op->regs[1];
    return 0;
}

int
ir_b_if_block(IrBuilder *b, int which)
{
    IrbFrame *fr = &b->stack[b->depth - 1];
    if (!b->depth || (fr->kind != FR_IF_THEN && fr->kind != FR_IF_ELSE) || which < 0 || which > 1)
        ir_die("if_block without an open if");
    if (which == 1)
        fr->kind = FR_IF_ELSE;
    b->blk = fr->op->regs[which];
    return 0;
}

int
ir_b_if_end(IrBuilder *b, const IrRef *then_yields, const IrRef *else_yields, int n)
{
    IrbFrame *fr = &b->stack[b->depth - 1];
    if (fr->kind != FR_IF_THEN && fr->kind != FR_IF_ELSE)
        ir_die("if_end without if_begin");
    IrOp *op = fr->op;
    if (n > 0 && fr->kind == FR_IF_THEN) {
        bfail(b, "if with results needs an else branch");
        return -1;
    }
    IrType rt[64] = {0};
    if (n > 64)
        return (int)bfail(b, "too many if results") - 1;
    for (int i = 0; i < n; i++) {
        rt[i] = btype(b, then_yields[i]);
        if (btype(b, else_yields[i]) != rt[i]) {
            char a[256], c[256];
            bfail(b, "mismatched type for value %d between then block (%s) and else block (%s)", i,
                  btype_name(b, rt[i], a, sizeof a), btype_name(b, btype(b, else_yields[i]), c, sizeof c));
            return -1;
        }
    }
    /* terminate both blocks */
    IrOp *y = ir_op_create(b->fn, IR_YIELD, then_yields, (uint32_t)n, NULL, 0, 0);
    y->loc = b->loc;
    ir_block_append(op->regs[0], y);
    y = ir_op_create(b->fn, IR_YIELD, else_yields, (uint32_t)n, NULL, 0, 0);
    y->loc = b->loc;
    ir_block_append(op->regs[1], y);
    /* results are added now that their types are known */
    op->nres = (uint32_t)n;
    op->res = ir_newv(&b->m->arena, IrRef, n ? n : 1);
    for (int i = 0; i < n; i++) {
        IrRef r = ir_val_new(b->fn, rt[i]);
        b->fn->vals[r].def = op;
        b->fn->vals[r].idx = (uint32_t)i;
        op->res[i] = r;
    }
    b->blk = fr->saved;
    b->depth--;
    b->closed = op;
    return 0;
}

int
ir_b_while_begin(IrBuilder *b, const IrRef *inits, int n, IrRef *before_args)
{
    if (n > 64)
        return (int)bfail(b, "too many loop-carried values (%d)", n) - 1;
    IrType rt[64] = {0};
    for (int i = 0; i < n; i++)
        rt[i] = btype(b, inits[i]);
    IrOp *op = ir_op_create(b->fn, IR_WHILE, inits, (uint32_t)n, rt, (uint32_t)n, 2);
    op->loc = b->loc;
    ir_block_append(b->blk, op);
    for (int i = 0; i < n; i++)
        before_args[i] = ir_block_add_arg(op->regs[0], rt[i]);
    if (push(b, FR_WHILE_BEFORE, op, n) < 0)
        return -1;
    b->blk = op->regs[0];
    return 0;
}

int
ir_b_while_cond(IrBuilder *b, IrRef cond, const IrRef *vals, int n, IrRef *after_args)
{
    IrbFrame *fr = top(b, FR_WHILE_BEFORE);
    IrOp *op = fr->op;
    if (bis_tensor(b, cond))
        return (int)bfail(b, "while condition must be a scalar, not a tensor") - 1;
    if (bdtype(b, cond) != IR_I1)
        cond = bcmp_ne_zero(b, cond);
    if (n != fr->n)
        return (int)bfail(b, "while condition forwards %d values but the loop carries %d", n, fr->n) - 1;
    IrType rt[64] = {0};
    for (int i = 0; i < n; i++)
        rt[i] = btype(b, op->res[i]);
    if (check_yields(b, vals, rt, n, "loop-carried value") < 0)
        return -1;
    IrRef args[65];
    args[0] = cond;
    memcpy(args + 1, vals, sizeof(IrRef) * n);
    bemit_op(b, IR_CONDITION, args, 1 + (uint32_t)n, 0);
    for (int i = 0; i < n; i++)
        after_args[i] = ir_block_add_arg(op->regs[1], rt[i]);
    fr->kind = FR_WHILE_AFTER;
    b->blk = op->regs[1];
    return 0;
}

int
ir_b_while_end(IrBuilder *b, const IrRef *yields, int n)
{
    IrbFrame *fr = top(b, FR_WHILE_AFTER);
    IrOp *op = fr->op;
    if (n != fr->n)
        return (int)bfail(b, "while body yields %d values but the loop carries %d", n, fr->n) - 1;
    IrType rt[64] = {0};
    for (int i = 0; i < n; i++)
        rt[i] = btype(b, op->res[i]);
    if (check_yields(b, yields, rt, n, "loop-carried value") < 0)
        return -1;
    bemit_op(b, IR_YIELD, yields, (uint32_t)n, 0);
    b->blk = fr->saved;
    b->depth--;
    b->closed = op;
    return 0;
}

IrRef
ir_b_region_result(IrBuilder *b, int i)
{
    if (!b->closed || i < 0 || (uint32_t)i >= b->closed->nres)
        return bfail(b, "no result %d of the last structured op", i);
    return b->closed->res[i];
}

/* Reduce/scan regions share the frame handling; ir_build_mem.c creates the ops. */
int
ir_b_scratch_begin(IrBuilder *b)
{
    IrBlock *blk = ir_block_create(b->fn, NULL);
    if (push(b, FR_SCRATCH, NULL, 0) < 0)
        return -1;
    b->blk = blk;
    return 0;
}

int
ir_b_scratch_end(IrBuilder *b)
{
    /* Unwind whatever the dry run left open (e.g. after an error inside it). */
    while (b->depth && b->stack[b->depth - 1].kind != FR_SCRATCH) {
        b->blk = b->stack[b->depth - 1].saved;
        b->depth--;
    }
    IrbFrame *fr = top(b, FR_SCRATCH);
    b->blk = fr->saved;
    b->depth--;
    return 0;
}

IrRef
ir_b_placeholder(IrBuilder *b, IrType t)
{
    /* A block argument of a detached block: defined, never printed or lowered. */
    IrBlock *blk = ir_block_create(b->fn, NULL);
    return ir_block_add_arg(blk, t);
}

/* ---- debugging and profiling ---------------------------------------------------------------- */

int
ir_b_print(IrBuilder *b, const char *prefix, bool hex, const IrRef *vals, int n)
{
    IrOp *op = bemit_op(b, IR_PRINT, vals, (uint32_t)n, 0);
    op->s = ir_arena_strdup(&b->m->arena, prefix, strlen(prefix));
    op->i[0] = hex;
    int64_t sg[64];
    if (n > 64)
        return (int)bfail(b, "device_print: too many arguments") - 1;
    for (int i = 0; i < n; i++)
        sg[i] = bis_ptr(b, vals[i]) ? 0 : ir_dtype_is_signed((IrDtype)bdtype(b, vals[i]));
    ir_op_set_ints(b->fn, op, sg, (uint32_t)n);
    return 0;
}

/* tt.assert of a scalar i1: a tensor condition is reduced first (every element true),
 * so the lowering tests one value per assert. */
int
ir_b_assert(IrBuilder *b, IrRef cond, const char *msg)
{
    if (bis_tensor(b, cond)) {
        IrRef x = bcast(b, cond, ir_type_scalar(b->m, IR_I32), 0);
        cond = x ? ir_b_reduce(b, IR_RED_MIN, x, IR_AXIS_NONE, false, -1) : IR_NONE;
        if (!cond)
            return -1;
    }
    if (bdtype(b, cond) != IR_I1)
        cond = bcmp_ne_zero(b, cond);
    if (!cond)
        return -1;
    IrOp *op = bemit_op(b, IR_ASSERT, &cond, 1, 0);
    op->s = ir_arena_strdup(&b->m->arena, msg, strlen(msg));
    return 0;
}

int
ir_b_proton_record(IrBuilder *b, bool is_start, const char *name)
{
    IrOp *op = bemit_op(b, IR_PROTON_RECORD, NULL, 0, 0);
    op->i[0] = is_start;
    op->s = ir_arena_strdup(&b->m->arena, name, strlen(name));
    return 0;
}
