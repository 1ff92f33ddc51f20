/*
 * cg_split.c — loops over a masked row: full vectors unmasked, the tail masked.
 *
 * A masked load `tl.load(p + cols, mask=cols < n)` read by a whole-tile consumer
 * (a row reduction, an element-wise generic over the padded tile) becomes, after
 * vectorisation and bufferization, a loop
 *     scf.for %i = %lb to %ub step %c {
 *       %v = vector.transfer_read %row[%i], %pad : memref<?xT, ...>, vector<VxT>
 * whose read may run past the row's valid extent dim(%row) — so every iteration
 * gets a mask (AVX-512 / RVV: a mask built from the remaining count and a masked
 * load; x86 without AVX-512: an in-bounds test and a slow path), although only the
 * iterations at the end of the row are partial. Here each such loop is split at
 *     %s = min(%ub, %lb + %c * (max(min_r(dim(%row_r) - V_r) - %lb + %c, 0) / %c))
 * (the first iteration some read of the loop does not fit, or %ub): a copy of the
 * loop over [%lb, %s) whose reads are marked in bounds (plain vector loads), and
 * the original over [%s, %ub), carrying on from the copy's results, for the
 * masked tail. Element values and their order of combination within a lane are
 * unchanged. In the copy, mask compares `off + iota < n` its reads prove true
 * become constants (cg_split_cmp.c). Only loops with a constant positive step and reads of a rank-1 memref
 * defined outside the loop, indexed by the induction variable, are split.
 */
#include "cg_int.h"

#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include <stdlib.h>

/* Whether v is defined outside loop (so it dominates it). */
static int
defined_outside(MlirValue v, MlirOperation loop)
{
    return !cg_op_within(cg_value_owner(v), loop);
}

/* Vector length of a transfer_read of the loop this split handles (1-D, no mask,
 * not known in bounds, identity map, index = the induction variable iv, source
 * defined outside the loop), or 0. */
static int64_t
split_read(MlirOperation r, MlirValue iv, MlirOperation loop)
{
    if (!cg_op_is(r, "vector.transfer_read") || mlirOperationGetNumOperands(r) != 3)
        return 0; /* source, one index, padding: rank 1 and no mask operand */
    MlirValue src = mlirOperationGetOperand(r, 0);
    MlirType st = mlirValueGetType(src), vt = mlirValueGetType(mlirOperationGetResult(r, 0));
    if (!mlirTypeIsAMemRef(st) || mlirShapedTypeGetRank(st) != 1 || !mlirTypeIsAVector(vt) ||
        mlirShapedTypeGetRank(vt) != 1 || mlirShapedTypeIsDynamicDim(vt, 0))
        return 0;
    if (!mlirValueEqual(mlirOperationGetOperand(r, 1), iv) || !defined_outside(src, loop))
        return 0;
    MlirAttribute ib = mlirOperationGetAttributeByName(r, cg_sref("in_bounds"));
    if (!mlirAttributeIsNull(ib) &&
        (!mlirAttributeIsAArray(ib) || mlirArrayAttrGetNumElements(ib) != 1 ||
         mlirBoolAttrGetValue(mlirArrayAttrGetElement(ib, 0))))
        return 0;
    MlirAttribute pm = mlirOperationGetAttributeByName(r, cg_sref("permutation_map"));
    if (mlirAttributeIsNull(pm) || !mlirAttributeIsAAffineMap(pm) ||
        !mlirAffineMapIsIdentity(mlirAffineMapAttrGetValue(pm)))
        return 0;
    return mlirShapedTypeGetDimSize(vt, 0);
}

typedef struct Builder {
    MlirContext ctx;
    MlirLocation loc;
    MlirBlock blk;
    MlirOperation before;
    MlirType index;
} Builder;

static MlirValue
emit(Builder *b, const char *name, intptr_t n, const MlirValue *ops, MlirAttribute value)
{
    MlirOperationState st = mlirOperationStateGet(cg_sref(name), b->loc);
    mlirOperationStateAddOperands(&st, n, ops);
    mlirOperationStateAddResults(&st, 1, &b->index);
    if (!mlirAttributeIsNull(value)) {
        MlirNamedAttribute na = mlirNamedAttributeGet(mlirIdentifierGet(b->ctx, cg_sref("value")), value);
        mlirOperationStateAddAttributes(&st, 1, &na);
    }
    MlirOperation op = mlirOperationCreate(&st);
    mlirBlockInsertOwnedOperationBefore(b->blk, b->before, op);
    return mlirOperationGetResult(op, 0);
}

static MlirValue
cst(Builder *b, int64_t v)
{
    return emit(b, "arith.constant", 0, NULL, mlirIntegerAttrGet(b->index, v));
}

static MlirValue
bin(Builder *b, const char *name, MlirValue x, MlirValue y)
{
    MlirValue ops[2] = {x, y};
    return emit(b, name, 2, ops, mlirAttributeGetNull());
}

/* Splits loop as the header describes; returns whether it did. */
static int
split(MlirOperation loop)
{
    if (mlirOperationGetNumRegions(loop) != 1 ||
        !mlirAttributeIsNull(mlirOperationGetAttributeByName(loop, cg_sref("tritium.parallel"))))
        return 0;
    MlirValue lb = mlirOperationGetOperand(loop, 0), ub = mlirOperationGetOperand(loop, 1),
              step = mlirOperationGetOperand(loop, 2);
    int64_t c;
    if (!cg_const_int(step, &c) || c <= 0 || !mlirTypeIsAIndex(mlirValueGetType(lb)))
        return 0;
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
    MlirValue iv = mlirBlockGetArgument(body, 0);
    MlirContext ctx = mlirOperationGetContext(loop);
    Builder b = {.ctx = ctx, .loc = mlirOperationGetLocation(loop), .blk = mlirOperationGetBlock(loop),
                 .before = loop, .index = mlirIndexTypeGet(ctx)};
    MlirValue room = {NULL}; /* min over the reads of dim(row) - V */
    int nreads = 0;
    for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op)) {
        int64_t v = split_read(op, iv, loop);
        if (!v)
            continue;
        MlirValue dops[2] = {mlirOperationGetOperand(op, 0), cst(&b, 0)};
        MlirValue r = bin(&b, "arith.subi", emit(&b, "memref.dim", 2, dops, mlirAttributeGetNull()), cst(&b, v));
        room = nreads++ ? bin(&b, "arith.minsi", room, r) : r;
    }
    if (!nreads)
        return 0;
    MlirValue cs = cst(&b, c);
    MlirValue k = bin(&b, "arith.divui",
                      bin(&b, "arith.maxsi", bin(&b, "arith.addi", bin(&b, "arith.subi", room, lb), cs), cst(&b, 0)),
                      cs);
    MlirValue s = bin(&b, "arith.minsi", bin(&b, "arith.addi", lb, bin(&b, "arith.muli", k, cs)), ub);

    MlirOperation full = mlirOperationClone(loop);
    mlirBlockInsertOwnedOperationBefore(b.blk, loop, full);
    mlirOperationSetOperand(full, 1, s);
    mlirOperationSetOperand(loop, 0, s);
    for (intptr_t i = 0; i < mlirOperationGetNumResults(full); i++)
        mlirOperationSetOperand(loop, 3 + i, mlirOperationGetResult(full, i));
    /* the clone's reads at the same places are the in-bounds ones */
    MlirBlock fbody = mlirRegionGetFirstBlock(mlirOperationGetRegion(full, 0));
    MlirValue fiv = mlirBlockGetArgument(fbody, 0);
    MlirAttribute yes = mlirBoolAttrGet(ctx, 1);
    MlirAttribute inb = mlirArrayAttrGet(ctx, 1, &yes);
    MlirValue *rows = malloc(nreads * sizeof *rows);
    int64_t *widths = malloc(nreads * sizeof *widths);
    if (!rows || !widths)
        abort();
    int nr = 0;
    for (MlirOperation op = mlirBlockGetFirstOperation(fbody); !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op)) {
        int64_t v = split_read(op, fiv, full);
        if (!v || nr == nreads)
            continue;
        mlirOperationSetAttributeByName(op, cg_sref("in_bounds"), inb);
        rows[nr] = mlirOperationGetOperand(op, 0);
        widths[nr++] = v;
    }
    cg_split_fold_compares(full, rows, widths, nr); /* cg_split_cmp.c */
    free(rows);
    free(widths);
    return 1;
}

int
cg_split_masked_loops(MlirModule mod)
{
    CgOpVec v = {0};
    cg_ops_named(mlirModuleGetOperation(mod), "scf.for", MlirWalkPostOrder, &v); /* inner loops first */
    int n = 0;
    for (size_t i = 0; i < v.n; i++)
        n += split(v.v[i]);
    free(v.v);
    return n;
}
