/*
 * cg_split_cmp.c — the mask compares a split loop's full-vector copy makes true.
 *
 * The unmasked copy cg_split makes of a loop over a masked row runs only the
 * iterations iv whose reads fit the row: iv + V <= dim(row) for every read it
 * marked in bounds. A kernel that also tests the mask in its arithmetic, as layer
 * norm's `tl.where(cols < N, x - mean, 0.)`, still evaluates per vector
 *     %c = arith.cmpi slt, (broadcast(%off) + read(iota)[iv]), broadcast(%n)
 * and selects with it, though on those iterations every lane is below the bound.
 * Here such a compare in the copy is replaced by a constant true vector when a
 * read of the copy proves it: the row's extent D is, up to sign-preserving widening
 * casts, `%n - %off` or a minsi/maxsi(.., c <= 0) of it (the extent the lowering
 * gives a masked load of `off + arange < n`), the read is at least as wide as the
 * compare, the iota is a constant global holding 0, 1, 2, ... read at iv, and the
 * copy starts at a constant lb >= 0. Then on every iteration of the copy, lane k
 * holds off + iv + k <= off + D - 1 <= n - 1 (no i32 wrap: the value lies between
 * off and n - 1), so the compare is true; with D = max(x, c <= 0) an iteration
 * runs only when D >= V > 0, i.e. D = x. The select then folds to its true
 * operand; the masked tail loop is untouched and keeps the compare, so the
 * where's other value, whatever it is, and NaN/inf beyond the bound still meet
 * the select there. Nothing else is changed: a compare that is not proven stays.
 */
#include "cg_int.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include <stdlib.h>
#include <string.h>

/* arith.cmpi predicates (mlir::arith::CmpIPredicate). */
enum { PRED_SLT = 2, PRED_SGT = 4 };

static MlirOperation
def_op(MlirValue v)
{
    return mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v) : (MlirOperation){NULL};
}

/* Bit width of an integer or index type, 0 otherwise. */
static unsigned
int_width(MlirType t)
{
    if (mlirTypeIsAIndex(t))
        return 64;
    return mlirTypeIsAInteger(t) ? mlirIntegerTypeGetWidth(t) : 0;
}

/* v with sign-preserving widening casts (arith.extsi, arith.index_cast from a
 * narrower integer) stripped: the same signed value. */
static MlirValue
root(MlirValue v)
{
    for (;;) {
        MlirOperation d = def_op(v);
        if (mlirOperationIsNull(d) || (!cg_op_is(d, "arith.extsi") && !cg_op_is(d, "arith.index_cast")))
            return v;
        MlirValue in = mlirOperationGetOperand(d, 0);
        unsigned wi = int_width(mlirValueGetType(in)), wo = int_width(mlirValueGetType(v));
        if (!wi || !wo || (wi >= wo && !(wi == 64 && wo == 64))) /* i64 <-> index is exact */
            return v;
        v = in;
    }
}

static int
same(MlirValue a, MlirValue b)
{
    return mlirValueEqual(root(a), root(b));
}

/* Whether D <= n - off for every value D can take on an iteration of the copy
 * (off may be null: D <= n). */
static int
bounded(MlirValue d, MlirValue n, MlirValue off, int depth)
{
    if (depth > 8)
        return 0;
    if (mlirValueIsNull(off) && same(d, n))
        return 1;
    MlirOperation op = def_op(d);
    if (mlirOperationIsNull(op) || mlirOperationGetNumOperands(op) != 2)
        return 0;
    MlirValue x = mlirOperationGetOperand(op, 0), y = mlirOperationGetOperand(op, 1);
    int64_t c;
    if (cg_op_is(op, "arith.subi"))
        return !mlirValueIsNull(off) && same(x, n) && same(y, off);
    if (cg_op_is(op, "arith.minsi"))
        return bounded(x, n, off, depth + 1) || bounded(y, n, off, depth + 1);
    if (cg_op_is(op, "arith.maxsi")) /* an iteration runs only when D > 0 >= c: D = the other */
        return (cg_const_int(y, &c) && c <= 0 && bounded(x, n, off, depth + 1)) ||
               (cg_const_int(x, &c) && c <= 0 && bounded(y, n, off, depth + 1));
    return 0;
}

/* The dynamic extent of rank-1 memref m when it is a memref.reinterpret_cast /
 * memref.subview with one size operand; null otherwise. */
static MlirValue
dyn_extent(MlirValue m)
{
    MlirOperation d = def_op(m);
    if (mlirOperationIsNull(d))
        return (MlirValue){NULL};
    MlirType t = mlirValueGetType(m);
    if (!mlirTypeIsAMemRef(t) || mlirShapedTypeGetRank(t) != 1 || !mlirShapedTypeIsDynamicDim(t, 0))
        return (MlirValue){NULL};
    /* reinterpret_cast: source, offsets..., sizes..., strides...; with one dynamic
     * offset, size and static stride (as the lowering emits) the size is operand 2 */
    if (cg_op_is(d, "memref.reinterpret_cast")) {
        MlirAttribute so = mlirOperationGetAttributeByName(d, cg_sref("static_offsets"));
        MlirAttribute ss = mlirOperationGetAttributeByName(d, cg_sref("static_sizes"));
        MlirAttribute st = mlirOperationGetAttributeByName(d, cg_sref("static_strides"));
        if (mlirAttributeIsNull(so) || mlirAttributeIsNull(ss) || mlirAttributeIsNull(st) ||
            mlirDenseArrayGetNumElements(ss) != 1 ||
            mlirDenseI64ArrayGetElement(ss, 0) != mlirShapedTypeGetDynamicSize())
            return (MlirValue){NULL};
        intptr_t noff = mlirDenseI64ArrayGetElement(so, 0) == mlirShapedTypeGetDynamicSize();
        intptr_t k = 1 + noff;
        return k < mlirOperationGetNumOperands(d) ? mlirOperationGetOperand(d, k) : (MlirValue){NULL};
    }
    return (MlirValue){NULL};
}

/* Whether the module's memref.global named by get_global g holds 0, 1, 2, ... */
static int
iota_global(MlirOperation g, MlirOperation module)
{
    MlirAttribute name = mlirOperationGetAttributeByName(g, cg_sref("name"));
    if (mlirAttributeIsNull(name) || !mlirAttributeIsAFlatSymbolRef(name))
        return 0;
    MlirStringRef want = mlirFlatSymbolRefAttrGetValue(name);
    CgOpVec v = {0};
    cg_ops_named(module, "memref.global", MlirWalkPreOrder, &v);
    int ok = 0;
    for (size_t i = 0; i < v.n && !ok; i++) {
        MlirAttribute sym = mlirOperationGetAttributeByName(v.v[i], cg_sref("sym_name"));
        if (mlirAttributeIsNull(sym) || !mlirAttributeIsAString(sym))
            continue;
        MlirStringRef s = mlirStringAttrGetValue(sym);
        if (s.length != want.length || memcmp(s.data, want.data, s.length))
            continue;
        MlirAttribute init = mlirOperationGetAttributeByName(v.v[i], cg_sref("initial_value"));
        if (mlirAttributeIsNull(mlirOperationGetAttributeByName(v.v[i], cg_sref("constant"))) ||
            mlirAttributeIsNull(init) || !mlirAttributeIsADenseElements(init) || mlirDenseElementsAttrIsSplat(init))
            break;
        unsigned w = int_width(mlirShapedTypeGetElementType(mlirAttributeGetType(init)));
        if (w != 32 && w != 64)
            break;
        int64_t n = mlirElementsAttrGetNumElements(init);
        ok = 1;
        for (int64_t j = 0; j < n && ok; j++)
            ok = (w == 32 ? mlirDenseElementsAttrGetInt32Value(init, j)
                          : mlirDenseElementsAttrGetInt64Value(init, j)) == j;
    }
    free(v.v);
    return ok;
}

/* Whether v is vector.transfer_read %G[iv] {in_bounds = [true]} of an iota global. */
static int
iota_read(MlirValue v, MlirValue iv, MlirOperation module)
{
    MlirOperation r = def_op(v);
    if (mlirOperationIsNull(r) || !cg_op_is(r, "vector.transfer_read") || mlirOperationGetNumOperands(r) != 3 ||
        !mlirValueEqual(mlirOperationGetOperand(r, 1), iv))
        return 0;
    MlirAttribute ib = mlirOperationGetAttributeByName(r, cg_sref("in_bounds"));
    if (mlirAttributeIsNull(ib) || !mlirAttributeIsAArray(ib) || mlirArrayAttrGetNumElements(ib) != 1 ||
        !mlirBoolAttrGetValue(mlirArrayAttrGetElement(ib, 0)))
        return 0;
    MlirOperation g = def_op(mlirOperationGetOperand(r, 0));
    return !mlirOperationIsNull(g) && cg_op_is(g, "memref.get_global") && iota_global(g, module);
}

/* The scalar s of v = vector.broadcast s, s defined outside loop; null otherwise. */
static MlirValue
bcast_scalar(MlirValue v, MlirOperation loop)
{
    MlirOperation d = def_op(v);
    if (mlirOperationIsNull(d) || !cg_op_is(d, "vector.broadcast"))
        return (MlirValue){NULL};
    MlirValue s = mlirOperationGetOperand(d, 0);
    if (!int_width(mlirValueGetType(s)) || cg_op_within(cg_value_owner(s), loop))
        return (MlirValue){NULL};
    return s;
}

int
cg_split_fold_compares(MlirOperation copy, const MlirValue *rows, const int64_t *widths, int nrows)
{
    int64_t lb;
    if (!cg_const_int(mlirOperationGetOperand(copy, 0), &lb) || lb < 0)
        return 0;
    MlirOperation module = copy;
    for (MlirOperation p = mlirOperationGetParentOperation(copy); !mlirOperationIsNull(p);
         p = mlirOperationGetParentOperation(p))
        module = p;
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(copy, 0));
    MlirValue iv = mlirBlockGetArgument(body, 0);
    int folded = 0;
    for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op)) {
        if (!cg_op_is(op, "arith.cmpi"))
            continue;
        MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
        if (!mlirTypeIsAVector(rt) || mlirShapedTypeGetRank(rt) != 1)
            continue;
        int64_t pred = mlirIntegerAttrGetValueInt(mlirOperationGetAttributeByName(op, cg_sref("predicate")));
        if (pred != PRED_SLT && pred != PRED_SGT)
            continue;
        MlirValue a = mlirOperationGetOperand(op, pred == PRED_SLT ? 0 : 1); /* a < b */
        MlirValue n = bcast_scalar(mlirOperationGetOperand(op, pred == PRED_SLT ? 1 : 0), copy);
        if (mlirValueIsNull(n) || int_width(mlirValueGetType(root(n))) > 32)
            continue; /* n, off of at most 32 bits: D = n - off is exact in index */
        MlirValue off = {NULL};
        if (!iota_read(a, iv, module)) {
            MlirOperation add = def_op(a);
            if (mlirOperationIsNull(add) || !cg_op_is(add, "arith.addi"))
                continue;
            MlirValue x = mlirOperationGetOperand(add, 0), y = mlirOperationGetOperand(add, 1);
            if (iota_read(y, iv, module))
                off = bcast_scalar(x, copy);
            else if (iota_read(x, iv, module))
                off = bcast_scalar(y, copy);
            if (mlirValueIsNull(off) || int_width(mlirValueGetType(root(off))) > 32)
                continue;
        }
        int64_t w = mlirShapedTypeGetDimSize(rt, 0);
        int ok = 0;
        for (int i = 0; i < nrows && !ok; i++) {
            MlirValue d = dyn_extent(rows[i]);
            ok = widths[i] >= w && !mlirValueIsNull(d) && bounded(d, n, off, 0);
        }
        if (!ok)
            continue;
        MlirOperationState st = mlirOperationStateGet(cg_sref("arith.constant"), mlirOperationGetLocation(op));
        MlirNamedAttribute na = mlirNamedAttributeGet(mlirIdentifierGet(mlirOperationGetContext(op), cg_sref("value")),
                                                      mlirDenseElementsAttrBoolSplatGet(rt, 1));
        mlirOperationStateAddAttributes(&st, 1, &na);
        mlirOperationStateAddResults(&st, 1, &rt);
        MlirOperation t = mlirOperationCreate(&st);
        mlirBlockInsertOwnedOperationBefore(body, op, t);
        mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), mlirOperationGetResult(t, 0));
        folded++;
    }
    return folded;
}
