/*
 * ir_ptrcarry.c — pointers the lowering cannot carry as pointers are carried as
 * addresses.
 *
 * Requires: nothing. Breaks: uses (IrVal.nuse is stale afterwards).
 * The lowering's plan (lo_plan.c) gives every pointer one form — a base plus affine or
 * wrapped offsets, or gathered offsets — and a pointer carried by a loop or produced by
 * an scf.if must keep one structure on every path. Two kinds cannot:
 *   - a pointer result of scf.if (scalar or tile; the branches may use other bases or
 *     forms): it becomes the i64 address(es), ptr_to_int in each yield and int_to_ptr
 *     after the if (a scalar address is a run-time base as fast as an argument; a tile
 *     of addresses reads element by element);
 *   - a pointer tile carried by scf.for whose offsets come from memory (a gather,
 *     `X + tl.load(Idx)`), or a tile of addresses: carried as the addresses the same way.
 * Block pointers are left alone.
 */
#include "ir_int.h"

typedef struct Carry {
    IrFunc *f;
    IrModule *m;
} Carry;

static IrType
ty(Carry *c, IrRef r)
{
    return ir_val_type(c->f, r);
}

/* A pointer or a tile of pointers, not a block pointer. */
static bool
plain_ptr(Carry *c, IrType t)
{
    IrType e = ir_type_is_tensor(c->m, t) ? ir_type_elem(c->m, t) : t;
    return ir_type_is_ptr(c->m, e) && !ir_type_is_tensor(c->m, ir_type_pointee(c->m, e));
}

/* The i64 type of t's shape. */
static IrType
addr_type(Carry *c, IrType t)
{
    IrType i64 = ir_type_scalar(c->m, IR_I64);
    if (!ir_type_is_tensor(c->m, t))
        return i64;
    return ir_type_tensor(c->m, i64, ir_type_rank(c->m, t), ir_type_shape(c->m, t));
}

/* True when r (an integer) is computed from a value loaded from memory. */
static bool
from_memory(Carry *c, IrRef r, int depth)
{
    IrOp *d = c->f->vals[r].def;
    if (!d || depth > 64)
        return false;
    if (d->opc == IR_LOAD)
        return true;
    if (d->nregs)
        return false;
    for (uint32_t i = 0; i < d->nargs; i++)
        if (from_memory(c, d->args[i], depth + 1))
            return true;
    return false;
}

/* True when the pointer tile p gathers: an offset from memory, or a tile of addresses. */
static bool
gathers(Carry *c, IrRef p, int depth)
{
    IrOp *d = c->f->vals[p].def;
    if (!d || depth > 64)
        return false;
    switch (d->opc) {
    case IR_ADDPTR:
        return from_memory(c, d->args[1], 0) || gathers(c, d->args[0], depth + 1);
    case IR_SPLAT: case IR_BROADCAST: case IR_EXPAND_DIMS: case IR_RESHAPE:
        return gathers(c, d->args[0], depth + 1);
    case IR_INT_TO_PTR:
        return ir_type_is_tensor(c->m, ty(c, d->args[0]));
    case IR_SELECT:
        return gathers(c, d->args[1], depth + 1) || gathers(c, d->args[2], depth + 1);
    default:
        return false;
    }
}

static IrOp *
cast(Carry *c, IrOpc opc, IrRef x, IrType t, IrLoc loc)
{
    IrOp *op = ir_op_create(c->f, opc, &x, 1, &t, 1, 0);
    op->loc = loc;
    return op;
}

/* v (a pointer) becomes its address: every use of v reads int_to_ptr(v) instead, the
 * cast placed by 'place' (after v's op, or first in v's block). */
static void
retype_as_address(Carry *c, IrRef v, IrOp *after, IrBlock *first_in, IrLoc loc)
{
    IrType pt = ty(c, v);
    c->f->vals[v].type = addr_type(c, pt);
    IrOp *back = cast(c, IR_INT_TO_PTR, v, pt, loc);
    if (after)
        ir_op_insert_after(after, back);
    else if (first_in->first)
        ir_op_insert_before(first_in->first, back);
    else
        ir_block_append(first_in, back);
    ir_replace_uses(c->f, v, back->res[0]);
    back->args[0] = v;
}

/* The i-th operand of op (a yield or the loop's init) replaced by its address. */
static void
operand_as_address(Carry *c, IrOp *op, uint32_t i)
{
    IrRef x = op->args[i];
    IrOp *to = cast(c, IR_PTR_TO_INT, x, addr_type(c, ty(c, x)), op->loc);
    ir_op_insert_before(op, to);
    op->args[i] = to->res[0];
}

static void
visit(IrOp *op, void *user)
{
    Carry *c = user;
    if (op->opc == IR_IF) {
        for (uint32_t i = 0; i < op->nres; i++) {
            if (!plain_ptr(c, ty(c, op->res[i])))
                continue;
            for (uint32_t r = 0; r < op->nregs; r++)
                if (op->regs[r]->last && op->regs[r]->last->opc == IR_YIELD)
                    operand_as_address(c, op->regs[r]->last, i);
            retype_as_address(c, op->res[i], op, NULL, op->loc);
        }
    } else if (op->opc == IR_FOR) {
        IrBlock *body = op->regs[0];
        for (uint32_t i = 0; i + 3 < op->nargs; i++) {
            IrRef init = op->args[3 + i];
            if (!plain_ptr(c, ty(c, init)) || !ir_type_is_tensor(c->m, ty(c, init)) || !gathers(c, init, 0))
                continue;
            operand_as_address(c, op, 3 + i);
            if (body->last && body->last->opc == IR_YIELD)
                operand_as_address(c, body->last, i);
            retype_as_address(c, body->args[1 + i], NULL, body, op->loc);
            retype_as_address(c, op->res[i], op, NULL, op->loc);
        }
    }
}

void
ir_ptr_carry(IrFunc *f)
{
    Carry c = {.f = f, .m = f->mod};
    ir_walk(f->body, visit, &c);
}
