/*
 * ir_build_arith.c — Triton's type rules: literals, promotion, arithmetic,
 * comparisons, casts and math functions.
 *
 * Follows triton/language/semantic.py (computation_type_impl, integer_promote_impl,
 * binary_op_type_checking_impl, cast, bitcast, truediv, floordiv, mod) with the
 * spine-triton change that '/' and '%' on fp16 stay fp16. Error messages reuse
 * upstream's wording so users can search for them.
 */
#include "ir_build_int.h"

#include <math.h>
#include <string.h>

/* ---- dtype predicates ------------------------------------------------------------- */

static bool isf(int d) { return d >= 0 && ir_dtype_is_float((IrDtype)d); }
static bool is8(int d) { return d >= 0 && ir_dtype_is_fp8((IrDtype)d); }
static bool isfl(int d) { return isf(d) || is8(d); } /* upstream's is_floating() */
static bool isi(int d) { return d >= 0 && ir_dtype_is_int((IrDtype)d); }
static bool issigned(int d) { return d >= 0 && ir_dtype_is_signed((IrDtype)d); }
static int bits(int d) { return ir_dtype_bits((IrDtype)d); }
/* Triton's dtype.KIND: BOOLEAN < INTEGRAL < FLOATING */
static int kind(int d) { return d == IR_I1 ? 0 : isfl(d) ? 2 : 1; }

static IrType scalar(IrBuilder *b, int d) { return ir_type_scalar(b->m, (IrDtype)d); }

static const char *
tn(IrBuilder *b, IrType t, char *buf)
{
    return btype_name(b, t, buf, 256);
}

/* ---- literals -------------------------------------------------------------------- */

static int
literal_dtype(IrOperand o)
{
    switch (o.kind) {
    case IR_OPND_BOOL:
        return IR_I1;
    case IR_OPND_FLOAT: {
        /* upstream: fp32 when the value is 0, inf, NaN or a normal fp32 magnitude,
         * else fp64 (1e50 and 1e-40 are fp64 literals, not inf and a denormal) */
        double a = fabs(o.f);
        return a == 0 || isinf(a) || isnan(a) || (a >= 0x1p-126 && a <= 0x1.fffffep127) ? IR_F32 : IR_F64;
    }
    case IR_OPND_INT:
        if (o.is_u64)
            return IR_U64;
        if (o.i >= INT32_MIN && o.i <= INT32_MAX)
            return IR_I32;
        if (o.i > INT32_MAX && o.i <= (int64_t)UINT32_MAX)
            return IR_U32; /* upstream: 2**31 <= v < 2**32 is a uint32 literal */
        return IR_I64;
    default:
        return -1;
    }
}

/* Range check of an integer literal against dtype d (upstream's message). */
static int
check_int_range(IrBuilder *b, IrOperand o, int d)
{
    if (o.kind != IR_OPND_INT || !isi(d) || d == IR_I1)
        return 0;
    int n = bits(d);
    bool ok;
    if (o.is_u64)
        ok = !issigned(d) && n == 64;
    else if (issigned(d))
        ok = n == 64 || (o.i >= -(1LL << (n - 1)) && o.i < (1LL << (n - 1)));
    else
        ok = o.i >= 0 && (n == 64 || o.i < (1LL << n));
    if (!ok) {
        if (o.is_u64)
            bfail(b, "Scalar %llu is out of range for type %s", (unsigned long long)o.u, ir_dtype_name((IrDtype)d));
        else
            bfail(b, "Scalar %lld is out of range for type %s", (long long)o.i, ir_dtype_name((IrDtype)d));
        return -1;
    }
    return 0;
}

static IrRef
literal_const(IrBuilder *b, IrOperand o, int d)
{
    IrType t = scalar(b, d);
    if (is8(d)) /* encoded as a cast would: one rounding from the literal's value */
        return bcast(b, bconst_float(b, o.kind == IR_OPND_FLOAT ? o.f : o.is_u64 ? (double)o.u : (double)o.i,
                                     scalar(b, IR_F64)), t, 0);
    if (isf(d)) {
        double v = o.kind == IR_OPND_FLOAT ? o.f : o.is_u64 ? (double)o.u : (double)o.i;
        return bconst_float(b, v, t);
    }
    if (o.kind == IR_OPND_FLOAT) /* float literal into an int type: truncate like a cast */
        return bconst_int(b, (int64_t)o.f, t);
    int64_t v = o.is_u64 ? (int64_t)o.u : o.i;
    if (d == IR_I1)
        v = v != 0;
    return bconst_int(b, v, t);
}

IrRef
bvalue(IrBuilder *b, IrOperand o, int dtype)
{
    if (o.kind == IR_OPND_VALUE) {
        if (!o.ref)
            return bfail(b, "missing value");
        return dtype >= 0 && bdtype(b, o.ref) != dtype ? bcast(b, o.ref, scalar(b, dtype), 0) : o.ref;
    }
    int d = dtype >= 0 ? dtype : literal_dtype(o);
    if (check_int_range(b, o, d) < 0)
        return IR_NONE;
    return literal_const(b, o, d);
}

IrRef
ir_b_const(IrBuilder *b, IrOperand lit, int dtype)
{
    return bvalue(b, lit, dtype);
}

IrRef
ir_b_to_value(IrBuilder *b, IrOperand x)
{
    return bvalue(b, x, -1);
}

/* ---- casts ------------------------------------------------------------------------- */

IrRef
bcmp_ne_zero(IrBuilder *b, IrRef x)
{
    int d = bdtype(b, x);
    IrType et = belem(b, x);
    IrRef zero = isf(d) ? bconst_float(b, 0.0, et) : bconst_int(b, 0, et);
    zero = bsplat(b, zero, brank(b, x), bshape(b, x));
    IrRef args[2] = {x, zero};
    IrOp *op = bemit_op(b, isf(d) ? IR_CMPF : IR_CMPI, args, 2, bwith_elem(b, x, scalar(b, IR_I1)));
    op->i[0] = isf(d) ? 13 /* une */ : 1 /* ne */;
    return op->res[0];
}

static IrRef
cast_op(IrBuilder *b, IrOpc opc, IrRef x, IrType dst_elem)
{
    return bemit(b, opc, &x, 1, bwith_elem(b, x, dst_elem));
}

/* semantic.cast: x to scalar type dst (tensor element type follows). */
IrRef
bcast(IrBuilder *b, IrRef x, IrType dst, int rounding)
{
    if (!x)
        return IR_NONE;
    IrType src = belem(b, x);
    if (src == dst)
        return x;
    int sd = ir_type_dtype(b->m, src), dd = ir_type_dtype(b->m, dst);
    bool sp = ir_type_is_ptr(b->m, src), dp = ir_type_is_ptr(b->m, dst);
    char t1[256], t2[256];
    if (sp || dp) {
        if (sp && dp)
            return cast_op(b, IR_PTR_BITCAST, x, dst);
        if (sp && isi(dd)) {
            if (bits(dd) == 64)
                return cast_op(b, IR_PTR_TO_INT, x, dst);
            if (dd == IR_I1)
                return bcmp_ne_zero(b, cast_op(b, IR_PTR_TO_INT, x, scalar(b, IR_I64)));
        }
        if (isi(sd) && dp)
            return cast_op(b, IR_INT_TO_PTR, x, dst);
        return bfail(b, "cannot cast %s to %s", tn(b, btype(b, x), t1), tn(b, dst, t2));
    }
    /* fp8: decoded to fp32 (exactly) and from there; encoded from fp32 or fp64
     * (integers through fp64, exact below 2^53 and beyond every fp8's range) */
    if (is8(sd) || is8(dd)) {
        if (is8(sd)) {
            x = bfp8_decode(b, x);
            return is8(dd) ? bfp8_encode(b, x, dst, rounding == 1) : bcast(b, x, dst, rounding);
        }
        if (isi(sd))
            x = bcast(b, x, scalar(b, IR_F64), 0);
        else if (sd != IR_F32 && sd != IR_F64)
            x = bcast(b, x, scalar(b, IR_F32), 0);
        return x ? bfp8_encode(b, x, dst, rounding == 1) : IR_NONE;
    }
    /* fp16 / bf16 to anything but fp32 goes through fp32 */
    if ((sd == IR_F16 || sd == IR_BF16) && dd != IR_F32)
        return bcast(b, bcast(b, x, scalar(b, IR_F32), 0), dst, rounding);
    if (isf(sd) && isf(dd)) {
        if (bits(sd) > bits(dd) || (bits(sd) == bits(dd) && sd != dd)) {
            if (rounding == 1) {
                IrRef r = cast_op(b, IR_FP_TO_FP, x, dst);
                b->fn->vals[r].def->i[0] = 1;
                return r;
            }
            return cast_op(b, IR_TRUNCF, x, dst);
        }
        return cast_op(b, IR_EXTF, x, dst);
    }
    if (isi(sd) && isi(dd)) {
        if (dd == IR_I1)
            return bcmp_ne_zero(b, x);
        if (bits(sd) == bits(dd)) /* signedness change only */
            return cast_op(b, IR_BITCAST, x, dst);
        if (bits(sd) > bits(dd))
            return cast_op(b, IR_TRUNCI, x, dst);
        bool sext = issigned(sd) && sd != IR_I1;
        return cast_op(b, sext ? IR_EXTSI : IR_EXTUI, x, dst);
    }
    if (isf(sd) && isi(dd)) {
        if (dd == IR_I1)
            return bcmp_ne_zero(b, x);
        return cast_op(b, issigned(dd) ? IR_FPTOSI : IR_FPTOUI, x, dst);
    }
    if (isi(sd) && isf(dd))
        return cast_op(b, (sd == IR_I1 || !issigned(sd)) ? IR_UITOFP : IR_SITOFP, x, dst);
    return bfail(b, "cannot cast %s to %s", tn(b, btype(b, x), t1), tn(b, dst, t2));
}

IrRef
ir_b_cast(IrBuilder *b, IrOperand xo, IrType dst, bool bitcast, int rounding)
{
    IrRef x = bvalue(b, xo, -1);
    if (!x)
        return IR_NONE;
    dst = ir_type_elem(b->m, dst);
    IrType src = belem(b, x);
    char t1[256], t2[256];
    if (bitcast) {
        bool sp = ir_type_is_ptr(b->m, src), dp = ir_type_is_ptr(b->m, dst);
        if (sp && dp)
            return cast_op(b, IR_PTR_BITCAST, x, dst);
        if (sp || dp)
            return bcast(b, x, dst, 0);
        int sb = bits(ir_type_dtype(b->m, src)), db = bits(ir_type_dtype(b->m, dst));
        if (sb != db)
            return bfail(b, "Cannot bitcast data-type of size %d to data-type of size %d", sb, db);
        if (src == dst)
            return x;
        return cast_op(b, IR_BITCAST, x, dst);
    }
    if (rounding != 0) { /* 1 = rtz, 2 = rtne given explicitly */
        int sd = ir_type_dtype(b->m, src), dd = ir_type_dtype(b->m, dst);
        if (!(isfl(sd) && isfl(dd) && bits(sd) > bits(dd)))
            return bfail(b, "fp_downcast_rounding should be set only for truncating fp conversions, "
                            "source scalar type is %s and destination type is %s",
                         tn(b, src, t1), tn(b, dst, t2));
    }
    return bcast(b, x, dst, rounding == 1);
}

/* ---- promotion --------------------------------------------------------------------- */

static int
integer_promote(int a, int c)
{
    bool as = issigned(a) || a == IR_I1, cs = issigned(c) || c == IR_I1;
    int ar = bits(a), cr = bits(c);
    if (as == cs)
        return ar > cr ? a : c;
    if (!as)
        return ar >= cr ? a : c;
    return cr >= ar ? c : a;
}

/* computation_type_impl. Returns -1 after an error. */
static int
computation_type(IrBuilder *b, int a, bool a_lit, int c, bool c_lit, bool div_or_mod)
{
    if (a_lit != c_lit) {
        int sd = a_lit ? a : c, td = a_lit ? c : a;
        if (kind(sd) <= kind(td)) {
            if (div_or_mod && td == IR_BF16)
                return IR_F32; /* spine-triton: fp16 stays fp16 for / and % */
            return td;
        }
    }
    if (a == IR_F64 || c == IR_F64)
        return IR_F64;
    if (a == IR_F32 || c == IR_F32)
        return IR_F32;
    if (a == IR_F16 || c == IR_F16)
        return IR_F16; /* spine-triton: also for / and % */
    if (a == IR_BF16 && c == IR_BF16)
        return div_or_mod ? IR_F32 : IR_BF16;
    if (a == IR_BF16 || c == IR_BF16)
        return IR_F32;
    if (is8(a) && is8(c)) /* upstream: the same fp8, or fp16 for two different ones */
        return div_or_mod ? IR_F32 : a == c ? a : IR_F16;
    if (!isi(a) || !isi(c)) {
        bfail(b, "unexpected type %s and %s", ir_dtype_name((IrDtype)a), ir_dtype_name((IrDtype)c));
        return -1;
    }
    if (div_or_mod && (issigned(a) || a == IR_I1) != (issigned(c) || c == IR_I1) && a != IR_I1 && c != IR_I1) {
        bfail(b, "Cannot use /, //, or %% with %s and %s because they have different signedness;"
                 "this is unlikely to result in a useful answer. Cast them to the same signedness.",
              ir_dtype_name((IrDtype)a), ir_dtype_name((IrDtype)c));
        return -1;
    }
    return integer_promote(a, c);
}

typedef struct Pair {
    IrRef x, y;
    int dt;        /* computation dtype, -1 when pointers are involved */
} Pair;

/* binary_op_type_checking_impl: converts literals, checks pointers, promotes and
 * broadcasts. allow_x_ptr/allow_y_ptr permit pointer operands; arith applies the
 * promotion. Returns -1 on error. */
static int
type_check(IrBuilder *b, IrOperand xo, IrOperand yo, bool allow_x_ptr, bool allow_y_ptr, bool arith,
           bool div_or_mod, Pair *p)
{
    bool xl = xo.kind != IR_OPND_VALUE, yl = yo.kind != IR_OPND_VALUE;
    int xd = xl ? literal_dtype(xo) : -2, yd = yl ? literal_dtype(yo) : -2;
    IrRef x = xl ? IR_NONE : xo.ref, y = yl ? IR_NONE : yo.ref;
    if ((!xl && !x) || (!yl && !y)) {
        bfail(b, "missing operand");
        return -1;
    }
    IrType xt = xl ? scalar(b, xd) : belem(b, x), yt = yl ? scalar(b, yd) : belem(b, y);
    bool xp = ir_type_is_ptr(b->m, xt), yp = ir_type_is_ptr(b->m, yt);
    char t1[256], t2[256];
    if ((xp && (!allow_x_ptr || (yp && xt != yt) || isf(ir_type_dtype(b->m, yt)))) ||
        (yp && (!allow_y_ptr || (xp && xt != yt) || isf(ir_type_dtype(b->m, xt))))) {
        bfail(b, "invalid operands of type %s and %s", tn(b, xt, t1), tn(b, yt, t2));
        return -1;
    }
    p->dt = -1;
    if (arith && !xp && !yp) {
        int dt = computation_type(b, xl ? xd : bdtype(b, x), xl, yl ? yd : bdtype(b, y), yl, div_or_mod);
        if (dt < 0)
            return -1;
        if (!issigned(dt) && isi(dt) && dt != IR_I1 &&
            ((xl && xo.kind == IR_OPND_INT && !xo.is_u64 && xo.i < 0) ||
             (yl && yo.kind == IR_OPND_INT && !yo.is_u64 && yo.i < 0))) {
            bfail(b, "Cannot perform a binary operation between an unsigned tensor and a negative scalar. "
                     "Perform a explicit cast on one of them.");
            return -1;
        }
        x = xl ? bvalue(b, xo, dt) : bcast(b, x, scalar(b, dt), 0);
        y = yl ? bvalue(b, yo, dt) : bcast(b, y, scalar(b, dt), 0);
        p->dt = dt;
    } else {
        x = xl ? bvalue(b, xo, -1) : x;
        y = yl ? bvalue(b, yo, -1) : y;
    }
    if (!x || !y)
        return -1;
    if (bbroadcast_pair(b, &x, &y) < 0)
        return -1;
    p->x = x;
    p->y = y;
    return 0;
}

static IrRef
bin(IrBuilder *b, IrOpc opc, IrRef x, IrRef y)
{
    IrRef args[2] = {x, y};
    return bemit(b, opc, args, 2, btype(b, x));
}

static IrRef
cmp(IrBuilder *b, IrRef x, IrRef y, int fpred, int spred, int upred)
{
    int d = bdtype(b, x);
    IrRef args[2] = {x, y};
    bool f = isf(d);
    IrOp *op = bemit_op(b, f ? IR_CMPF : IR_CMPI, args, 2, bwith_elem(b, x, scalar(b, IR_I1)));
    op->i[0] = f ? fpred : (issigned(d) || bis_ptr(b, x)) ? spred : upred;
    return op->res[0];
}

/* MLIR predicate numbers (arith::CmpIPredicate / CmpFPredicate). */
enum { CI_EQ = 0, CI_NE = 1, CI_SLT = 2, CI_SLE = 3, CI_SGT = 4, CI_SGE = 5, CI_ULT = 6, CI_ULE = 7,
       CI_UGT = 8, CI_UGE = 9 };
enum { CF_OEQ = 1, CF_OGT = 2, CF_OGE = 3, CF_OLT = 4, CF_OLE = 5, CF_ONE = 6, CF_UNE = 13 };

static IrRef
int_to_float_pair(IrBuilder *b, Pair *p, int target)
{
    p->x = bcast(b, p->x, scalar(b, target), 0);
    p->y = bcast(b, p->y, scalar(b, target), 0);
    return p->x && p->y;
}

static IrRef
neg_value(IrBuilder *b, IrRef x)
{
    int d = bdtype(b, x);
    if (isf(d))
        return bemit(b, IR_NEGF, &x, 1, btype(b, x));
    IrRef z = bsplat(b, bconst_int(b, 0, belem(b, x)), brank(b, x), bshape(b, x));
    return bin(b, IR_SUBI, z, x);
}

/* Element dtype of an operand before promotion (a literal's default type; -1 for
 * pointers), and its type's name for messages. */
static int
opnd_dtype(IrBuilder *b, IrOperand o)
{
    return o.kind == IR_OPND_VALUE ? (o.ref ? bdtype(b, o.ref) : -1) : literal_dtype(o);
}

static const char *
opnd_type_name(IrBuilder *b, IrOperand o, char *buf)
{
    if (o.kind == IR_OPND_VALUE)
        return o.ref ? tn(b, btype(b, o.ref), buf) : "?";
    return tn(b, scalar(b, literal_dtype(o)), buf);
}

static IrRef
floor_div_float(IrBuilder *b, IrRef x, IrRef y)
{
    IrRef q = bin(b, IR_DIVF, x, y);
    return bemit(b, IR_FLOOR, &q, 1, btype(b, q));
}

static IrRef
binop_impl(IrBuilder *b, IrBinop op, IrOperand xo, IrOperand yo)
{
    Pair p;
    char t1[256], t2[256];
    switch (op) {
    case IR_B_ADD:
    case IR_B_SUB: {
        if (type_check(b, xo, yo, true, op == IR_B_ADD, true, false, &p) < 0)
            return IR_NONE;
        bool xp = bis_ptr(b, p.x), yp = bis_ptr(b, p.y);
        if (xp && yp)
            return bfail(b, op == IR_B_ADD ? "cannot add pointers together" : "cannot subtract pointers");
        if (yp) { /* offset + ptr */
            IrRef t = p.x;
            p.x = p.y;
            p.y = t;
            xp = true;
        }
        if (xp) {
            IrRef off = p.y;
            int od = bdtype(b, off);
            if (!isi(od))
                return bfail(b, "invalid operands of type %s and %s", tn(b, btype(b, p.x), t1), tn(b, btype(b, off), t2));
            if (!issigned(od) && bits(od) < 64) /* addptr treats offsets as signed */
                off = bcast(b, off, scalar(b, IR_I64), 0);
            if (op == IR_B_SUB)
                off = neg_value(b, off);
            IrRef args[2] = {p.x, off};
            return bemit(b, IR_ADDPTR, args, 2, btype(b, p.x));
        }
        if (isf(p.dt))
            return bin(b, op == IR_B_ADD ? IR_ADDF : IR_SUBF, p.x, p.y);
        return bin(b, op == IR_B_ADD ? IR_ADDI : IR_SUBI, p.x, p.y);
    }
    case IR_B_MUL:
        if (type_check(b, xo, yo, false, false, true, false, &p) < 0)
            return IR_NONE;
        return bin(b, isf(p.dt) ? IR_MULF : IR_MULI, p.x, p.y);
    case IR_B_TRUEDIV: {
        if (type_check(b, xo, yo, false, false, true, true, &p) < 0)
            return IR_NONE;
        if (isi(p.dt) && !int_to_float_pair(b, &p, IR_F32))
            return IR_NONE;
        return bin(b, IR_DIVF, p.x, p.y);
    }
    case IR_B_FDIV: {
        if (type_check(b, xo, yo, false, false, false, false, &p) < 0)
            return IR_NONE;
        if (!isf(bdtype(b, p.x)) || !isf(bdtype(b, p.y)))
            return bfail(b, "both operands of fdiv must have floating scalar type");
        int dt = bits(bdtype(b, p.x)) >= bits(bdtype(b, p.y)) ? bdtype(b, p.x) : bdtype(b, p.y);
        if (!int_to_float_pair(b, &p, dt))
            return IR_NONE;
        return bin(b, IR_DIVF, p.x, p.y);
    }
    case IR_B_FLOORDIV:
        if (type_check(b, xo, yo, false, false, true, true, &p) < 0)
            return IR_NONE;
        if (isf(p.dt))
            return floor_div_float(b, p.x, p.y);
        return bin(b, issigned(p.dt) || p.dt == IR_I1 ? IR_DIVSI : IR_DIVUI, p.x, p.y);
    case IR_B_MOD:
        if (type_check(b, xo, yo, false, false, true, true, &p) < 0)
            return IR_NONE;
        if (isf(p.dt)) /* C fmod, the sign of the dividend (upstream's frem) */
            return bin(b, IR_REMF, p.x, p.y);
        return bin(b, issigned(p.dt) || p.dt == IR_I1 ? IR_REMSI : IR_REMUI, p.x, p.y);
    case IR_B_AND:
    case IR_B_OR:
    case IR_B_XOR:
    case IR_B_SHL:
    case IR_B_SHR: {
        /* bitwise_op_type_checking_impl: literals and promotion as for arithmetic */
        int xd = opnd_dtype(b, xo), yd = opnd_dtype(b, yo);
        if (isf(xd) || isf(yd))
            return bfail(b, "invalid operands of type %s and %s", opnd_type_name(b, xo, t1),
                         opnd_type_name(b, yo, t2));
        if (type_check(b, xo, yo, false, false, true, false, &p) < 0)
            return IR_NONE;
        /* upstream's tensor.__rshift__ shifts arithmetically when its own (left)
         * operand is signed, whatever the promoted type; __rrshift__ (a Python int
         * on the left) asks the right operand */
        bool sra = xo.kind == IR_OPND_VALUE || yo.kind != IR_OPND_VALUE ? issigned(xd) : issigned(yd);
        IrOpc opc = op == IR_B_AND ? IR_ANDI : op == IR_B_OR ? IR_ORI : op == IR_B_XOR ? IR_XORI
                  : op == IR_B_SHL ? IR_SHLI : sra ? IR_SHRSI : IR_SHRUI;
        return bin(b, opc, p.x, p.y);
    }
    case IR_B_LT:
    case IR_B_LE:
    case IR_B_GT:
    case IR_B_GE:
    case IR_B_EQ:
    case IR_B_NE: {
        bool ptr_ok = op == IR_B_EQ || op == IR_B_NE;
        if (type_check(b, xo, yo, ptr_ok, ptr_ok, true, false, &p) < 0)
            return IR_NONE;
        static const int preds[6][3] = {{CF_OLT, CI_SLT, CI_ULT}, {CF_OLE, CI_SLE, CI_ULE},
                                        {CF_OGT, CI_SGT, CI_UGT}, {CF_OGE, CI_SGE, CI_UGE},
                                        {CF_OEQ, CI_EQ, CI_EQ},   {CF_UNE, CI_NE, CI_NE}};
        const int *pr = preds[op - IR_B_LT];
        return cmp(b, p.x, p.y, pr[0], pr[1], pr[2]);
    }
    case IR_B_LOGICAL_AND:
    case IR_B_LOGICAL_OR: {
        IrRef x = bvalue(b, xo, -1), y = bvalue(b, yo, -1);
        if (!x || !y)
            return IR_NONE;
        x = bcast(b, x, scalar(b, IR_I1), 0);
        y = bcast(b, y, scalar(b, IR_I1), 0);
        if (!x || !y || bbroadcast_pair(b, &x, &y) < 0)
            return IR_NONE;
        return bin(b, op == IR_B_LOGICAL_AND ? IR_ANDI : IR_ORI, x, y);
    }
    case IR_B_MAXIMUM:
    case IR_B_MINIMUM:
    case IR_B_MAXIMUM_NAN:
    case IR_B_MINIMUM_NAN: {
        if (type_check(b, xo, yo, false, false, true, false, &p) < 0)
            return IR_NONE;
        bool mx = op == IR_B_MAXIMUM || op == IR_B_MAXIMUM_NAN;
        bool nan = op == IR_B_MAXIMUM_NAN || op == IR_B_MINIMUM_NAN;
        IrOpc opc;
        if (isf(p.dt))
            opc = nan ? (mx ? IR_MAXIMUMF : IR_MINIMUMF) : (mx ? IR_MAXNUMF : IR_MINNUMF);
        else if (issigned(p.dt))
            opc = mx ? IR_MAXSI : IR_MINSI;
        else
            opc = mx ? IR_MAXUI : IR_MINUI;
        return bin(b, opc, p.x, p.y);
    }
    case IR_B_UMULHI:
        if (type_check(b, xo, yo, false, false, true, false, &p) < 0)
            return IR_NONE;
        if (!isi(p.dt))
            return bfail(b, "umulhi requires integer operands");
        return bin(b, IR_MULHIUI, p.x, p.y);
    case IR_B_POW:
    case IR_B_ATAN2:
    case IR_B_COPYSIGN: {
        if (type_check(b, xo, yo, false, false, true, false, &p) < 0)
            return IR_NONE;
        if (!isf(p.dt))
            return bfail(b, "Expected dtype ['fp16', 'bf16', 'fp32', 'fp64'] but got %s", ir_dtype_name((IrDtype)p.dt));
        return bin(b, op == IR_B_POW ? IR_POWF : op == IR_B_ATAN2 ? IR_ATAN2 : IR_COPYSIGN, p.x, p.y);
    }
    default:
        return bfail(b, "unknown binary operator %d", (int)op);
    }
}

/* fp8 operands: upstream's computation type (the same fp8 for two of one format
 * or one and a literal, fp16 for two formats, else the wider float); the work is
 * done on the widened values and an arithmetic result goes back to the fp8. */
IrRef
ir_b_binop(IrBuilder *b, IrBinop op, IrOperand xo, IrOperand yo)
{
    int xd = opnd_dtype(b, xo), yd = opnd_dtype(b, yo);
    if ((!is8(xd) && !is8(yd)) || op == IR_B_LOGICAL_AND || op == IR_B_LOGICAL_OR)
        return binop_impl(b, op, xo, yo);
    char t1[256], t2[256];
    if (op >= IR_B_AND && op <= IR_B_SHR)
        return bfail(b, "invalid operands of type %s and %s", opnd_type_name(b, xo, t1), opnd_type_name(b, yo, t2));
    bool dm = op == IR_B_TRUEDIV || op == IR_B_FLOORDIV || op == IR_B_MOD;
    int dt = computation_type(b, xd, xo.kind != IR_OPND_VALUE, yd, yo.kind != IR_OPND_VALUE, dm);
    if (dt < 0)
        return IR_NONE;
    int wide = is8(dt) ? IR_F32 : dt;
    if (xo.kind == IR_OPND_VALUE && is8(xd))
        xo = ir_opnd(bcast(b, xo.ref, scalar(b, wide), 0));
    if (yo.kind == IR_OPND_VALUE && is8(yd))
        yo = ir_opnd(bcast(b, yo.ref, scalar(b, wide), 0));
    if ((xo.kind == IR_OPND_VALUE && !xo.ref) || (yo.kind == IR_OPND_VALUE && !yo.ref))
        return IR_NONE;
    IrRef r = binop_impl(b, op, xo, yo);
    if (r && is8(dt) && bdtype(b, r) == IR_F32)
        r = bcast(b, r, scalar(b, dt), 0);
    return r;
}

IrRef
ir_b_unop(IrBuilder *b, IrUnop op, IrOperand xo)
{
    IrRef x = bvalue(b, xo, -1);
    if (!x)
        return IR_NONE;
    int d = bdtype(b, x);
    char t1[256];
    switch (op) {
    case IR_U_PLUS:
        return x;
    case IR_U_NEG:
        if (is8(d)) /* exact through fp32 (a fnuz zero stays +0) */
            return bcast(b, neg_value(b, bcast(b, x, scalar(b, IR_F32), 0)), belem(b, x), 0);
        if (bis_ptr(b, x))
            return bfail(b, "wrong type argument to unary minus (%s)", tn(b, btype(b, x), t1));
        return neg_value(b, x);
    case IR_U_INVERT: {
        if (!isi(d))
            return bfail(b, "wrong type argument to unary invert (%s)", tn(b, btype(b, x), t1));
        IrRef ones = bsplat(b, bconst_int(b, -1, belem(b, x)), brank(b, x), bshape(b, x));
        return bin(b, IR_XORI, x, ones);
    }
    case IR_U_NOT: {
        x = bcast(b, x, scalar(b, IR_I1), 0);
        IrRef ones = bsplat(b, bconst_int(b, 1, belem(b, x)), brank(b, x), bshape(b, x));
        return bin(b, IR_XORI, x, ones);
    }
    }
    return bfail(b, "unknown unary operator");
}

/* ---- math ------------------------------------------------------------------------------ */

typedef struct MathFn {
    const char *name;
    IrOpc opc;
    int ints;      /* 1: integers allowed as-is (abs), 0: floats only */
} MathFn;

static const MathFn math_fns[] = {
    {"exp", IR_EXP, 0},     {"exp2", IR_EXP2, 0},   {"expm1", IR_EXPM1, 0}, {"log", IR_LOG, 0},
    {"log2", IR_LOG2, 0},   {"log10", IR_LOG10, 0}, {"log1p", IR_LOG1P, 0}, {"sqrt", IR_SQRT, 0},
    {"sqrt_rn", IR_PRECISE_SQRT, 0}, {"rsqrt", IR_RSQRT, 0}, {"cbrt", IR_CBRT, 0},
    {"sin", IR_SIN, 0},     {"cos", IR_COS, 0},     {"tan", IR_TAN, 0},     {"asin", IR_ASIN, 0},
    {"acos", IR_ACOS, 0},   {"atan", IR_ATAN, 0},   {"sinh", IR_SINH, 0},   {"cosh", IR_COSH, 0},
    {"tanh", IR_TANH, 0},   {"asinh", IR_ASINH, 0}, {"acosh", IR_ACOSH, 0}, {"atanh", IR_ATANH, 0},
    {"erf", IR_ERF, 0},     {"floor", IR_FLOOR, 0}, {"ceil", IR_CEIL, 0},   {"round", IR_ROUND, 0},
    {"rint", IR_RINT, 0},   {"trunc", IR_TRUNC, 0}, {"abs", IR_ABSF, 1},
};

/* Functions built from others: sigmoid, isnan/isinf/isfinite, signbit. */
static IrRef
math_composite(IrBuilder *b, const char *fn, IrRef x, bool *handled)
{
    *handled = true;
    IrType et = belem(b, x);
    if (!strcmp(fn, "sigmoid")) { /* 1 / (1 + exp(-x)) */
        IrRef nx = bemit(b, IR_NEGF, &x, 1, btype(b, x));
        IrRef e = bemit(b, IR_EXP, &nx, 1, btype(b, x));
        IrRef one = bsplat(b, bconst_float(b, 1.0, et), brank(b, x), bshape(b, x));
        return bin(b, IR_DIVF, one, bin(b, IR_ADDF, one, e));
    }
    if (!strcmp(fn, "isnan") || !strcmp(fn, "isinf") || !strcmp(fn, "isfinite")) {
        IrOpc opc = fn[2] == 'n' ? IR_ISNAN : fn[2] == 'i' ? IR_ISINF : IR_ISFINITE;
        return bemit(b, opc, &x, 1, bwith_elem(b, x, scalar(b, IR_I1)));
    }
    *handled = false;
    return IR_NONE;
}

IrRef
ir_b_math(IrBuilder *b, const char *fn, IrOperand xo)
{
    IrRef x = bvalue(b, xo, -1);
    if (!x)
        return IR_NONE;
    int d = bdtype(b, x);
    if (is8(d)) { /* computed in fp32; a float result goes back to the fp8 */
        IrRef r = ir_b_math(b, fn, ir_opnd(bcast(b, x, scalar(b, IR_F32), 0)));
        return r && bdtype(b, r) == IR_F32 ? bcast(b, r, belem(b, x), 0) : r;
    }
    const MathFn *mf = NULL;
    for (size_t i = 0; i < sizeof math_fns / sizeof *math_fns; i++)
        if (!strcmp(math_fns[i].name, fn))
            mf = &math_fns[i];
    if (mf && mf->ints && isi(d)) {
        if (!issigned(d) || d == IR_I1)
            return x; /* abs of an unsigned value */
        return bemit(b, IR_ABSI, &x, 1, btype(b, x));
    }
    if (!isf(d))
        return bfail(b, "Expected dtype ['fp16', 'bf16', 'fp32', 'fp64'] but got %s",
                     d < 0 ? "pointer" : ir_dtype_name((IrDtype)d));
    if (mf)
        return bemit(b, mf->opc, &x, 1, btype(b, x));
    bool handled;
    IrRef r = math_composite(b, fn, x, &handled);
    if (handled)
        return r;
    return bfail(b, "unknown math function '%s'", fn);
}

IrRef
ir_b_fma(IrBuilder *b, IrOperand xo, IrOperand yo, IrOperand zo)
{
    Pair p, q;
    if (type_check(b, xo, yo, false, false, true, false, &p) < 0)
        return IR_NONE;
    if (type_check(b, zo, ir_opnd(p.x), false, false, true, false, &q) < 0)
        return IR_NONE;
    IrRef x = q.y, z = q.x, y = bcast(b, p.y, belem(b, x), 0);
    if (!y || bbroadcast_pair(b, &x, &y) < 0 || bbroadcast_pair(b, &z, &x) < 0 || bbroadcast_pair(b, &z, &y) < 0)
        return IR_NONE;
    if (!isf(bdtype(b, x)))
        return bfail(b, "fma requires floating-point operands");
    IrRef args[3] = {x, y, z};
    return bemit(b, IR_FMA, args, 3, btype(b, x));
}

IrRef
ir_b_where(IrBuilder *b, IrOperand co, IrOperand xo, IrOperand yo)
{
    IrRef c = bvalue(b, co, -1);
    if (!c)
        return IR_NONE;
    if (bdtype(b, c) != IR_I1)
        c = bcast(b, c, scalar(b, IR_I1), 0);
    Pair p;
    if (!c || type_check(b, xo, yo, true, true, true, false, &p) < 0)
        return IR_NONE;
    IrRef x = p.x, y = p.y;
    if (bis_tensor(b, c)) {
        if (bbroadcast_pair(b, &c, &x) < 0 || bbroadcast_pair(b, &x, &y) < 0 ||
            bbroadcast_pair(b, &c, &x) < 0)
            return IR_NONE;
    } else if (bis_tensor(b, x)) {
        /* scalar condition with tensor values: MLIR select accepts an i1 scalar */
    }
    IrRef args[3] = {c, x, y};
    return bemit(b, IR_SELECT, args, 3, btype(b, x));
}

IrRef
ir_b_clamp(IrBuilder *b, IrOperand xo, IrOperand lo, IrOperand hi, bool propagate_nan)
{
    IrRef x = bvalue(b, xo, -1);
    if (!x)
        return IR_NONE;
    int d = bdtype(b, x);
    if (!isf(d))
        return bfail(b, "Only floating point clamp is supported");
    IrRef l = bvalue(b, lo, d), h = bvalue(b, hi, d);
    if (!l || !h || bbroadcast_pair(b, &x, &l) < 0 || bbroadcast_pair(b, &x, &h) < 0 ||
        bbroadcast_pair(b, &l, &h) < 0)
        return IR_NONE;
    IrRef args[3] = {x, l, h};
    IrOp *op = bemit_op(b, IR_CLAMPF, args, 3, btype(b, x));
    op->i[0] = propagate_nan;
    return op->res[0];
}
