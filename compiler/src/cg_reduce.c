/*
 * cg_reduce.c — the horizontal step of max/min row reductions as one vector op.
 *
 * tile_reduction_using_for (cg_script.c) leaves a row reduction as a loop that
 * carries a vector accumulator, then a `linalg.reduce` of that accumulator
 * (written to a tensor by `vector.transfer_write`) into the reduction's init.
 * MLIR 19's linalg vectoriser knows no combiner kind for arith.maxnumf and
 * minnumf, so for tl.max / tl.min that last reduce stayed scalar: one maxnum
 * per lane (64 on AVX-512, with NaN fix-ups), every row. Here, after the
 * transform script, each such reduce becomes
 *     %a = tensor.extract %init[]
 *     %r = vector.reduction <maxnumf>, %acc, %a
 *     %t = tensor.insert %r into %init[]
 * where %acc is first halved to one lane (`vector.extract_strided_slice` of both
 * halves and their arith.maxnumf / minnumf, log2 of the lanes steps): LLVM
 * expands vector.reduce.fmax without no-NaN flags into a tree only down to one
 * register, then 16 dependent scalar steps on AVX-512.
 */
#include "cg_int.h"

#include <mlir-c/BuiltinTypes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The combining kind of a one-op reduce body this pass handles, or NULL. */
static const char *
minmax_kind(MlirOperation red)
{
    MlirRegion r = mlirOperationGetRegion(red, 0);
    MlirBlock b = mlirRegionGetFirstBlock(r);
    if (mlirBlockIsNull(b))
        return NULL;
    MlirOperation c = mlirBlockGetFirstOperation(b);
    if (mlirOperationIsNull(c))
        return NULL;
    MlirOperation y = mlirOperationGetNextInBlock(c);
    if (mlirOperationIsNull(y) || !cg_op_is(y, "linalg.yield") ||
        !mlirOperationIsNull(mlirOperationGetNextInBlock(y)))
        return NULL;
    if (mlirOperationGetNumOperands(c) != 2 || mlirOperationGetNumResults(c) != 1 ||
        !mlirValueEqual(mlirOperationGetOperand(y, 0), mlirOperationGetResult(c, 0)))
        return NULL;
    for (int i = 0; i < 2; i++) /* both operands are the block's arguments */
        if (!mlirValueIsABlockArgument(mlirOperationGetOperand(c, i)))
            return NULL;
    if (cg_op_is(c, "arith.maxnumf"))
        return "maxnumf";
    if (cg_op_is(c, "arith.minnumf"))
        return "minnumf";
    return NULL;
}

static MlirOperation
create(const char *name, MlirLocation loc, intptr_t nops, const MlirValue *ops, MlirType res,
       intptr_t nattrs, const MlirNamedAttribute *attrs)
{
    MlirOperationState st = mlirOperationStateGet(cg_sref(name), loc);
    mlirOperationStateAddOperands(&st, nops, ops);
    mlirOperationStateAddResults(&st, 1, &res);
    if (nattrs)
        mlirOperationStateAddAttributes(&st, nattrs, attrs);
    return mlirOperationCreate(&st);
}

static void
rewrite(MlirOperation red, const char *kind)
{
    if (mlirOperationGetNumOperands(red) != 2 || mlirOperationGetNumResults(red) != 1)
        return;
    MlirValue in = mlirOperationGetOperand(red, 0), init = mlirOperationGetOperand(red, 1);
    if (!mlirValueIsAOpResult(in))
        return;
    MlirOperation tw = mlirOpResultGetOwner(in);
    if (!cg_op_is(tw, "vector.transfer_write") || mlirOperationGetNumOperands(tw) != 3)
        return;
    MlirValue vec = mlirOperationGetOperand(tw, 0);
    MlirType vt = mlirValueGetType(vec), it = mlirValueGetType(in), ct = mlirValueGetType(init);
    /* the whole 1-D tensor is the vector, reduced into a rank-0 init */
    if (!mlirTypeIsAVector(vt) || mlirShapedTypeGetRank(vt) != 1 || !mlirTypeIsARankedTensor(it) ||
        mlirShapedTypeGetRank(it) != 1 || !mlirShapedTypeHasStaticShape(it) ||
        mlirShapedTypeGetDimSize(it, 0) != mlirShapedTypeGetDimSize(vt, 0) || !mlirTypeIsARankedTensor(ct) ||
        mlirShapedTypeGetRank(ct) != 0)
        return;
    MlirContext ctx = mlirOperationGetContext(red);
    MlirLocation loc = mlirOperationGetLocation(red);
    MlirBlock blk = mlirOperationGetBlock(red);
    MlirType et = mlirShapedTypeGetElementType(ct);
    MlirOperation ex = create("tensor.extract", loc, 1, &init, et, 0, NULL);
    mlirBlockInsertOwnedOperationBefore(blk, red, ex);
    char k[48];
    snprintf(k, sizeof k, "#vector.kind<%s>", kind);
    MlirNamedAttribute ka = mlirNamedAttributeGet(mlirIdentifierGet(ctx, cg_sref("kind")),
                                                  mlirAttributeParseGet(ctx, cg_sref(k)));
    for (int64_t n = mlirShapedTypeGetDimSize(vt, 0); n > 1 && n % 2 == 0; n /= 2) {
        int64_t h = n / 2;
        MlirType ht = mlirVectorTypeGet(1, &h, et);
        MlirValue half[2];
        for (int i = 0; i < 2; i++) {
            char a[64];
            MlirNamedAttribute at[3];
            snprintf(a, sizeof a, "[%lld : i64]", (long long)(i * h));
            at[0] = mlirNamedAttributeGet(mlirIdentifierGet(ctx, cg_sref("offsets")), mlirAttributeParseGet(ctx, cg_sref(a)));
            snprintf(a, sizeof a, "[%lld : i64]", (long long)h);
            at[1] = mlirNamedAttributeGet(mlirIdentifierGet(ctx, cg_sref("sizes")), mlirAttributeParseGet(ctx, cg_sref(a)));
            at[2] = mlirNamedAttributeGet(mlirIdentifierGet(ctx, cg_sref("strides")),
                                          mlirAttributeParseGet(ctx, cg_sref("[1 : i64]")));
            MlirOperation sl = create("vector.extract_strided_slice", loc, 1, &vec, ht, 3, at);
            mlirBlockInsertOwnedOperationBefore(blk, red, sl);
            half[i] = mlirOperationGetResult(sl, 0);
        }
        MlirOperation m = create(strcmp(kind, "maxnumf") ? "arith.minnumf" : "arith.maxnumf", loc, 2, half, ht, 0,
                                 NULL);
        mlirBlockInsertOwnedOperationBefore(blk, red, m);
        vec = mlirOperationGetResult(m, 0);
    }
    MlirValue rops[2] = {vec, mlirOperationGetResult(ex, 0)};
    MlirOperation vr = create("vector.reduction", loc, 2, rops, et, 1, &ka);
    mlirBlockInsertOwnedOperationBefore(blk, red, vr);
    MlirValue iops[2] = {mlirOperationGetResult(vr, 0), init};
    MlirOperation ins = create("tensor.insert", loc, 2, iops, ct, 0, NULL);
    mlirBlockInsertOwnedOperationBefore(blk, red, ins);
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(red, 0), mlirOperationGetResult(ins, 0));
    mlirOperationRemoveFromParent(red);
    mlirOperationDestroy(red);
    if (mlirOpOperandIsNull(mlirValueGetFirstUse(in))) { /* the accumulator's tensor copy */
        MlirValue dst = mlirOperationGetOperand(tw, 1);
        mlirOperationRemoveFromParent(tw);
        mlirOperationDestroy(tw);
        if (mlirValueIsAOpResult(dst) && mlirOpOperandIsNull(mlirValueGetFirstUse(dst))) {
            MlirOperation e = mlirOpResultGetOwner(dst);
            if (cg_op_is(e, "tensor.empty")) {
                mlirOperationRemoveFromParent(e);
                mlirOperationDestroy(e);
            }
        }
    }
}

void
cg_reduce_minmax_merges(MlirModule mod)
{
    CgOpVec v = {0};
    cg_ops_named(mlirModuleGetOperation(mod), "linalg.reduce", MlirWalkPreOrder, &v);
    for (size_t i = 0; i < v.n; i++) {
        const char *kind = minmax_kind(v.v[i]);
        if (kind)
            rewrite(v.v[i], kind);
    }
    free(v.v);
}
