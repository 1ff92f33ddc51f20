/*
 * lo_emit_prefetch.c — software prefetch of a dot's next operand tiles.
 *
 * A dot in a K loop copies its A and B tiles out of memory at the start of every
 * iteration; those rows are a row stride apart (a page each for large matrices), too
 * many streams for the hardware prefetchers, so the copies stall on memory while the
 * FMA units idle. The tile the next iteration reads is, in the K loop every matmul
 * writes, the same tile moved by its K extent along K (A's last dim, B's first):
 * while the micro-kernel runs, its cache lines are prefetched, a share at a time
 * (per column panel of the fp32 micro-kernel, per register block of the bf16 one).
 * Only loads inside a loop are followed. A guess that misses (no next iteration,
 * another walk) costs only the prefetch instructions: llvm.prefetch never faults,
 * whatever the address (x86 prefetcht0; RISC-V prefetch.r with Zicbop, else nothing).
 */
#include "lo_int.h"

#include <string.h>

/* Cache line in bytes, the granularity of the prefetches. */
#define LINE 64

/* Is op inside a loop (a next iteration to prefetch for)? */
static bool
in_loop(const IrOp *op)
{
    for (const IrBlock *b = op->parent; b && b->parent; b = b->parent->parent)
        if (b->parent->opc == IR_FOR || b->parent->opc == IR_WHILE)
            return true;
    return false;
}

bool
le_prefetch_plan(LeCtx *c, IrRef v, int kdim, int64_t kext, LePrefetch *p)
{
    memset(p, 0, sizeof *p);
    IrOp *ld = c->f->vals[v].def;
    if (ld && !in_loop(ld))
        return false;
    IrType t = c->f->vals[v].type;
    if (!ld || ld->opc != IR_LOAD || !ir_type_is_tensor(c->m, t) || ir_type_rank(c->m, t) != 2)
        return false;
    const LpMem *mem = lp_mem(c->plan, ld);
    if (!mem || mem->access != LA_VIEW || mem->param < 0 || mem->form.wrap[0] || mem->form.wrap[1])
        return false;
    const int64_t *shape = ir_type_shape(c->m, t);
    int cd = -1; /* the contiguous dim */
    for (int d = 0; d < 2; d++) {
        int64_t one;
        if (ax_is_const(mem->form.coef[d], &one) && one == 1)
            cd = d;
    }
    if (cd < 0)
        return false;
    int od = 1 - cd, esize = ir_dtype_bits((IrDtype)ir_type_dtype(c->m, ir_type_elem(c->m, t))) / 8;
    if (esize < 1)
        return false;
    p->step = LINE / esize;
    p->lpr = (shape[cd] + p->step - 1) / p->step;
    p->rows = shape[od];
    if (p->lpr > 64 || p->rows < 1)
        return false;
    const AExpr *next = ax_add(c->x, mem->form.base, ax_mul(c->x, mem->form.coef[kdim], ax_const(c->x, kext)));
    p->base = le_index(c, next);
    p->rstride = le_index(c, mem->form.coef[od]);
    LoType mt = lt_scalar(ir_type_dtype(c->m, ir_type_elem(c->m, t)));
    mt.kind = LT_MEMREF;
    mt.rank = 1;
    mt.shape[0] = LT_DYN;
    p->ptr = lo_emit(c->out, "memref.extract_aligned_pointer_as_index %%v%u : %s -> index", c->param_ssa[mem->param],
                     le_ty(c, &mt));
    p->esize = esize;
    c->decl_prefetch = 1;
    return true;
}

void
le_prefetch_rows(LeCtx *c, const LePrefetch *p, unsigned part, int64_t parts)
{
    LoBuf *o = c->out;
    int64_t chunk = (p->rows + parts - 1) / parts;
    unsigned r0, r1;
    if (part) {
        r0 = lo_emit(o, "arith.muli %%v%u, %%v%u : index", part, le_const_index(c, chunk));
        unsigned e = lo_emit(o, "arith.addi %%v%u, %%v%u : index", r0, le_const_index(c, chunk));
        r1 = lo_emit(o, "arith.minsi %%v%u, %%v%u : index", e, le_const_index(c, p->rows));
    } else {
        r0 = le_const_index(c, 0);
        r1 = le_const_index(c, p->rows);
    }
    unsigned one = le_const_index(c, 1), iv = lo_fresh(o);
    lo_line(o, "scf.for %%v%u = %%v%u to %%v%u step %%v%u {", iv, r0, r1, one);
    int saved = c->scope;
    le_scope_push(c);
    o->indent += 2;
    unsigned at = lo_emit(o, "arith.muli %%v%u, %%v%u : index", iv, p->rstride);
    at = lo_emit(o, "arith.addi %%v%u, %%v%u : index", at, p->base);
    /* the address in bytes: the argument's aligned pointer (its memref has offset 0) */
    at = lo_emit(o, "arith.muli %%v%u, %%v%u : index", at, le_const_index(c, p->esize));
    at = lo_emit(o, "arith.addi %%v%u, %%v%u : index", at, p->ptr);
    /* the intrinsic's immediates: arith constants, which an outlined parallel body clones */
    unsigned rw = lo_emit(o, "arith.constant 0 : i32"), loc = lo_emit(o, "arith.constant 3 : i32"),
             data = lo_emit(o, "arith.constant 1 : i32");
    for (int64_t j = 0; j < p->lpr; j++) {
        unsigned x = j ? lo_emit(o, "arith.addi %%v%u, %%v%u : index", at, le_const_index(c, j * LINE)) : at;
        unsigned xi = lo_emit(o, "arith.index_cast %%v%u : index to i64", x);
        unsigned xp = lo_emit(o, "llvm.inttoptr %%v%u : i64 to !llvm.ptr", xi);
        lo_line(o, "llvm.call @llvm.prefetch.p0(%%v%u, %%v%u, %%v%u, %%v%u) : (!llvm.ptr, i32, i32, i32) -> ()", xp, rw,
                loc, data);
    }
    o->indent -= 2;
    le_scope_pop(c, saved);
    lo_line(o, "}");
}
