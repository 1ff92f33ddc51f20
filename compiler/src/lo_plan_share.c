/*
 * lo_plan_share.c — which element-wise tiles are computed once instead of in
 * every consumer.
 *
 * A lazy tile (LP_TILE) is evaluated inside the generic of each consumer, which
 * is free for cheap expressions and doubles the work of an expensive one read by
 * two generics: softmax's `e = exp(x - max)` is read by its sum and by the store
 * of `e / sum`. A tile whose expression contains math the lowering expands into
 * polynomials (lo_math_expands) and that reaches two or more distinct
 * materialisation points (reductions, stores, dots, loop yields, ... — any user
 * that is not itself a lazy tile) is marked `shared`: the emitter materialises it
 * where it is defined, and its consumers read the tensor — when the tile is at
 * most LO_SHARE_TILE_BYTES. Up to LO_STACK_TILE_BYTES it lives on the stack;
 * above, it is a malloc per program, which glibc serves from the thread's heap
 * after the first (its mmap threshold rises to the freed size): softmax at
 * 32 x 32768 fp32 (a 128 KiB tile) went from 0.92x to 1.44x torch on one Zen 4
 * thread. The limit keeps the tile and the row it comes from within a 512 KiB L2.
 */
#include "lo_int.h"

#include <stdlib.h>

#define LO_SHARE_TILE_BYTES (256 * 1024)

typedef struct Sinks {
    const IrOp *first; /* one materialisation point reached */
    bool many;         /* a second, distinct one */
    bool expensive;    /* the expression contains expanded math */
} Sinks;

static void
add_sink(Sinks *s, const IrOp *op)
{
    if (!s->first)
        s->first = op;
    else if (s->first != op)
        s->many = true;
}

static bool
is_lazy_tile(const LoPlan *p, IrRef v)
{
    return v && p->vals[v].kind == LP_TILE;
}

void
lp_plan_share(LoPlan *p, const IrOp **order, uint32_t nord)
{
    uint32_t n = p->f->nvals;
    Sinks *s = calloc(n, sizeof *s);
    if (!s)
        ir_die("out of memory");
    for (uint32_t i = 0; i < nord; i++) { /* forward: what each tile's expression contains */
        const IrOp *op = order[i];
        if (op->nres != 1 || !is_lazy_tile(p, op->res[0]))
            continue;
        bool e = lo_math_expands((IrOpc)op->opc);
        for (uint32_t a = 0; a < op->nargs && !e; a++)
            e = is_lazy_tile(p, op->args[a]) && s[op->args[a]].expensive;
        s[op->res[0]].expensive = e;
    }
    for (uint32_t i = nord; i-- > 0;) { /* backward: where each tile is materialised */
        const IrOp *op = order[i];
        bool lazy = op->nres == 1 && is_lazy_tile(p, op->res[0]);
        for (uint32_t a = 0; a < op->nargs; a++) {
            IrRef v = op->args[a];
            if (!is_lazy_tile(p, v))
                continue;
            if (!lazy) {
                add_sink(&s[v], op);
                continue;
            }
            const Sinks *u = &s[op->res[0]];
            if (u->first)
                add_sink(&s[v], u->first);
            if (u->many)
                s[v].many = true;
        }
    }
    for (uint32_t v = 1; v < n; v++) {
        int dt = ir_type_dtype(p->m, p->f->vals[v].type);
        if (s[v].expensive && s[v].many && dt >= 0 && ir_dtype_is_float((IrDtype)dt) &&
            ir_type_numel(p->m, p->f->vals[v].type) * (ir_dtype_bits((IrDtype)dt) / 8) <= LO_SHARE_TILE_BYTES)
            p->vals[v].shared = 1;
    }
    free(s);
}
