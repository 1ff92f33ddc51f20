/*
 * ir_dce.c — dead-code elimination on tile IR.
 *
 * Requires: nothing. Provides: uses (IrVal.nuse is exact afterwards).
 * Removes ops whose results are all unused and that have no effects: pure ops,
 * non-volatile loads, and scf.for / scf.if whose regions contain only such ops (scf.for always
 * terminates; scf.while may not, so it stays). Also drops scf.for loop-carried
 * values that nothing observes (liveness over the loop body, as MLIR's
 * ForOp dead-iter-arg folding). Blocks are swept backwards so that chains die in
 * one sweep; sweeps repeat to a fixpoint. Uses IrVal.aux as scratch (reset).
 */
#include "ir_int.h"

#include <string.h>

static bool effect_free(IrBlock *b);

/* An op that may go when its results are unused. */
static bool
removable(const IrOp *op)
{
    uint8_t fl = ir_opc_flags[op->opc];
    if (fl & IR_F_TERM)
        return false;
    if (op->opc == IR_LOAD) /* reads only; a volatile load must happen */
        return !op->i[3];
    if (op->opc == IR_FOR || op->opc == IR_IF || (fl & IR_F_PURE)) {
        for (uint32_t r = 0; r < op->nregs; r++)
            if (!effect_free(op->regs[r]))
                return false;
        return true;
    }
    return false;
}

static bool
effect_free(IrBlock *b)
{
    for (IrOp *op = b->first; op; op = op->next)
        if (!(ir_opc_flags[op->opc] & IR_F_TERM) && !removable(op))
            return false;
    return true;
}

static void
unuse(IrOp *op, void *user)
{
    IrFunc *f = user;
    for (uint32_t i = 0; i < op->nargs; i++)
        f->vals[op->args[i]].nuse--;
}

static void
remove_op(IrFunc *f, IrOp *op)
{
    unuse(op, f);
    for (uint32_t r = 0; r < op->nregs; r++)
        ir_walk(op->regs[r], unuse, f);
    ir_op_unlink(op);
}

static bool
unused(IrFunc *f, const IrOp *op)
{
    for (uint32_t i = 0; i < op->nres; i++)
        if (f->vals[op->res[i]].nuse)
            return false;
    return true;
}

/* Marks (IrVal.aux) the operands of the ops of b that are live: ops with
 * effects, ops whose results are marked, and the terminator of a live region
 * op. Returns whether a mark was added. */
static bool
mark_live(IrFunc *f, IrBlock *b, bool region_live)
{
    bool changed = false;
    for (IrOp *op = b->last; op; op = op->prev) {
        bool live = (ir_opc_flags[op->opc] & IR_F_TERM) ? region_live : !removable(op);
        for (uint32_t i = 0; i < op->nres && !live; i++)
            live = f->vals[op->res[i]].aux;
        for (uint32_t i = 0; live && i < op->nargs; i++)
            if (!f->vals[op->args[i]].aux) {
                f->vals[op->args[i]].aux = 1;
                changed = true;
            }
        for (uint32_t r = 0; r < op->nregs; r++)
            changed |= mark_live(f, op->regs[r], live);
    }
    return changed;
}

static void
clear_aux(IrFunc *f)
{
    for (uint32_t i = 0; i < f->nvals; i++)
        f->vals[i].aux = 0;
}

/* Drops the loop-carried values of an scf.for that nothing observes: the result
 * is unused and the block argument only feeds (through effect-free ops) its own
 * next value. Liveness starts from the used results and the body's effects and
 * grows to a fixpoint. Returns whether anything was dropped. */
static bool
prune_for(IrFunc *f, IrOp *op)
{
    IrBlock *b = op->regs[0];
    IrOp *y = b->last;
    bool live[256], any = false, changed;
    if (!y || y->opc != IR_YIELD || y->nargs != op->nres || b->nargs != op->nres + 1 || op->nres > 256)
        return false;
    for (uint32_t i = 0; i < op->nres; i++)
        live[i] = f->vals[op->res[i]].nuse != 0;
    do {
        clear_aux(f);
        for (uint32_t i = 0; i < op->nres; i++)
            if (live[i])
                f->vals[y->args[i]].aux = 1;
        while (mark_live(f, b, false))
            ;
        changed = false;
        for (uint32_t i = 0; i < op->nres; i++)
            if (!live[i] && f->vals[b->args[i + 1]].aux)
                live[i] = changed = true;
    } while (changed);
    clear_aux(f);
    for (uint32_t i = op->nres; i-- > 0;) {
        if (live[i])
            continue;
        /* the dead ops that still use block argument i+1 go in the sweep that follows */
        f->vals[y->args[i]].nuse--;
        f->vals[op->args[3 + i]].nuse--;
        memmove(&y->args[i], &y->args[i + 1], sizeof(IrRef) * (y->nargs - i - 1));
        memmove(&op->args[3 + i], &op->args[4 + i], sizeof(IrRef) * (op->nargs - 4 - i));
        memmove(&op->res[i], &op->res[i + 1], sizeof(IrRef) * (op->nres - i - 1));
        memmove(&b->args[i + 1], &b->args[i + 2], sizeof(IrRef) * (b->nargs - i - 2));
        y->nargs--;
        op->nargs--;
        op->nres--;
        b->nargs--;
        any = true;
    }
    for (uint32_t i = 0; i < op->nres; i++)
        f->vals[op->res[i]].idx = i;
    for (uint32_t i = 0; i < b->nargs; i++)
        f->vals[b->args[i]].idx = i;
    return any;
}

static bool
sweep(IrFunc *f, IrBlock *b)
{
    bool changed = false;
    for (IrOp *op = b->last, *prev; op; op = prev) {
        prev = op->prev;
        if (removable(op) && unused(f, op)) {
            remove_op(f, op);
            changed = true;
            continue;
        }
        if (op->opc == IR_FOR && prune_for(f, op))
            changed = true;
        for (uint32_t r = 0; r < op->nregs; r++)
            changed |= sweep(f, op->regs[r]);
    }
    return changed;
}

void
ir_dce(IrFunc *f)
{
    ir_fill_uses(f);
    while (sweep(f, f->body))
        ;
}
