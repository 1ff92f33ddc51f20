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
    LpCostCell *c = cell(p, loop);
    if (is_store)
        c->bytes_stored += bytes;
    else
        c->bytes_loaded += bytes;
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
    cell(p, loop)->flops[width_class(d)] += (double)ir_type_numel(p->m, t) * (op->opc == IR_FMA ? 2.0 : 1.0);
}

void
lp_cost_add_dot(LoPlan *p, const IrOp *op, int loop)
{
    int rank = ir_type_rank(p->m, p->f->vals[op->res[0]].type);
    const int64_t *as = ir_type_shape(p->m, p->f->vals[op->args[0]].type);
    const int64_t *rs = ir_type_shape(p->m, p->f->vals[op->res[0]].type);
    double fl = 2.0 * (double)as[rank - 1] * (double)rs[rank - 2] * (double)rs[rank - 1] * (rank == 3 ? (double)rs[0] : 1.0);
    cell(p, loop)->flops[width_class(ir_type_dtype(p->m, p->f->vals[op->args[0]].type))] += fl;
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
