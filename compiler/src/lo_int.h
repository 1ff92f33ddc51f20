/*
 * lo_int.h — internal interface of the lowering to Linalg MLIR text (lo_*.c).
 *
 * The lowering writes MLIR text into a LoBuf. SSA values it creates are named
 * %v<N>; lo_emit() writes one "  %vN = <text>" line and returns N, so callers
 * refer to earlier values by number ("%%v%u").
 */
#ifndef LO_INT_H
#define LO_INT_H

#include "ir_int.h"

typedef struct LoBuf {
    char *p;
    size_t n, cap;
    int indent;      /* spaces before each emitted line */
    unsigned next;   /* next SSA number (when ctr is NULL) */
    unsigned *ctr;   /* shared SSA counter, so that several buffers number alike */
} LoBuf;

/* ---- lo_buf.c ---- */
void lo_buf_init(LoBuf *b);
void lo_buf_fini(LoBuf *b);
/* Appends raw text (no indent, no newline). */
void lo_printf(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A fresh SSA number without emitting anything (block arguments). */
unsigned lo_fresh(LoBuf *b);
/* Writes indent + "%vN = " + text + "\n" and returns N. */
unsigned lo_emit(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes indent + text + "\n" (an op without results). */
void lo_line(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes the buffer's text (malloc'ed, NUL-terminated); the buffer is reset. */
char *lo_buf_take(LoBuf *b, size_t *len);

/* ---- lowering context (lo_main.c) ------------------------------------------- */

/* Affine scalar expressions over IR scalar values, used by the pointer and mask
 * analysis (lo_ptr.c). Nodes are hash-consed per context, so structurally equal
 * expressions are the same pointer. Emission (lo_aexpr_emit) is memoised per
 * lowering scope. */
typedef enum { AK_CONST, AK_VAL, AK_SSA, AK_ADD, AK_MUL, AK_MIN, AK_MAX, AK_DIV } AKind;
typedef struct AExpr AExpr;
struct AExpr {
    uint8_t k;
    int64_t c;           /* AK_CONST */
    IrRef v;             /* AK_VAL: an IR scalar integer value */
    unsigned ssa;        /* AK_SSA: an MLIR value of type index */
    const AExpr *a, *b;
    AExpr *hnext;        /* hash chain */
    unsigned memo;       /* emitted SSA (index) */
    int memo_scope;
};

/* value(i) = base + sum_d coef[d] * i_d, i_d the index within the tile */
typedef struct AForm {
    int rank;
    const AExpr *base;
    const AExpr *coef[IR_MAX_RANK];
} AForm;

/* A pointer (scalar or tensor): base parameter memref + element offset form. For
 * non-affine offsets ('gather'), 'gen' lists IR int tensors whose values are added
 * to off.base element-wise. */
typedef struct PtrForm {
    int param;           /* kernel parameter index of the base pointer */
    IrType elem;         /* pointee element type */
    AForm off;
    int ngen;
    IrRef gen[8];
} PtrForm;

/* Valid region of a mask per tile dim: [lo, hi); NULL lo = 0, NULL hi = dim size.
 * 'empty' is a uniform scalar condition (IR i1 value) that, when false, makes the
 * whole region empty; 0 when not used. */
typedef struct Region {
    int rank;
    const AExpr *lo[IR_MAX_RANK], *hi[IR_MAX_RANK];
    IrRef cond;
} Region;

typedef struct BlockPtr {
    int param;
    IrType elem;
    int rank;
    const AExpr *base;   /* element offset of the base pointer */
    const AExpr *shape[IR_MAX_RANK], *stride[IR_MAX_RANK], *off[IR_MAX_RANK];
    int64_t block[IR_MAX_RANK];
    int64_t order[IR_MAX_RANK];
} BlockPtr;

typedef enum { LV_NONE, LV_SCALAR, LV_LAZY, LV_TENSOR, LV_PTR, LV_BPTR } LvKind;

typedef struct LoVal {
    uint8_t kind;
    uint8_t as_i8;       /* LV_TENSOR of i1 materialised as i8 */
    uint8_t eager;       /* materialise at definition (pre-pass decision) */
    uint8_t analysed;    /* ptr/aform analysis done (pform/aform valid or NULL) */
    uint8_t gathering;   /* load being lowered as guarded element loads */
    unsigned ssa;        /* LV_SCALAR / LV_TENSOR */
    int scope;           /* scope of ssa */
    PtrForm *ptr;        /* LV_PTR */
    BlockPtr *bp;        /* LV_BPTR */
    AForm *aform;        /* integer tensors/scalars: affine form, NULL if none */
    int aform_done;
} LoVal;

typedef struct LoCtx {
    IrModule *m;
    IrFunc *f;
    const LoOptions *opt;
    LoBuf *out;          /* where ops are emitted now (main buffer) */
    LoVal *vals;         /* per IR value */
    unsigned *param_ssa; /* MLIR SSA of each kernel parameter */
    unsigned pid_ssa[3], num_ssa[3], pctx_ssa;
    int *scope_parent;   /* scope tree */
    int nscopes, capscopes, scope;
    uint32_t *oppos;     /* linear position of each op (pre-pass), by value index of result */
    AExpr **ahash;       /* hash-consing table */
    uint32_t ahcap;
    IrCost *cost;
    int err;             /* an error diagnostic was added */
    uint32_t pos;        /* pre-order position of the op being lowered (as the pre-pass) */
    uint32_t *lastuse;   /* per value: position of its last use (pre-pass) */
    IrRef *pending;      /* lazy tiles defined since the last in-kernel scope boundary */
    uint32_t npending, cappending;
} LoCtx;

/* lo_main.c */
int lo_scope_push(LoCtx *c);
void lo_scope_pop(LoCtx *c, int saved);
bool lo_scope_visible(LoCtx *c, int s);
const char *lo_mlir_type(LoCtx *c, IrType t, char *buf, size_t cap);   /* scalar/elem type */
const char *lo_elem_str(LoCtx *c, IrType t);                          /* static storage */
unsigned lo_scalar(LoCtx *c, IrRef v);      /* SSA of an IR scalar (int/float/bool) */
int lo_error(LoCtx *c, IrLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lo_remark(LoCtx *c, IrLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
unsigned lo_const_index(LoCtx *c, int64_t v);

/* lo_ptr.c */
const AExpr *ax_const(LoCtx *c, int64_t v);
const AExpr *ax_val(LoCtx *c, IrRef v);
const AExpr *ax_ssa(LoCtx *c, unsigned ssa);
const AExpr *ax_add(LoCtx *c, const AExpr *a, const AExpr *b);
const AExpr *ax_mul(LoCtx *c, const AExpr *a, const AExpr *b);
const AExpr *ax_min(LoCtx *c, const AExpr *a, const AExpr *b);
const AExpr *ax_max(LoCtx *c, const AExpr *a, const AExpr *b);
const AExpr *ax_neg(LoCtx *c, const AExpr *a);
bool ax_is_const(const AExpr *a, int64_t *v);
unsigned lo_aexpr_emit(LoCtx *c, const AExpr *e);     /* SSA of type index */
AForm *lo_aform(LoCtx *c, IrRef v);                    /* NULL when not affine */
PtrForm *lo_ptrform(LoCtx *c, IrRef v);                /* NULL for block pointers / unknown */
/* Mask analysis: fills r (rank of the mask) and returns 0, or -1 if not analysable. */
int lo_mask_region(LoCtx *c, IrRef mask, Region *r);
bool lo_region_eq(const Region *a, const Region *b);
bool lo_region_full(const Region *r);

/* lo_elem.c: generic bodies, materialisation, scalar ops */
unsigned lo_emit_scalar_op(LoCtx *c, IrOp *op, const unsigned *args);
unsigned lo_materialize(LoCtx *c, IrRef v);            /* full-shape tensor SSA */
const char *lo_tensor_type(LoCtx *c, IrType t, char *buf, size_t cap); /* materialised type */
typedef struct LoIter {
    int rank;
    int64_t shape[IR_MAX_RANK];      /* tile shape */
    Region reg;                      /* valid region (all NULL: the full tile) */
    unsigned lo[IR_MAX_RANK];        /* SSA (index) of the region start, 0: zero */
    unsigned size[IR_MAX_RANK];      /* SSA (index) of the region size, 0: shape[d] */
} LoIter;
/* Emits a linalg.generic over 'it' computing 'v' (elementwise expression) into
 * 'outs' (SSA of a tensor of the region shape; 0 = tensor.empty). Returns the
 * result tensor SSA. */
unsigned lo_generic_store(LoCtx *c, const LoIter *it, IrRef v, unsigned outs, const char *outs_type);
/* Same, updating the tensor of IR value dest_val (outs) in place. */
unsigned lo_generic_update(LoCtx *c, const LoIter *it, IrRef v, IrRef dest_val, unsigned outs, const char *outs_type);
/* Region -> iteration space of a tile shape. */
void lo_iter_from_region(LoCtx *c, const Region *r, int rank, const int64_t *shape, LoIter *it);

/* lo_mem.c */
int lo_load(LoCtx *c, IrOp *op);      /* scalar loads; tensor loads stay lazy */
int lo_store(LoCtx *c, IrOp *op);
int lo_make_block_ptr(LoCtx *c, IrOp *op);
int lo_advance(LoCtx *c, IrOp *op);
int lo_atomic(LoCtx *c, IrOp *op);      /* tt.atomic_rmw / tt.atomic_cas */
/* Full-tile tensor of a tensor load (padded with 'other' where masked). */
unsigned lo_load_materialize(LoCtx *c, IrRef v);
/* A strided view of parameter p->param: element offset p->off evaluated at the
 * tile index 'start' (per dim of p, SSA index or 0 for zero), sizes 'size' (SSA
 * index or 0 for the static 'ssize'). Dims whose coefficient is the constant 0
 * become unit dims (unit[d] set) so the caller broadcasts them. Returns the memref
 * SSA; writes the memref type to mtype. */
unsigned lo_view(LoCtx *c, const PtrForm *p, const unsigned *start, const unsigned *size,
                 const int64_t *ssize, bool allow_unit, bool *unit, char *mtype, size_t mcap);
/* Valid region of a tensor load (its mask, or its block pointer's boundary check)
 * in tile dims; 0 on success, -1 when not analysable (gather path). */
int lo_load_region(LoCtx *c, IrOp *ld, Region *r);
/* View for a tensor load (pointer or block pointer): as lo_view. */
unsigned lo_load_view(LoCtx *c, IrOp *ld, const unsigned *start, const unsigned *size,
                      const int64_t *ssize, bool allow_unit, bool *unit, char *mtype, size_t mcap);
/* "tensor<?x8xf32>" for a view of the given sizes. */
void lo_view_tensor_type(LoCtx *c, IrType elem, int rank, const unsigned *size, const int64_t *ssize,
                         const bool *unit, char *buf, size_t cap);

/* lo_elem.c (continued) */
unsigned lo_emit_const(LoCtx *c, int dtype, int64_t iv, double fv);
unsigned lo_generic_reduce(LoCtx *c, IrRef v, int axis, IrBlock *region, unsigned init,
                           const char *init_type);
/* tensor<shape x index> of the element offsets of a (gather) pointer tensor. */
unsigned lo_offsets_tensor(LoCtx *c, IrRef ptr, PtrForm *p);

/* lo_compute.c */
int lo_dot(LoCtx *c, IrOp *op);
int lo_reduce(LoCtx *c, IrOp *op);
int lo_scan(LoCtx *c, IrOp *op);
int lo_shape_op(LoCtx *c, IrOp *op);   /* reshape, cat, join, split, trans of materialised */

/* ---- lo_math.c ---- */
/* Emits scalar arith code computing fn(args) for float type 'fty' ("f32" or
 * "f64") into b and returns the SSA number of the result, or 0 when fn has no
 * expansion for that type (the caller then emits the math dialect op itself).
 * The code is branch-free so that it vectorises. Covered for f32: EXP, EXP2,
 * EXPM1, LOG, LOG2, LOG10, LOG1P, SIN, COS, TAN, TANH, ERF, ATAN, ASIN, ACOS,
 * SINH, COSH, ASINH, ACOSH, ATANH, CBRT, POWF, ATAN2. */
unsigned lo_math_emit(LoBuf *b, IrOpc fn, const unsigned *args, int nargs, const char *fty);
/* Whether lo_math_emit expands fn for f32 (the list above). */
bool lo_math_expands(IrOpc fn);

#endif /* LO_INT_H */
