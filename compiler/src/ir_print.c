/*
 * ir_print.c — writes tile IR as MLIR-syntax text close to Triton's TTIR.
 *
 * The output parses back (ir_parse.c) to a module that prints identically.
 * Values are renamed in print order: %argN for block arguments (numbered across
 * the function, as MLIR does), Triton/MLIR-style names for constants (%c1024_i32,
 * %true, %cst, uniqued with _0, _1 ...), %N for everything else, %N:k / %N#i for
 * ops with several results. docs/ttir.md describes the syntax of every op.
 */
#include "ir_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- spellings ---------------------------------------------------------------------- */

const char *const ir_cmpi_name[IR_CMPI_COUNT] = {"eq",  "ne",  "slt", "sle", "sgt",
                                                 "sge", "ult", "ule", "ugt", "uge"};
const char *const ir_cmpf_name[IR_CMPF_COUNT] = {"false", "oeq", "ogt", "oge", "olt", "ole",
                                                 "one",   "ord", "ueq", "ugt", "uge", "ult",
                                                 "ule",   "une", "uno", "true"};
const char *const ir_rmw_name[IR_RMW_COUNT] = {"and", "or",  "xor",  "add",  "fadd",
                                               "max", "min", "umax", "umin", "exch"};
const char *const ir_sem_name[IR_SEM_COUNT] = {"acq_rel", "acquire", "release", "relaxed"};
const char *const ir_scope_name[IR_SCOPE_COUNT] = {"gpu", "cta", "sys"};
const char *const ir_prec_name[IR_PREC_COUNT] = {"tf32", "tf32x3", "ieee"};
static const char *const axis_name[3] = {"x", "y", "z"};

int
ir_name_lookup(const char *const *names, int count, const char *s, size_t n)
{
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return i;
    return -1;
}

static const char *
enum_name(const char *const *names, int count, int64_t v)
{
    return v >= 0 && v < count ? names[v] : "?";
}

/* ---- numbers ---------------------------------------------------------------------------- */

/* Rounds v to p significant bits with minimum normal exponent emin and maximum
 * exponent emax (round to nearest even, overflow to infinity). */
static double
round_bits(double v, int p, int emin, int emax)
{
    if (!isfinite(v) || v == 0)
        return v;
    int e;
    frexp(v, &e);
    int lead = e - 1 < emin ? emin : e - 1;
    double q = ldexp(1.0, lead - (p - 1));
    double r = nearbyint(v / q) * q;
    if (fabs(r) >= ldexp(1.0, emax + 1))
        return copysign(INFINITY, v);
    return r;
}

double
ir_float_round(double v, IrDtype d)
{
    switch (d) {
    case IR_F16:
        return round_bits(v, 11, -14, 15);
    case IR_BF16:
        return round_bits(v, 8, -126, 127);
    case IR_F32:
        return (double)(float)v;
    default:
        return v;
    }
}

int64_t
ir_int_norm(int64_t v, IrDtype d)
{
    int bits = ir_dtype_bits(d);
    if (bits == 1)
        return v & 1;
    if (bits >= 64)
        return v;
    uint64_t m = (UINT64_C(1) << bits) - 1, u = (uint64_t)v & m;
    if (u >> (bits - 1))
        u |= ~m;
    return (int64_t)u;
}

uint16_t
ir_bf16_bits(double v)
{
    float f = (float)(isnan(v) ? v : ir_float_round(v, IR_BF16)); /* exact once rounded */
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)(isnan(v) ? (x >> 16) | 0x40 : x >> 16);
}

uint16_t
ir_f16_bits(double v)
{
    uint16_t s = signbit(v) ? 0x8000 : 0;
    if (isnan(v))
        return s | 0x7E00;
    double a = fabs(ir_float_round(v, IR_F16));
    if (isinf(a))
        return s | 0x7C00;
    if (a == 0)
        return s;
    int e;
    frexp(a, &e);
    if (e - 1 < -14) /* subnormal: a multiple of 2^-24 */
        return s | (uint16_t)ldexp(a, 24);
    return s | (uint16_t)((e - 1 + 15) << 10) | ((uint16_t)ldexp(a, 11 - e) & 0x3FF);
}

uint64_t
ir_float_bits(double v, IrDtype d)
{
    if (d == IR_F64) {
        uint64_t b;
        memcpy(&b, &v, 8);
        return b;
    }
    if (d == IR_BF16)
        return ir_bf16_bits(v);
    if (d == IR_F16)
        return ir_f16_bits(v);
    float fv = (float)v;
    uint32_t b32;
    memcpy(&b32, &fv, 4);
    return b32;
}

double
ir_float_from_bits(uint64_t b, IrDtype d)
{
    if (d == IR_F64) {
        double v;
        memcpy(&v, &b, 8);
        return v;
    }
    if (d == IR_F32 || d == IR_BF16) {
        uint32_t b32 = d == IR_F32 ? (uint32_t)b : (uint32_t)b << 16;
        float fv;
        memcpy(&fv, &b32, 4);
        return fv;
    }
    double s = b & 0x8000 ? -1.0 : 1.0;
    int ex = (int)(b >> 10) & 0x1F, man = (int)b & 0x3FF;
    if (ex == 0x1F)
        return man ? NAN : s * INFINITY;
    if (ex == 0)
        return s * ldexp(man, -24);
    return s * ldexp(1024 + man, ex - 25);
}

void
ir_print_float(FILE *out, double v, IrDtype d)
{
    char buf[64];
    v = ir_float_round(v, d);
    snprintf(buf, sizeof buf, "%.6e", v);
    if (isfinite(v) && ir_float_bits(ir_float_round(strtod(buf, NULL), d), d) == ir_float_bits(v, d)) {
        fputs(buf, out);
        return;
    }
    int w = d == IR_F64 ? 16 : d == IR_F32 ? 8 : 4;
    fprintf(out, "0x%0*" PRIX64, w, ir_float_bits(v, d));
}

/* ---- value names -------------------------------------------------------------------------- */

typedef struct Printer {
    FILE *out;
    IrFunc *f;
    IrModule *m;
    unsigned flags;
    char **names;      /* per value, malloc'ed; NULL until defined */
    uint32_t nextnum;  /* %N */
    uint32_t nextarg;  /* %argN */
    char **bases;      /* constant base names seen, and how often */
    uint32_t *counts;
    uint32_t nbases, capbases;
} Printer;

static char *
xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        ir_die("out of memory");
    return d;
}

/* Uniques a constant base name: first use is plain, then base_0, base_1 ... */
static void
unique_name(Printer *p, const char *base, char *buf, size_t cap)
{
    for (uint32_t i = 0; i < p->nbases; i++) {
        if (strcmp(p->bases[i], base) == 0) {
            snprintf(buf, cap, "%s_%u", base, p->counts[i]++);
            return;
        }
    }
    if (p->nbases == p->capbases) {
        p->capbases = p->capbases ? p->capbases * 2 : 16;
        p->bases = realloc(p->bases, sizeof(char *) * p->capbases);
        p->counts = realloc(p->counts, sizeof(uint32_t) * p->capbases);
        if (!p->bases || !p->counts)
            ir_die("out of memory");
    }
    p->bases[p->nbases] = xstrdup(base);
    p->counts[p->nbases++] = 0;
    snprintf(buf, cap, "%s", base);
}

static void
name_results(Printer *p, IrOp *op)
{
    char base[64], buf[96];
    if (op->nres == 0)
        return;
    if (op->opc == IR_CONST && op->nres == 1) {
        IrType t = ir_val_type(p->f, op->res[0]);
        int d = ir_type_dtype(p->m, t);
        if (ir_type_is_tensor(p->m, t) || d < 0 || ir_dtype_is_float((IrDtype)d))
            snprintf(base, sizeof base, "cst");
        else if (d == IR_I1)
            snprintf(base, sizeof base, "%s", op->i[0] & 1 ? "true" : "false");
        else
            snprintf(base, sizeof base, "c%" PRId64 "_%s", ir_int_norm(op->i[0], (IrDtype)d),
                     ir_dtype_mlir((IrDtype)d));
        unique_name(p, base, buf, sizeof buf);
    } else {
        snprintf(buf, sizeof buf, "%u", p->nextnum++);
    }
    for (uint32_t i = 0; i < op->nres; i++) {
        char full[128];
        if (op->nres > 1)
            snprintf(full, sizeof full, "%s#%u", buf, i);
        else
            snprintf(full, sizeof full, "%s", buf);
        free(p->names[op->res[i]]);
        p->names[op->res[i]] = xstrdup(full);
    }
}

static void
name_arg(Printer *p, IrRef r)
{
    char buf[32];
    snprintf(buf, sizeof buf, "arg%u", p->nextarg++);
    free(p->names[r]);
    p->names[r] = xstrdup(buf);
}

static void
name_block_args(Printer *p, IrBlock *b, uint32_t from)
{
    for (uint32_t i = from; i < b->nargs; i++)
        name_arg(p, b->args[i]);
}

/* ---- small writers ------------------------------------------------------------------------ */

static void
pval(Printer *p, IrRef r)
{
    if (r == IR_NONE || r >= p->f->nvals || !p->names[r])
        fprintf(p->out, "%%<undef%u>", r);
    else
        fprintf(p->out, "%%%s", p->names[r]);
}

static void ptype(Printer *p, IrType t) { ir_print_type(p->out, p->m, t); }
static void vtype(Printer *p, IrRef r) { ptype(p, ir_val_type(p->f, r)); }

static void
pvals(Printer *p, const IrRef *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", p->out);
        pval(p, v[i]);
    }
}

static void
vtypes(Printer *p, const IrRef *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", p->out);
        vtype(p, v[i]);
    }
}

/* "(T1, T2) -> R" or "-> (R1, R2)" helpers */
static void
pfunctype(Printer *p, const IrRef *args, uint32_t nargs, const IrRef *res, uint32_t nres)
{
    fputc('(', p->out);
    vtypes(p, args, nargs);
    fputs(") -> ", p->out);
    if (nres == 1) {
        vtype(p, res[0]);
        return;
    }
    fputc('(', p->out);
    vtypes(p, res, nres);
    fputc(')', p->out);
}

static void
indent(Printer *p, int n)
{
    for (int i = 0; i < n; i++)
        fputc(' ', p->out);
}

static void
pstring(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c < 0x20 || c >= 0x7F)
            fprintf(out, "\\%02X", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void
pintarray(FILE *out, const char *elt, const int64_t *v, uint32_t n)
{
    fprintf(out, "array<%s", elt);
    for (uint32_t i = 0; i < n; i++)
        fprintf(out, "%s %" PRId64, i ? "," : ":", v[i]);
    fputc('>', out);
}

/* Attribute dictionaries: attributes are written in alphabetical order by the
 * callers, as MLIR does; adict() opens " {" or writes ", ". */
static void
adict(Printer *p, int *n)
{
    fputs(*n ? ", " : " {", p->out);
    (*n)++;
}

static void
adict_end(Printer *p, int n)
{
    if (n)
        fputc('}', p->out);
}

static void
ploc(Printer *p, IrLoc loc)
{
    if (!(p->flags & IR_PRINT_LOCS))
        return;
    if (!loc.file && !loc.line) {
        fputs(" loc(unknown)", p->out);
        return;
    }
    fputs(" loc(", p->out);
    pstring(p->out, ir_str(p->m, loc.file));
    fprintf(p->out, ":%u:%u)", loc.line, loc.col);
}

/* ---- constants ---------------------------------------------------------------------------- */

static void
pscalar_const(Printer *p, const IrOp *op, IrDtype d)
{
    if (ir_dtype_is_float(d))
        ir_print_float(p->out, op->f, d);
    else if (d == IR_I1)
        fputs(op->i[0] & 1 ? "true" : "false", p->out);
    else
        fprintf(p->out, "%" PRId64, ir_int_norm(op->i[0], d));
}

static void
print_const(Printer *p, IrOp *op)
{
    IrType t = ir_val_type(p->f, op->res[0]);
    int d = ir_type_dtype(p->m, t);
    fputc(' ', p->out);
    if (d < 0) {
        fputs("<pointer constant> : ", p->out);
        ptype(p, t);
        return;
    }
    if (ir_type_is_tensor(p->m, t)) {
        fputs("dense<", p->out);
        pscalar_const(p, op, (IrDtype)d);
        fputs("> : ", p->out);
        ptype(p, t);
        return;
    }
    pscalar_const(p, op, (IrDtype)d);
    if (d != IR_I1) {
        fputs(" : ", p->out);
        ptype(p, t);
    }
}

/* ---- regions ------------------------------------------------------------------------------ */

static void print_block_ops(Printer *p, IrBlock *b, int ind);

/* "^bb0(%a: T, ...):" line for blocks whose arguments are not in the op header. */
static void
print_bb_header(Printer *p, IrBlock *b, int ind)
{
    name_block_args(p, b, 0);
    indent(p, ind - 2);
    fputs("^bb0(", p->out);
    for (uint32_t i = 0; i < b->nargs; i++) {
        if (i)
            fputs(", ", p->out);
        pval(p, b->args[i]);
        fputs(": ", p->out);
        vtype(p, b->args[i]);
    }
    fputs("):\n", p->out);
}

static void
print_region(Printer *p, IrBlock *b, int ind, bool header)
{
    fputs("{\n", p->out);
    if (header)
        print_bb_header(p, b, ind + 2);
    print_block_ops(p, b, ind + 2);
    indent(p, ind);
    fputc('}', p->out);
}

static bool
is_empty_yield_block(IrBlock *b)
{
    return !b->first || (b->first == b->last && b->first->opc == IR_YIELD && b->first->nargs == 0);
}

/* ---- ops ---------------------------------------------------------------------------------- */

static void
print_memattrs(Printer *p, const IrOp *op, bool is_load)
{
    int n = 0;
    if (op->nints) {
        adict(p, &n);
        fputs("boundaryCheck = ", p->out);
        pintarray(p->out, "i32", op->ints, op->nints);
    }
    if (op->i[1]) {
        adict(p, &n);
        fprintf(p->out, "cache = %" PRId64 " : i32", op->i[1]);
    }
    if (op->i[2]) {
        adict(p, &n);
        fprintf(p->out, "evict = %" PRId64 " : i32", op->i[2]);
    }
    if (is_load && op->i[3]) {
        adict(p, &n);
        fputs("isVolatile = true", p->out);
    }
    if (is_load && op->i[0]) {
        adict(p, &n);
        fprintf(p->out, "padding = %" PRId64 " : i32", op->i[0]);
    }
    adict_end(p, n);
}

/* The xsmt ops share one functional form: operands, attributes, types. */
static void
print_smt(Printer *p, IrOp *op)
{
    int n = 0;
    if (op->nargs)
        fputc(' ', p->out);
    pvals(p, op->args, op->nargs);
    switch (op->opc) {
    case IR_SMT_PACK:
    case IR_SMT_REPACK:
    case IR_SMT_SUBVIEW_PACK:
        adict(p, &n);
        fputs("packed_size = ", p->out);
        pintarray(p->out, "i64", op->ints + op->nints / 2, op->nints - op->nints / 2);
        fputs(", shape = ", p->out);
        pintarray(p->out, "i64", op->ints, op->nints / 2);
        break;
    case IR_SMT_UNPACK:
    case IR_SMT_SUBVIEW:
    case IR_SMT_ALLOC:
        adict(p, &n);
        fputs("shape = ", p->out);
        pintarray(p->out, "i64", op->ints, op->nints);
        if (op->opc == IR_SMT_ALLOC && op->s) {
            fputs(", storage = ", p->out);
            pstring(p->out, op->s);
        }
        break;
    default:
        break;
    }
    adict_end(p, n);
    fputs(" : ", p->out);
    if (op->nargs == 0 && op->nres == 1)
        vtype(p, op->res[0]);
    else if (op->nres == 0) {
        fputc('(', p->out);
        vtypes(p, op->args, op->nargs);
        fputs(") -> ()", p->out);
    } else
        pfunctype(p, op->args, op->nargs, op->res, op->nres);
}

static void
print_reduce_scan(Printer *p, IrOp *op, int ind)
{
    fputc('"', p->out);
    fputs(ir_opc_name[op->opc], p->out);
    fputs("\"(", p->out);
    pvals(p, op->args, op->nargs);
    fprintf(p->out, ") <{axis = %" PRId64 " : i32", op->i[0]);
    if (op->opc == IR_SCAN)
        fprintf(p->out, ", reverse = %s", op->i[1] ? "true" : "false");
    fputs("}> (", p->out);
    print_region(p, op->regs[0], ind, true);
    fputs(") : ", p->out);
    pfunctype(p, op->args, op->nargs, op->res, op->nres);
}

static void
print_for(Printer *p, IrOp *op, int ind)
{
    IrBlock *b = op->regs[0];
    name_block_args(p, b, 0);
    fputc(' ', p->out);
    pval(p, b->nargs ? b->args[0] : IR_NONE);
    fputs(" = ", p->out);
    pval(p, op->args[0]);
    fputs(" to ", p->out);
    pval(p, op->args[1]);
    fputs(" step ", p->out);
    pval(p, op->args[2]);
    if (op->nargs > 3) {
        fputs(" iter_args(", p->out);
        for (uint32_t i = 3; i < op->nargs; i++) {
            if (i > 3)
                fputs(", ", p->out);
            pval(p, i - 2 < b->nargs ? b->args[i - 2] : IR_NONE);
            fputs(" = ", p->out);
            pval(p, op->args[i]);
        }
        fputs(") -> (", p->out);
        vtypes(p, op->res, op->nres);
        fputc(')', p->out);
    }
    fputs(" : ", p->out);
    vtype(p, op->args[0]);
    fputc(' ', p->out);
    print_region(p, b, ind, false);
    if (op->i[0])
        fputs(" {bind_sub_block = true}", p->out);
}

static void
print_if(Printer *p, IrOp *op, int ind)
{
    fputc(' ', p->out);
    pval(p, op->args[0]);
    if (op->nres) {
        fputs(" -> (", p->out);
        vtypes(p, op->res, op->nres);
        fputc(')', p->out);
    }
    fputc(' ', p->out);
    print_region(p, op->regs[0], ind, false);
    if (op->nregs > 1 && !(op->nres == 0 && is_empty_yield_block(op->regs[1]))) {
        fputs(" else ", p->out);
        print_region(p, op->regs[1], ind, false);
    }
}

static void
print_while(Printer *p, IrOp *op, int ind)
{
    IrBlock *b = op->regs[0];
    name_block_args(p, b, 0);
    fputs(" (", p->out);
    for (uint32_t i = 0; i < op->nargs; i++) {
        if (i)
            fputs(", ", p->out);
        pval(p, i < b->nargs ? b->args[i] : IR_NONE);
        fputs(" = ", p->out);
        pval(p, op->args[i]);
    }
    fputs(") : (", p->out);
    vtypes(p, op->args, op->nargs);
    fputs(") -> ", p->out);
    if (op->nres == 1)
        vtype(p, op->res[0]);
    else {
        fputc('(', p->out);
        vtypes(p, op->res, op->nres);
        fputc(')', p->out);
    }
    fputc(' ', p->out);
    print_region(p, b, ind, false);
    fputs(" do ", p->out);
    print_region(p, op->regs[1], ind, true);
}

/* ": T" after a list of operands, or nothing when there are none. */
static void
ptypes_if(Printer *p, const IrRef *v, uint32_t n)
{
    if (!n)
        return;
    fputs(" : ", p->out);
    vtypes(p, v, n);
}

/* One switch over the custom-syntax ops: long by nature (one case per op). */
static void
print_custom(Printer *p, IrOp *op, int ind)
{
    FILE *o = p->out;
    IrRef *a = op->args;
    switch ((IrOpc)op->opc) {
    case IR_CONST:
        print_const(p, op);
        break;
    case IR_SELECT:
        fputc(' ', o);
        pvals(p, a, 3);
        fputs(" : ", o);
        if (ir_type_is_tensor(p->m, ir_val_type(p->f, a[0]))) {
            vtype(p, a[0]);
            fputs(", ", o);
        }
        vtype(p, op->res[0]);
        break;
    case IR_FP_TO_FP:
        fputc(' ', o);
        pval(p, a[0]);
        fprintf(o, ", rounding = %s : ", op->i[0] ? "rtz" : "rtne");
        vtype(p, a[0]);
        fputs(" -> ", o);
        vtype(p, op->res[0]);
        break;
    case IR_CLAMPF:
        fputc(' ', o);
        pvals(p, a, 3);
        fprintf(o, ", propagateNan = %s : ", op->i[0] ? "all" : "none");
        vtype(p, op->res[0]);
        break;
    case IR_EXTERN_ELEM:
        fputc(' ', o);
        pvals(p, a, op->nargs);
        fputs(" {pure = true, symbol = ", o);
        pstring(o, op->s ? op->s : "");
        fputs("} : ", o);
        pfunctype(p, a, op->nargs, op->res, op->nres);
        break;
    case IR_GET_PROGRAM_ID:
    case IR_GET_NUM_PROGRAMS:
        fprintf(o, " %s : ", enum_name(axis_name, 3, op->i[0]));
        vtype(p, op->res[0]);
        break;
    case IR_MAKE_RANGE:
        fprintf(o, " {end = %" PRId64 " : i32, start = %" PRId64 " : i32} : ", op->i[1], op->i[0]);
        vtype(p, op->res[0]);
        break;
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_TRANS:
    case IR_CAT:
    case IR_JOIN:
    case IR_SPLIT:
    case IR_HISTOGRAM:
        fputc(' ', o);
        pvals(p, a, op->nargs);
        if (op->opc == IR_EXPAND_DIMS)
            fprintf(o, " {axis = %" PRId64 " : i32}", op->i[0]);
        if (op->opc == IR_RESHAPE && op->i[0])
            fputs(" allow_reorder", o);
        if (op->opc == IR_TRANS) {
            fputs(" {order = ", o);
            pintarray(o, "i32", op->ints, op->nints);
            fputc('}', o);
        }
        fputs(" : ", o);
        vtype(p, a[0]);
        fputs(" -> ", o);
        vtype(p, op->res[0]);
        break;
    case IR_GATHER:
        fputc(' ', o);
        pval(p, a[0]);
        fputc('[', o);
        pval(p, a[1]);
        fprintf(o, "] {axis = %" PRId64 " : i32} : ", op->i[0]);
        pfunctype(p, a, 2, op->res, 1);
        break;
    case IR_ADDPTR:
        fputc(' ', o);
        pvals(p, a, 2);
        fputs(" : ", o);
        vtypes(p, a, 2);
        break;
    case IR_LOAD:
    case IR_STORE:
        fputc(' ', o);
        pvals(p, a, op->nargs);
        print_memattrs(p, op, op->opc == IR_LOAD);
        fputs(" : ", o);
        vtype(p, a[0]);
        break;
    case IR_MAKE_TENSOR_PTR: {
        uint32_t r = op->nargs ? (op->nargs - 1) / 3 : 0;
        fputc(' ', o);
        pval(p, a[0]);
        for (int k = 0; k < 3; k++) {
            fputs(", [", o);
            pvals(p, a + 1 + k * r, r);
            fputc(']', o);
        }
        fputs(" {order = ", o);
        pintarray(o, "i32", op->ints, op->nints);
        fputs("} : ", o);
        vtype(p, op->res[0]);
        break;
    }
    case IR_ADVANCE:
        fputc(' ', o);
        pval(p, a[0]);
        fputs(", [", o);
        pvals(p, a + 1, op->nargs - 1);
        fputs("] : ", o);
        vtype(p, op->res[0]);
        break;
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS:
        if (op->opc == IR_ATOMIC_RMW)
            fprintf(o, " %s,", enum_name(ir_rmw_name, IR_RMW_COUNT, op->i[0]));
        fprintf(o, " %s, %s, ", enum_name(ir_sem_name, IR_SEM_COUNT, op->i[1]),
                enum_name(ir_scope_name, IR_SCOPE_COUNT, op->i[2]));
        pvals(p, a, op->nargs);
        fputs(" : ", o);
        pfunctype(p, a, op->nargs, op->res, op->nres);
        break;
    case IR_DOT:
        fputc(' ', o);
        pvals(p, a, 3);
        fprintf(o, ", inputPrecision = %s", enum_name(ir_prec_name, IR_PREC_COUNT, op->i[0]));
        if (op->i[1])
            fprintf(o, " {maxNumImpreciseAcc = %" PRId64 " : i32}", op->i[1]);
        fputs(" : ", o);
        vtype(p, a[0]);
        fputs(" * ", o);
        vtype(p, a[1]);
        fputs(" -> ", o);
        vtype(p, op->res[0]);
        break;
    case IR_REDUCE_RETURN:
    case IR_SCAN_RETURN:
    case IR_YIELD:
    case IR_RETURN:
        if (op->nargs)
            fputc(' ', o);
        pvals(p, a, op->nargs);
        ptypes_if(p, a, op->nargs);
        break;
    case IR_CONDITION:
        fputc('(', o);
        pval(p, a[0]);
        fputc(')', o);
        if (op->nargs > 1)
            fputc(' ', o);
        pvals(p, a + 1, op->nargs - 1);
        ptypes_if(p, a + 1, op->nargs - 1);
        break;
    case IR_FOR:
        print_for(p, op, ind);
        break;
    case IR_IF:
        print_if(p, op, ind);
        break;
    case IR_WHILE:
        print_while(p, op, ind);
        break;
    case IR_CALL:
        fprintf(o, " @%s(", op->s ? op->s : "");
        pvals(p, a, op->nargs);
        fputs(") : ", o);
        if (op->nres == 0) {
            fputc('(', o);
            vtypes(p, a, op->nargs);
            fputs(") -> ()", o);
        } else
            pfunctype(p, a, op->nargs, op->res, op->nres);
        break;
    case IR_PRINT:
        fputc(' ', o);
        pstring(o, op->s ? op->s : "");
        fprintf(o, " {hex = %s, isSigned = ", op->i[0] ? "true" : "false");
        pintarray(o, "i32", op->ints, op->nints);
        fputc('}', o);
        if (op->nargs) {
            fputs(" : ", o);
            pvals(p, a, op->nargs);
            fputs(" : ", o);
            vtypes(p, a, op->nargs);
        }
        break;
    case IR_ASSERT:
        fputc(' ', o);
        pval(p, a[0]);
        fputs(", ", o);
        pstring(o, op->s ? op->s : "");
        fputs(" : ", o);
        vtype(p, a[0]);
        break;
    case IR_ASSUME:
        fputc(' ', o);
        pval(p, a[0]);
        fputs(" : ", o);
        vtype(p, a[0]);
        break;
    case IR_PROTON_RECORD:
        fprintf(o, " %s ", op->i[0] ? "start" : "end");
        pstring(o, op->s ? op->s : "");
        break;
    default:
        print_smt(p, op);
        break;
    }
}

static void
print_op(Printer *p, IrOp *op, int ind)
{
    FILE *o = p->out;
    indent(p, ind);
    name_results(p, op);
    if (op->nres == 1)
        pval(p, op->res[0]);
    if (op->nres > 1) { /* MLIR's group syntax: "%N:k", uses are "%N#i" */
        const char *nm = p->names[op->res[0]];
        fprintf(o, "%%%.*s:%u", (int)strcspn(nm, "#"), nm, op->nres);
    }
    if (op->nres)
        fputs(" = ", o);
    if (op->opc == IR_REDUCE || op->opc == IR_SCAN) {
        print_reduce_scan(p, op, ind);
        ploc(p, op->loc);
        fputc('\n', o);
        return;
    }
    fputs(ir_opc_name[op->opc], o);
    IrRef *a = op->args;
    switch (ir_opc_fmt[op->opc]) {
    case IR_FMT_BIN:
    case IR_FMT_UN:
    case IR_FMT_TERN:
        fputc(' ', o);
        pvals(p, a, op->nargs);
        fputs(" : ", o);
        vtype(p, op->res[0]);
        break;
    case IR_FMT_CAST:
        fputc(' ', o);
        pval(p, a[0]);
        fputs(" : ", o);
        vtype(p, a[0]);
        fputs(strncmp(ir_opc_name[op->opc], "tt.", 3) == 0 ? " -> " : " to ", o);
        vtype(p, op->res[0]);
        break;
    case IR_FMT_CMP:
        fprintf(o, " %s, ", op->opc == IR_CMPI ? enum_name(ir_cmpi_name, IR_CMPI_COUNT, op->i[0])
                                               : enum_name(ir_cmpf_name, IR_CMPF_COUNT, op->i[0]));
        pvals(p, a, 2);
        fputs(" : ", o);
        vtype(p, a[0]);
        break;
    default:
        print_custom(p, op, ind);
        break;
    }
    ploc(p, op->loc);
    fputc('\n', o);
}

static void
print_block_ops(Printer *p, IrBlock *b, int ind)
{
    for (IrOp *op = b->first; op; op = op->next) {
        /* MLIR elides the empty scf.yield of scf.for / scf.if; the parser adds it back */
        if (op->opc == IR_YIELD && !op->nargs && !op->next && b->parent &&
            (b->parent->opc == IR_FOR || b->parent->opc == IR_IF))
            continue;
        print_op(p, op, ind);
    }
}

/* ---- api ------------------------------------------------------------------------------------ */

static void
print_signature(Printer *p, IrFunc *f)
{
    FILE *o = p->out;
    fprintf(o, "tt.func %s @%s(", f->is_public ? "public" : "private", f->name);
    name_block_args(p, f->body, 0);
    for (uint32_t i = 0; i < f->body->nargs; i++) {
        if (i)
            fputs(", ", o);
        pval(p, f->body->args[i]);
        fputs(": ", o);
        vtype(p, f->body->args[i]);
        if (f->argattrs && f->argattrs[i].divisibility)
            fprintf(o, " {tt.divisibility = %d : i32}", f->argattrs[i].divisibility);
    }
    fputc(')', o);
    if (f->nrets) {
        fputs(" -> ", o);
        if (f->nrets > 1)
            fputc('(', o);
        for (uint32_t i = 0; i < f->nrets; i++) {
            if (i)
                fputs(", ", o);
            ptype(p, f->rettypes[i]);
        }
        if (f->nrets > 1)
            fputc(')', o);
    }
}

static void
print_func_ind(FILE *out, IrFunc *f, unsigned flags, int ind)
{
    Printer p = {.out = out, .f = f, .m = f->mod, .flags = flags};
    p.names = calloc(f->nvals ? f->nvals : 1, sizeof(char *));
    if (!p.names)
        ir_die("out of memory");
    indent(&p, ind);
    print_signature(&p, f);
    fputs(" {\n", out);
    print_block_ops(&p, f->body, ind + 2);
    indent(&p, ind);
    fputc('}', out);
    ploc(&p, f->loc);
    fputc('\n', out);
    for (uint32_t i = 0; i < f->nvals; i++)
        free(p.names[i]);
    for (uint32_t i = 0; i < p.nbases; i++)
        free(p.bases[i]);
    free(p.names);
    free(p.bases);
    free(p.counts);
}

void ir_print_func(FILE *out, IrFunc *f, unsigned flags) { print_func_ind(out, f, flags, 0); }

void
ir_print_module(FILE *out, IrModule *m, unsigned flags)
{
    fputs("module {\n", out);
    for (IrFunc *f = m->funcs; f; f = f->next)
        print_func_ind(out, f, flags, 2);
    fputs("}\n", out);
}
