/*
 * ir_verify.c — checks that a function is well-formed tile IR.
 *
 * Requires: nothing. Preserves: everything (read-only; uses IrVal.aux as scratch
 * and resets it). Checks operand and result counts (from ir_ops.h), the type
 * rules of every op, region shapes and terminators, and dominance in the
 * structured nesting: an operand is a value defined earlier in the same block
 * or an enclosing one, or an argument of an enclosing block. Each problem is one
 * error diagnostic "<op>: <message>" at the op's location.
 */
#include "ir_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct Verifier {
    IrFunc *f;
    IrModule *m;
    int nerr;
    IrRef *stack; /* values made visible, in order; popped when leaving a region */
    uint32_t nstack, capstack;
} Verifier;

static void
err(Verifier *v, const IrOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
err(Verifier *v, const IrOp *op, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (op)
        ir_diag(v->m, op->loc, 0, "%s: %s", ir_opc_name[op->opc], msg);
    else
        ir_diag(v->m, v->f->loc, 0, "@%s: %s", v->f->name, msg);
    v->nerr++;
}

/* ---- type helpers ------------------------------------------------------------------------- */

static IrType ty(Verifier *v, IrRef r) { return ir_val_type(v->f, r); }
static const IrTypeInfo *ti(Verifier *v, IrType t) { return ir_type_info(v->m, t); }
static bool is_tensor(Verifier *v, IrType t) { return ti(v, t)->kind == IR_TK_TENSOR; }
static IrType elem(Verifier *v, IrType t) { return ir_type_elem(v->m, t); }
static int rank(Verifier *v, IrType t) { return ir_type_rank(v->m, t); }
static const int64_t *shape(Verifier *v, IrType t) { return ir_type_shape(v->m, t); }

/* The type with signedness erased (u32 -> i32), as the text form sees it. */
static IrType
signless(Verifier *v, IrType t)
{
    const IrTypeInfo *i = ti(v, t);
    IrTypeInfo c = *i;
    switch (i->kind) {
    case IR_TK_SCALAR:
        if (i->dtype >= IR_U8 && i->dtype <= IR_U64)
            return ir_type_scalar(v->m, (IrDtype)(i->dtype - IR_U8 + IR_I8));
        return t;
    case IR_TK_PTR:
    case IR_TK_TENSOR:
        c.elem = signless(v, i->elem);
        return c.elem == i->elem ? t : ir_type_intern(v->m, &c);
    default:
        return t;
    }
}

static bool same(Verifier *v, IrType a, IrType b) { return a == b || signless(v, a) == signless(v, b); }

static int
dtype_of(Verifier *v, IrType t)
{
    const IrTypeInfo *i = ti(v, elem(v, t));
    return i->kind == IR_TK_SCALAR ? i->dtype : -1;
}

static bool is_int(Verifier *v, IrType t) { int d = dtype_of(v, t); return d >= 0 && ir_dtype_is_int((IrDtype)d); }
static bool is_float(Verifier *v, IrType t) { int d = dtype_of(v, t); return d >= 0 && ir_dtype_is_float((IrDtype)d); }
static bool is_i1(Verifier *v, IrType t) { return dtype_of(v, t) == IR_I1; }
static int bits(Verifier *v, IrType t) { return ir_dtype_bits((IrDtype)dtype_of(v, t)); }
static bool is_ptr_elem(Verifier *v, IrType t) { return ti(v, elem(v, t))->kind == IR_TK_PTR; }

static bool
same_shape(Verifier *v, IrType a, IrType b)
{
    int r = rank(v, a);
    if (r != rank(v, b))
        return false;
    return r == 0 || memcmp(shape(v, a), shape(v, b), sizeof(int64_t) * (size_t)r) == 0;
}

static const char *
tstr(Verifier *v, IrType t, char *buf)
{
    ir_type_str(v->m, t, buf, 200);
    return buf;
}

static IrType
with_elem(Verifier *v, IrType t, IrType e)
{
    return is_tensor(v, t) ? ir_type_tensor(v->m, e, rank(v, t), shape(v, t)) : e;
}

/* Result type of loading through pointer type p (0 when p is not a pointer). */
static IrType
load_type(Verifier *v, IrType p)
{
    IrType pt = ir_type_pointee(v->m, p);
    return pt ? with_elem(v, p, pt) : 0;
}

static bool
expect_same(Verifier *v, IrOp *op, IrType a, IrType b, const char *what)
{
    char x[200], y[200];
    if (same(v, a, b))
        return true;
    err(v, op, "%s: %s vs %s", what, tstr(v, a, x), tstr(v, b, y));
    return false;
}

/* ---- per-op type rules ----------------------------------------------------------------------- */

static bool
is_float_op(IrOpc o)
{
    switch (o) {
    case IR_ADDF: case IR_SUBF: case IR_MULF: case IR_DIVF: case IR_REMF: case IR_MAXIMUMF:
    case IR_MINIMUMF: case IR_MAXNUMF: case IR_MINNUMF: case IR_PRECISE_DIVF: case IR_NEGF:
    case IR_POWF: case IR_ATAN2: case IR_COPYSIGN: case IR_FMA:
        return true;
    default:
        return ir_opc_fmt[o] == IR_FMT_UN && o != IR_ABSI;
    }
}

/* BIN, UN, TERN: every operand and the result have one type. */
static void
check_same(Verifier *v, IrOp *op)
{
    IrType t = ty(v, op->res[0]);
    for (uint32_t i = 0; i < op->nargs; i++)
        if (!expect_same(v, op, ty(v, op->args[i]), t, "operand and result types differ"))
            return;
    if (is_float_op((IrOpc)op->opc) ? !is_float(v, t) : !is_int(v, t)) {
        char b[200];
        err(v, op, "%s operands required, found %s", is_float_op((IrOpc)op->opc) ? "float" : "integer",
            tstr(v, t, b));
    }
}

static void
check_cast(Verifier *v, IrOp *op)
{
    IrType a = ty(v, op->args[0]), r = ty(v, op->res[0]);
    char x[200], y[200];
    if (!same_shape(v, a, r)) {
        err(v, op, "shapes differ: %s to %s", tstr(v, a, x), tstr(v, r, y));
        return;
    }
    bool ok;
    switch (op->opc) {
    case IR_EXTSI: case IR_EXTUI: ok = is_int(v, a) && is_int(v, r) && bits(v, a) < bits(v, r); break;
    case IR_TRUNCI: ok = is_int(v, a) && is_int(v, r) && bits(v, a) > bits(v, r); break;
    case IR_SITOFP: case IR_UITOFP: ok = is_int(v, a) && is_float(v, r); break;
    case IR_FPTOSI: case IR_FPTOUI: ok = is_float(v, a) && is_int(v, r); break;
    case IR_EXTF: ok = is_float(v, a) && is_float(v, r) && bits(v, a) < bits(v, r); break;
    case IR_TRUNCF: ok = is_float(v, a) && is_float(v, r) && bits(v, a) > bits(v, r); break;
    case IR_BITCAST:
        ok = !is_ptr_elem(v, a) && !is_ptr_elem(v, r) && bits(v, a) == bits(v, r);
        break;
    case IR_INT_TO_PTR: ok = is_int(v, a) && is_ptr_elem(v, r); break;
    case IR_PTR_TO_INT: ok = is_ptr_elem(v, a) && is_int(v, r); break;
    case IR_PTR_BITCAST:
        ok = is_ptr_elem(v, a) == is_ptr_elem(v, r) &&
             (is_ptr_elem(v, a) || bits(v, a) == bits(v, r));
        break;
    case IR_ISNAN: case IR_ISINF: case IR_ISFINITE: ok = is_float(v, a) && is_i1(v, r); break;
    default: ok = true;
    }
    if (!ok)
        err(v, op, "invalid cast from %s to %s", tstr(v, a, x), tstr(v, r, y));
}

static void
check_cmp(Verifier *v, IrOp *op)
{
    IrType a = ty(v, op->args[0]), r = ty(v, op->res[0]);
    char x[200];
    if (!expect_same(v, op, a, ty(v, op->args[1]), "operand types differ"))
        return;
    if (op->opc == IR_CMPI ? !is_int(v, a) : !is_float(v, a))
        err(v, op, "%s operands required, found %s", op->opc == IR_CMPI ? "integer" : "float",
            tstr(v, a, x));
    else if (!is_i1(v, r) || !same_shape(v, a, r))
        err(v, op, "result must be i1 with the operands' shape, found %s", tstr(v, r, x));
    if (op->i[0] < 0 || op->i[0] >= (op->opc == IR_CMPI ? IR_CMPI_COUNT : IR_CMPF_COUNT))
        err(v, op, "bad predicate %lld", (long long)op->i[0]);
}

static void
check_const(Verifier *v, IrOp *op)
{
    IrType t = ty(v, op->res[0]);
    if (dtype_of(v, t) < 0) {
        char x[200];
        err(v, op, "constants must have an integer or float type, found %s", tstr(v, t, x));
    }
}

static void
check_shape_op(Verifier *v, IrOp *op)
{
    IrType a = ty(v, op->args[0]), r = ty(v, op->res[0]);
    char x[200], y[200];
    int ra = rank(v, a), rr = rank(v, r);
    const int64_t *sa = shape(v, a), *sr = shape(v, r);
    switch (op->opc) {
    case IR_SPLAT:
        if (ra || !rr || elem(v, r) != a)
            err(v, op, "cannot splat %s to %s", tstr(v, a, x), tstr(v, r, y));
        break;
    case IR_BROADCAST:
        if (ra != rr || elem(v, a) != elem(v, r) || !ra) {
            err(v, op, "cannot broadcast %s to %s", tstr(v, a, x), tstr(v, r, y));
            break;
        }
        for (int i = 0; i < ra; i++)
            if (sa[i] != sr[i] && sa[i] != 1) {
                err(v, op, "cannot broadcast %s to %s", tstr(v, a, x), tstr(v, r, y));
                break;
            }
        break;
    case IR_EXPAND_DIMS: {
        bool ok = rr == ra + 1 && op->i[0] >= 0 && op->i[0] <= ra && elem(v, a) == elem(v, r);
        for (int i = 0, j = 0; ok && i < rr; i++)
            ok = i == op->i[0] ? sr[i] == 1 : sr[i] == sa[j++];
        if (!ok)
            err(v, op, "axis %lld: %s does not expand to %s", (long long)op->i[0], tstr(v, a, x),
                tstr(v, r, y));
        break;
    }
    case IR_RESHAPE:
        if (ir_type_numel(v->m, a) != ir_type_numel(v->m, r) || elem(v, a) != elem(v, r))
            err(v, op, "cannot reshape %s to %s", tstr(v, a, x), tstr(v, r, y));
        break;
    case IR_TRANS: {
        bool ok = (int)op->nints == ra && ra == rr && elem(v, a) == elem(v, r), seen[IR_MAX_RANK] = {0};
        for (int i = 0; ok && i < ra; i++) {
            int64_t k = op->ints[i];
            ok = k >= 0 && k < ra && !seen[k] && sr[i] == sa[k];
            if (ok)
                seen[k] = true;
        }
        if (!ok)
            err(v, op, "order is not a permutation from %s to %s", tstr(v, a, x), tstr(v, r, y));
        break;
    }
    default:
        break;
    }
}

static void
check_combine(Verifier *v, IrOp *op)
{
    IrType a = ty(v, op->args[0]), b = ty(v, op->args[op->nargs > 1]), r = ty(v, op->res[0]);
    char x[200], y[200];
    int ra = rank(v, a), rr = rank(v, r);
    const int64_t *sa = shape(v, a), *sr = shape(v, r);
    bool ok = true;
    switch (op->opc) {
    case IR_CAT:
        ok = a == b && ra && rr == ra && elem(v, a) == elem(v, r) && sr[0] == 2 * sa[0];
        for (int i = 1; ok && i < ra; i++)
            ok = sr[i] == sa[i];
        break;
    case IR_JOIN:
        ok = a == b && rr == ra + 1 && elem(v, a) == elem(v, r) && sr[ra] == 2 &&
             (ra == 0 || memcmp(sa, sr, sizeof(int64_t) * (size_t)ra) == 0);
        break;
    case IR_SPLIT:
        ok = ra >= 1 && sa[ra - 1] == 2 && rr == ra - 1 && elem(v, a) == elem(v, r) &&
             ty(v, op->res[1]) == r && (rr == 0 || memcmp(sa, sr, sizeof(int64_t) * (size_t)rr) == 0);
        break;
    case IR_GATHER:
        ok = ra && rank(v, b) == ra && is_int(v, b) && same_shape(v, b, r) &&
             elem(v, r) == elem(v, a) && op->i[0] >= 0 && op->i[0] < ra;
        break;
    case IR_HISTOGRAM:
        ok = ra == 1 && rr == 1 && is_int(v, a) && is_int(v, r);
        break;
    default:
        break;
    }
    if (!ok)
        err(v, op, "invalid operand %s for result %s", tstr(v, a, x), tstr(v, r, y));
}

static void
check_mem(Verifier *v, IrOp *op)
{
    IrType p = ty(v, op->args[0]);
    IrType lt = load_type(v, p);
    char x[200], y[200];
    if (!lt) {
        err(v, op, "pointer operand required, found %s", tstr(v, p, x));
        return;
    }
    bool block = ir_type_is_ptr(v->m, p) && is_tensor(v, ir_type_pointee(v->m, p));
    uint32_t imask = op->opc == IR_LOAD ? 1 : 2;
    if (op->opc == IR_LOAD)
        expect_same(v, op, ty(v, op->res[0]), lt, "result type must be the pointee type");
    else if (op->nargs < 2 || op->nargs > 3)
        err(v, op, "expects 2 or 3 operands, found %u", op->nargs);
    else
        expect_same(v, op, ty(v, op->args[1]), lt, "stored value type must be the pointee type");
    if (op->opc == IR_LOAD && op->nargs > 3)
        err(v, op, "expects 1 to 3 operands, found %u", op->nargs);
    if (op->nargs > imask) {
        IrType mt = ty(v, op->args[imask]);
        if (block)
            err(v, op, "masks are not allowed with block pointers");
        else if (!is_i1(v, mt) || !same_shape(v, mt, lt))
            err(v, op, "mask must be i1 with the pointer's shape, found %s", tstr(v, mt, y));
    }
    if (op->opc == IR_LOAD && op->nargs > 2)
        expect_same(v, op, ty(v, op->args[2]), lt, "'other' type must be the result type");
    for (uint32_t i = 0; i < op->nints; i++)
        if (!block || op->ints[i] < 0 || op->ints[i] >= rank(v, lt))
            err(v, op, "boundaryCheck dimension %lld invalid for %s", (long long)op->ints[i],
                tstr(v, p, x));
}

static void
check_block_ptr(Verifier *v, IrOp *op)
{
    IrType r = ty(v, op->res[0]), pt = ir_type_pointee(v->m, r);
    char x[200];
    if (!ir_type_is_ptr(v->m, r) || !pt || !is_tensor(v, pt)) {
        err(v, op, "result must be a block pointer, found %s", tstr(v, r, x));
        return;
    }
    uint32_t rk = (uint32_t)rank(v, pt);
    if (op->opc == IR_ADVANCE) {
        expect_same(v, op, ty(v, op->args[0]), r, "operand and result types differ");
        if (op->nargs != 1 + rk)
            err(v, op, "expects %u offsets, found %u", rk, op->nargs - 1);
        for (uint32_t i = 1; i < op->nargs; i++)
            if (!is_int(v, ty(v, op->args[i])) || rank(v, ty(v, op->args[i])))
                err(v, op, "offsets must be integer scalars");
        return;
    }
    IrType b = ty(v, op->args[0]);
    if (op->nargs != 1 + 3 * rk)
        err(v, op, "expects %u shape, stride and offset values, found %u", 3 * rk, op->nargs - 1);
    else if (!ir_type_is_ptr(v->m, b) || ir_type_pointee(v->m, b) != elem(v, pt))
        err(v, op, "base %s does not match the block's element type", tstr(v, b, x));
    for (uint32_t i = 1; i < op->nargs; i++)
        if (!is_int(v, ty(v, op->args[i])) || rank(v, ty(v, op->args[i])))
            err(v, op, "shape, strides and offsets must be integer scalars");
    if (op->nints != rk && op->nints != 0)
        err(v, op, "order has %u entries for rank %u", op->nints, rk);
}

static void
check_addptr(Verifier *v, IrOp *op)
{
    IrType p = ty(v, op->args[0]), o = ty(v, op->args[1]);
    char x[200], y[200];
    expect_same(v, op, ty(v, op->res[0]), p, "result type must be the pointer type");
    if (!is_ptr_elem(v, p) || !is_int(v, o) || !same_shape(v, p, o))
        err(v, op, "needs a pointer and an integer offset of the same shape, found %s and %s",
            tstr(v, p, x), tstr(v, o, y));
}

static void
check_atomic(Verifier *v, IrOp *op)
{
    IrType p = ty(v, op->args[0]), lt = load_type(v, p);
    uint32_t nv = op->opc == IR_ATOMIC_RMW ? 2 : 3;
    char x[200];
    if (!lt) {
        err(v, op, "pointer operand required, found %s", tstr(v, p, x));
        return;
    }
    if (op->opc == IR_ATOMIC_RMW && (op->nargs < 2 || op->nargs > 3)) {
        err(v, op, "expects 2 or 3 operands, found %u", op->nargs);
        return;
    }
    for (uint32_t i = 1; i < nv; i++)
        expect_same(v, op, ty(v, op->args[i]), lt, "value type must be the pointee type");
    expect_same(v, op, ty(v, op->res[0]), lt, "result type must be the pointee type");
    if (op->opc == IR_ATOMIC_RMW && op->nargs == 3 &&
        (!is_i1(v, ty(v, op->args[2])) || !same_shape(v, ty(v, op->args[2]), lt)))
        err(v, op, "mask must be i1 with the pointer's shape");
    if ((op->opc == IR_ATOMIC_RMW && (op->i[0] < 0 || op->i[0] >= IR_RMW_COUNT)) || op->i[1] < 0 ||
        op->i[1] >= IR_SEM_COUNT || op->i[2] < 0 || op->i[2] >= IR_SCOPE_COUNT)
        err(v, op, "bad kind, semantic or scope");
}

static void
check_dot(Verifier *v, IrOp *op)
{
    IrType a = ty(v, op->args[0]), b = ty(v, op->args[1]), c = ty(v, op->args[2]);
    char x[200], y[200], z[200];
    expect_same(v, op, ty(v, op->res[0]), c, "result type must be the accumulator type");
    int r = rank(v, a);
    bool ok = (r == 2 || r == 3) && rank(v, b) == r && rank(v, c) == r;
    if (ok) {
        const int64_t *sa = shape(v, a), *sb = shape(v, b), *sc = shape(v, c);
        int o = r - 2;
        ok = sa[o + 1] == sb[o] && sc[o] == sa[o] && sc[o + 1] == sb[o + 1] &&
             (r == 2 || (sa[0] == sb[0] && sa[0] == sc[0]));
    }
    if (!ok)
        err(v, op, "shapes do not compose: %s * %s -> %s", tstr(v, a, x), tstr(v, b, y),
            tstr(v, c, z));
}

/* The terminator the region r of op must end with. */
static IrOpc
region_term(const IrOp *op, uint32_t r)
{
    switch (op->opc) {
    case IR_REDUCE: return IR_REDUCE_RETURN;
    case IR_SCAN: return IR_SCAN_RETURN;
    case IR_WHILE: return r == 0 ? IR_CONDITION : IR_YIELD;
    default: return IR_YIELD;
    }
}

/* Checks that the block's argument types are t[0..n). */
static void
check_bargs(Verifier *v, IrOp *op, IrBlock *b, const IrType *t, uint32_t n, const char *what)
{
    if (b->nargs != n) {
        err(v, op, "%s: expected %u block arguments, found %u", what, n, b->nargs);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!same(v, ty(v, b->args[i]), t[i])) {
            char x[200], y[200];
            err(v, op, "%s: block argument %u has type %s, expected %s", what, i,
                tstr(v, ty(v, b->args[i]), x), tstr(v, t[i], y));
        }
}

/* Checks that terminator 'term' carries values of types t[0..n) (skip first). */
static void
check_yield(Verifier *v, IrOp *op, IrOp *term, uint32_t skip, const IrType *t, uint32_t n,
            const char *what)
{
    if (!term || term->nargs < skip) /* a missing terminator is reported by verify_block */
        return;
    if (term->nargs - skip != n) {
        err(v, op, "%s yields %u values, expected %u", what, term->nargs - skip, n);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!same(v, ty(v, term->args[skip + i]), t[i])) {
            char x[200], y[200];
            err(v, op, "%s value %u has type %s, expected %s", what, i,
                tstr(v, ty(v, term->args[skip + i]), x), tstr(v, t[i], y));
        }
}

static IrOp *
last_if(IrBlock *b, IrOpc opc)
{
    return b->last && b->last->opc == opc ? b->last : NULL;
}

static void
check_reduce_scan(Verifier *v, IrOp *op)
{
    uint32_t n = op->nargs;
    IrType et[2 * 64], rt[64];
    if (n == 0 || n > 64 || op->nres != n) {
        err(v, op, "expects as many results as operands (1 to 64), found %u and %u", n, op->nres);
        return;
    }
    IrType a0 = ty(v, op->args[0]);
    int r = rank(v, a0);
    if (!r || op->i[0] < 0 || op->i[0] >= r) {
        err(v, op, "axis %lld out of range for rank %d", (long long)op->i[0], r);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        IrType a = ty(v, op->args[i]);
        if (!same_shape(v, a, a0))
            err(v, op, "operands must have one shape");
        et[i] = et[n + i] = elem(v, a);
        if (op->opc == IR_SCAN) {
            rt[i] = a;
            continue;
        }
        int64_t s[IR_MAX_RANK];
        for (int d = 0, k = 0; d < r; d++)
            if (d != op->i[0])
                s[k++] = shape(v, a)[d];
        rt[i] = ir_type_tensor(v->m, elem(v, a), r - 1, s);
    }
    for (uint32_t i = 0; i < n; i++)
        expect_same(v, op, ty(v, op->res[i]), rt[i], "result type");
    check_bargs(v, op, op->regs[0], et, 2 * n, "combine region");
    check_yield(v, op, last_if(op->regs[0], region_term(op, 0)), 0, et, n, "combine region");
}

static void
check_for(Verifier *v, IrOp *op)
{
    IrType it = ty(v, op->args[0]), t[64 + 1];
    uint32_t n = op->nargs - 3;
    if (op->nargs < 3 || n > 64 || op->nres != n) {
        err(v, op, "expects lb, ub, step and one init per result");
        return;
    }
    if (!is_int(v, it) || rank(v, it) || !same(v, ty(v, op->args[1]), it) ||
        !same(v, ty(v, op->args[2]), it))
        err(v, op, "lb, ub and step must be integer scalars of one type");
    t[0] = it;
    for (uint32_t i = 0; i < n; i++) {
        t[1 + i] = ty(v, op->args[3 + i]);
        expect_same(v, op, ty(v, op->res[i]), t[1 + i], "result and init types differ");
    }
    if (op->i[0] && n)
        err(v, op, "a bind_sub_block loop (smt.parallel) cannot carry values");
    check_bargs(v, op, op->regs[0], t, n + 1, "body");
    check_yield(v, op, last_if(op->regs[0], IR_YIELD), 0, t + 1, n, "body");
}

static void
check_if(Verifier *v, IrOp *op)
{
    IrType c = ty(v, op->args[0]), t[64];
    if (!is_i1(v, c) || rank(v, c))
        err(v, op, "condition must be an i1 scalar");
    if (op->nres > 64)
        return;
    for (uint32_t i = 0; i < op->nres; i++)
        t[i] = ty(v, op->res[i]);
    for (uint32_t r = 0; r < op->nregs; r++) {
        check_bargs(v, op, op->regs[r], t, 0, r ? "else" : "then");
        check_yield(v, op, last_if(op->regs[r], IR_YIELD), 0, t, op->nres, r ? "else" : "then");
    }
}

static void
check_while(Verifier *v, IrOp *op)
{
    IrType t[64], rt[64];
    if (op->nargs > 64 || op->nres > 64)
        return;
    for (uint32_t i = 0; i < op->nargs; i++)
        t[i] = ty(v, op->args[i]);
    for (uint32_t i = 0; i < op->nres; i++)
        rt[i] = ty(v, op->res[i]);
    check_bargs(v, op, op->regs[0], t, op->nargs, "before region");
    IrOp *c = last_if(op->regs[0], IR_CONDITION);
    if (c && (c->nargs < 1 || !is_i1(v, ty(v, c->args[0])) || rank(v, ty(v, c->args[0]))))
        err(v, op, "scf.condition needs an i1 scalar first");
    check_yield(v, op, c, 1, rt, op->nres, "before region");
    check_bargs(v, op, op->regs[1], rt, op->nres, "after region");
    check_yield(v, op, last_if(op->regs[1], IR_YIELD), 0, t, op->nargs, "after region");
}

static void
check_call(Verifier *v, IrOp *op)
{
    IrFunc *g = NULL;
    for (IrFunc *h = v->m->funcs; h; h = h->next)
        if (op->s && strcmp(h->name, op->s) == 0)
            g = h;
    if (!g) {
        err(v, op, "unknown function '@%s'", op->s ? op->s : "");
        return;
    }
    if (g->body->nargs != op->nargs || g->nrets != op->nres) {
        err(v, op, "@%s takes %u arguments and returns %u values", g->name, g->body->nargs, g->nrets);
        return;
    }
    for (uint32_t i = 0; i < op->nargs; i++)
        expect_same(v, op, ty(v, op->args[i]), ir_val_type(g, g->body->args[i]), "argument type");
    for (uint32_t i = 0; i < op->nres; i++)
        expect_same(v, op, ty(v, op->res[i]), g->rettypes[i], "result type");
}

/* Type rules of one op; dispatches on syntax family then opcode (one case per op
 * family, hence the length). */
static void
check_types(Verifier *v, IrOp *op)
{
    switch (ir_opc_fmt[op->opc]) {
    case IR_FMT_BIN: case IR_FMT_UN: case IR_FMT_TERN: check_same(v, op); return;
    case IR_FMT_CAST: check_cast(v, op); return;
    case IR_FMT_CMP: check_cmp(v, op); return;
    default: break;
    }
    IrType r = op->nres ? ty(v, op->res[0]) : 0;
    char x[200];
    switch (op->opc) {
    case IR_CONST: check_const(v, op); break;
    case IR_SELECT: {
        IrType c = ty(v, op->args[0]);
        expect_same(v, op, ty(v, op->args[1]), r, "operand and result types differ");
        expect_same(v, op, ty(v, op->args[2]), r, "operand and result types differ");
        if (!is_i1(v, c) || (rank(v, c) && !same_shape(v, c, r)))
            err(v, op, "condition must be i1, scalar or with the result's shape");
        break;
    }
    case IR_FP_TO_FP:
        if (!is_float(v, ty(v, op->args[0])) || !is_float(v, r) || !same_shape(v, ty(v, op->args[0]), r))
            err(v, op, "needs float types of one shape");
        break;
    case IR_CLAMPF:
        for (uint32_t i = 0; i < 3; i++)
            expect_same(v, op, ty(v, op->args[i]), r, "operand and result types differ");
        if (!is_float(v, r))
            err(v, op, "float operands required, found %s", tstr(v, r, x));
        break;
    case IR_EXTERN_ELEM:
        for (uint32_t i = 0; i < op->nargs; i++)
            if (!same_shape(v, ty(v, op->args[i]), r))
                err(v, op, "operands must have the result's shape");
        if (!op->s || !*op->s)
            err(v, op, "missing symbol");
        break;
    case IR_GET_PROGRAM_ID: case IR_GET_NUM_PROGRAMS:
        if (op->i[0] < 0 || op->i[0] > 2)
            err(v, op, "axis must be 0, 1 or 2");
        if (dtype_of(v, r) != IR_I32 || rank(v, r))
            err(v, op, "result must be i32");
        break;
    case IR_MAKE_RANGE:
        if (rank(v, r) != 1 || !is_int(v, r) || bits(v, r) != 32 || op->i[0] >= op->i[1] ||
            shape(v, r)[0] != op->i[1] - op->i[0])
            err(v, op, "start %lld, end %lld do not match %s", (long long)op->i[0],
                (long long)op->i[1], tstr(v, r, x));
        break;
    case IR_SPLAT: case IR_BROADCAST: case IR_EXPAND_DIMS: case IR_RESHAPE: case IR_TRANS:
        check_shape_op(v, op);
        break;
    case IR_CAT: case IR_JOIN: case IR_SPLIT: case IR_GATHER: case IR_HISTOGRAM:
        check_combine(v, op);
        break;
    case IR_ADDPTR: check_addptr(v, op); break;
    case IR_LOAD: case IR_STORE: check_mem(v, op); break;
    case IR_MAKE_TENSOR_PTR: case IR_ADVANCE: check_block_ptr(v, op); break;
    case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: check_atomic(v, op); break;
    case IR_DOT: check_dot(v, op); break;
    case IR_REDUCE: case IR_SCAN: check_reduce_scan(v, op); break;
    case IR_FOR: check_for(v, op); break;
    case IR_IF: check_if(v, op); break;
    case IR_WHILE: check_while(v, op); break;
    case IR_CALL: check_call(v, op); break;
    case IR_RETURN:
        if (op->nargs != v->f->nrets)
            err(v, op, "returns %u values, @%s has %u results", op->nargs, v->f->name, v->f->nrets);
        else
            for (uint32_t i = 0; i < op->nargs; i++)
                expect_same(v, op, ty(v, op->args[i]), v->f->rettypes[i], "returned type");
        break;
    case IR_PRINT:
        if (op->nints && op->nints != op->nargs)
            err(v, op, "isSigned has %u entries for %u operands", op->nints, op->nargs);
        break;
    case IR_ASSERT: case IR_ASSUME:
        if (!is_i1(v, ty(v, op->args[0])) || (op->opc == IR_ASSUME && rank(v, ty(v, op->args[0]))))
            err(v, op, "condition must be i1");
        break;
    case IR_PROTON_RECORD:
        if (!op->s || !*op->s)
            err(v, op, "missing scope name");
        break;
    default:
        break;
    }
}

/* ---- structure and dominance --------------------------------------------------------------- */

static void
push_vis(Verifier *v, IrRef r)
{
    if (v->nstack == v->capstack) {
        v->capstack = v->capstack ? v->capstack * 2 : 256;
        v->stack = realloc(v->stack, sizeof(IrRef) * v->capstack);
        if (!v->stack)
            ir_die("out of memory");
    }
    v->stack[v->nstack++] = r;
    v->f->vals[r].aux = 1;
}

static void
pop_vis(Verifier *v, uint32_t mark)
{
    while (v->nstack > mark)
        v->f->vals[v->stack[--v->nstack]].aux = 0;
}

static uint32_t
expected_regions(const IrOp *op)
{
    switch (op->opc) {
    case IR_REDUCE: case IR_SCAN: case IR_FOR: return 1;
    case IR_IF: case IR_WHILE: return 2;
    default: return 0;
    }
}

static bool
arity_ok(Verifier *v, IrOp *op)
{
    int na = ir_opc_nargs[op->opc], nr = ir_opc_nres[op->opc];
    bool ok = true;
    if (na >= 0 && op->nargs != (uint32_t)na) {
        err(v, op, "expects %d operands, found %u", na, op->nargs);
        ok = false;
    }
    if (nr >= 0 && op->nres != (uint32_t)nr) {
        err(v, op, "expects %d results, found %u", nr, op->nres);
        ok = false;
    }
    if (op->nregs != expected_regions(op)) {
        err(v, op, "expects %u regions, found %u", expected_regions(op), op->nregs);
        ok = false;
    }
    for (uint32_t i = 0; i < op->nargs; i++) {
        IrRef a = op->args[i];
        if (a == IR_NONE || a >= v->f->nvals) {
            err(v, op, "operand %u is not a value", i);
            ok = false;
        } else if (!v->f->vals[a].aux) {
            err(v, op, "operand %u does not dominate this use", i);
            ok = false;
        }
    }
    return ok;
}

static void verify_block(Verifier *v, IrBlock *b, IrOpc term);

/* Whether a block of this kind may be empty (an scf.if without results may
 * have an empty else block). */
static bool
may_be_empty(const IrBlock *b)
{
    return b->parent && b->parent->opc == IR_IF && b->parent->nres == 0;
}

static void
verify_block(Verifier *v, IrBlock *b, IrOpc term)
{
    uint32_t mark = v->nstack;
    for (uint32_t i = 0; i < b->nargs; i++)
        push_vis(v, b->args[i]);
    for (IrOp *op = b->first; op; op = op->next) {
        if (op->parent != b)
            err(v, op, "op's parent link is broken");
        bool is_term = ir_opc_flags[op->opc] & IR_F_TERM;
        if (is_term && op->next)
            err(v, op, "terminator must be the last op of its block");
        if (is_term && !op->next && op->opc != term)
            err(v, op, "%s must end with %s", b->parent ? ir_opc_name[b->parent->opc] : "a function",
                ir_opc_name[term]);
        if (arity_ok(v, op))
            check_types(v, op);
        for (uint32_t r = 0; r < op->nregs; r++)
            if (op->regs[r]->parent == op)
                verify_block(v, op->regs[r], region_term(op, r));
            else
                err(v, op, "region %u has a broken parent link", r);
        for (uint32_t i = 0; i < op->nres; i++)
            push_vis(v, op->res[i]);
    }
    if (!b->last ? !may_be_empty(b) : !(ir_opc_flags[b->last->opc] & IR_F_TERM)) {
        if (b->parent)
            err(v, b->parent, "region must end with %s", ir_opc_name[term]);
        else
            err(v, NULL, "function body must end with tt.return");
    }
    pop_vis(v, mark);
}

int
ir_verify_func(IrFunc *f)
{
    Verifier v = {.f = f, .m = f->mod};
    for (uint32_t i = 0; i < f->nvals; i++)
        f->vals[i].aux = 0;
    if (f->nrets && !f->rettypes)
        err(&v, NULL, "missing result types");
    verify_block(&v, f->body, IR_RETURN);
    free(v.stack);
    return v.nerr;
}
