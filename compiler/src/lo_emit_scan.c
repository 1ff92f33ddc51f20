/*
 * lo_emit_scan.c — scans (tl.cumsum, tl.cumprod, tl.associative_scan) and the
 * reductions the vectorised path does not take (several operands: argmax/argmin,
 * tuples; combine functions of more than one op), emitted as a sequential walk.
 *
 * Every operand tile is materialised; scf.for loops run over the dims other than the
 * axis, carrying the result tensors; an inner scf.for walks the axis carrying one
 * accumulator per operand and applies the combine region to (accumulator, element)
 * as scalar ops, in order, so any combine function (associative or not, commutative
 * or not) gets the left-to-right order upstream defines. A reverse scan walks from
 * the end: result[i] = combine(result[i+1], x[i]). Scans write each prefix into the
 * results; reductions insert the final accumulators. Correct first: the walk is
 * scalar (docs/compiler.md §2.6).
 */
#include "lo_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct Seq {
    IrOp *op;
    int n, rank, axis;
    bool scan, reverse;
    const int64_t *shape;
    unsigned x[16];        /* materialised operand tensors */
    int dt[16];            /* IR dtype of each operand's element */
    const char *xty[16];   /* operand tensor types */
    LoType oty[16];        /* result tensor types */
    const char *ety[16];   /* storage element of each operand ("i8" for bools) */
    const char *sty[16];   /* scalar element the combine region works on ("i1") */
} Seq;

static void
print_idx(LoBuf *o, const Seq *s, const unsigned *idx, bool skip_axis)
{
    lo_printf(o, "[");
    bool first = true;
    for (int d = 0; d < s->rank; d++) {
        if (skip_axis && d == s->axis)
            continue;
        lo_printf(o, "%s%%v%u", first ? "" : ", ", idx[d]);
        first = false;
    }
    lo_printf(o, "]");
}

/* Element k of operand tensors at idx, as the combine region's scalar. */
static unsigned
extract(LeCtx *c, const Seq *s, int k, const unsigned *idx)
{
    LoBuf *o = c->out;
    unsigned v = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = tensor.extract %%v%u", o->indent, "", v, s->x[k]);
    print_idx(o, s, idx, false);
    lo_printf(o, " : %s\n", s->xty[k]);
    return s->dt[k] == IR_I1 ? le_elem_cast(o, v, IR_I8, IR_I1) : v;
}

/* tensor.insert of scalar 'v' (text, e.g. "%v12" or "%v9#1") into tensor 't'. */
static unsigned
insert(LeCtx *c, const Seq *s, int k, const char *v, unsigned t, const unsigned *idx)
{
    LoBuf *o = c->out;
    char buf[32];
    if (s->dt[k] == IR_I1) { /* bools are stored as i8 */
        unsigned w = lo_emit(o, "arith.extui %s : i1 to i8", v);
        snprintf(buf, sizeof buf, "%%v%u", w);
        v = buf;
    }
    unsigned r = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = tensor.insert %s into %%v%u", o->indent, "", r, v, t);
    print_idx(o, s, idx, !s->scan);
    lo_printf(o, " : %s\n", le_ty(c, &s->oty[k]));
    return r;
}

/* The combine region applied to (acc[0..n), x[0..n)); results into res. */
static int
combine(LeCtx *c, const Seq *s, const unsigned *acc, const unsigned *x, unsigned *res)
{
    IrBlock *region = s->op->regs[0];
    unsigned *map = calloc(c->f->nvals, sizeof(unsigned));
    if (!map)
        ir_die("out of memory");
    for (int k = 0; k < s->n; k++) {
        map[region->args[k]] = acc[k];
        map[region->args[s->n + k]] = x[k];
    }
    int rc = -1;
    for (IrOp *op = region->first; op; op = op->next) {
        if (op->opc == IR_REDUCE_RETURN || op->opc == IR_SCAN_RETURN) {
            for (int k = 0; k < s->n; k++)
                res[k] = map[op->args[k]] ? map[op->args[k]] : le_scalar(c, op->args[k]);
            rc = 0;
            break;
        }
        if (op->nregs || op->nres != 1) {
            le_error(c, op->loc, "%s inside a combine function is not supported", ir_opc_name[op->opc]);
            break;
        }
        unsigned a[3] = {0};
        for (uint32_t i = 0; i < op->nargs && i < 3; i++)
            a[i] = map[op->args[i]] ? map[op->args[i]] : le_scalar(c, op->args[i]);
        map[op->res[0]] = le_scalar_op(c, op, a);
    }
    free(map);
    return rc;
}

/* The walk along the axis at the outer position idx; cur: the result tensors;
 * writes the updated result tensors to out (plain SSA names). */
static int
walk_axis(LeCtx *c, const Seq *s, unsigned *idx, const unsigned *cur, unsigned *out)
{
    LoBuf *o = c->out;
    int n = s->n;
    int64_t S = s->shape[s->axis];
    idx[s->axis] = le_const_index(c, s->reverse ? S - 1 : 0);
    unsigned a[16], t[16];
    char buf[48];
    for (int k = 0; k < n; k++) {
        a[k] = extract(c, s, k, idx);
        t[k] = cur[k];
        if (s->scan) {
            snprintf(buf, sizeof buf, "%%v%u", a[k]);
            t[k] = insert(c, s, k, buf, cur[k], idx);
        }
    }
    if (S == 1) {
        for (int k = 0; k < n; k++) {
            snprintf(buf, sizeof buf, "%%v%u", a[k]);
            out[k] = s->scan ? t[k] : insert(c, s, k, buf, cur[k], idx);
        }
        return 0;
    }
    int ncar = s->scan ? 2 * n : n;
    unsigned L = lo_fresh(o), j = lo_fresh(o), carg[32] = {0};
    lo_printf(o, "%*s%%v%u:%d = scf.for %%v%u = %%v%u to %%v%u step %%v%u iter_args(", o->indent, "", L, ncar, j,
              le_const_index(c, 1), le_const_index(c, S), le_const_index(c, 1));
    for (int i = 0; i < ncar; i++) {
        carg[i] = lo_fresh(o);
        lo_printf(o, "%s%%v%u = %%v%u", i ? ", " : "", carg[i], i < n ? a[i] : t[i - n]);
    }
    lo_printf(o, ") -> (");
    for (int i = 0; i < ncar; i++)
        lo_printf(o, "%s%s", i ? ", " : "", i < n ? s->sty[i] : le_ty(c, &s->oty[i - n]));
    lo_printf(o, ") {\n");
    o->indent += 2;
    int saved = c->scope;
    le_scope_push(c);
    unsigned jj[IR_MAX_RANK];
    memcpy(jj, idx, sizeof jj);
    jj[s->axis] = s->reverse ? lo_emit(o, "arith.subi %%v%u, %%v%u : index", le_const_index(c, S - 1), j) : j;
    unsigned x[16], r[16], nt[16];
    for (int k = 0; k < n; k++)
        x[k] = extract(c, s, k, jj);
    int rc = combine(c, s, carg, x, r);
    if (s->scan)
        for (int k = 0; k < n; k++) {
            snprintf(buf, sizeof buf, "%%v%u", r[k]);
            nt[k] = insert(c, s, k, buf, carg[n + k], jj);
        }
    lo_printf(o, "%*sscf.yield ", o->indent, "");
    for (int i = 0; i < ncar; i++)
        lo_printf(o, "%s%%v%u", i ? ", " : "", i < n ? r[i] : nt[i - n]);
    lo_printf(o, " : ");
    for (int i = 0; i < ncar; i++)
        lo_printf(o, "%s%s", i ? ", " : "", i < n ? s->sty[i] : le_ty(c, &s->oty[i - n]));
    lo_printf(o, "\n");
    le_scope_pop(c, saved);
    o->indent -= 2;
    lo_line(o, "}");
    for (int k = 0; k < n; k++) {
        if (s->scan) {
            const char *ty = le_ty(c, &s->oty[k]);
            out[k] = lo_emit(o, "tensor.cast %%v%u#%d : %s to %s", L, n + k, ty, ty);
        } else {
            snprintf(buf, sizeof buf, "%%v%u#%d", L, k);
            out[k] = insert(c, s, k, buf, cur[k], idx);
        }
    }
    return rc;
}

/* Loops over dims d.. (the axis excluded), carrying the result tensors. */
static int
walk_dims(LeCtx *c, const Seq *s, int d, unsigned *idx, const unsigned *cur, unsigned *out)
{
    while (d < s->rank && (d == s->axis || s->shape[d] == 1)) {
        if (d != s->axis)
            idx[d] = le_const_index(c, 0);
        d++;
    }
    if (d == s->rank)
        return walk_axis(c, s, idx, cur, out);
    LoBuf *o = c->out;
    int n = s->n;
    unsigned R = lo_fresh(o), iv = lo_fresh(o), carg[16] = {0}, inner[16] = {0};
    lo_printf(o, "%*s%%v%u:%d = scf.for %%v%u = %%v%u to %%v%u step %%v%u iter_args(", o->indent, "", R, n, iv,
              le_const_index(c, 0), le_const_index(c, s->shape[d]), le_const_index(c, 1));
    for (int k = 0; k < n; k++) {
        carg[k] = lo_fresh(o);
        lo_printf(o, "%s%%v%u = %%v%u", k ? ", " : "", carg[k], cur[k]);
    }
    lo_printf(o, ") -> (");
    for (int k = 0; k < n; k++)
        lo_printf(o, "%s%s", k ? ", " : "", le_ty(c, &s->oty[k]));
    lo_printf(o, ") {\n");
    o->indent += 2;
    int saved = c->scope;
    le_scope_push(c);
    idx[d] = iv;
    int rc = walk_dims(c, s, d + 1, idx, carg, inner);
    lo_printf(o, "%*sscf.yield ", o->indent, "");
    for (int k = 0; k < n; k++)
        lo_printf(o, "%s%%v%u", k ? ", " : "", inner[k]);
    lo_printf(o, " : ");
    for (int k = 0; k < n; k++)
        lo_printf(o, "%s%s", k ? ", " : "", le_ty(c, &s->oty[k]));
    lo_printf(o, "\n");
    le_scope_pop(c, saved);
    o->indent -= 2;
    lo_line(o, "}");
    for (int k = 0; k < n; k++) {
        const char *ty = le_ty(c, &s->oty[k]);
        out[k] = lo_emit(o, "tensor.cast %%v%u#%d : %s to %s", R, k, ty, ty);
    }
    return rc;
}

int
le_sequential_combine(LeCtx *c, IrOp *op, bool scan)
{
    Seq s = {.op = op, .n = (int)op->nargs, .scan = scan, .reverse = scan && op->i[1]};
    if (s.n < 1 || s.n > 16)
        return le_error(c, op->loc, "reduce/scan: between 1 and 16 operands are supported");
    IrType t0 = c->f->vals[op->args[0]].type;
    s.rank = ir_type_rank(c->m, t0);
    s.shape = ir_type_shape(c->m, t0);
    s.axis = (int)op->i[0];
    for (int k = 0; k < s.n; k++) {
        IrType t = c->f->vals[op->args[k]].type;
        s.dt[k] = ir_type_dtype(c->m, ir_type_elem(c->m, t));
        s.x[k] = le_materialize(c, op->args[k]);
        s.xty[k] = le_tile_ty(c, t);
        int se = lt_storage_elem(s.dt[k]);
        s.ety[k] = lt_elem_name(se);
        s.sty[k] = lt_elem_name(s.dt[k]);
        if (scan) {
            s.oty[k] = lt_tensor(se, s.rank, s.shape);
        } else {
            int64_t rs[IR_MAX_RANK];
            for (int d = 0, j = 0; d < s.rank; d++)
                if (d != s.axis)
                    rs[j++] = s.shape[d];
            s.oty[k] = lt_tensor(se, s.rank - 1, rs);
        }
    }
    if (c->err)
        return -1;
    unsigned cur[16], out[16], idx[IR_MAX_RANK] = {0};
    for (int k = 0; k < s.n; k++)
        cur[k] = le_alloc_tensor(c, &s.oty[k]);
    if (walk_dims(c, &s, 0, idx, cur, out) < 0)
        return -1;
    for (int k = 0; k < s.n; k++) {
        IrRef res = op->res[k];
        if (ir_type_rank(c->m, c->f->vals[res].type) == 0) {
            unsigned v = lo_emit(c->out, "tensor.extract %%v%u[] : %s", out[k], le_ty(c, &s.oty[k]));
            le_set_scalar(c, res, s.dt[k] == IR_I1 ? le_elem_cast(c->out, v, IR_I8, IR_I1) : v);
        } else {
            le_set_tensor(c, res, out[k]);
        }
    }
    return 0;
}
