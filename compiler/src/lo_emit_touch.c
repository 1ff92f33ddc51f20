/* Scope-boundary touches of lazy tile loads (instrumented builds only).
 *
 * A load scope's exit must see its loads done (issue 12 item 2), but copying the
 * tile into a buffer streams at ~0.6 of a pure read on some CPUs (Zen 4). Instead,
 * a full, unit-stride tile load is touched: one element of each 64-byte line is
 * loaded and kept alive by an empty inline asm, the loads are left lazy (their
 * consumers read the tile again, now from cache, exactly as the plain kernel does,
 * so results are bit-identical), and a fence (lfence on x86-64, fence on RISC-V)
 * orders the touches before the exit record's clock read. Tiles this cannot touch
 * (masked regions, strided inner dims, wraps) fall back to le_load_snapshot. */
#include "lo_int.h"

#include <string.h>

enum { TOUCH_LINE_BYTES = 64 };

/* Can v be touched in place: a full-region view load with a unit-stride last dim? */
static bool
touchable(LeCtx *c, IrRef v, const LpMem **out)
{
    IrOp *ld = c->f->vals[v].def;
    if (!ld || ld->opc != IR_LOAD || !ir_type_is_tensor(c->m, c->f->vals[v].type))
        return false;
    const LpMem *mem = lp_mem(c->plan, ld);
    if (!mem || mem->access != LA_VIEW || mem->param < 0 || !lp_region_is_full(&mem->reg))
        return false;
    int rank = ir_type_rank(c->m, c->f->vals[v].type);
    int64_t inner = 0;
    for (int k = 0; k < rank; k++)
        if (mem->form.wrap[k])
            return false;
    if (rank < 1 || !mem->form.coef[rank - 1] || !ax_is_const(mem->form.coef[rank - 1], &inner) || inner != 1)
        return false;
    int d = ir_type_dtype(c->m, ir_type_elem(c->m, c->f->vals[v].type));
    int bits = d >= 0 ? ir_dtype_bits((IrDtype)d) : 0;
    if ((bits != 8 && bits != 16 && bits != 32 && bits != 64) ||
        !(ir_dtype_is_int((IrDtype)d) || ir_dtype_is_float((IrDtype)d)))
        return false;
    *out = mem;
    return true;
}

bool
le_load_touch(LeCtx *c, IrRef v)
{
    const LpMem *mem;
    if (!touchable(c, v, &mem))
        return false;
    IrType vt_ir = c->f->vals[v].type, et = ir_type_elem(c->m, vt_ir);
    int rank = ir_type_rank(c->m, vt_ir), d = ir_type_dtype(c->m, et), bits = ir_dtype_bits((IrDtype)d);
    const int64_t *shape = ir_type_shape(c->m, vt_ir);
    LoIter it;
    le_iter(c, &mem->reg, rank, shape, &it);
    bool unit[IR_MAX_RANK] = {0};
    LoType vt;
    unsigned view = le_view(c, mem->param, et, rank, mem->form.base, mem->form.coef, it.lo, it.size, shape, false,
                            unit, &vt);
    const char *vts = le_ty(c, &vt);
    int64_t line = TOUCH_LINE_BYTES * 8 / bits;
    unsigned zero = le_const_index(c, 0), one = le_const_index(c, 1), step = le_const_index(c, line);
    unsigned hi[IR_MAX_RANK], iv[IR_MAX_RANK];
    for (int k = 0; k < rank; k++)
        hi[k] = le_const_index(c, shape[k]);
    LoBuf *o = c->out;
    int saved = c->scope;
    for (int k = 0; k < rank; k++) {
        iv[k] = lo_fresh(o);
        lo_line(o, "scf.for %%v%u = %%v%u to %%v%u step %%v%u {", iv[k], zero, hi[k], k == rank - 1 ? step : one);
        o->indent += 2;
    }
    le_scope_push(c);
    unsigned x = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = memref.load %%v%u[", o->indent, "", x, view);
    for (int k = 0; k < rank; k++)
        lo_printf(o, "%s%%v%u", k ? ", " : "", iv[k]);
    lo_printf(o, "] : %s\n", vts);
    const char *es = le_elem(c, et);
    if (!ir_dtype_is_int((IrDtype)d))
        x = lo_emit(o, "arith.bitcast %%v%u : %s to i%d", x, es, bits);
    lo_line(o, "llvm.inline_asm has_side_effects \"\", \"r\" %%v%u : (i%d) -> ()", x, bits);
    le_scope_pop(c, saved);
    for (int k = 0; k < rank; k++) {
        o->indent -= 2;
        lo_line(o, "}");
    }
    return true;
}

void
le_scope_fence(LeCtx *c)
{
    lo_line(c->out, "llvm.inline_asm has_side_effects \"%s\", \"~{memory}\" : () -> ()",
            c->opt->riscv ? "fence" : "lfence");
}
