/*
 * cg_script.c — the per-kernel transform-dialect script: tiling, peeling,
 * vectorisation and bufferization of every linalg.generic (docs/compiler.md §1.4).
 *
 * The lowering says what each generic is and how it wants to be tiled: the
 * attributes tritium.kind ("elementwise", "copy", "fill", "pack", "gather",
 * "gather_reduction", "row_reduction", "column_reduction", "reduction", "contraction"),
 * tritium.tile (a tile size per loop, 0: untiled) and tritium.lanes (the vector
 * accumulator of a row reduction). This file only reads them, plus the static
 * extents of the loops (from the operand types) to decide peeling, tags each
 * generic with a "cg_id" and writes its recipe:
 *   tiled innermost loop (elementwise-like): tile_using_for; when the innermost
 *     extent is dynamic or not a multiple of its tile the loop is peeled, and the
 *     remainder gets masked vectorisation unless its body gathers from memory;
 *   row reductions: tile_using_for over the outer loops, then
 *     tile_reduction_using_for with 'lanes' lanes (a vector accumulator reduced
 *     once after the loop);
 *   contraction: tile_using_for with the register block, lowered to broadcast-FMA
 *     outer products (vector.contract -> outerproduct).
 * Then one vectorize_children_and_apply_patterns over each function, loop-invariant
 * subset hoisting (accumulators stay in registers) and vector lowering patterns;
 * a function with a "gather_reduction" (a reduction whose body gathers) is left
 * scalar instead (script_tail_scalar).
 * A second script (cg_script_bufferize) eliminates empty tensors and
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

typedef enum OpKind { OK_TILED, OK_ROW_REDUCTION, OK_CONTRACTION, OK_NONE } OpKind;

typedef struct OpInfo {
    int nloops;
    int64_t ext[MAX_LOOPS];  /* static extent, -1 when dynamic or unknown */
    int64_t tile[MAX_LOOPS]; /* tritium.tile */
    int64_t lanes;           /* tritium.lanes */
    int masked_ok;           /* the remainder of a peeled loop may be vectorised with masks */
    int no_vector;           /* "gather_reduction": its function is not vectorised */
    OpKind kind;
} OpInfo;

typedef struct OpList {
    MlirOperation *v;
    size_t n, cap;
} OpList;

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
attr_str_is(MlirAttribute a, const char *s)
{
    if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a))
        return 0;
    MlirStringRef v = mlirStringAttrGetValue(a);
    return v.length == strlen(s) && memcmp(v.data, s, v.length) == 0;
}

/* Fills 'in' from the generic's intent attributes and its operand shapes; -1
 * (with a message in err) when the intent is missing or malformed. */
static int
analyze(MlirOperation op, OpInfo *in, CgStr *err)
{
    memset(in, 0, sizeof *in);
    in->kind = OK_NONE;
    MlirAttribute iters = mlirOperationGetAttributeByName(op, cg_sref("iterator_types"));
    MlirAttribute maps = mlirOperationGetAttributeByName(op, cg_sref("indexing_maps"));
    MlirAttribute kind = mlirOperationGetAttributeByName(op, cg_sref("tritium.kind"));
    MlirAttribute tile = mlirOperationGetAttributeByName(op, cg_sref("tritium.tile"));
    MlirAttribute lanes = mlirOperationGetAttributeByName(op, cg_sref("tritium.lanes"));
    if (mlirAttributeIsNull(iters) || mlirAttributeIsNull(maps))
        return 0;
    in->nloops = (int)mlirArrayAttrGetNumElements(iters);
    if (in->nloops > MAX_LOOPS)
        return 0;
    if (mlirAttributeIsNull(kind) || !mlirAttributeIsAString(kind)) {
        cg_str_printf(err, "a linalg.generic has no tritium.kind attribute (the lowering tags every generic; "
                           "docs/compiler.md §1.3)\n");
        return -1;
    }
    if (!mlirAttributeIsNull(tile)) {
        if (!mlirAttributeIsAArray(tile) || mlirArrayAttrGetNumElements(tile) != in->nloops) {
            cg_str_printf(err, "tritium.tile must list one tile size per loop (%d)\n", in->nloops);
            return -1;
        }
        for (int d = 0; d < in->nloops; d++) {
            MlirAttribute e = mlirArrayAttrGetElement(tile, d);
            in->tile[d] = mlirAttributeIsAInteger(e) ? mlirIntegerAttrGetValueInt(e) : 0;
        }
    }
    if (!mlirAttributeIsNull(lanes) && mlirAttributeIsAInteger(lanes))
        in->lanes = mlirIntegerAttrGetValueInt(lanes);
    for (int d = 0; d < in->nloops; d++)
        in->ext[d] = -1;
    intptr_t nops = mlirOperationGetNumOperands(op);
    for (intptr_t i = 0; i < nops && i < mlirArrayAttrGetNumElements(maps); i++) {
        MlirType t = mlirValueGetType(mlirOperationGetOperand(op, i));
        if (!mlirTypeIsAShaped(t) || !mlirShapedTypeHasRank(t))
            continue;
        for (intptr_t j = 0; j < mlirShapedTypeGetRank(t); j++) {
            int d = map_dim(maps, i, j);
            if (d >= 0 && d < in->nloops && !mlirShapedTypeIsDynamicDim(t, j))
                in->ext[d] = mlirShapedTypeGetDimSize(t, j);
        }
    }
    if (attr_str_is(kind, "contraction"))
        in->kind = OK_CONTRACTION;
    else if (attr_str_is(kind, "row_reduction") || attr_str_is(kind, "reduction"))
        in->kind = OK_ROW_REDUCTION;
    else
        in->kind = OK_TILED;
    in->masked_ok = !attr_str_is(kind, "gather") && !attr_str_is(kind, "reduction");
    in->no_vector = attr_str_is(kind, "gather_reduction");
    return 0;
}

/* ---- script text ------------------------------------------------------------ */

static const char *ANY = "!transform.any_op";
static const char *FOR = "!transform.op<\"scf.for\">";

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

/* The tiles the lowering asked for; the innermost loop is peeled when its
 * extent is dynamic or not a multiple of its tile. */
static void
emit_tiled(CgStr *s, int id, const OpInfo *in)
{
    int last = in->nloops - 1;
    char src[32];
    snprintf(src, sizeof src, "%%o%d", id);
    int nl = emit_tile(s, id, src, in->tile, in->nloops);
    int64_t t = last >= 0 ? in->tile[last] : 0, e = last >= 0 ? in->ext[last] : 0;
    if (nl == 0 || t == 0 || (e >= 0 && e % t == 0))
        return;
    int64_t vs[MAX_LOOPS];
    for (int d = 0; d < in->nloops; d++)
        vs[d] = 1;
    vs[last] = t;
    char loop[48];
    snprintf(loop, sizeof loop, "%%l%d_%d", id, nl - 1);
    emit_peel(s, id, loop, vs, in->nloops, in->masked_ok);
}

/* A row reduction: the outer loops tiled, then a vector accumulator of 'lanes'
 * lanes via tile_reduction_using_for. */
static void
emit_row_reduction(CgStr *s, int id, const OpInfo *in)
{
    int last = in->nloops - 1;
    if (in->tile[last] != 0 || in->lanes <= 0) { /* sequential tiles (dynamic extent) */
        emit_tiled(s, id, in);
        return;
    }
    char src[32];
    snprintf(src, sizeof src, "%%o%d", id);
    int nl = emit_tile(s, id, src, in->tile, in->nloops);
    if (in->ext[last] < 0 || in->ext[last] % in->lanes != 0 || in->lanes >= in->ext[last])
        return;
    if (nl)
        snprintf(src, sizeof src, "%%t%d", id);
    cg_str_printf(s,
                  "    %%rf%d, %%rs%d, %%rc%d, %%rl%d = transform.structured."
                  "tile_reduction_using_for %s by tile_sizes = [",
                  id, id, id, id, src);
    for (int d = 0; d < in->nloops; d++)
        cg_str_printf(s, "%s%lld", d ? ", " : "", (long long)(d == last ? in->lanes : 0));
    cg_str_printf(s, "] : (%s) -> (%s, %s, %s, %s)\n", ANY, ANY, ANY, ANY, ANY);
}

static void
emit_op(CgStr *s, int id, const OpInfo *in)
{
    cg_str_printf(s,
                  "    %%o%d = transform.structured.match attributes {cg_id = %d : i64} in %%root"
                  " : (%s) -> %s\n",
                  id, id, ANY, ANY);
    if (in->nloops == 0)
        return;
    switch (in->kind) {
    case OK_TILED: emit_tiled(s, id, in); break;
    case OK_ROW_REDUCTION: emit_row_reduction(s, id, in); break;
    case OK_CONTRACTION: {
        char src[32];
        snprintf(src, sizeof src, "%%o%d", id);
        emit_tile(s, id, src, in->tile, in->nloops);
        break;
    }
    case OK_NONE: break;
    }
}

/* The tail of a function holding a reduction that gathers element by element
 * ("gather_reduction"): MLIR 19's vectorizer starts on such a generic, fails at
 * the scf.if of a guarded load after rewriting part of it, and the whole
 * vectorize_children step fails; so nothing in that function is vectorised (the
 * generics become scalar loops after bufferization: correct, slower). */
static const char script_tail_scalar[] =
    "    %f = transform.structured.match ops{[\"func.func\"]} in %root"
    " : (!transform.any_op) -> !transform.any_op\n"
    "    transform.apply_patterns to %f {\n"
    "      transform.apply_patterns.canonicalization\n"
    "      transform.apply_patterns.linalg.tiling_canonicalization\n"
    "    } : !transform.any_op\n"
    "    transform.apply_cse to %f : !transform.any_op\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

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
 * empty-tensor elimination and bufferization. */
char *
cg_script_bufferize(void)
{
    CgStr s = {0};
    cg_str_printf(&s, "%s",
                  "module attributes {transform.with_named_sequence} {\n"
                  "  transform.named_sequence @__transform_main(%root: !transform.any_op) {\n"
                  "    %f = transform.structured.match ops{[\"func.func\"]} in %root"
                  " : (!transform.any_op) -> !transform.any_op\n"
                  "    transform.bufferization.eliminate_empty_tensors %f : !transform.any_op\n"
                  "    transform.bufferization.one_shot_bufferize %root {allow_return_allocs_from_loops = true,"
                  " memcpy_op = \"linalg.copy\"} : (!transform.any_op) -> !transform.any_op\n"
                  "    transform.yield\n"
                  "  }\n"
                  "}\n");
    return cg_str_take(&s);
}

/* The third script (after cg_split.c has split the loops over masked rows):
 * hoisting of redundant transfers. With 'split_transfers', every vector transfer
 * that may still run past its memref (the masked tails, and reads the loop split
 * does not handle) is split into an in-bounds fast path and a masked slow path
 * behind a bounds test: for targets whose masked vector loads cost more than the
 * test (x86 without AVX-512 mask registers: vmaskmovps); with AVX-512 or RVV masks
 * the split measured slower. */
char *
cg_script_transfers(bool split_transfers)
{
    CgStr s = {0};
    cg_str_printf(&s, "%s",
                  "module attributes {transform.with_named_sequence} {\n"
                  "  transform.named_sequence @__transform_main(%root: !transform.any_op) {\n"
                  "    %bf = transform.structured.match ops{[\"func.func\"]} in %root"
                  " : (!transform.any_op) -> !transform.any_op\n");
    if (split_transfers)
        cg_str_printf(&s, "%s",
                      /* vector.mask { transfer } first becomes a transfer with a mask,
                       * which the split leaves alone (MLIR 19 crashes splitting inside
                       * a vector.mask region) */
                      "    transform.apply_patterns to %bf {\n"
                      "      transform.apply_patterns.vector.lower_masked_transfers\n"
                      "    } : !transform.any_op\n"
                      "    transform.apply_patterns to %bf {\n"
                      "      transform.apply_patterns.vector.split_transfer_full_partial"
                      " split_transfer_strategy = \"vector-transfer\"\n"
                      "    } : !transform.any_op\n");
    cg_str_printf(&s, "%s",
                  "    %bh = transform.structured.hoist_redundant_vector_transfers %bf"
                  " : (!transform.any_op) -> !transform.any_op\n"
                  "    transform.apply_patterns to %bh {\n"
                  "      transform.apply_patterns.canonicalization\n"
                  "    } : !transform.any_op\n"
                  "    transform.apply_cse to %bh : !transform.any_op\n"
                  "    transform.yield\n"
                  "  }\n"
                  "}\n");
    return cg_str_take(&s);
}

char *
cg_script_build(MlirOperation module, CgStr *err)
{
    OpList ops = {0};
    mlirOperationWalk(module, collect_generic, &ops, MlirWalkPreOrder);
    MlirContext ctx = mlirOperationGetContext(module);
    MlirType i64 = mlirIntegerTypeGet(ctx, 64);
    CgStr s = {0};
    cg_str_printf(&s, "module attributes {transform.with_named_sequence} {\n"
                      "  transform.named_sequence @__transform_main(%%root: %s) {\n",
                  ANY);
    bool scalar = false;
    for (size_t i = 0; i < ops.n; i++) {
        OpInfo in;
        if (analyze(ops.v[i], &in, err) < 0) {
            free(ops.v);
            cg_str_fini(&s);
            return NULL;
        }
        mlirOperationSetDiscardableAttributeByName(ops.v[i], cg_sref("cg_id"),
                                                   mlirIntegerAttrGet(i64, (int64_t)i));
        emit_op(&s, (int)i, &in);
        scalar |= in.no_vector;
    }
    if (scalar)
        cg_str_append(&s, script_tail_scalar, sizeof script_tail_scalar - 1);
    else
        cg_str_append(&s, script_tail, sizeof script_tail - 1);
    free(ops.v);
    return cg_str_take(&s);
}
