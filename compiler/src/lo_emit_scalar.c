/*
 * lo_emit_scalar.c — constants and the scalar form of element-wise ops.
 *
 * le_scalar_op writes the MLIR of one element-wise op on scalar SSA operands:
 * on its own for scalar values, or inside the body of the linalg.generic that
 * evaluates a fused tile expression (lo_emit_generic.c). Conventions: f16/bf16
 * transcendental math runs in f32; f32 math expands into branch-free arith code
 * (lo_math.c); integer division cannot trap; `a*b+c` may contract to an FMA
 * (Triton's enable_fp_fusion default).
 */
#include "lo_int.h"

#include <math.h>
#include <string.h>

/* ---- constants ----------------------------------------------------------------------- */

/* "arith.constant ..." of a scalar constant of dtype d. */
static void
const_text(LoBuf *b, int d, int64_t iv, double fv)
{
    switch (d) {
    case IR_I1:
        lo_printf(b, "arith.constant %s", iv ? "true" : "false");
        return;
    case IR_F16:
    case IR_BF16:
    case IR_F32:
    case IR_F64: {
        int w = d == IR_F64 ? 16 : d == IR_F32 ? 8 : 4;
        lo_printf(b, "arith.constant 0x%0*llX : %s", w,
                  (unsigned long long)ir_float_bits(ir_float_round(fv, (IrDtype)d), (IrDtype)d),
                  ir_dtype_mlir((IrDtype)d));
        return;
    }
    default: /* sign-extended to the width so MLIR accepts it */
        lo_printf(b, "arith.constant %lld : %s", (long long)ir_int_norm(iv, (IrDtype)d), ir_dtype_mlir((IrDtype)d));
    }
}

unsigned
le_const(LeCtx *c, int dtype, int64_t iv, double fv)
{
    LoBuf *o = c->out;
    unsigned id = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = ", o->indent, "", id);
    const_text(o, dtype, iv, fv);
    lo_append(o, "\n", 1);
    return id;
}

/* ---- scalar op templates ---------------------------------------------------------- */

static const char *const cmpi_pred[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
static const char *const cmpf_pred[] = {"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                                        "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"};

static bool is_small_float(int d) { return d == IR_F16 || d == IR_BF16; }

/* bf16 -> f32 as the shift it is. With arith.extf, LLVM narrows f32 work on
 * extended operands back to bf16 (maxnum(fpext a, fpext b) -> fpext(maxnum(a, b))),
 * which no vector ISA here has: it scalarised softmax's max. */
static unsigned
ext_bf16(LeCtx *c, unsigned x)
{
    unsigned i = lo_emit(c->out, "arith.bitcast %%v%u : bf16 to i16", x);
    unsigned w = lo_emit(c->out, "arith.extui %%v%u : i16 to i32", i);
    unsigned k = lo_emit(c->out, "arith.constant 16 : i32");
    unsigned s = lo_emit(c->out, "arith.shli %%v%u, %%v%u : i32", w, k);
    return lo_emit(c->out, "arith.bitcast %%v%u : i32 to f32", s);
}

/* f32 -> bf16 rounding to nearest even, with integer ops where the target has no
 * vector conversion (LLVM would convert element by element): add 0x7fff plus the
 * lowest kept bit and keep the high half (a carry rounds up into the exponent,
 * overflow gives inf); a NaN keeps its sign and high payload and is made quiet. */
static unsigned
trunc_bf16(LeCtx *c, unsigned x)
{
    if (c->opt->bf16_vector_cvt)
        return lo_emit(c->out, "arith.truncf %%v%u : f32 to bf16", x);
    unsigned b = lo_emit(c->out, "arith.bitcast %%v%u : f32 to i32", x);
    unsigned k16 = lo_emit(c->out, "arith.constant 16 : i32");
    unsigned one = lo_emit(c->out, "arith.constant 1 : i32");
    unsigned bias = lo_emit(c->out, "arith.constant 32767 : i32");
    unsigned hi = lo_emit(c->out, "arith.shrui %%v%u, %%v%u : i32", b, k16);
    unsigned lsb = lo_emit(c->out, "arith.andi %%v%u, %%v%u : i32", hi, one);
    unsigned r = lo_emit(c->out, "arith.addi %%v%u, %%v%u : i32", b, bias);
    r = lo_emit(c->out, "arith.addi %%v%u, %%v%u : i32", r, lsb);
    r = lo_emit(c->out, "arith.shrui %%v%u, %%v%u : i32", r, k16);
    unsigned quiet = lo_emit(c->out, "arith.constant 64 : i32");
    unsigned qn = lo_emit(c->out, "arith.ori %%v%u, %%v%u : i32", hi, quiet);
    unsigned nan = lo_emit(c->out, "arith.cmpf uno, %%v%u, %%v%u : f32", x, x);
    unsigned sel = lo_emit(c->out, "arith.select %%v%u, %%v%u, %%v%u : i32", nan, qn, r);
    unsigned t = lo_emit(c->out, "arith.trunci %%v%u : i32 to i16", sel);
    return lo_emit(c->out, "arith.bitcast %%v%u : i16 to bf16", t);
}

/* Float widening and narrowing (round to nearest even), bf16 <-> f32 as above. */
static unsigned
float_cast(LeCtx *c, unsigned x, int from, int to, const char *fs, const char *ts)
{
    if (from == IR_BF16 && to == IR_F32)
        return ext_bf16(c, x);
    if (from == IR_F32 && to == IR_BF16)
        return trunc_bf16(c, x);
    return lo_emit(c->out, "arith.%s %%v%u : %s to %s",
                   ir_dtype_bits((IrDtype)from) < ir_dtype_bits((IrDtype)to) ? "extf" : "truncf", x, fs, ts);
}

/* A math op on f16/bf16 runs in f32. */
static unsigned
math_op(LeCtx *c, IrOpc opc, const unsigned *args, int nargs, int d)
{
    const char *ft = ir_dtype_mlir((IrDtype)d);
    unsigned a[3];
    bool small = is_small_float(d);
    for (int i = 0; i < nargs; i++)
        a[i] = small ? float_cast(c, args[i], d, IR_F32, ft, "f32") : args[i];
    const char *ct = small ? "f32" : ft;
    unsigned r = 0;
    if (!strcmp(ct, "f32") || !strcmp(ct, "f64"))
        r = lo_math_emit(c->out, opc, a, nargs, ct);
    if (!r) {
        if (nargs == 1)
            r = lo_emit(c->out, "%s %%v%u : %s", ir_opc_name[opc], a[0], ct);
        else
            r = lo_emit(c->out, "%s %%v%u, %%v%u : %s", ir_opc_name[opc], a[0], a[1], ct);
    }
    return small ? float_cast(c, r, IR_F32, d, "f32", ft) : r;
}

/* Narrowing float conversion rounding toward zero (fp_downcast_rounding="rtz").
 * MLIR 19's arith.truncf only rounds to nearest even, so round to nearest
 * and, where that moved the magnitude up, step one ulp back toward zero: the
 * result's bit pattern minus one (this also turns an overflow to inf into the
 * largest finite value). NaN and exact results are left alone. */
static unsigned
truncf_toward_zero(LeCtx *c, unsigned x, const char *st, const char *dt, int dd)
{
    const char *it = dd == IR_F32 ? "i32" : dd == IR_F64 ? "i64" : "i16";
    unsigned r = lo_emit(c->out, "arith.truncf %%v%u : %s to %s", x, st, dt);
    unsigned back = lo_emit(c->out, "arith.extf %%v%u : %s to %s", r, dt, st);
    unsigned ab = lo_emit(c->out, "math.absf %%v%u : %s", back, st);
    unsigned ax = lo_emit(c->out, "math.absf %%v%u : %s", x, st);
    unsigned up = lo_emit(c->out, "arith.cmpf ogt, %%v%u, %%v%u : %s", ab, ax, st);
    unsigned bits = lo_emit(c->out, "arith.bitcast %%v%u : %s to %s", r, dt, it);
    unsigned one = lo_emit(c->out, "arith.constant 1 : %s", it);
    unsigned dn = lo_emit(c->out, "arith.subi %%v%u, %%v%u : %s", bits, one, it);
    unsigned sel = lo_emit(c->out, "arith.select %%v%u, %%v%u, %%v%u : %s", up, dn, bits, it);
    return lo_emit(c->out, "arith.bitcast %%v%u : %s to %s", sel, it, dt);
}

/* Constant integer value behind v (through splats), or false. */
static bool
int_const_of(LeCtx *c, IrRef v, int64_t *k)
{
    IrOp *d = c->f->vals[v].def;
    while (d && d->opc == IR_SPLAT)
        d = c->f->vals[d->args[0]].def;
    if (!d || d->opc != IR_CONST)
        return false;
    *k = d->i[0];
    return true;
}

/* Integer division and remainder that cannot trap. Masked-off lanes of a
 * tile (a load's `other`, the tail of a block) often hold 0, and INT_MIN / -1
 * overflows; on x86 both raise SIGFPE. Triton leaves those lanes undefined, so
 * a divisor of 0 is replaced by 1, and a signed divisor of -1 is computed as a
 * negation (remainder 0). Known-safe constant divisors skip the guard. */
static unsigned
int_divide(LeCtx *c, IrOp *op, const unsigned *args, const char *ts)
{
    const char *name = ir_opc_name[op->opc];
    bool is_signed = op->opc == IR_DIVSI || op->opc == IR_REMSI;
    int64_t k;
    if (int_const_of(c, op->args[1], &k) && k != 0 && !(is_signed && k == -1))
        return lo_emit(c->out, "%s %%v%u, %%v%u : %s", name, args[0], args[1], ts);
    unsigned zero = lo_emit(c->out, "arith.constant 0 : %s", ts);
    unsigned one = lo_emit(c->out, "arith.constant 1 : %s", ts);
    unsigned bad = lo_emit(c->out, "arith.cmpi eq, %%v%u, %%v%u : %s", args[1], zero, ts);
    unsigned neg1 = 0;
    if (is_signed) {
        unsigned m1 = lo_emit(c->out, "arith.constant -1 : %s", ts);
        neg1 = lo_emit(c->out, "arith.cmpi eq, %%v%u, %%v%u : %s", args[1], m1, ts);
        bad = lo_emit(c->out, "arith.ori %%v%u, %%v%u : i1", bad, neg1);
    }
    unsigned d = lo_emit(c->out, "arith.select %%v%u, %%v%u, %%v%u : %s", bad, one, args[1], ts);
    unsigned r = lo_emit(c->out, "%s %%v%u, %%v%u : %s", name, args[0], d, ts);
    if (!is_signed)
        return r;
    unsigned alt = op->opc == IR_DIVSI ? lo_emit(c->out, "arith.subi %%v%u, %%v%u : %s", zero, args[0], ts) : zero;
    return lo_emit(c->out, "arith.select %%v%u, %%v%u, %%v%u : %s", neg1, alt, r, ts);
}

/* Emits the scalar form of element-wise op 'op' on operand SSAs 'args' into
 * c->out and returns the result SSA. Operand and result types are the op's
 * element types. */
unsigned
le_scalar_op(LeCtx *c, IrOp *op, const unsigned *args)
{
    IrFunc *f = c->f;
    IrType rt = op->nres ? ir_type_elem(c->m, f->vals[op->res[0]].type) : 0;
    int rd = rt ? ir_type_dtype(c->m, rt) : -1;
    IrType at = op->nargs ? ir_type_elem(c->m, f->vals[op->args[0]].type) : 0;
    const char *ts = rt ? le_elem(c, rt) : "";
    const char *as = at ? le_elem(c, at) : "";
    const char *name = ir_opc_name[op->opc];
    switch (op->opc) {
    case IR_CONST:
        return le_const(c, rd, op->i[0], op->f);
    case IR_CMPI:
        return lo_emit(c->out, "arith.cmpi %s, %%v%u, %%v%u : %s", cmpi_pred[op->i[0]], args[0], args[1], as);
    case IR_CMPF:
        return lo_emit(c->out, "arith.cmpf %s, %%v%u, %%v%u : %s", cmpf_pred[op->i[0]], args[0], args[1], as);
    case IR_SELECT:
        return lo_emit(c->out, "arith.select %%v%u, %%v%u, %%v%u : %s", args[0], args[1], args[2], ts);
    case IR_BITCAST:
        if (!strcmp(as, ts))
            return args[0]; /* signedness change only */
        return lo_emit(c->out, "arith.bitcast %%v%u : %s to %s", args[0], as, ts);
    case IR_EXTSI: case IR_EXTUI: case IR_TRUNCI: case IR_SITOFP: case IR_UITOFP:
    case IR_FPTOSI: case IR_FPTOUI:
        return lo_emit(c->out, "%s %%v%u : %s to %s", name, args[0], as, ts);
    case IR_EXTF: case IR_TRUNCF:
        return float_cast(c, args[0], ir_type_dtype(c->m, at), rd, as, ts);
    case IR_FP_TO_FP:
        if (op->i[0] == 1)
            return truncf_toward_zero(c, args[0], as, ts, rd);
        return float_cast(c, args[0], ir_type_dtype(c->m, at), rd, as, ts);
    case IR_NEGF:
        return lo_emit(c->out, "arith.negf %%v%u : %s", args[0], ts);
    case IR_MULHIUI: {
        unsigned r = lo_fresh(c->out);
        lo_line(c->out, "%%v%u:2 = arith.mului_extended %%v%u, %%v%u : %s", r, args[0], args[1], ts);
        return lo_emit(c->out, "arith.addi %%v%u#1, %%v%u : %s", r,
                       lo_emit(c->out, "arith.constant 0 : %s", ts), ts);
    }
    case IR_ADDF:
    case IR_SUBF:
    case IR_MULF:
        /* Triton fuses a*b+c into an FMA by default (enable_fp_fusion) */
        return lo_emit(c->out, "%s %%v%u, %%v%u fastmath<contract> : %s", name, args[0], args[1], ts);
    case IR_PRECISE_DIVF:
        return lo_emit(c->out, "arith.divf %%v%u, %%v%u : %s", args[0], args[1], ts);
    case IR_PRECISE_SQRT:
        return math_op(c, IR_SQRT, args, 1, rd);
    case IR_ISNAN:
        return lo_emit(c->out, "arith.cmpf uno, %%v%u, %%v%u : %s", args[0], args[0], as);
    case IR_ISINF:
    case IR_ISFINITE: {
        unsigned a = lo_emit(c->out, "math.absf %%v%u : %s", args[0], as);
        unsigned inf = le_const(c, ir_type_dtype(c->m, at), 0, INFINITY);
        return lo_emit(c->out, "arith.cmpf %s, %%v%u, %%v%u : %s", op->opc == IR_ISINF ? "oeq" : "one", a, inf, as);
    }
    case IR_ABSF: case IR_ABSI: case IR_FLOOR: case IR_CEIL: case IR_ROUND: case IR_RINT: case IR_TRUNC:
    case IR_SQRT:
        if (is_small_float(rd) && op->opc == IR_SQRT)
            return math_op(c, IR_SQRT, args, 1, rd);
        return lo_emit(c->out, "%s %%v%u : %s", name, args[0], ts);
    case IR_RSQRT:
        return math_op(c, IR_RSQRT, args, 1, rd);
    case IR_EXP: case IR_EXP2: case IR_EXPM1: case IR_LOG: case IR_LOG2: case IR_LOG10: case IR_LOG1P:
    case IR_CBRT: case IR_SIN: case IR_COS: case IR_TAN: case IR_ASIN: case IR_ACOS: case IR_ATAN:
    case IR_SINH: case IR_COSH: case IR_TANH: case IR_ASINH: case IR_ACOSH: case IR_ATANH: case IR_ERF:
        return math_op(c, (IrOpc)op->opc, args, 1, rd);
    case IR_POWF: case IR_ATAN2:
        return math_op(c, (IrOpc)op->opc, args, 2, rd);
    case IR_COPYSIGN:
        return lo_emit(c->out, "math.copysign %%v%u, %%v%u : %s", args[0], args[1], ts);
    case IR_FMA:
        return lo_emit(c->out, "math.fma %%v%u, %%v%u, %%v%u : %s", args[0], args[1], args[2], ts);
    case IR_DIVSI: case IR_DIVUI: case IR_REMSI: case IR_REMUI:
        return int_divide(c, op, args, ts);
    case IR_CLAMPF: {
        const char *mx = op->i[0] ? "maximumf" : "maxnumf", *mn = op->i[0] ? "minimumf" : "minnumf";
        unsigned t = lo_emit(c->out, "arith.%s %%v%u, %%v%u : %s", mx, args[0], args[1], ts);
        return lo_emit(c->out, "arith.%s %%v%u, %%v%u : %s", mn, t, args[2], ts);
    }
    default:
        break;
    }
    if (ir_opc_fmt[op->opc] == IR_FMT_BIN)
        return lo_emit(c->out, "%s %%v%u, %%v%u : %s", name, args[0], args[1], ts);
    if (ir_opc_fmt[op->opc] == IR_FMT_UN)
        return lo_emit(c->out, "%s %%v%u : %s", name, args[0], ts);
    le_error(c, op->loc, "%s is not supported in element-wise code yet", name);
    return le_const(c, IR_I32, 0, 0);
}

/* x converted from element type 'from' to 'to' (the casts linalg.matmul applies to
 * its operands: integers extend by their signedness). */
unsigned
le_elem_cast(LoBuf *b, unsigned x, int from, int to)
{
    if (from == to)
        return x;
    const char *f = ir_dtype_mlir((IrDtype)from), *t = ir_dtype_mlir((IrDtype)to);
    if (ir_dtype_is_float((IrDtype)to)) {
        if (ir_dtype_is_float((IrDtype)from))
            return lo_emit(b, "arith.%s %%v%u : %s to %s",
                           ir_dtype_bits((IrDtype)from) < ir_dtype_bits((IrDtype)to) ? "extf" : "truncf", x, f, t);
        return lo_emit(b, "arith.%s %%v%u : %s to %s", ir_dtype_is_signed((IrDtype)from) ? "sitofp" : "uitofp", x, f, t);
    }
    if (ir_dtype_bits((IrDtype)from) == ir_dtype_bits((IrDtype)to))
        return x;
    return lo_emit(b, "arith.%s %%v%u : %s to %s", ir_dtype_bits((IrDtype)from) > ir_dtype_bits((IrDtype)to) ? "trunci"
                   : ir_dtype_is_signed((IrDtype)from) ? "extsi" : "extui", x, f, t);
}
