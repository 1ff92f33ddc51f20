/*
 * ir_layout.c — layout canonicalization: tt.trans and tt.reshape (the data
 * movement a pack or unpack of smt.view is made of) are folded and sunk, so that
 * packed tiles cost nothing where they only travel between ops.
 *
 * Requires: nothing. Breaks: uses. Rules, applied once per call (the caller
 * iterates with ir_canonicalize to a fixpoint):
 *   trans(trans(x, p), q)          -> trans(x, p∘q), and x when that is the identity;
 *   reshape(reshape(x))            -> reshape(x)            (neither reorders);
 *   op(L(a), L(b), splat...)       -> L(op(a, b, splat'))   for an element-wise op whose
 *                                     tile operands are the same layout op L (the same
 *                                     permutation, or reshapes of one source shape);
 *   scf.for carrying v with init L(x) (or a splat) and yield L(y)
 *                                  -> the loop carries x's layout, L is applied to the
 *                                     block argument and to the result.
 * With these, unpack(pack(x)) is x, `acc += smt.dot(a, b)` on a packed accumulator
 * becomes a plain accumulation (and, by ir_canon.c, a dot with an accumulator).
 */
#include "ir_int.h"

#include <string.h>

typedef struct Layout {
    IrFunc *f;
    IrModule *m;
    bool changed;
} Layout;

static IrOp *def_of(Layout *l, IrRef r) { return l->f->vals[r].def; }
static IrType ty(Layout *l, IrRef r) { return l->f->vals[r].type; }

static bool
is_tile(Layout *l, IrRef r)
{
    return ir_type_is_tensor(l->m, ty(l, r));
}

/* x's type with the element type of t. */
static IrType
with_elem(Layout *l, IrType x, IrType t)
{
    return ir_type_tensor(l->m, ir_type_elem(l->m, t), ir_type_rank(l->m, x), ir_type_shape(l->m, x));
}

static IrOp *
new_op(Layout *l, IrOp *pos, IrOpc opc, IrRef a, IrType t)
{
    IrOp *op = ir_op_create(l->f, opc, &a, 1, &t, 1, 0);
    op->loc = pos->loc;
    ir_op_insert_before(pos, op);
    return op;
}

/* A copy of layout op L (trans or reshape) applied to v, inserted before pos. */
static IrRef
apply_like(Layout *l, IrOp *like, IrOp *pos, IrRef v, IrType elem_of)
{
    IrOp *op = new_op(l, pos, (IrOpc)like->opc, v, with_elem(l, ty(l, like->res[0]), elem_of));
    op->i[0] = like->i[0];
    if (like->nints)
        ir_op_set_ints(l->f, op, like->ints, like->nints);
    return op->res[0];
}

/* Do layout ops a and b do the same thing (same op, same permutation, same source
 * and result shapes)? */
static bool
same_layout(Layout *l, const IrOp *a, const IrOp *b)
{
    if (a->opc != b->opc || a->i[0] != b->i[0] || a->nints != b->nints)
        return false;
    if (a->nints && memcmp(a->ints, b->ints, sizeof(int64_t) * a->nints))
        return false;
    IrType sa = ty(l, a->args[0]), sb = ty(l, b->args[0]);
    return ir_type_rank(l->m, sa) == ir_type_rank(l->m, sb) &&
           !memcmp(ir_type_shape(l->m, sa), ir_type_shape(l->m, sb), sizeof(int64_t) * ir_type_rank(l->m, sa)) &&
           !memcmp(ir_type_shape(l->m, ty(l, a->res[0])), ir_type_shape(l->m, ty(l, b->res[0])),
                   sizeof(int64_t) * ir_type_rank(l->m, ty(l, a->res[0])));
}

static bool
is_layout(const IrOp *d)
{
    return d && (d->opc == IR_TRANS || (d->opc == IR_RESHAPE && !d->i[0]));
}

static bool
is_splat(const IrOp *d)
{
    return d && (d->opc == IR_SPLAT || d->opc == IR_CONST);
}

/* The operand of an element-wise op re-expressed in the layout's source shape. */
static IrRef
source_operand(Layout *l, IrOp *pos, IrRef v, IrType src_shape)
{
    IrOp *d = def_of(l, v);
    if (is_layout(d))
        return d->args[0];
    IrType t = with_elem(l, src_shape, ty(l, v));
    if (d->opc == IR_CONST) {
        IrOp *k = ir_op_create(l->f, IR_CONST, NULL, 0, &t, 1, 0);
        k->loc = pos->loc;
        k->i[0] = d->i[0];
        k->f = d->f;
        ir_op_insert_before(pos, k);
        return k->res[0];
    }
    return new_op(l, pos, IR_SPLAT, d->args[0], t)->res[0];
}

static void
visit(IrOp *op, void *user)
{
    Layout *l = user;
    IrOp *d;
    if (op->opc == IR_TRANS && (d = def_of(l, op->args[0])) && d->opc == IR_TRANS) {
        int r = (int)op->nints;
        int64_t p[IR_MAX_RANK];
        bool ident = true;
        for (int i = 0; i < r; i++) {
            p[i] = d->ints[op->ints[i]];
            ident &= p[i] == i;
        }
        if (ident) {
            ir_replace_uses(l->f, op->res[0], d->args[0]);
            ir_op_unlink(op);
        } else {
            op->args[0] = d->args[0];
            ir_op_set_ints(l->f, op, p, (uint32_t)r);
        }
        l->changed = true;
        return;
    }
    if (op->opc == IR_RESHAPE && !op->i[0] && (d = def_of(l, op->args[0])) && d->opc == IR_RESHAPE && !d->i[0]) {
        op->args[0] = d->args[0];
        l->changed = true;
        return;
    }
    if (!(ir_opc_flags[op->opc] & IR_F_ELEM) || !(ir_opc_flags[op->opc] & IR_F_PURE) || op->nres != 1 ||
        !op->nargs || !is_tile(l, op->res[0]) || op->opc == IR_CONST)
        return;
    IrOp *like = NULL;
    for (uint32_t i = 0; i < op->nargs; i++) {
        d = def_of(l, op->args[i]);
        if (is_layout(d)) {
            if (like && !same_layout(l, like, d))
                return;
            like = d;
        } else if (!is_splat(d)) {
            return;
        }
    }
    if (!like)
        return;
    IrType src = ty(l, like->args[0]);
    IrRef args[3];
    for (uint32_t i = 0; i < op->nargs; i++)
        args[i] = source_operand(l, op, op->args[i], src);
    IrType rt = with_elem(l, src, ty(l, op->res[0]));
    IrOp *n = ir_op_create(l->f, (IrOpc)op->opc, args, op->nargs, &rt, 1, 0);
    n->loc = op->loc;
    memcpy(n->i, op->i, sizeof n->i);
    n->f = op->f;
    n->s = op->s;
    if (op->nints)
        ir_op_set_ints(l->f, n, op->ints, op->nints);
    ir_op_insert_before(op, n);
    ir_replace_uses(l->f, op->res[0], apply_like(l, like, op, n->res[0], ty(l, op->res[0])));
    ir_op_unlink(op);
    l->changed = true;
}

/* Replaces every use of v (but in 'keep') by r. */
static void
redirect(Layout *l, IrRef v, IrRef r, IrOp *keep)
{
    ir_replace_uses(l->f, v, r);
    keep->args[0] = v;
}

/* The layout L of an element-wise yield that combines the block argument 'arg'
 * with L-values and splats only (acc + pack(dot)): once arg is L(arg'), the op sinks
 * below L. NULL when the yield is not such an op. */
static IrOp *
sinkable_yield(Layout *l, IrOp *y, IrRef arg)
{
    if (!y || !(ir_opc_flags[y->opc] & IR_F_ELEM) || !(ir_opc_flags[y->opc] & IR_F_PURE) || y->nres != 1)
        return NULL;
    IrOp *like = NULL;
    bool uses_arg = false;
    for (uint32_t i = 0; i < y->nargs; i++) {
        IrOp *d = def_of(l, y->args[i]);
        if (y->args[i] == arg) {
            uses_arg = true;
        } else if (is_layout(d)) {
            if (like && !same_layout(l, like, d))
                return NULL;
            like = d;
        } else if (!is_splat(d)) {
            return NULL;
        }
    }
    return uses_arg ? like : NULL;
}

/* The inverse of layout op L applied to v (type: L's source), before pos. */
static IrRef
apply_inverse(Layout *l, IrOp *like, IrOp *pos, IrRef v)
{
    IrType src = ty(l, like->args[0]);
    IrOp *op = new_op(l, pos, (IrOpc)like->opc, v, with_elem(l, src, ty(l, v)));
    if (like->opc == IR_TRANS) {
        int64_t q[IR_MAX_RANK];
        for (uint32_t i = 0; i < like->nints; i++)
            q[like->ints[i]] = (int64_t)i;
        ir_op_set_ints(l->f, op, q, like->nints);
    }
    return op->res[0];
}

/* A loop-carried value whose init is L(x) or a splat, and whose yield is L(y) or an
 * element-wise op of the carried value with L-values, is carried in L's source
 * layout. */
static void
carry_loop(Layout *l, IrOp *loop)
{
    IrBlock *body = loop->regs[0];
    IrOp *yield = body->last;
    if (!yield || yield->opc != IR_YIELD)
        return;
    for (uint32_t i = 0; i + 3 < loop->nargs; i++) {
        IrRef init = loop->args[3 + i], arg = body->args[1 + i], res = loop->res[i];
        IrOp *yd = def_of(l, yield->args[i]), *id = def_of(l, init);
        IrOp *like = is_layout(yd) && yd->parent == body ? yd : sinkable_yield(l, yd, arg);
        if (!like || (yd && yd->parent != body))
            continue;
        IrType src = ty(l, like->args[0]);
        IrRef x;
        if (is_layout(id) && same_layout(l, id, like))
            x = id->args[0];
        else if (is_splat(id))
            x = source_operand(l, loop, init, src);
        else
            continue;
        if (ty(l, x) != with_elem(l, src, ty(l, init)))
            continue;
        loop->args[3 + i] = x;
        yield->args[i] = like == yd ? yd->args[0] : apply_inverse(l, like, yield, yield->args[i]);
        src = ty(l, x);
        /* the body and the code after the loop see the old layout through L */
        IrType old = l->f->vals[res].type;
        l->f->vals[arg].type = src;
        l->f->vals[res].type = src;
        IrOp *in = ir_op_create(l->f, (IrOpc)like->opc, &arg, 1, &old, 1, 0);
        in->loc = loop->loc;
        in->i[0] = like->i[0];
        if (like->nints)
            ir_op_set_ints(l->f, in, like->ints, like->nints);
        if (body->first)
            ir_op_insert_before(body->first, in);
        else
            ir_block_append(body, in);
        redirect(l, arg, in->res[0], in);
        IrOp *out = ir_op_create(l->f, (IrOpc)like->opc, &res, 1, &old, 1, 0);
        out->loc = loop->loc;
        out->i[0] = like->i[0];
        if (like->nints)
            ir_op_set_ints(l->f, out, like->ints, like->nints);
        ir_op_insert_after(loop, out);
        redirect(l, res, out->res[0], out);
        l->changed = true;
    }
}

static void
visit_loops(IrOp *op, void *user)
{
    if (op->opc == IR_FOR)
        carry_loop(user, op);
}

bool
ir_layout(IrFunc *f)
{
    Layout l = {.f = f, .m = f->mod};
    ir_walk(f->body, visit, &l);
    ir_walk(f->body, visit_loops, &l);
    return l.changed;
}
