/*
 * lo_emit.c — the emission driver: walks the kernel in program order and writes
 * what the plan decided. Scalar ops are emitted where they stand; lazy tiles
 * and loads wait for their consumers (lo_emit_generic.c); stores, atomics,
 * dots, reductions and shape ops are emitted where they stand (lo_emit_mem.c,
 * lo_emit_compute.c); scf.for / scf.while / scf.if are one routine
 * (emit_region_op) with loop-carried pointers carried as index offsets; Proton
 * records materialise the tiles the plan lists for their scope boundary.
 * lo_lower_module (compiler.h) plans, emits and returns the text and the cost.
 */
#include "lo_int.h"

#include <stdlib.h>
#include <string.h>

static int emit_block(LeCtx *c, IrBlock *b);

/* ---- carried values ------------------------------------------------------------------ */

/* How a value travels through loops and branches (as lo_plan.c). */
typedef enum { CV_SCALAR, CV_TENSOR, CV_PTR, CV_BPTR } CvKind;

static CvKind
carry_kind(LeCtx *c, IrRef v)
{
    IrType t = c->f->vals[v].type;
    IrType e = ir_type_elem(c->m, t);
    if (ir_type_is_ptr(c->m, e))
        return ir_type_is_tensor(c->m, ir_type_pointee(c->m, e)) && !ir_type_is_tensor(c->m, t) ? CV_BPTR : CV_PTR;
    return ir_type_is_tensor(c->m, t) ? CV_TENSOR : CV_SCALAR;
}

/* The MLIR values (and types) that stand for carried values: one per scalar or
 * tile, the element offset of a pointer, one offset per dim of a block pointer. */
typedef struct Carry {
    unsigned *ssa;
    const char **type;
    int n, cap;
} Carry;

static void
carry_push(Carry *k, unsigned ssa, const char *type)
{
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 16;
        k->ssa = realloc(k->ssa, sizeof *k->ssa * (size_t)k->cap);
        k->type = realloc(k->type, sizeof *k->type * (size_t)k->cap);
        if (!k->ssa || !k->type)
            ir_die("out of memory");
    }
    k->ssa[k->n] = ssa;
    k->type[k->n++] = type;
}

static void
carry_fini(Carry *k)
{
    free(k->ssa);
    free(k->type);
}

/* Types only (for results, from the values like 'like'). */
static void
carry_types(LeCtx *c, IrRef v, Carry *k)
{
    switch (carry_kind(c, v)) {
    case CV_SCALAR: carry_push(k, 0, le_elem(c, c->f->vals[v].type)); return;
    case CV_TENSOR: carry_push(k, 0, le_tile_ty(c, c->f->vals[v].type)); return;
    case CV_PTR: carry_push(k, 0, "index"); return;
    case CV_BPTR:
        for (int d = 0; d < lp_bptr(c->plan, v)->rank; d++)
            carry_push(k, 0, "index");
        return;
    }
}

static void
carry_values(LeCtx *c, IrRef v, Carry *k)
{
    switch (carry_kind(c, v)) {
    case CV_SCALAR:
        carry_push(k, le_scalar(c, v), le_elem(c, c->f->vals[v].type));
        return;
    case CV_TENSOR:
        carry_push(k, le_materialize(c, v), le_tile_ty(c, c->f->vals[v].type));
        return;
    case CV_PTR:
        carry_push(k, le_index(c, lp_ptrform(c->plan, v)->off.base), "index");
        return;
    case CV_BPTR: {
        const BlockPtr *bp = lp_bptr(c->plan, v);
        for (int d = 0; d < bp->rank; d++)
            carry_push(k, le_index(c, bp->off[d]), "index");
        return;
    }
    }
}

/* Binds carried value v (block argument or result) to ssa[*n...]. */
static void
bind(LeCtx *c, IrRef v, const unsigned *ssa, int *n)
{
    LeVal *lv = &c->vals[v];
    switch (carry_kind(c, v)) {
    case CV_SCALAR:
        le_set_scalar(c, v, ssa[(*n)++]);
        return;
    case CV_TENSOR:
        le_set_tensor(c, v, ssa[(*n)++]);
        return;
    case CV_PTR:
        lv->carry = ir_newv(&c->m->arena, unsigned, 1);
        lv->carry[0] = ssa[(*n)++];
        return;
    case CV_BPTR: {
        int r = lp_bptr(c->plan, v)->rank;
        lv->carry = ir_newv(&c->m->arena, unsigned, (size_t)r);
        for (int d = 0; d < r; d++)
            lv->carry[d] = ssa[(*n)++];
        return;
    }
    }
}

static void
print_names(LoBuf *o, const unsigned *ssa, int n)
{
    for (int i = 0; i < n; i++)
        lo_printf(o, "%s%%v%u", i ? ", " : "", ssa[i]);
}

static void
print_types(LoBuf *o, const Carry *k)
{
    for (int i = 0; i < k->n; i++)
        lo_printf(o, "%s%s", i ? ", " : "", k->type[i]);
}

/* "%a0 = %i0, %a1 = %i1, ..." of region arguments and their initial values */
static void
print_inits(LoBuf *o, const unsigned *args, const Carry *k)
{
    for (int i = 0; i < k->n; i++)
        lo_printf(o, "%s%%v%u = %%v%u", i ? ", " : "", args[i], k->ssa[i]);
}

static unsigned *
fresh_names(LeCtx *c, int n)
{
    unsigned *v = ir_newv(&c->strs, unsigned, (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        v[i] = lo_fresh(c->out);
    return v;
}

/* ---- structured control flow: one routine for scf.for, scf.while, scf.if ------------------- */

/* Emits a region of op in a scope of its own, binding the region's block
 * arguments: for the for body the induction variable (iv) then the carried
 * values; for while regions the carried values. */
static int
emit_region(LeCtx *c, IrOp *op, IrBlock *b, unsigned iv, const unsigned *args)
{
    int saved = c->scope;
    le_scope_push(c);
    c->out->indent += 2;
    uint32_t first = 0;
    if (op->opc == IR_FOR) {
        le_set_scalar(c, b->args[0], iv);
        first = 1;
    }
    int k = 0;
    for (uint32_t i = first; i < b->nargs; i++)
        bind(c, b->args[i], args, &k);
    int rc = emit_block(c, b);
    c->out->indent -= 2;
    le_scope_pop(c, saved);
    return rc;
}

static int
emit_region_op(LeCtx *c, IrOp *op)
{
    LoBuf *o = c->out;
    bool is_for = op->opc == IR_FOR, is_while = op->opc == IR_WHILE;
    uint32_t ninit = is_for ? op->nargs - 3 : is_while ? op->nargs : 0;
    const IrRef *inits = op->args + (is_for ? 3 : 0);
    Carry k = {0};
    unsigned cond = 0, lb = 0, ub = 0, st = 0;
    if (is_for) {
        lb = le_scalar(c, op->args[0]);
        ub = le_scalar(c, op->args[1]);
        st = le_scalar(c, op->args[2]);
    } else if (!is_while) {
        cond = le_scalar(c, op->args[0]);
    }
    for (uint32_t i = 0; i < ninit; i++)
        carry_values(c, inits[i], &k);
    if (!is_for && !is_while)
        for (uint32_t i = 0; i < op->nres; i++)
            carry_types(c, op->res[i], &k);
    int n = k.n;
    unsigned *res = fresh_names(c, n), *args = fresh_names(c, n), *args2 = is_while ? fresh_names(c, n) : NULL;
    unsigned iv = is_for ? lo_fresh(o) : 0;
    lo_printf(o, "%*s", o->indent, "");
    if (n) {
        print_names(o, res, n);
        lo_printf(o, " = ");
    }
    if (is_for) {
        lo_printf(o, "scf.for %%v%u = %%v%u to %%v%u step %%v%u", iv, lb, ub, st);
        if (n) {
            lo_printf(o, " iter_args(");
            print_inits(o, args, &k);
            lo_printf(o, ") -> (");
            print_types(o, &k);
            lo_printf(o, ")");
        }
        lo_printf(o, " : %s {\n", le_elem(c, c->f->vals[op->args[0]].type));
    } else if (is_while) {
        lo_printf(o, "scf.while (");
        print_inits(o, args, &k);
        lo_printf(o, ") : (");
        print_types(o, &k);
        lo_printf(o, ") -> (");
        print_types(o, &k);
        lo_printf(o, ") {\n");
    } else {
        lo_printf(o, "scf.if %%v%u", cond);
        if (n) {
            lo_printf(o, " -> (");
            print_types(o, &k);
            lo_printf(o, ")");
        }
        lo_printf(o, " {\n");
    }
    int rc = 0;
    for (uint32_t r = 0; r < op->nregs && rc == 0; r++) {
        if (r == 1) {
            if (is_while) {
                lo_printf(o, "%*s} do {\n%*s^bb0(", o->indent, "", o->indent, "");
                for (int i = 0; i < n; i++)
                    lo_printf(o, "%s%%v%u: %s", i ? ", " : "", args2[i], k.type[i]);
                lo_printf(o, "):\n");
            } else {
                lo_line(o, "} else {");
            }
        }
        rc = emit_region(c, op, op->regs[r], iv, r == 1 && is_while ? args2 : args);
    }
    if (rc == 0) {
        /* smt.parallel: cg_par.c outlines the body and runs it through the runtime */
        lo_line(o, is_for && op->i[0] ? "} {tritium.parallel}" : "}");
        int m = 0;
        for (uint32_t i = 0; i < op->nres; i++)
            bind(c, op->res[i], res, &m);
    }
    carry_fini(&k);
    return rc;
}

/* scf.yield / scf.condition: the carried values materialised inside the region. */
static int
emit_terminator(LeCtx *c, IrOp *op)
{
    IrOp *parent = op->parent->parent;
    bool is_cond = op->opc == IR_CONDITION;
    Carry k = {0};
    for (uint32_t i = is_cond ? 1 : 0; i < op->nargs; i++) {
        /* a loop-carried tile computed element-wise is written into its own iter
         * arg, so bufferization updates it in place instead of allocating per
         * iteration */
        IrRef y = op->args[i];
        LeVal *yl = &c->vals[y];
        const LpVal *py = lp_val(c->plan, y);
        bool lazy = py->kind == LP_TILE || (py->kind == LP_LOAD && py->mat == LM_LAZY);
        if (!is_cond && parent && parent->opc == IR_FOR && lazy &&
            !(yl->ssa && le_scope_visible(c, yl->scope)) && ir_type_dtype(c->m, c->f->vals[y].type) != IR_I1) {
            IrRef arg = parent->regs[0]->args[1 + i];
            LeVal *al = &c->vals[arg];
            if (al->ssa) {
                IrType t = c->f->vals[y].type;
                LoIter it;
                le_iter(c, NULL, ir_type_rank(c->m, t), ir_type_shape(c->m, t), &it);
                LoType tt = lt_of_tile(c->m, t);
                unsigned r = le_generic(c, &it, y, al->ssa, &tt, arg);
                yl = &c->vals[y];
                yl->ssa = r;
                yl->scope = c->scope;
            }
        }
        carry_values(c, y, &k);
    }
    LoBuf *o = c->out;
    lo_printf(o, "%*s", o->indent, "");
    if (is_cond)
        lo_printf(o, "scf.condition(%%v%u)", le_scalar(c, op->args[0]));
    else
        lo_printf(o, "scf.yield");
    if (k.n) {
        lo_printf(o, " ");
        print_names(o, k.ssa, k.n);
        lo_printf(o, " : ");
        print_types(o, &k);
    }
    lo_printf(o, "\n");
    carry_fini(&k);
    return 0;
}

/* ---- Proton in-kernel scopes ------------------------------------------------------------ */

static int
emit_record(LeCtx *c, IrOp *op)
{
    if (!c->opt->instrument)
        return 0;
    uint32_t n;
    const IrRef *vals = lp_barrier(c->plan, op, &n);
    for (uint32_t i = 0; i < n; i++) { /* a load is read here (in place when it can), not where its consumers are */
        if (lp_val(c->plan, vals[i])->kind == LP_LOAD) {
            if (!le_load_touch(c, vals[i]))
                le_load_snapshot(c, vals[i]);
        } else
            le_materialize(c, vals[i]);
    }
    unsigned fp = lo_emit(c->out, "llvm.load %%v%u : !llvm.ptr -> !llvm.ptr", c->pctx_ssa);
    unsigned idv = le_const(c, IR_I32, lp_scope_id(c->plan, op), 0), fl = le_const(c, IR_I32, op->i[0] ? 1 : 0, 0);
    lo_line(c->out, "llvm.call %%v%u(%%v%u, %%v%u, %%v%u) : !llvm.ptr, (!llvm.ptr, i32, i32) -> ()", fp, c->pctx_ssa,
            idv, fl);
    return 0;
}

/* ---- program-local buffers (smt.alloc) ------------------------------------------------- */

/* A buffer of its element count, seen as the 1-D dynamic memref a kernel argument
 * is, so views of it are built as for arguments. */
static int
emit_local_buffer(LeCtx *c, IrOp *op)
{
    const PtrForm *pf = lp_ptrform(c->plan, op->res[0]);
    int d = ir_type_dtype(c->m, pf->elem);
    int64_t n = 1;
    for (uint32_t i = 0; i < op->nints; i++)
        n *= op->ints[i];
    LoType bt = lt_tensor(d, 1, &n), dt = lt_scalar(d);
    bt.kind = LT_MEMREF;
    dt.kind = LT_MEMREF;
    dt.rank = 1;
    dt.shape[0] = LT_DYN;
    unsigned buf = lo_emit(c->out, "memref.alloc() : %s", le_ty(c, &bt));
    c->param_ssa[pf->param] = lo_emit(c->out, "memref.cast %%v%u : %s to %s", buf, le_ty(c, &bt), le_ty(c, &dt));
    return 0;
}

/* ---- integers and pointers ---------------------------------------------------------------- */

/* tt.int_to_ptr of a scalar: the memref of a base of its own at that address (a
 * tile of addresses has none: every access through it gathers). tt.ptr_to_int of
 * a scalar: the base's address plus the element offset in bytes (a tile is lazy:
 * evaluated in its consumers' bodies). tt.bitcast to an element stored otherwise
 * (LPB_RECAST): a memref of the new type at the source's base plus its offset. */
static int
emit_int_ptr(LeCtx *c, IrOp *op)
{
    IrRef r = op->res[0], a = op->args[0];
    if (op->opc == IR_PTR_BITCAST) { /* a base of its own: a memref at the source's address */
        const PtrForm *pf = lp_ptrform(c->plan, r), *src = lp_ptrform(c->plan, a);
        if (!pf || !src || pf->param == src->param)
            return 0;
        unsigned off = lo_emit(c->out, "arith.muli %%v%u, %%v%u : index", le_index(c, src->off.base),
                               le_const_index(c, le_elem_bytes(c, src->elem)));
        unsigned ad = lo_emit(c->out, "arith.addi %%v%u, %%v%u : index",
                              le_base_address(c, src->param, src->elem), off);
        c->param_ssa[pf->param] = le_memref_at(c, ad, true, pf->elem);
        return 0;
    }
    if (lp_val(c->plan, r)->kind != (op->opc == IR_INT_TO_PTR ? LP_PTR : LP_SCALAR) ||
        ir_type_is_tensor(c->m, c->f->vals[r].type))
        return 0;
    if (op->opc == IR_INT_TO_PTR) {
        const PtrForm *pf = lp_ptrform(c->plan, r);
        unsigned x = le_scalar(c, a);
        int bits = ir_dtype_bits((IrDtype)ir_type_dtype(c->m, c->f->vals[a].type));
        if (bits < 64) /* as LLVM's inttoptr: zero-extended */
            x = lo_emit(c->out, "arith.extui %%v%u : %s to i64", x, le_elem(c, c->f->vals[a].type));
        c->param_ssa[pf->param] = le_memref_at(c, x, false, pf->elem);
        return 0;
    }
    const PtrForm *pf = lp_ptrform(c->plan, a);
    unsigned base = le_base_address(c, pf->param, pf->elem);
    unsigned off = lo_emit(c->out, "arith.muli %%v%u, %%v%u : index", le_index(c, pf->off.base),
                           le_const_index(c, le_elem_bytes(c, pf->elem)));
    unsigned ad = lo_emit(c->out, "arith.addi %%v%u, %%v%u : index", base, off);
    le_set_scalar(c, r, lo_emit(c->out, "arith.index_cast %%v%u : index to %s", ad, le_elem(c, c->f->vals[r].type)));
    return 0;
}

/* ---- the walk ----------------------------------------------------------------------------- */

static int
emit_op(LeCtx *c, IrOp *op)
{
    IrRef r0 = op->nres ? op->res[0] : IR_NONE;
    switch (op->opc) {
    case IR_GET_PROGRAM_ID:
        le_set_scalar(c, r0, c->pid_ssa[op->i[0]]);
        return 0;
    case IR_GET_NUM_PROGRAMS:
        le_set_scalar(c, r0, c->num_ssa[op->i[0]]);
        return 0;
    case IR_LOAD: return le_load(c, op);
    case IR_STORE: return le_store(c, op);
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS: return le_atomic(c, op);
    case IR_DOT: return le_dot(c, op);
    case IR_REDUCE: return le_reduce(c, op);
    case IR_SCAN: return le_scan(c, op);
    case IR_RESHAPE:
    case IR_CAT:
    case IR_JOIN:
    case IR_SPLIT:
    case IR_GATHER:
    case IR_HISTOGRAM: return le_shape_op(c, op);
    case IR_FOR:
    case IR_IF:
    case IR_WHILE: return emit_region_op(c, op);
    case IR_YIELD:
    case IR_CONDITION: return emit_terminator(c, op);
    case IR_RETURN:
        if (op->parent == c->f->body)
            lo_line(c->out, "return");
        return 0;
    case IR_PROTON_RECORD: return emit_record(c, op);
    case IR_PRINT:
    case IR_ASSERT: return le_debug_op(c, op);
    case IR_SMT_ALLOC: return emit_local_buffer(c, op);
    case IR_INT_TO_PTR:
    case IR_PTR_TO_INT:
    case IR_PTR_BITCAST: return emit_int_ptr(c, op);
    default:
        break;
    }
    /* pointers, block pointers and lazy tiles: nothing here (the plan has them),
     * except an expensive tile several generics read: computed once, here */
    if (r0 && lp_val(c->plan, r0)->kind == LP_TILE && lp_val(c->plan, r0)->shared) {
        le_materialize(c, r0);
        return 0;
    }
    if (!r0 || lp_val(c->plan, r0)->kind != LP_SCALAR || !(ir_opc_flags[op->opc] & IR_F_ELEM))
        return 0;
    unsigned a[3] = {0};
    for (uint32_t i = 0; i < op->nargs && i < 3; i++)
        a[i] = le_scalar(c, op->args[i]);
    le_set_scalar(c, r0, le_scalar_op(c, op, a));
    return 0;
}

static int
emit_block(LeCtx *c, IrBlock *b)
{
    for (IrOp *op = b->first; op; op = op->next)
        if (emit_op(c, op) < 0 || c->err)
            return -1;
    return 0;
}

/* ---- the module ------------------------------------------------------------------------------- */

/* Compute-bound work: math the lowering expands into polynomials, or a dot. */
static bool
block_is_compute_bound(const IrBlock *b)
{
    for (const IrOp *op = b->first; op; op = op->next) {
        if (lo_math_expands((IrOpc)op->opc) || op->opc == IR_DOT)
            return true;
        for (uint32_t i = 0; i < op->nregs; i++)
            if (block_is_compute_bound(op->regs[i]))
                return true;
    }
    return false;
}

int
lo_vector_bytes(IrModule *m, int usual, int widest)
{
    if (widest <= usual)
        return usual;
    for (IrFunc *f = m->funcs; f; f = f->next)
        if (block_is_compute_bound(f->body))
            return widest;
    return usual;
}

static const char *
param_type(LeCtx *c, IrType t)
{
    if (!ir_type_is_ptr(c->m, t))
        return le_elem(c, t);
    int d = ir_type_dtype(c->m, ir_type_pointee(c->m, t));
    if (d < 0)
        return NULL;
    LoType mt = lt_scalar(lt_storage_elem(d));
    mt.kind = LT_MEMREF;
    mt.rank = 1;
    mt.shape[0] = LT_DYN;
    return le_ty(c, &mt);
}

static int
emit_module(LeCtx *c)
{
    LoBuf *o = c->out;
    IrFunc *f = c->f;
    lo_printf(o, "module {\n  func.func @%s(", f->name);
    for (uint32_t i = 0; i < f->body->nargs; i++) {
        IrRef a = f->body->args[i];
        const char *t = param_type(c, f->vals[a].type);
        if (!t)
            return le_error(c, f->loc, "parameter %u has an unsupported type", i);
        c->param_ssa[i] = lo_fresh(o);
        lo_printf(o, "%%v%u: %s, ", c->param_ssa[i], t);
        if (!ir_type_is_ptr(c->m, f->vals[a].type))
            le_set_scalar(c, a, c->param_ssa[i]);
    }
    for (int k = 0; k < 3; k++) {
        c->pid_ssa[k] = lo_fresh(o);
        lo_printf(o, "%%v%u: i32, ", c->pid_ssa[k]);
    }
    for (int k = 0; k < 3; k++) {
        c->num_ssa[k] = lo_fresh(o);
        lo_printf(o, "%%v%u: i32, ", c->num_ssa[k]);
    }
    c->pctx_ssa = lo_fresh(o);
    lo_printf(o, "%%v%u: !llvm.ptr) {\n", c->pctx_ssa);
    o->indent = 4;
    int rc = emit_block(c, f->body);
    o->indent = 0;
    lo_printf(o, "  }\n");
    for (int w = 0; w < 2; w++)
        if (c->decl_dpbf16 & (1 << w))
            lo_printf(o, "  llvm.func @llvm.x86.avx512bf16.dpbf16ps.%d(vector<%dxf32>, vector<%dxbf16>, vector<%dxbf16>) "
                         "-> vector<%dxf32>\n", 256 << w, 8 << w, 16 << w, 16 << w, 8 << w);
    if (c->decl_prefetch)
        lo_printf(o, "  llvm.func @llvm.prefetch.p0(!llvm.ptr, i32, i32, i32)\n");
    le_debug_globals(c, o);
    le_atomic_helpers(c, o);
    lo_printf(o, "}\n");
    return rc;
}

int
lo_lower_module(IrModule *m, const LoOptions *opt, char **text, size_t *len, IrCost *cost)
{
    IrFunc *f = NULL;
    for (IrFunc *g = m->funcs; g; g = g->next)
        if (g->is_public)
            f = g;
    if (!f) {
        ir_diag(m, (IrLoc){0}, 0, "no public kernel function in the module");
        return -1;
    }
    LoPlan *plan = lp_plan_create(m, f, opt);
    if (lp_plan_failed(plan)) {
        lp_plan_destroy(plan);
        return -1;
    }
    LoBuf out;
    lo_buf_init(&out);
    unsigned ctr = 1;
    out.ctr = &ctr;
    LeCtx c = {.m = m, .f = f, .opt = opt, .plan = plan, .x = lp_exprs(plan), .out = &out, .scope = -1};
    c.vals = calloc(f->nvals, sizeof *c.vals);
    c.param_ssa = calloc(f->body->nargs + (uint32_t)lp_num_locals(plan) + 1, sizeof *c.param_ssa);
    if (!c.vals || !c.param_ssa)
        ir_die("out of memory");
    lo_buf_init(&c.debug_globals);
    le_scope_push(&c); /* the root scope */
    int rc = emit_module(&c);
    if (cost) {
        lp_cost(plan, cost);
        lp_cost_program(plan, cost->trips, sizeof cost->trips);
    }
    free(c.vals);
    free(c.param_ssa);
    free(c.scope_parent);
    free(c.memo);
    lo_buf_fini(&c.debug_globals);
    ir_arena_fini(&c.strs);
    lp_plan_destroy(plan);
    if (rc < 0 || c.err) {
        lo_buf_fini(&out);
        return -1;
    }
    *text = lo_buf_take(&out, len);
    return 0;
}
