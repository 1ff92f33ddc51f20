/*
 * ir_build_int.h — state and shared helpers of the front-end builder
 * (ir_build.c, ir_build_arith.c, ir_build_mem.c, ir_build_fp8.c).
 *
 * The builder inserts at the end of the current block. Control-flow ops push a
 * frame; their bodies are built in nested blocks and closed by the matching
 * *_end call. Every public builder function returns IR_NONE (or -1) after
 * recording a located error (bfail), and never leaves half-built ops attached.
 */
#ifndef IR_BUILD_INT_H
#define IR_BUILD_INT_H

#include "ir_int.h"

#define IRB_MAX_DEPTH 128

enum { FR_FUNC, FR_FOR, FR_IF_THEN, FR_IF_ELSE, FR_WHILE_BEFORE, FR_WHILE_AFTER, FR_REDUCE,
       FR_SCAN, FR_SCRATCH };

typedef struct IrbFrame {
    int kind;
    IrOp *op;          /* the structured op (NULL for functions and scratch) */
    IrBlock *saved;    /* insertion block to restore on close */
    int n;             /* iter-arg / operand count */
} IrbFrame;

struct IrBuilder {
    IrModule *m;
    IrFunc *fn;
    IrBlock *blk;      /* insertion point: end of this block */
    IrLoc loc;
    IrbFrame stack[IRB_MAX_DEPTH];
    int depth;
    IrOp *closed;      /* last structured op closed (ir_b_region_result) */
    char err[2048];
};

/* ---- ir_build.c ---- */
#define bfail ir_builder_fail /* the public entry, under the builder files' short name */
IrOp *bemit_op(IrBuilder *b, IrOpc opc, const IrRef *args, uint32_t nargs, IrType restype);
IrRef bemit(IrBuilder *b, IrOpc opc, const IrRef *args, uint32_t nargs, IrType restype);
IrRef bconst_int(IrBuilder *b, int64_t v, IrType t);
IrRef bconst_float(IrBuilder *b, double v, IrType t);
IrRef bbin(IrBuilder *b, IrOpc opc, IrRef x, IrRef y);      /* result typed as x */
IrRef bselect(IrBuilder *b, IrRef c, IrRef x, IrRef y);     /* c ? x : y, typed as x */
IrType btype(IrBuilder *b, IrRef v);
bool bis_tensor(IrBuilder *b, IrRef v);
int brank(IrBuilder *b, IrRef v);
const int64_t *bshape(IrBuilder *b, IrRef v);
IrType belem(IrBuilder *b, IrRef v);   /* scalar element type of v */
int bdtype(IrBuilder *b, IrRef v);     /* element dtype, -1 for pointers */
bool bis_ptr(IrBuilder *b, IrRef v);   /* element is a pointer */
/* The tensor (or scalar if rank 0) type with v's shape and element 'elem'. */
IrType bwith_elem(IrBuilder *b, IrRef v, IrType elem);
IrRef bsplat(IrBuilder *b, IrRef x, int rank, const int64_t *shape);
/* Triton's broadcast_impl_shape: x (scalar or tensor) to exactly 'shape'. */
IrRef bbroadcast_shape(IrBuilder *b, IrRef x, int rank, const int64_t *shape);
/* Triton's broadcast_impl_value: make two values shape-compatible. */
int bbroadcast_pair(IrBuilder *b, IrRef *x, IrRef *y);
/* "tensor<128xfp32>"-style name used in messages (Triton's repr of types). */
const char *btype_name(IrBuilder *b, IrType t, char *buf, size_t cap);

/* ---- ir_build_arith.c ---- */
/* Converts a literal/value operand to a value; literals take 'dtype' (>= 0) or
 * their default type (int32/int64/uint64, fp32, int1). */
IrRef bvalue(IrBuilder *b, IrOperand o, int dtype);
/* Triton's cast() of a value to scalar type 'dst' (element-wise for tensors). */
IrRef bcast(IrBuilder *b, IrRef x, IrType dst, int rounding);
IrRef bcmp_ne_zero(IrBuilder *b, IrRef x);

/* ---- ir_build_fp8.c ---- */
IrRef bfp8_decode(IrBuilder *b, IrRef x);                       /* fp8 -> fp32, exact */
IrRef bfp8_encode(IrBuilder *b, IrRef x, IrType dst, bool rtz); /* fp32/fp64 -> fp8 dst */

#endif /* IR_BUILD_INT_H */
