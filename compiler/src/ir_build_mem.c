/*
 * ir_build_mem.c — the builder's memory and compute operations: addptr, load,
 * store, block pointers, atomics, dot, reductions and scans.
 *
 * Follows triton/language/semantic.py (load/_load_legacy/_load_block_pointer,
 * store, make_block_ptr, advance, dot, reduction, associative_scan) and
 * standard.py's reduction dtype rules (with spine-triton's fp16 max/min).
 */
#include "ir_build_int.h"

#include <string.h>

static IrType scalar(IrBuilder *b, int d) { return ir_type_scalar(b->m, (IrDtype)d); }
static bool isf(int d) { return d >= 0 && ir_dtype_is_float((IrDtype)d); }
static bool isi(int d) { return d >= 0 && ir_dtype_is_int((IrDtype)d); }
static bool is8(int d) { return d >= 0 && ir_dtype_is_fp8((IrDtype)d); }

/* Pointee of a scalar pointer or tensor-of-pointers value; 0 otherwise. */
static IrType
pointee(IrBuilder *b, IrRef p)
{
    return ir_type_pointee(b->m, btype(b, p));
}

static bool
is_block_ptr(IrBuilder *b, IrRef p)
{
    if (bis_tensor(b, p) || !bis_ptr(b, p))
        return false;
    return ir_type_is_tensor(b->m, pointee(b, p));
}

IrRef
ir_b_addptr(IrBuilder *b, IrOperand ptr, IrOperand offset)
{
    return ir_b_binop(b, IR_B_ADD, ptr, offset);
}

/* Treat pointer<int1> as pointer<int8> (bools are stored one byte each). */
static IrRef
bool_ptr_to_i8(IrBuilder *b, IrRef p)
{
    IrType pt = ir_type_ptr(b->m, scalar(b, IR_I8), 0);
    return bcast(b, p, pt, 0);
}

static int
canon_boundary_check(IrBuilder *b, int nbc, const int64_t *bc, int rank, int64_t *out)
{
    for (int i = 0; i < nbc; i++) {
        if (bc[i] < 0 || bc[i] >= rank) {
            bfail(b, "boundary_check dimension %lld out of range for a rank-%d block", (long long)bc[i], rank);
            return -1;
        }
        out[i] = bc[i];
    }
    /* sort, dedupe */
    for (int i = 0; i < nbc; i++)
        for (int j = i + 1; j < nbc; j++)
            if (out[j] < out[i]) {
                int64_t t = out[i];
                out[i] = out[j];
                out[j] = t;
            }
    int n = 0;
    for (int i = 0; i < nbc; i++)
        if (!n || out[n - 1] != out[i])
            out[n++] = out[i];
    return n;
}

IrRef
ir_b_load(IrBuilder *b, IrRef ptr, IrRef mask, IrOperand other, int nbc, const int64_t *boundary_check,
          IrPadding padding, int cache, int evict, bool is_volatile)
{
    bool has_other = !(other.kind == IR_OPND_VALUE && other.ref == IR_NONE);
    if (!ptr)
        return bfail(b, "missing pointer");
    if (is_block_ptr(b, ptr)) {
        if (mask || has_other)
            return bfail(b, "`mask` and `other` arguments cannot be specified for loading block pointers");
        IrType bt = pointee(b, ptr);
        int ed = ir_type_dtype(b->m, bt);
        if (isi(ed) && padding == IR_PAD_NAN)
            return bfail(b, "Padding option `nan` is not supported for integer block pointers");
        int64_t bc[IR_MAX_RANK];
        int n = canon_boundary_check(b, nbc, boundary_check, ir_type_rank(b->m, bt), bc);
        if (n < 0)
            return IR_NONE;
        IrOp *op = bemit_op(b, IR_LOAD, &ptr, 1, bt);
        op->i[0] = padding;
        op->i[1] = cache;
        op->i[2] = evict;
        op->i[3] = is_volatile;
        ir_op_set_ints(b->fn, op, bc, (uint32_t)n);
        return op->res[0];
    }
    if (!bis_ptr(b, ptr)) {
        char t[256];
        return bfail(b, "Unsupported ptr type %s in `tl.load`", btype_name(b, btype(b, ptr), t, sizeof t));
    }
    if (!mask && has_other)
        return bfail(b, "`other` cannot be provided without `mask`");
    if (padding != IR_PAD_NONE || nbc)
        return bfail(b, "`padding_option` or `boundary_check` argument is not supported for loading a tensor of"
                        "pointers or loading a scalar. Because the compiler does not know the boundary; please "
                        "use block pointers (defined by `make_block_ptr`) instead");
    IrRef oth = IR_NONE;
    if (has_other && !(oth = bvalue(b, other, -1)))
        return IR_NONE;
    if (!bis_tensor(b, ptr)) {
        if (mask && bis_tensor(b, mask))
            return bfail(b, "Mask argument cannot be block type if pointer argument is not a block");
        if (oth && bis_tensor(b, oth))
            return bfail(b, "Other argument cannot be block type if pointer argument is not a block");
    } else {
        if (mask && bbroadcast_pair(b, &ptr, &mask) < 0)
            return IR_NONE;
        if (oth && bbroadcast_pair(b, &ptr, &oth) < 0)
            return IR_NONE;
    }
    if (mask && bdtype(b, mask) != IR_I1)
        return bfail(b, "Mask must have boolean scalar type");
    IrType elt = pointee(b, ptr);
    bool is_bool = ir_type_dtype(b->m, elt) == IR_I1;
    if (is_bool) {
        ptr = bool_ptr_to_i8(b, ptr);
        elt = scalar(b, IR_I8);
    }
    if (oth && !(oth = bcast(b, oth, elt, 0)))
        return IR_NONE;
    IrRef args[3] = {ptr, mask, oth};
    IrOp *op = bemit_op(b, IR_LOAD, args, oth ? 3 : mask ? 2 : 1, bwith_elem(b, ptr, elt));
    op->i[0] = IR_PAD_NONE;
    op->i[1] = cache;
    op->i[2] = evict;
    op->i[3] = is_volatile;
    IrRef r = op->res[0];
    return is_bool ? bcast(b, r, scalar(b, IR_I1), 0) : r;
}

int
ir_b_store(IrBuilder *b, IrRef ptr, IrOperand value, IrRef mask, int nbc, const int64_t *boundary_check,
           int cache, int evict)
{
    IrRef val = bvalue(b, value, -1);
    if (!ptr || !val)
        return -1;
    char t1[256], t2[256];
    if (is_block_ptr(b, ptr)) {
        if (mask)
            return (int)bfail(b, "`mask` and `other` arguments cannot be specified for loading block pointers") - 1;
        IrType bt = pointee(b, ptr);
        int rank = ir_type_rank(b->m, bt);
        const int64_t *bs = ir_type_shape(b->m, bt);
        if (!bis_tensor(b, val))
            val = bsplat(b, val, rank, bs);
        if (brank(b, val) != rank || memcmp(bshape(b, val), bs, sizeof(int64_t) * rank))
            return (int)bfail(b, "Block shape(%s) and value shape(%s) mismatch",
                              btype_name(b, bt, t1, sizeof t1), btype_name(b, btype(b, val), t2, sizeof t2)) - 1;
        if (belem(b, val) != ir_type_elem(b->m, bt))
            return (int)bfail(b, "Block element type(%s) and value element type(%s) mismatch",
                              btype_name(b, ir_type_elem(b->m, bt), t1, sizeof t1),
                              btype_name(b, belem(b, val), t2, sizeof t2)) - 1;
        int64_t bc[IR_MAX_RANK];
        int n = canon_boundary_check(b, nbc, boundary_check, rank, bc);
        if (n < 0)
            return -1;
        IrRef args[2] = {ptr, val};
        IrOp *op = bemit_op(b, IR_STORE, args, 2, 0);
        op->i[1] = cache;
        op->i[2] = evict;
        ir_op_set_ints(b->fn, op, bc, (uint32_t)n);
        return 0;
    }
    if (!bis_ptr(b, ptr))
        return (int)bfail(b, "Unsupported ptr type %s in `tl.store`", btype_name(b, btype(b, ptr), t1, sizeof t1)) - 1;
    if (nbc)
        return (int)bfail(b, "`boundary_check` argument is not supported for storing a tensor of pointers or storing a "
                             "scalar. Because the compiler does not know the boundary; please use block pointers "
                             "(defined by `make_block_ptr`) instead") - 1;
    if (!bis_tensor(b, ptr)) {
        if (bis_tensor(b, val))
            return (int)bfail(b, "Value argument cannot be block type if pointer argument is not a block") - 1;
        if (mask && bis_tensor(b, mask))
            return (int)bfail(b, "Mask argument cannot be block type if pointer argument is not a block") - 1;
    } else {
        val = bbroadcast_shape(b, val, brank(b, ptr), bshape(b, ptr));
        if (mask)
            mask = bbroadcast_shape(b, mask, brank(b, ptr), bshape(b, ptr));
        if (!val || (mask == IR_NONE && 0))
            return -1;
    }
    IrType elt = pointee(b, ptr);
    if (ir_type_dtype(b->m, elt) == IR_I1) {
        ptr = bool_ptr_to_i8(b, ptr);
        elt = scalar(b, IR_I8);
    }
    if (!(val = bcast(b, val, elt, 0)))
        return -1;
    if (mask && bdtype(b, mask) != IR_I1)
        return (int)bfail(b, "Mask must have boolean scalar type") - 1;
    IrRef args[3] = {ptr, val, mask};
    IrOp *op = bemit_op(b, IR_STORE, args, mask ? 3 : 2, 0);
    op->i[1] = cache;
    op->i[2] = evict;
    return 0;
}

/* _convert_elem_to_ir_value: shape/strides are int64, offsets int32. */
static IrRef
bp_value(IrBuilder *b, IrOperand o, bool i64, const char *what)
{
    if (o.kind == IR_OPND_INT || o.kind == IR_OPND_BOOL) {
        if (!i64 && (o.is_u64 || o.i < INT32_MIN || o.i > INT32_MAX))
            return bfail(b, "Block pointers only support 32 bit `offsets/block_shape`, got a value %lld which is out of the range",
                         (long long)o.i);
        return bvalue(b, o, o.kind == IR_OPND_BOOL ? IR_I1 : i64 ? IR_I64 : IR_I32);
    }
    if (o.kind != IR_OPND_VALUE || !o.ref)
        return bfail(b, "Expected an integer in %s", what);
    IrRef v = o.ref;
    if (bis_tensor(b, v))
        return bfail(b, "Expected a scalar in shape/strides/offsets");
    int d = bdtype(b, v);
    if (!isi(d))
        return bfail(b, "Expected an integer scalar type in shape/strides/offsets");
    if (i64 && d != IR_I64)
        return bcast(b, v, scalar(b, IR_I64), 0);
    if (!i64 && d != IR_I32)
        return bfail(b, "Block pointers only support 32 bit `offsets/block_shape`, add a `.to(tl.int32)` or use regular indexing for 64 bit support");
    return v;
}

IrRef
ir_b_make_block_ptr(IrBuilder *b, IrOperand base, int rank, const IrOperand *shape, const IrOperand *strides,
                    const IrOperand *offsets, const int64_t *block_shape, const int64_t *order)
{
    IrRef bp = bvalue(b, base, -1);
    if (!bp)
        return IR_NONE;
    if (bis_tensor(b, bp) || !bis_ptr(b, bp) || is_block_ptr(b, bp))
        return bfail(b, "Expected `base` to be a pointer type (but not a block pointer type or others)");
    if (rank < 1 || rank > IR_MAX_RANK)
        return bfail(b, "make_block_ptr: unsupported rank %d", rank);
    bool seen[IR_MAX_RANK] = {0};
    for (int i = 0; i < rank; i++) {
        if (order[i] < 0 || order[i] >= rank || seen[order[i]])
            return bfail(b, "Expected a permutation of (0, 1, ..., len(order)-1) in order");
        seen[order[i]] = true;
        if (block_shape[i] <= 0 || block_shape[i] > INT32_MAX)
            return bfail(b, "Expected a list of constant integers (`int32_t` range) in `block_shape`");
        if (block_shape[i] & (block_shape[i] - 1))
            return bfail(b, "Shape element %d must be a power of 2", i);
    }
    IrType elt = pointee(b, bp);
    if (ir_type_dtype(b->m, elt) == IR_I1) {
        bp = bool_ptr_to_i8(b, bp);
        elt = scalar(b, IR_I8);
    }
    IrRef args[1 + 3 * IR_MAX_RANK];
    args[0] = bp;
    for (int i = 0; i < rank; i++) {
        if (!(args[1 + i] = bp_value(b, shape[i], true, "shape")) ||
            !(args[1 + rank + i] = bp_value(b, strides[i], true, "strides")) ||
            !(args[1 + 2 * rank + i] = bp_value(b, offsets[i], false, "offsets")))
            return IR_NONE;
    }
    IrType bt = ir_type_tensor(b->m, elt, rank, block_shape);
    IrOp *op = bemit_op(b, IR_MAKE_TENSOR_PTR, args, 1 + 3 * (uint32_t)rank, ir_type_ptr(b->m, bt, 0));
    ir_op_set_ints(b->fn, op, order, (uint32_t)rank);
    return op->res[0];
}

IrRef
ir_b_advance(IrBuilder *b, IrRef ptr, int rank, const IrOperand *offsets)
{
    if (!is_block_ptr(b, ptr))
        return bfail(b, "Expected `pointer` to be a block pointer");
    int r = ir_type_rank(b->m, pointee(b, ptr));
    if (rank != r)
        return bfail(b, "Expected %d offsets for a rank-%d block pointer, got %d", r, r, rank);
    IrRef args[1 + IR_MAX_RANK];
    args[0] = ptr;
    for (int i = 0; i < rank; i++)
        if (!(args[1 + i] = bp_value(b, offsets[i], false, "offsets")))
            return IR_NONE;
    return bemit(b, IR_ADVANCE, args, 1 + (uint32_t)rank, btype(b, ptr));
}

/* ---- atomics -------------------------------------------------------------------------- */

/* "acq_rel" ... / "gpu" ... → IrSem / IrScope (empty: Triton's defaults, code 0). */
static int
sem_code(const char *s)
{
    if (!s || !*s)
        return IR_SEM_ACQ_REL;
    return ir_name_lookup(ir_sem_name, IR_SEM_COUNT, s, strlen(s));
}

static int
scope_code(const char *s)
{
    if (!s || !*s)
        return IR_SCOPE_GPU;
    return ir_name_lookup(ir_scope_name, IR_SCOPE_COUNT, s, strlen(s));
}

IrRef
ir_b_atomic_rmw(IrBuilder *b, const char *kind, IrRef ptr, IrOperand valo, IrRef mask, const char *sem,
                const char *scope)
{
    int k = !strcmp(kind, "xchg") ? IR_RMW_XCHG : ir_name_lookup(ir_rmw_name, IR_RMW_COUNT, kind, strlen(kind));
    int sm = sem_code(sem), sc = scope_code(scope);
    if (k < 0 || sm < 0 || sc < 0)
        return bfail(b, "atomic: unsupported %s '%s'", k < 0 ? "operation" : sm < 0 ? "sem" : "scope",
                     k < 0 ? kind : sm < 0 ? sem : scope);
    if (!bis_ptr(b, ptr))
        return bfail(b, "atomic: first argument must be a pointer");
    IrType elt = pointee(b, ptr);
    IrRef val = bvalue(b, valo, ir_type_dtype(b->m, elt));
    if (!val)
        return IR_NONE;
    if (bis_tensor(b, ptr)) {
        val = bbroadcast_shape(b, val, brank(b, ptr), bshape(b, ptr));
        if (mask)
            mask = bbroadcast_shape(b, mask, brank(b, ptr), bshape(b, ptr));
    }
    int d = ir_type_dtype(b->m, elt);
    if (is8(d))
        return bfail(b, "atomic_%s does not support %s", kind, ir_dtype_name((IrDtype)d));
    val = bcast(b, val, elt, 0);
    if (!val)
        return IR_NONE;
    /* float add is fadd; signed/unsigned max/min follow the element type */
    if (k == IR_RMW_ADD && isf(d))
        k = IR_RMW_FADD;
    if ((k == IR_RMW_MAX || k == IR_RMW_MIN) && isi(d) && !ir_dtype_is_signed((IrDtype)d))
        k += IR_RMW_UMAX - IR_RMW_MAX;
    IrRef args[3] = {ptr, val, mask};
    IrOp *op = bemit_op(b, IR_ATOMIC_RMW, args, mask ? 3 : 2, bwith_elem(b, ptr, elt));
    op->i[0] = k;
    op->i[1] = sm;
    op->i[2] = sc;
    return op->res[0];
}

IrRef
ir_b_atomic_cas(IrBuilder *b, IrRef ptr, IrOperand cmpo, IrOperand valo, const char *sem, const char *scope)
{
    int sm = sem_code(sem), sc = scope_code(scope);
    if (sm < 0 || sc < 0)
        return bfail(b, "atomic_cas: unsupported sem/scope");
    if (!bis_ptr(b, ptr))
        return bfail(b, "atomic_cas: first argument must be a pointer");
    IrType elt = pointee(b, ptr);
    int d = ir_type_dtype(b->m, elt);
    IrRef c = bvalue(b, cmpo, d), v = bvalue(b, valo, d);
    if (!c || !v)
        return IR_NONE;
    if (bis_tensor(b, ptr)) {
        c = bbroadcast_shape(b, c, brank(b, ptr), bshape(b, ptr));
        v = bbroadcast_shape(b, v, brank(b, ptr), bshape(b, ptr));
    }
    if (!c || !v || !(c = bcast(b, c, elt, 0)) || !(v = bcast(b, v, elt, 0)))
        return IR_NONE;
    IrRef args[3] = {ptr, c, v};
    IrOp *op = bemit_op(b, IR_ATOMIC_CAS, args, 3, bwith_elem(b, ptr, elt));
    op->i[1] = sm;
    op->i[2] = sc;
    return op->res[0];
}

/* ---- dot ---------------------------------------------------------------------------------- */

IrRef
ir_b_dot(IrBuilder *b, IrRef a, IrRef c, IrRef acc, int out_dtype, int input_precision, int max_imprecise)
{
    char t1[256], t2[256];
    if (!bis_tensor(b, a) || !bis_tensor(b, c))
        return bfail(b, "dot: both operands must be tensors");
    int ra = brank(b, a), rc = brank(b, c);
    if (!((ra == 2 && rc == 2) || (ra == 3 && rc == 3)))
        return bfail(b, "Both inputs must be either 2D or 3D; (lhs: %s vs rhs: %s)",
                     btype_name(b, btype(b, a), t1, sizeof t1), btype_name(b, btype(b, c), t2, sizeof t2));
    const int64_t *as = bshape(b, a), *cs = bshape(b, c);
    if (as[ra - 1] != cs[rc - 2])
        return bfail(b, "First input shape (%s) and second input shape %s are not compatible for matmul "
                        "(second index of first shape (%lld) must be equal to first index of second shape (%lld)",
                     btype_name(b, btype(b, a), t1, sizeof t1), btype_name(b, btype(b, c), t2, sizeof t2),
                     (long long)as[ra - 1], (long long)cs[rc - 2]);
    if (ra == 3 && as[0] != cs[0])
        return bfail(b, "dot: batch dimensions differ (%lld and %lld)", (long long)as[0], (long long)cs[0]);
    int da = bdtype(b, a), dc = bdtype(b, c);
    bool f8 = false;
    if (is8(da) || is8(dc)) { /* computed by widening: fp8 values (and their products) are exact in fp32 */
        if (!(is8(da) || isf(da)) || !(is8(dc) || isf(dc)))
            return bfail(b, "dot: an fp8 operand goes with an fp8 or float operand, got %s and %s",
                         ir_dtype_name((IrDtype)da), ir_dtype_name((IrDtype)dc));
        a = bcast(b, a, scalar(b, IR_F32), 0);
        c = bcast(b, c, scalar(b, IR_F32), 0);
        if (!a || !c)
            return IR_NONE;
        da = dc = IR_F32;
        f8 = true;
    }
    if (da != dc)
        return bfail(b, "Both operands must be same dtype. Got %s and %s", ir_dtype_name((IrDtype)da),
                     ir_dtype_name((IrDtype)dc));
    int rd;
    if (isi(da))
        rd = IR_I32;
    else if (out_dtype == IR_BF16)
        return bfail(b, "out_dtype=bfloat16 is unsupported. Please use out_dtype=float32/float16 and cast with `.to(tl.bfloat16)`");
    else if (f8)
        rd = out_dtype >= 0 ? out_dtype : IR_F32; /* upstream: an fp8 dot gives out_dtype */
    else if (da == IR_F32 || da == IR_BF16 || da == IR_F64)
        rd = da == IR_F64 ? IR_F64 : IR_F32;
    else
        rd = out_dtype >= 0 ? out_dtype : IR_F32;
    int64_t shape[3];
    if (ra == 3) {
        shape[0] = as[0], shape[1] = as[1], shape[2] = cs[2];
    } else {
        shape[0] = as[0], shape[1] = cs[1];
    }
    IrType rt = ir_type_tensor(b->m, scalar(b, rd), ra, shape);
    if (!acc) {
        acc = isf(rd) ? bconst_float(b, 0.0, scalar(b, rd)) : bconst_int(b, 0, scalar(b, rd));
        acc = bsplat(b, acc, ra, shape);
    } else if (btype(b, acc) != rt) {
        if (brank(b, acc) == ra && !memcmp(bshape(b, acc), shape, sizeof(int64_t) * ra) && isf(bdtype(b, acc)) && isf(rd)) {
            rt = btype(b, acc); /* accumulate in the accumulator's float type */
        } else {
            return bfail(b, "dot: accumulator type %s does not match the result type %s",
                         btype_name(b, btype(b, acc), t1, sizeof t1), btype_name(b, rt, t2, sizeof t2));
        }
    }
    /* An fp16 (or bf16) result accumulates in fp32 and is rounded once, as
     * upstream's reference computes it: an fp16 running sum over K loses the
     * small products once it is large. */
    IrType out_t = rt;
    int od = ir_type_dtype(b->m, rt);
    if (od == IR_F16 || od == IR_BF16) {
        rt = ir_type_tensor(b->m, scalar(b, IR_F32), ra, shape);
        acc = bemit(b, IR_EXTF, &acc, 1, rt);
    }
    IrRef args[3] = {a, c, acc};
    IrOp *op = bemit_op(b, IR_DOT, args, 3, rt);
    op->i[0] = input_precision;
    op->i[1] = max_imprecise;
    if (out_t == rt)
        return op->res[0];
    return bemit(b, IR_TRUNCF, &op->res[0], 1, out_t);
}

/* ---- reductions and scans -------------------------------------------------------------------- */

static int
region_begin(IrBuilder *b, IrOpc opc, const IrRef *inputs, int n, int axis, bool reverse, IrRef *args)
{
    if (n < 1 || n > 16)
        return (int)bfail(b, "reduce/scan: between 1 and 16 operands are supported") - 1;
    int r = brank(b, inputs[0]);
    for (int i = 0; i < n; i++) {
        if (!bis_tensor(b, inputs[i]))
            return (int)bfail(b, "reduce/scan operands must be tensors") - 1;
        if (brank(b, inputs[i]) != r || memcmp(bshape(b, inputs[i]), bshape(b, inputs[0]), sizeof(int64_t) * r))
            return (int)bfail(b, "reduce/scan operands must have the same shape") - 1;
    }
    if (axis < 0)
        axis += r;
    if (axis < 0 || axis >= r)
        return (int)bfail(b, "reduce/scan: axis %d out of range for rank %d", axis, r) - 1;
    IrType rt[16] = {0};
    for (int i = 0; i < n; i++) {
        if (opc == IR_SCAN) {
            rt[i] = btype(b, inputs[i]);
        } else {
            int64_t shape[IR_MAX_RANK];
            for (int d = 0, k = 0; d < r; d++)
                if (d != axis)
                    shape[k++] = bshape(b, inputs[i])[d];
            rt[i] = ir_type_tensor(b->m, belem(b, inputs[i]), r - 1, shape);
        }
    }
    IrOp *op = ir_op_create(b->fn, opc, inputs, (uint32_t)n, rt, (uint32_t)n, 1);
    op->loc = b->loc;
    op->i[0] = axis;
    op->i[1] = reverse;
    ir_block_append(b->blk, op);
    IrBlock *body = op->regs[0];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < n; i++)
            args[k * n + i] = ir_block_add_arg(body, belem(b, inputs[i]));
    if (b->depth == IRB_MAX_DEPTH)
        return (int)bfail(b, "control flow nested too deeply") - 1;
    b->stack[b->depth++] = (IrbFrame){.kind = opc == IR_SCAN ? FR_SCAN : FR_REDUCE, .op = op, .saved = b->blk, .n = n};
    b->blk = body;
    return 0;
}

static int
region_end(IrBuilder *b, int kind, IrOpc term, const IrRef *vals, int n)
{
    if (!b->depth || b->stack[b->depth - 1].kind != kind)
        ir_die("reduce/scan end without begin");
    IrbFrame *fr = &b->stack[b->depth - 1];
    IrOp *op = fr->op;
    if (n != fr->n)
        return (int)bfail(b, "combine function returns %d values, expected %d", n, fr->n) - 1;
    for (int i = 0; i < n; i++) {
        if (btype(b, vals[i]) != op->regs[0]->fn->vals[op->regs[0]->args[i]].type) {
            char t1[256], t2[256];
            return (int)bfail(b, "combine function result %d has type %s, expected %s", i,
                              btype_name(b, btype(b, vals[i]), t1, sizeof t1),
                              btype_name(b, btype(b, op->regs[0]->args[i]), t2, sizeof t2)) - 1;
        }
    }
    bemit_op(b, term, vals, (uint32_t)n, 0);
    b->blk = fr->saved;
    b->depth--;
    b->closed = op;
    return 0;
}

int
ir_b_reduce_begin(IrBuilder *b, const IrRef *inputs, int n, int axis, IrRef *args)
{
    return region_begin(b, IR_REDUCE, inputs, n, axis, false, args);
}

int ir_b_reduce_end(IrBuilder *b, const IrRef *vals, int n) { return region_end(b, FR_REDUCE, IR_REDUCE_RETURN, vals, n); }

int
ir_b_scan_begin(IrBuilder *b, const IrRef *inputs, int n, int axis, bool reverse, IrRef *args)
{
    return region_begin(b, IR_SCAN, inputs, n, axis, reverse, args);
}

int ir_b_scan_end(IrBuilder *b, const IrRef *vals, int n) { return region_end(b, FR_SCAN, IR_SCAN_RETURN, vals, n); }

/* Flattens x to 1-D (reduce over all dims). */
static IrRef
flatten(IrBuilder *b, IrRef x)
{
    int64_t n = ir_type_numel(b->m, btype(b, x));
    return brank(b, x) == 1 ? x : ir_b_reshape(b, x, 1, &n, true);
}

/* The combine body of a built-in reduction, emitted inside the region. */
static IrRef
combine(IrBuilder *b, IrReduceKind kind, IrRef x, IrRef y)
{
    int d = bdtype(b, x);
    IrRef args[2] = {x, y};
    IrOpc opc;
    switch (kind) {
    case IR_RED_SUM: opc = isf(d) ? IR_ADDF : IR_ADDI; break;
    case IR_RED_PROD: opc = isf(d) ? IR_MULF : IR_MULI; break;
    case IR_RED_MAX: opc = isf(d) ? IR_MAXNUMF : ir_dtype_is_signed((IrDtype)d) ? IR_MAXSI : IR_MAXUI; break;
    case IR_RED_MIN: opc = isf(d) ? IR_MINNUMF : ir_dtype_is_signed((IrDtype)d) ? IR_MINSI : IR_MINUI; break;
    case IR_RED_XOR_SUM: opc = IR_XORI; break;
    case IR_RED_AND: opc = IR_ANDI; break;
    case IR_RED_OR: opc = IR_ORI; break;
    default: ir_die("combine: bad kind");
    }
    return bemit(b, opc, args, 2, btype(b, x));
}

/* argmax/argmin combine over (value, index) pairs, ties to the lower index; NaNs are
 * skipped as tl.max/tl.min skip them (a NaN is taken only while nothing else is). */
static void
arg_combine(IrBuilder *b, bool is_max, const IrRef *a, IrRef out[2])
{
    IrRef v1 = a[0], i1 = a[1], v2 = a[2], i2 = a[3];
    int d = bdtype(b, v1);
    IrRef cv[2] = {v1, v2}, ci[2] = {i1, i2};
    IrOp *gt = bemit_op(b, isf(d) ? IR_CMPF : IR_CMPI, cv, 2, ir_type_scalar(b->m, IR_I1));
    gt->i[0] = isf(d) ? (is_max ? 2 : 4) : ir_dtype_is_signed((IrDtype)d) ? (is_max ? 4 : 2) : (is_max ? 8 : 6);
    IrOp *eq = bemit_op(b, isf(d) ? IR_CMPF : IR_CMPI, cv, 2, ir_type_scalar(b->m, IR_I1));
    eq->i[0] = isf(d) ? 1 : 0;
    IrOp *lt = bemit_op(b, IR_CMPI, ci, 2, ir_type_scalar(b->m, IR_I1));
    lt->i[0] = 2; /* slt */
    IrRef tie[2] = {eq->res[0], lt->res[0]};
    IrRef tie_lo = bemit(b, IR_ANDI, tie, 2, ir_type_scalar(b->m, IR_I1));
    IrRef pick[2] = {gt->res[0], tie_lo};
    IrRef take1 = bemit(b, IR_ORI, pick, 2, ir_type_scalar(b->m, IR_I1));
    if (isf(d)) { /* keep v1 when v2 is NaN */
        IrRef nn[2] = {v2, v2};
        IrOp *nan2 = bemit_op(b, IR_CMPF, nn, 2, ir_type_scalar(b->m, IR_I1));
        nan2->i[0] = 14; /* uno */
        IrRef k[2] = {take1, nan2->res[0]};
        take1 = bemit(b, IR_ORI, k, 2, ir_type_scalar(b->m, IR_I1));
    }
    IrRef sv[3] = {take1, v1, v2}, si[3] = {take1, i1, i2};
    out[0] = bemit(b, IR_SELECT, sv, 3, btype(b, v1));
    out[1] = bemit(b, IR_SELECT, si, 3, btype(b, i1));
}

IrRef
ir_b_reduce(IrBuilder *b, IrReduceKind kind, IrRef x, int axis, bool keep_dims, int dtype)
{
    if (!bis_tensor(b, x)) /* reducing a scalar is the identity */
        return x;
    int d = bdtype(b, x);
    if (d < 0)
        return bfail(b, "cannot reduce a tensor of pointers");
    int orig_rank = brank(b, x);
    int64_t orig_shape[IR_MAX_RANK];
    memcpy(orig_shape, bshape(b, x), sizeof(int64_t) * orig_rank);
    /* dtype rules of standard.py */
    int cd = dtype;
    if (cd < 0) {
        if (kind == IR_RED_SUM || kind == IR_RED_PROD || kind == IR_RED_XOR_SUM) {
            if (isi(d) && ir_dtype_bits((IrDtype)d) < 32)
                cd = (ir_dtype_is_signed((IrDtype)d) || d == IR_I1) ? IR_I32 : IR_U32;
        } else if (kind == IR_RED_MAX || kind == IR_RED_MIN || kind == IR_RED_ARGMAX || kind == IR_RED_ARGMIN) {
            if (d == IR_BF16)
                cd = IR_F32;
            else if (isi(d) && ir_dtype_bits((IrDtype)d) < 32)
                cd = IR_I32;
            /* spine-triton: fp16 max/min stay fp16 */
        }
    }
    if (is8(d) && cd < 0)
        cd = IR_F32; /* fp8 reduces in fp32 */
    if ((kind == IR_RED_XOR_SUM || kind == IR_RED_AND || kind == IR_RED_OR) && !isi(d))
        return bfail(b, "xor_sum/reduce_and/reduce_or only supported for integers");
    if (cd >= 0 && cd != d && !(x = bcast(b, x, ir_type_scalar(b->m, (IrDtype)cd), 0)))
        return IR_NONE;
    bool all = axis == IR_AXIS_NONE;
    if (all) {
        x = flatten(b, x);
        axis = 0;
    }
    int r = brank(b, x);
    if (axis < -r || axis >= r)
        return bfail(b, "reduction axis %d out of range for rank %d", axis, r);
    if (axis < 0)
        axis += r;
    IrRef res;
    if (kind == IR_RED_ARGMAX || kind == IR_RED_ARGMIN) {
        int64_t n = bshape(b, x)[axis];
        IrRef idx = ir_b_arange(b, 0, n);
        if (!idx)
            return IR_NONE;
        /* broadcast the index along 'axis' to x's shape */
        for (int i = 0; i < r; i++)
            if (i != axis)
                idx = ir_b_expand_dims(b, idx, i < axis ? 0 : i);
        idx = bbroadcast_shape(b, idx, r, bshape(b, x));
        IrRef ins[2] = {x, idx}, args[4], out[2];
        if (!idx || region_begin(b, IR_REDUCE, ins, 2, axis, false, args) < 0)
            return IR_NONE;
        arg_combine(b, kind == IR_RED_ARGMAX, args, out);
        if (region_end(b, FR_REDUCE, IR_REDUCE_RETURN, out, 2) < 0)
            return IR_NONE;
        res = b->closed->res[1];
    } else {
        IrRef args[2];
        if (region_begin(b, IR_REDUCE, &x, 1, axis, false, args) < 0)
            return IR_NONE;
        IrRef y = combine(b, kind, args[0], args[1]);
        if (region_end(b, FR_REDUCE, IR_REDUCE_RETURN, &y, 1) < 0)
            return IR_NONE;
        res = b->closed->res[0];
    }
    if (keep_dims) {
        if (all) {
            int64_t ones[IR_MAX_RANK];
            for (int i = 0; i < orig_rank; i++)
                ones[i] = 1;
            res = bsplat(b, res, orig_rank, ones);
        } else {
            res = ir_b_expand_dims(b, res, axis);
        }
    }
    return res;
}

/* smt.alloc: a local buffer of the given shape and element type, private to the
 * program instance; the result is a pointer to its first element (row-major),
 * which the front end wraps in a block pointer. */
IrRef
ir_b_smt_alloc(IrBuilder *b, int rank, const int64_t *shape, int dtype, const char *storage)
{
    if (rank < 1 || rank > IR_MAX_RANK)
        return bfail(b, "smt.alloc: shape must have 1 to %d dimensions, got %d", IR_MAX_RANK, rank);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] <= 0 || shape[i] > (1 << 24))
            return bfail(b, "smt.alloc: shape[%d] = %lld is not a positive size", i, (long long)shape[i]);
        n *= shape[i];
    }
    if (dtype < 0 || dtype >= IR_DTYPE_COUNT || dtype == IR_I1)
        return bfail(b, "smt.alloc: unsupported element type");
    if (n * ((ir_dtype_bits((IrDtype)dtype) + 7) / 8) > (64 << 20))
        return bfail(b, "smt.alloc: %lld elements do not fit a local buffer (64 MiB at most)", (long long)n);
    IrOp *op = bemit_op(b, IR_SMT_ALLOC, NULL, 0, ir_type_ptr(b->m, scalar(b, dtype), 1));
    ir_op_set_ints(b->fn, op, shape, (uint32_t)rank);
    if (storage)
        op->s = ir_arena_strdup(&b->m->arena, storage, strlen(storage));
    return op->res[0];
}

/* A block pointer over the same tensor as bp, its offsets moved by delta, with
 * another block shape (smt.view on a block pointer). bp is followed back through
 * tt.advance ops to its tt.make_tensor_ptr, whose base, shape, strides and order
 * the new pointer keeps. */
IrRef
ir_b_block_ptr_reblock(IrBuilder *b, IrRef bp, int rank, const IrOperand *delta, const int64_t *block_shape)
{
    if (!is_block_ptr(b, bp))
        return bfail(b, "Expected a block pointer");
    IrRef off[IR_MAX_RANK];
    int n = 0;
    IrOp *d = b->fn->vals[bp].def;
    IrOp *adv[64];
    int nadv = 0;
    while (d && d->opc == IR_ADVANCE && nadv < 64) {
        adv[nadv++] = d;
        d = b->fn->vals[d->args[0]].def;
    }
    if (!d || d->opc != IR_MAKE_TENSOR_PTR)
        return bfail(b, "this block pointer does not come from tl.make_block_ptr (and tl.advance) in the same scope "
                        "(a loop-carried or branch block pointer); make the view before the loop");
    n = (int)(d->nargs - 1) / 3;
    if (n != rank)
        return bfail(b, "Expected %d offsets for a rank-%d block pointer, got %d", n, n, rank);
    IrOperand sh[IR_MAX_RANK], st[IR_MAX_RANK], of[IR_MAX_RANK];
    for (int k = 0; k < n; k++) {
        off[k] = d->args[1 + 2 * n + k];
        for (int a = nadv - 1; a >= 0; a--)
            if (!(off[k] = ir_b_binop(b, IR_B_ADD, ir_opnd(off[k]), ir_opnd(adv[a]->args[1 + k]))))
                return IR_NONE;
        if (!(off[k] = ir_b_binop(b, IR_B_ADD, ir_opnd(off[k]), delta[k])))
            return IR_NONE;
        sh[k] = ir_opnd(d->args[1 + k]);
        st[k] = ir_opnd(d->args[1 + n + k]);
        of[k] = ir_opnd(off[k]);
    }
    return ir_b_make_block_ptr(b, ir_opnd(d->args[0]), n, sh, st, of, block_shape, d->ints);
}
