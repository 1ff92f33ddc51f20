/*
 * lo_mem.c — loads, stores and block pointers in the Linalg lowering.
 *
 * Tensor loads are lazy (lo_elem.c reads them inside the consumer's generic);
 * this file builds the strided views they read, materialises padded tiles when
 * a consumer needs the whole tile, and lowers stores:
 *   affine pointer + analysable mask  -> view of the valid region, one fused
 *                                        linalg.generic writing into it;
 *   anything else                     -> materialised value, mask and element
 *                                        offsets, and an scf.for nest of guarded
 *                                        memref.store (a compiler remark says so).
 * Block pointers (tl.make_block_ptr / tl.advance) are base + shape + strides +
 * offsets; boundary_check becomes the valid region, padding_option the pad value.
 */
#include "lo_int.h"

#include <math.h>
#include <string.h>

/* ---- views ------------------------------------------------------------------------ */

static const char *
melem(LoCtx *c, IrType elem)
{
    return ir_dtype_mlir((IrDtype)ir_type_dtype(c->m, elem));
}

/* Common view builder: element offset 'base' (AExpr), per-dim coefficients. */
static unsigned
view_common(LoCtx *c, int param, IrType elem, int r, const AExpr *base, const AExpr *const *coef,
            const unsigned *start, const unsigned *size, const int64_t *ssize, bool allow_unit, bool *unit,
            char *mtype, size_t mcap)
{
    const AExpr *off = base;
    for (int k = 0; k < r; k++)
        if (start && start[k])
            off = ax_add(c, off, ax_mul(c, coef[k], ax_ssa(c, start[k])));
    int64_t ov;
    bool off_static = ax_is_const(off, &ov);
    unsigned offs = off_static ? 0 : lo_aexpr_emit(c, off);
    char sizes[256] = "", strides[256] = "", tsz[256] = "", tst[256] = "";
    size_t ns = 0, nt = 0, nts = 0, ntt = 0;
    for (int k = 0; k < r; k++) {
        int64_t cv;
        bool cst = ax_is_const(coef[k], &cv);
        unit[k] = allow_unit && cst && cv == 0 && ssize[k] != 1;
        const char *sep = k ? ", " : "";
        if (unit[k] || ssize[k] == 1) {
            ns += (size_t)snprintf(sizes + ns, sizeof sizes - ns, "%s1", sep);
            nts += (size_t)snprintf(tsz + nts, sizeof tsz - nts, "1x");
        } else if (size && size[k]) {
            ns += (size_t)snprintf(sizes + ns, sizeof sizes - ns, "%s%%v%u", sep, size[k]);
            nts += (size_t)snprintf(tsz + nts, sizeof tsz - nts, "?x");
        } else {
            ns += (size_t)snprintf(sizes + ns, sizeof sizes - ns, "%s%lld", sep, (long long)ssize[k]);
            nts += (size_t)snprintf(tsz + nts, sizeof tsz - nts, "%lldx", (long long)ssize[k]);
        }
        if (cst && cv == 0 && (unit[k] || ssize[k] == 1))
            cv = 1; /* a size-1 dim's stride is never used, and MLIR rejects a static 0 */
        if (cst) {
            nt += (size_t)snprintf(strides + nt, sizeof strides - nt, "%s%lld", sep, (long long)cv);
            ntt += (size_t)snprintf(tst + ntt, sizeof tst - ntt, "%s%lld", sep, (long long)cv);
        } else {
            nt += (size_t)snprintf(strides + nt, sizeof strides - nt, "%s%%v%u", sep, lo_aexpr_emit(c, coef[k]));
            ntt += (size_t)snprintf(tst + ntt, sizeof tst - ntt, "%s?", sep);
        }
    }
    char offtxt[32], offty[32];
    if (off_static) {
        snprintf(offtxt, sizeof offtxt, "%lld", (long long)ov);
        snprintf(offty, sizeof offty, "%lld", (long long)ov);
    } else {
        snprintf(offtxt, sizeof offtxt, "%%v%u", offs);
        snprintf(offty, sizeof offty, "?");
    }
    const char *et = melem(c, elem);
    snprintf(mtype, mcap, "memref<%s%s, strided<[%s], offset: %s>>", tsz, et, tst, offty);
    return lo_emit(c->out, "memref.reinterpret_cast %%v%u to offset: [%s], sizes: [%s], strides: [%s] : memref<?x%s> to %s",
                   c->param_ssa[param], offtxt, sizes, strides, et, mtype);
}

unsigned
lo_view(LoCtx *c, const PtrForm *p, const unsigned *start, const unsigned *size, const int64_t *ssize,
        bool allow_unit, bool *unit, char *mtype, size_t mcap)
{
    return view_common(c, p->param, p->elem, p->off.rank, p->off.base, p->off.coef, start, size, ssize,
                       allow_unit, unit, mtype, mcap);
}

void
lo_view_tensor_type(LoCtx *c, IrType elem, int rank, const unsigned *size, const int64_t *ssize, const bool *unit,
                    char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "tensor<");
    for (int k = 0; k < rank && n < cap; k++) {
        if (unit[k] || ssize[k] == 1)
            n += (size_t)snprintf(buf + n, cap - n, "1x");
        else if (size && size[k])
            n += (size_t)snprintf(buf + n, cap - n, "?x");
        else
            n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)ssize[k]);
    }
    if (n < cap)
        snprintf(buf + n, cap - n, "%s>", melem(c, elem));
}

/* ---- block pointers ------------------------------------------------------------------ */

static BlockPtr *
bptr_of(LoCtx *c, IrRef v)
{
    LoVal *lv = &c->vals[v];
    return lv->kind == LV_BPTR ? lv->bp : NULL;
}

int
lo_make_block_ptr(LoCtx *c, IrOp *op)
{
    PtrForm *p = lo_ptrform(c, op->args[0]);
    if (!p || p->ngen || p->off.rank)
        return lo_error(c, op->loc, "tl.make_block_ptr: base must be a kernel pointer argument (plus offsets)");
    int r = (int)(op->nargs - 1) / 3;
    BlockPtr *bp = ir_new(&c->m->arena, BlockPtr);
    bp->param = p->param;
    bp->elem = p->elem;
    bp->rank = r;
    bp->base = p->off.base;
    IrType pt = ir_type_pointee(c->m, c->f->vals[op->res[0]].type);
    const int64_t *blk = ir_type_shape(c->m, pt);
    for (int k = 0; k < r; k++) {
        bp->shape[k] = ax_val(c, op->args[1 + k]);
        bp->stride[k] = ax_val(c, op->args[1 + r + k]);
        bp->off[k] = ax_val(c, op->args[1 + 2 * r + k]);
        bp->block[k] = blk[k];
        bp->order[k] = op->ints[k];
    }
    LoVal *lv = &c->vals[op->res[0]];
    lv->kind = LV_BPTR;
    lv->bp = bp;
    return 0;
}

int
lo_advance(LoCtx *c, IrOp *op)
{
    BlockPtr *x = bptr_of(c, op->args[0]);
    if (!x)
        return lo_error(c, op->loc, "tl.advance: unsupported block pointer");
    BlockPtr *bp = ir_new(&c->m->arena, BlockPtr);
    *bp = *x;
    for (int k = 0; k < bp->rank; k++)
        bp->off[k] = ax_add(c, x->off[k], ax_val(c, op->args[1 + k]));
    LoVal *lv = &c->vals[op->res[0]];
    lv->kind = LV_BPTR;
    lv->bp = bp;
    return 0;
}

/* Boundary-checked region of a block pointer: in dim k (checked), tile index i is
 * valid when 0 <= off + i < shape, i.e. i in [-off, shape - off). */
static void
bptr_region(LoCtx *c, const BlockPtr *bp, const int64_t *checks, int nchecks, Region *r)
{
    memset(r, 0, sizeof *r);
    r->rank = bp->rank;
    for (int i = 0; i < nchecks; i++) {
        int k = (int)checks[i];
        const AExpr *lo = ax_neg(c, bp->off[k]);
        int64_t v;
        r->lo[k] = ax_is_const(lo, &v) && v <= 0 ? NULL : lo;
        r->hi[k] = ax_add(c, bp->shape[k], ax_neg(c, bp->off[k]));
    }
}

static unsigned
bptr_view(LoCtx *c, const BlockPtr *bp, const unsigned *start, const unsigned *size, const int64_t *ssize,
          bool allow_unit, bool *unit, char *mtype, size_t mcap)
{
    const AExpr *base = bp->base;
    for (int k = 0; k < bp->rank; k++)
        base = ax_add(c, base, ax_mul(c, bp->off[k], bp->stride[k]));
    return view_common(c, bp->param, bp->elem, bp->rank, base, bp->stride, start, size, ssize, allow_unit, unit,
                       mtype, mcap);
}

/* ---- tensor loads -------------------------------------------------------------------------- */

int
lo_load_region(LoCtx *c, IrOp *ld, Region *r)
{
    BlockPtr *bp = bptr_of(c, ld->args[0]);
    if (bp) {
        bptr_region(c, bp, ld->ints, (int)ld->nints, r);
        return 0;
    }
    PtrForm *p = lo_ptrform(c, ld->args[0]);
    if (!p || p->ngen)
        return -1;
    int rank = ir_type_rank(c->m, c->f->vals[ld->res[0]].type);
    if (ld->nargs < 2) {
        memset(r, 0, sizeof *r);
        r->rank = rank;
        return 0;
    }
    return lo_mask_region(c, ld->args[1], r);
}

unsigned
lo_load_view(LoCtx *c, IrOp *ld, const unsigned *start, const unsigned *size, const int64_t *ssize,
             bool allow_unit, bool *unit, char *mtype, size_t mcap)
{
    BlockPtr *bp = bptr_of(c, ld->args[0]);
    if (bp)
        return bptr_view(c, bp, start, size, ssize, allow_unit, unit, mtype, mcap);
    PtrForm *p = lo_ptrform(c, ld->args[0]);
    return lo_view(c, p, start, size, ssize, allow_unit, unit, mtype, mcap);
}

/* Scalar SSA of the padding value of a load (other, or the block pointer padding). */
static unsigned
pad_value(LoCtx *c, IrOp *ld, IrType elem, bool *uniform)
{
    int d = ir_type_dtype(c->m, elem);
    *uniform = true;
    if (bptr_of(c, ld->args[0])) {
        double v = 0;
        switch (ld->i[0]) {
        case IR_PAD_NAN: v = NAN; break;
        case IR_PAD_NEG_INF: v = -INFINITY; break;
        case IR_PAD_INF: v = INFINITY; break;
        default: break;
        }
        return lo_emit_const(c, d, 0, v);
    }
    if (ld->nargs < 3)
        return lo_emit_const(c, d, 0, 0.0);
    IrOp *od = c->f->vals[ld->args[2]].def;
    if (od && od->opc == IR_CONST)
        return lo_emit_const(c, d, od->i[0], od->f);
    if (od && od->opc == IR_SPLAT)
        return lo_scalar(c, od->args[0]);
    *uniform = false;
    return 0;
}

unsigned
lo_load_materialize(LoCtx *c, IrRef v)
{
    LoVal *lv = &c->vals[v];
    if (lv->ssa && lo_scope_visible(c, lv->scope))
        return lv->ssa;
    IrVal *val = &c->f->vals[v];
    IrOp *ld = val->def;
    IrType elem = ir_type_elem(c->m, val->type);
    int r = ir_type_rank(c->m, val->type);
    const int64_t *shape = ir_type_shape(c->m, val->type);
    Region reg;
    bool uniform = false;
    unsigned pad = 0;
    unsigned res;
    if (lo_load_region(c, ld, &reg) == 0 && !reg.cond && (pad = pad_value(c, ld, elem, &uniform), uniform)) {
        LoIter it;
        lo_iter_from_region(c, &reg, r, shape, &it);
        bool unit[IR_MAX_RANK] = {0};
        char mt[256], tt[200], ft[200];
        unsigned view = lo_load_view(c, ld, it.lo, it.size, shape, false, unit, mt, sizeof mt);
        lo_view_tensor_type(c, elem, r, it.size, shape, unit, tt, sizeof tt);
        unsigned t = lo_emit(c->out, "bufferization.to_tensor %%v%u restrict : %s", view, mt);
        lo_tensor_type(c, val->type, ft, sizeof ft);
        bool padded = false;
        for (int k = 0; k < r; k++)
            padded |= it.lo[k] || it.size[k];
        if (!padded) {
            /* copy: the tile must not change if memory is written later */
            res = lo_emit(c->out, "tensor.empty() : %s", ft);
            res = lo_emit(c->out, "linalg.copy ins(%%v%u : %s) outs(%%v%u : %s) -> %s", t, tt, res, ft, ft);
        } else {
            char low[256] = "", high[256] = "";
            size_t nl = 0, nh = 0;
            for (int k = 0; k < r; k++) {
                const char *sep = k ? ", " : "";
                unsigned hi_pad = 0;
                if (it.size[k]) {
                    unsigned used = it.lo[k] ? lo_emit(c->out, "arith.addi %%v%u, %%v%u : index", it.lo[k], it.size[k])
                                             : it.size[k];
                    hi_pad = lo_emit(c->out, "arith.subi %%v%u, %%v%u : index", lo_const_index(c, shape[k]), used);
                }
                if (it.lo[k])
                    nl += (size_t)snprintf(low + nl, sizeof low - nl, "%s%%v%u", sep, it.lo[k]);
                else
                    nl += (size_t)snprintf(low + nl, sizeof low - nl, "%s0", sep);
                if (hi_pad)
                    nh += (size_t)snprintf(high + nh, sizeof high - nh, "%s%%v%u", sep, hi_pad);
                else
                    nh += (size_t)snprintf(high + nh, sizeof high - nh, "%s0", sep);
            }
            res = lo_fresh(c->out);
            lo_line(c->out, "%%v%u = tensor.pad %%v%u low[%s] high[%s] {", res, t, low, high);
            lo_printf(c->out, "%*s^bb0(", c->out->indent, "");
            for (int k = 0; k < r; k++)
                lo_printf(c->out, "%s%%v%u: index", k ? ", " : "", lo_fresh(c->out));
            lo_printf(c->out, "):\n");
            lo_line(c->out, "  tensor.yield %%v%u : %s", pad, melem(c, elem));
            lo_line(c->out, "} : %s to %s", tt, ft);
        }
    } else {
        /* gather, unanalysable mask or non-uniform other: guarded element loads */
        LoIter it;
        lo_iter_from_region(c, NULL, r, shape, &it);
        lv->ssa = 0;
        lv->gathering = 1; /* load_leaf must not come back here for this load */
        res = lo_generic_store(c, &it, v, 0, NULL);
        lv = &c->vals[v];
        lv->gathering = 0;
        lo_remark(c, ld->loc, "tl.load lowered to element-wise guarded loads (pointer or mask not analysable)");
    }
    lv->ssa = res;
    lv->scope = c->scope;
    lv->as_i8 = 0;
    return res;
}

/* ---- scalar loads -------------------------------------------------------------------------- */

static unsigned
scalar_index(LoCtx *c, PtrForm *p)
{
    return lo_aexpr_emit(c, p->off.base);
}

int
lo_load(LoCtx *c, IrOp *op)
{
    IrType rt = c->f->vals[op->res[0]].type;
    LoVal *lv = &c->vals[op->res[0]];
    if (ir_type_is_tensor(c->m, rt)) {
        lv->kind = LV_LAZY;
        if (lv->eager)
            lo_load_materialize(c, op->res[0]);
        return 0;
    }
    if (bptr_of(c, op->args[0]))
        return lo_error(c, op->loc, "internal: scalar load from a block pointer");
    PtrForm *p = lo_ptrform(c, op->args[0]);
    if (!p || p->ngen)
        return lo_error(c, op->loc, "unsupported pointer expression in tl.load");
    const char *et = melem(c, p->elem);
    unsigned idx = scalar_index(c, p);
    unsigned mem = c->param_ssa[p->param];
    unsigned r;
    if (op->nargs < 2) {
        r = lo_emit(c->out, "memref.load %%v%u[%%v%u] : memref<?x%s>", mem, idx, et);
    } else {
        unsigned m = lo_scalar(c, op->args[1]);
        unsigned oth = op->nargs >= 3 ? lo_scalar(c, op->args[2]) : lo_emit_const(c, ir_type_dtype(c->m, p->elem), 0, 0);
        r = lo_fresh(c->out);
        lo_line(c->out, "%%v%u = scf.if %%v%u -> (%s) {", r, m, et);
        c->out->indent += 2;
        unsigned x = lo_emit(c->out, "memref.load %%v%u[%%v%u] : memref<?x%s>", mem, idx, et);
        lo_line(c->out, "scf.yield %%v%u : %s", x, et);
        c->out->indent -= 2;
        lo_line(c->out, "} else {");
        lo_line(c->out, "  scf.yield %%v%u : %s", oth, et);
        lo_line(c->out, "}");
    }
    lv->kind = LV_SCALAR;
    lv->ssa = r;
    lv->scope = c->scope;
    return 0;
}

/* ---- stores -------------------------------------------------------------------------------- */

static int
store_scalar(LoCtx *c, IrOp *op)
{
    PtrForm *p = lo_ptrform(c, op->args[0]);
    if (!p || p->ngen)
        return lo_error(c, op->loc, "unsupported pointer expression in tl.store");
    const char *et = melem(c, p->elem);
    unsigned idx = scalar_index(c, p), mem = c->param_ssa[p->param];
    unsigned v = lo_scalar(c, op->args[1]);
    if (op->nargs >= 3) {
        lo_line(c->out, "scf.if %%v%u {", lo_scalar(c, op->args[2]));
        lo_line(c->out, "  memref.store %%v%u, %%v%u[%%v%u] : memref<?x%s>", v, mem, idx, et);
        lo_line(c->out, "}");
    } else {
        lo_line(c->out, "memref.store %%v%u, %%v%u[%%v%u] : memref<?x%s>", v, mem, idx, et);
    }
    return 0;
}

/* Element-wise guarded stores through an scf.for nest (scatter fallback). */
static int
store_scatter(LoCtx *c, IrOp *op, PtrForm *p)
{
    IrRef ptr = op->args[0];
    IrType pt = c->f->vals[ptr].type;
    int r = ir_type_rank(c->m, pt);
    const int64_t *shape = ir_type_shape(c->m, pt);
    unsigned val = lo_materialize(c, op->args[1]);
    unsigned mask = op->nargs >= 3 ? lo_materialize(c, op->args[2]) : 0;
    unsigned offs = lo_offsets_tensor(c, ptr, p);
    char vt[200], mt[200], ot[200];
    lo_tensor_type(c, c->f->vals[op->args[1]].type, vt, sizeof vt);
    if (mask)
        lo_tensor_type(c, c->f->vals[op->args[2]].type, mt, sizeof mt);
    size_t n = (size_t)snprintf(ot, sizeof ot, "tensor<");
    for (int d = 0; d < r; d++)
        n += (size_t)snprintf(ot + n, sizeof ot - n, "%lldx", (long long)shape[d]);
    snprintf(ot + n, sizeof ot - n, "index>");
    unsigned iv[IR_MAX_RANK];
    unsigned one = lo_const_index(c, 1), zero = lo_const_index(c, 0);
    for (int d = 0; d < r; d++) {
        unsigned ub = lo_const_index(c, shape[d]);
        iv[d] = lo_fresh(c->out);
        lo_line(c->out, "scf.for %%v%u = %%v%u to %%v%u step %%v%u {", iv[d], zero, ub, one);
        c->out->indent += 2;
    }
    char idx[128] = "";
    size_t ni = 0;
    for (int d = 0; d < r; d++)
        ni += (size_t)snprintf(idx + ni, sizeof idx - ni, "%s%%v%u", d ? ", " : "", iv[d]);
    const char *et = melem(c, p->elem);
    unsigned x = lo_emit(c->out, "tensor.extract %%v%u[%s] : %s", val, idx, vt);
    if (ir_type_dtype(c->m, ir_type_elem(c->m, c->f->vals[op->args[1]].type)) == IR_I1)
        x = lo_emit(c->out, "arith.trunci %%v%u : i8 to i1", x);
    unsigned o = lo_emit(c->out, "tensor.extract %%v%u[%s] : %s", offs, idx, ot);
    if (mask) {
        unsigned mb = lo_emit(c->out, "tensor.extract %%v%u[%s] : %s", mask, idx, mt);
        unsigned m1 = lo_emit(c->out, "arith.trunci %%v%u : i8 to i1", mb);
        lo_line(c->out, "scf.if %%v%u {", m1);
        lo_line(c->out, "  memref.store %%v%u, %%v%u[%%v%u] : memref<?x%s>", x, c->param_ssa[p->param], o, et);
        lo_line(c->out, "}");
    } else {
        lo_line(c->out, "memref.store %%v%u, %%v%u[%%v%u] : memref<?x%s>", x, c->param_ssa[p->param], o, et);
    }
    for (int d = 0; d < r; d++) {
        c->out->indent -= 2;
        lo_line(c->out, "}");
    }
    lo_remark(c, op->loc, "tl.store lowered to element-wise guarded stores (pointer or mask not analysable)");
    return 0;
}

/* A store through a view of the valid region with one fused generic. */
static int
store_region(LoCtx *c, IrOp *op, const Region *reg, BlockPtr *bp, PtrForm *p)
{
    IrType pt = bp ? ir_type_pointee(c->m, c->f->vals[op->args[0]].type) : c->f->vals[op->args[0]].type;
    int r = ir_type_rank(c->m, pt);
    const int64_t *shape = ir_type_shape(c->m, pt);
    LoIter it;
    lo_iter_from_region(c, reg, r, shape, &it);
    bool unit[IR_MAX_RANK] = {0};
    char mt[256], tt[200];
    unsigned view = bp ? bptr_view(c, bp, it.lo, it.size, shape, false, unit, mt, sizeof mt)
                       : lo_view(c, p, it.lo, it.size, shape, false, unit, mt, sizeof mt);
    IrType elem = bp ? bp->elem : p->elem;
    lo_view_tensor_type(c, elem, r, it.size, shape, unit, tt, sizeof tt);
    unsigned dst = lo_emit(c->out, "bufferization.to_tensor %%v%u restrict writable : %s", view, mt);
    unsigned res = lo_generic_store(c, &it, op->args[1], dst, tt);
    lo_line(c->out, "bufferization.materialize_in_destination %%v%u in restrict writable %%v%u : (%s, %s) -> ()",
            res, view, tt, mt);
    return 0;
}

int
lo_store(LoCtx *c, IrOp *op)
{
    IrRef ptr = op->args[0];
    BlockPtr *bp = bptr_of(c, ptr);
    if (bp) {
        Region reg;
        bptr_region(c, bp, op->ints, (int)op->nints, &reg);
        return store_region(c, op, &reg, bp, NULL);
    }
    if (!ir_type_is_tensor(c->m, c->f->vals[ptr].type))
        return store_scalar(c, op);
    PtrForm *p = lo_ptrform(c, ptr);
    if (!p)
        return lo_error(c, op->loc, "unsupported pointer expression in tl.store");
    Region reg;
    int rank = ir_type_rank(c->m, c->f->vals[ptr].type);
    memset(&reg, 0, sizeof reg);
    reg.rank = rank;
    if (p->ngen || (op->nargs >= 3 && lo_mask_region(c, op->args[2], &reg) < 0))
        return store_scatter(c, op, p);
    /* a store whose pointer repeats along a dim (coefficient 0) is a scatter too */
    for (int k = 0; k < rank; k++) {
        int64_t cv;
        if (ax_is_const(p->off.coef[k], &cv) && cv == 0 && ir_type_shape(c->m, c->f->vals[ptr].type)[k] > 1)
            return store_scatter(c, op, p);
    }
    return store_region(c, op, &reg, NULL, p);
}

/* ---- atomics ---------------------------------------------------------------------------
 * tt.atomic_rmw / tt.atomic_cas on a scalar pointer become one memref.atomic_rmw (or
 * generic_atomic_rmw) guarded by the mask; on a tensor of pointers they run element by
 * element in an scf.for nest over the materialised values, mask and element offsets,
 * collecting the old values into the result tile. */

/* MLIR spelling of an IrRmw for memref.atomic_rmw, or NULL (generic form). */
static const char *
rmw_kind(int k, bool is_float)
{
    switch (k) {
    case IR_RMW_ADD: return is_float ? "addf" : "addi";
    case IR_RMW_FADD: return "addf";
    case IR_RMW_MAX: return is_float ? "maximumf" : "maxs";
    case IR_RMW_MIN: return is_float ? "minimumf" : "mins";
    case IR_RMW_UMAX: return "maxu";
    case IR_RMW_UMIN: return "minu";
    case IR_RMW_AND: return "andi";
    case IR_RMW_OR: return "ori";
    case IR_RMW_XCHG: return "assign";
    default: return NULL; /* xor */
    }
}

/* One atomic on mem[idx] with operand v (and cmp for CAS); returns the old value. */
static unsigned
atomic_one(LoCtx *c, IrOp *op, unsigned mem, unsigned idx, unsigned v, unsigned cmp, const char *et, bool is_float)
{
    const char *k = op->opc == IR_ATOMIC_RMW ? rmw_kind((int)op->i[0], is_float) : NULL;
    if (k)
        return lo_emit(c->out, "memref.atomic_rmw %s %%v%u, %%v%u[%%v%u] : (%s, memref<?x%s>) -> %s", k, v, mem, idx,
                       et, et, et);
    /* CAS and xor: LLVM atomics on the element's address (memref.generic_atomic_rmw
     * has a region the buffer-deallocation pass cannot handle) */
    unsigned base = lo_emit(c->out, "memref.extract_aligned_pointer_as_index %%v%u : memref<?x%s> -> index", mem, et);
    unsigned bi = lo_emit(c->out, "arith.index_cast %%v%u : index to i64", base);
    unsigned ii = lo_emit(c->out, "arith.index_cast %%v%u : index to i64", idx);
    unsigned bp = lo_emit(c->out, "llvm.inttoptr %%v%u : i64 to !llvm.ptr", bi);
    unsigned ep = lo_emit(c->out, "llvm.getelementptr %%v%u[%%v%u] : (!llvm.ptr, i64) -> !llvm.ptr, %s", bp, ii, et);
    int bits = ir_dtype_bits((IrDtype)ir_type_dtype(c->m, c->f->vals[op->res[0]].type));
    char it[16];
    snprintf(it, sizeof it, "i%d", bits);
    unsigned vi = is_float ? lo_emit(c->out, "arith.bitcast %%v%u : %s to %s", v, et, it) : v;
    unsigned r;
    if (op->opc == IR_ATOMIC_CAS) {
        unsigned ci = is_float ? lo_emit(c->out, "arith.bitcast %%v%u : %s to %s", cmp, et, it) : cmp;
        unsigned pair = lo_emit(c->out, "llvm.cmpxchg %%v%u, %%v%u, %%v%u acq_rel monotonic : !llvm.ptr, %s", ep, ci,
                                vi, it);
        r = lo_emit(c->out, "llvm.extractvalue %%v%u[0] : !llvm.struct<(%s, i1)>", pair, it);
    } else {
        r = lo_emit(c->out, "llvm.atomicrmw _xor %%v%u, %%v%u acq_rel : !llvm.ptr, %s", ep, vi, it);
    }
    return is_float ? lo_emit(c->out, "arith.bitcast %%v%u : %s to %s", r, it, et) : r;
}

/* atomic_one under the i1 'cond' (0: unconditional); a lane that is masked off
 * does not touch memory and yields 0. */
static unsigned
atomic_masked(LoCtx *c, IrOp *op, unsigned mem, unsigned idx, unsigned v, unsigned cmp, unsigned cond, int dtype,
              const char *et, bool is_float)
{
    if (!cond)
        return atomic_one(c, op, mem, idx, v, cmp, et, is_float);
    unsigned r = lo_fresh(c->out);
    lo_line(c->out, "%%v%u = scf.if %%v%u -> (%s) {", r, cond, et);
    c->out->indent += 2;
    unsigned o = atomic_one(c, op, mem, idx, v, cmp, et, is_float);
    lo_line(c->out, "scf.yield %%v%u : %s", o, et);
    c->out->indent -= 2;
    lo_line(c->out, "} else {");
    lo_line(c->out, "  scf.yield %%v%u : %s", lo_emit_const(c, dtype, 0, 0), et);
    lo_line(c->out, "}");
    return r;
}

int
lo_atomic(LoCtx *c, IrOp *op)
{
    IrRef ptr = op->args[0];
    PtrForm *p = lo_ptrform(c, ptr);
    if (!p)
        return lo_error(c, op->loc, "unsupported pointer expression in an atomic");
    IrType et_t = p->elem;
    const char *et = melem(c, et_t);
    bool is_float = ir_dtype_is_float((IrDtype)ir_type_dtype(c->m, et_t));
    unsigned mem = c->param_ssa[p->param];
    bool cas = op->opc == IR_ATOMIC_CAS;
    IrRef vref = cas ? op->args[2] : op->args[1], cref = cas ? op->args[1] : IR_NONE;
    IrRef mref = !cas && op->nargs >= 3 ? op->args[2] : IR_NONE;
    LoVal *lv = &c->vals[op->res[0]];
    IrType pt = c->f->vals[ptr].type;
    if (!ir_type_is_tensor(c->m, pt)) {
        unsigned idx = lo_aexpr_emit(c, p->off.base), v = lo_scalar(c, vref), cmp = cref ? lo_scalar(c, cref) : 0;
        unsigned r = atomic_masked(c, op, mem, idx, v, cmp, mref ? lo_scalar(c, mref) : 0,
                                   ir_type_dtype(c->m, et_t), et, is_float);
        lv->kind = LV_SCALAR;
        lv->ssa = r;
        lv->scope = c->scope;
        return 0;
    }
    int rank = ir_type_rank(c->m, pt);
    const int64_t *shape = ir_type_shape(c->m, pt);
    unsigned vals = lo_materialize(c, vref), cmps = cref ? lo_materialize(c, cref) : 0;
    unsigned mask = mref ? lo_materialize(c, mref) : 0, offs = lo_offsets_tensor(c, ptr, p);
    char vt[200], mt[200], ot[200], rt[200];
    lo_tensor_type(c, c->f->vals[vref].type, vt, sizeof vt);
    if (mask)
        lo_tensor_type(c, c->f->vals[mref].type, mt, sizeof mt);
    lo_tensor_type(c, c->f->vals[op->res[0]].type, rt, sizeof rt);
    size_t n = (size_t)snprintf(ot, sizeof ot, "tensor<");
    for (int d = 0; d < rank; d++)
        n += (size_t)snprintf(ot + n, sizeof ot - n, "%lldx", (long long)shape[d]);
    snprintf(ot + n, sizeof ot - n, "index>");
    unsigned acc = lo_emit(c->out, "tensor.empty() : %s", rt);
    unsigned one = lo_const_index(c, 1), zero = lo_const_index(c, 0);
    unsigned iv[IR_MAX_RANK], res[IR_MAX_RANK], carry[IR_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        unsigned ub = lo_const_index(c, shape[d]);
        res[d] = lo_fresh(c->out);
        iv[d] = lo_fresh(c->out);
        carry[d] = lo_fresh(c->out);
        lo_line(c->out, "%%v%u = scf.for %%v%u = %%v%u to %%v%u step %%v%u iter_args(%%v%u = %%v%u) -> (%s) {", res[d],
                iv[d], zero, ub, one, carry[d], d ? carry[d - 1] : acc, rt);
        c->out->indent += 2;
    }
    char idx[128] = "";
    size_t ni = 0;
    for (int d = 0; d < rank; d++)
        ni += (size_t)snprintf(idx + ni, sizeof idx - ni, "%s%%v%u", d ? ", " : "", iv[d]);
    unsigned v = lo_emit(c->out, "tensor.extract %%v%u[%s] : %s", vals, idx, vt);
    unsigned cmp = cmps ? lo_emit(c->out, "tensor.extract %%v%u[%s] : %s", cmps, idx, vt) : 0;
    unsigned o = lo_emit(c->out, "tensor.extract %%v%u[%s] : %s", offs, idx, ot);
    unsigned m1 = 0;
    if (mask) {
        unsigned mb = lo_emit(c->out, "tensor.extract %%v%u[%s] : %s", mask, idx, mt);
        m1 = lo_emit(c->out, "arith.trunci %%v%u : i8 to i1", mb);
    }
    unsigned old = atomic_masked(c, op, mem, o, v, cmp, m1, ir_type_dtype(c->m, et_t), et, is_float);
    unsigned ins = lo_emit(c->out, "tensor.insert %%v%u into %%v%u[%s] : %s", old, carry[rank - 1], idx, rt);
    for (int d = rank - 1; d >= 0; d--) {
        lo_line(c->out, "scf.yield %%v%u : %s", d == rank - 1 ? ins : res[d + 1], rt);
        c->out->indent -= 2;
        lo_line(c->out, "}");
    }
    lv->kind = LV_TENSOR;
    lv->ssa = res[0];
    lv->scope = c->scope;
    lv->as_i8 = 0;
    return 0;
}
