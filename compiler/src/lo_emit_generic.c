/*
 * lo_emit_generic.c — fused element-wise code and the materialisation of tiles.
 *
 * Element-wise tiles (LP_TILE) and lazy loads (LP_LOAD, LM_LAZY) are not
 * emitted where they are defined. A consumer (a store, a reduction, a
 * materialisation, a loop-carried update) builds one linalg.generic over its
 * iteration space and evaluates the whole expression inside the body (eval), so
 * an activation chain feeding a store becomes one loop. Leaves are captured
 * scalars, materialised tensors (ins operands), loads (strided views read
 * directly when the load's valid region is the iteration region, else the
 * padded tile), gathers (guarded memref.load in the body) and linalg.index for
 * tl.arange. Broadcast, expand_dims and trans only change which iteration dim
 * indexes which value dim (the dim map dm).
 *
 * Loads the plan materialises where they stand (LM_WRITE, LM_LOOP, LM_ALIAS,
 * LM_WRAP) are copied into a fresh buffer at memref level (le_load_snapshot):
 * a copy there is ordered with every store, where a tensor-level copy would be
 * folded away by canonicalisation.
 */
#include "lo_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- generic bodies ------------------------------------------------------------------ */

typedef struct GenIn {
    unsigned ssa, arg, val;      /* val: the arg, converted back to i1 for byte-stored bools */
    LoType type;
    int vrank;
    int8_t dm[IR_MAX_RANK];      /* operand dim -> iteration dim, -1: constant 0 */
} GenIn;

typedef struct GenMemo {
    IrRef v;
    uint64_t key;
    unsigned ssa;
} GenMemo;

typedef struct Gen {
    LeCtx *c;
    const LoIter *it;
    LoBuf body;
    LoBuf *main;
    GenIn *ins;
    int nins, capins;
    GenMemo *memo;
    int nmemo, capmemo;
    unsigned idx[IR_MAX_RANK];   /* absolute tile index (index type) per iteration dim */
    int full_rank;               /* iteration rank (it->rank, + a reduction dim) */
    int main_scope, body_scope;  /* memoised SSA inside the body must not leak out */
    IrRef out_val;               /* IR value whose tensor is the outs operand (in-place update) */
    unsigned out_arg;            /* its element: the generic's output block argument */
    bool gathering;              /* every load leaf is read element by element */
    bool gathers;                /* the body reads memory element by element */
    int iota_dim;                /* iteration dim read from an iota input, not linalg.index (-1) */
    int64_t iota_ext;            /* its static extent */
} Gen;

/* Longest iota read as a constant (its text and rodata grow with it); longer ones are generics. */
#define LE_IOTA_MAX 8192

static uint64_t
dm_key(const int8_t *dm, int rank)
{
    uint64_t k = (uint64_t)rank;
    for (int i = 0; i < rank; i++)
        k = (k << 5) | (uint64_t)(dm[i] + 1);
    return k;
}

static void
to_main(Gen *g)
{
    g->c->out = g->main;
    g->c->scope = g->main_scope;
}

static void
to_body(Gen *g)
{
    g->c->out = &g->body;
    g->c->scope = g->body_scope;
}

static void
print_map(LoBuf *b, int iter_rank, int vrank, const int8_t *dm)
{
    lo_printf(b, "affine_map<(");
    for (int j = 0; j < iter_rank; j++)
        lo_printf(b, "%sd%d", j ? ", " : "", j);
    lo_printf(b, ") -> (");
    for (int k = 0; k < vrank; k++) {
        if (dm[k] >= 0)
            lo_printf(b, "%sd%d", k ? ", " : "", dm[k]);
        else
            lo_printf(b, "%s0", k ? ", " : "");
    }
    lo_printf(b, ")>");
}

static unsigned
add_in(Gen *g, unsigned ssa, const LoType *type, int vrank, const int8_t *dm, bool i8_to_i1)
{
    for (int i = 0; i < g->nins; i++)
        if (g->ins[i].ssa == ssa && g->ins[i].vrank == vrank && !memcmp(g->ins[i].dm, dm, (size_t)vrank))
            return g->ins[i].val;
    if (g->nins == g->capins) {
        g->capins = g->capins ? g->capins * 2 : 8;
        g->ins = realloc(g->ins, sizeof *g->ins * (size_t)g->capins);
        if (!g->ins)
            ir_die("out of memory");
    }
    GenIn *in = &g->ins[g->nins++];
    memset(in, 0, sizeof *in);
    in->ssa = ssa;
    in->type = *type;
    in->vrank = vrank;
    memcpy(in->dm, dm, (size_t)vrank);
    in->arg = lo_fresh(&g->body);
    in->val = i8_to_i1 ? lo_emit(&g->body, "arith.trunci %%v%u : i8 to i1", in->arg) : in->arg;
    return in->val;
}

/* An i32 tensor 0, 1, ..., n-1 in the main block (an iota read as an input): a
 * constant up to LE_IOTA_MAX elements, else a "fill" generic of linalg.index over
 * one dim (its text would grow with n; one parallel dim vectorises correctly). */
static unsigned
iota_tensor(Gen *g, int64_t n)
{
    LoBuf *o = g->main;
    if (n <= LE_IOTA_MAX) {
        unsigned r = lo_fresh(o);
        lo_printf(o, "%*s%%v%u = arith.constant dense<[", o->indent, "", r);
        for (int64_t i = 0; i < n; i++)
            lo_printf(o, "%s%lld", i ? ", " : "", (long long)i);
        lo_printf(o, "]> : tensor<%lldxi32>\n", (long long)n);
        return r;
    }
    LoType t = lt_tensor(IR_I32, 1, &n);
    const char *ts = le_ty(g->c, &t);
    unsigned e = lo_fresh(o), r = lo_fresh(o), arg = lo_fresh(o), ix = lo_fresh(o), v = lo_fresh(o);
    int64_t tile[1];
    le_elementwise_tile(g->c, 1, &n, 4, tile);
    lo_printf(o, "%*s%%v%u = bufferization.alloc_tensor() : %s\n", o->indent, "", e, ts);
    lo_printf(o, "%*s%%v%u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], "
                 "iterator_types = [\"parallel\"]} outs(%%v%u : %s)", o->indent, "", r, e, ts);
    le_kind_attrs(g->c, o, "fill", 1, tile, 0);
    lo_printf(o, " {\n%*s^bb0(%%v%u: i32):\n", o->indent, "", arg);
    lo_line(o, "  %%v%u = linalg.index 0 : index", ix);
    lo_line(o, "  %%v%u = arith.index_cast %%v%u : index to i32", v, ix);
    lo_line(o, "  linalg.yield %%v%u : i32", v);
    lo_line(o, "} -> %s", ts);
    return r;
}

/* Absolute tile index of iteration dim j (index type), emitted once per body. The
 * reduced dim of a row reduction that is tiled into a vector accumulator reads an
 * iota input instead: MLIR 19's partial-reduction tiling does not offset
 * linalg.index into the chunk, and the untiled alternative (one vector of the whole
 * row) costs a masked layer norm's where(cols < N, ...) a third of its speed. */
static unsigned
abs_index(Gen *g, int j)
{
    if (!g->idx[j] && j == g->iota_dim) {
        unsigned t = iota_tensor(g, g->iota_ext);
        LoType ty = lt_tensor(IR_I32, 1, &g->iota_ext);
        int8_t dm[1] = {(int8_t)j};
        unsigned x = add_in(g, t, &ty, 1, dm, false);
        unsigned i = lo_emit(&g->body, "arith.index_cast %%v%u : i32 to index", x);
        if (j < g->it->rank && g->it->lo[j])
            i = lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", i, g->it->lo[j]);
        g->idx[j] = i;
    }
    if (!g->idx[j]) {
        unsigned i = lo_emit(&g->body, "linalg.index %d : index", j);
        if (j < g->it->rank && g->it->lo[j])
            i = lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", i, g->it->lo[j]);
        g->idx[j] = i;
    }
    return g->idx[j];
}

/* Whether an operand of rank r read through dm leaves an iteration dim out (is
 * broadcast along it). */
static bool
broadcast_in(const Gen *g, int r, const int8_t *dm)
{
    for (int j = 0; j < g->it->rank; j++) {
        bool used = false;
        for (int k = 0; k < r; k++)
            used |= dm[k] == j;
        if (!used)
            return true;
    }
    return false;
}

/* Slices a full-tile tensor 'ssa' (IR type t) to the iteration region as seen
 * through dm, then adds it as an input. */
static unsigned
tensor_in(Gen *g, unsigned ssa, IrType t, const int8_t *dm, bool as_i8)
{
    LeCtx *c = g->c;
    int r = ir_type_rank(c->m, t);
    LoType ty = lt_of_tile(c->m, t);
    bool slice = false;
    for (int k = 0; k < r; k++)
        if (dm[k] >= 0 && dm[k] < g->it->rank && (g->it->lo[dm[k]] || g->it->size[dm[k]]))
            slice = true;
    if (slice) {
        LoType nty = ty;
        to_main(g);
        LoBuf *o = c->out;
        if (broadcast_in(g, r, dm)) {
            /* MLIR 19 folds the slice and a tensor.pad behind it into the generic's
             * broadcasting read, then rejects the masked broadcast (lower-vector-mask:
             * "requires broadcast dimensions to be in-bounds"); a copy of the (small,
             * broadcast) tile stands between them. */
            unsigned cp = lo_fresh(o);
            lo_printf(o, "%*s%%v%u = bufferization.alloc_tensor() copy(%%v%u) : %s\n", o->indent, "", cp, ssa,
                      le_ty(c, &ty));
            ssa = cp;
        }
        unsigned id = lo_fresh(o);
        lo_printf(o, "%*s%%v%u = tensor.extract_slice %%v%u[", o->indent, "", id, ssa);
        for (int k = 0; k < r; k++) {
            int j = dm[k];
            bool reg = j >= 0 && j < g->it->rank;
            if (reg && g->it->lo[j])
                lo_printf(o, "%s%%v%u", k ? ", " : "", g->it->lo[j]);
            else
                lo_printf(o, "%s0", k ? ", " : "");
        }
        lo_printf(o, "] [");
        for (int k = 0; k < r; k++) {
            int j = dm[k];
            if (j >= 0 && j < g->it->rank && g->it->size[j]) {
                lo_printf(o, "%s%%v%u", k ? ", " : "", g->it->size[j]);
                nty.shape[k] = LT_DYN;
            } else {
                lo_printf(o, "%s%lld", k ? ", " : "", (long long)ty.shape[k]);
            }
        }
        lo_printf(o, "] [");
        for (int k = 0; k < r; k++)
            lo_printf(o, "%s1", k ? ", " : "");
        lo_printf(o, "] : %s to %s\n", le_ty(c, &ty), le_ty(c, &nty));
        ssa = id;
        ty = nty;
        to_body(g);
    }
    return add_in(g, ssa, &ty, r, dm, as_i8);
}

static unsigned eval(Gen *g, IrRef v, const int8_t *dm);

/* A load leaf read straight from memory through a strided view. */
static unsigned
load_view_in(Gen *g, IrOp *ld, const LpMem *mem, const int8_t *dm)
{
    LeCtx *c = g->c;
    IrType lt = c->f->vals[ld->res[0]].type;
    int r = ir_type_rank(c->m, lt);
    unsigned start[IR_MAX_RANK] = {0}, size[IR_MAX_RANK] = {0};
    int64_t ssize[IR_MAX_RANK];
    for (int k = 0; k < r; k++) {
        int j = dm[k];
        if (j >= 0 && j < g->it->rank) {
            start[k] = g->it->lo[j];
            size[k] = g->it->size[j];
            ssize[k] = g->it->shape[j];
        } else {
            ssize[k] = 1;
        }
    }
    bool unit[IR_MAX_RANK] = {0};
    IrType elem = ir_type_elem(c->m, lt);
    LoType mt;
    to_main(g);
    unsigned view = le_view(c, mem->param, elem, r, mem->form.base, mem->form.coef, start, size, ssize, true, unit, &mt);
    LoType tt = le_view_tensor(elem, c->m, r, size, ssize, unit);
    unsigned t = lo_emit(c->out, "bufferization.to_tensor %%v%u restrict : %s", view, le_ty(c, &mt));
    to_body(g);
    int8_t dm2[IR_MAX_RANK];
    for (int k = 0; k < r; k++)
        dm2[k] = unit[k] ? -1 : dm[k];
    return add_in(g, t, &tt, r, dm2, false);
}

/* Index of iteration point dm in a wrapped dim: (wbase + i) mod M, else i. */
static unsigned
dim_index(Gen *g, const AForm *f, int k, const int8_t *dm)
{
    LeCtx *c = g->c;
    unsigned i = dm[k] >= 0 ? abs_index(g, dm[k]) : 0;
    if (!f->wrap[k])
        return i;
    to_main(g);
    unsigned wb = le_index(c, f->wbase[k]), m = le_index(c, f->wrap[k]);
    unsigned one = le_const_index(c, 1);
    unsigned safe = lo_emit(c->out, "arith.maxsi %%v%u, %%v%u : index", m, one);
    to_body(g);
    unsigned s = i ? lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", wb, i) : wb;
    return lo_emit(&g->body, "arith.remsi %%v%u, %%v%u : index", s, safe);
}

/* Element offset of a gathered pointer at the iteration point:
 * base + sum coef*idx + sum gen(i); for a tile of addresses (p->abs), the byte
 * address gen(0) + that offset (from the other terms) times the element size. */
static unsigned
gather_index(Gen *g, const PtrForm *p, const int8_t *dm)
{
    LeCtx *c = g->c;
    to_main(g);
    unsigned acc = le_index(c, p->off.base);
    unsigned coefs[IR_MAX_RANK];
    for (int k = 0; k < p->off.rank; k++)
        coefs[k] = ax_is_zero(p->off.coef[k]) ? 0 : le_index(c, p->off.coef[k]);
    to_body(g);
    for (int k = 0; k < p->off.rank; k++) {
        if (!coefs[k] || (dm[k] < 0 && !p->off.wrap[k]))
            continue;
        unsigned i = dim_index(g, &p->off, k, dm);
        if (!i)
            continue;
        unsigned t = lo_emit(&g->body, "arith.muli %%v%u, %%v%u : index", i, coefs[k]);
        acc = lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", acc, t);
    }
    unsigned addr = 0;
    for (int i = 0; i < p->ngen; i++) {
        IrRef gv = p->gen[i];
        int8_t gdm[IR_MAX_RANK]; /* gen dim -> iteration dim */
        for (int k = 0; k < ir_type_rank(c->m, c->f->vals[gv].type); k++)
            gdm[k] = p->gdm[i][k] < 0 ? -1 : dm[p->gdm[i][k]];
        unsigned x = eval(g, gv, gdm);
        bool a = p->abs && i == 0; /* an address: zero-extended, as LLVM's inttoptr */
        unsigned xi = lo_emit(&g->body, "arith.index_cast%s %%v%u : %s to index", a ? "ui" : "", x,
                              le_elem(c, c->f->vals[gv].type));
        if (a)
            addr = xi;
        else
            acc = lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", acc, xi);
    }
    if (!p->abs)
        return acc;
    to_main(g);
    unsigned es = le_const_index(c, le_elem_bytes(c, p->elem));
    to_body(g);
    unsigned bytes = lo_emit(&g->body, "arith.muli %%v%u, %%v%u : index", acc, es);
    return lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", addr, bytes);
}

/* The memref and index a gathered element of pointer p is read or written at, from
 * gather_index's x: the base's memref at x, or a memref at byte address x (p->abs). */
static unsigned
gather_ref(Gen *g, const PtrForm *p, unsigned x, unsigned *idx)
{
    LeCtx *c = g->c;
    if (!p->abs) {
        *idx = x;
        return c->param_ssa[p->param];
    }
    to_main(g);
    *idx = le_const_index(c, 0);
    to_body(g);
    return le_memref_at(c, x, true, p->elem);
}

/* tt.ptr_to_int of a pointer tile at the iteration point: the byte address. */
static unsigned
ptr_address(Gen *g, const IrOp *d, const int8_t *dm)
{
    LeCtx *c = g->c;
    const PtrForm *p = lp_ptrform(c->plan, d->args[0]);
    unsigned x = gather_index(g, p, dm);
    if (!p->abs) {
        to_main(g);
        unsigned base = le_base_address(c, p->param, p->elem);
        unsigned es = le_const_index(c, le_elem_bytes(c, p->elem));
        to_body(g);
        unsigned bytes = lo_emit(&g->body, "arith.muli %%v%u, %%v%u : index", x, es);
        x = lo_emit(&g->body, "arith.addi %%v%u, %%v%u : index", base, bytes);
    }
    return lo_emit(&g->body, "arith.index_cast %%v%u : index to %s", x, le_elem(c, c->f->vals[d->res[0]].type));
}

/* A load leaf read element by element: memref.load guarded by the mask. */
static unsigned
gather_load(Gen *g, IrOp *ld, const int8_t *dm)
{
    LeCtx *c = g->c;
    const PtrForm *p = lp_ptrform(c->plan, ld->args[0]);
    if (!p) {
        le_error(c, ld->loc, "unsupported pointer expression in tl.load");
        return le_const(c, IR_I32, 0, 0);
    }
    const char *et = le_elem(c, p->elem);
    g->gathers = true;
    unsigned idx, at = gather_index(g, p, dm), mem;
    if (ld->nargs < 2 && !p->abs) {
        /* unguarded, from a parameter: tensor.extract, which MLIR's vectorizer turns
         * into a vector.gather (a contiguous read where the index allows) */
        to_main(g);
        unsigned t = lo_emit(c->out, "bufferization.to_tensor %%v%u restrict : memref<?x%s>",
                             c->param_ssa[p->param], et);
        to_body(g);
        return lo_emit(&g->body, "tensor.extract %%v%u[%%v%u] : tensor<?x%s>", t, at, et);
    }
    if (ld->nargs < 2) {
        mem = gather_ref(g, p, at, &idx);
        return lo_emit(&g->body, "memref.load %%v%u[%%v%u] : memref<?x%s>", mem, idx, et);
    }
    unsigned m = eval(g, ld->args[1], dm);
    unsigned oth = ld->nargs >= 3 ? eval(g, ld->args[2], dm) : le_const(c, ir_type_dtype(c->m, p->elem), 0, 0.0);
    LoBuf *b = &g->body;
    unsigned r = lo_fresh(b);
    lo_line(b, "%%v%u = scf.if %%v%u -> (%s) {", r, m, et);
    b->indent += 2;
    mem = gather_ref(g, p, at, &idx);
    unsigned x = lo_emit(b, "memref.load %%v%u[%%v%u] : memref<?x%s>", mem, idx, et);
    lo_line(b, "scf.yield %%v%u : %s", x, et);
    b->indent -= 2;
    lo_line(b, "} else {");
    lo_line(b, "  scf.yield %%v%u : %s", oth, et);
    lo_line(b, "}");
    return r;
}

static unsigned
load_leaf(Gen *g, IrRef v, IrOp *ld, const int8_t *dm)
{
    LeCtx *c = g->c;
    LeVal *lv = &c->vals[v];
    if (lv->ssa && le_scope_visible(c, lv->scope))
        return tensor_in(g, lv->ssa, c->f->vals[v].type, dm, lv->as_i8);
    const LpMem *mem = lp_mem(c->plan, ld);
    if (g->gathering || mem->access == LA_GATHER)
        return gather_load(g, ld, dm);
    if (mem->access == LA_VIEW && lp_region_covers(&mem->reg, dm, &g->it->reg))
        return load_view_in(g, ld, mem, dm);
    /* the valid region differs from the iteration space: read the padded tile */
    to_main(g);
    unsigned t = le_materialize(c, v);
    to_body(g);
    return tensor_in(g, t, c->f->vals[v].type, dm, c->vals[v].as_i8);
}

/* Value v evaluated at the current iteration point; dm maps v's dims to
 * iteration dims (-1: unit dim). */
static unsigned
eval(Gen *g, IrRef v, const int8_t *dm)
{
    LeCtx *c = g->c;
    IrVal *val = &c->f->vals[v];
    int r = ir_type_rank(c->m, val->type);
    if (r == 0)
        return le_scalar(c, v);
    uint64_t key = dm_key(dm, r);
    if (v == g->out_val) { /* reading the tile being updated in place: the out element */
        bool ident = r == g->it->rank;
        for (int k = 0; k < r; k++)
            ident &= dm[k] == k;
        if (ident)
            return g->out_arg;
    }
    for (int i = 0; i < g->nmemo; i++)
        if (g->memo[i].v == v && g->memo[i].key == key)
            return g->memo[i].ssa;
    LeVal *lv = &c->vals[v];
    const LpVal *pv = lp_val(c->plan, v);
    unsigned res;
    IrOp *d = val->def;
    if (lv->ssa && le_scope_visible(c, lv->scope)) {
        res = tensor_in(g, lv->ssa, val->type, dm, lv->as_i8);
    } else if (!d || pv->kind == LP_TENSOR) {
        to_main(g);
        unsigned t = le_materialize(c, v);
        to_body(g);
        res = tensor_in(g, t, val->type, dm, c->vals[v].as_i8);
    } else {
        int8_t dm2[IR_MAX_RANK];
        unsigned a[3];
        switch (d->opc) {
        case IR_CONST:
            res = le_const(c, ir_type_dtype(c->m, val->type), d->i[0], d->f);
            break;
        case IR_SPLAT:
            res = le_scalar(c, d->args[0]);
            break;
        case IR_MAKE_RANGE: {
            unsigned i = dm[0] >= 0 ? abs_index(g, dm[0]) : le_const_index(c, 0);
            unsigned i32 = lo_emit(c->out, "arith.index_cast %%v%u : index to i32", i);
            if (d->i[0])
                i32 = lo_emit(c->out, "arith.addi %%v%u, %%v%u : i32", i32, le_const(c, IR_I32, d->i[0], 0));
            res = i32;
            break;
        }
        case IR_BROADCAST: {
            const int64_t *xs = ir_type_shape(c->m, c->f->vals[d->args[0]].type);
            for (int k = 0; k < r; k++)
                dm2[k] = xs[k] == 1 ? -1 : dm[k];
            res = eval(g, d->args[0], dm2);
            break;
        }
        case IR_EXPAND_DIMS:
            for (int k = 0, j = 0; k < r; k++)
                if (k != d->i[0])
                    dm2[j++] = dm[k];
            res = eval(g, d->args[0], dm2);
            break;
        case IR_TRANS:
            for (int k = 0; k < r; k++)
                dm2[d->ints[k]] = dm[k];
            res = eval(g, d->args[0], dm2);
            break;
        case IR_LOAD:
            res = load_leaf(g, v, d, dm);
            break;
        case IR_PTR_TO_INT:
            res = ptr_address(g, d, dm);
            break;
        default:
            if (!(ir_opc_flags[d->opc] & IR_F_ELEM) || d->nargs > 3) {
                le_error(c, d->loc, "internal: %s is not element-wise", ir_opc_name[d->opc]);
                return le_const(c, IR_I32, 0, 0);
            }
            for (uint32_t i = 0; i < d->nargs; i++)
                a[i] = eval(g, d->args[i], dm);
            res = le_scalar_op(c, d, a);
        }
    }
    if (g->nmemo == g->capmemo) {
        g->capmemo = g->capmemo ? g->capmemo * 2 : 32;
        g->memo = realloc(g->memo, sizeof *g->memo * (size_t)g->capmemo);
        if (!g->memo)
            ir_die("out of memory");
    }
    g->memo[g->nmemo++] = (GenMemo){v, key, res};
    return res;
}

/* ---- iteration spaces and generic emission ---------------------------------------------- */

void
le_iter(LeCtx *c, const Region *r, int rank, const int64_t *shape, LoIter *it)
{
    LoExprs *x = c->x;
    memset(it, 0, sizeof *it);
    it->rank = rank;
    memcpy(it->shape, shape, sizeof(int64_t) * (size_t)rank);
    if (r)
        it->reg = *r;
    else
        it->reg.rank = rank;
    for (int d = 0; d < rank; d++) {
        if (!it->reg.lo[d] && !it->reg.hi[d] && !(it->reg.cond && d == 0))
            continue;
        const AExpr *B = ax_const(x, shape[d]);
        const AExpr *lo = it->reg.lo[d] ? ax_min(x, ax_max(x, it->reg.lo[d], ax_const(x, 0)), B) : NULL;
        const AExpr *hi = it->reg.hi[d] ? ax_max(x, ax_min(x, it->reg.hi[d], B), lo ? lo : ax_const(x, 0)) : B;
        const AExpr *sz = lo ? ax_sub(x, hi, lo) : hi;
        int64_t k;
        if (lo && !ax_is_zero(lo))
            it->lo[d] = le_index(c, lo);
        unsigned s = ax_is_const(sz, &k) && k == shape[d] ? 0 : le_index(c, sz);
        if (it->reg.cond && d == 0) {
            unsigned cnd = le_scalar(c, it->reg.cond);
            unsigned full = s ? s : le_const_index(c, shape[d]);
            s = lo_emit(c->out, "arith.select %%v%u, %%v%u, %%v%u : index", cnd, full, le_const_index(c, 0));
        }
        it->size[d] = s;
    }
}

LoType
le_iter_tensor(const LoIter *it, int elem)
{
    LoType t = lt_tensor(elem, it->rank, it->shape);
    for (int d = 0; d < it->rank; d++)
        if (it->size[d])
            t.shape[d] = LT_DYN;
    return t;
}

static void
gen_init(Gen *g, LeCtx *c, const LoIter *it, int full_rank)
{
    memset(g, 0, sizeof *g);
    g->c = c;
    g->it = it;
    g->main = c->out;
    lo_buf_init(&g->body);
    g->body.ctr = c->out->ctr;
    g->body.indent = c->out->indent + 2;
    g->full_rank = full_rank;
    g->main_scope = c->scope;
    g->body_scope = le_scope_push(c);
    c->scope = g->main_scope;
    g->iota_dim = -1;
}

static void
gen_fini(Gen *g)
{
    lo_buf_fini(&g->body);
    free(g->ins);
    free(g->memo);
}

static void
iter_types(LoBuf *b, int rank, int red_dim)
{
    for (int d = 0; d < rank; d++)
        lo_printf(b, "%s\"%s\"", d ? ", " : "", d == red_dim ? "reduction" : "parallel");
}

/* A generic whose operands leave an iteration dim unread (a reduction of a tile
 * computed only from gathered loads and indices: nothing but the rank-0 init) has no
 * loop bounds for MLIR; such a generic reads a byte tensor of the iteration shape
 * whose values it ignores. Static shapes only (reductions iterate over whole tiles). */
static void
add_shape_operand(Gen *g, int out_rank, const int8_t *out_dm)
{
    bool seen[IR_MAX_RANK] = {0};
    for (int k = 0; k < out_rank; k++)
        if (out_dm[k] >= 0)
            seen[out_dm[k]] = true;
    for (int i = 0; i < g->nins; i++)
        for (int k = 0; k < g->ins[i].vrank; k++)
            if (g->ins[i].dm[k] >= 0)
                seen[g->ins[i].dm[k]] = true;
    bool all = true;
    for (int d = 0; d < g->full_rank; d++)
        all &= seen[d] || g->it->size[d] != 0 || d >= g->it->rank;
    if (all || g->full_rank != g->it->rank)
        return;
    LoType t = lt_tensor(IR_I8, g->it->rank, g->it->shape);
    int8_t dm[IR_MAX_RANK];
    for (int d = 0; d < g->it->rank; d++)
        dm[d] = (int8_t)d;
    LoBuf *saved = g->c->out;
    g->c->out = g->main;
    unsigned shape = le_alloc_tensor(g->c, &t);
    g->c->out = saved;
    add_in(g, shape, &t, g->it->rank, dm, false);
}

/* Writes the generic: header, block arguments, the body, the terminator line. */
static void
emit_generic(Gen *g, unsigned res, int red_dim, unsigned outs, const LoType *outs_type, int out_rank,
             const int8_t *out_dm, int out_elem, const char *kind, int nt, const int64_t *tile, int64_t lanes)
{
    LeCtx *c = g->c;
    LoBuf *o = g->main;
    add_shape_operand(g, out_rank, out_dm);
    lo_printf(o, "%*s", o->indent, "");
    if (res)
        lo_printf(o, "%%v%u = ", res);
    lo_printf(o, "linalg.generic {indexing_maps = [");
    for (int i = 0; i < g->nins; i++) {
        print_map(o, g->full_rank, g->ins[i].vrank, g->ins[i].dm);
        lo_printf(o, ", ");
    }
    print_map(o, g->full_rank, out_rank, out_dm);
    lo_printf(o, "], iterator_types = [");
    iter_types(o, g->full_rank, red_dim);
    lo_printf(o, "]}");
    if (g->nins) {
        lo_printf(o, " ins(");
        for (int i = 0; i < g->nins; i++)
            lo_printf(o, "%s%%v%u", i ? ", " : "", g->ins[i].ssa);
        lo_printf(o, " : ");
        for (int i = 0; i < g->nins; i++)
            lo_printf(o, "%s%s", i ? ", " : "", le_ty(c, &g->ins[i].type));
        lo_printf(o, ")");
    }
    lo_printf(o, " outs(%%v%u : %s)", outs, le_ty(c, outs_type));
    le_kind_attrs(c, o, kind, nt, tile, lanes);
    lo_printf(o, " {\n%*s^bb0(", o->indent, "");
    for (int i = 0; i < g->nins; i++)
        lo_printf(o, "%%v%u: %s, ", g->ins[i].arg, lt_elem_name(g->ins[i].type.elem));
    lo_printf(o, "%%v%u: %s):\n", g->out_arg, lt_elem_name(out_elem));
    if (g->body.p)
        lo_append(o, g->body.p, g->body.n);
    if (outs_type->kind == LT_TENSOR)
        lo_line(o, "} -> %s", le_ty(c, outs_type));
    else
        lo_line(o, "}");
}

/* The tile sizes an element-wise generic wants over an iteration space of the
 * given shape (LT_DYN: dynamic): outer dims by one, the innermost by the vector
 * length (untiled when its static extent fits in one vector). */
int
le_elementwise_tile(const LeCtx *c, int rank, const int64_t *shape, int elem_bytes, int64_t *tile)
{
    int vl = c->opt->vector_bytes / (elem_bytes > 0 ? elem_bytes : 4);
    if (vl < 1)
        vl = 1;
    for (int d = 0; d + 1 < rank; d++)
        tile[d] = shape[d] == 1 ? 0 : 1;
    if (rank)
        tile[rank - 1] = shape[rank - 1] != LT_DYN && shape[rank - 1] <= vl ? 0 : vl;
    return rank;
}

static int
iter_tile(const LeCtx *c, const LoIter *it, int elem_bytes, int64_t *tile)
{
    LoType t = le_iter_tensor(it, IR_F32);
    return le_elementwise_tile(c, it->rank, t.shape, elem_bytes, tile);
}

static int
elem_bytes_of(int elem)
{
    return elem == LT_INDEX ? 8 : (ir_dtype_bits((IrDtype)elem) + 7) / 8;
}

/* The widest element a generic reads or writes. */
static int
widest(const Gen *g, int out_elem)
{
    int w = elem_bytes_of(out_elem);
    for (int i = 0; i < g->nins; i++)
        if (elem_bytes_of(g->ins[i].type.elem) > w)
            w = elem_bytes_of(g->ins[i].type.elem);
    return w;
}

unsigned
le_alloc_tensor(LeCtx *c, const LoType *t)
{
    LoBuf *o = c->out;
    unsigned id = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = bufferization.alloc_tensor(", o->indent, "", id);
    (void)t;
    lo_printf(o, ") : %s\n", le_ty(c, t));
    return id;
}

/* A fresh tensor of the iteration region's shape (dynamic sizes from it). */
static unsigned
region_tensor(LeCtx *c, const LoIter *it, const LoType *t)
{
    LoBuf *o = c->out;
    unsigned id = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = bufferization.alloc_tensor(", o->indent, "", id);
    int n = 0;
    for (int d = 0; d < it->rank; d++)
        if (it->size[d])
            lo_printf(o, "%s%%v%u", n++ ? ", " : "", it->size[d]);
    lo_printf(o, ") : %s\n", le_ty(c, t));
    return id;
}

static unsigned
generic_into(LeCtx *c, const LoIter *it, IrRef v, unsigned outs, const LoType *outs_type, IrRef dest_val,
             bool gathering)
{
    IrType et = ir_type_elem(c->m, c->f->vals[v].type);
    bool is_i1 = ir_type_dtype(c->m, et) == IR_I1;
    int elem = lt_storage_elem(ir_type_dtype(c->m, et));
    LoType rtype = le_iter_tensor(it, elem);
    if (!outs) {
        outs = region_tensor(c, it, &rtype);
        outs_type = &rtype;
    }
    Gen g;
    gen_init(&g, c, it, it->rank);
    g.gathering = gathering;
    unsigned res = lo_fresh(c->out);
    g.out_arg = lo_fresh(c->out);
    g.out_val = is_i1 ? IR_NONE : dest_val;
    to_body(&g);
    int8_t dm[IR_MAX_RANK];
    for (int d = 0; d < it->rank; d++)
        dm[d] = (int8_t)d;
    unsigned r = eval(&g, v, dm);
    if (is_i1)
        r = lo_emit(&g.body, "arith.extui %%v%u : i1 to i8", r);
    lo_line(&g.body, "linalg.yield %%v%u : %s", r, lt_elem_name(elem));
    to_main(&g);
    int64_t tile[IR_MAX_RANK];
    int nt = iter_tile(c, it, widest(&g, elem), tile);
    emit_generic(&g, res, -1, outs, outs_type, it->rank, dm, elem, g.gathers ? "gather" : "elementwise", nt, tile, 0);
    gen_fini(&g);
    return res;
}

unsigned
le_generic(LeCtx *c, const LoIter *it, IrRef v, unsigned outs, const LoType *outs_type, IrRef dest_val)
{
    return generic_into(c, it, v, outs, outs_type, dest_val, false);
}

/* ---- materialisation ----------------------------------------------------------------------- */

/* Scalar SSA of the padding value of load ld (other, or the block pointer padding). */
static unsigned
pad_value(LeCtx *c, IrOp *ld, IrType elem)
{
    int d = ir_type_dtype(c->m, elem);
    if (lp_bptr(c->plan, ld->args[0])) {
        double v = 0;
        switch (ld->i[0]) {
        case IR_PAD_NAN: v = NAN; break;
        case IR_PAD_NEG_INF: v = -INFINITY; break;
        case IR_PAD_INF: v = INFINITY; break;
        default: break;
        }
        return le_const(c, d, 0, v);
    }
    if (ld->nargs < 3)
        return le_const(c, d, 0, 0.0);
    IrOp *od = c->f->vals[ld->args[2]].def;
    if (od && od->opc == IR_CONST)
        return le_const(c, d, od->i[0], od->f);
    return le_scalar(c, od->args[0]); /* a splat (LpMem.pad_uniform) */
}

/* "[[0, 1], [2]]": the dims of each of n collapsed dims (groups[k]: dim k's). */
static void
reassoc(LoBuf *o, const int *groups, int r, int n)
{
    lo_printf(o, "[");
    for (int g = 0; g < n; g++) {
        lo_printf(o, "%s[", g ? ", " : "");
        int m = 0;
        for (int k = 0; k < r; k++)
            if (groups[k] == g)
                lo_printf(o, "%s%d", m++ ? ", " : "", k);
        lo_printf(o, "]");
    }
    lo_printf(o, "]");
}

/* Does the view load v read one element across a dim of several lanes (a zero
 * stride, `x_ptr + 0 * r`)? Such a view is no memref: tile_generic broadcasts it. */
static bool
broadcasts(LeCtx *c, IrRef v, const LpMem *mem)
{
    IrType t = c->f->vals[v].type;
    int r = ir_type_rank(c->m, t);
    const int64_t *shape = ir_type_shape(c->m, t);
    for (int k = 0; k < r; k++)
        if (shape[k] != 1 && ax_is_zero(mem->form.coef[k]))
            return true;
    return false;
}

unsigned
le_load_view_tensor(LeCtx *c, IrRef v, LoIter *it, LoType *tt)
{
    IrVal *val = &c->f->vals[v];
    const LpMem *mem = lp_mem(c->plan, val->def);
    if (mem->access != LA_VIEW || !mem->pad_uniform || broadcasts(c, v, mem))
        return 0;
    IrType elem = ir_type_elem(c->m, val->type);
    int r = ir_type_rank(c->m, val->type);
    const int64_t *shape = ir_type_shape(c->m, val->type);
    le_iter(c, &mem->reg, r, shape, it);
    bool unit[IR_MAX_RANK] = {0};
    LoType mt;
    unsigned view = le_view(c, mem->param, elem, r, mem->form.base, mem->form.coef, it->lo, it->size, shape, false,
                            unit, &mt);
    *tt = le_view_tensor(elem, c->m, r, it->size, shape, unit);
    return lo_emit(c->out, "bufferization.to_tensor %%v%u restrict : %s", view, le_ty(c, &mt));
}

/* The padded full tile of a lazy view load, read where the consumer is. */
static unsigned
padded_tile(LeCtx *c, IrRef v)
{
    IrVal *val = &c->f->vals[v];
    IrOp *ld = val->def;
    IrType elem = ir_type_elem(c->m, val->type);
    int r = ir_type_rank(c->m, val->type);
    const int64_t *shape = ir_type_shape(c->m, val->type);
    LoIter it;
    LoType tt;
    unsigned t = le_load_view_tensor(c, v, &it, &tt);
    bool padded = false;
    for (int k = 0; k < r; k++)
        padded |= it.lo[k] || it.size[k];
    if (!padded)
        return t;
    unsigned pad = pad_value(c, ld, elem);
    /* Unmasked size-1 dims are collapsed away before the pad and expanded after it:
     * MLIR 19 folds a consumer's broadcasting read of a padded [n, 1] tile into the
     * pad's masked read and then rejects the masked broadcast (lower-vector-mask:
     * "requires broadcast dimensions to be in-bounds"); a padded [n] tile expanded
     * to [n, 1] vectorises. groups[k]: the collapsed dim that dim k joins. */
    int groups[IR_MAX_RANK], nsq = 0;
    bool squeeze = false;
    for (int k = 0; k < r; k++) {
        bool drop = shape[k] == 1 && !it.lo[k] && !it.size[k];
        squeeze |= drop;
        groups[k] = drop ? -1 : nsq++;
    }
    if (squeeze && nsq > 0) {
        int last = -1;
        for (int k = r - 1; k >= 0; k--) /* a unit dim joins the next kept dim (the last: the previous one) */
            groups[k] = groups[k] >= 0 ? (last = groups[k]) : last;
        for (int k = 0; k < r; k++)
            if (groups[k] < 0)
                groups[k] = nsq - 1;
    } else {
        squeeze = false;
    }
    LoType sq = tt;
    unsigned kept[IR_MAX_RANK];
    int nk = 0;
    if (squeeze) {
        for (int k = 0; k < r; k++)
            if (!(shape[k] == 1 && !it.lo[k] && !it.size[k]))
                kept[nk++] = (unsigned)k;
        sq.rank = (uint8_t)nk;
        for (int j = 0; j < nk; j++)
            sq.shape[j] = tt.shape[kept[j]];
        LoBuf *o = c->out;
        unsigned cs = lo_fresh(o);
        lo_printf(o, "%*s%%v%u = tensor.collapse_shape %%v%u ", o->indent, "", cs, t);
        reassoc(o, groups, r, nsq);
        lo_printf(o, " : %s into %s\n", le_ty(c, &tt), le_ty(c, &sq));
        t = cs;
    }
    unsigned hi_pad[IR_MAX_RANK];
    for (int k = 0; k < r; k++) {
        hi_pad[k] = 0;
        if (it.size[k]) {
            unsigned used = it.lo[k] ? lo_emit(c->out, "arith.addi %%v%u, %%v%u : index", it.lo[k], it.size[k])
                                     : it.size[k];
            hi_pad[k] = lo_emit(c->out, "arith.subi %%v%u, %%v%u : index", le_const_index(c, shape[k]), used);
        }
    }
    if (!squeeze)
        for (int k = 0; k < r; k++)
            kept[nk++] = (unsigned)k;
    LoBuf *o = c->out;
    unsigned res = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = tensor.pad %%v%u low[", o->indent, "", res, t);
    for (int j = 0; j < nk; j++) {
        int k = (int)kept[j];
        if (it.lo[k])
            lo_printf(o, "%s%%v%u", j ? ", " : "", it.lo[k]);
        else
            lo_printf(o, "%s0", j ? ", " : "");
    }
    lo_printf(o, "] high[");
    for (int j = 0; j < nk; j++) {
        int k = (int)kept[j];
        if (hi_pad[k])
            lo_printf(o, "%s%%v%u", j ? ", " : "", hi_pad[k]);
        else
            lo_printf(o, "%s0", j ? ", " : "");
    }
    lo_printf(o, "] {\n%*s^bb0(", o->indent, "");
    for (int j = 0; j < nk; j++)
        lo_printf(o, "%s%%v%u: index", j ? ", " : "", lo_fresh(o));
    lo_printf(o, "):\n");
    LoType full = lt_of_tile(c->m, val->type);
    LoType pfull = full;
    if (squeeze) {
        pfull.rank = (uint8_t)nk;
        for (int j = 0; j < nk; j++)
            pfull.shape[j] = full.shape[kept[j]];
    }
    lo_line(o, "  tensor.yield %%v%u : %s", pad, le_elem(c, elem));
    lo_line(o, "} : %s to %s", le_ty(c, &sq), le_ty(c, &pfull));
    if (!squeeze)
        return res;
    unsigned ex = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = tensor.expand_shape %%v%u ", o->indent, "", ex, res);
    reassoc(o, groups, r, nsq);
    lo_printf(o, " output_shape [");
    for (int k = 0; k < r; k++)
        lo_printf(o, "%s%lld", k ? ", " : "", (long long)full.shape[k]);
    lo_printf(o, "] : %s into %s\n", le_ty(c, &pfull), le_ty(c, &full));
    return ex;
}

/* A full-tile tensor of v computed by a generic (element by element for gathers). */
static unsigned
tile_generic(LeCtx *c, IrRef v, bool gathering)
{
    IrVal *val = &c->f->vals[v];
    LoIter it;
    le_iter(c, NULL, ir_type_rank(c->m, val->type), ir_type_shape(c->m, val->type), &it);
    return generic_into(c, &it, v, 0, NULL, IR_NONE, gathering);
}

unsigned
le_materialize(LeCtx *c, IrRef v)
{
    LeVal *lv = &c->vals[v];
    if (lv->ssa && le_scope_visible(c, lv->scope))
        return lv->ssa;
    const LpVal *pv = lp_val(c->plan, v);
    IrVal *val = &c->f->vals[v];
    unsigned r;
    if (pv->kind == LP_LOAD) {
        const LpMem *mem = lp_mem(c->plan, val->def);
        if (pv->mat != LM_LAZY)
            return le_load_snapshot(c, v);
        if (mem->access == LA_VIEW && mem->pad_uniform && !broadcasts(c, v, mem))
            r = padded_tile(c, v);
        else
            r = tile_generic(c, v, true);
    } else if (pv->kind == LP_TILE) {
        r = tile_generic(c, v, false);
    } else {
        le_error(c, val->def ? val->def->loc : (IrLoc){0}, "internal: value %u (%s) was not materialised", v,
                 lp_kind_name(pv->kind));
        return le_const(c, IR_I32, 0, 0);
    }
    lv = &c->vals[v];
    lv->ssa = r;
    lv->scope = c->scope;
    lv->as_i8 = ir_type_dtype(c->m, val->type) == IR_I1;
    return r;
}

/* ---- snapshots: loads copied where they stand ------------------------------------------------ */

/* A memref-level element-wise generic over dst's dims: fill 'dst' with scalar 'x'
 * (src 0), or copy src into dst converting the element type; src dim k is dst dim
 * src_dm[k] (NULL: the same dims). */
static void
memref_generic_map(LeCtx *c, unsigned src, const LoType *st, const int8_t *src_dm, unsigned dst, const LoType *dt,
                   unsigned x)
{
    LoBuf *o = c->out;
    int r = dt->rank;
    int8_t dm[IR_MAX_RANK + 1];
    for (int k = 0; k < r; k++)
        dm[k] = (int8_t)k;
    lo_printf(o, "%*slinalg.generic {indexing_maps = [", o->indent, "");
    if (src) {
        print_map(o, r, src_dm ? st->rank : r, src_dm ? src_dm : dm);
        lo_printf(o, ", ");
    }
    print_map(o, r, r, dm);
    lo_printf(o, "], iterator_types = [");
    iter_types(o, r, -1);
    lo_printf(o, "]}");
    if (src)
        lo_printf(o, " ins(%%v%u : %s)", src, le_ty(c, st));
    lo_printf(o, " outs(%%v%u : %s)", dst, le_ty(c, dt));
    int64_t tile[IR_MAX_RANK];
    int nt = le_elementwise_tile(c, r, dt->shape, elem_bytes_of(dt->elem), tile);
    le_kind_attrs(c, o, !src ? "fill" : src_dm ? "pack" : "copy", nt, tile, 0);
    unsigned a = lo_fresh(o), b = lo_fresh(o);
    const char *e = lt_elem_name(dt->elem);
    if (src)
        lo_printf(o, " {\n%*s^bb0(%%v%u: %s, %%v%u: %s):\n", o->indent, "", a, lt_elem_name(st->elem), b, e);
    else
        lo_printf(o, " {\n%*s^bb0(%%v%u: %s):\n", o->indent, "", b, e);
    o->indent += 2;
    unsigned y = src ? le_elem_cast(o, a, st->elem, dt->elem) : x;
    lo_line(o, "linalg.yield %%v%u : %s", y, e);
    o->indent -= 2;
    lo_line(o, "}");
}

static void
memref_generic(LeCtx *c, unsigned src, const LoType *st, unsigned dst, const LoType *dt, unsigned x)
{
    memref_generic_map(c, src, st, NULL, dst, dt, x);
}

/* The source map of a view whose zero-stride dims le_view made size 1 (unit[k]):
 * those dims read index 0 (a broadcast load of one element), the others dst dim
 * dm[k] (NULL: k). NULL when no dim is a unit one (the caller's map stands). */
static const int8_t *
unit_dims(int rank, const bool *unit, const int8_t *dm, int8_t *out)
{
    bool any = false;
    for (int k = 0; k < rank; k++) {
        any |= unit[k];
        out[k] = unit[k] ? -1 : dm ? dm[k] : (int8_t)k;
    }
    return any ? out : NULL;
}

/* memref.subview of the buffer 'buf' (static tile type bt) at offsets lo/sizes sz
 * (SSA index or 0: 0 / the full extent); writes the subview type. */
static unsigned
buffer_subview(LeCtx *c, unsigned buf, const LoType *bt, const unsigned *lo, const unsigned *sz, LoType *vt)
{
    int r = bt->rank;
    *vt = *bt;
    vt->strided = 1;
    int64_t stride = 1;
    bool dyn_off = false;
    for (int k = r - 1; k >= 0; k--) {
        vt->stride[k] = stride;
        stride *= bt->shape[k];
        if (sz[k])
            vt->shape[k] = LT_DYN;
        dyn_off |= lo[k] != 0;
    }
    vt->offset = dyn_off ? LT_DYN : 0;
    LoBuf *o = c->out;
    unsigned id = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = memref.subview %%v%u[", o->indent, "", id, buf);
    for (int k = 0; k < r; k++) {
        if (lo[k])
            lo_printf(o, "%s%%v%u", k ? ", " : "", lo[k]);
        else
            lo_printf(o, "%s0", k ? ", " : "");
    }
    lo_printf(o, "] [");
    for (int k = 0; k < r; k++) {
        if (sz[k])
            lo_printf(o, "%s%%v%u", k ? ", " : "", sz[k]);
        else
            lo_printf(o, "%s%lld", k ? ", " : "", (long long)bt->shape[k]);
    }
    lo_printf(o, "] [");
    for (int k = 0; k < r; k++)
        lo_printf(o, "%s1", k ? ", " : "");
    lo_printf(o, "] : %s to %s\n", le_ty(c, bt), le_ty(c, vt));
    return id;
}

/* Copies rows [r, r + n) of wrapped dim w of the view into the buffer, for every
 * chunk of contiguous indices of (wbase + i) mod M (usually one or two). */
static void
copy_wrapped(LeCtx *c, const LpMem *mem, IrType elem, int rank, unsigned buf, const LoType *bt, const LoIter *it,
             int w)
{
    LoBuf *o = c->out;
    const AForm *f = &mem->form;
    unsigned B = le_const_index(c, it->shape[w]);
    unsigned wlo = it->lo[w] ? it->lo[w] : le_const_index(c, 0);
    unsigned whi = it->size[w] ? lo_emit(o, "arith.addi %%v%u, %%v%u : index", wlo, it->size[w]) : B;
    unsigned M = lo_emit(o, "arith.maxsi %%v%u, %%v%u : index", le_index(c, f->wrap[w]), le_const_index(c, 1));
    unsigned wb = le_index(c, f->wbase[w]);
    unsigned rr = lo_fresh(o), r0 = lo_fresh(o), r1 = lo_fresh(o);
    lo_line(o, "%%v%u = scf.while (%%v%u = %%v%u) : (index) -> index {", rr, r0, wlo);
    o->indent += 2;
    unsigned more = lo_emit(o, "arith.cmpi slt, %%v%u, %%v%u : index", r0, whi);
    lo_line(o, "scf.condition(%%v%u) %%v%u : index", more, r0);
    o->indent -= 2;
    lo_line(o, "} do {");
    lo_line(o, "^bb0(%%v%u: index):", r1);
    o->indent += 2;
    int saved = c->scope;
    le_scope_push(c);
    unsigned s = lo_emit(o, "arith.addi %%v%u, %%v%u : index", wb, r1);
    unsigned start = lo_emit(o, "arith.remsi %%v%u, %%v%u : index", s, M);
    unsigned room = lo_emit(o, "arith.subi %%v%u, %%v%u : index", M, start);
    unsigned left = lo_emit(o, "arith.subi %%v%u, %%v%u : index", whi, r1);
    unsigned n = lo_emit(o, "arith.minsi %%v%u, %%v%u : index", room, left);
    /* the view: dim w starts at 'start' (its coefficient applies), size n */
    unsigned vstart[IR_MAX_RANK], vsize[IR_MAX_RANK], blo[IR_MAX_RANK];
    int64_t ssize[IR_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        vstart[k] = k == w ? start : it->lo[k];
        vsize[k] = k == w ? n : it->size[k];
        blo[k] = k == w ? r1 : it->lo[k];
        ssize[k] = it->shape[k];
    }
    bool unit[IR_MAX_RANK] = {0};
    LoType vt, sv;
    unsigned view = le_view(c, mem->param, elem, rank, f->base, f->coef, vstart, vsize, ssize, false, unit, &vt);
    unsigned sub = buffer_subview(c, buf, bt, blo, vsize, &sv);
    memref_generic(c, view, &vt, sub, &sv, 0);
    unsigned next = lo_emit(o, "arith.addi %%v%u, %%v%u : index", r1, n);
    lo_line(o, "scf.yield %%v%u : index", next);
    le_scope_pop(c, saved);
    o->indent -= 2;
    lo_line(o, "}");
}

/* tensor t of tile type ty converted element by element to elem (t itself when it has it) */
static unsigned
cast_tile(LeCtx *c, unsigned t, IrType ty, int elem)
{
    LoType st = lt_of_tile(c->m, ty), dt = st;
    if (st.elem == elem)
        return t;
    dt.elem = (uint8_t)elem;
    int in[IR_MAX_RANK + 1];
    for (int d = 0; d < st.rank; d++)
        in[d] = d;
    in[st.rank] = -1;
    return le_pack_copy(c, t, &st, in, &dt);
}

/* i1 SSA: the valid region of 'it' is the whole tile (0 when it statically is). */
static unsigned
region_is_whole(LeCtx *c, const LoIter *it)
{
    unsigned all = 0;
    for (int d = 0; d < it->rank; d++) {
        unsigned t[2] = {0, 0};
        if (it->lo[d])
            t[0] = lo_emit(c->out, "arith.cmpi eq, %%v%u, %%v%u : index", it->lo[d], le_const_index(c, 0));
        if (it->size[d])
            t[1] = lo_emit(c->out, "arith.cmpi eq, %%v%u, %%v%u : index", it->size[d],
                           le_const_index(c, it->shape[d]));
        for (int i = 0; i < 2; i++)
            if (t[i])
                all = all ? lo_emit(c->out, "arith.andi %%v%u, %%v%u : i1", all, t[i]) : t[i];
    }
    return all;
}

/* The valid region of load ld (iteration 'it') copied into buf (its tile shape, type
 * bt), the rest filled with the padding value. */
static void
copy_region(LeCtx *c, IrOp *ld, const LpMem *mem, const LoIter *it, unsigned buf, const LoType *bt)
{
    IrType et = ir_type_elem(c->m, c->f->vals[ld->res[0]].type);
    int rank = it->rank, from = ir_type_dtype(c->m, et);
    bool partial = false;
    for (int k = 0; k < rank; k++)
        partial |= it->lo[k] || it->size[k];
    if (partial)
        memref_generic(c, 0, NULL, buf, bt, le_elem_cast(c->out, pad_value(c, ld, et), from, bt->elem));
    int w = -1;
    for (int k = 0; k < rank; k++)
        if (mem->form.wrap[k])
            w = k;
    if (w >= 0) {
        copy_wrapped(c, mem, et, rank, buf, bt, it, w);
        return;
    }
    bool unit[IR_MAX_RANK] = {0};
    LoType vt, sv;
    unsigned view = le_view(c, mem->param, et, rank, mem->form.base, mem->form.coef, it->lo, it->size, it->shape,
                            true, unit, &vt);
    unsigned dst = partial ? buffer_subview(c, buf, bt, it->lo, it->size, &sv) : buf;
    int8_t sdm[IR_MAX_RANK];
    memref_generic_map(c, view, &vt, unit_dims(rank, unit, NULL, sdm), dst, partial ? &sv : bt, 0);
}

unsigned
le_expand_last(LeCtx *c, unsigned buf, const LoType *bt, int nr, LoType *xt)
{
    int r = bt->rank;
    *xt = *bt;
    xt->rank = (uint8_t)(r + 1);
    xt->shape[r - 1] = bt->shape[r - 1] / nr;
    xt->shape[r] = nr;
    LoBuf *o = c->out;
    unsigned x = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = %s.expand_shape %%v%u [", o->indent, "", x, bt->kind == LT_MEMREF ? "memref" : "tensor",
              buf);
    for (int d = 0; d < r - 1; d++)
        lo_printf(o, "[%d], ", d);
    lo_printf(o, "[%d, %d]] output_shape [", r - 1, r);
    for (int d = 0; d <= r; d++)
        lo_printf(o, "%s%lld", d ? ", " : "", (long long)xt->shape[d]);
    lo_printf(o, "] : %s into %s\n", le_ty(c, bt), le_ty(c, xt));
    return x;
}

/* Can load v be read by le_load_packed: a lazy tile load, not yet read, viewing
 * memory with one padding value? */
bool
le_load_is_packable(LeCtx *c, IrRef v)
{
    IrOp *ld = c->f->vals[v].def;
    if (!ld || ld->opc != IR_LOAD || !ir_type_is_tensor(c->m, c->f->vals[v].type))
        return false;
    const LpMem *mem = lp_mem(c->plan, ld);
    return mem && mem->access != LA_GATHER && !(mem->access == LA_VIEW && !mem->pad_uniform);
}

unsigned
le_load_packed(LeCtx *c, IrRef v, int elem, int nr, const int8_t *perm, LoType *pt)
{
    IrVal *val = &c->f->vals[v];
    IrOp *ld = val->def;
    const LpMem *mem = lp_mem(c->plan, ld);
    IrType et = ir_type_elem(c->m, val->type);
    int rank = ir_type_rank(c->m, val->type), xr = rank + (nr > 0);
    const int64_t *shape = ir_type_shape(c->m, val->type);
    LoType bt = lt_tensor(elem, rank, shape), xt = bt;
    bt.kind = LT_MEMREF;
    int64_t xshape[IR_MAX_RANK + 1];
    memcpy(xshape, shape, sizeof(int64_t) * (size_t)rank);
    if (nr > 0) {
        xshape[rank - 1] = shape[rank - 1] / nr;
        xshape[rank] = nr;
    }
    /* the buffer: the expanded tile's dims in the order perm */
    LoType ptm = lt_tensor(elem, xr, xshape);
    ptm.kind = LT_MEMREF;
    int8_t src_dm[IR_MAX_RANK + 1]; /* expanded tile dim k is buffer dim src_dm[k] */
    for (int j = 0; j < xr; j++) {
        int k = perm ? perm[j] : j;
        ptm.shape[j] = xshape[k];
        src_dm[k] = (int8_t)j;
    }
    unsigned buf = lo_emit(c->out, "memref.alloc() : %s", le_ty(c, &ptm));
    LoIter it;
    le_iter(c, &mem->reg, rank, shape, &it);
    bool wraps = false, any = false;
    for (int k = 0; k < rank; k++) {
        wraps |= mem->form.wrap[k] != NULL;
        any |= it.lo[k] || it.size[k];
    }
    bool same = nr == 0 && !perm;
    unsigned whole = wraps || !any ? 0 : region_is_whole(c, &it);
    int saved = c->scope;
    if (whole) {
        lo_line(c->out, "scf.if %%v%u {", whole);
        c->out->indent += 2;
        le_scope_push(c);
    }
    if (!wraps) { /* the whole tile (interior tiles): straight from memory, static shapes, one pass */
        const AExpr *coef[IR_MAX_RANK + 1];
        for (int k = 0; k < rank; k++)
            coef[k] = mem->form.coef[k];
        if (nr > 0) {
            coef[rank] = coef[rank - 1];
            coef[rank - 1] = ax_mul(c->x, coef[rank - 1], ax_const(c->x, nr));
        }
        bool unit[IR_MAX_RANK + 1] = {0};
        LoType vt;
        unsigned view = le_view(c, mem->param, et, xr, mem->form.base, coef, NULL, NULL, xshape, true, unit, &vt);
        int8_t sdm[IR_MAX_RANK + 1];
        const int8_t *m = unit_dims(xr, unit, same ? NULL : src_dm, sdm);
        memref_generic_map(c, view, &vt, m ? m : same ? NULL : src_dm, buf, &ptm, 0);
    }
    if (whole) {
        le_scope_pop(c, saved);
        c->out->indent -= 2;
        lo_line(c->out, "} else {");
        c->out->indent += 2;
        le_scope_push(c);
    }
    if (whole || wraps) { /* edge tiles: padded tails, through a dense copy unless the layout is the tile's */
        if (same) {
            copy_region(c, ld, mem, &it, buf, &bt);
        } else {
            unsigned d = lo_emit(c->out, "memref.alloc() : %s", le_ty(c, &bt));
            copy_region(c, ld, mem, &it, d, &bt);
            unsigned dx = nr > 0 ? le_expand_last(c, d, &bt, nr, &xt) : d;
            memref_generic_map(c, dx, nr > 0 ? &xt : &bt, src_dm, buf, &ptm, 0);
        }
    }
    if (whole) {
        le_scope_pop(c, saved);
        c->out->indent -= 2;
        lo_line(c->out, "}");
    }
    if (pt) {
        *pt = ptm;
        pt->kind = LT_TENSOR;
    }
    return lo_emit(c->out, "bufferization.to_tensor %%v%u restrict : %s", buf, le_ty(c, &ptm));
}

/* The tile load v copied where it stands into a fresh buffer of element type
 * elem (zero tails from the padding value, converted): a tensor SSA. */
static unsigned
snapshot_into(LeCtx *c, IrRef v, int elem)
{
    IrVal *val = &c->f->vals[v];
    if (!le_load_is_packable(c, v))
        return cast_tile(c, tile_generic(c, v, true), val->type, elem);
    return le_load_packed(c, v, elem, 0, NULL, NULL);
}

unsigned
le_load_snapshot(LeCtx *c, IrRef v)
{
    LeVal *lv = &c->vals[v];
    if (lv->ssa && le_scope_visible(c, lv->scope))
        return lv->ssa;
    unsigned r = snapshot_into(c, v, ir_type_dtype(c->m, ir_type_elem(c->m, c->f->vals[v].type)));
    lv = &c->vals[v];
    lv->ssa = r;
    lv->scope = c->scope;
    lv->as_i8 = 0;
    return r;
}

unsigned
le_dense_tile(LeCtx *c, IrRef v, int elem)
{
    IrVal *val = &c->f->vals[v];
    const LpVal *pv = lp_val(c->plan, v);
    LeVal *lv = &c->vals[v];
    int from = ir_type_dtype(c->m, ir_type_elem(c->m, val->type));
    bool visible = lv->ssa && le_scope_visible(c, lv->scope);
    if (!visible && pv->kind == LP_LOAD && pv->mat == LM_LAZY && le_load_is_packable(c, v))
        return elem == from ? le_load_snapshot(c, v) : le_load_packed(c, v, elem, 0, NULL, NULL);
    return cast_tile(c, le_materialize(c, v), val->type, elem);
}

/* ---- copies with a layout: packing ------------------------------------------------- */

static void
print_dims(LoBuf *o, int n, const int *d)
{
    lo_printf(o, "affine_map<(");
    for (int i = 0; i < n; i++)
        lo_printf(o, "%sd%d", i ? ", " : "", i);
    lo_printf(o, ") -> (");
    for (int i = 0; d[i] >= 0; i++)
        lo_printf(o, "%sd%d", i ? ", " : "", d[i]);
    lo_printf(o, ")>");
}

unsigned
le_pack_copy(LeCtx *c, unsigned src, const LoType *st, const int *in, const LoType *dt)
{
    unsigned e = le_alloc_tensor(c, dt);
    LoBuf *o = c->out;
    unsigned r = lo_fresh(o), x = lo_fresh(o), y = lo_fresh(o);
    int id[IR_MAX_RANK + 1];
    for (int i = 0; i < dt->rank; i++)
        id[i] = i;
    id[dt->rank] = -1;
    lo_printf(o, "%*s%%v%u = linalg.generic {indexing_maps = [", o->indent, "", r);
    print_dims(o, dt->rank, in);
    lo_printf(o, ", ");
    print_dims(o, dt->rank, id);
    lo_printf(o, "], iterator_types = [");
    for (int i = 0; i < dt->rank; i++)
        lo_printf(o, "%s\"parallel\"", i ? ", " : "");
    lo_printf(o, "]} ins(%%v%u : %s) outs(%%v%u : %s)", src, le_ty(c, st), e, le_ty(c, dt));
    int64_t tile[IR_MAX_RANK];
    le_elementwise_tile(c, dt->rank, dt->shape, (ir_dtype_bits((IrDtype)dt->elem) + 7) / 8, tile);
    le_kind_attrs(c, o, "pack", dt->rank, tile, 0);
    lo_printf(o, " {\n%*s^bb0(%%v%u: %s, %%v%u: %s):\n", o->indent, "", x, lt_elem_name(st->elem), y,
              lt_elem_name(dt->elem));
    o->indent += 2;
    unsigned v = le_elem_cast(o, x, st->elem, dt->elem);
    lo_line(o, "linalg.yield %%v%u : %s", v, lt_elem_name(dt->elem));
    o->indent -= 2;
    lo_line(o, "} -> %s", le_ty(c, dt));
    return r;
}

/* ---- reductions --------------------------------------------------------------------------------- */

int64_t
le_reduction_lanes(int64_t e, int vl)
{
    int64_t cands[] = {4 * (int64_t)vl, 2 * (int64_t)vl, vl}, lanes = 0;
    for (int i = 0; i < 3 && !lanes; i++)
        if (e % cands[i] == 0)
            lanes = cands[i];
    return lanes == e ? 0 : lanes; /* one chunk: vectorise the row as it is */
}

unsigned
le_generic_reduce(LeCtx *c, IrRef v, int axis, IrBlock *region, unsigned init, const LoType *init_type,
                  bool simple_combiner)
{
    IrType vt = c->f->vals[v].type;
    int r = ir_type_rank(c->m, vt);
    int elem = ir_type_dtype(c->m, ir_type_elem(c->m, vt));
    LoIter it;
    le_iter(c, NULL, r, ir_type_shape(c->m, vt), &it);
    Gen g;
    gen_init(&g, c, &it, r);
    int vl = c->opt->vector_bytes / widest(&g, elem);
    int64_t e = it.shape[axis];
    if (vl < 1)
        vl = 1;
    /* the reduced dim's index from an iota input: when tiled into a vector
     * accumulator (below), and when every other dim is 1: MLIR 19 vectorises
     * linalg.index of the trailing dim of a [1, ..., 1, N] generic as a 1-D vector,
     * and a reduction with no other input then lost its combine (a sum of
     * where(cols < N, cols, 0) over [1, N] came out 0) */
    bool tiled = simple_combiner && axis == r - 1 && e > vl && e % vl == 0; /* tile_reduction_using_for */
    bool unit_lead = axis == r - 1 && r >= 2 && e != LT_DYN;
    for (int d = 0; d + 1 < r && unit_lead; d++)
        unit_lead = it.shape[d] == 1;
    if (tiled || unit_lead) {
        g.iota_dim = axis;
        g.iota_ext = e;
    }
    g.out_arg = lo_fresh(c->out);
    to_body(&g);
    int8_t dm[IR_MAX_RANK];
    for (int d = 0; d < r; d++)
        dm[d] = (int8_t)d;
    unsigned x = eval(&g, v, dm);
    /* combine(acc, x): region args (a, b) with a = the accumulator */
    unsigned *map = calloc(c->f->nvals, sizeof(unsigned));
    if (!map)
        ir_die("out of memory");
    map[region->args[0]] = g.out_arg;
    map[region->args[1]] = x;
    unsigned result = 0;
    for (IrOp *op = region->first; op; op = op->next) {
        if (op->opc == IR_REDUCE_RETURN) {
            result = map[op->args[0]];
            break;
        }
        unsigned a[3];
        for (uint32_t i = 0; i < op->nargs && i < 3; i++)
            a[i] = map[op->args[i]];
        map[op->res[0]] = le_scalar_op(c, op, a);
    }
    free(map);
    lo_line(&g.body, "linalg.yield %%v%u : %s", result, lt_elem_name(elem));
    to_main(&g);
    unsigned res = lo_fresh(c->out);
    int8_t odm[IR_MAX_RANK];
    for (int d = 0, k = 0; d < r; d++)
        if (d != axis)
            odm[k++] = (int8_t)d;
    /* outer dims one by one, the reduced dim whole, with a vector accumulator of
     * up to 4 vectors when the extent allows */
    int64_t tile[IR_MAX_RANK], lanes = 0;
    if (axis == r - 1) {
        for (int d = 0; d < r; d++)
            tile[d] = d == axis || it.shape[d] == 1 ? 0 : 1;
    } else { /* the innermost dim is parallel: vectorised along it, reduced one row per step */
        le_elementwise_tile(c, r, it.shape, widest(&g, elem), tile);
    }
    /* tile_reduction_using_for; the reduced dim's index, if read, comes from an iota
     * input (abs_index) */
    if (tiled)
        lanes = le_reduction_lanes(e, vl);
    const char *kind = axis == r - 1 ? simple_combiner ? "row_reduction" : "reduction" : "column_reduction";
    if (g.gathers)
        kind = "gather_reduction"; /* MLIR 19's vectorizer fails hard on its scf.if loads */
    emit_generic(&g, res, axis, init, init_type, r - 1, odm, elem, kind, r, tile, lanes);
    gen_fini(&g);
    return res;
}

/* ---- element offsets of gathered pointers (scatter stores, tile atomics) --------------------- */

unsigned
le_offsets_tensor(LeCtx *c, IrRef ptr, const PtrForm *pf)
{
    IrType pt = c->f->vals[ptr].type;
    int r = ir_type_rank(c->m, pt);
    LoIter it;
    le_iter(c, NULL, r, ir_type_shape(c->m, pt), &it);
    LoType ty = lt_tensor(LT_INDEX, r, it.shape);
    unsigned outs = le_alloc_tensor(c, &ty);
    Gen g;
    gen_init(&g, c, &it, r);
    to_body(&g);
    int8_t dm[IR_MAX_RANK];
    for (int d = 0; d < r; d++)
        dm[d] = (int8_t)d;
    unsigned x = gather_index(&g, pf, dm);
    lo_line(&g.body, "linalg.yield %%v%u : index", x);
    to_main(&g);
    unsigned res = lo_fresh(c->out);
    g.out_arg = lo_fresh(c->out);
    int64_t tile[IR_MAX_RANK];
    int nt = iter_tile(c, &it, 8, tile);
    emit_generic(&g, res, -1, outs, &ty, r, dm, LT_INDEX, "elementwise", nt, tile, 0);
    gen_fini(&g);
    return res;
}
