/*
 * lo_type.c — the MLIR types the lowering writes: one descriptor (LoType) for
 * scalars, tensors and memrefs, and one function that spells it.
 *
 * Materialised tiles of i1 are stored as i8 bytes (docs/compiler.md §1.1), so
 * lt_of_tile maps an IR tile type to its storage tensor type.
 */
#include "lo_int.h"

#include <string.h>

LoType
lt_scalar(int elem)
{
    LoType t;
    memset(&t, 0, sizeof t);
    t.kind = LT_SCALAR;
    t.elem = (uint8_t)elem;
    return t;
}

LoType
lt_tensor(int elem, int rank, const int64_t *shape)
{
    LoType t = lt_scalar(elem);
    t.kind = LT_TENSOR;
    t.rank = (uint8_t)rank;
    if (rank)
        memcpy(t.shape, shape, sizeof *shape * (size_t)rank);
    return t;
}

int
lt_storage_elem(int dtype)
{
    return dtype == IR_I1 ? IR_I8 : dtype;
}

LoType
lt_of_tile(const IrModule *m, IrType t)
{
    const IrTypeInfo *ti = ir_type_info(m, t);
    int d = ir_type_dtype(m, ir_type_elem(m, t));
    return lt_tensor(lt_storage_elem(d < 0 ? LT_INDEX : d), ti->kind == IR_TK_TENSOR ? ti->rank : 0, ti->shape);
}

const char *
lt_elem_name(int elem)
{
    return elem == LT_INDEX ? "index" : ir_dtype_mlir((IrDtype)elem);
}

static void
dim(LoBuf *b, int64_t v)
{
    if (v == LT_DYN)
        lo_append(b, "?", 1);
    else
        lo_printf(b, "%lld", (long long)v);
}

void
lt_print(LoBuf *b, const LoType *t)
{
    const char *e = lt_elem_name(t->elem);
    if (t->kind == LT_SCALAR) {
        lo_printf(b, "%s", e);
        return;
    }
    lo_printf(b, "%s<", t->kind == LT_TENSOR ? "tensor" : "memref");
    for (int d = 0; d < t->rank; d++) {
        dim(b, t->shape[d]);
        lo_append(b, "x", 1);
    }
    lo_printf(b, "%s", e);
    if (t->kind == LT_MEMREF && t->strided) {
        lo_printf(b, ", strided<[");
        for (int d = 0; d < t->rank; d++) {
            if (d)
                lo_printf(b, ", ");
            dim(b, t->stride[d]);
        }
        lo_printf(b, "], offset: ");
        dim(b, t->offset);
        lo_printf(b, ">");
    }
    lo_printf(b, ">");
}
