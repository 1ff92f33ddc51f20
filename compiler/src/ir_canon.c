/*
 * ir_canon.c — canonicalization: constant folding and local simplification.
 *
 * Requires: nothing. Breaks: uses (IrVal.nuse is stale afterwards).
 * Folds integer, float and comparison ops on scalar and splat constants, casts of
 * constants, shape ops of splats; applies identities (x+0, x*1, x*0 for ints,
 * x&x, x-x ...), selects with a constant condition, addptr with a zero offset and
 * cast chains (trunc(ext x), ext(ext x)); ptr_to_int of int_to_ptr (also through a
 * select) to the integers, and a select of two scalar pointers to a cast pointer
 * (fold_ptr_to_int, fold_ptr_select); moves constants to the right of
 * commutative ops; folds `acc + dot(a, b, 0)` into `dot(a, b, acc)`; turns selects
 * that compute a min or max into the min/max op (fold_minmax); computes element-wise
 * ops of splats on the scalars (fold_splat_elem). Integer folds wrap at the type's width and never fold
 * undefined cases (division by zero, signed overflow of division, oversized
 * shifts, out-of-range float-to-int); float folds are exact or correctly
 * rounded (computed in double, rounded once) and skip anything libm-dependent.
 * Iterates to a fixpoint.
 */
#include "ir_int.h"

#include <math.h>
#include <string.h>

typedef struct Cst {
    IrDtype d;
    int64_t i; /* normalized (ir_int_norm) */
    double f;  /* rounded to d */
} Cst;

typedef struct Canon {
    IrFunc *f;
    IrModule *m;
    bool changed;
} Canon;

static IrType ty(Canon *c, IrRef r) { return ir_val_type(c->f, r); }

static int
dtype(Canon *c, IrType t)
{
    return ir_type_dtype(c->m, t);
}

/* True when r is defined by a constant (scalar or splat); fills k. */
static bool
getcst(Canon *c, IrRef r, Cst *k)
{
    IrOp *def = c->f->vals[r].def;
    if (!def || def->opc != IR_CONST)
        return false;
    int d = dtype(c, ty(c, r));
    if (d < 0)
        return false;
    k->d = (IrDtype)d;
    k->i = ir_int_norm(def->i[0], k->d);
    k->f = ir_float_round(def->f, k->d);
    return true;
}

static int bits(IrDtype d) { return ir_dtype_bits(d); }

/* Signed and unsigned readings of an integer constant. */
static int64_t sx(const Cst *k) { return bits(k->d) == 1 ? -(k->i & 1) : k->i; }

static uint64_t
zx(const Cst *k)
{
    int b = bits(k->d);
    return b >= 64 ? (uint64_t)k->i : (uint64_t)k->i & ((UINT64_C(1) << b) - 1);
}

static IrOp *
new_before(Canon *c, IrOp *pos, IrOpc opc, const IrRef *args, uint32_t nargs, IrType t)
{
    IrOp *op = ir_op_create(c->f, opc, args, nargs, &t, 1, 0);
    op->loc = pos->loc;
    ir_op_insert_before(pos, op);
    return op;
}

static IrRef
mkint(Canon *c, IrOp *pos, IrType t, int64_t v)
{
    IrOp *op = new_before(c, pos, IR_CONST, NULL, 0, t);
    op->i[0] = ir_int_norm(v, (IrDtype)dtype(c, t));
    return op->res[0];
}

static IrRef
mkfloat(Canon *c, IrOp *pos, IrType t, double v)
{
    IrOp *op = new_before(c, pos, IR_CONST, NULL, 0, t);
    op->f = ir_float_round(v, (IrDtype)dtype(c, t));
    return op->res[0];
}

/* ---- constant folding -------------------------------------------------------------------- */

/* Folds a binary integer op; false when the result is undefined or unknown. */
static bool
fold_int(IrOpc opc, const Cst *a, const Cst *b, int64_t *out)
{
    int w = bits(a->d);
    int64_t smin = w >= 64 ? INT64_MIN : -(INT64_C(1) << (w - 1));
    uint64_t ua = zx(a), ub = zx(b);
    int64_t sa = sx(a), sb = sx(b);
    switch (opc) {
    case IR_ADDI: *out = (int64_t)(ua + ub); return true;
    case IR_SUBI: *out = (int64_t)(ua - ub); return true;
    case IR_MULI: *out = (int64_t)(ua * ub); return true;
    case IR_DIVSI:
        if (sb == 0 || (sa == smin && sb == -1))
            return false;
        *out = sa / sb;
        return true;
    case IR_DIVUI:
        if (ub == 0)
            return false;
        *out = (int64_t)(ua / ub);
        return true;
    case IR_REMSI:
        if (sb == 0 || (sa == smin && sb == -1))
            return false;
        *out = sa % sb;
        return true;
    case IR_REMUI:
        if (ub == 0)
            return false;
        *out = (int64_t)(ua % ub);
        return true;
    case IR_ANDI: *out = (int64_t)(ua & ub); return true;
    case IR_ORI: *out = (int64_t)(ua | ub); return true;
    case IR_XORI: *out = (int64_t)(ua ^ ub); return true;
    case IR_SHLI: case IR_SHRSI: case IR_SHRUI:
        if (ub >= (uint64_t)w)
            return false;
        *out = opc == IR_SHLI ? (int64_t)(ua << ub) : opc == IR_SHRUI ? (int64_t)(ua >> ub) : sa >> ub;
        return true;
    case IR_MAXSI: *out = sa > sb ? sa : sb; return true;
    case IR_MINSI: *out = sa < sb ? sa : sb; return true;
    case IR_MAXUI: *out = (int64_t)(ua > ub ? ua : ub); return true;
    case IR_MINUI: *out = (int64_t)(ua < ub ? ua : ub); return true;
    case IR_MULHIUI:
        *out = (int64_t)(uint64_t)(((unsigned __int128)ua * ub) >> w);
        return true;
    default:
        return false;
    }
}

static double
fmaxmin(IrOpc opc, double x, double y)
{
    bool max = opc == IR_MAXIMUMF || opc == IR_MAXNUMF;
    if (isnan(x) || isnan(y)) {
        if (opc == IR_MAXIMUMF || opc == IR_MINIMUMF)
            return NAN;
        return isnan(x) ? y : x;
    }
    if (x == y) /* -0 < +0 */
        return max ? (signbit(x) ? y : x) : (signbit(x) ? x : y);
    return max ? (x > y ? x : y) : (x < y ? x : y);
}

/* Folds a float op whose double result, rounded once to the type, is exact. */
static bool
fold_float(IrOpc opc, const Cst *a, const Cst *b, double *out)
{
    double x = a->f, y = b ? b->f : 0;
    switch (opc) {
    case IR_ADDF: *out = x + y; return true;
    case IR_SUBF: *out = x - y; return true;
    case IR_MULF: *out = x * y; return true;
    case IR_DIVF: case IR_PRECISE_DIVF: *out = x / y; return true;
    case IR_REMF: *out = fmod(x, y); return true;
    case IR_MAXIMUMF: case IR_MINIMUMF: case IR_MAXNUMF: case IR_MINNUMF:
        *out = fmaxmin(opc, x, y);
        return true;
    case IR_NEGF: *out = -x; return true;
    case IR_ABSF: *out = fabs(x); return true;
    case IR_FLOOR: *out = floor(x); return true;
    case IR_CEIL: *out = ceil(x); return true;
    case IR_TRUNC: *out = trunc(x); return true;
    case IR_ROUND: *out = round(x); return true;
    case IR_RINT: *out = nearbyint(x); return true;
    case IR_SQRT: case IR_PRECISE_SQRT: *out = sqrt(x); return true;
    default: return false;
    }
}

static bool
fold_cmpi(int pred, const Cst *a, const Cst *b)
{
    int64_t sa = sx(a), sb = sx(b);
    uint64_t ua = zx(a), ub = zx(b);
    switch (pred) {
    case IR_CMPI_EQ: return ua == ub;
    case IR_CMPI_NE: return ua != ub;
    case IR_CMPI_SLT: return sa < sb;
    case IR_CMPI_SLE: return sa <= sb;
    case IR_CMPI_SGT: return sa > sb;
    case IR_CMPI_SGE: return sa >= sb;
    case IR_CMPI_ULT: return ua < ub;
    case IR_CMPI_ULE: return ua <= ub;
    case IR_CMPI_UGT: return ua > ub;
    default: return ua >= ub;
    }
}

static bool
fold_cmpf(int pred, double x, double y)
{
    bool uno = isnan(x) || isnan(y);
    bool lt = !uno && x < y, gt = !uno && x > y, eq = !uno && x == y;
    switch (pred) {
    case IR_CMPF_FALSE: return false;
    case IR_CMPF_OEQ: return eq;
    case IR_CMPF_OGT: return gt;
    case IR_CMPF_OGE: return gt || eq;
    case IR_CMPF_OLT: return lt;
    case IR_CMPF_OLE: return lt || eq;
    case IR_CMPF_ONE: return lt || gt;
    case IR_CMPF_ORD: return !uno;
    case IR_CMPF_UEQ: return uno || eq;
    case IR_CMPF_UGT: return uno || gt;
    case IR_CMPF_UGE: return uno || gt || eq;
    case IR_CMPF_ULT: return uno || lt;
    case IR_CMPF_ULE: return uno || lt || eq;
    case IR_CMPF_UNE: return uno || lt || gt;
    case IR_CMPF_UNO: return uno;
    default: return true;
    }
}

/* Folds a cast of constant k to type t; IR_NONE when it cannot. */
static IrRef
fold_cast(Canon *c, IrOp *op, const Cst *k, IrType t)
{
    int rd = dtype(c, t);
    if (rd < 0)
        return IR_NONE;
    IrDtype d = (IrDtype)rd;
    switch (op->opc) {
    case IR_EXTSI: return mkint(c, op, t, sx(k));
    case IR_EXTUI: return mkint(c, op, t, (int64_t)zx(k));
    case IR_TRUNCI: return mkint(c, op, t, k->i);
    case IR_SITOFP:
        if (sx(k) > (INT64_C(1) << 53) || sx(k) < -(INT64_C(1) << 53)) /* avoid double rounding */
            return IR_NONE;
        return mkfloat(c, op, t, (double)sx(k));
    case IR_UITOFP:
        if (zx(k) > (UINT64_C(1) << 53))
            return IR_NONE;
        return mkfloat(c, op, t, (double)zx(k));
    case IR_FPTOSI: case IR_FPTOUI: {
        double v = trunc(k->f);
        int w = bits(d);
        bool s = op->opc == IR_FPTOSI;
        double lo = s ? -ldexp(1, w - 1) : 0, hi = s ? ldexp(1, w - 1) : ldexp(1, w);
        if (isnan(v) || v < lo || v >= hi || w == 1)
            return IR_NONE;
        return mkint(c, op, t, s ? (int64_t)v : (int64_t)(uint64_t)v);
    }
    case IR_EXTF: case IR_TRUNCF:
        return mkfloat(c, op, t, k->f);
    case IR_BITCAST:
        if (ir_dtype_is_float(k->d) == ir_dtype_is_float(d))
            return IR_NONE;
        if (ir_dtype_is_float(d))
            return mkfloat(c, op, t, ir_float_from_bits(zx(k), d));
        return mkint(c, op, t, (int64_t)ir_float_bits(k->f, k->d));
    default:
        return IR_NONE;
    }
}

static IrRef
fold_consts(Canon *c, IrOp *op)
{
    Cst a, b;
    IrType t = ty(c, op->res[0]);
    if (op->nargs < 1 || !getcst(c, op->args[0], &a))
        return IR_NONE;
    bool two = op->nargs == 2 && getcst(c, op->args[1], &b);
    int64_t iv;
    double fv;
    if (op->opc == IR_CMPI && two)
        return mkint(c, op, t, fold_cmpi((int)op->i[0], &a, &b));
    if (op->opc == IR_CMPF && two)
        return mkint(c, op, t, fold_cmpf((int)op->i[0], a.f, b.f));
    if (ir_opc_fmt[op->opc] == IR_FMT_CAST)
        return fold_cast(c, op, &a, t);
    if (ir_opc_fmt[op->opc] == IR_FMT_BIN && two && !ir_dtype_is_float(a.d) && fold_int((IrOpc)op->opc, &a, &b, &iv))
        return mkint(c, op, t, iv);
    if (ir_dtype_is_float(a.d) && (op->nargs == 1 || two) &&
        fold_float((IrOpc)op->opc, &a, two ? &b : NULL, &fv))
        return mkfloat(c, op, t, isnan(fv) ? NAN : fv); /* the host's NaN sign varies */
    return IR_NONE;
}

/* ---- identities ------------------------------------------------------------------------------- */

static bool
is_int_val(Canon *c, IrRef r, int64_t v)
{
    Cst k;
    return getcst(c, r, &k) && !ir_dtype_is_float(k.d) && k.i == ir_int_norm(v, k.d);
}

static bool
is_float_val(Canon *c, IrRef r, double v)
{
    Cst k;
    return getcst(c, r, &k) && ir_dtype_is_float(k.d) && k.f == v && signbit(k.f) == signbit(v);
}

/* x op c → x, and friends. Returns the replacement or IR_NONE. */
static IrRef
fold_identity(Canon *c, IrOp *op)
{
    IrRef x = op->args[0], y = op->nargs > 1 ? op->args[1] : IR_NONE;
    IrType t = ty(c, op->res[0]);
    switch (op->opc) {
    case IR_ADDI: case IR_SUBI: case IR_ORI: case IR_XORI: case IR_SHLI: case IR_SHRSI: case IR_SHRUI:
        if (is_int_val(c, y, 0))
            return x;
        if (x == y && (op->opc == IR_SUBI || op->opc == IR_XORI))
            return mkint(c, op, t, 0);
        if (x == y && op->opc == IR_ORI)
            return x;
        if (op->opc == IR_ORI && is_int_val(c, y, -1))
            return y;
        break;
    case IR_MULI:
        if (is_int_val(c, y, 1))
            return x;
        if (is_int_val(c, y, 0))
            return y;
        break;
    case IR_DIVSI: case IR_DIVUI:
        if (is_int_val(c, y, 1))
            return x;
        break;
    case IR_ANDI:
        if (is_int_val(c, y, 0) || x == y)
            return x == y ? x : y;
        if (is_int_val(c, y, -1))
            return x;
        break;
    case IR_MAXSI: case IR_MINSI: case IR_MAXUI: case IR_MINUI:
        if (x == y)
            return x;
        break;
    case IR_ADDF: /* x + -0.0 == x for every x (x + +0.0 is not: -0 + 0 = +0) */
        if (is_float_val(c, y, -0.0))
            return x;
        break;
    case IR_SUBF:
        if (is_float_val(c, y, 0.0))
            return x;
        break;
    case IR_MULF: case IR_DIVF:
        if (is_float_val(c, y, 1.0))
            return x;
        break;
    case IR_CMPI:
        if (x == y) {
            int p = (int)op->i[0];
            return mkint(c, op, t, p == IR_CMPI_EQ || p == IR_CMPI_SLE || p == IR_CMPI_SGE ||
                                       p == IR_CMPI_ULE || p == IR_CMPI_UGE);
        }
        break;
    case IR_SELECT: {
        Cst k;
        if (op->args[1] == op->args[2])
            return op->args[1];
        if (getcst(c, x, &k))
            return k.i & 1 ? op->args[1] : op->args[2];
        break;
    }
    case IR_ADDPTR:
        if (is_int_val(c, y, 0))
            return x;
        break;
    default:
        break;
    }
    return IR_NONE;
}

/* ---- shapes and casts ------------------------------------------------------------------------ */

static IrOp *
def_of(Canon *c, IrRef r)
{
    return c->f->vals[r].def;
}

static IrRef
fold_shape(Canon *c, IrOp *op)
{
    IrRef x = op->args[0];
    IrType t = ty(c, op->res[0]);
    IrOp *d = def_of(c, x);
    if (op->opc != IR_SPLAT && ty(c, x) == t && op->opc != IR_TRANS)
        return x;
    if (d && d->opc == IR_CONST && (op->opc == IR_SPLAT || ir_type_is_tensor(c->m, ty(c, x)))) {
        IrOp *k = new_before(c, op, IR_CONST, NULL, 0, t);
        k->i[0] = d->i[0];
        k->f = d->f;
        return k->res[0];
    }
    if (d && d->opc == IR_SPLAT && op->opc != IR_SPLAT)
        return new_before(c, op, IR_SPLAT, d->args, 1, t)->res[0];
    return IR_NONE;
}

static int
vbits(Canon *c, IrRef r)
{
    int d = dtype(c, ty(c, r));
    return d < 0 ? 0 : bits((IrDtype)d);
}

/* trunc(ext x), ext(ext x), trunc(trunc x), and the float versions. */
static IrRef
fold_chain(Canon *c, IrOp *op)
{
    IrOp *d = def_of(c, op->args[0]);
    if (!d || ir_opc_fmt[d->opc] != IR_FMT_CAST)
        return IR_NONE;
    IrRef x = d->args[0];
    IrType t = ty(c, op->res[0]);
    int bx = vbits(c, x), bt = vbits(c, op->res[0]);
    IrOpc o = (IrOpc)op->opc, i = (IrOpc)d->opc;
    if (o == IR_TRUNCI && (i == IR_EXTSI || i == IR_EXTUI)) {
        if (ty(c, x) == t)
            return x;
        if (bx == bt)
            return IR_NONE;
        return new_before(c, op, bx > bt ? IR_TRUNCI : i, &x, 1, t)->res[0];
    }
    if ((o == IR_EXTSI && (i == IR_EXTSI || i == IR_EXTUI)) || (o == IR_EXTUI && i == IR_EXTUI) ||
        (o == IR_TRUNCI && i == IR_TRUNCI) || (o == IR_EXTF && i == IR_EXTF))
        return new_before(c, op, i == IR_EXTUI ? IR_EXTUI : o, &x, 1, t)->res[0];
    if (o == IR_TRUNCF && i == IR_EXTF) {
        if (ty(c, x) == t)
            return x;
        if (bx == bt)
            return IR_NONE;
        return new_before(c, op, bx > bt ? IR_TRUNCF : IR_EXTF, &x, 1, t)->res[0];
    }
    return IR_NONE;
}

/* ---- selects that are min/max ---------------------------------------------------------------- */

/* Is r `cmpf une x, x` (x is NaN)? */
static bool
is_nan_test(Canon *c, IrRef r, IrRef x)
{
    IrOp *d = def_of(c, r);
    return d && d->opc == IR_CMPF && d->i[0] == IR_CMPF_UNE && d->args[0] == x && d->args[1] == x;
}

/* select(a > b, a, b) on integers is max(a, b) (likewise <, unsigned); on floats the
 * NaN-propagating form select((a > b) | (a != a), a, b) that torch's inductor writes
 * (triton_helpers.maximum/minimum, its max/min reductions' combine) is
 * maximumf/minimumf. They agree on every input except the sign of an equal zero
 * (select takes b, maximumf takes +0 for max). A single min/max op makes the
 * reduction a simple one (vector accumulators, identity +-inf). */
static IrRef
fold_minmax(Canon *c, IrOp *op)
{
    IrRef m = op->args[0], a = op->args[1], b = op->args[2];
    IrOp *d = def_of(c, m);
    if (!d || ty(c, a) != ty(c, op->res[0]) || ty(c, b) != ty(c, a))
        return IR_NONE;
    IrOpc o = IR_NONE;
    if (d->opc == IR_CMPI && d->args[0] == a && d->args[1] == b) {
        switch (d->i[0]) {
        case IR_CMPI_SGT: o = IR_MAXSI; break;
        case IR_CMPI_SLT: o = IR_MINSI; break;
        case IR_CMPI_UGT: o = IR_MAXUI; break;
        case IR_CMPI_ULT: o = IR_MINUI; break;
        default: break;
        }
    } else if (d->opc == IR_ORI) {
        for (int side = 0; side < 2 && o == IR_NONE; side++) {
            IrOp *cmp = def_of(c, d->args[side]);
            if (!cmp || cmp->opc != IR_CMPF || cmp->args[0] != a || cmp->args[1] != b ||
                !is_nan_test(c, d->args[1 - side], a))
                continue;
            o = cmp->i[0] == IR_CMPF_OGT ? IR_MAXIMUMF : cmp->i[0] == IR_CMPF_OLT ? IR_MINIMUMF : IR_NONE;
        }
    }
    if (o == IR_NONE)
        return IR_NONE;
    IrRef args[2] = {a, b};
    return new_before(c, op, o, args, 2, ty(c, a))->res[0];
}

/* ---- uniform tiles ---------------------------------------------------------------------------- */

/* The scalar a uniform tile holds: the splatted value, or a new scalar constant
 * for a constant tile (before `pos`); IR_NONE otherwise. */
static IrRef
uniform_scalar(Canon *c, IrOp *pos, IrRef r)
{
    IrOp *d = def_of(c, r);
    if (!d || !ir_type_is_tensor(c->m, ty(c, r)))
        return IR_NONE;
    if (d->opc == IR_SPLAT)
        return d->args[0];
    if (d->opc != IR_CONST)
        return IR_NONE;
    IrType et = ir_type_elem(c->m, ty(c, r));
    IrOp *k = new_before(c, pos, IR_CONST, NULL, 0, et);
    k->i[0] = d->i[0];
    k->f = d->f;
    return k->res[0];
}

/* An element-wise op whose operands are all splats or constants (one splat at
 * least) is the splat of the op on the scalars, as upstream's TTIR canonicalizer
 * does; with a one-element range (`pid * XBLOCK + tl.arange(0, 1)`, inductor's
 * one-row blocks) this keeps `x // 16`, `x % 16` and `x < n` of a row index
 * scalar, so pointers and masks built from them stay affine. */
static IrRef
fold_splat_elem(Canon *c, IrOp *op)
{
    switch (op->opc) {
    case IR_CONST: case IR_ADDPTR: case IR_INT_TO_PTR: case IR_PTR_TO_INT: case IR_PTR_BITCAST:
    case IR_EXTERN_ELEM:
        return IR_NONE;
    default:
        break;
    }
    if (!(ir_opc_flags[op->opc] & IR_F_ELEM) || op->nargs == 0 || op->nargs > 3 ||
        !ir_type_is_tensor(c->m, ty(c, op->res[0])))
        return IR_NONE;
    bool any_splat = false;
    for (uint32_t i = 0; i < op->nargs; i++) {
        IrOp *d = def_of(c, op->args[i]);
        if (!d || (d->opc != IR_SPLAT && d->opc != IR_CONST))
            return IR_NONE;
        any_splat |= d->opc == IR_SPLAT;
    }
    if (!any_splat)
        return IR_NONE;
    IrRef sargs[3];
    for (uint32_t i = 0; i < op->nargs; i++)
        sargs[i] = uniform_scalar(c, op, op->args[i]);
    IrOp *s = new_before(c, op, (IrOpc)op->opc, sargs, op->nargs, ir_type_elem(c->m, ty(c, op->res[0])));
    memcpy(s->i, op->i, sizeof s->i);
    s->f = op->f;
    return new_before(c, op, IR_SPLAT, &s->res[0], 1, ty(c, op->res[0]))->res[0];
}

/* tl.arange(k, k + 1) is the constant k. */
static IrRef
fold_unit_range(Canon *c, IrOp *op)
{
    if (op->i[1] - op->i[0] != 1)
        return IR_NONE;
    IrOp *k = new_before(c, op, IR_CONST, NULL, 0, ty(c, op->res[0]));
    k->i[0] = op->i[0];
    return k->res[0];
}

/* ptr_to_int(int_to_ptr(x)) -> x when x has the result's type, and
 * ptr_to_int(select(c, int_to_ptr(a), int_to_ptr(b))) -> select(c, a, b): addresses
 * made pointers and read back as integers (upstream's `tl.where` of `.to(tl.pi32_t)`
 * tiles stored as int64) never become pointer tiles the plan would have to form. */
static IrRef
unwrap_int_ptr(Canon *c, IrRef p, IrType t)
{
    IrOp *d = def_of(c, p);
    return d && d->opc == IR_INT_TO_PTR && ty(c, d->args[0]) == t ? d->args[0] : IR_NONE;
}

static IrRef
fold_ptr_to_int(Canon *c, IrOp *op)
{
    IrType t = ty(c, op->res[0]);
    IrRef x = unwrap_int_ptr(c, op->args[0], t);
    if (x != IR_NONE)
        return x;
    IrOp *s = def_of(c, op->args[0]);
    if (!s || s->opc != IR_SELECT)
        return IR_NONE;
    IrRef a = unwrap_int_ptr(c, s->args[1], t), b = unwrap_int_ptr(c, s->args[2], t);
    if (a == IR_NONE || b == IR_NONE)
        return IR_NONE;
    IrRef args[3] = {s->args[0], a, b};
    return new_before(c, op, IR_SELECT, args, 3, t)->res[0];
}

/* select(c, p, q) of two scalar pointers -> int_to_ptr(select(c, ptr_to_int(p),
 * ptr_to_int(q))): `tl.where(cond, a_ptr, b_ptr)` picks one of two arguments, which no
 * single pointer form describes; the result is a cast pointer, which may point into
 * any argument (docs/compiler.md §2.3). */
static IrRef
fold_ptr_select(Canon *c, IrOp *op)
{
    IrType pt = ty(c, op->res[0]);
    if (!ir_type_is_ptr(c->m, pt) || ir_type_rank(c->m, pt) != 0 ||
        ir_type_is_tensor(c->m, ir_type_pointee(c->m, pt))) /* not a block pointer */
        return IR_NONE;
    IrType i64 = ir_type_scalar(c->m, IR_I64);
    IrRef a = new_before(c, op, IR_PTR_TO_INT, &op->args[1], 1, i64)->res[0];
    IrRef b = new_before(c, op, IR_PTR_TO_INT, &op->args[2], 1, i64)->res[0];
    IrRef args[3] = {op->args[0], a, b};
    IrRef s = new_before(c, op, IR_SELECT, args, 3, i64)->res[0];
    return new_before(c, op, IR_INT_TO_PTR, &s, 1, pt)->res[0];
}

/* ---- driver ----------------------------------------------------------------------------------- */

static IrRef
simplify(Canon *c, IrOp *op)
{
    IrRef r;
    if ((r = fold_consts(c, op)) != IR_NONE)
        return r;
    if ((r = fold_identity(c, op)) != IR_NONE)
        return r;
    switch (op->opc) {
    case IR_SPLAT: case IR_BROADCAST: case IR_EXPAND_DIMS: case IR_RESHAPE:
        return fold_shape(c, op);
    case IR_TRUNCI: case IR_EXTSI: case IR_EXTUI: case IR_EXTF: case IR_TRUNCF:
        return fold_chain(c, op);
    case IR_MAKE_RANGE:
        return fold_unit_range(c, op);
    case IR_PTR_TO_INT:
        return fold_ptr_to_int(c, op);
    case IR_SELECT:
        if ((r = fold_minmax(c, op)) != IR_NONE)
            return r;
        if ((r = fold_ptr_select(c, op)) != IR_NONE)
            return r;
        return fold_splat_elem(c, op);
    default:
        return fold_splat_elem(c, op);
    }
}

static void
visit(IrOp *op, void *user)
{
    Canon *c = user;
    uint8_t fl = ir_opc_flags[op->opc];
    if (!(fl & IR_F_PURE) || op->nres != 1 || op->nregs || op->opc == IR_CONST)
        return;
    if ((fl & IR_F_COMM) && op->nargs == 2) {
        Cst k;
        if (getcst(c, op->args[0], &k) && !getcst(c, op->args[1], &k)) {
            IrRef t = op->args[0];
            op->args[0] = op->args[1];
            op->args[1] = t;
            c->changed = true;
        }
    }
    IrRef r = simplify(c, op);
    if (r == IR_NONE)
        return;
    if (ty(c, r) != ty(c, op->res[0])) /* u32 vs i32: keep the op (a new constant dies in DCE) */
        return;
    ir_replace_uses(c->f, op->res[0], r);
    ir_op_unlink(op);
    c->changed = true;
}

/* acc + dot(a, b, 0) -> dot(a, b, acc) when the dot has no other use, as upstream's
 * combine pass does: `acc += tl.dot(a, b)` accumulates in the dot instead of a
 * separate pass over the tile. The dot moves to the add (its operands dominate it). */
static void
fuse_dot_add(IrOp *op, void *user)
{
    Canon *c = user;
    if ((op->opc != IR_ADDF && op->opc != IR_ADDI) || op->nargs != 2)
        return;
    for (int side = 0; side < 2; side++) {
        IrRef x = op->args[side], y = op->args[1 - side];
        IrOp *d = def_of(c, x);
        Cst k;
        if (!d || d->opc != IR_DOT || d->parent != op->parent || c->f->vals[x].nuse != 1 || ty(c, x) != ty(c, y) ||
            ty(c, x) != ty(c, op->res[0]))
            continue;
        if (!getcst(c, d->args[2], &k) || k.i != 0 || k.f != 0 || signbit(k.f))
            continue;
        ir_op_unlink(d);
        ir_op_insert_before(op, d);
        d->args[2] = y;
        ir_replace_uses(c->f, op->res[0], x);
        ir_op_unlink(op);
        c->changed = true;
        return;
    }
}

void
ir_canonicalize(IrFunc *f)
{
    Canon c = {.f = f, .m = f->mod};
    int rounds = 0;
    do {
        do {
            c.changed = false;
            ir_walk(f->body, visit, &c);
            if (++rounds > 1000)
                ir_die("canonicalize does not converge");
        } while (c.changed);
        ir_fill_uses(f);
        ir_walk(f->body, fuse_dot_add, &c);
        if (ir_layout(f))
            c.changed = true;
    } while (c.changed);
}
