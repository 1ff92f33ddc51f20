/*
 * lo_emit_touch.c — an in-kernel scope boundary's read of a lazy view load
 * (instrumented kernels only; docs/compiler.md §2.1, docs/proton.md "In-kernel scopes").
 *
 * A scope boundary must do the work of the loads defined before it, so that
 * `pl.enter_scope("load") ... pl.exit_scope("load")` measures the load. A load the plan
 * reads in place (a strided view of a kernel argument) is not copied there: its valid
 * region is summed with `addi` over its bits into one integer (a row reduction, so it
 * is vectorised with a vector accumulator), and that integer goes to an empty inline-asm
 * statement with side effects, which keeps the reads without storing anything. The
 * combine is an add, not an or: LLVM rebalances an or chain into vpternlogd trees and
 * schedules their loads out of address order (line 25 of a 2 KB step before line 6),
 * which on Zen 4 cut the fold's streaming read to 0.57-0.64 of an in-order loop's;
 * an add chain keeps one load-op per line in address order, as the plain sum. The
 * consumers after the boundary still read the view in place, as in the plain kernel,
 * so results do not change; the tile is then in cache (a tile is cache-sized).
 * Loads of other kinds (gathers, broadcasting or non-uniformly padded views, i1) are
 * still snapshot into a buffer by the caller.
 */
#include "lo_int.h"

#include <stdio.h>

/* The integer dtype of an element type's bits, or -1 when it has no fold. */
static int
bits_dtype(int elem)
{
    if (elem == LT_INDEX || elem == IR_I1)
        return -1;
    switch (ir_dtype_bits((IrDtype)elem)) {
    case 8: return IR_I8;
    case 16: return IR_I16;
    case 32: return IR_I32;
    case 64: return IR_I64;
    default: return -1;
    }
}

bool
le_load_touch(LeCtx *c, IrRef v)
{
    IrVal *val = &c->f->vals[v];
    int idt = bits_dtype(ir_type_dtype(c->m, ir_type_elem(c->m, val->type)));
    if (idt < 0)
        return false;
    LoIter it;
    LoType tt;
    unsigned t = le_load_view_tensor(c, v, &it, &tt);
    if (!t)
        return false;
    LoBuf *o = c->out;
    LoType st = lt_tensor(idt, 0, NULL);
    unsigned init = le_fill(c, &st, le_const(c, idt, 0, 0));
    int r = tt.rank;
    /* outer dims one by one, the innermost with a vector accumulator (a static extent
     * of several vectors) or in vector-long tiles (a peeled, masked remainder) */
    int vl = c->opt->vector_bytes / ((ir_dtype_bits((IrDtype)idt) + 7) / 8);
    vl = vl < 1 ? 1 : vl;
    int64_t tile[IR_MAX_RANK], lanes = 0, e = tt.shape[r - 1];
    for (int d = 0; d < r - 1; d++)
        tile[d] = tt.shape[d] == 1 ? 0 : 1;
    tile[r - 1] = 0;
    if (e != LT_DYN && e > vl && e % vl == 0)
        lanes = le_reduction_lanes(e, vl);
    else if (e == LT_DYN || e > vl) {
        tile[r - 1] = vl;
    }
    const char *is = lt_elem_name(idt), *es = lt_elem_name(tt.elem);
    unsigned res = lo_fresh(o), a = lo_fresh(o), b = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = linalg.generic {indexing_maps = [affine_map<(", o->indent, "", res);
    for (int d = 0; d < r; d++)
        lo_printf(o, "%sd%d", d ? ", " : "", d);
    lo_printf(o, ") -> (");
    for (int d = 0; d < r; d++)
        lo_printf(o, "%sd%d", d ? ", " : "", d);
    lo_printf(o, ")>, affine_map<(");
    for (int d = 0; d < r; d++)
        lo_printf(o, "%sd%d", d ? ", " : "", d);
    lo_printf(o, ") -> ()>], iterator_types = [");
    for (int d = 0; d < r; d++)
        lo_printf(o, "%s\"reduction\"", d ? ", " : "");
    lo_printf(o, "]} ins(%%v%u : %s)", t, le_ty(c, &tt));
    lo_printf(o, " outs(%%v%u : %s)", init, le_ty(c, &st));
    le_kind_attrs(c, o, "row_reduction", r, tile, lanes);
    lo_printf(o, " {\n%*s^bb0(%%v%u: %s, %%v%u: %s):\n", o->indent, "", a, es, b, is);
    o->indent += 2;
    unsigned x = a;
    if (ir_dtype_is_float((IrDtype)tt.elem))
        x = lo_emit(o, "arith.bitcast %%v%u : %s to %s", a, es, is);
    unsigned y = lo_emit(o, "arith.addi %%v%u, %%v%u : %s", b, x, is);
    lo_line(o, "linalg.yield %%v%u : %s", y, is);
    o->indent -= 2;
    lo_line(o, "} -> %s", le_ty(c, &st));
    unsigned s = lo_emit(o, "tensor.extract %%v%u[] : %s", res, le_ty(c, &st));
    lo_line(o, "llvm.inline_asm has_side_effects \"\", \"r\" %%v%u : (%s) -> ()", s, is);
    return true;
}
