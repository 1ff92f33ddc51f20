/*
 * lo_emit_view.c — the emission context's small services: scopes (SSA
 * visibility across regions), diagnostics, type spellings, index values of plan
 * expressions (memoised per scope), scalar values, strided memref views of
 * kernel arguments, and the intent attributes of linalg ops.
 */
#include "lo_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- scopes ------------------------------------------------------------------------- */

int
le_scope_push(LeCtx *c)
{
    if (c->nscopes == c->capscopes) {
        c->capscopes = c->capscopes ? c->capscopes * 2 : 64;
        c->scope_parent = realloc(c->scope_parent, sizeof(int) * (size_t)c->capscopes);
        if (!c->scope_parent)
            ir_die("out of memory");
    }
    int s = c->nscopes++;
    c->scope_parent[s] = c->scope;
    c->scope = s;
    return s;
}

void le_scope_pop(LeCtx *c, int saved) { c->scope = saved; }

void
le_for_open(LeCtx *c, LeLoop *l, int64_t lo, int64_t hi, int64_t step, unsigned init, const char *ty)
{
    LoBuf *o = c->out;
    l->res = lo_fresh(o);
    l->iv = lo_fresh(o);
    l->carry = lo_fresh(o);
    /* step, hi, lo: the order the lowering's goldens hold (argument order as GCC
     * evaluated it when these were call arguments), now fixed whatever the compiler */
    unsigned vstep = le_const_index(c, step), vhi = le_const_index(c, hi), vlo = le_const_index(c, lo);
    lo_line(o, "%%v%u = scf.for %%v%u = %%v%u to %%v%u step %%v%u iter_args(%%v%u = %%v%u) -> (%s) {", l->res, l->iv,
            vlo, vhi, vstep, l->carry, init, ty);
    l->saved = c->scope;
    le_scope_push(c);
    o->indent += 2;
}

unsigned
le_for_close(LeCtx *c, LeLoop *l, unsigned v, const char *ty)
{
    LoBuf *o = c->out;
    lo_line(o, "scf.yield %%v%u : %s", v, ty);
    o->indent -= 2;
    le_scope_pop(c, l->saved);
    lo_line(o, "}");
    return l->res;
}

bool
le_scope_visible(const LeCtx *c, int s)
{
    for (int x = c->scope; x >= 0; x = c->scope_parent[x])
        if (x == s)
            return true;
    return false;
}


/* ---- types ----------------------------------------------------------------------------- */

const char *
le_ty(LeCtx *c, const LoType *t)
{
    LoBuf b;
    lo_buf_init(&b);
    lt_print(&b, t);
    char *s = ir_arena_strdup(&c->strs, b.p, b.n);
    lo_buf_fini(&b);
    return s;
}

const char *
le_tile_ty(LeCtx *c, IrType t)
{
    LoType lt = lt_of_tile(c->m, t);
    return le_ty(c, &lt);
}

const char *
le_elem(LeCtx *c, IrType t)
{
    int d = ir_type_dtype(c->m, ir_type_elem(c->m, t));
    return lt_elem_name(d < 0 ? LT_INDEX : d); /* pointers never reach element code as values */
}

/* ---- index values and scalars ------------------------------------------------------------- */

static LeMemo *
memo_of(LeCtx *c, const AExpr *e)
{
    if (e->id >= c->capmemo) {
        uint32_t cap = c->capmemo ? c->capmemo : 256;
        while (cap <= e->id)
            cap *= 2;
        c->memo = realloc(c->memo, sizeof *c->memo * cap);
        if (!c->memo)
            ir_die("out of memory");
        memset(c->memo + c->capmemo, 0, sizeof *c->memo * (cap - c->capmemo));
        c->capmemo = cap;
    }
    return &c->memo[e->id];
}

unsigned
le_index(LeCtx *c, const AExpr *e)
{
    if (e->k == AK_CARRY) {
        LeVal *lv = &c->vals[e->v];
        if (!lv->carry || !lv->carry[e->slot]) {
            le_error(c, (IrLoc){0}, "internal: carried index of value %u is not bound", e->v);
            return le_const_index(c, 0);
        }
        return lv->carry[e->slot];
    }
    LeMemo *m = memo_of(c, e);
    if (m->ssa && le_scope_visible(c, m->scope))
        return m->ssa;
    unsigned r;
    switch (e->k) {
    case AK_CONST:
        r = lo_emit(c->out, "arith.constant %lld : index", (long long)e->c);
        break;
    case AK_VAL:
        r = lo_emit(c->out, "arith.index_cast %%v%u : %s to index", le_scalar(c, e->v),
                    le_elem(c, c->f->vals[e->v].type));
        break;
    default: {
        static const char *const name[] = {[AK_ADD] = "addi", [AK_MUL] = "muli", [AK_MIN] = "minsi",
                                           [AK_MAX] = "maxsi"};
        unsigned a = le_index(c, e->a), b = le_index(c, e->b);
        r = lo_emit(c->out, "arith.%s %%v%u, %%v%u : index", name[e->k], a, b);
    }
    }
    m = memo_of(c, e); /* the table may have moved */
    m->ssa = r;
    m->scope = c->scope;
    return r;
}

unsigned le_const_index(LeCtx *c, int64_t v) { return le_index(c, ax_const(c->x, v)); }

unsigned
le_scalar(LeCtx *c, IrRef v)
{
    LeVal *lv = &c->vals[v];
    if (lv->ssa && lp_val(c->plan, v)->kind == LP_SCALAR)
        return lv->ssa;
    IrOp *d = c->f->vals[v].def;
    if (d && d->opc == IR_CONST) /* constants may be used before their op in nested scopes */
        return le_const(c, ir_type_dtype(c->m, c->f->vals[v].type), d->i[0], d->f);
    le_error(c, d ? d->loc : (IrLoc){0}, "internal: scalar value %u has no lowering", v);
    return le_const(c, IR_I32, 0, 0);
}

void
le_set_scalar(LeCtx *c, IrRef v, unsigned ssa)
{
    c->vals[v].ssa = ssa;
    c->vals[v].scope = c->scope;
}

void
le_set_tensor(LeCtx *c, IrRef v, unsigned ssa)
{
    LeVal *lv = &c->vals[v];
    lv->ssa = ssa;
    lv->scope = c->scope;
    lv->as_i8 = ir_type_dtype(c->m, c->f->vals[v].type) == IR_I1;
}

/* ---- views ------------------------------------------------------------------------------ */

unsigned
le_view(LeCtx *c, int param, IrType elem, int rank, const AExpr *base, const AExpr *const *coef,
        const unsigned *start, const unsigned *size, const int64_t *ssize, bool allow_unit, bool *unit, LoType *vt)
{
    /* offset: base + sum_k coef[k] * start[k]; the starts are SSA values of the caller */
    int64_t ov = 0;
    bool off_static = ax_is_const(base, &ov);
    for (int k = 0; k < rank; k++)
        if (start && start[k] && !ax_is_zero(coef[k]))
            off_static = false;
    unsigned offs = 0;
    if (!off_static) {
        offs = ax_is_zero(base) ? 0 : le_index(c, base);
        for (int k = 0; k < rank; k++) {
            if (!start || !start[k] || ax_is_zero(coef[k]))
                continue;
            int64_t one;
            unsigned t = ax_is_const(coef[k], &one) && one == 1
                             ? start[k]
                             : lo_emit(c->out, "arith.muli %%v%u, %%v%u : index", start[k], le_index(c, coef[k]));
            offs = offs ? lo_emit(c->out, "arith.addi %%v%u, %%v%u : index", offs, t) : t;
        }
    }
    int d = ir_type_dtype(c->m, elem);
    memset(vt, 0, sizeof *vt);
    vt->kind = LT_MEMREF;
    vt->elem = (uint8_t)d;
    vt->rank = (uint8_t)rank;
    vt->strided = 1;
    vt->offset = off_static ? ov : LT_DYN;
    unsigned sz_ssa[IR_MAX_RANK], st_ssa[IR_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        int64_t cv;
        bool cst = ax_is_const(coef[k], &cv);
        unit[k] = allow_unit && cst && cv == 0 && ssize[k] != 1;
        sz_ssa[k] = 0;
        if (unit[k] || ssize[k] == 1) {
            vt->shape[k] = 1;
        } else if (size && size[k]) {
            vt->shape[k] = LT_DYN;
            sz_ssa[k] = size[k];
        } else {
            vt->shape[k] = ssize[k];
        }
        if (cst && cv == 0 && vt->shape[k] == 1)
            cv = 1; /* a size-1 dim's stride is never used, and MLIR rejects a static 0 */
        st_ssa[k] = cst ? 0 : le_index(c, coef[k]);
        vt->stride[k] = cst ? cv : LT_DYN;
    }
    LoBuf *o = c->out;
    unsigned id = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = memref.reinterpret_cast %%v%u to offset: [", o->indent, "", id, c->param_ssa[param]);
    if (off_static)
        lo_printf(o, "%lld", (long long)ov);
    else
        lo_printf(o, "%%v%u", offs);
    lo_printf(o, "], sizes: [");
    for (int k = 0; k < rank; k++) {
        lo_printf(o, "%s", k ? ", " : "");
        if (sz_ssa[k])
            lo_printf(o, "%%v%u", sz_ssa[k]);
        else
            lo_printf(o, "%lld", (long long)vt->shape[k]);
    }
    lo_printf(o, "], strides: [");
    for (int k = 0; k < rank; k++) {
        lo_printf(o, "%s", k ? ", " : "");
        if (st_ssa[k])
            lo_printf(o, "%%v%u", st_ssa[k]);
        else
            lo_printf(o, "%lld", (long long)vt->stride[k]);
    }
    LoType src = lt_scalar(d);
    src.kind = LT_MEMREF;
    src.rank = 1;
    src.shape[0] = LT_DYN;
    lo_printf(o, "] : %s to %s\n", le_ty(c, &src), le_ty(c, vt));
    return id;
}

LoType
le_view_tensor(IrType elem, const IrModule *m, int rank, const unsigned *size, const int64_t *ssize,
               const bool *unit)
{
    int64_t shape[IR_MAX_RANK];
    for (int k = 0; k < rank; k++)
        shape[k] = unit[k] || ssize[k] == 1 ? 1 : size && size[k] ? LT_DYN : ssize[k];
    return lt_tensor(ir_type_dtype(m, elem), rank, shape);
}

void
le_kind_attrs(LeCtx *c, LoBuf *b, const char *kind, int nt, const int64_t *tile, int64_t lanes)
{
    (void)c;
    lo_printf(b, " attrs = {tritium.kind = \"%s\"", kind);
    if (lanes > 0)
        lo_printf(b, ", tritium.lanes = %lld", (long long)lanes);
    if (nt > 0) {
        lo_printf(b, ", tritium.tile = [");
        for (int i = 0; i < nt; i++)
            lo_printf(b, "%s%lld", i ? ", " : "", (long long)tile[i]);
        lo_printf(b, "]");
    }
    lo_printf(b, "}");
}

/* ---- run-time addresses (tt.int_to_ptr, tt.ptr_to_int) --------------------------------- */

int
le_elem_bytes(const LeCtx *c, IrType elem)
{
    int d = lt_storage_elem(ir_type_dtype(c->m, elem));
    return (ir_dtype_bits((IrDtype)d) + 7) / 8;
}

/* memref<?xT> of a pointer's base, T the storage element (i1 as i8). */
static LoType
base_memref_type(const LeCtx *c, IrType elem)
{
    LoType t = lt_scalar(lt_storage_elem(ir_type_dtype(c->m, elem)));
    t.kind = LT_MEMREF;
    t.rank = 1;
    t.shape[0] = LT_DYN;
    return t;
}

unsigned
le_memref_at(LeCtx *c, unsigned addr, bool is_index, IrType elem)
{
    static const char ds[] = "!llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>";
    LoBuf *o = c->out;
    LoType mt = base_memref_type(c, elem);
    if (is_index)
        addr = lo_emit(o, "arith.index_cast %%v%u : index to i64", addr);
    unsigned p = lo_emit(o, "llvm.inttoptr %%v%u : i64 to !llvm.ptr", addr);
    unsigned z = le_const(c, IR_I64, 0, 0), one = le_const(c, IR_I64, 1, 0);
    unsigned big = le_const(c, IR_I64, INT64_MAX, 0);
    unsigned d = lo_emit(o, "llvm.mlir.undef : %s", ds);
    d = lo_emit(o, "llvm.insertvalue %%v%u, %%v%u[0] : %s", p, d, ds);
    d = lo_emit(o, "llvm.insertvalue %%v%u, %%v%u[1] : %s", p, d, ds);
    d = lo_emit(o, "llvm.insertvalue %%v%u, %%v%u[2] : %s", z, d, ds);
    d = lo_emit(o, "llvm.insertvalue %%v%u, %%v%u[3, 0] : %s", big, d, ds);
    d = lo_emit(o, "llvm.insertvalue %%v%u, %%v%u[4, 0] : %s", one, d, ds);
    return lo_emit(o, "builtin.unrealized_conversion_cast %%v%u : %s to %s", d, ds, le_ty(c, &mt));
}

unsigned
le_base_address(LeCtx *c, int param, IrType elem)
{
    LoType mt = base_memref_type(c, elem);
    return lo_emit(c->out, "memref.extract_aligned_pointer_as_index %%v%u : %s -> index", c->param_ssa[param],
                   le_ty(c, &mt));
}
