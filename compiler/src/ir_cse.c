/*
 * ir_cse.c — common-subexpression elimination on tile IR.
 *
 * Requires: nothing. Breaks: uses (IrVal.nuse is stale afterwards).
 * Dominator-scoped hashing over the structured nesting: walking each block in
 * order, a pure op without regions is replaced by an identical op seen earlier
 * in the same block or an enclosing one (same opcode, operands — either order for
 * commutative ops — attributes and result types). Entries made inside a region
 * are dropped when the walk leaves it. Ops that touch memory (IR_F_MEM) or have
 * other effects are never merged. (Classic scoped value numbering, as in
 * MLIR's CSE pass.)
 */
#include "ir_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct Entry {
    IrOp *op;
    uint32_t hash;
    int prev; /* older entry in the same bucket, or -1 */
} Entry;

typedef struct Cse {
    IrFunc *f;
    Entry *e;
    int n, cap;
    int *head;
    uint32_t nbucket; /* power of two */
} Cse;

static bool
candidate(const IrOp *op)
{
    uint8_t fl = ir_opc_flags[op->opc];
    return (fl & IR_F_PURE) && !(fl & (IR_F_TERM | IR_F_MEM)) && op->nregs == 0 && op->nres > 0;
}

static uint32_t
mix(uint32_t h, uint64_t v)
{
    h = (h ^ (uint32_t)v) * 16777619u;
    return (h ^ (uint32_t)(v >> 32)) * 16777619u;
}

static uint32_t
hash_op(Cse *c, const IrOp *op)
{
    uint32_t h = mix(2166136261u, op->opc);
    if ((ir_opc_flags[op->opc] & IR_F_COMM) && op->nargs == 2)
        h = mix(h, (uint64_t)op->args[0] ^ op->args[1]);
    else
        for (uint32_t i = 0; i < op->nargs; i++)
            h = mix(h, op->args[i]);
    for (uint32_t i = 0; i < op->nres; i++)
        h = mix(h, ir_val_type(c->f, op->res[i]));
    for (int i = 0; i < 4; i++)
        h = mix(h, (uint64_t)op->i[i]);
    uint64_t fb;
    memcpy(&fb, &op->f, sizeof fb);
    return mix(h, fb);
}

static bool
same_args(const IrOp *a, const IrOp *b)
{
    if (a->nargs != b->nargs)
        return false;
    if (memcmp(a->args, b->args, sizeof(IrRef) * a->nargs) == 0)
        return true;
    return (ir_opc_flags[a->opc] & IR_F_COMM) && a->nargs == 2 && a->args[0] == b->args[1] &&
           a->args[1] == b->args[0];
}

static bool
equal(Cse *c, const IrOp *a, const IrOp *b)
{
    if (a->opc != b->opc || a->nres != b->nres || a->nints != b->nints || !same_args(a, b))
        return false;
    if (memcmp(a->i, b->i, sizeof a->i) != 0 || memcmp(&a->f, &b->f, sizeof a->f) != 0)
        return false;
    if ((a->s == NULL) != (b->s == NULL) || (a->s && strcmp(a->s, b->s) != 0))
        return false;
    if (a->nints && memcmp(a->ints, b->ints, sizeof(int64_t) * a->nints) != 0)
        return false;
    for (uint32_t i = 0; i < a->nres; i++)
        if (ir_val_type(c->f, a->res[i]) != ir_val_type(c->f, b->res[i]))
            return false;
    return true;
}

static IrOp *
lookup(Cse *c, IrOp *op, uint32_t h)
{
    for (int i = c->head[h & (c->nbucket - 1)]; i >= 0; i = c->e[i].prev)
        if (c->e[i].hash == h && equal(c, c->e[i].op, op))
            return c->e[i].op;
    return NULL;
}

static void
insert(Cse *c, IrOp *op, uint32_t h)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->e = realloc(c->e, sizeof(Entry) * (size_t)c->cap);
        if (!c->e)
            ir_die("out of memory");
    }
    uint32_t b = h & (c->nbucket - 1);
    c->e[c->n] = (Entry){op, h, c->head[b]};
    c->head[b] = c->n++;
}

static void
pop(Cse *c, int mark)
{
    while (c->n > mark) {
        Entry *e = &c->e[--c->n];
        c->head[e->hash & (c->nbucket - 1)] = e->prev;
    }
}

static void
cse_block(Cse *c, IrBlock *b)
{
    int mark = c->n;
    for (IrOp *op = b->first, *next; op; op = next) {
        next = op->next;
        for (uint32_t r = 0; r < op->nregs; r++)
            cse_block(c, op->regs[r]);
        if (!candidate(op))
            continue;
        uint32_t h = hash_op(c, op);
        IrOp *same = lookup(c, op, h);
        if (!same) {
            insert(c, op, h);
            continue;
        }
        for (uint32_t i = 0; i < op->nres; i++)
            ir_replace_uses(c->f, op->res[i], same->res[i]);
        ir_op_unlink(op);
    }
    pop(c, mark);
}

static void
count_op(IrOp *op, void *user)
{
    (void)op;
    (*(uint32_t *)user)++;
}

void
ir_cse(IrFunc *f)
{
    Cse c = {.f = f};
    uint32_t nops = 0;
    ir_walk(f->body, count_op, &nops);
    c.nbucket = 64;
    while (c.nbucket < 2 * nops)
        c.nbucket *= 2;
    c.head = malloc(sizeof(int) * c.nbucket);
    if (!c.head)
        ir_die("out of memory");
    for (uint32_t i = 0; i < c.nbucket; i++)
        c.head[i] = -1;
    cse_block(&c, f->body);
    free(c.head);
    free(c.e);
}
