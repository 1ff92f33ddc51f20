/*
 * lo_emit_dot_pairs.c — tl.dot of bf16 tiles on the target's pair dot product
 * (AVX512-BF16 vdpbf16ps: each fp32 lane adds a[2i]*b[2i] + a[2i+1]*b[2i+1],
 * products exact, twice the k steps of an fp32 FMA per instruction). The plan
 * chooses it (LpDot.bf16_pairs); the micro-kernel is written here at the vector
 * level because the instruction has no linalg form. It is called as the LLVM
 * intrinsic by name (an llvm.call of an llvm.func declaration named after it, which LLVM
 * takes for the intrinsic; llvm.call_intrinsic would stop the buffer-deallocation
 * pass, which rejects ops without memory effects):
 *
 *   B [K, N]  -> panels [N/nr, K/2, 2*nr]: per k pair, nr columns' (k, k+1) pairs,
 *                interleaved a register at a time
 *   A [M, K]     a dense bf16 tile; a row's k pair is one 32-bit broadcast
 *   per panel, per block of mr rows (then one block of the M % mr left over):
 *     mr x nr/VL fp32 accumulators carried in registers over the K/2 steps,
 *     read from and written back to C around them.
 */
#include "lo_int.h"

#include <math.h>

typedef struct Pairs {
    int vl;                  /* fp32 lanes of one vector: 16 (zmm) or 8 (ymm) */
    int npf;                 /* operands whose next tile is prefetched (pf[0..npf)) */
    LePrefetch pf[2];
    int64_t parts;           /* prefetch shares: panels x full row blocks */
    bool zero_c;             /* C is the constant 0: not read */
    unsigned racc;           /* with `acc + float(bf16(dot(a, b, 0)))` (smt.dot's bf16
                                result added to an fp32 acc): acc's tensor, each block
                                written back as acc + its sums rounded to bf16; else 0 */
    int nv;                  /* vectors per panel row: nr / vl */
    unsigned a, bp;          /* dense A [M, K], panels [N/nr, K/2, 2nr] (bf16 tensors) */
    LoType ta, tb, tc;
    char vf[24], vb[24], vi[24]; /* vector<VLxf32>, vector<2VLxbf16>, vector<VLxi32> */
} Pairs;

/* B's dense tile [K, N] as panels [N/nr, K/2, 2*nr]: for each panel and k pair, rows
 * 2k and 2k+1 are read in chunks of a vector register and interleaved (vector.interleave:
 * unpack/permute instructions, no per-element moves). */
static unsigned
pack_pairs(LeCtx *c, IrRef bv, int nr, int vl, LoType *tb)
{
    LoBuf *o = c->out;
    unsigned b = le_dense_tile(c, bv, IR_BF16);
    LoType t2 = lt_of_tile(c->m, c->f->vals[bv].type);
    t2.elem = IR_BF16;
    int64_t K = t2.shape[0], N = t2.shape[1], p3[3] = {N / nr, K / 2, 2 * nr};
    *tb = lt_tensor(IR_BF16, 3, p3);
    const char *tys = le_ty(c, tb), *bty = le_ty(c, &t2);
    int w = 2 * vl < nr ? 2 * vl : nr; /* bf16 lanes of one register, at most a panel row */
    unsigned pk = le_alloc_tensor(c, tb);
    LeLoop ln, lk;
    le_for_open(c, &ln, 0, N / nr, 1, pk, tys);
    unsigned n1 = ln.iv;
    unsigned col0 = lo_emit(o, "arith.muli %%v%u, %%v%u : index", n1, le_const_index(c, nr));
    unsigned zb = lo_emit(o, "arith.constant 0.0 : bf16");
    le_for_open(c, &lk, 0, K / 2, 1, ln.carry, tys);
    unsigned k2 = lk.iv;
    unsigned row0 = lo_emit(o, "arith.muli %%v%u, %%v%u : index", k2, le_const_index(c, 2));
    unsigned row1 = lo_emit(o, "arith.addi %%v%u, %%v%u : index", row0, le_const_index(c, 1));
    unsigned cur = lk.carry;
    for (int j = 0; j < nr / w; j++) {
        unsigned col = j ? lo_emit(o, "arith.addi %%v%u, %%v%u : index", col0, le_const_index(c, (int64_t)j * w)) : col0;
        unsigned x = lo_emit(o, "vector.transfer_read %%v%u[%%v%u, %%v%u], %%v%u {in_bounds = [true]} : %s, vector<%dxbf16>",
                             b, row0, col, zb, bty, w);
        unsigned y = lo_emit(o, "vector.transfer_read %%v%u[%%v%u, %%v%u], %%v%u {in_bounds = [true]} : %s, vector<%dxbf16>",
                             b, row1, col, zb, bty, w);
        unsigned z = lo_emit(o, "vector.interleave %%v%u, %%v%u : vector<%dxbf16> -> vector<%dxbf16>", x, y, w, 2 * w);
        cur = lo_emit(o, "vector.transfer_write %%v%u, %%v%u[%%v%u, %%v%u, %%v%u] {in_bounds = [true]} : vector<%dxbf16>, %s",
                      z, cur, n1, k2, le_const_index(c, (int64_t)j * 2 * w), 2 * w, tys);
    }
    return le_for_close(c, &ln, le_for_close(c, &lk, cur, tys), tys);
}

/* Is tile v the constant 0 (+0.0, through splats)? */
static bool
zero_tile(LeCtx *c, IrRef v)
{
    IrOp *d = c->f->vals[v].def;
    while (d && d->opc == IR_SPLAT)
        d = c->f->vals[d->args[0]].def;
    return d && d->opc == IR_CONST && d->i[0] == 0 && d->f == 0.0 && !signbit(d->f);
}

/* The op after 'from' in its block that uses v, or NULL. */
static IrOp *
user_after(LeCtx *c, IrOp *from, IrRef v)
{
    if (c->f->vals[v].nuse != 1)
        return NULL;
    for (IrOp *u = from->next; u; u = u->next)
        for (uint32_t i = 0; i < u->nargs; i++)
            if (u->args[i] == v)
                return u;
    return NULL;
}

/* `acc + extf(truncf(dot))` with each value used once, truncf to bf16 and back to the
 * dot's fp32 (what `acc += smt.dot(a, b).to(tl.float32)` is for bf16 a): the add, its
 * other operand in *acc; else NULL. */
static IrOp *
rounded_accumulate(LeCtx *c, IrOp *dot, IrRef *acc)
{
    IrOp *t = user_after(c, dot, dot->res[0]);
    if (!t || t->opc != IR_TRUNCF || ir_type_dtype(c->m, ir_type_elem(c->m, c->f->vals[t->res[0]].type)) != IR_BF16)
        return NULL;
    IrOp *e = user_after(c, t, t->res[0]);
    if (!e || e->opc != IR_EXTF || c->f->vals[e->res[0]].type != c->f->vals[dot->res[0]].type)
        return NULL;
    IrOp *a = user_after(c, e, e->res[0]);
    if (!a || a->opc != IR_ADDF || a->nargs != 2 || c->f->vals[a->res[0]].type != c->f->vals[dot->res[0]].type)
        return NULL;
    *acc = a->args[0] == e->res[0] ? a->args[1] : a->args[0];
    return a;
}

/* One scf.for over row blocks [lo, hi) of `rows` rows of the panel n1 (its first
 * column col0): loads the accumulators from C (cin), runs the K/2 pair steps, and
 * writes them back; with prefetch (the blocks from row 0), each block first
 * prefetches its share of the next K step's tiles. Returns C after the loop. */
static unsigned
row_blocks(LeCtx *c, const Pairs *q, unsigned cin, unsigned n1, unsigned col0, int64_t lo, int64_t hi, int rows,
           bool prefetch)
{
    LoBuf *o = c->out;
    const char *tys = le_ty(c, &q->tc);
    LeLoop lm;
    le_for_open(c, &lm, lo, hi, rows, cin, tys);
    unsigned mb = lm.iv;
    int nv = q->nv, na = rows * nv;
    unsigned row[64], acc[64], arg[64];
    if (rows > 64 || nv > 16 || na > 64)
        ir_die("dot pairs: register block %dx%d out of range", rows, nv);
    if (prefetch && q->npf) { /* this block's share of the next tiles (blocks from row 0) */
        unsigned blk = lo_emit(o, "arith.divui %%v%u, %%v%u : index", mb, le_const_index(c, rows));
        unsigned part = lo_emit(o, "arith.muli %%v%u, %%v%u : index", n1, le_const_index(c, hi / rows));
        part = lo_emit(o, "arith.addi %%v%u, %%v%u : index", part, blk);
        for (int i = 0; i < q->npf; i++)
            le_prefetch_rows(c, &q->pf[i], part, q->parts);
    }
    /* the block of C [rows, nr] read as one 2-D vector at (mb, col0), its accumulators
     * extracted from it: one address, not one per accumulator kept over the loop */
    char vblk[48], vrow[32];
    snprintf(vblk, sizeof vblk, "vector<%dx%dxf32>", rows, nv * q->vl);
    snprintf(vrow, sizeof vrow, "vector<%dxf32>", nv * q->vl);
    unsigned zf = lo_emit(o, "arith.constant 0.0 : f32"), zb = lo_emit(o, "arith.constant 0.0 : bf16");
    unsigned blk = q->zero_c ? lo_emit(o, "arith.constant dense<0.0> : %s", vblk)
                             : lo_emit(o, "vector.transfer_read %%v%u[%%v%u, %%v%u], %%v%u {in_bounds = [true, true]} : %s, %s",
                                       lm.carry, mb, col0, zf, tys, vblk);
    for (int i = 0; i < rows; i++) {
        row[i] = lo_emit(o, "vector.extract %%v%u[%d] : %s from %s", blk, i, vrow, vblk);
        for (int j = 0; j < nv; j++)
            acc[i * nv + j] = nv == 1 ? row[i]
                                      : lo_emit(o, "vector.extract_strided_slice %%v%u {offsets = [%d], sizes = [%d], "
                                                   "strides = [1]} : %s to %s",
                                                row[i], j * q->vl, q->vl, vrow, q->vf);
    }
    /* the K/2 steps, accumulators as iteration arguments */
    unsigned kr = lo_fresh(o), k2 = lo_fresh(o);
    for (int i = 0; i < na; i++)
        arg[i] = lo_fresh(o);
    lo_printf(o, "%*s%%v%u:%d = scf.for %%v%u = %%v%u to %%v%u step %%v%u iter_args(", o->indent, "", kr, na, k2,
              le_const_index(c, 0), le_const_index(c, q->ta.shape[1] / 2), le_const_index(c, 1));
    for (int i = 0; i < na; i++)
        lo_printf(o, "%s%%v%u = %%v%u", i ? ", " : "", arg[i], acc[i]);
    lo_printf(o, ") -> (");
    for (int i = 0; i < na; i++)
        lo_printf(o, "%s%s", i ? ", " : "", q->vf);
    lo_printf(o, ") {\n");
    int saved_k = c->scope;
    le_scope_push(c);
    o->indent += 2;
    unsigned kk = lo_emit(o, "arith.muli %%v%u, %%v%u : index", k2, le_const_index(c, 2));
    unsigned bj[16], nx[64];
    for (int j = 0; j < nv; j++)
        bj[j] = lo_emit(o, "vector.transfer_read %%v%u[%%v%u, %%v%u, %%v%u], %%v%u {in_bounds = [true]} : %s, %s",
                        q->bp, n1, k2, le_const_index(c, (int64_t)j * 2 * q->vl), zb, le_ty(c, &q->tb), q->vb);
    for (int i = 0; i < rows; i++) {
        unsigned ar = i ? lo_emit(o, "arith.addi %%v%u, %%v%u : index", mb, le_const_index(c, i)) : mb;
        unsigned ap = lo_emit(o, "vector.transfer_read %%v%u[%%v%u, %%v%u], %%v%u {in_bounds = [true]} : %s, vector<2xbf16>",
                              q->a, ar, kk, zb, le_ty(c, &q->ta));
        unsigned ai = lo_emit(o, "vector.bitcast %%v%u : vector<2xbf16> to vector<1xi32>", ap);
        unsigned bi = lo_emit(o, "vector.broadcast %%v%u : vector<1xi32> to %s", ai, q->vi);
        unsigned av = lo_emit(o, "vector.bitcast %%v%u : %s to %s", bi, q->vi, q->vb);
        for (int j = 0; j < nv; j++)
            nx[i * nv + j] =
                lo_emit(o, "llvm.call @llvm.x86.avx512bf16.dpbf16ps.%d(%%v%u, %%v%u, %%v%u) : (%s, %s, %s) -> %s",
                        q->vl * 32, arg[i * nv + j], av, bj[j], q->vf, q->vb, q->vb, q->vf);
    }
    lo_printf(o, "%*sscf.yield ", o->indent, "");
    for (int i = 0; i < na; i++)
        lo_printf(o, "%s%%v%u", i ? ", " : "", nx[i]);
    lo_printf(o, " : ");
    for (int i = 0; i < na; i++)
        lo_printf(o, "%s%s", i ? ", " : "", q->vf);
    lo_printf(o, "\n");
    o->indent -= 2;
    le_scope_pop(c, saved_k);
    lo_line(o, "}");
    unsigned out = lo_emit(o, "arith.constant dense<0.0> : %s", vblk), prior = 0;
    if (q->racc) /* acc's block, read before the sums are rounded and added to it */
        prior = lo_emit(o, "vector.transfer_read %%v%u[%%v%u, %%v%u], %%v%u {in_bounds = [true, true]} : %s, %s", lm.carry,
                        mb, col0, zf, tys, vblk);
    for (int i = 0; i < rows; i++) { /* the accumulators back into one block vector */
        unsigned r = 0;
        if (nv > 1) {
            r = lo_emit(o, "arith.constant dense<0.0> : %s", vrow);
            for (int j = 0; j < nv; j++)
                r = lo_emit(o, "vector.insert_strided_slice %%v%u#%d, %%v%u {offsets = [%d], strides = [1]} : %s into %s",
                            kr, i * nv + j, r, j * q->vl, q->vf, vrow);
            out = lo_emit(o, "vector.insert %%v%u, %%v%u [%d] : %s into %s", r, out, i, vrow, vblk);
        } else {
            out = lo_emit(o, "vector.insert %%v%u#%d, %%v%u [%d] : %s into %s", kr, i, out, i, vrow, vblk);
        }
    }
    if (q->racc) {
        char vbb[48];
        snprintf(vbb, sizeof vbb, "vector<%dx%dxbf16>", rows, nv * q->vl);
        unsigned t = lo_emit(o, "arith.truncf %%v%u : %s to %s", out, vblk, vbb);
        unsigned e = lo_emit(o, "arith.extf %%v%u : %s to %s", t, vbb, vblk);
        out = lo_emit(o, "arith.addf %%v%u, %%v%u : %s", prior, e, vblk);
    }
    unsigned cur = lo_emit(o, "vector.transfer_write %%v%u, %%v%u[%%v%u, %%v%u] {in_bounds = [true, true]} : %s, %s", out,
                           lm.carry, mb, col0, vblk, tys);
    return le_for_close(c, &lm, cur, tys);
}

int
le_dot_pairs(LeCtx *c, IrOp *op, const LpDot *pd)
{
    LoBuf *o = c->out;
    Pairs q;
    q.vl = c->opt->vector_bytes >= 64 ? 16 : 8;
    q.nv = pd->nr / q.vl;
    snprintf(q.vf, sizeof q.vf, "vector<%dxf32>", q.vl);
    snprintf(q.vb, sizeof q.vb, "vector<%dxbf16>", 2 * q.vl);
    snprintf(q.vi, sizeof q.vi, "vector<%dxi32>", q.vl);
    c->decl_dpbf16 |= q.vl == 16 ? 2 : 1;
    q.ta = lt_of_tile(c->m, c->f->vals[op->args[0]].type);
    /* the next K step's tiles, planned before the operands are read */
    q.npf = 0;
    for (int i = 0; i < 2; i++)
        if (le_prefetch_plan(c, op->args[i], 1 - i, q.ta.shape[1], &q.pf[q.npf]))
            q.npf++;
    q.a = le_dense_tile(c, op->args[0], IR_BF16);
    q.ta.elem = IR_BF16;
    q.bp = pack_pairs(c, op->args[1], pd->nr, q.vl, &q.tb);
    q.tc = lt_of_tile(c->m, c->f->vals[op->args[2]].type);
    /* C = 0 (a dot not accumulating): the accumulators start at zero and every element
     * of C is written by a block, so C is neither filled nor read */
    q.zero_c = zero_tile(c, op->args[2]);
    IrRef accv = 0;
    IrOp *fused = q.zero_c ? rounded_accumulate(c, op, &accv) : NULL;
    q.racc = fused ? le_materialize(c, accv) : 0;
    unsigned acc0 = q.racc ? q.racc : q.zero_c ? le_alloc_tensor(c, &q.tc) : le_materialize(c, op->args[2]);
    int64_t M = q.tc.shape[0], N = q.tc.shape[1], tail = M % pd->mr;
    q.parts = N / pd->nr * ((M - tail) / pd->mr);
    if (!q.parts)
        q.npf = 0;
    const char *tys = le_ty(c, &q.tc);
    LeLoop ln;
    le_for_open(c, &ln, 0, N / pd->nr, 1, acc0, tys);
    unsigned n1 = ln.iv;
    unsigned col0 = lo_emit(o, "arith.muli %%v%u, %%v%u : index", n1, le_const_index(c, pd->nr));
    unsigned cur = ln.carry;
    if (M - tail > 0)
        cur = row_blocks(c, &q, cur, n1, col0, 0, M - tail, pd->mr, true);
    if (tail)
        cur = row_blocks(c, &q, cur, n1, col0, M - tail, M, (int)tail, false);
    /* fused: the add's value (the truncf and extf between are never emitted) */
    le_set_tensor(c, fused ? fused->res[0] : op->res[0], le_for_close(c, &ln, cur, tys));
    return 0;
}
