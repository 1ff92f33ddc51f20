/*
 * ir_accum.c — loop-carried accumulator tiles that are only reduced after the loop
 * become reduced (scalar) accumulators (ir_accum).
 *
 *   %acc = scf.for ... iter_args(%a = dense<c>) { ... %y = OP %a, %x; scf.yield %y }
 *   %s = tt.reduce(%acc) axis k { OP }
 * becomes
 *   %s = scf.for ... iter_args(%a = c') { ... %r = tt.reduce(%x) axis k { OP }
 *                                          %y = OP %a, %r; scf.yield %y }
 * when OP is associative and commutative (addf, addi, max/min in both NaN flavours),
 * the tile is used by nothing but that one reduce, and the block argument by
 * nothing but that one OP. The init is a splat constant whose reduction is known
 * without a loop: c itself for max/min, 0 for sums (c' = c then). The tile was a
 * tensor carried through memory by the bufferised loop (a stack round trip per
 * iteration); the reduced value is a register, and the in-loop reduce is the
 * vectorised one of lo_emit (several lane accumulators, one horizontal step per
 * iteration). Floating-point sums are reassociated, as a reduce already is.
 * Reduces with several operands (argmax/argmin carry indices) are left alone.
 * Requires: uses filled by the pass itself; run before dce (which drops the
 * unused tile constant).
 */
#include "ir_int.h"

/* The single op of a one-op combine region `^bb(%p, %q): %c = OP %p, %q; return %c`,
 * if OP is one of ours; NULL otherwise. */
static IrOpc
combine_op(const IrOp *red)
{
    if (red->nregs != 1)
        return IR_OPC_COUNT;
    const IrBlock *b = red->regs[0];
    const IrOp *c = b->first;
    if (b->nargs != 2 || !c || !c->next || c->next != b->last || c->next->opc != IR_REDUCE_RETURN ||
        c->nargs != 2 || c->nres != 1 || c->next->nargs != 1 || c->next->args[0] != c->res[0])
        return IR_OPC_COUNT;
    bool pq = c->args[0] == b->args[0] && c->args[1] == b->args[1];
    bool qp = c->args[0] == b->args[1] && c->args[1] == b->args[0];
    if (!pq && !qp)
        return IR_OPC_COUNT;
    switch (c->opc) {
    case IR_ADDF: case IR_ADDI: case IR_MAXIMUMF: case IR_MINIMUMF: case IR_MAXNUMF: case IR_MINNUMF:
        return (IrOpc)c->opc;
    default:
        return IR_OPC_COUNT;
    }
}

/* The reduce that is the only user of v (searched after the loop in its block). */
static IrOp *
sole_reduce(IrFunc *f, IrOp *loop, IrRef v)
{
    if (f->vals[v].nuse != 1)
        return NULL;
    for (IrOp *o = loop->next; o; o = o->next)
        for (uint32_t a = 0; a < o->nargs; a++)
            if (o->args[a] == v)
                return o->opc == IR_REDUCE && o->nargs == 1 && o->nres == 1 ? o : NULL;
    return NULL; /* used in a nested region */
}

/* The op of the loop body that uses block argument a (its only use). */
static IrOp *
sole_user(IrBlock *b, IrRef a)
{
    for (IrOp *o = b->first; o; o = o->next)
        for (uint32_t k = 0; k < o->nargs; k++)
            if (o->args[k] == a)
                return o;
    return NULL;
}

/* Rewrites carried value i of loop if it has the shape above. */
static bool
rewrite(IrFunc *f, IrOp *loop, uint32_t i)
{
    IrBlock *b = loop->regs[0];
    IrOp *y = b->last;
    IrRef res = loop->res[i], init = loop->args[3 + i], a = b->args[i + 1];
    if (!ir_type_is_tensor(f->mod, f->vals[res].type))
        return false;
    IrOp *red = sole_reduce(f, loop, res);
    IrOpc opc = red ? combine_op(red) : IR_OPC_COUNT;
    IrOp *k = f->vals[init].def;
    if (opc == IR_OPC_COUNT || !k || k->opc != IR_CONST || f->vals[a].nuse != 1)
        return false;
    if ((opc == IR_ADDF && k->f != 0.0) || (opc == IR_ADDI && k->i[0] != 0))
        return false;
    IrOp *acc = sole_user(b, a);
    if (!acc || acc->opc != opc || acc->nres != 1 || acc->args[0] == acc->args[1] ||
        f->vals[acc->res[0]].nuse != 1 || y->args[i] != acc->res[0])
        return false;
    IrRef x = acc->args[0] == a ? acc->args[1] : acc->args[0];
    IrType st = f->vals[red->res[0]].type;
    /* the new init: the constant at the reduced type, before the loop */
    IrOp *k2 = ir_op_create(f, IR_CONST, NULL, 0, &st, 1, 0);
    k2->i[0] = k->i[0];
    k2->f = k->f;
    k2->loc = k->loc;
    ir_op_insert_before(loop, k2);
    loop->args[3 + i] = k2->res[0];
    /* the reduce moves into the body, over the chunk */
    IrRef s = red->res[0];
    ir_replace_uses(f, s, res);
    ir_op_unlink(red);
    ir_op_insert_before(acc, red);
    red->args[0] = x;
    acc->args[0] = a;
    acc->args[1] = s;
    f->vals[acc->res[0]].type = st;
    f->vals[a].type = st;
    f->vals[res].type = st;
    return true;
}

/* Inner loops first; op->next is read after the rewrite, which moves the op that
 * followed the loop (its reduce) into the body. */
static void
walk(IrFunc *f, IrBlock *blk)
{
    for (IrOp *op = blk->first; op; op = op->next) {
        for (uint32_t r = 0; r < op->nregs; r++)
            walk(f, op->regs[r]);
        if (op->opc != IR_FOR || op->nregs != 1)
            continue;
        IrBlock *b = op->regs[0];
        if (!b->last || b->last->opc != IR_YIELD || b->last->nargs != op->nres ||
            b->nargs != op->nres + 1 || op->nargs != op->nres + 3)
            continue;
        for (uint32_t i = 0; i < op->nres; i++)
            if (rewrite(f, op, i))
                ir_fill_uses(f);
    }
}

void
ir_accum(IrFunc *f)
{
    ir_fill_uses(f);
    walk(f, f->body);
}
