/*
 * lo_elem.c — element-wise code: scalar op templates, fused linalg.generic
 * bodies, materialisation of tile values.
 *
 * Element-wise tile values are lazy: nothing is emitted where they are defined.
 * A consumer (a store, a reduction, a materialisation) builds one linalg.generic
 * over its iteration space and evaluates the whole expression tree inside the
 * body (eval), so an activation chain feeding a store becomes one loop. Leaves
 * are captured scalars, materialised tensors (ins operands), loads (strided
 * views, read directly when the load's valid region covers the iteration space,
 * else padded) and linalg.index for tl.arange. Broadcast, expand_dims and trans
 * only change which iteration dim indexes which value dim (the DimMap dm).
 */
#include "lo_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- types and constants -------------------------------------------------------- */

const char *
lo_elem_str(LoCtx *c, IrType t)
{
    IrType e = ir_type_elem(c->m, t);
    int d = ir_type_dtype(c->m, e);
    if (d < 0)
        return "index"; /* pointers never reach element code as values */
    return ir_dtype_mlir((IrDtype)d);
}

/* Storage element of materialised tensors: bools are bytes (see docs/compiler.md). */
static const char *
store_elem_str(LoCtx *c, IrType t)
{
    int d = ir_type_dtype(c->m, t);
    return d == IR_I1 ? "i8" : lo_elem_str(c, t);
}

const char *
lo_tensor_type(LoCtx *c, IrType t, char *buf, size_t cap)
{
    const IrTypeInfo *ti = ir_type_info(c->m, t);
    size_t n = (size_t)snprintf(buf, cap, "tensor<");
    for (int d = 0; d < ti->rank && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)ti->shape[d]);
    if (n < cap)
        snprintf(buf + n, cap - n, "%s>", store_elem_str(c, t));
    return buf;
}

const char *
lo_mlir_type(LoCtx *c, IrType t, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", lo_elem_str(c, t));
    return buf;
}

static uint16_t
f32_to_f16_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xff, man = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
        half++;
    return (uint16_t)half;
}

static uint16_t
f32_to_bf16_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* "arith.constant ..." text of a scalar constant of dtype d. */
static void
const_text(int d, int64_t iv, double fv, char *buf, size_t cap)
{
    switch (d) {
    case IR_I1:
        snprintf(buf, cap, "arith.constant %s", iv ? "true" : "false");
        return;
    case IR_F64: {
        uint64_t u;
        memcpy(&u, &fv, 8);
        snprintf(buf, cap, "arith.constant 0x%016llX : f64", (unsigned long long)u);
        return;
    }
    case IR_F32: {
        float f = (float)fv;
        uint32_t u;
        memcpy(&u, &f, 4);
        snprintf(buf, cap, "arith.constant 0x%08X : f32", u);
        return;
    }
    case IR_F16:
        snprintf(buf, cap, "arith.constant 0x%04X : f16", f32_to_f16_bits((float)fv));
        return;
    case IR_BF16:
        snprintf(buf, cap, "arith.constant 0x%04X : bf16", f32_to_bf16_bits((float)fv));
        return;
    default: {
        int bits = ir_dtype_bits((IrDtype)d);
        int64_t v = iv;
        if (bits < 64) { /* sign-extend to the width so MLIR accepts it */
            uint64_t mask = (1ull << bits) - 1;
            uint64_t u = (uint64_t)v & mask;
            if (u >> (bits - 1))
                u |= ~mask;
            v = (int64_t)u;
        }
        snprintf(buf, cap, "arith.constant %lld : %s", (long long)v, ir_dtype_mlir((IrDtype)d));
    }
    }
}

unsigned
lo_emit_const(LoCtx *c, int dtype, int64_t iv, double fv)
{
    char t[96];
    const_text(dtype, iv, fv, t, sizeof t);
    return lo_emit(c->out, "%s", t);
}

/* ---- scalar op templates ---------------------------------------------------------- */

static const char *const cmpi_pred[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
static const char *const cmpf_pred[] = {"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                                        "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"};

static bool is_small_float(int d) { return d == IR_F16 || d == IR_BF16; }

/* A math op on f16/bf16 runs in f32. */
static unsigned
math_op(LoCtx *c, IrOpc opc, const unsigned *args, int nargs, int d)
{
    const char *ft = ir_dtype_mlir((IrDtype)d);
    unsigned a[3];
    bool small = is_small_float(d);
    for (int i = 0; i < nargs; i++)
        a[i] = small ? lo_emit(c->out, "arith.extf %%v%u : %s to f32", args[i], ft) : args[i];
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
    return small ? lo_emit(c->out, "arith.truncf %%v%u : f32 to %s", r, ft) : r;
}

/* Narrowing float conversion rounding toward zero (fp_downcast_rounding="rtz").
 * MLIR 19's arith.truncf only rounds to nearest even, so round to nearest
 * and, where that moved the magnitude up, step one ulp back toward zero: the
 * result's bit pattern minus one (this also turns an overflow to inf into the
 * largest finite value). NaN and exact results are left alone. */
static unsigned
truncf_toward_zero(LoCtx *c, unsigned x, const char *st, const char *dt, int dd)
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
int_const_of(LoCtx *c, IrRef v, int64_t *k)
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
int_divide(LoCtx *c, IrOp *op, const unsigned *args, const char *ts)
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
lo_emit_scalar_op(LoCtx *c, IrOp *op, const unsigned *args)
{
    IrFunc *f = c->f;
    IrType rt = op->nres ? ir_type_elem(c->m, f->vals[op->res[0]].type) : 0;
    int rd = rt ? ir_type_dtype(c->m, rt) : -1;
    IrType at = op->nargs ? ir_type_elem(c->m, f->vals[op->args[0]].type) : 0;
    const char *ts = rt ? lo_elem_str(c, rt) : "";
    const char *as = at ? lo_elem_str(c, at) : "";
    const char *name = ir_opc_name[op->opc];
    switch (op->opc) {
    case IR_CONST:
        return lo_emit_const(c, rd, op->i[0], op->f);
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
    case IR_FPTOSI: case IR_FPTOUI: case IR_EXTF: case IR_TRUNCF:
        return lo_emit(c->out, "%s %%v%u : %s to %s", name, args[0], as, ts);
    case IR_FP_TO_FP:
        if (op->i[0] == 1)
            return truncf_toward_zero(c, args[0], as, ts, rd);
        return lo_emit(c->out, "arith.truncf %%v%u : %s to %s", args[0], as, ts);
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
        char k[96];
        const_text(ir_type_dtype(c->m, at), 0, INFINITY, k, sizeof k);
        unsigned inf = lo_emit(c->out, "%s", k);
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
    lo_error(c, op->loc, "%s is not supported in element-wise code yet", name);
    return lo_emit_const(c, IR_I32, 0, 0);
}

/* ---- generic bodies ----------------------------------------------------------------- */

#define MAX_INS 48
#define MAX_MEMO 512

typedef struct GenIn {
    unsigned ssa, arg, val; /* val: the arg, converted back to i1 for byte-stored bools */
    char type[200], map[160];
    bool i8_to_i1;
} GenIn;

typedef struct Gen {
    LoCtx *c;
    const LoIter *it;
    LoBuf body;
    LoBuf *main;
    int nins;
    GenIn ins[MAX_INS];
    int nmemo;
    struct { IrRef v; uint64_t key; unsigned ssa; } memo[MAX_MEMO];
    unsigned idx[IR_MAX_RANK]; /* absolute tile index (index type) per iteration dim */
    int full_rank;             /* iteration rank (== it->rank, + reduction dims) */
    int main_scope, body_scope;/* memoised SSA inside the body must not leak out */
    IrRef out_val;             /* IR value whose tensor is the outs operand (in-place update) */
    unsigned out_arg;          /* its element: the generic's output block argument */
} Gen;

static uint64_t
dm_key(const int8_t *dm, int rank)
{
    uint64_t k = (uint64_t)rank;
    for (int i = 0; i < rank; i++)
        k = (k << 5) | (uint64_t)(dm[i] + 1);
    return k;
}

static void
to_main(Gen *g)
{
    g->c->out = g->main;
    g->c->scope = g->main_scope;
}

static void
to_body(Gen *g)
{
    g->c->out = &g->body;
    g->c->scope = g->body_scope;
}

static void
map_text(int iter_rank, int vrank, const int8_t *dm, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "affine_map<(");
    for (int j = 0; j < iter_rank; j++)
        n += (size_t)snprintf(buf + n, cap - n, "%sd%d", j ? ", " : "", j);
    n += (size_t)snprintf(buf + n, cap - n, ") -> (");
    for (int k = 0; k < vrank; k++) {
        if (dm[k] >= 0)
            n += (size_t)snprintf(buf + n, cap - n, "%sd%d", k ? ", " : "", dm[k]);
        else
            n += (size_t)snprintf(buf + n, cap - n, "%s0", k ? ", " : "");
    }
    snprintf(buf + n, cap - n, ")>");
}

static unsigned
add_in(Gen *g, unsigned ssa, const char *type, int vrank, const int8_t *dm, const char *elem, bool i8_to_i1)
{
    for (int i = 0; i < g->nins; i++) {
        char map[160];
        map_text(g->full_rank, vrank, dm, map, sizeof map);
        if (g->ins[i].ssa == ssa && !strcmp(g->ins[i].map, map))
            return g->ins[i].val;
    }
    if (g->nins == MAX_INS) {
        lo_error(g->c, (IrLoc){0}, "too many inputs in one fused expression");
        return g->ins[0].arg;
    }
    GenIn *in = &g->ins[g->nins++];
    in->ssa = ssa;
    snprintf(in->type, sizeof in->type, "%s", type);
    map_text(g->full_rank, vrank, dm, in->map, sizeof in->map);
    in->arg = lo_fresh(&g->body);
    in->i8_to_i1 = i8_to_i1;
    (void)elem;
    in->val = i8_to_i1 ? lo_emit(&g->body, "arith.trunci %%v%u : i8 to i1", in->arg) : in->arg;
    return in->val;
}

/* Absolute tile index of iteration dim j (index type), emitted once per body. */
static unsigned
abs_index(Gen *g, int j)
{
    if (!g->idx[j]) {
        unsigned i = lo_emit(&g->body, "linalg.index %d : index", j);
        if (j < g->it->rank && g->it->lo[j])
            i = lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", i, g->it->lo[j]);
        g->idx[j] = i;
    }
    return g->idx[j];
}

/* Slices a full-tile tensor 'ssa' (type t) to the iteration region as seen through
 * dm, then adds it as an input. */
static unsigned
tensor_in(Gen *g, unsigned ssa, IrType t, const int8_t *dm, bool as_i8)
{
    LoCtx *c = g->c;
    int r = ir_type_rank(c->m, t);
    const int64_t *sh = ir_type_shape(c->m, t);
    bool slice = false;
    for (int k = 0; k < r; k++)
        if (dm[k] >= 0 && dm[k] < g->it->rank && (g->it->lo[dm[k]] || g->it->size[dm[k]]))
            slice = true;
    char ty[200];
    lo_tensor_type(c, t, ty, sizeof ty);
    if (slice) {
        char offs[256] = "", sizes[256] = "", strides[128] = "", nty[200];
        size_t no = 0, ns = 0, nt = 0, nn = (size_t)snprintf(nty, sizeof nty, "tensor<");
        for (int k = 0; k < r; k++) {
            int j = dm[k];
            bool reg = j >= 0 && j < g->it->rank;
            const char *sep = k ? ", " : "";
            if (reg && g->it->lo[j])
                no += (size_t)snprintf(offs + no, sizeof offs - no, "%s%%v%u", sep, g->it->lo[j]);
            else
                no += (size_t)snprintf(offs + no, sizeof offs - no, "%s0", sep);
            if (reg && g->it->size[j]) {
                ns += (size_t)snprintf(sizes + ns, sizeof sizes - ns, "%s%%v%u", sep, g->it->size[j]);
                nn += (size_t)snprintf(nty + nn, sizeof nty - nn, "?x");
            } else {
                ns += (size_t)snprintf(sizes + ns, sizeof sizes - ns, "%s%lld", sep, (long long)sh[k]);
                nn += (size_t)snprintf(nty + nn, sizeof nty - nn, "%lldx", (long long)sh[k]);
            }
            nt += (size_t)snprintf(strides + nt, sizeof strides - nt, "%s1", sep);
        }
        snprintf(nty + nn, sizeof nty - nn, "%s>", store_elem_str(c, ir_type_elem(c->m, t)));
        to_main(g);
        ssa = lo_emit(c->out, "tensor.extract_slice %%v%u[%s] [%s] [%s] : %s to %s", ssa, offs, sizes,
                      strides, ty, nty);
        to_body(g);
        snprintf(ty, sizeof ty, "%s", nty);
    }
    return add_in(g, ssa, ty, r, dm, NULL, as_i8);
}

static unsigned eval(Gen *g, IrRef v, const int8_t *dm);

/* Does the load's valid region (its mask or boundary check) cover what the
 * iteration reads? */
static bool
load_covers(Gen *g, IrOp *ld, const int8_t *dm)
{
    Region lr;
    LoCtx *c = g->c;
    if (lo_load_region(c, ld, &lr) < 0)
        return false;
    if (lr.cond && lr.cond != g->it->reg.cond)
        return false;
    for (int k = 0; k < lr.rank; k++) {
        int j = dm[k];
        if (j < 0 || j >= g->it->rank) {
            if (lr.lo[k] || lr.hi[k])
                return false;
            continue;
        }
        if (lr.lo[k] != g->it->reg.lo[j] || lr.hi[k] != g->it->reg.hi[j])
            return false;
    }
    return true;
}

/* A load leaf read straight from memory through a strided view. */
static unsigned
load_view_in(Gen *g, IrOp *ld, const int8_t *dm)
{
    LoCtx *c = g->c;
    IrType lt = c->f->vals[ld->res[0]].type;
    int r = ir_type_rank(c->m, lt);
    unsigned start[IR_MAX_RANK] = {0}, size[IR_MAX_RANK] = {0};
    int64_t ssize[IR_MAX_RANK];
    for (int k = 0; k < r; k++) {
        int j = dm[k];
        if (j >= 0 && j < g->it->rank) {
            start[k] = g->it->lo[j];
            size[k] = g->it->size[j];
            ssize[k] = g->it->shape[j];
        } else {
            ssize[k] = 1;
        }
    }
    bool unit[IR_MAX_RANK] = {0};
    char mt[256], tt[200];
    to_main(g);
    unsigned view = lo_load_view(c, ld, start, size, ssize, true, unit, mt, sizeof mt);
    lo_view_tensor_type(c, ir_type_elem(c->m, lt), r, size, ssize, unit, tt, sizeof tt);
    unsigned t = lo_emit(c->out, "bufferization.to_tensor %%v%u restrict : %s", view, mt);
    to_body(g);
    int8_t dm2[IR_MAX_RANK];
    for (int k = 0; k < r; k++)
        dm2[k] = unit[k] ? -1 : dm[k];
    return add_in(g, t, tt, r, dm2, NULL, false);
}

/* Element offset of an element-wise gather: base + sum coef*i + sum gen(i). */
static unsigned
gather_index(Gen *g, PtrForm *p, const int8_t *dm)
{
    LoCtx *c = g->c;
    to_main(g);
    unsigned base = lo_aexpr_emit(c, p->off.base);
    unsigned coefs[IR_MAX_RANK];
    for (int k = 0; k < p->off.rank; k++)
        coefs[k] = lo_aexpr_emit(c, p->off.coef[k]);
    to_body(g);
    unsigned acc = base;
    for (int k = 0; k < p->off.rank; k++) {
        int64_t cv;
        if (ax_is_const(p->off.coef[k], &cv) && cv == 0)
            continue;
        if (dm[k] < 0)
            continue;
        unsigned t = lo_emit(&g->body, "arith.muli %%v%u, %%v%u : index", abs_index(g, dm[k]), coefs[k]);
        acc = lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", acc, t);
    }
    for (int i = 0; i < p->ngen; i++) {
        IrRef gv = p->gen[i];
        unsigned x = eval(g, gv, dm);
        const char *ty = lo_elem_str(c, c->f->vals[gv].type);
        unsigned xi = lo_emit(&g->body, "arith.index_cast %%v%u : %s to index", x, ty);
        acc = lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", acc, xi);
    }
    return acc;
}

static unsigned
gather_load(Gen *g, IrOp *ld, PtrForm *p, const int8_t *dm)
{
    LoCtx *c = g->c;
    const char *et = lo_elem_str(c, p->elem);
    unsigned idx = gather_index(g, p, dm);
    unsigned mem = c->param_ssa[p->param];
    if (ld->nargs < 2)
        return lo_emit(&g->body, "memref.load %%v%u[%%v%u] : memref<?x%s>", mem, idx, et);
    unsigned m = eval(g, ld->args[1], dm);
    unsigned oth;
    if (ld->nargs >= 3)
        oth = eval(g, ld->args[2], dm);
    else
        oth = lo_emit_const(c, ir_type_dtype(c->m, p->elem), 0, 0.0);
    unsigned r = lo_fresh(&g->body);
    LoBuf *b = &g->body;
    lo_line(b, "%%v%u = scf.if %%v%u -> (%s) {", r, m, et);
    b->indent += 2;
    unsigned x = lo_emit(b, "memref.load %%v%u[%%v%u] : memref<?x%s>", mem, idx, et);
    lo_line(b, "scf.yield %%v%u : %s", x, et);
    b->indent -= 2;
    lo_line(b, "} else {");
    b->indent += 2;
    lo_line(b, "scf.yield %%v%u : %s", oth, et);
    b->indent -= 2;
    lo_line(b, "}");
    return r;
}

static unsigned
load_leaf(Gen *g, IrRef v, IrOp *ld, const int8_t *dm)
{
    LoCtx *c = g->c;
    LoVal *lv = &c->vals[v];
    if (lv->ssa && lo_scope_visible(c, lv->scope))
        return tensor_in(g, lv->ssa, c->f->vals[v].type, dm, lv->as_i8);
    if (load_covers(g, ld, dm))
        return load_view_in(g, ld, dm);
    Region lr;
    if (lv->gathering || lo_load_region(c, ld, &lr) < 0) {
        PtrForm *p = lo_ptrform(c, ld->args[0]);
        if (!p) {
            lo_error(c, ld->loc, "unsupported pointer expression in tl.load");
            return lo_emit_const(c, IR_I32, 0, 0);
        }
        return gather_load(g, ld, p, dm);
    }
    /* valid region differs from the iteration space: read the padded tile */
    to_main(g);
    unsigned t = lo_load_materialize(c, v);
    to_body(g);
    return tensor_in(g, t, c->f->vals[v].type, dm, c->vals[v].as_i8);
}

/* Value v evaluated at the current iteration point; dm maps v's dims to
 * iteration dims (-1: unit dim). */
static unsigned
eval(Gen *g, IrRef v, const int8_t *dm)
{
    LoCtx *c = g->c;
    IrVal *val = &c->f->vals[v];
    int r = ir_type_rank(c->m, val->type);
    if (r == 0)
        return lo_scalar(c, v);
    uint64_t key = dm_key(dm, r);
    if (v == g->out_val) { /* reading the tile being updated in place: the out element */
        bool ident = true;
        for (int k = 0; k < r; k++)
            ident &= dm[k] == k;
        if (ident && r == g->it->rank)
            return g->out_arg;
    }
    for (int i = 0; i < g->nmemo; i++)
        if (g->memo[i].v == v && g->memo[i].key == key)
            return g->memo[i].ssa;
    LoVal *lv = &c->vals[v];
    unsigned res;
    IrOp *d = val->def;
    if (lv->kind == LV_TENSOR || (lv->kind == LV_LAZY && lv->ssa && lo_scope_visible(c, lv->scope) &&
                                  !(d && d->opc == IR_LOAD))) {
        res = tensor_in(g, lv->ssa, val->type, dm, lv->as_i8);
    } else if (!d) {
        lo_error(c, (IrLoc){0}, "internal: tensor block argument without a value");
        return lo_emit_const(c, IR_I32, 0, 0);
    } else {
        int8_t dm2[IR_MAX_RANK];
        unsigned a[3];
        switch (d->opc) {
        case IR_CONST:
            res = lo_emit_const(c, ir_type_dtype(c->m, val->type), d->i[0], d->f);
            break;
        case IR_SPLAT:
            res = lo_scalar(c, d->args[0]);
            break;
        case IR_MAKE_RANGE: {
            unsigned i = dm[0] >= 0 ? abs_index(g, dm[0]) : lo_const_index(c, 0);
            unsigned i32 = lo_emit(c->out, "arith.index_cast %%v%u : index to i32", i);
            if (d->i[0])
                i32 = lo_emit(c->out, "arith.addi %%v%u, %%v%u : i32", i32, lo_emit_const(c, IR_I32, d->i[0], 0));
            res = i32;
            break;
        }
        case IR_BROADCAST: {
            const int64_t *xs = ir_type_shape(c->m, c->f->vals[d->args[0]].type);
            for (int k = 0; k < r; k++)
                dm2[k] = xs[k] == 1 ? -1 : dm[k];
            res = eval(g, d->args[0], dm2);
            break;
        }
        case IR_EXPAND_DIMS:
            for (int k = 0, j = 0; k < r; k++)
                if (k != d->i[0])
                    dm2[j++] = dm[k];
            res = eval(g, d->args[0], dm2);
            break;
        case IR_TRANS:
            for (int k = 0; k < r; k++)
                dm2[d->ints[k]] = dm[k];
            res = eval(g, d->args[0], dm2);
            break;
        case IR_LOAD:
            res = load_leaf(g, v, d, dm);
            break;
        default:
            if (!(ir_opc_flags[d->opc] & IR_F_ELEM) || d->nargs > 3) {
                /* not element-wise: it was materialised where defined */
                to_main(g);
                unsigned t = lo_materialize(c, v);
                to_body(g);
                res = tensor_in(g, t, val->type, dm, c->vals[v].as_i8);
                break;
            }
            for (uint32_t i = 0; i < d->nargs; i++)
                a[i] = eval(g, d->args[i], dm);
            res = lo_emit_scalar_op(c, d, a);
        }
    }
    if (g->nmemo < MAX_MEMO)
        g->memo[g->nmemo++] = (typeof(g->memo[0])){v, key, res};
    return res;
}

/* ---- iteration spaces and generic emission ------------------------------------------- */

void
lo_iter_from_region(LoCtx *c, const Region *r, int rank, const int64_t *shape, LoIter *it)
{
    memset(it, 0, sizeof *it);
    it->rank = rank;
    memcpy(it->shape, shape, sizeof(int64_t) * rank);
    if (r)
        it->reg = *r;
    else
        it->reg.rank = rank;
    for (int d = 0; d < rank; d++) {
        if (!it->reg.lo[d] && !it->reg.hi[d] && !(it->reg.cond && d == 0))
            continue;
        const AExpr *B = ax_const(c, shape[d]);
        const AExpr *lo = it->reg.lo[d] ? ax_min(c, ax_max(c, it->reg.lo[d], ax_const(c, 0)), B) : NULL;
        const AExpr *hi = it->reg.hi[d] ? ax_max(c, ax_min(c, it->reg.hi[d], B), lo ? lo : ax_const(c, 0)) : B;
        const AExpr *sz = lo ? ax_add(c, hi, ax_neg(c, lo)) : hi;
        int64_t k;
        if (lo && !(ax_is_const(lo, &k) && k == 0))
            it->lo[d] = lo_aexpr_emit(c, lo);
        unsigned s = ax_is_const(sz, &k) && k == shape[d] ? 0 : lo_aexpr_emit(c, sz);
        if (it->reg.cond && d == 0) {
            unsigned cnd = lo_scalar(c, it->reg.cond);
            unsigned full = s ? s : lo_const_index(c, shape[d]);
            s = lo_emit(c->out, "arith.select %%v%u, %%v%u, %%v%u : index", cnd, full, lo_const_index(c, 0));
        }
        it->size[d] = s;
    }
}

static void
region_type(LoCtx *c, const LoIter *it, const char *elem, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "tensor<");
    for (int d = 0; d < it->rank && n < cap; d++) {
        if (it->size[d])
            n += (size_t)snprintf(buf + n, cap - n, "?x");
        else
            n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)it->shape[d]);
    }
    if (n < cap)
        snprintf(buf + n, cap - n, "%s>", elem);
}

static void
gen_init(Gen *g, LoCtx *c, const LoIter *it, int full_rank)
{
    memset(g, 0, sizeof *g);
    g->c = c;
    g->it = it;
    g->main = c->out;
    lo_buf_init(&g->body);
    g->body.ctr = c->out->ctr;
    g->body.indent = c->out->indent + 2;
    g->full_rank = full_rank;
    g->main_scope = c->scope;
    g->body_scope = lo_scope_push(c);
    c->scope = g->main_scope;
}

static void
emit_generic(Gen *g, unsigned res, const char *iters, const char *outs, const char *outs_type,
             const char *out_map, unsigned out_arg, const char *out_elem, const char *extra_outs)
{
    LoCtx *c = g->c;
    LoBuf *o = g->main;
    char ind[64];
    snprintf(ind, sizeof ind, "%*s", o->indent, "");
    lo_printf(o, "%s%%v%u = linalg.generic {indexing_maps = [", ind, res);
    for (int i = 0; i < g->nins; i++)
        lo_printf(o, "%s, ", g->ins[i].map);
    lo_printf(o, "%s], iterator_types = [%s]}", out_map, iters);
    if (g->nins) {
        lo_printf(o, " ins(");
        for (int i = 0; i < g->nins; i++)
            lo_printf(o, "%s%%v%u", i ? ", " : "", g->ins[i].ssa);
        lo_printf(o, " : ");
        for (int i = 0; i < g->nins; i++)
            lo_printf(o, "%s%s", i ? ", " : "", g->ins[i].type);
        lo_printf(o, ")");
    }
    lo_printf(o, " outs(%s : %s) {\n", outs, outs_type);
    lo_printf(o, "%s^bb0(", ind);
    for (int i = 0; i < g->nins; i++) {
        const char *t = strrchr(g->ins[i].type, 'x');
        char e[24];
        snprintf(e, sizeof e, "%s", t ? t + 1 : g->ins[i].type + 7);
        e[strlen(e) - 1] = 0; /* drop '>' */
        lo_printf(o, "%%v%u: %s, ", g->ins[i].arg, e);
    }
    lo_printf(o, "%%v%u: %s%s):\n", out_arg, out_elem, extra_outs ? extra_outs : "");
    lo_printf(o, "%s", g->body.p ? g->body.p : "");
    (void)c;
}

static void
iter_types(int rank, int red_dim, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (int d = 0; d < rank; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s\"%s\"", d ? ", " : "", d == red_dim ? "reduction" : "parallel");
}

/* Emits the generic computing v over 'it' into 'outs' (0: a new tensor.empty).
 * When outs is the tensor of IR value 'out_val', reads of out_val at the same
 * index use the output block argument, which keeps the update in place. */
static unsigned
generic_store(LoCtx *c, const LoIter *it, IrRef v, unsigned outs, const char *outs_type, IrRef out_val)
{
    IrType vt = c->f->vals[v].type;
    IrType et = ir_type_elem(c->m, vt);
    bool is_i1 = ir_type_dtype(c->m, et) == IR_I1;
    const char *elem = is_i1 ? "i8" : lo_elem_str(c, et);
    char rtype[200];
    region_type(c, it, elem, rtype, sizeof rtype);
    if (!outs) {
        char dyn[256] = "";
        size_t n = 0;
        for (int d = 0; d < it->rank; d++)
            if (it->size[d])
                n += (size_t)snprintf(dyn + n, sizeof dyn - n, "%s%%v%u", n ? ", " : "", it->size[d]);
        outs = lo_emit(c->out, "tensor.empty(%s) : %s", dyn, rtype);
        outs_type = rtype;
    }
    Gen g;
    gen_init(&g, c, it, it->rank);
    unsigned res = lo_fresh(c->out);
    g.out_arg = lo_fresh(c->out);
    g.out_val = is_i1 ? IR_NONE : out_val;
    to_body(&g);
    int8_t dm[IR_MAX_RANK];
    for (int d = 0; d < it->rank; d++)
        dm[d] = (int8_t)d;
    unsigned r = eval(&g, v, dm);
    if (is_i1)
        r = lo_emit(&g.body, "arith.extui %%v%u : i1 to i8", r);
    lo_line(&g.body, "linalg.yield %%v%u : %s", r, elem);
    to_main(&g);
    char iters[256], omap[160], outs_s[32];
    iter_types(it->rank, -1, iters, sizeof iters);
    map_text(it->rank, it->rank, dm, omap, sizeof omap);
    snprintf(outs_s, sizeof outs_s, "%%v%u", outs);
    emit_generic(&g, res, iters, outs_s, outs_type, omap, g.out_arg, elem, NULL);
    lo_line(c->out, "} -> %s", outs_type);
    lo_buf_fini(&g.body);
    return res;
}

unsigned
lo_generic_store(LoCtx *c, const LoIter *it, IrRef v, unsigned outs, const char *outs_type)
{
    return generic_store(c, it, v, outs, outs_type, IR_NONE);
}

unsigned
lo_generic_update(LoCtx *c, const LoIter *it, IrRef v, IrRef dest_val, unsigned outs, const char *outs_type)
{
    return generic_store(c, it, v, outs, outs_type, dest_val);
}

unsigned
lo_materialize(LoCtx *c, IrRef v)
{
    LoVal *lv = &c->vals[v];
    if (lv->ssa && lo_scope_visible(c, lv->scope))
        return lv->ssa;
    IrVal *val = &c->f->vals[v];
    IrOp *d = val->def;
    unsigned r;
    if (d && d->opc == IR_LOAD) {
        r = lo_load_materialize(c, v);
    } else {
        LoIter it;
        lo_iter_from_region(c, NULL, ir_type_rank(c->m, val->type), ir_type_shape(c->m, val->type), &it);
        r = lo_generic_store(c, &it, v, 0, NULL);
    }
    lv->ssa = r;
    lv->scope = c->scope;
    lv->as_i8 = ir_type_dtype(c->m, val->type) == IR_I1;
    return r;
}

/* ---- reductions (used by lo_compute.c) ---------------------------------------------------- */

/* Emits a linalg.generic reducing 'v' (rank r) along 'axis' with the combine ops of
 * 'region' (a tt.reduce body with one operand), starting from 'init' (a tensor of
 * the result shape). Returns the result tensor SSA. */
unsigned
lo_generic_reduce(LoCtx *c, IrRef v, int axis, IrBlock *region, unsigned init, const char *init_type)
{
    IrType vt = c->f->vals[v].type;
    int r = ir_type_rank(c->m, vt);
    const char *elem = lo_elem_str(c, vt);
    LoIter it;
    lo_iter_from_region(c, NULL, r, ir_type_shape(c->m, vt), &it);
    Gen g;
    gen_init(&g, c, &it, r);
    unsigned out_arg = lo_fresh(c->out);
    to_body(&g);
    int8_t dm[IR_MAX_RANK];
    for (int d = 0; d < r; d++)
        dm[d] = (int8_t)d;
    unsigned x = eval(&g, v, dm);
    /* combine(acc, x): region args (a, b) with a = accumulator */
    unsigned *map = calloc(c->f->nvals, sizeof(unsigned));
    if (!map)
        ir_die("out of memory");
    map[region->args[0]] = out_arg;
    map[region->args[1]] = x;
    unsigned result = 0;
    for (IrOp *op = region->first; op; op = op->next) {
        if (op->opc == IR_REDUCE_RETURN) {
            result = map[op->args[0]];
            break;
        }
        unsigned a[3];
        for (uint32_t i = 0; i < op->nargs && i < 3; i++)
            a[i] = map[op->args[i]];
        map[op->res[0]] = lo_emit_scalar_op(c, op, a);
    }
    free(map);
    lo_line(&g.body, "linalg.yield %%v%u : %s", result, elem);
    to_main(&g);
    unsigned res = lo_fresh(c->out);
    char iters[256], omap[160], outs_s[32];
    int8_t odm[IR_MAX_RANK];
    for (int d = 0, k = 0; d < r; d++)
        if (d != axis)
            odm[k++] = (int8_t)d;
    iter_types(r, axis, iters, sizeof iters);
    map_text(r, r - 1, odm, omap, sizeof omap);
    snprintf(outs_s, sizeof outs_s, "%%v%u", init);
    emit_generic(&g, res, iters, outs_s, init_type, omap, out_arg, elem, NULL);
    lo_line(c->out, "} -> %s", init_type);
    lo_buf_fini(&g.body);
    return res;
}

/* ---- element offsets of gather pointers (scatter stores) ----------------------------- */

unsigned
lo_offsets_tensor(LoCtx *c, IrRef ptr, PtrForm *p)
{
    IrType pt = c->f->vals[ptr].type;
    int r = ir_type_rank(c->m, pt);
    LoIter it;
    lo_iter_from_region(c, NULL, r, ir_type_shape(c->m, pt), &it);
    char ty[200];
    size_t n = (size_t)snprintf(ty, sizeof ty, "tensor<");
    for (int d = 0; d < r; d++)
        n += (size_t)snprintf(ty + n, sizeof ty - n, "%lldx", (long long)it.shape[d]);
    snprintf(ty + n, sizeof ty - n, "index>");
    unsigned outs = lo_emit(c->out, "tensor.empty() : %s", ty);
    Gen g;
    gen_init(&g, c, &it, r);
    to_body(&g);
    int8_t dm[IR_MAX_RANK];
    for (int d = 0; d < r; d++)
        dm[d] = (int8_t)d;
    unsigned x = gather_index(&g, p, dm);
    lo_line(&g.body, "linalg.yield %%v%u : index", x);
    to_main(&g);
    unsigned res = lo_fresh(c->out), out_arg = lo_fresh(c->out);
    char iters[256], omap[160], outs_s[32];
    iter_types(r, -1, iters, sizeof iters);
    map_text(r, r, dm, omap, sizeof omap);
    snprintf(outs_s, sizeof outs_s, "%%v%u", outs);
    emit_generic(&g, res, iters, outs_s, ty, omap, out_arg, "index", NULL);
    lo_line(c->out, "} -> %s", ty);
    lo_buf_fini(&g.body);
    return res;
}
