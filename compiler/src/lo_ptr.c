/*
 * lo_ptr.c — pointer, offset and mask analysis for the lowering.
 *
 * A tensor of pointers is a kernel parameter plus an element offset
 *     off(i) = base + sum_d coef[d] * i_d          (i = index inside the tile)
 * whose base and coefficients are affine scalar expressions (AExpr) over IR
 * scalar values; such pointers become strided memref views. A mask built from
 * comparisons of such offsets against uniform bounds ("offs < n", and & of
 * several) becomes a per-dimension valid region [lo, hi), which becomes the
 * (dynamic) size of the view. Anything else falls back to element-wise gathers
 * and scatters in lo_mem.c (with a compiler remark).
 *
 * AExpr nodes are hash-consed in the context so that equal expressions are equal
 * pointers; that is how "the load's mask is the store's mask" is decided.
 * Requires: canonicalized IR (constants folded, CSE done).
 */
#include "lo_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- hash-consed affine expressions ------------------------------------------------ */

static uint32_t
ahash(int k, int64_t cst, IrRef v, unsigned ssa, const AExpr *a, const AExpr *b)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(x) (h = (h ^ (uint64_t)(x)) * 1099511628211ull)
    MIX(k);
    MIX(cst);
    MIX(v);
    MIX(ssa);
    MIX((uintptr_t)a);
    MIX((uintptr_t)b);
#undef MIX
    return (uint32_t)(h ^ (h >> 32));
}

static const AExpr *
intern(LoCtx *c, int k, int64_t cst, IrRef v, unsigned ssa, const AExpr *a, const AExpr *b)
{
    if (!c->ahash) {
        c->ahcap = 1024;
        c->ahash = calloc(c->ahcap, sizeof(AExpr *));
        if (!c->ahash)
            ir_die("out of memory");
    }
    uint32_t h = ahash(k, cst, v, ssa, a, b) & (c->ahcap - 1);
    for (AExpr *e = c->ahash[h]; e; e = e->hnext)
        if (e->k == k && e->c == cst && e->v == v && e->ssa == ssa && e->a == a && e->b == b)
            return e;
    AExpr *e = ir_new(&c->m->arena, AExpr);
    e->k = (uint8_t)k;
    e->c = cst;
    e->v = v;
    e->ssa = ssa;
    e->a = a;
    e->b = b;
    e->hnext = c->ahash[h];
    c->ahash[h] = e;
    return e;
}

const AExpr *ax_const(LoCtx *c, int64_t v) { return intern(c, AK_CONST, v, 0, 0, NULL, NULL); }
const AExpr *ax_ssa(LoCtx *c, unsigned ssa) { return intern(c, AK_SSA, 0, 0, ssa, NULL, NULL); }

bool
ax_is_const(const AExpr *a, int64_t *v)
{
    if (a && a->k == AK_CONST) {
        if (v)
            *v = a->c;
        return true;
    }
    return false;
}

static void
order2(const AExpr **a, const AExpr **b)
{
    /* constants last; otherwise by address, so a+b and b+a intern alike */
    if (ax_is_const(*a, NULL) || (!ax_is_const(*b, NULL) && (uintptr_t)*a > (uintptr_t)*b)) {
        const AExpr *t = *a;
        *a = *b;
        *b = t;
    }
}

const AExpr *
ax_add(LoCtx *c, const AExpr *a, const AExpr *b)
{
    int64_t x, y;
    if (ax_is_const(a, &x) && ax_is_const(b, &y))
        return ax_const(c, x + y);
    if (ax_is_const(a, &x) && x == 0)
        return b;
    if (ax_is_const(b, &y) && y == 0)
        return a;
    order2(&a, &b);
    /* (e + c1) + c2 -> e + (c1 + c2) */
    if (ax_is_const(b, &y) && a->k == AK_ADD && ax_is_const(a->b, &x))
        return ax_add(c, a->a, ax_const(c, x + y));
    return intern(c, AK_ADD, 0, 0, 0, a, b);
}

const AExpr *
ax_mul(LoCtx *c, const AExpr *a, const AExpr *b)
{
    int64_t x, y;
    if (ax_is_const(a, &x) && ax_is_const(b, &y))
        return ax_const(c, x * y);
    order2(&a, &b);
    if (ax_is_const(b, &y)) {
        if (y == 0)
            return b;
        if (y == 1)
            return a;
        if (a->k == AK_MUL && ax_is_const(a->b, &x))
            return ax_mul(c, a->a, ax_const(c, x * y));
        /* distribute constants over sums: (p + q) * k */
        if (a->k == AK_ADD)
            return ax_add(c, ax_mul(c, a->a, b), ax_mul(c, a->b, b));
    }
    return intern(c, AK_MUL, 0, 0, 0, a, b);
}

const AExpr *ax_neg(LoCtx *c, const AExpr *a) { return ax_mul(c, a, ax_const(c, -1)); }

const AExpr *
ax_min(LoCtx *c, const AExpr *a, const AExpr *b)
{
    int64_t x, y;
    if (ax_is_const(a, &x) && ax_is_const(b, &y))
        return ax_const(c, x < y ? x : y);
    if (a == b)
        return a;
    order2(&a, &b);
    return intern(c, AK_MIN, 0, 0, 0, a, b);
}

const AExpr *
ax_max(LoCtx *c, const AExpr *a, const AExpr *b)
{
    int64_t x, y;
    if (ax_is_const(a, &x) && ax_is_const(b, &y))
        return ax_const(c, x > y ? x : y);
    if (a == b)
        return a;
    order2(&a, &b);
    return intern(c, AK_MAX, 0, 0, 0, a, b);
}

/* An IR scalar integer value, seen through constants, +, -, * and sign extension
 * so that equal computations compare equal. */
const AExpr *
ax_val(LoCtx *c, IrRef v)
{
    IrVal *val = &c->f->vals[v];
    IrOp *d = val->def;
    if (d && !ir_type_is_tensor(c->m, val->type)) {
        switch (d->opc) {
        case IR_CONST:
            return ax_const(c, d->i[0]);
        case IR_ADDI:
            return ax_add(c, ax_val(c, d->args[0]), ax_val(c, d->args[1]));
        case IR_SUBI:
            return ax_add(c, ax_val(c, d->args[0]), ax_neg(c, ax_val(c, d->args[1])));
        case IR_MULI:
            return ax_mul(c, ax_val(c, d->args[0]), ax_val(c, d->args[1]));
        case IR_EXTSI:
            return ax_val(c, d->args[0]);
        default:
            break;
        }
    }
    return intern(c, AK_VAL, 0, v, 0, NULL, NULL);
}

/* Emits e as an MLIR value of type index (memoised per visible scope). */
unsigned
lo_aexpr_emit(LoCtx *c, const AExpr *e)
{
    AExpr *m = (AExpr *)e;
    if (m->memo && lo_scope_visible(c, m->memo_scope))
        return m->memo;
    unsigned r, a, b;
    switch (e->k) {
    case AK_CONST:
        r = lo_const_index(c, e->c);
        break;
    case AK_SSA:
        return e->ssa;
    case AK_VAL: {
        unsigned s = lo_scalar(c, e->v);
        IrType t = c->f->vals[e->v].type;
        r = lo_emit(c->out, "arith.index_cast %%v%u : %s to index", s, lo_elem_str(c, t));
        break;
    }
    case AK_ADD:
    case AK_MUL:
    case AK_MIN:
    case AK_MAX:
    case AK_DIV:
        a = lo_aexpr_emit(c, e->a);
        b = lo_aexpr_emit(c, e->b);
        r = lo_emit(c->out, "arith.%s %%v%u, %%v%u : index",
                    e->k == AK_ADD ? "addi" : e->k == AK_MUL ? "muli" : e->k == AK_MIN ? "minsi"
                    : e->k == AK_MAX ? "maxsi" : "floordivsi", a, b);
        break;
    default:
        ir_die("bad AExpr kind %d", e->k);
    }
    m->memo = r;
    m->memo_scope = c->scope;
    return r;
}

/* ---- affine forms of integer values ------------------------------------------------ */

static AForm *
form_new(LoCtx *c, int rank)
{
    AForm *f = ir_new(&c->m->arena, AForm);
    f->rank = rank;
    f->base = ax_const(c, 0);
    for (int d = 0; d < rank; d++)
        f->coef[d] = ax_const(c, 0);
    return f;
}

static bool
form_uniform(const AForm *f)
{
    for (int d = 0; d < f->rank; d++)
        if (!ax_is_const(f->coef[d], NULL) || f->coef[d]->c != 0)
            return false;
    return true;
}

static AForm *
form_add(LoCtx *c, const AForm *a, const AForm *b, int sign)
{
    AForm *f = form_new(c, a->rank);
    const AExpr *s = ax_const(c, sign);
    f->base = ax_add(c, a->base, ax_mul(c, b->base, s));
    for (int d = 0; d < a->rank; d++)
        f->coef[d] = ax_add(c, a->coef[d], ax_mul(c, b->coef[d], s));
    return f;
}

static AForm *
form_scale(LoCtx *c, const AForm *a, const AExpr *k)
{
    AForm *f = form_new(c, a->rank);
    f->base = ax_mul(c, a->base, k);
    for (int d = 0; d < a->rank; d++)
        f->coef[d] = ax_mul(c, a->coef[d], k);
    return f;
}

/* Remaps a form to the shape of 'res' after broadcast / expand_dims / trans. */
static AForm *
form_reshape_like(LoCtx *c, IrOp *op, const AForm *x)
{
    IrType rt = c->f->vals[op->res[0]].type;
    int rr = ir_type_rank(c->m, rt);
    AForm *f = form_new(c, rr);
    f->base = x->base;
    switch (op->opc) {
    case IR_BROADCAST: {
        const int64_t *xs = ir_type_shape(c->m, c->f->vals[op->args[0]].type);
        for (int d = 0; d < rr; d++)
            f->coef[d] = xs[d] == 1 ? ax_const(c, 0) : x->coef[d];
        break;
    }
    case IR_EXPAND_DIMS:
        for (int d = 0, k = 0; d < rr; d++)
            f->coef[d] = d == op->i[0] ? ax_const(c, 0) : x->coef[k++];
        break;
    case IR_TRANS:
        for (int d = 0; d < rr; d++)
            f->coef[d] = x->coef[op->ints[d]];
        break;
    default:
        return NULL;
    }
    return f;
}

static AForm *
compute_aform(LoCtx *c, IrRef v)
{
    IrVal *val = &c->f->vals[v];
    int rank = ir_type_rank(c->m, val->type);
    int dt = ir_type_dtype(c->m, val->type);
    if (dt < 0 || !ir_dtype_is_int((IrDtype)dt) || dt == IR_I1)
        return NULL;
    if (rank == 0) {
        AForm *f = form_new(c, 0);
        f->base = ax_val(c, v);
        return f;
    }
    IrOp *d = val->def;
    if (!d)
        return NULL;
    AForm *a, *b;
    switch (d->opc) {
    case IR_CONST: {
        AForm *f = form_new(c, rank);
        f->base = ax_const(c, d->i[0]);
        return f;
    }
    case IR_SPLAT: {
        AForm *f = form_new(c, rank);
        f->base = ax_val(c, d->args[0]);
        return f;
    }
    case IR_MAKE_RANGE: {
        AForm *f = form_new(c, 1);
        f->base = ax_const(c, d->i[0]);
        f->coef[0] = ax_const(c, 1);
        return f;
    }
    case IR_ADDI:
    case IR_SUBI:
        if (!(a = lo_aform(c, d->args[0])) || !(b = lo_aform(c, d->args[1])))
            return NULL;
        return form_add(c, a, b, d->opc == IR_ADDI ? 1 : -1);
    case IR_MULI:
        if (!(a = lo_aform(c, d->args[0])) || !(b = lo_aform(c, d->args[1])))
            return NULL;
        if (form_uniform(b))
            return form_scale(c, a, b->base);
        if (form_uniform(a))
            return form_scale(c, b, a->base);
        return NULL;
    case IR_SHLI: {
        int64_t k;
        if (!(a = lo_aform(c, d->args[0])) || !(b = lo_aform(c, d->args[1])))
            return NULL;
        if (!form_uniform(b) || !ax_is_const(b->base, &k) || k < 0 || k > 40)
            return NULL;
        return form_scale(c, a, ax_const(c, 1LL << k));
    }
    case IR_EXTSI:
    case IR_EXTUI:
    case IR_TRUNCI:
    case IR_BITCAST:
        return lo_aform(c, d->args[0]);
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_TRANS:
        if (!(a = lo_aform(c, d->args[0])))
            return NULL;
        return form_reshape_like(c, d, a);
    default:
        return NULL;
    }
}

AForm *
lo_aform(LoCtx *c, IrRef v)
{
    LoVal *lv = &c->vals[v];
    if (!lv->aform_done) {
        lv->aform = compute_aform(c, v);
        lv->aform_done = 1;
    }
    return lv->aform;
}

/* ---- pointer forms ------------------------------------------------------------------ */

static PtrForm *
compute_ptrform(LoCtx *c, IrRef v)
{
    IrVal *val = &c->f->vals[v];
    IrType et = ir_type_elem(c->m, val->type);
    if (!ir_type_is_ptr(c->m, et) || ir_type_is_tensor(c->m, ir_type_pointee(c->m, et)))
        return NULL;
    int rank = ir_type_rank(c->m, val->type);
    IrOp *d = val->def;
    PtrForm *p, *x;
    if (!d) {
        if (val->blk != c->f->body)
            return NULL; /* loop-carried: set by lo_main.c */
        p = ir_new(&c->m->arena, PtrForm);
        p->param = (int)val->idx;
        p->elem = ir_type_pointee(c->m, et);
        p->off = *form_new(c, 0);
        return p;
    }
    switch (d->opc) {
    case IR_ADDPTR: {
        if (!(x = lo_ptrform(c, d->args[0])))
            return NULL;
        p = ir_new(&c->m->arena, PtrForm);
        *p = *x;
        AForm *o = lo_aform(c, d->args[1]);
        if (o) {
            p->off = *form_add(c, &x->off, o, 1);
        } else {
            if (p->ngen == 8)
                return NULL;
            p->gen[p->ngen++] = d->args[1];
        }
        return p;
    }
    case IR_SPLAT:
        if (!(x = lo_ptrform(c, d->args[0])) || x->ngen)
            return NULL;
        p = ir_new(&c->m->arena, PtrForm);
        *p = *x;
        p->off = *form_new(c, rank);
        p->off.base = x->off.base;
        return p;
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_TRANS: {
        if (!(x = lo_ptrform(c, d->args[0])) || x->ngen)
            return NULL;
        AForm *o = form_reshape_like(c, d, &x->off);
        if (!o)
            return NULL;
        p = ir_new(&c->m->arena, PtrForm);
        *p = *x;
        p->off = *o;
        return p;
    }
    case IR_PTR_BITCAST:
        if (!(x = lo_ptrform(c, d->args[0])))
            return NULL;
        p = ir_new(&c->m->arena, PtrForm);
        *p = *x;
        p->elem = ir_type_pointee(c->m, et);
        return p;
    default:
        return NULL;
    }
}

PtrForm *
lo_ptrform(LoCtx *c, IrRef v)
{
    LoVal *lv = &c->vals[v];
    if (lv->ptr)
        return lv->ptr;
    if (!lv->analysed) {
        lv->ptr = compute_ptrform(c, v);
        lv->analysed = 1;
    }
    return lv->ptr;
}

/* ---- mask regions ------------------------------------------------------------------------ */

static void
region_full(Region *r, int rank)
{
    memset(r, 0, sizeof *r);
    r->rank = rank;
}

bool
lo_region_full(const Region *r)
{
    for (int d = 0; d < r->rank; d++)
        if (r->lo[d] || r->hi[d])
            return false;
    return !r->cond;
}

bool
lo_region_eq(const Region *a, const Region *b)
{
    if (a->rank != b->rank || a->cond != b->cond)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])
            return false;
    return true;
}

/* d(i) = base + coef*i_k compared with 0 → bound on i_k. Returns the dim, or -1. */
static int
single_dim(const AForm *f, int64_t *coef)
{
    int dim = -1;
    for (int d = 0; d < f->rank; d++) {
        int64_t k;
        if (ax_is_const(f->coef[d], &k) && k == 0)
            continue;
        if (dim >= 0 || !ax_is_const(f->coef[d], &k))
            return -2;
        dim = d;
        *coef = k;
    }
    return dim;
}

static int
region_cmp(LoCtx *c, IrOp *op, Region *r, int rank)
{
    AForm *a = lo_aform(c, op->args[0]), *b = lo_aform(c, op->args[1]);
    if (!a || !b)
        return -1;
    AForm *df = form_add(c, a, b, -1); /* a - b */
    int64_t k = 0;
    int dim = single_dim(df, &k);
    if (dim < 0 || (k != 1 && k != -1))
        return -1;
    int pred = (int)op->i[0];
    /* normalise to coef +1: a - b = base + k*i; for k = -1 negate and flip */
    const AExpr *base = df->base;
    if (k == -1) {
        base = ax_neg(c, base);
        static const int flip[10] = {0, 1, 4, 5, 2, 3, 8, 9, 6, 7};
        pred = flip[pred];
    }
    /* base + i  (pred)  0 */
    const AExpr *nb = ax_neg(c, base); /* i (pred) -base */
    region_full(r, rank);
    switch (pred) {
    case 2: case 6: /* slt/ult: i < -base */
        r->hi[dim] = nb;
        break;
    case 3: case 7: /* sle: i <= -base */
        r->hi[dim] = ax_add(c, nb, ax_const(c, 1));
        break;
    case 4: case 8: /* sgt: i > -base */
        r->lo[dim] = ax_add(c, nb, ax_const(c, 1));
        break;
    case 5: case 9: /* sge: i >= -base */
        r->lo[dim] = nb;
        break;
    default:
        return -1;
    }
    return 0;
}

static const AExpr *
bound_join(LoCtx *c, const AExpr *x, const AExpr *y, bool is_lo)
{
    if (!x)
        return y;
    if (!y)
        return x;
    return is_lo ? ax_max(c, x, y) : ax_min(c, x, y);
}

int
lo_mask_region(LoCtx *c, IrRef mask, Region *r)
{
    IrVal *val = &c->f->vals[mask];
    int rank = ir_type_rank(c->m, val->type);
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
            r->hi[0] = ax_const(c, 0);
        }
        return 0;
    case IR_SPLAT:
        r->cond = d->args[0];
        return 0;
    case IR_CMPI:
        return region_cmp(c, d, r, rank);
    case IR_ANDI:
        if (lo_mask_region(c, d->args[0], &a) < 0 || lo_mask_region(c, d->args[1], &b) < 0)
            return -1;
        if (a.cond && b.cond && a.cond != b.cond)
            return -1;
        r->cond = a.cond ? a.cond : b.cond;
        for (int k = 0; k < rank; k++) {
            r->lo[k] = bound_join(c, a.lo[k], b.lo[k], true);
            r->hi[k] = bound_join(c, a.hi[k], b.hi[k], false);
        }
        return 0;
    case IR_EXPAND_DIMS:
        if (lo_mask_region(c, d->args[0], &a) < 0)
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
        if (lo_mask_region(c, d->args[0], &a) < 0)
            return -1;
        const int64_t *xs = ir_type_shape(c->m, c->f->vals[d->args[0]].type);
        r->cond = a.cond;
        for (int k = 0; k < rank; k++) {
            if (xs[k] == 1 && (a.lo[k] || a.hi[k]))
                return -1; /* a bound on a broadcast unit dim: not representable */
            r->lo[k] = a.lo[k];
            r->hi[k] = a.hi[k];
        }
        return 0;
    }
    case IR_TRANS:
        if (lo_mask_region(c, d->args[0], &a) < 0)
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
