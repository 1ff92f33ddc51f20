/*
 * cg_script.c — the per-kernel transform-dialect script: tiling, peeling,
 * vectorisation and bufferization of every linalg.generic (docs/compiler.md §1.4).
 *
 * Requires: named linalg ops generalized (linalg-generalize-named-ops), so every
 * structured op is a linalg.generic. Each generic is classified from its iterator
 * types and indexing maps (read through the MLIR C API), tagged with a "cg_id"
 * attribute, and given its own tiling recipe in the script:
 *   elementwise / innermost loop parallel: outer loops by 1, innermost by the
 *     vector length VL; the innermost loop is peeled when its extent is dynamic or
 *     not a multiple of VL and the remainder gets masked vectorisation;
 *   innermost loop a reduction: outer loops by 1, then tile_reduction_using_for
 *     with up to 4*VL lanes (a vector accumulator, reduced once after the loop);
 *   static matmul-like contraction: an MB x NB register block (8 x 2VL with 32
 *     vector registers, 4 x 2VL with 16) over single k steps, lowered to
 *     broadcast-FMA outer products (vector.contract -> outerproduct).
 * Then one vectorize_children_and_apply_patterns over each function, loop-invariant
 * subset hoisting (accumulators stay in registers) and vector lowering patterns.
 * A second, fixed script (cg_script_bufferize) eliminates empty tensors and
 * bufferizes (one-shot, linalg.copy memcpys).
 */
#include "cg_int.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOOPS 8

typedef enum OpKind { OK_PARALLEL_INNER, OK_REDUCTION_INNER, OK_CONTRACTION, OK_NONE } OpKind;

typedef struct OpInfo {
    int nloops;
    int64_t ext[MAX_LOOPS]; /* static extent, -1 when dynamic or unknown */
    uint8_t red[MAX_LOOPS]; /* reduction iterator? */
    int elem_bytes;         /* widest element type among the operands */
    int simple_body;        /* arith/math/index only: masked vectorisation is safe */
    int combiner;           /* a reduction with a recognised combiner */
    int m, n, k;            /* loop positions of a contraction */
    OpKind kind;
} OpInfo;

typedef struct OpList {
    MlirOperation *v;
    size_t n, cap;
} OpList;

static MlirStringRef
sref(const char *s)
{
    return mlirStringRefCreateFromCString(s);
}

static int
op_is(MlirOperation op, const char *name)
{
    MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
    return s.length == strlen(name) && memcmp(s.data, name, s.length) == 0;
}

static MlirWalkResult
collect_generic(MlirOperation op, void *user)
{
    OpList *l = user;
    if (!op_is(op, "linalg.generic"))
        return MlirWalkResultAdvance;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v)
            abort();
    }
    l->v[l->n++] = op;
    return MlirWalkResultAdvance;
}

static void
print_to_buf(MlirStringRef s, void *user)
{
    CgStr *b = user;
    cg_str_append(b, s.data, s.length);
}

static int
type_bytes(MlirType t)
{
    if (mlirTypeIsAShaped(t))
        t = mlirShapedTypeGetElementType(t);
    if (mlirTypeIsAIndex(t))
        return 8;
    if (mlirTypeIsAInteger(t))
        return (int)((mlirIntegerTypeGetWidth(t) + 7) / 8);
    if (mlirTypeIsAFloat(t))
        return (int)(mlirFloatTypeGetWidth(t) / 8);
    return 4;
}

/* Does the body hold only ops the masked vectoriser handles? */
static int
body_is_simple(MlirOperation op)
{
    MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
    for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
         o = mlirOperationGetNextInBlock(o)) {
        MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(o));
        if (s.length > 6 && memcmp(s.data, "arith.", 6) == 0)
            continue;
        if (s.length > 5 && memcmp(s.data, "math.", 5) == 0)
            continue;
        if (op_is(o, "linalg.index") || op_is(o, "linalg.yield"))
            continue;
        return 0;
    }
    return 1;
}

/* Is the op's single result a reduction with a combiner MLIR knows the neutral
 * element of (out = combiner(..., out))? tile_reduction_using_for and masked
 * vectorisation of a reduction need one. */
static int
has_simple_combiner(MlirOperation op)
{
    static const char *const kinds[] = {
        "arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.maxnumf",
        "arith.minnumf", "arith.addi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
        "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui"};
    if (mlirOperationGetNumResults(op) != 1)
        return 0;
    MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
    MlirOperation y = mlirBlockGetTerminator(b);
    if (mlirOperationIsNull(y) || mlirOperationGetNumOperands(y) != 1)
        return 0;
    MlirValue v = mlirOperationGetOperand(y, 0);
    if (!mlirValueIsAOpResult(v))
        return 0;
    MlirOperation c = mlirOpResultGetOwner(v);
    int known = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        known |= op_is(c, kinds[i]);
    MlirValue acc = mlirBlockGetArgument(b, mlirBlockGetNumArguments(b) - 1);
    return known && mlirOperationGetNumOperands(c) == 2 &&
           (mlirValueEqual(mlirOperationGetOperand(c, 0), acc) ||
            mlirValueEqual(mlirOperationGetOperand(c, 1), acc));
}

/* Loop position of result j of map i, or -1 when it is not a plain dimension. */
static int
map_dim(MlirAttribute maps, intptr_t i, intptr_t j)
{
    MlirAffineMap m = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, i));
    if (j < 0 || j >= mlirAffineMapGetNumResults(m))
        return -1;
    MlirAffineExpr e = mlirAffineMapGetResult(m, j);
    return mlirAffineExprIsADim(e) ? (int)mlirAffineDimExprGetPosition(e) : -1;
}

static int
map_uses(MlirAttribute maps, intptr_t i, int d)
{
    MlirAffineMap m = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, i));
    for (intptr_t j = 0; j < mlirAffineMapGetNumResults(m); j++)
        if (map_dim(maps, i, j) == d)
            return 1;
    return 0;
}

/* Recognises C(.., m, n) += A(.., m, k) * B(.., k, n) (either operand order)
 * with one reduction loop k, the innermost. */
static void
find_contraction(MlirOperation op, MlirAttribute maps, OpInfo *in)
{
    intptr_t nops = mlirOperationGetNumOperands(op);
    int nred = 0;
    for (int d = 0; d < in->nloops; d++)
        nred += in->red[d];
    if (nops != 3 || in->nloops < 3 || nred != 1 || !in->red[in->nloops - 1])
        return;
    MlirAffineMap out = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, 2));
    intptr_t nr = mlirAffineMapGetNumResults(out);
    int m = map_dim(maps, 2, nr - 2), n = map_dim(maps, 2, nr - 1), k = in->nloops - 1;
    if (m < 0 || n < 0)
        return;
    int a_ok = map_uses(maps, 0, m) && map_uses(maps, 0, k) && !map_uses(maps, 0, n);
    int b_ok = map_uses(maps, 1, n) && map_uses(maps, 1, k) && !map_uses(maps, 1, m);
    int a_sw = map_uses(maps, 1, m) && map_uses(maps, 1, k) && !map_uses(maps, 1, n);
    int b_sw = map_uses(maps, 0, n) && map_uses(maps, 0, k) && !map_uses(maps, 0, m);
    if (!((a_ok && b_ok) || (a_sw && b_sw)))
        return;
    if (in->ext[m] < 0 || in->ext[n] < 0 || in->ext[k] < 0)
        return;
    in->m = m, in->n = n, in->k = k;
    in->kind = OK_CONTRACTION;
}

/* Fills 'in' from the generic's iterator types, maps and operand shapes. */
static void
analyze(MlirOperation op, OpInfo *in)
{
    memset(in, 0, sizeof *in);
    in->kind = OK_NONE;
    MlirAttribute iters = mlirOperationGetAttributeByName(op, sref("iterator_types"));
    MlirAttribute maps = mlirOperationGetAttributeByName(op, sref("indexing_maps"));
    if (mlirAttributeIsNull(iters) || mlirAttributeIsNull(maps))
        return;
    in->nloops = (int)mlirArrayAttrGetNumElements(iters);
    if (in->nloops > MAX_LOOPS)
        return;
    for (int d = 0; d < in->nloops; d++) {
        CgStr s = {0};
        mlirAttributePrint(mlirArrayAttrGetElement(iters, d), print_to_buf, &s);
        in->red[d] = s.p && strstr(s.p, "reduction") != NULL;
        in->ext[d] = -1;
        cg_str_fini(&s);
    }
    in->elem_bytes = 1;
    intptr_t nops = mlirOperationGetNumOperands(op);
    for (intptr_t i = 0; i < nops && i < mlirArrayAttrGetNumElements(maps); i++) {
        MlirType t = mlirValueGetType(mlirOperationGetOperand(op, i));
        int eb = type_bytes(t);
        if (eb > in->elem_bytes)
            in->elem_bytes = eb;
        if (!mlirTypeIsAShaped(t) || !mlirShapedTypeHasRank(t))
            continue;
        for (intptr_t j = 0; j < mlirShapedTypeGetRank(t); j++) {
            int d = map_dim(maps, i, j);
            if (d >= 0 && d < in->nloops && !mlirShapedTypeIsDynamicDim(t, j))
                in->ext[d] = mlirShapedTypeGetDimSize(t, j);
        }
    }
    int nred = 0;
    for (int d = 0; d < in->nloops; d++)
        nred += in->red[d];
    in->combiner = nred > 0 && has_simple_combiner(op);
    in->simple_body = body_is_simple(op) && (nred == 0 || in->combiner);
    if (in->nloops == 0)
        return; /* nothing to tile */
    in->kind = in->red[in->nloops - 1] ? OK_REDUCTION_INNER : OK_PARALLEL_INNER;
    find_contraction(op, maps, in);
}

/* ---- script text ------------------------------------------------------------ */

static const char *ANY = "!transform.any_op";
static const char *FOR = "!transform.op<\"scf.for\">";

static int
largest_dividing(int64_t ext, const int *cands, int n)
{
    for (int i = 0; i < n; i++)
        if (cands[i] > 0 && ext % cands[i] == 0)
            return cands[i];
    return 1;
}

/* "%t, %l_0, ... = tile_using_for %src tile_sizes [...]"; returns the number of
 * loops created (non-zero sizes). */
static int
emit_tile(CgStr *s, int id, const char *src, const int64_t *sz, int n)
{
    int nl = 0;
    for (int d = 0; d < n; d++)
        nl += sz[d] != 0;
    if (nl == 0)
        return 0;
    cg_str_printf(s, "    %%t%d", id);
    for (int i = 0; i < nl; i++)
        cg_str_printf(s, ", %%l%d_%d", id, i);
    cg_str_printf(s, " = transform.structured.tile_using_for %s tile_sizes [", src);
    for (int d = 0; d < n; d++)
        cg_str_printf(s, "%s%lld", d ? ", " : "", (long long)sz[d]);
    cg_str_printf(s, "] : (%s) -> (%s", ANY, ANY);
    for (int i = 0; i < nl; i++)
        cg_str_printf(s, ", %s", FOR);
    cg_str_printf(s, ")\n");
    return nl;
}

/* Peels loop 'loop' and vectorises the remainder's generic with a mask. */
static void
emit_peel(CgStr *s, int id, const char *loop, const int64_t *vs, int n, int masked)
{
    cg_str_printf(s,
                  "    %%pm%d, %%pr%d = transform.loop.peel %s : (%s) -> (%s, %s)\n",
                  id, id, loop, FOR, ANY, ANY);
    if (!masked)
        return;
    cg_str_printf(s,
                  "    %%rg%d = transform.structured.match ops{[\"linalg.generic\"]} in %%pr%d"
                  " : (%s) -> %s\n",
                  id, id, ANY, ANY);
    cg_str_printf(s, "    transform.structured.vectorize %%rg%d vector_sizes [", id);
    for (int d = 0; d < n; d++)
        cg_str_printf(s, "%s%lld", d ? ", " : "", (long long)vs[d]);
    cg_str_printf(s, "] : %s\n", ANY);
}

/* Elementwise-like: outer loops by 1, innermost by vl, peel when needed. */
static void
emit_parallel_inner(CgStr *s, int id, const OpInfo *in, int vl, int tile_inner_red)
{
    int64_t sz[MAX_LOOPS], vs[MAX_LOOPS];
    int last = in->nloops - 1;
    for (int d = 0; d < last; d++) {
        sz[d] = in->ext[d] == 1 ? 0 : 1;
        vs[d] = 1;
    }
    int64_t e = in->ext[last];
    int peel = 0;
    if (e >= 0 && e <= vl && !tile_inner_red) {
        sz[last] = 0;
        vs[last] = e;
    } else {
        sz[last] = vl;
        vs[last] = vl;
        peel = e < 0 || e % vl != 0;
    }
    char src[32];
    snprintf(src, sizeof src, "%%o%d", id);
    int nl = emit_tile(s, id, src, sz, in->nloops);
    if (peel && nl > 0) {
        char loop[48];
        snprintf(loop, sizeof loop, "%%l%d_%d", id, nl - 1);
        emit_peel(s, id, loop, vs, in->nloops, in->simple_body);
    }
}

/* Innermost reduction: outer loops by 1, then a vector accumulator of up to
 * 4*vl lanes via tile_reduction_using_for. */
static void
emit_reduction_inner(CgStr *s, int id, const OpInfo *in, int vl)
{
    int last = in->nloops - 1;
    int64_t e = in->ext[last];
    if (e < 0) { /* dynamic reduction extent: sequential tiles, masked tail */
        emit_parallel_inner(s, id, in, vl, 1);
        return;
    }
    if (!in->combiner) /* argmax-like: rows one by one, left to the vectoriser */
        e = 0;
    int64_t sz[MAX_LOOPS];
    for (int d = 0; d < last; d++)
        sz[d] = in->ext[d] == 1 ? 0 : 1;
    sz[last] = 0;
    char src[32];
    snprintf(src, sizeof src, "%%o%d", id);
    int nl = emit_tile(s, id, src, sz, in->nloops);
    if (e <= vl || e % vl != 0)
        return;
    int cands[] = {4 * vl, 2 * vl, vl};
    int r = largest_dividing(e, cands, 3);
    if (r == e) /* one chunk: vectorise the row as it is */
        return;
    if (nl)
        snprintf(src, sizeof src, "%%t%d", id);
    cg_str_printf(s,
                  "    %%rf%d, %%rs%d, %%rc%d, %%rl%d = transform.structured."
                  "tile_reduction_using_for %s by tile_sizes = [",
                  id, id, id, id, src);
    for (int d = 0; d < in->nloops; d++)
        cg_str_printf(s, "%s%d", d ? ", " : "", d == last ? r : 0);
    cg_str_printf(s, "] : (%s) -> (%s, %s, %s, %s)\n", ANY, ANY, ANY, ANY, ANY);
}

/* Matmul-like: an mb x nb register block, one k per step. */
static void
emit_contraction(CgStr *s, int id, const OpInfo *in, int vl, int nregs)
{
    int64_t sz[MAX_LOOPS];
    for (int d = 0; d < in->nloops; d++)
        sz[d] = in->ext[d] == 1 ? 0 : 1;
    int mc[] = {nregs >= 32 ? 8 : 4, 2, 1};
    int nc[] = {2 * vl, vl};
    sz[in->m] = largest_dividing(in->ext[in->m], mc, 3);
    sz[in->n] = in->ext[in->n] <= vl ? 0 : largest_dividing(in->ext[in->n], nc, 2);
    sz[in->k] = 1; /* one k per step: 16 accumulators plus 2 B rows stay in registers */
    if (sz[in->m] == in->ext[in->m])
        sz[in->m] = 0;
    char src[32];
    snprintf(src, sizeof src, "%%o%d", id);
    emit_tile(s, id, src, sz, in->nloops);
}

static void
emit_op(CgStr *s, int id, const OpInfo *in, const CgTarget *t)
{
    int vl = t->vector_bytes / (in->elem_bytes > 0 ? in->elem_bytes : 4);
    if (vl < 1)
        vl = 1;
    int nregs = t->vector_bytes >= 64 || cg_target_is_riscv(t) ? 32 : 16;
    cg_str_printf(s,
                  "    %%o%d = transform.structured.match attributes {cg_id = %d : i64} in %%root"
                  " : (%s) -> %s\n",
                  id, id, ANY, ANY);
    switch (in->kind) {
    case OK_PARALLEL_INNER: emit_parallel_inner(s, id, in, vl, 0); break;
    case OK_REDUCTION_INNER: emit_reduction_inner(s, id, in, vl); break;
    case OK_CONTRACTION: emit_contraction(s, id, in, vl, nregs); break;
    case OK_NONE: break;
    }
}

/* The common tail: vectorise, hoist loop-invariant subsets, lower vector ops. */
static const char script_tail[] =
    "    %f = transform.structured.match ops{[\"func.func\"]} in %root"
    " : (!transform.any_op) -> !transform.any_op\n"
    "    transform.apply_patterns to %f {\n"
    "      transform.apply_patterns.canonicalization\n"
    "      transform.apply_patterns.linalg.tiling_canonicalization\n"
    "    } : !transform.any_op\n"
    "    %fv = transform.structured.vectorize_children_and_apply_patterns %f"
    " {vectorize_padding} : (!transform.any_op) -> !transform.any_op\n"
    "    transform.apply_patterns to %fv {\n"
    "      transform.apply_patterns.canonicalization\n"
    "      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers\n"
    "    } : !transform.any_op\n"
    "    transform.apply_cse to %fv : !transform.any_op\n"
    "    %loops = transform.structured.match ops{[\"scf.for\"]} in %fv"
    " : (!transform.any_op) -> !transform.any_op\n"
    "    transform.foreach %loops : !transform.any_op {\n"
    "    ^bb0(%lp: !transform.any_op):\n"
    "      transform.loop.hoist_loop_invariant_subsets %lp : !transform.any_op\n"
    "    }\n"
    "    transform.apply_patterns to %fv {\n"
    "      transform.apply_patterns.vector.lower_contraction"
    " lowering_strategy = \"outerproduct\"\n"
    "      transform.apply_patterns.vector.lower_outerproduct\n"
    "      transform.apply_patterns.vector.transfer_permutation_patterns\n"
    "      transform.apply_patterns.vector.lower_multi_reduction"
    " lowering_strategy = \"innerreduction\"\n"
    "      transform.apply_patterns.canonicalization\n"
    "    } : !transform.any_op\n"
    "    transform.apply_cse to %fv : !transform.any_op\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

/* The second script (after cg_mlir.c has given each tensor.empty use its own op):
 * empty-tensor elimination, bufferization, hoisting of redundant transfers. */
const char cg_script_bufferize[] =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @__transform_main(%root: !transform.any_op) {\n"
    "    %f = transform.structured.match ops{[\"func.func\"]} in %root"
    " : (!transform.any_op) -> !transform.any_op\n"
    "    transform.bufferization.eliminate_empty_tensors %f : !transform.any_op\n"
    "    %b = transform.bufferization.one_shot_bufferize %root {allow_return_allocs_from_loops = true, memcpy_op = \"linalg.copy\"}"
    " : (!transform.any_op) -> !transform.any_op\n"
    "    %bf = transform.structured.match ops{[\"func.func\"]} in %b"
    " : (!transform.any_op) -> !transform.any_op\n"
    "    %bh = transform.structured.hoist_redundant_vector_transfers %bf"
    " : (!transform.any_op) -> !transform.any_op\n"
    "    transform.apply_patterns to %bh {\n"
    "      transform.apply_patterns.canonicalization\n"
    "    } : !transform.any_op\n"
    "    transform.apply_cse to %bh : !transform.any_op\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

char *
cg_script_build(MlirOperation module, const CgTarget *t)
{
    OpList ops = {0};
    mlirOperationWalk(module, collect_generic, &ops, MlirWalkPreOrder);
    MlirContext ctx = mlirOperationGetContext(module);
    MlirType i64 = mlirIntegerTypeGet(ctx, 64);
    CgStr s = {0};
    cg_str_printf(&s, "module attributes {transform.with_named_sequence} {\n"
                      "  transform.named_sequence @__transform_main(%%root: %s) {\n",
                  ANY);
    for (size_t i = 0; i < ops.n; i++) {
        OpInfo in;
        analyze(ops.v[i], &in);
        mlirOperationSetDiscardableAttributeByName(ops.v[i], sref("cg_id"),
                                                   mlirIntegerAttrGet(i64, (int64_t)i));
        emit_op(&s, (int)i, &in, t);
    }
    cg_str_append(&s, script_tail, sizeof script_tail - 1);
    free(ops.v);
    return cg_str_take(&s);
}
