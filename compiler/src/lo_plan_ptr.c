/*
 * lo_plan_ptr.c — pointer, offset and mask analysis of the plan (pure).
 *
 * A tile of pointers is a base (a kernel argument, or an extra base the plan walk
 * makes: a local buffer, a run-time address, a cast to another element type) plus
 * an element offset
 *     off(i) = base + sum_d coef[d] * idx_d        (i = index inside the tile)
 * with idx_d = i_d, or (wbase[d] + i_d) mod wrap[d] for a dimension that wraps
 * around (`(pid * BLOCK + tl.arange(0, BLOCK)) % M`, upstream's matmul tutorial):
 * such a dim is read as two strided views. Base, coefficients and bounds are
 * affine expressions (AExpr) over IR scalar values. Offsets that are not affine
 * are kept as 'gen' tiles added element-wise (gathered pointers). A mask built
 * from comparisons of affine values against uniform bounds ("offs < n", and `&`
 * of several) is a per-dimension valid region [lo, hi).
 *
 * Forms are computed on demand and cached per value. Loop-carried pointers and
 * the results of tt.int_to_ptr and tt.bitcast get their forms from the plan walk
 * (lo_plan.c) before anything below them asks.
 */
#include "lo_int.h"

#include <string.h>

/* ---- affine forms of integer values ------------------------------------------------ */

static AForm *
form_new(LoPlan *p, int rank)
{
    AForm *f = ir_new(&p->m->arena, AForm);
    f->rank = rank;
    f->base = ax_const(&p->x, 0);
    for (int d = 0; d < rank; d++)
        f->coef[d] = ax_const(&p->x, 0);
    return f;
}

static bool
form_uniform(const AForm *f)
{
    for (int d = 0; d < f->rank; d++)
        if (!ax_is_zero(f->coef[d]))
            return false;
    return true;
}

bool
lp_form_has_wrap(const AForm *f)
{
    for (int d = 0; d < f->rank; d++)
        if (f->wrap[d])
            return true;
    return false;
}

/* a + sign*b; NULL when both wrap in one dim, or one wraps where the other has a
 * coefficient there (not expressible) */
static AForm *
form_add(LoPlan *p, const AForm *a, const AForm *b, int sign)
{
    AForm *f = form_new(p, a->rank);
    const AExpr *s = ax_const(&p->x, sign);
    f->base = ax_add(&p->x, a->base, ax_mul(&p->x, b->base, s));
    for (int d = 0; d < a->rank; d++) {
        if (a->wrap[d] && b->wrap[d])
            return NULL;
        if ((a->wrap[d] && !ax_is_zero(b->coef[d])) || (b->wrap[d] && !ax_is_zero(a->coef[d])))
            return NULL;
        f->coef[d] = ax_add(&p->x, a->coef[d], ax_mul(&p->x, b->coef[d], s));
        f->wrap[d] = a->wrap[d] ? a->wrap[d] : b->wrap[d];
        f->wbase[d] = a->wrap[d] ? a->wbase[d] : b->wbase[d];
    }
    return f;
}

static AForm *
form_scale(LoPlan *p, const AForm *a, const AExpr *k)
{
    AForm *f = form_new(p, a->rank);
    *f = *a;
    f->base = ax_mul(&p->x, a->base, k);
    for (int d = 0; d < a->rank; d++)
        f->coef[d] = ax_mul(&p->x, a->coef[d], k);
    return f;
}

/* Remaps a form to the shape of op's result after broadcast / expand_dims / trans. */
static AForm *
form_reshape_like(LoPlan *p, const IrOp *op, const AForm *x)
{
    IrType rt = p->f->vals[op->res[0]].type;
    int rr = ir_type_rank(p->m, rt);
    AForm *f = form_new(p, rr);
    f->base = x->base;
    switch (op->opc) {
    case IR_BROADCAST: {
        const int64_t *xs = ir_type_shape(p->m, p->f->vals[op->args[0]].type);
        for (int d = 0; d < rr; d++) {
            if (xs[d] == 1) { /* index 0 of a unit dim: a wrapped unit dim adds coef * (wbase mod M) */
                if (x->wrap[d])
                    return NULL;
                continue;
            }
            f->coef[d] = x->coef[d];
            f->wrap[d] = x->wrap[d];
            f->wbase[d] = x->wbase[d];
        }
        break;
    }
    case IR_EXPAND_DIMS:
        for (int d = 0, k = 0; d < rr; d++) {
            if (d == op->i[0])
                continue;
            f->coef[d] = x->coef[k];
            f->wrap[d] = x->wrap[k];
            f->wbase[d] = x->wbase[k];
            k++;
        }
        break;
    case IR_TRANS:
        for (int d = 0; d < rr; d++) {
            f->coef[d] = x->coef[op->ints[d]];
            f->wrap[d] = x->wrap[op->ints[d]];
            f->wbase[d] = x->wbase[op->ints[d]];
        }
        break;
    default:
        return NULL;
    }
    return f;
}

/* The dim map of a gathered pointer's gen tile (gen dim -> pointer dim, -1: read at
 * 0) after op (broadcast / expand_dims / trans) reshaped the pointer. */
static void
gen_reshape_like(LoPlan *p, const IrOp *op, int8_t *gdm, int grank)
{
    const int64_t *xs = ir_type_shape(p->m, p->f->vals[op->args[0]].type);
    const int64_t *rs = ir_type_shape(p->m, p->f->vals[op->res[0]].type);
    int rr = ir_type_rank(p->m, p->f->vals[op->res[0]].type);
    for (int k = 0; k < grank; k++) {
        int d = gdm[k];
        if (d < 0)
            continue;
        switch (op->opc) {
        case IR_BROADCAST:
            if (xs[d] == 1 && rs[d] != 1)
                gdm[k] = -1;
            break;
        case IR_EXPAND_DIMS:
            if (d >= op->i[0])
                gdm[k] = (int8_t)(d + 1);
            break;
        default: /* IR_TRANS: result dim j is operand dim ints[j] */
            for (int j = 0; j < rr; j++)
                if (op->ints[j] == d)
                    gdm[k] = (int8_t)j;
            break;
        }
    }
}

/* (a) % m with a = base + 1 * i_d over exactly one dim d and m uniform: the dim
 * wraps around. */
static AForm *
form_wrap(LoPlan *p, const AForm *a, const AForm *m)
{
    if (!form_uniform(m) || lp_form_has_wrap(a))
        return NULL;
    int dim = -1;
    for (int d = 0; d < a->rank; d++) {
        int64_t k;
        if (ax_is_zero(a->coef[d]))
            continue;
        if (dim >= 0 || !ax_is_const(a->coef[d], &k) || k != 1)
            return NULL;
        dim = d;
    }
    if (dim < 0)
        return NULL;
    AForm *f = form_new(p, a->rank);
    f->coef[dim] = ax_const(&p->x, 1);
    f->wrap[dim] = m->base;
    f->wbase[dim] = a->base;
    return f;
}

static AForm *
compute_aform(LoPlan *p, IrRef v)
{
    IrVal *val = &p->f->vals[v];
    int rank = ir_type_rank(p->m, val->type);
    int dt = ir_type_dtype(p->m, val->type);
    if (dt < 0 || !ir_dtype_is_int((IrDtype)dt) || dt == IR_I1)
        return NULL;
    if (rank == 0) {
        AForm *f = form_new(p, 0);
        f->base = ax_val(&p->x, v);
        return f;
    }
    IrOp *d = val->def;
    if (!d)
        return NULL;
    AForm *a, *b;
    switch (d->opc) {
    case IR_CONST: {
        AForm *f = form_new(p, rank);
        f->base = ax_const(&p->x, d->i[0]);
        return f;
    }
    case IR_SPLAT: {
        AForm *f = form_new(p, rank);
        f->base = ax_val(&p->x, d->args[0]);
        return f;
    }
    case IR_MAKE_RANGE: {
        AForm *f = form_new(p, 1);
        f->base = ax_const(&p->x, d->i[0]);
        f->coef[0] = ax_const(&p->x, 1);
        return f;
    }
    case IR_ADDI:
    case IR_SUBI:
        if (!(a = lp_aform(p, d->args[0])) || !(b = lp_aform(p, d->args[1])))
            return NULL;
        return form_add(p, a, b, d->opc == IR_ADDI ? 1 : -1);
    case IR_MULI:
        if (!(a = lp_aform(p, d->args[0])) || !(b = lp_aform(p, d->args[1])))
            return NULL;
        if (form_uniform(b) && !lp_form_has_wrap(b))
            return form_scale(p, a, b->base);
        if (form_uniform(a) && !lp_form_has_wrap(a))
            return form_scale(p, b, a->base);
        return NULL;
    case IR_SHLI: {
        int64_t k;
        if (!(a = lp_aform(p, d->args[0])) || !(b = lp_aform(p, d->args[1])))
            return NULL;
        if (!form_uniform(b) || !ax_is_const(b->base, &k) || k < 0 || k > 40)
            return NULL;
        return form_scale(p, a, ax_const(&p->x, 1LL << k));
    }
    case IR_REMSI:
    case IR_REMUI:
        if (!(a = lp_aform(p, d->args[0])) || !(b = lp_aform(p, d->args[1])))
            return NULL;
        return form_wrap(p, a, b);
    case IR_EXTSI:
    case IR_EXTUI:
    case IR_TRUNCI:
    case IR_BITCAST:
        return lp_aform(p, d->args[0]);
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_TRANS:
        if (!(a = lp_aform(p, d->args[0])))
            return NULL;
        return form_reshape_like(p, d, a);
    default:
        return NULL;
    }
}

AForm *
lp_aform(LoPlan *p, IrRef v)
{
    if (!p->aform_done[v]) {
        p->aform[v] = compute_aform(p, v);
        p->aform_done[v] = 1;
    }
    return p->aform[v];
}

/* ---- pointer forms ------------------------------------------------------------------ */

static PtrForm *
ptr_copy(LoPlan *p, const PtrForm *x)
{
    PtrForm *q = ir_new(&p->m->arena, PtrForm);
    *q = *x;
    return q;
}

static PtrForm *
compute_ptrform(LoPlan *p, IrRef v)
{
    IrVal *val = &p->f->vals[v];
    IrType et = ir_type_elem(p->m, val->type);
    if (!ir_type_is_ptr(p->m, et) || ir_type_is_tensor(p->m, ir_type_pointee(p->m, et)))
        return NULL;
    int rank = ir_type_rank(p->m, val->type);
    IrOp *d = val->def;
    PtrForm *q, *x;
    if (!d) {
        if (val->blk != p->f->body)
            return NULL; /* loop-carried: set by the plan walk */
        q = ir_new(&p->m->arena, PtrForm);
        q->param = (int)val->idx;
        q->elem = ir_type_pointee(p->m, et);
        q->off = *form_new(p, 0);
        return q;
    }
    switch (d->opc) {
    case IR_ADDPTR: {
        if (!(x = lp_ptrform(p, d->args[0])))
            return NULL;
        q = ptr_copy(p, x);
        AForm *o = lp_aform(p, d->args[1]);
        AForm *sum = o ? form_add(p, &x->off, o, 1) : NULL;
        if (sum) {
            q->off = *sum;
        } else {
            if (q->ngen == LP_MAX_GEN)
                return NULL;
            for (int k = 0; k < rank; k++)
                q->gdm[q->ngen][k] = (int8_t)k;
            q->gen[q->ngen++] = d->args[1];
        }
        return q;
    }
    case IR_SPLAT:
        if (!(x = lp_ptrform(p, d->args[0])) || x->ngen)
            return NULL;
        q = ptr_copy(p, x);
        q->off = *form_new(p, rank);
        q->off.base = x->off.base;
        return q;
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_TRANS: {
        if (!(x = lp_ptrform(p, d->args[0])))
            return NULL;
        AForm *o = form_reshape_like(p, d, &x->off);
        if (!o)
            return NULL;
        q = ptr_copy(p, x);
        for (int i = 0; i < q->ngen; i++)
            gen_reshape_like(p, d, q->gdm[i], ir_type_rank(p->m, p->f->vals[q->gen[i]].type));
        q->off = *o;
        return q;
    }
    default: /* tt.int_to_ptr, tt.bitcast: set by the plan walk */
        return NULL;
    }
}

PtrForm *
lp_ptrform(LoPlan *p, IrRef v)
{
    if (!p->ptr_done[v]) {
        p->ptr[v] = compute_ptrform(p, v);
        p->ptr_done[v] = 1;
    }
    return p->ptr[v];
}

/* ---- block pointers ------------------------------------------------------------------ */

/* In dim k (checked), tile index i is valid when 0 <= off + i < shape, i.e. i in
 * [-off, shape - off). */
void
lp_bptr_region(LoPlan *p, const BlockPtr *bp, const int64_t *checks, int nchecks, Region *r)
{
    memset(r, 0, sizeof *r);
    r->rank = bp->rank;
    for (int i = 0; i < nchecks; i++) {
        int k = (int)checks[i];
        const AExpr *lo = ax_neg(&p->x, bp->off[k]);
        int64_t v;
        r->lo[k] = ax_is_const(lo, &v) && v <= 0 ? NULL : lo;
        r->hi[k] = ax_sub(&p->x, bp->shape[k], bp->off[k]);
    }
}

void
lp_bptr_form(LoPlan *p, const BlockPtr *bp, AForm *out)
{
    memset(out, 0, sizeof *out);
    out->rank = bp->rank;
    out->base = bp->base;
    for (int k = 0; k < bp->rank; k++) {
        out->base = ax_add(&p->x, out->base, ax_mul(&p->x, bp->off[k], bp->stride[k]));
        out->coef[k] = bp->stride[k];
    }
}

/* ---- mask regions ------------------------------------------------------------------------ */

static void
region_full(Region *r, int rank)
{
    memset(r, 0, sizeof *r);
    r->rank = rank;
}

/* f(i) = base + coef*i_k compared with 0 → a bound on i_k. Returns the dim, -1 for
 * a uniform form, -2 when not a single unwrapped dim with a constant coefficient. */
static int
single_dim(const AForm *f, int64_t *coef)
{
    int dim = -1;
    for (int d = 0; d < f->rank; d++) {
        int64_t k;
        if (ax_is_zero(f->coef[d]) && !f->wrap[d])
            continue;
        if (dim >= 0 || f->wrap[d] || !ax_is_const(f->coef[d], &k))
            return -2;
        dim = d;
        *coef = k;
    }
    return dim;
}

static int
region_cmp(LoPlan *p, const IrOp *op, Region *r, int rank)
{
    AForm *a = lp_aform(p, op->args[0]), *b = lp_aform(p, op->args[1]);
    if (!a || !b)
        return -1;
    AForm *df = form_add(p, a, b, -1); /* a - b */
    int64_t k = 0;
    int dim = df ? single_dim(df, &k) : -2;
    if (dim == -1) {
        /* uniform over the tile: a bound on a unit dim (its index is always 0), as
         * `pid*1 + tl.arange(0, 1)[:, None] < n` is with a one-row block */
        const int64_t *sh = ir_type_shape(p->m, p->f->vals[op->res[0]].type);
        for (int d = 0; d < rank && dim < 0; d++)
            if (sh[d] == 1)
                dim = d, k = 1;
    }
    if (dim < 0 || (k != 1 && k != -1))
        return -1;
    int pred = (int)op->i[0];
    /* normalise to coef +1: a - b = base + k*i; for k = -1 negate and flip */
    const AExpr *base = df->base;
    if (k == -1) {
        static const int flip[IR_CMPI_COUNT] = {
            [IR_CMPI_EQ] = IR_CMPI_EQ,   [IR_CMPI_NE] = IR_CMPI_NE,   [IR_CMPI_SLT] = IR_CMPI_SGT,
            [IR_CMPI_SLE] = IR_CMPI_SGE, [IR_CMPI_SGT] = IR_CMPI_SLT, [IR_CMPI_SGE] = IR_CMPI_SLE,
            [IR_CMPI_ULT] = IR_CMPI_UGT, [IR_CMPI_ULE] = IR_CMPI_UGE, [IR_CMPI_UGT] = IR_CMPI_ULT,
            [IR_CMPI_UGE] = IR_CMPI_ULE};
        base = ax_neg(&p->x, base);
        pred = flip[pred];
    }
    const AExpr *nb = ax_neg(&p->x, base); /* base + i (pred) 0  <=>  i (pred) -base */
    region_full(r, rank);
    switch (pred) {
    case IR_CMPI_SLT: case IR_CMPI_ULT: r->hi[dim] = nb; break;
    case IR_CMPI_SLE: case IR_CMPI_ULE: r->hi[dim] = ax_add(&p->x, nb, ax_const(&p->x, 1)); break;
    case IR_CMPI_SGT: case IR_CMPI_UGT: r->lo[dim] = ax_add(&p->x, nb, ax_const(&p->x, 1)); break;
    case IR_CMPI_SGE: case IR_CMPI_UGE: r->lo[dim] = nb; break;
    default: return -1;
    }
    return 0;
}

static const AExpr *
bound_join(LoPlan *p, const AExpr *a, const AExpr *b, bool is_lo)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return is_lo ? ax_max(&p->x, a, b) : ax_min(&p->x, a, b);
}

int
lp_mask_region(LoPlan *p, IrRef mask, Region *r)
{
    IrVal *val = &p->f->vals[mask];
    int rank = ir_type_rank(p->m, val->type);
    IrOp *d = val->def;
    region_full(r, rank);
    if (!d)
        return -1;
    Region a, b;
    switch (d->opc) {
    case IR_CONST:
        if (!d->i[0]) { /* all false: empty region */
            if (rank == 0)
                return -1;
            r->hi[0] = ax_const(&p->x, 0);
        }
        return 0;
    case IR_SPLAT:
        r->cond = d->args[0];
        return 0;
    case IR_CMPI:
        return region_cmp(p, d, r, rank);
    case IR_ANDI:
        if (lp_mask_region(p, d->args[0], &a) < 0 || lp_mask_region(p, d->args[1], &b) < 0)
            return -1;
        if (a.cond && b.cond && a.cond != b.cond)
            return -1;
        r->cond = a.cond ? a.cond : b.cond;
        for (int k = 0; k < rank; k++) {
            r->lo[k] = bound_join(p, a.lo[k], b.lo[k], true);
            r->hi[k] = bound_join(p, a.hi[k], b.hi[k], false);
        }
        return 0;
    case IR_EXPAND_DIMS:
        if (lp_mask_region(p, d->args[0], &a) < 0)
            return -1;
        r->cond = a.cond;
        for (int k = 0, j = 0; k < rank; k++) {
            if (k == d->i[0])
                continue;
            r->lo[k] = a.lo[j];
            r->hi[k] = a.hi[j];
            j++;
        }
        return 0;
    case IR_BROADCAST: {
        if (lp_mask_region(p, d->args[0], &a) < 0)
            return -1;
        const int64_t *xs = ir_type_shape(p->m, p->f->vals[d->args[0]].type);
        const int64_t *rs = ir_type_shape(p->m, val->type);
        r->cond = a.cond;
        for (int k = 0; k < rank; k++) {
            if (xs[k] == 1 && rs[k] != 1 && (a.lo[k] || a.hi[k]))
                return -1; /* a bound on a broadcast unit dim: not representable */
            r->lo[k] = a.lo[k];
            r->hi[k] = a.hi[k];
        }
        return 0;
    }
    case IR_TRANS:
        if (lp_mask_region(p, d->args[0], &a) < 0)
            return -1;
        r->cond = a.cond;
        for (int k = 0; k < rank; k++) {
            r->lo[k] = a.lo[d->ints[k]];
            r->hi[k] = a.hi[d->ints[k]];
        }
        return 0;
    default:
        return -1;
    }
}

bool
lp_region_covers(const Region *lr, const int8_t *dm, const Region *ir)
{
    if (lr->cond && lr->cond != ir->cond)
        return false;
    for (int k = 0; k < lr->rank; k++) {
        int j = dm[k];
        if (j < 0 || j >= ir->rank) {
            if (lr->lo[k] || lr->hi[k])
                return false;
            continue;
        }
        if (lr->lo[k] != ir->lo[j] || lr->hi[k] != ir->hi[j])
            return false;
    }
    return true;
}
