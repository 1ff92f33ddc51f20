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

typedef struct Pairs {
    int vl;                  /* fp32 lanes of one vector: 16 (zmm) or 8 (ymm) */
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

/* One scf.for over row blocks [lo, hi) of `rows` rows of the panel n1 (its first
 * column col0): loads the accumulators from C (cin), runs the K/2 pair steps, and
 * writes them back. Returns C after the loop. */
static unsigned
row_blocks(LeCtx *c, const Pairs *q, unsigned cin, unsigned n1, unsigned col0, int64_t lo, int64_t hi, int rows)
{
    LoBuf *o = c->out;
    const char *tys = le_ty(c, &q->tc);
    LeLoop lm;
    le_for_open(c, &lm, lo, hi, rows, cin, tys);
    unsigned mb = lm.iv;
    int nv = q->nv, na = rows * nv;
    unsigned row[64], col[16], acc[64], arg[64];
    if (rows > 64 || nv > 16 || na > 64)
        ir_die("dot pairs: register block %dx%d out of range", rows, nv);
    for (int i = 0; i < rows; i++)
        row[i] = i ? lo_emit(o, "arith.addi %%v%u, %%v%u : index", mb, le_const_index(c, i)) : mb;
    for (int j = 0; j < nv; j++)
        col[j] = j ? lo_emit(o, "arith.addi %%v%u, %%v%u : index", col0, le_const_index(c, (int64_t)j * q->vl)) : col0;
    unsigned zf = lo_emit(o, "arith.constant 0.0 : f32"), zb = lo_emit(o, "arith.constant 0.0 : bf16");
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < nv; j++)
            acc[i * nv + j] = lo_emit(o, "vector.transfer_read %%v%u[%%v%u, %%v%u], %%v%u {in_bounds = [true]} : %s, %s",
                                      lm.carry, row[i], col[j], zf, tys, q->vf);
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
        unsigned ap = lo_emit(o, "vector.transfer_read %%v%u[%%v%u, %%v%u], %%v%u {in_bounds = [true]} : %s, vector<2xbf16>",
                              q->a, row[i], kk, zb, le_ty(c, &q->ta));
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
    unsigned cur = lm.carry;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < nv; j++)
            cur = lo_emit(o, "vector.transfer_write %%v%u#%d, %%v%u[%%v%u, %%v%u] {in_bounds = [true]} : %s, %s", kr,
                          i * nv + j, cur, row[i], col[j], q->vf, tys);
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
    q.a = le_dense_tile(c, op->args[0], IR_BF16);
    q.ta = lt_of_tile(c->m, c->f->vals[op->args[0]].type);
    q.ta.elem = IR_BF16;
    q.bp = pack_pairs(c, op->args[1], pd->nr, q.vl, &q.tb);
    q.tc = lt_of_tile(c->m, c->f->vals[op->args[2]].type);
    unsigned acc0 = le_materialize(c, op->args[2]);
    int64_t M = q.tc.shape[0], N = q.tc.shape[1], tail = M % pd->mr;
    const char *tys = le_ty(c, &q.tc);
    LeLoop ln;
    le_for_open(c, &ln, 0, N / pd->nr, 1, acc0, tys);
    unsigned n1 = ln.iv;
    unsigned col0 = lo_emit(o, "arith.muli %%v%u, %%v%u : index", n1, le_const_index(c, pd->nr));
    unsigned cur = ln.carry;
    if (M - tail > 0)
        cur = row_blocks(c, &q, cur, n1, col0, 0, M - tail, pd->mr);
    if (tail)
        cur = row_blocks(c, &q, cur, n1, col0, M - tail, M, (int)tail);
    le_set_tensor(c, op->res[0], le_for_close(c, &ln, cur, tys));
    return 0;
}
