/*
 * lo_expr.c — hash-consed affine index expressions for the plan (AExpr).
 *
 * An expression is a constant, an IR scalar integer value (AK_VAL), an index the
 * emitter creates for a carried value (AK_CARRY), or +, *, min, max of two
 * expressions. Constructors simplify (constants fold, constants distribute over
 * sums, operands are ordered) and intern the node in the pool, so equal
 * expressions are the same pointer. Nodes live in the module's arena; the pool's
 * hash table is its own.
 */
#include "lo_int.h"

#include <stdlib.h>
#include <string.h>

void
lx_init(LoExprs *x, IrModule *m, IrFunc *f)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    x->f = f;
    x->cap = 1024;
    x->hash = calloc(x->cap, sizeof *x->hash);
    if (!x->hash)
        ir_die("out of memory");
}

void
lx_fini(LoExprs *x)
{
    free(x->hash);
    memset(x, 0, sizeof *x);
}

static uint32_t
node_hash(int k, int64_t cst, IrRef v, int slot, const AExpr *a, const AExpr *b)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(y) (h = (h ^ (uint64_t)(y)) * 1099511628211ull)
    MIX(k);
    MIX(cst);
    MIX(v);
    MIX(slot);
    MIX((uintptr_t)a);
    MIX((uintptr_t)b);
#undef MIX
    return (uint32_t)(h ^ (h >> 32));
}

static void
rehash(LoExprs *x)
{
    uint32_t cap = x->cap * 2;
    AExpr **h = calloc(cap, sizeof *h);
    if (!h)
        ir_die("out of memory");
    for (uint32_t i = 0; i < x->cap; i++) {
        for (AExpr *e = x->hash[i], *next; e; e = next) {
            next = e->hnext;
            uint32_t k = node_hash(e->k, e->c, e->v, e->slot, e->a, e->b) & (cap - 1);
            e->hnext = h[k];
            h[k] = e;
        }
    }
    free(x->hash);
    x->hash = h;
    x->cap = cap;
}

static const AExpr *
intern(LoExprs *x, int k, int64_t cst, IrRef v, int slot, const AExpr *a, const AExpr *b)
{
    uint32_t h = node_hash(k, cst, v, slot, a, b) & (x->cap - 1);
    for (AExpr *e = x->hash[h]; e; e = e->hnext)
        if (e->k == k && e->c == cst && e->v == v && e->slot == slot && e->a == a && e->b == b)
            return e;
    if (x->n >= x->cap * 2) {
        rehash(x);
        h = node_hash(k, cst, v, slot, a, b) & (x->cap - 1);
    }
    AExpr *e = ir_new(&x->m->arena, AExpr);
    e->k = (uint8_t)k;
    e->c = cst;
    e->v = v;
    e->slot = slot;
    e->a = a;
    e->b = b;
    e->id = ++x->n;
    e->hnext = x->hash[h];
    x->hash[h] = e;
    return e;
}

const AExpr *ax_const(LoExprs *x, int64_t v) { return intern(x, AK_CONST, v, 0, 0, NULL, NULL); }
const AExpr *ax_carry(LoExprs *x, IrRef v, int slot) { return intern(x, AK_CARRY, 0, v, slot, NULL, NULL); }

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

bool
ax_is_zero(const AExpr *a)
{
    int64_t v;
    return ax_is_const(a, &v) && v == 0;
}

/* constants last; otherwise by node number, so a+b and b+a intern alike */
static void
order2(const AExpr **a, const AExpr **b)
{
    if (ax_is_const(*a, NULL) || (!ax_is_const(*b, NULL) && (*a)->id > (*b)->id)) {
        const AExpr *t = *a;
        *a = *b;
        *b = t;
    }
}

const AExpr *
ax_add(LoExprs *x, const AExpr *a, const AExpr *b)
{
    int64_t p, q;
    if (ax_is_const(a, &p) && ax_is_const(b, &q))
        return ax_const(x, p + q);
    if (ax_is_zero(a))
        return b;
    if (ax_is_zero(b))
        return a;
    order2(&a, &b);
    /* (e + c1) + c2 -> e + (c1 + c2) */
    if (ax_is_const(b, &q) && a->k == AK_ADD && ax_is_const(a->b, &p))
        return ax_add(x, a->a, ax_const(x, p + q));
    return intern(x, AK_ADD, 0, 0, 0, a, b);
}

const AExpr *
ax_mul(LoExprs *x, const AExpr *a, const AExpr *b)
{
    int64_t p, q;
    if (ax_is_const(a, &p) && ax_is_const(b, &q))
        return ax_const(x, p * q);
    order2(&a, &b);
    if (ax_is_const(b, &q)) {
        if (q == 0)
            return b;
        if (q == 1)
            return a;
        if (a->k == AK_MUL && ax_is_const(a->b, &p))
            return ax_mul(x, a->a, ax_const(x, p * q));
        if (a->k == AK_ADD) /* distribute constants over sums: (s + t) * k */
            return ax_add(x, ax_mul(x, a->a, b), ax_mul(x, a->b, b));
    }
    return intern(x, AK_MUL, 0, 0, 0, a, b);
}

const AExpr *ax_neg(LoExprs *x, const AExpr *a) { return ax_mul(x, a, ax_const(x, -1)); }
const AExpr *ax_sub(LoExprs *x, const AExpr *a, const AExpr *b) { return ax_add(x, a, ax_neg(x, b)); }

static const AExpr *
minmax(LoExprs *x, int k, const AExpr *a, const AExpr *b)
{
    int64_t p, q;
    if (ax_is_const(a, &p) && ax_is_const(b, &q))
        return ax_const(x, (k == AK_MIN) == (p < q) ? p : q);
    if (a == b)
        return a;
    order2(&a, &b);
    return intern(x, k, 0, 0, 0, a, b);
}

const AExpr *ax_min(LoExprs *x, const AExpr *a, const AExpr *b) { return minmax(x, AK_MIN, a, b); }
const AExpr *ax_max(LoExprs *x, const AExpr *a, const AExpr *b) { return minmax(x, AK_MAX, a, b); }

/* An IR scalar integer value, seen through constants, +, -, * and sign extension
 * so that equal computations compare equal. */
const AExpr *
ax_val(LoExprs *x, IrRef v)
{
    IrVal *val = &x->f->vals[v];
    IrOp *d = val->def;
    if (d && !ir_type_is_tensor(x->m, val->type)) {
        switch (d->opc) {
        case IR_CONST:
            return ax_const(x, d->i[0]);
        case IR_ADDI:
            return ax_add(x, ax_val(x, d->args[0]), ax_val(x, d->args[1]));
        case IR_SUBI:
            return ax_sub(x, ax_val(x, d->args[0]), ax_val(x, d->args[1]));
        case IR_MULI:
            return ax_mul(x, ax_val(x, d->args[0]), ax_val(x, d->args[1]));
        case IR_EXTSI:
            return ax_val(x, d->args[0]);
        default:
            break;
        }
    }
    return intern(x, AK_VAL, 0, v, 0, NULL, NULL);
}

bool
ax_eval(const AExpr *e, AxLeafFn val, void *user, int64_t *out)
{
    int64_t a, b;
    bool ok = true;
    switch (e->k) {
    case AK_CONST:
        *out = e->c;
        return true;
    case AK_VAL:
        *out = val ? val(user, e->v, &ok) : 0;
        return val && ok;
    case AK_CARRY:
        return false;
    default:
        break;
    }
    if (!ax_eval(e->a, val, user, &a) || !ax_eval(e->b, val, user, &b))
        return false;
    switch (e->k) {
    case AK_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); return true;
    case AK_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); return true;
    case AK_MIN: *out = a < b ? a : b; return true;
    case AK_MAX: *out = a > b ? a : b; return true;
    default: return false;
    }
}
