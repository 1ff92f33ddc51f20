/*
 * lo_emit_compute.c — dot products, reductions and shape-changing ops. Their
 * results are tensors materialised where they stand (LP_TENSOR).
 *
 *   tt.dot      -> linalg.generic contraction C(m,n) += A(m,k) * B(k,n) (batched
 *                  for rank 3), tagged "contraction" with its register block
 *   tt.reduce   -> linalg.generic with a reduction iterator; the element-wise
 *                  producer of the input is fused into the body
 *   tt.reshape  -> tensor.collapse_shape + tensor.expand_shape
 *   tt.cat/join/split -> tensor.insert_slice / tensor.extract_slice
 */
#include "lo_int.h"

#include <math.h>
#include <string.h>

/* ---- dot ------------------------------------------------------------------------------ */

/* B [(batch,) K, N] as panels [(batch,) N/nr, K, nr] of the accumulator's type:
 * each k step of the micro-kernel reads nr contiguous elements. */
static unsigned
pack_b(LeCtx *c, IrRef bv, int nr, int acc, LoType *pt)
{
    IrType bt = c->f->vals[bv].type;
    int r = ir_type_rank(c->m, bt), from = ir_type_dtype(c->m, ir_type_elem(c->m, bt));
    const LeVal *lv = &c->vals[bv];
    const LpVal *pv = lp_val(c->plan, bv);
    if (pv->kind == LP_LOAD && pv->mat == LM_LAZY && !(lv->ssa && le_scope_visible(c, lv->scope)) &&
        le_load_is_packable(c, bv)) { /* straight from memory into the panels */
        int8_t perm[IR_MAX_RANK + 1];
        for (int d = 0; d < r - 2; d++)
            perm[d] = (int8_t)d;
        perm[r - 2] = (int8_t)(r - 1); /* n1 */
        perm[r - 1] = (int8_t)(r - 2); /* k */
        perm[r] = (int8_t)r;           /* n0 */
        return le_load_packed(c, bv, acc, nr, perm, pt);
    }
    unsigned b = le_dense_tile(c, bv, from);
    LoType t2 = lt_of_tile(c->m, bt), t3;
    int64_t K = t2.shape[r - 2], N = t2.shape[r - 1];
    unsigned x = le_expand_last(c, b, &t2, nr, &t3);
    /* panels: out (batch?, n1, k, n0) <- in (batch?, k, n1, n0) */
    *pt = t3;
    pt->elem = (uint8_t)acc;
    int in[IR_MAX_RANK + 1], q = 0;
    for (int d = 0; d < r - 2; d++)
        in[q++] = d;
    pt->shape[r - 2] = N / nr;
    pt->shape[r - 1] = K;
    pt->shape[r] = nr;
    in[q++] = r - 1; /* k is the panel's middle dim */
    in[q++] = r - 2; /* n1 */
    in[q++] = r;     /* n0 */
    in[q] = -1;
    return le_pack_copy(c, x, &t3, in, pt);
}

/* tensor.extract_slice of whole (type tc) at offset off (SSA index) along dim, 0
 * along the others, sizes cs's (the slice type); or with part != 0 tensor.insert_slice
 * of part there: the new SSA */
static unsigned
dim_slice(LeCtx *c, const char *what, unsigned part, unsigned whole, int dim, unsigned off, const LoType *tc,
          const LoType *cs)
{
    LoBuf *o = c->out;
    unsigned r = lo_fresh(o);
    int rank = tc->rank;
    if (part)
        lo_printf(o, "%*s%%v%u = tensor.%s %%v%u into %%v%u[", o->indent, "", r, what, part, whole);
    else
        lo_printf(o, "%*s%%v%u = tensor.%s %%v%u[", o->indent, "", r, what, whole);
    for (int d = 0; d < rank; d++) {
        if (d == dim)
            lo_printf(o, "%s%%v%u", d ? ", " : "", off);
        else
            lo_printf(o, "%s0", d ? ", " : "");
    }
    lo_printf(o, "] [");
    for (int d = 0; d < rank; d++)
        lo_printf(o, "%s%lld", d ? ", " : "", (long long)cs->shape[d]);
    lo_printf(o, "] [");
    for (int d = 0; d < rank; d++)
        lo_printf(o, "%s1", d ? ", " : "");
    if (part)
        lo_printf(o, "] : %s into %s\n", le_ty(c, cs), le_ty(c, tc));
    else
        lo_printf(o, "] : %s to %s\n", le_ty(c, tc), le_ty(c, cs));
    return r;
}

/* The micro-kernel: C (type cs) += A (ta) @ B panel (bs), a contraction generic
 * tiled mr rows at a time (0: all rows) and one k per step. Returns the result. */
static unsigned
contraction(LeCtx *c, unsigned a, const LoType *ta, unsigned b, const LoType *bs, unsigned cc, const LoType *cs,
            int64_t mr)
{
    static const char *const maps2[3] = {"affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
                                         "affine_map<(d0, d1, d2) -> (d0, d1)>"};
    static const char *const maps3[3] = {"affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>",
                                         "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>",
                                         "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>"};
    LoBuf *o = c->out;
    int rank = cs->rank, acc = cs->elem;
    int64_t M = cs->shape[rank - 2], K = ta->shape[rank - 1];
    const char *const *maps = rank == 3 ? maps3 : maps2;
    const char *te = lt_elem_name(acc);
    unsigned r = lo_fresh(o), xa = lo_fresh(o), xb = lo_fresh(o), xc = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = linalg.generic {indexing_maps = [%s, %s, %s], iterator_types = [%s\"parallel\", "
                 "\"parallel\", \"reduction\"]} ins(%%v%u, %%v%u : %s, %s) outs(%%v%u : %s)",
              o->indent, "", r, maps[0], maps[1], maps[2], rank == 3 ? "\"parallel\", " : "", a, b, le_ty(c, ta),
              le_ty(c, bs), cc, le_ty(c, cs));
    int64_t tile[4];
    for (int d = 0; d < rank - 2; d++)
        tile[d] = cs->shape[d] == 1 ? 0 : 1;
    tile[rank - 2] = mr == M ? 0 : mr;
    tile[rank - 1] = 0;
    tile[rank] = K == 1 ? 0 : 1;
    le_kind_attrs(c, o, "contraction", rank + 1, tile, 0);
    lo_printf(o, " {\n%*s^bb0(%%v%u: %s, %%v%u: %s, %%v%u: %s):\n", o->indent, "", xa, te, xb, te, xc, te);
    o->indent += 2;
    bool fl = ir_dtype_is_float((IrDtype)acc);
    unsigned m = lo_emit(o, "arith.%s %%v%u, %%v%u : %s", fl ? "mulf" : "muli", xa, xb, te);
    unsigned s = lo_emit(o, "arith.%s %%v%u, %%v%u : %s", fl ? "addf" : "addi", xc, m, te);
    lo_line(o, "linalg.yield %%v%u : %s", s, te);
    o->indent -= 2;
    lo_line(o, "} -> %s", le_ty(c, cs));
    return r;
}

int
le_dot(LeCtx *c, IrOp *op)
{
    const LpDot *pd = lp_dot(c->plan, op);
    if (pd->bf16_pairs)
        return le_dot_pairs(c, op, pd);
    IrType at = c->f->vals[op->args[0]].type, ct = c->f->vals[op->args[2]].type;
    int rank = ir_type_rank(c->m, ct), acc = pd->acc;
    int ea = ir_type_dtype(c->m, ir_type_elem(c->m, at));
    LoType ta = lt_of_tile(c->m, at), tc = lt_of_tile(c->m, ct);
    (void)ea;
    unsigned a = pd->a_copy ? le_dense_tile(c, op->args[0], acc) : le_materialize(c, op->args[0]);
    ta.elem = (uint8_t)acc;
    /* the next K step's tiles, planned before the operands are read */
    int64_t K0 = ta.shape[rank - 1];
    LePrefetch pf[2];
    bool pfa = rank == 2 && le_prefetch_plan(c, op->args[0], 1, K0, &pf[0]);
    bool pfb = rank == 2 && le_prefetch_plan(c, op->args[1], 0, K0, &pf[1]);
    LoType tp;
    unsigned bp = pack_b(c, op->args[1], pd->nr, acc, &tp);
    unsigned acc0 = le_materialize(c, op->args[2]);
    int64_t M = tc.shape[rank - 2], N = tc.shape[rank - 1], K = ta.shape[rank - 1], nb = N / pd->nr;
    LoBuf *o = c->out;
    /* one column panel of C at a time: C[:, n1*nr : (n1+1)*nr] += A @ panel n1 */
    unsigned n1 = 0, cur = acc0;
    LeLoop ln;
    if (nb > 1) {
        le_for_open(c, &ln, 0, nb, 1, acc0, le_ty(c, &tc));
        n1 = ln.iv;
        cur = ln.carry;
    }
    unsigned off = nb > 1 ? lo_emit(o, "arith.muli %%v%u, %%v%u : index", n1, le_const_index(c, pd->nr)) : 0;
    if (pfa)
        le_prefetch_rows(c, &pf[0], n1, nb);
    if (pfb)
        le_prefetch_rows(c, &pf[1], n1, nb);
    LoType cs = tc, bs = tp;
    cs.shape[rank - 1] = pd->nr;
    bs.rank = (uint8_t)rank; /* rank-reduced panel [(batch,) K, nr] */
    for (int d = 0; d < rank - 2; d++)
        bs.shape[d] = tp.shape[d];
    bs.shape[rank - 2] = K;
    bs.shape[rank - 1] = pd->nr;
    unsigned csl = cur, bsl = bp;
    if (nb > 1) {
        csl = dim_slice(c, "extract_slice", 0, cur, rank - 1, off, &tc, &cs);
    }
    { /* the panel, rank-reduced to [(batch,) K, nr] */
        bsl = lo_fresh(o);
        lo_printf(o, "%*s%%v%u = tensor.extract_slice %%v%u[", o->indent, "", bsl, bp);
        for (int d = 0; d < rank - 2; d++)
            lo_printf(o, "0, ");
        if (nb > 1)
            lo_printf(o, "%%v%u, 0, 0] [", n1);
        else
            lo_printf(o, "0, 0, 0] [");
        for (int d = 0; d < rank - 2; d++)
            lo_printf(o, "%lld, ", (long long)tp.shape[d]);
        lo_printf(o, "1, %lld, %d] [", (long long)K, pd->nr);
        for (int d = 0; d <= rank; d++)
            lo_printf(o, "%s1", d ? ", " : "");
        lo_printf(o, "] : %s to %s\n", le_ty(c, &tp), le_ty(c, &bs));
    }
    /* the micro-kernel: C block mr x nr in registers over single k steps; when mr does
     * not divide M, the last M % mr rows are a second block of their own */
    int64_t tail = M % pd->mr, M1 = M - tail;
    unsigned r;
    if (!tail || !M1) {
        r = contraction(c, a, &ta, bsl, &bs, csl, &cs, tail ? M : pd->mr);
    } else {
        r = csl;
        int64_t part[2][2] = {{0, M1}, {M1, tail}};
        for (int i = 0; i < 2; i++) {
            LoType ra = ta, rc = cs;
            ra.shape[rank - 2] = rc.shape[rank - 2] = part[i][1];
            unsigned at0 = le_const_index(c, part[i][0]);
            unsigned as = dim_slice(c, "extract_slice", 0, a, rank - 2, at0, &ta, &ra);
            unsigned cp = dim_slice(c, "extract_slice", 0, r, rank - 2, at0, &cs, &rc);
            unsigned cr = contraction(c, as, &ra, bsl, &bs, cp, &rc, i ? part[i][1] : pd->mr);
            r = dim_slice(c, "insert_slice", cr, r, rank - 2, at0, &cs, &rc);
        }
    }
    unsigned out = r;
    if (nb > 1) {
        unsigned ins = dim_slice(c, "insert_slice", r, cur, rank - 1, off, &tc, &cs);
        out = le_for_close(c, &ln, ins, le_ty(c, &tc));
    }
    le_set_tensor(c, op->res[0], out);
    return 0;
}

/* ---- reductions ---------------------------------------------------------------------------- */

/* Identity of a single-op combine, as a constant of dtype d; false if unknown. */
static bool
combine_identity(IrOpc opc, int d, int64_t *iv, double *fv)
{
    bool f = ir_dtype_is_float((IrDtype)d);
    int bits = ir_dtype_bits((IrDtype)d);
    *iv = 0;
    *fv = 0;
    switch (opc) {
    case IR_ADDF: case IR_ADDI: case IR_ORI: case IR_XORI: case IR_MAXUI:
        return true;
    case IR_MULF: *fv = 1; return true;
    case IR_MULI: *iv = 1; return true;
    case IR_ANDI: *iv = -1; return true;
    case IR_MAXNUMF: case IR_MAXIMUMF: *fv = -INFINITY; return f;
    case IR_MINNUMF: case IR_MINIMUMF: *fv = INFINITY; return f;
    case IR_MAXSI: *iv = bits == 64 ? INT64_MIN : -(1LL << (bits - 1)); return true;
    case IR_MINSI: *iv = bits == 64 ? INT64_MAX : (1LL << (bits - 1)) - 1; return true;
    case IR_MINUI: *iv = -1; return true;
    default:
        return false;
    }
}

/* The single combine op of a one-operand reduce region, or NULL. */
static IrOp *
simple_combine(IrBlock *region)
{
    IrOp *op = region->first;
    if (!op || !op->next || op->next->opc != IR_REDUCE_RETURN || op->next->next)
        return NULL;
    if (op->nargs != 2 || op->nres != 1)
        return NULL;
    IrRef a = region->args[0], b = region->args[1];
    if (!((op->args[0] == a && op->args[1] == b) || (op->args[0] == b && op->args[1] == a)))
        return NULL;
    if (op->next->args[0] != op->res[0])
        return NULL;
    return op;
}

unsigned
le_fill(LeCtx *c, const LoType *t, unsigned x)
{
    unsigned e = le_alloc_tensor(c, t);
    LoBuf *o = c->out;
    unsigned r = lo_fresh(o), arg = lo_fresh(o);
    lo_printf(o, "%*s%%v%u = linalg.generic {indexing_maps = [affine_map<(", o->indent, "", r);
    for (int d = 0; d < t->rank; d++)
        lo_printf(o, "%sd%d", d ? ", " : "", d);
    lo_printf(o, ") -> (");
    for (int d = 0; d < t->rank; d++)
        lo_printf(o, "%sd%d", d ? ", " : "", d);
    lo_printf(o, ")>], iterator_types = [");
    for (int d = 0; d < t->rank; d++)
        lo_printf(o, "%s\"parallel\"", d ? ", " : "");
    int64_t tile[IR_MAX_RANK];
    le_elementwise_tile(c, t->rank, t->shape, (ir_dtype_bits((IrDtype)t->elem) + 7) / 8, tile);
    const char *ts = le_ty(c, t), *es = lt_elem_name(t->elem);
    lo_printf(o, "]} outs(%%v%u : %s)", e, ts);
    le_kind_attrs(c, o, "fill", t->rank, tile, 0);
    lo_printf(o, " {\n%*s^bb0(%%v%u: %s):\n", o->indent, "", arg, es);
    lo_line(o, "  linalg.yield %%v%u : %s", x, es);
    lo_line(o, "} -> %s", ts);
    return r;
}

int
le_reduce(LeCtx *c, IrOp *op)
{
    int axis = (int)op->i[0];
    IrBlock *region = op->regs[0];
    if (op->nargs != 1)
        return le_sequential_combine(c, op, false); /* argmax/argmin, tuples */
    IrRef x = op->args[0];
    IrOp *comb = simple_combine(region);
    int d = ir_type_dtype(c->m, c->f->vals[x].type);
    int64_t iv;
    double fv;
    if (!comb || !combine_identity((IrOpc)comb->opc, d, &iv, &fv))
        return le_sequential_combine(c, op, false); /* a combine function of several ops */
    IrType t = c->f->vals[x].type;
    int r = ir_type_rank(c->m, t);
    const int64_t *s = ir_type_shape(c->m, t);
    int64_t rs[IR_MAX_RANK];
    for (int k = 0, j = 0; k < r; k++)
        if (k != axis)
            rs[j++] = s[k];
    LoType rt = lt_tensor(d, r - 1, rs);
    unsigned init = le_fill(c, &rt, le_const(c, d, iv, fv));
    unsigned res = le_generic_reduce(c, x, axis, region, init, &rt, true);
    IrRef out = op->res[0];
    if (ir_type_rank(c->m, c->f->vals[out].type) == 0)
        le_set_scalar(c, out, lo_emit(c->out, "tensor.extract %%v%u[] : %s", res, le_ty(c, &rt)));
    else
        le_set_tensor(c, out, res);
    return 0;
}

int
le_scan(LeCtx *c, IrOp *op)
{
    return le_sequential_combine(c, op, true);
}

/* ---- shape ops ------------------------------------------------------------------------------- */

static void
reassoc_all(LoBuf *b, int rank)
{
    lo_printf(b, "[[");
    for (int d = 0; d < rank; d++)
        lo_printf(b, "%s%d", d ? ", " : "", d);
    lo_printf(b, "]]");
}

/* tensor.collapse_shape to 1-D then tensor.expand_shape to the new shape. */
static int
reshape(LeCtx *c, IrOp *op)
{
    IrRef x = op->args[0], res = op->res[0];
    unsigned t = le_materialize(c, x);
    IrType xt = c->f->vals[x].type, rt = c->f->vals[res].type;
    int xr = ir_type_rank(c->m, xt), rr = ir_type_rank(c->m, rt);
    LoType tx = lt_of_tile(c->m, xt), tr = lt_of_tile(c->m, rt);
    int64_t n = ir_type_numel(c->m, xt);
    LoType t1 = lt_tensor(tx.elem, 1, &n);
    LoBuf *o = c->out;
    if (xr > 1) {
        unsigned id = lo_fresh(o);
        lo_printf(o, "%*s%%v%u = tensor.collapse_shape %%v%u ", o->indent, "", id, t);
        reassoc_all(o, xr);
        lo_printf(o, " : %s into %s\n", le_ty(c, &tx), le_ty(c, &t1));
        t = id;
    }
    if (rr > 1) {
        unsigned id = lo_fresh(o);
        lo_printf(o, "%*s%%v%u = tensor.expand_shape %%v%u ", o->indent, "", id, t);
        reassoc_all(o, rr);
        lo_printf(o, " output_shape [");
        for (int d = 0; d < rr; d++)
            lo_printf(o, "%s%lld", d ? ", " : "", (long long)tr.shape[d]);
        lo_printf(o, "] : %s into %s\n", le_ty(c, &t1), le_ty(c, &tr));
        t = id;
    }
    le_set_tensor(c, res, t);
    return 0;
}

/* A tensor.insert_slice / extract_slice of the last dim at offset 'last' with
 * size 'lsize' (1 for join/split), all other dims whole. */
static unsigned
slice(LeCtx *c, bool insert, unsigned src, unsigned dst, const LoType *small, const LoType *big, int64_t last,
      int64_t lsize, int dim)
{
    LoBuf *o = c->out;
    unsigned id = lo_fresh(o);
    if (insert)
        lo_printf(o, "%*s%%v%u = tensor.insert_slice %%v%u into %%v%u[", o->indent, "", id, src, dst);
    else
        lo_printf(o, "%*s%%v%u = tensor.extract_slice %%v%u[", o->indent, "", id, src);
    int r = big->rank;
    for (int k = 0; k < r; k++)
        lo_printf(o, "%s%lld", k ? ", " : "", (long long)(k == dim ? last : 0));
    lo_printf(o, "] [");
    for (int k = 0; k < r; k++)
        lo_printf(o, "%s%lld", k ? ", " : "", (long long)(k == dim ? lsize : big->shape[k]));
    lo_printf(o, "] [");
    for (int k = 0; k < r; k++)
        lo_printf(o, "%s1", k ? ", " : "");
    if (insert)
        lo_printf(o, "] : %s into %s\n", le_ty(c, small), le_ty(c, big));
    else
        lo_printf(o, "] : %s to %s\n", le_ty(c, big), le_ty(c, small));
    return id;
}

static int
cat(LeCtx *c, IrOp *op)
{
    unsigned a = le_materialize(c, op->args[0]), b = le_materialize(c, op->args[1]);
    LoType ta = lt_of_tile(c->m, c->f->vals[op->args[0]].type), tb = lt_of_tile(c->m, c->f->vals[op->args[1]].type);
    LoType tr = lt_of_tile(c->m, c->f->vals[op->res[0]].type);
    unsigned e = le_alloc_tensor(c, &tr);
    e = slice(c, true, a, e, &ta, &tr, 0, ta.shape[0], 0);
    e = slice(c, true, b, e, &tb, &tr, ta.shape[0], tb.shape[0], 0);
    le_set_tensor(c, op->res[0], e);
    return 0;
}

/* join: [..] x2 -> [.., 2]; split: [.., 2] -> 2 x [..] (rank-reducing slices). */
static int
join(LeCtx *c, IrOp *op)
{
    LoType tr = lt_of_tile(c->m, c->f->vals[op->res[0]].type);
    unsigned e = le_alloc_tensor(c, &tr);
    for (int i = 0; i < 2; i++) {
        unsigned x = le_materialize(c, op->args[i]);
        LoType tx = lt_of_tile(c->m, c->f->vals[op->args[i]].type);
        e = slice(c, true, x, e, &tx, &tr, i, 1, tr.rank - 1);
    }
    le_set_tensor(c, op->res[0], e);
    return 0;
}

static int
split(LeCtx *c, IrOp *op)
{
    LoType tx = lt_of_tile(c->m, c->f->vals[op->args[0]].type);
    unsigned x = le_materialize(c, op->args[0]);
    for (int i = 0; i < 2; i++) {
        LoType tr = lt_of_tile(c->m, c->f->vals[op->res[i]].type);
        unsigned t = slice(c, false, x, 0, &tr, &tx, i, 1, tx.rank - 1);
        le_set_tensor(c, op->res[i], t);
    }
    return 0;
}

int
le_shape_op(LeCtx *c, IrOp *op)
{
    switch (op->opc) {
    case IR_RESHAPE: return reshape(c, op);
    case IR_CAT: return cat(c, op);
    case IR_JOIN: return join(c, op);
    case IR_SPLIT: return split(c, op);
    default:
        return le_error(c, op->loc, "%s is not supported yet", ir_opc_name[op->opc]);
    }
}
