/*
 * lo_emit_mem.c — loads, stores and atomics, as the plan's LpMem says:
 *   LA_SCALAR  one memref.load / memref.store (under scf.if when masked);
 *   LA_VIEW    a tile load is read by its consumers (lo_emit_generic.c) or
 *              copied where it stands; a tile store writes a view of its valid
 *              region with one fused linalg.generic, then
 *              bufferization.materialize_in_destination;
 *   LA_GATHER  stores: the value, mask and element offsets materialised, then an
 *              scf.for nest of guarded memref.store; atomics on tiles likewise,
 *              one atomic per element collecting the old values.
 */
#include "lo_int.h"

#include <string.h>

static const char *
melem(LeCtx *c, IrType elem)
{
    return ir_dtype_mlir((IrDtype)ir_type_dtype(c->m, elem));
}

/* "tensor<4x8xindex>" of a tile shape */
static LoType
index_tile(const IrModule *m, IrType pt)
{
    return lt_tensor(LT_INDEX, ir_type_rank(m, pt), ir_type_shape(m, pt));
}

/* Opens an scf.for nest over the tile shape; iv[] receives the induction
 * variables. With carry (a tensor SSA of type ct), each loop carries it. */
static void
open_nest(LeCtx *c, int rank, const int64_t *shape, unsigned *iv, unsigned carry, const char *ct, unsigned *res,
          unsigned *carried)
{
    unsigned one = le_const_index(c, 1), zero = le_const_index(c, 0);
    for (int d = 0; d < rank; d++) {
        unsigned ub = le_const_index(c, shape[d]);
        iv[d] = lo_fresh(c->out);
        if (carry) {
            res[d] = iv[d];
            iv[d] = lo_fresh(c->out);
            carried[d] = lo_fresh(c->out);
            lo_line(c->out, "%%v%u = scf.for %%v%u = %%v%u to %%v%u step %%v%u iter_args(%%v%u = %%v%u) -> (%s) {",
                    res[d], iv[d], zero, ub, one, carried[d], d ? carried[d - 1] : carry, ct);
        } else {
            lo_line(c->out, "scf.for %%v%u = %%v%u to %%v%u step %%v%u {", iv[d], zero, ub, one);
        }
        c->out->indent += 2;
    }
}

static void
index_list(LoBuf *b, const unsigned *iv, int rank)
{
    for (int d = 0; d < rank; d++)
        lo_printf(b, "%s%%v%u", d ? ", " : "", iv[d]);
}

static unsigned
extract(LeCtx *c, unsigned t, const unsigned *iv, int rank, const char *ty)
{
    LoBuf *o = c->out;
    unsigned id = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = tensor.extract %%v%u[", o->indent, "", id, t);
    index_list(o, iv, rank);
    lo_printf(o, "] : %s\n", ty);
    return id;
}

/* ---- loads ---------------------------------------------------------------------------- */

int
le_load(LeCtx *c, IrOp *op)
{
    IrRef r = op->res[0];
    const LpVal *pv = lp_val(c->plan, r);
    if (pv->kind == LP_LOAD) {
        if (pv->mat != LM_LAZY)
            le_load_snapshot(c, r);
        return 0;
    }
    const LpMem *mem = lp_mem(c->plan, op);
    const PtrForm *p = lp_ptrform(c->plan, op->args[0]);
    const char *et = melem(c, p->elem);
    unsigned idx = le_index(c, mem->form.base);
    unsigned memref = c->param_ssa[p->param];
    unsigned v;
    if (op->nargs < 2) {
        v = lo_emit(c->out, "memref.load %%v%u[%%v%u] : memref<?x%s>", memref, idx, et);
    } else {
        unsigned m = le_scalar(c, op->args[1]);
        unsigned oth = op->nargs >= 3 ? le_scalar(c, op->args[2]) : le_const(c, ir_type_dtype(c->m, p->elem), 0, 0);
        v = lo_fresh(c->out);
        lo_line(c->out, "%%v%u = scf.if %%v%u -> (%s) {", v, m, et);
        c->out->indent += 2;
        unsigned x = lo_emit(c->out, "memref.load %%v%u[%%v%u] : memref<?x%s>", memref, idx, et);
        lo_line(c->out, "scf.yield %%v%u : %s", x, et);
        c->out->indent -= 2;
        lo_line(c->out, "} else {");
        lo_line(c->out, "  scf.yield %%v%u : %s", oth, et);
        lo_line(c->out, "}");
    }
    le_set_scalar(c, r, v);
    return 0;
}

/* ---- stores ------------------------------------------------------------------------------ */

static int
store_scalar(LeCtx *c, IrOp *op, const LpMem *mem)
{
    const PtrForm *p = lp_ptrform(c->plan, op->args[0]);
    const char *et = melem(c, p->elem);
    unsigned idx = le_index(c, mem->form.base), memref = c->param_ssa[p->param];
    unsigned v = le_scalar(c, op->args[1]);
    if (op->nargs >= 3) {
        lo_line(c->out, "scf.if %%v%u {", le_scalar(c, op->args[2]));
        lo_line(c->out, "  memref.store %%v%u, %%v%u[%%v%u] : memref<?x%s>", v, memref, idx, et);
        lo_line(c->out, "}");
    } else {
        lo_line(c->out, "memref.store %%v%u, %%v%u[%%v%u] : memref<?x%s>", v, memref, idx, et);
    }
    return 0;
}

/* The memref an element of gathered pointer p is at, *o its index: the base's, or
 * (a tile of addresses) a memref at the byte address *o, index 0. */
static unsigned
elem_ref(LeCtx *c, const PtrForm *p, unsigned *o)
{
    if (!p->abs)
        return c->param_ssa[p->param];
    unsigned mem = le_memref_at(c, *o, true, p->elem);
    *o = le_const_index(c, 0);
    return mem;
}

/* Element-wise guarded stores through an scf.for nest (scatter). */
static int
store_scatter(LeCtx *c, IrOp *op)
{
    IrRef ptr = op->args[0];
    const PtrForm *p = lp_ptrform(c->plan, ptr);
    IrType pt = c->f->vals[ptr].type;
    int r = ir_type_rank(c->m, pt);
    unsigned val = le_materialize(c, op->args[1]);
    unsigned mask = op->nargs >= 3 ? le_materialize(c, op->args[2]) : 0;
    unsigned offs = le_offsets_tensor(c, ptr, p);
    const char *vt = le_tile_ty(c, c->f->vals[op->args[1]].type);
    const char *mt = mask ? le_tile_ty(c, c->f->vals[op->args[2]].type) : NULL;
    LoType ot = index_tile(c->m, pt);
    unsigned iv[IR_MAX_RANK];
    open_nest(c, r, ir_type_shape(c->m, pt), iv, 0, NULL, NULL, NULL);
    const char *et = melem(c, p->elem);
    unsigned x = extract(c, val, iv, r, vt);
    if (ir_type_dtype(c->m, ir_type_elem(c->m, c->f->vals[op->args[1]].type)) == IR_I1)
        x = lo_emit(c->out, "arith.trunci %%v%u : i8 to i1", x);
    unsigned o = extract(c, offs, iv, r, le_ty(c, &ot));
    if (mask) {
        unsigned mb = extract(c, mask, iv, r, mt);
        unsigned m1 = lo_emit(c->out, "arith.trunci %%v%u : i8 to i1", mb);
        lo_line(c->out, "scf.if %%v%u {", m1);
        c->out->indent += 2;
    }
    unsigned mem = elem_ref(c, p, &o);
    lo_line(c->out, "memref.store %%v%u, %%v%u[%%v%u] : memref<?x%s>", x, mem, o, et);
    if (mask) {
        c->out->indent -= 2;
        lo_line(c->out, "}");
    }
    for (int d = 0; d < r; d++) {
        c->out->indent -= 2;
        lo_line(c->out, "}");
    }
    return 0;
}

/* A store through a view of the valid region with one fused generic. */
static int
store_view(LeCtx *c, IrOp *op, const LpMem *mem)
{
    BlockPtr *bp = lp_bptr(c->plan, op->args[0]);
    IrType pt = c->f->vals[op->args[0]].type;
    if (bp)
        pt = ir_type_pointee(c->m, pt);
    int r = ir_type_rank(c->m, pt);
    const int64_t *shape = ir_type_shape(c->m, pt);
    LoIter it;
    le_iter(c, &mem->reg, r, shape, &it);
    bool unit[IR_MAX_RANK] = {0};
    IrType elem = bp ? bp->elem : lp_ptrform(c->plan, op->args[0])->elem;
    LoType mt;
    unsigned view = le_view(c, mem->param, elem, r, mem->form.base, mem->form.coef, it.lo, it.size, shape, false,
                            unit, &mt);
    LoType tt = le_view_tensor(elem, c->m, r, it.size, shape, unit);
    const char *mts = le_ty(c, &mt), *tts = le_ty(c, &tt);
    unsigned dst = lo_emit(c->out, "bufferization.to_tensor %%v%u restrict writable : %s", view, mts);
    unsigned res = le_generic(c, &it, op->args[1], dst, &tt, IR_NONE);
    lo_line(c->out, "bufferization.materialize_in_destination %%v%u in restrict writable %%v%u : (%s, %s) -> ()", res,
            view, tts, mts);
    return 0;
}

int
le_store(LeCtx *c, IrOp *op)
{
    const LpMem *mem = lp_mem(c->plan, op);
    switch (mem->access) {
    case LA_SCALAR: return store_scalar(c, op, mem);
    case LA_VIEW: return store_view(c, op, mem);
    default: return store_scatter(c, op);
    }
}

/* ---- atomics -----------------------------------------------------------------------------
 * tt.atomic_rmw / tt.atomic_cas on a scalar pointer become one memref.atomic_rmw (or
 * LLVM atomics) guarded by the mask; on a tile, one per element in an scf.for nest
 * over the materialised values, mask and element offsets, collecting the old
 * values into the result tile. */

/* MLIR spelling of an IrRmw for memref.atomic_rmw, or NULL (LLVM atomics). */
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
atomic_one(LeCtx *c, IrOp *op, unsigned mem, unsigned idx, unsigned v, unsigned cmp, const char *et, bool is_float)
{
    const char *k = op->opc == IR_ATOMIC_RMW ? rmw_kind((int)op->i[0], is_float) : NULL;
    if (k)
        return lo_emit(c->out, "memref.atomic_rmw %s %%v%u, %%v%u[%%v%u] : (%s, memref<?x%s>) -> %s", k, v, mem, idx,
                       et, et, et);
    /* CAS and xor: LLVM atomics on the element's address, in a helper llvm.func
     * (le_atomic_helpers; LLVM inlines it): memref.generic_atomic_rmw has a region
     * the buffer-deallocation pass rejects, and so are LLVM atomics in a func.func
     * ("unknown memory side effects") once a tile lives on the heap */
    unsigned base = lo_emit(c->out, "memref.extract_aligned_pointer_as_index %%v%u : memref<?x%s> -> index", mem, et);
    unsigned bi = lo_emit(c->out, "arith.index_cast %%v%u : index to i64", base);
    unsigned ii = lo_emit(c->out, "arith.index_cast %%v%u : index to i64", idx);
    unsigned bp = lo_emit(c->out, "llvm.inttoptr %%v%u : i64 to !llvm.ptr", bi);
    unsigned ep = lo_emit(c->out, "llvm.getelementptr %%v%u[%%v%u] : (!llvm.ptr, i64) -> !llvm.ptr, %s", bp, ii, et);
    int bits = ir_dtype_bits((IrDtype)ir_type_dtype(c->m, c->f->vals[op->res[0]].type));
    unsigned vi = is_float ? lo_emit(c->out, "arith.bitcast %%v%u : %s to i%d", v, et, bits) : v;
    bool cas = op->opc == IR_ATOMIC_CAS;
    int lg = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
    c->decl_atomic |= 1 << ((cas ? 4 : 0) + lg);
    unsigned r;
    if (cas) {
        unsigned ci = is_float ? lo_emit(c->out, "arith.bitcast %%v%u : %s to i%d", cmp, et, bits) : cmp;
        r = lo_emit(c->out, "llvm.call @__tritium_atomic_cas_i%d(%%v%u, %%v%u, %%v%u) : (!llvm.ptr, i%d, i%d) -> i%d",
                    bits, ep, ci, vi, bits, bits, bits);
    } else {
        r = lo_emit(c->out, "llvm.call @__tritium_atomic_xor_i%d(%%v%u, %%v%u) : (!llvm.ptr, i%d) -> i%d", bits, ep, vi,
                    bits, bits);
    }
    return is_float ? lo_emit(c->out, "arith.bitcast %%v%u : i%d to %s", r, bits, et) : r;
}

/* The helpers atomic_one calls, after the kernel: old value of *p. */
void
le_atomic_helpers(LeCtx *c, LoBuf *o)
{
    for (int lg = 0; lg < 4; lg++) {
        int n = 8 << lg;
        if (c->decl_atomic & (1 << lg))
            lo_printf(o,
                      "  llvm.func internal @__tritium_atomic_xor_i%d(%%p: !llvm.ptr, %%v: i%d) -> i%d {\n"
                      "    %%r = llvm.atomicrmw _xor %%p, %%v acq_rel : !llvm.ptr, i%d\n"
                      "    llvm.return %%r : i%d\n  }\n",
                      n, n, n, n, n);
        if (c->decl_atomic & (1 << (4 + lg)))
            lo_printf(o,
                      "  llvm.func internal @__tritium_atomic_cas_i%d(%%p: !llvm.ptr, %%c: i%d, %%v: i%d) -> i%d {\n"
                      "    %%s = llvm.cmpxchg %%p, %%c, %%v acq_rel monotonic : !llvm.ptr, i%d\n"
                      "    %%r = llvm.extractvalue %%s[0] : !llvm.struct<(i%d, i1)>\n"
                      "    llvm.return %%r : i%d\n  }\n",
                      n, n, n, n, n, n, n);
    }
}

/* atomic_one under the i1 'cond' (0: unconditional); a lane that is masked off
 * does not touch memory and yields 0. */
static unsigned
atomic_masked(LeCtx *c, IrOp *op, unsigned mem, unsigned idx, unsigned v, unsigned cmp, unsigned cond, int dtype,
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
    lo_line(c->out, "  scf.yield %%v%u : %s", le_const(c, dtype, 0, 0), et);
    lo_line(c->out, "}");
    return r;
}

int
le_atomic(LeCtx *c, IrOp *op)
{
    IrRef ptr = op->args[0];
    const LpMem *lm = lp_mem(c->plan, op);
    const PtrForm *p = lp_ptrform(c->plan, ptr);
    int dt = ir_type_dtype(c->m, p->elem);
    const char *et = melem(c, p->elem);
    bool is_float = ir_dtype_is_float((IrDtype)dt);
    unsigned mem = c->param_ssa[p->param];
    bool cas = op->opc == IR_ATOMIC_CAS;
    IrRef vref = cas ? op->args[2] : op->args[1], cref = cas ? op->args[1] : IR_NONE;
    IrRef mref = !cas && op->nargs >= 3 ? op->args[2] : IR_NONE;
    if (lm->access == LA_SCALAR) {
        unsigned idx = le_index(c, lm->form.base), v = le_scalar(c, vref), cmp = cref ? le_scalar(c, cref) : 0;
        unsigned r = atomic_masked(c, op, mem, idx, v, cmp, mref ? le_scalar(c, mref) : 0, dt, et, is_float);
        le_set_scalar(c, op->res[0], r);
        return 0;
    }
    IrType pt = c->f->vals[ptr].type;
    int rank = ir_type_rank(c->m, pt);
    unsigned vals = le_materialize(c, vref), cmps = cref ? le_materialize(c, cref) : 0;
    unsigned mask = mref ? le_materialize(c, mref) : 0, offs = le_offsets_tensor(c, ptr, p);
    const char *vt = le_tile_ty(c, c->f->vals[vref].type);
    const char *mt = mask ? le_tile_ty(c, c->f->vals[mref].type) : NULL;
    LoType rtt = lt_of_tile(c->m, c->f->vals[op->res[0]].type), ot = index_tile(c->m, pt);
    const char *rt = le_ty(c, &rtt);
    unsigned acc = le_alloc_tensor(c, &rtt);
    unsigned iv[IR_MAX_RANK], res[IR_MAX_RANK], carry[IR_MAX_RANK];
    open_nest(c, rank, ir_type_shape(c->m, pt), iv, acc, rt, res, carry);
    unsigned v = extract(c, vals, iv, rank, vt);
    unsigned cmp = cmps ? extract(c, cmps, iv, rank, vt) : 0;
    unsigned o = extract(c, offs, iv, rank, le_ty(c, &ot));
    unsigned m1 = 0;
    if (mask) {
        unsigned mb = extract(c, mask, iv, rank, mt);
        m1 = lo_emit(c->out, "arith.trunci %%v%u : i8 to i1", mb);
    }
    if (p->abs)
        mem = elem_ref(c, p, &o);
    unsigned old = atomic_masked(c, op, mem, o, v, cmp, m1, dt, et, is_float);
    LoBuf *b = c->out;
    unsigned ins = lo_fresh(b);
    lo_printf(b, "%*s%%v%u = tensor.insert %%v%u into %%v%u[", b->indent, "", ins, old, carry[rank - 1]);
    index_list(b, iv, rank);
    lo_printf(b, "] : %s\n", rt);
    for (int d = rank - 1; d >= 0; d--) {
        lo_line(c->out, "scf.yield %%v%u : %s", d == rank - 1 ? ins : res[d + 1], rt);
        c->out->indent -= 2;
        lo_line(c->out, "}");
    }
    le_set_tensor(c, op->res[0], res[0]);
    c->vals[op->res[0]].as_i8 = 0;
    return 0;
}
