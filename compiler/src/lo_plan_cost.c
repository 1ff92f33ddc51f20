/*
 * lo_plan_cost.c — the static cost of a kernel: bytes loaded and stored and
 * flops by float width, per program instance.
 *
 * The plan walk adds each memory op and each floating-point op to the cost cell
 * of its innermost loop (cell 0: outside every loop). A loop's trip count is an
 * expression of its bounds (AExprs over kernel arguments, program ids and other
 * scalars), so the total is sum over cells of cell * product of the trip counts
 * of the loops around it. lp_cost multiplies the constant trip counts (the
 * others count once and clear 'exact'); lp_cost_eval evaluates every trip count
 * from the values a launch gives its leaves.
 */
#include "lo_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static LpCostCell *
cell(LoPlan *p, int loop)
{
    if (loop + 1 >= p->ncells) {
        int n = loop + 2;
        p->cells = realloc(p->cells, sizeof *p->cells * (size_t)n);
        if (!p->cells)
            ir_die("out of memory");
        memset(p->cells + p->ncells, 0, sizeof *p->cells * (size_t)(n - p->ncells));
        p->ncells = n;
    }
    return &p->cells[loop + 1];
}

/* The scope cell of (loop, the scopes open now), or NULL outside every scope. */
static LpCostCell *
scell(LoPlan *p, int loop)
{
    if (!p->open_scopes)
        return NULL;
    for (int i = 0; i < p->nscells; i++)
        if (p->scells[i].loop == loop && p->scells[i].scopes == p->open_scopes)
            return &p->scells[i].c;
    if (p->nscells == p->capscells) {
        p->capscells = p->capscells ? p->capscells * 2 : 8;
        p->scells = realloc(p->scells, sizeof *p->scells * (size_t)p->capscells);
        if (!p->scells)
            ir_die("out of memory");
    }
    LpScopeCell *c = &p->scells[p->nscells++];
    memset(c, 0, sizeof *c);
    c->loop = loop;
    c->scopes = p->open_scopes;
    return &c->c;
}

/* Adds bytes/flops to loop's cell and to its scope cell. */
static void
charge(LoPlan *p, int loop, uint64_t loaded, uint64_t stored, int width, double flops)
{
    LpCostCell *c[2] = {cell(p, loop), scell(p, loop)};
    for (int i = 0; i < 2 && c[i]; i++) {
        c[i]->bytes_loaded += loaded;
        c[i]->bytes_stored += stored;
        c[i]->flops[width] += flops;
    }
}

void
lp_cost_init(LoPlan *p)
{
    (void)cell(p, -1);
}

static int
width_class(int dtype)
{
    return dtype == IR_F64 ? 2 : dtype == IR_F32 ? 1 : 0;
}

void
lp_cost_add_mem(LoPlan *p, const IrOp *op, bool is_store, int loop)
{
    IrRef v = is_store ? op->args[1] : op->res[0];
    IrType t = p->f->vals[v].type;
    int d = ir_type_dtype(p->m, t);
    uint64_t bytes = (uint64_t)ir_type_numel(p->m, t) * (uint64_t)(((d >= 0 ? ir_dtype_bits((IrDtype)d) : 64) + 7) / 8);
    charge(p, loop, is_store ? 0 : bytes, is_store ? bytes : 0, 0, 0);
}

void
lp_cost_add_flops(LoPlan *p, const IrOp *op, int loop)
{
    if (!op->nres || op->opc == IR_CONST)
        return;
    IrType t = p->f->vals[op->res[0]].type;
    int d = ir_type_dtype(p->m, t);
    if (d < 0 || !ir_dtype_is_float((IrDtype)d) || op->opc == IR_SELECT)
        return;
    if (op->opc == IR_EXTF || op->opc == IR_TRUNCF || op->opc == IR_SITOFP || op->opc == IR_UITOFP)
        return;
    charge(p, loop, 0, 0, width_class(d), (double)ir_type_numel(p->m, t) * (op->opc == IR_FMA ? 2.0 : 1.0));
}

/* A reduction or scan: its combine body runs once per element it folds in, so
 * (input elements - result elements) times for a reduction and (length - 1) per
 * line for a scan; each float op of the body counts as elementwise ops do. */
void
lp_cost_add_combine(LoPlan *p, const IrOp *op, int loop)
{
    IrType in = p->f->vals[op->args[0]].type, out = p->f->vals[op->res[0]].type;
    int64_t n = ir_type_numel(p->m, in);
    int64_t apps = op->opc == IR_REDUCE ? n - (ir_type_is_tensor(p->m, out) ? ir_type_numel(p->m, out) : 1)
                                        : n - n / ir_type_shape(p->m, in)[op->i[0]];
    if (!op->nregs || apps <= 0)
        return;
    for (const IrOp *o = op->regs[0]->first; o; o = o->next) {
        if (!o->nres || o->opc == IR_CONST || o->opc == IR_SELECT || o->opc == IR_EXTF || o->opc == IR_TRUNCF ||
            o->opc == IR_SITOFP || o->opc == IR_UITOFP)
            continue;
        int d = ir_type_dtype(p->m, p->f->vals[o->res[0]].type);
        if (d >= 0 && ir_dtype_is_float((IrDtype)d))
            charge(p, loop, 0, 0, width_class(d), (double)apps * (o->opc == IR_FMA ? 2.0 : 1.0));
    }
}

void
lp_cost_add_dot(LoPlan *p, const IrOp *op, int loop)
{
    int rank = ir_type_rank(p->m, p->f->vals[op->res[0]].type);
    const int64_t *as = ir_type_shape(p->m, p->f->vals[op->args[0]].type);
    const int64_t *rs = ir_type_shape(p->m, p->f->vals[op->res[0]].type);
    double fl = 2.0 * (double)as[rank - 1] * (double)rs[rank - 2] * (double)rs[rank - 1] * (rank == 3 ? (double)rs[0] : 1.0);
    charge(p, loop, 0, 0, width_class(ir_type_dtype(p->m, p->f->vals[op->args[0]].type)), fl);
}

int64_t
lp_loop_trips(const LpLoop *l, AxLeafFn val, void *user)
{
    int64_t lb, ub, st;
    if (!l->lb || !ax_eval(l->lb, val, user, &lb) || !ax_eval(l->ub, val, user, &ub) ||
        !ax_eval(l->step, val, user, &st) || st <= 0)
        return -1;
    if (ub <= lb)
        return 0;
    return (int64_t)(((uint64_t)ub - (uint64_t)lb + (uint64_t)st - 1) / (uint64_t)st);
}

const LpCostCell *
lp_cost_cell(const LoPlan *p, int l)
{
    return l + 1 < p->ncells ? &p->cells[l + 1] : NULL;
}

/* Sums the cells; trips(l) gives loop l's count (-1: unknown, counted once). */
static int
total(const LoPlan *p, AxLeafFn val, void *user, IrCost *out)
{
    int known = 1;
    double bl = 0, bs = 0;
    double fl[3] = {0, 0, 0};
    for (int c = 0; c < p->ncells; c++) {
        double mult = 1.0;
        for (int l = c - 1; l >= 0; l = p->loops[l].parent) {
            int64_t t = p->loops[l].trips;
            if (t < 0 && val)
                t = lp_loop_trips(&p->loops[l], val, user);
            if (t < 0)
                known = 0;
            else
                mult *= (double)t;
        }
        const LpCostCell *k = &p->cells[c];
        bl += (double)k->bytes_loaded * mult;
        bs += (double)k->bytes_stored * mult;
        for (int i = 0; i < 3; i++)
            fl[i] += k->flops[i] * mult;
    }
    out->bytes_loaded = (uint64_t)bl;
    out->bytes_stored = (uint64_t)bs;
    memcpy(out->flops, fl, sizeof fl);
    out->exact = known;
    return known ? 0 : -1;
}

/* The parts of IrCost that do not depend on trip counts. */
static void
fixed_parts(const LoPlan *p, IrCost *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < p->nmems; i++)
        out->atomics += p->mems[i].op->opc == IR_ATOMIC_RMW || p->mems[i].op->opc == IR_ATOMIC_CAS;
    out->nscopes = p->nscopes;
    for (int i = 0; i < p->nscopes; i++)
        out->scope_names[i] = p->scope_names[i];
}

void
lp_cost(const LoPlan *p, IrCost *out)
{
    fixed_parts(p, out);
    total(p, NULL, NULL, out);
}

int
lp_cost_eval(const LoPlan *p, AxLeafFn val, void *user, IrCost *out)
{
    fixed_parts(p, out);
    return total(p, val, user, out);
}

/* ---- the trip-count program the runtime evaluates at launch ---- */

typedef struct Prog {
    char *buf;
    size_t cap, n;
    int ok;
} Prog;

static void
put(Prog *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(Prog *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(g->buf + g->n, g->n < g->cap ? g->cap - g->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0 || g->n + (size_t)k >= g->cap)
        g->ok = 0, g->n = g->cap;
    else
        g->n += (size_t)k;
}

/* A scalar IR value in reverse Polish: kernel parameters, program ids, grid sizes,
 * constants and integer arithmetic on them; anything else clears g->ok. */
static void
put_val(Prog *g, const LoPlan *p, IrRef v, int depth)
{
    const IrVal *val = &p->f->vals[v];
    const IrOp *d = val->def;
    static const struct { int opc; char sym; } bin[] = {
        {IR_ADDI, '+'}, {IR_SUBI, '-'}, {IR_MULI, '*'}, {IR_DIVSI, '/'}, {IR_REMSI, '%'}, {IR_DIVUI, 'U'},
        {IR_REMUI, 'R'}, {IR_MINSI, 'm'}, {IR_MAXSI, 'M'}};
    if (depth > 32 || ir_type_is_tensor(p->m, val->type)) {
        g->ok = 0;
        return;
    }
    if (!d) {
        int dt = ir_type_dtype(p->m, val->type);
        char k = dt == IR_I32 ? 's' : dt == IR_U32 ? 'u' : dt == IR_I1 ? 'b' : dt == IR_I64 || dt == IR_U64 ? 'q' : 0;
        if (val->blk != p->f->body || !k)
            g->ok = 0; /* a loop-carried value or induction variable */
        else
            put(g, " a%u:%c", val->idx, k);
        return;
    }
    switch (d->opc) {
    case IR_CONST: put(g, " #%lld", (long long)d->i[0]); return;
    case IR_GET_PROGRAM_ID: put(g, " p%d", (int)d->i[0]); return;
    case IR_GET_NUM_PROGRAMS: put(g, " n%d", (int)d->i[0]); return;
    case IR_EXTSI:
    case IR_EXTUI: put_val(g, p, d->args[0], depth + 1); return;
    default: break;
    }
    for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
        if (bin[i].opc == d->opc) {
            put_val(g, p, d->args[0], depth + 1);
            put_val(g, p, d->args[1], depth + 1);
            put(g, " %c", bin[i].sym);
            return;
        }
    g->ok = 0;
}

static void
put_expr(Prog *g, const LoPlan *p, const AExpr *e, int depth)
{
    if (depth > 64) {
        g->ok = 0;
        return;
    }
    switch (e->k) {
    case AK_CONST: put(g, " #%lld", (long long)e->c); return;
    case AK_VAL: put_val(g, p, e->v, 0); return;
    case AK_CARRY: g->ok = 0; return;
    default: break;
    }
    put_expr(g, p, e->a, depth + 1);
    put_expr(g, p, e->b, depth + 1);
    put(g, " %c", e->k == AK_ADD ? '+' : e->k == AK_MUL ? '*' : e->k == AK_MIN ? 'm' : 'M');
}

/* One loop: "L parent lb , ub , step ;" or "L parent ? ;" when a bound is not
 * computable from the launch (while loops, bounds read from memory or carried). */
static void
put_loop(Prog *g, const LoPlan *p, const LpLoop *l)
{
    size_t mark = g->n;
    put(g, "L %d", l->parent);
    if (l->lb) {
        Prog t = *g;
        put_expr(&t, p, l->lb, 0);
        put(&t, " ,");
        put_expr(&t, p, l->ub, 0);
        put(&t, " ,");
        put_expr(&t, p, l->step, 0);
        if (t.ok && t.n < t.cap) {
            *g = t;
            put(g, " ;\n");
            return;
        }
        g->n = mark;
        put(g, "L %d", l->parent);
    }
    put(g, " ? ;\n");
}

size_t
lp_cost_program(const LoPlan *p, char *buf, size_t cap)
{
    Prog g = {buf, cap, 0, 1};
    bool dynamic = false;
    for (int l = 0; l < p->nloops; l++)
        dynamic |= p->loops[l].trips < 0;
    if ((!dynamic && !p->nscells) || !cap) { /* constant trips, no scopes: the static cost says it all */
        if (cap)
            buf[0] = 0;
        return 0;
    }
    put(&g, "cost 1 %d %d %d\n", p->nloops, p->ncells, p->nscells);
    for (int l = 0; l < p->nloops; l++)
        put_loop(&g, p, &p->loops[l]);
    for (int c = 0; c < p->ncells; c++) {
        const LpCostCell *k = &p->cells[c];
        put(&g, "C %d %llu %llu %.17g %.17g %.17g ;\n", c - 1, (unsigned long long)k->bytes_loaded,
            (unsigned long long)k->bytes_stored, k->flops[0], k->flops[1], k->flops[2]);
    }
    for (int c = 0; c < p->nscells; c++) {
        const LpScopeCell *k = &p->scells[c];
        put(&g, "S %d %llx %llu %llu %.17g %.17g %.17g ;\n", k->loop, (unsigned long long)k->scopes,
            (unsigned long long)k->c.bytes_loaded, (unsigned long long)k->c.bytes_stored, k->c.flops[0],
            k->c.flops[1], k->c.flops[2]);
    }
    if (!g.ok) {
        buf[0] = 0;
        return 0;
    }
    return g.n;
}
