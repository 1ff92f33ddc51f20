/*
 * lo_int.h — internal interface of the lowering of the tile IR to Linalg MLIR
 * text, and the index of the lo_*.c files. docs/compiler.md §1 is the contract
 * of the output; §2 describes the two steps.
 *
 * The lowering runs in two steps with one direction of data flow:
 *
 *   plan  (lo_expr.c, lo_plan_ptr.c, lo_plan.c, lo_plan_cost.c) — a pure
 *         analysis of the kernel function: for every value, what it is (scalar,
 *         lazy element-wise tile, tile load, materialised tensor, pointer with its
 *         affine form, block pointer), where each tile is read or materialised,
 *         the valid region of every mask, how each memory op is done, and the
 *         static cost with loop trip counts as symbolic multipliers. It writes no
 *         text; compiler remarks about fallbacks are added here.
 *   emit  (lo_type.c, lo_buf.c, lo_emit*.c, lo_math.c) — reads the plan and
 *         writes the MLIR text. Every linalg op carries its role as a
 *         `tritium.kind` attribute (with the tile sizes it wants), which the code
 *         generator's transform script reads (cg_script.c).
 *
 * Files, in dependency order (each uses only those above it):
 *   lo_expr.c          hash-consed affine index expressions (AExpr)
 *   lo_plan_ptr.c      affine forms of integer tiles, pointer forms (with
 *                      wrap-around), block pointers, mask regions
 *   lo_plan_cost.c     static cost per program instance, symbolic trip counts
 *   lo_plan.c          the plan: kinds, positions, materialisation and the alias
 *                      rules, memory-op access modes, loops, scopes
 *   lo_type.c          MLIR type descriptors and their spelling
 *   lo_buf.c           growable text buffer with SSA numbering
 *   lo_math.c          branch-free f32 expansions of transcendental math
 *   lo_emit_scalar.c   constants and the scalar form of element-wise ops
 *   lo_emit_view.c     emission context helpers, index expressions, memref views
 *   lo_emit_generic.c  fused linalg.generic bodies, materialisation, tile loads
 *   lo_emit_mem.c      stores, scalar loads, atomics
 *   lo_emit_compute.c  dot, reductions, scans, shape ops
 *   lo_emit_dot_pairs.c  the bf16 dot on vdpbf16ps
 *   lo_emit_prefetch.c   prefetch of a dot's next K-step tiles
 *   lo_emit_scan.c     scans and several-operand reductions, walked in order
 *   lo_emit_debug.c    tt.print / tt.assert: calls into the runtime
 *   lo_emit_touch.c    a scope boundary's in-place read of a lazy load
 *   lo_emit.c          the walk, structured control flow, scopes, the module
 * Requires: canonicalized IR (ir_pipeline_run: constants folded, CSE, DCE).
 */
#ifndef LO_INT_H
#define LO_INT_H

#include "ir_int.h"

/* ==== plan ==================================================================== */

/* ---- lo_expr.c: affine index expressions ----
 * Expressions over IR scalar integer values. Nodes are hash-consed per pool, so
 * structurally equal expressions are the same pointer: that is how "the load's
 * mask is the store's mask" and "the same element map" are decided. AK_CARRY is
 * an index value the emitter creates for a loop-carried or branch value (the
 * element offset of a carried pointer, slot 0, or offset k of a carried block
 * pointer). */
typedef enum AKind { AK_CONST, AK_VAL, AK_CARRY, AK_ADD, AK_MUL, AK_MIN, AK_MAX } AKind;

typedef struct AExpr AExpr;
struct AExpr {
    uint8_t k;           /* AKind */
    int32_t slot;        /* AK_CARRY */
    int64_t c;           /* AK_CONST */
    IrRef v;             /* AK_VAL, AK_CARRY */
    const AExpr *a, *b;  /* operands (AK_ADD .. AK_MAX) */
    AExpr *hnext;        /* hash chain */
    uint32_t id;         /* dense number within the pool, from 1 */
};

typedef struct LoExprs {
    IrModule *m;
    IrFunc *f;
    AExpr **hash;
    uint32_t cap, n;     /* buckets (power of two), nodes */
} LoExprs;

void lx_init(LoExprs *x, IrModule *m, IrFunc *f);
void lx_fini(LoExprs *x);
const AExpr *ax_const(LoExprs *x, int64_t v);
const AExpr *ax_val(LoExprs *x, IrRef v);     /* sees through constants, +, -, *, extsi */
const AExpr *ax_carry(LoExprs *x, IrRef v, int slot);
const AExpr *ax_add(LoExprs *x, const AExpr *a, const AExpr *b);
const AExpr *ax_sub(LoExprs *x, const AExpr *a, const AExpr *b);
const AExpr *ax_mul(LoExprs *x, const AExpr *a, const AExpr *b);
const AExpr *ax_min(LoExprs *x, const AExpr *a, const AExpr *b);
const AExpr *ax_max(LoExprs *x, const AExpr *a, const AExpr *b);
const AExpr *ax_neg(LoExprs *x, const AExpr *a);
bool ax_is_const(const AExpr *a, int64_t *v);
bool ax_is_zero(const AExpr *a);
/* Value of e with every AK_VAL leaf given by val(user, v, &ok); false when a leaf
 * (or an AK_CARRY) has no value. */
typedef int64_t (*AxLeafFn)(void *user, IrRef v, bool *ok);
bool ax_eval(const AExpr *e, AxLeafFn val, void *user, int64_t *out);

/* ---- lo_plan_ptr.c: affine forms, pointer forms, block pointers, regions ---- */

/* value(i) = base + sum_d coef[d] * idx_d, with i the index inside the tile and
 * idx_d = i_d, or (wbase[d] + i_d) mod wrap[d] for a wrap-around dimension
 * (`offs = (pid * BLOCK + tl.arange(0, BLOCK)) % M`). */
typedef struct AForm {
    int rank;
    const AExpr *base;
    const AExpr *coef[IR_MAX_RANK];
    const AExpr *wrap[IR_MAX_RANK];  /* modulus, NULL: the dim does not wrap */
    const AExpr *wbase[IR_MAX_RANK]; /* start of a wrapped dim (not part of base) */
} AForm;

/* A pointer (scalar or tile): base 'param' plus an element offset. The base is
 * a kernel argument, a program-local buffer or a run-time address (lp_base_kind).
 * A gathered pointer (offsets not affine) adds the IR integer tiles gen[] to
 * off element-wise; gen tile i's dim k is the pointer's dim gdm[i][k] (-1: a unit
 * dim the pointer broadcast, read at 0), so broadcasts, expand_dims and
 * transposes of a gathered pointer keep it gathered. With 'abs' (a tile of
 * addresses cast to pointers, LPB_ADDRESSES), gen[0] holds absolute byte
 * addresses and the other terms count elements from them: every access gathers. */
#define LP_MAX_GEN 8
typedef struct PtrForm {
    int param;           /* base: kernel parameter index, or an extra base after them */
    IrType elem;         /* pointee element type */
    AForm off;
    int ngen;
    uint8_t abs;         /* gen[0] is a tile of byte addresses */
    IrRef gen[LP_MAX_GEN];
    int8_t gdm[LP_MAX_GEN][IR_MAX_RANK];
} PtrForm;

/* A block pointer: element offset of its base, and per dim shape, stride, offset. */
typedef struct BlockPtr {
    int param;
    IrType elem;
    int rank;
    const AExpr *base;
    const AExpr *shape[IR_MAX_RANK], *stride[IR_MAX_RANK], *off[IR_MAX_RANK];
    int64_t block[IR_MAX_RANK];
    int64_t order[IR_MAX_RANK];
} BlockPtr;

/* Valid region of a mask per tile dim: [lo, hi); NULL lo = 0, NULL hi = the dim
 * size. 'cond' is a uniform scalar condition (an IR i1 value) that, when false,
 * makes the whole region empty; IR_NONE when not used. */
typedef struct Region {
    int rank;
    const AExpr *lo[IR_MAX_RANK], *hi[IR_MAX_RANK];
    IrRef cond;
} Region;

typedef struct LoPlan LoPlan;

AForm *lp_aform(LoPlan *p, IrRef v);                  /* integer values; NULL: not affine */
PtrForm *lp_ptrform(LoPlan *p, IrRef v);              /* NULL: block pointer or unknown */
bool lp_form_has_wrap(const AForm *f);
/* Mask analysis: fills r (rank of the mask) and returns 0, or -1 when the mask is
 * not a conjunction of affine bounds. */
int lp_mask_region(LoPlan *p, IrRef mask, Region *r);
/* Boundary-check region of block pointer bp over the dims listed in checks. */
void lp_bptr_region(LoPlan *p, const BlockPtr *bp, const int64_t *checks, int nchecks, Region *r);
/* Element-offset form of a block pointer's tile: base + sum_k stride_k (off_k + i_k). */
void lp_bptr_form(LoPlan *p, const BlockPtr *bp, AForm *out);

/* ---- lo_plan_cost.c: static cost ----
 * Bytes and flops of one program instance, kept per loop: the cost of loop L's
 * body runs trips(L) times for each run of L's parent. */
typedef struct LpLoop {
    const IrOp *op;      /* scf.for / scf.while */
    int parent;          /* enclosing loop, -1: the kernel body */
    const AExpr *lb, *ub, *step; /* scf.for bounds; NULL for while loops */
    int64_t trips;       /* constant trip count, -1 when it depends on run-time values */
    int is_signed;       /* integer type of the bounds is signed */
} LpLoop;

typedef struct LpCostCell {
    uint64_t bytes_loaded, bytes_stored;
    double flops[3];     /* fp16(+bf16), fp32, fp64 */
} LpCostCell;

/* Cost inside in-kernel scopes: ops of loop 'loop' run while the scopes of 'scopes'
 * (bit = scope id) are open; each scope's cost is the sum of the cells naming it, so
 * an outer scope's cost includes its nested scopes'. */
typedef struct LpScopeCell {
    int loop;
    uint64_t scopes;
    LpCostCell c;
} LpScopeCell;

/* Trip count of loop l with the given leaf values: ceil((ub - lb) / step), 0
 * when ub <= lb; -1 when a bound is unknown (a while loop, a bound computed at
 * run time from something other than the leaves). */
int64_t lp_loop_trips(const LpLoop *l, AxLeafFn val, void *user);

/* ---- lo_plan.c: the plan ---- */

typedef enum LpKind {
    LP_NONE,
    LP_SCALAR,   /* scalar SSA value (int, float, bool) */
    LP_TILE,     /* element-wise tile: evaluated inside the generic of each consumer */
    LP_LOAD,     /* tile load: its consumers read it through a view (see LpVal.mat) */
    LP_TENSOR,   /* tile materialised where it is defined (dot, reduce, shape ops,
                    atomics, loop-carried and branch tiles) */
    LP_PTR,      /* pointer or tile of pointers: PtrForm */
    LP_BPTR,     /* block pointer: BlockPtr */
    LP_PACKED,   /* reserved: packed 4-D tile (smt.view) */
    LP_DESC,     /* reserved: tensor descriptor */
    LP_KIND_COUNT
} LpKind;

/* Where a tile load is read. ORDER LP_MAT (lp_mat_name). */
typedef enum LpMat {
    LM_LAZY,     /* by each consumer, through a strided view, where the consumer is */
    LM_WRITE,    /* snapshot where it stands: a memory write lies between the load and
                    a later use, and a load may not move past a store */
    LM_LOOP,     /* snapshot where it stands: used inside a deeper loop */
    LM_ALIAS,    /* snapshot where it stands: fused into a store to the same argument
                    through another element map (the store would overwrite elements
                    the fused loop has yet to read) */
    LM_WRAP,     /* copied into a tile where it stands: a wrap-around dim (two views) */
    LM_GATHER,   /* read element by element where it stands: pointer or mask not analysable */
    LM_COUNT
} LpMat;

/* How a load, store or atomic reaches memory. */
typedef enum LpAccess {
    LA_SCALAR,   /* one element through a scalar pointer */
    LA_VIEW,     /* a strided view of the valid region (pointer tile or block pointer) */
    LA_WRAP,     /* two strided views: one dim wraps around */
    LA_GATHER,   /* addresses and guards computed per element */
} LpAccess;

typedef struct LpVal {
    uint8_t kind;        /* LpKind */
    uint8_t mat;         /* LpMat, LP_LOAD */
    uint8_t depth;       /* loop depth of the definition */
    uint8_t use_depth;   /* deepest loop depth of a use (through lazy users) */
    uint8_t shared;      /* LP_TILE: materialised where it is defined (lo_plan_share.c) */
    uint32_t def_pos;    /* pre-order position of the defining op (0: parameters) */
    uint32_t last_use;   /* last position the value is read at, through lazy users
                            and views, and to the end of a loop for uses inside it */
} LpVal;

/* A tl.dot as the emitter writes it (docs/compiler.md §2.6): B packed into
 * [N/nr, K, nr] panels of the accumulator's type, A read where it is or copied
 * dense in the accumulator's type, and an mr x nr register block of C carried
 * over single k steps (the micro-kernel). */
typedef struct LpDot {
    const IrOp *op;
    int mr, nr;          /* register block: mr rows of C, nr columns (a multiple of
                            the vector length, or a part of one) */
    int acc;             /* accumulator dtype (IrDtype) */
    uint8_t a_copy;      /* A is copied into a dense acc-typed tile first (a padded
                            or partial load, another element type) */
    uint8_t bf16_pairs;  /* bf16 x bf16 -> fp32 on the target's pair dot product
                            (vdpbf16ps): A stays bf16, B is packed as [N/nr, K/2, nr, 2] */
} LpDot;

typedef struct LpMem {
    const IrOp *op;
    uint8_t access;      /* LpAccess */
    uint8_t has_region;  /* reg is valid (LA_VIEW, LA_WRAP) */
    uint8_t pad_uniform; /* loads: padding value is uniform (constant, splat, block ptr) */
    uint8_t repeats;     /* stores: a dim with stride 0 (several lanes, one address) */
    int param;           /* kernel argument reached, -1 when unknown */
    Region reg;          /* valid region in tile dims */
    AForm form;          /* element offset (LA_VIEW: the tile's affine map) */
} LpMem;

/* A plan of one kernel function. Owned by the caller: lp_plan_destroy(). Pure:
 * it never writes text; diagnostics go to the module. */
LoPlan *lp_plan_create(IrModule *m, IrFunc *f, const LoOptions *opt);
void lp_plan_destroy(LoPlan *p);
int lp_plan_failed(const LoPlan *p);           /* an error diagnostic was added */
LoExprs *lp_exprs(LoPlan *p);
const LpVal *lp_val(const LoPlan *p, IrRef v);
const LpMem *lp_mem(const LoPlan *p, const IrOp *op);   /* loads, stores, atomics */
BlockPtr *lp_bptr(LoPlan *p, IrRef v);                  /* LP_BPTR values */
const LpLoop *lp_loop(const LoPlan *p, const IrOp *op); /* scf.for / scf.while */
const LpDot *lp_dot(const LoPlan *p, const IrOp *op);   /* tt.dot */
/* Extra bases, addressed as kernel arguments numbered after the real ones
 * (PtrForm.param = nparams + index): program-local buffers (smt.alloc) and
 * run-time addresses (tt.int_to_ptr), which may point into any argument. */
typedef enum LpBaseKind {
    LPB_ARG,             /* a kernel parameter */
    LPB_LOCAL,           /* smt.alloc: a memref.alloc where it stands */
    LPB_ADDRESS,         /* tt.int_to_ptr of a scalar: a memref at that address */
    LPB_ADDRESSES,       /* tt.int_to_ptr of a tile: no memref, each element gathers */
    LPB_RECAST,          /* tt.bitcast to another element type: a memref of that type
                            at the source's address (its base plus the base offset) */
} LpBaseKind;
int lp_num_locals(const LoPlan *p);                     /* extra bases */
int lp_base_kind(const LoPlan *p, int param);           /* LpBaseKind */
/* May base 'param' be memory that another base reaches (a run-time address)? */
bool lp_base_is_address(const LoPlan *p, int param);
/* Is region r the whole tile (no bound, no condition)? */
bool lp_region_is_full(const Region *r);
int lp_num_loops(const LoPlan *p);
const LpLoop *lp_loop_at(const LoPlan *p, int i);
/* Tiles materialised at in-kernel scope boundary 'rec' (a proton.record), so the
 * scope measures their work; n set to the count. */
const IrRef *lp_barrier(const LoPlan *p, const IrOp *rec, uint32_t *n);
int lp_scope_id(const LoPlan *p, const IrOp *rec);      /* proton.record -> scope id */
/* The kernel's static cost per program instance: trip counts that are constant
 * multiply, the others count once and clear 'exact'. */
void lp_cost(const LoPlan *p, IrCost *out);
/* The same with every trip count evaluated from leaf values (kernel arguments,
 * program ids: val(user, ir_value, &ok)); returns -1 when some trip count could
 * not be evaluated (it then counts once). */
int lp_cost_eval(const LoPlan *p, AxLeafFn val, void *user, IrCost *out);
/* The trip-count program of the cost (docs/compiler.md, "static cost"): every
 * loop's bounds over kernel parameters, program ids and grid sizes, and every
 * cost cell, as text the runtime evaluates at launch. Writes "" and returns 0
 * when every trip count is constant (the static cost is exact) or the text
 * does not fit in cap bytes; else returns its length. */
size_t lp_cost_program(const LoPlan *p, char *buf, size_t cap);
/* The cost cell of loop index l (-1: the kernel body, outside every loop). */
const LpCostCell *lp_cost_cell(const LoPlan *p, int l);
const char *lp_kind_name(int k);
const char *lp_mat_name(int m);
/* Does the valid region 'lr' of a load, seen through dim map dm (load dim ->
 * iteration dim, -1: broadcast), equal the iteration region 'ir'? Then the
 * consumer reads the load's view directly. */
bool lp_region_covers(const Region *lr, const int8_t *dm, const Region *ir);

/* ---- plan-internal: shared by lo_plan*.c only ---- */
typedef struct LpOpSlot {
    const IrOp *op;
    uint32_t idx;        /* into mems / loops / barriers, per kind */
} LpOpSlot;

typedef struct LpBarrier {
    const IrOp *op;
    int scope_id;
    IrRef *vals;
    uint32_t n;
} LpBarrier;

struct LoPlan {
    IrModule *m;
    IrFunc *f;
    const LoOptions *opt;
    LoExprs x;
    LpVal *vals;         /* per IR value */
    AForm **aform;       /* per value: affine form cache (aform_done) */
    uint8_t *aform_done;
    PtrForm **ptr;       /* per value: pointer form cache (ptr_done) */
    uint8_t *ptr_done;
    BlockPtr **bp;       /* per value: block pointers */
    LpMem *mems;
    uint32_t nmems, capmems;
    LpLoop *loops;
    int nloops, caploops;
    LpBarrier *barriers;
    uint32_t nbarriers, capbarriers;
    LpDot *dots;
    uint32_t ndots, capdots;
    int nlocals;         /* extra bases (lp_num_locals) */
    uint8_t *base_kind;  /* per extra base: LpBaseKind */
    int capbases;
    LpOpSlot *opmap;     /* open addressing, IrOp* -> index (mems, loops, barriers) */
    uint32_t opcap, nops;
    LpCostCell *cells;   /* cells[l + 1] for loop l, cells[0] the kernel body */
    int ncells;
    LpScopeCell *scells; /* the same cost again per (loop, open in-kernel scopes) */
    int nscells, capscells;
    uint64_t open_scopes; /* walk: in-kernel scope ids open at the current op (bit = id) */
    const char **scope_names;
    int nscopes;
    int err;
};

void lp_cost_add_mem(LoPlan *p, const IrOp *op, bool is_store, int loop);
void lp_cost_add_flops(LoPlan *p, const IrOp *op, int loop);
void lp_cost_add_combine(LoPlan *p, const IrOp *op, int loop);
void lp_cost_add_dot(LoPlan *p, const IrOp *op, int loop);
void lp_cost_init(LoPlan *p);
/* Temporaries up to this size live on the stack (promote-buffers-to-stack in cg_mlir.c) */
#define LO_STACK_TILE_BYTES 65536
void lp_plan_share(LoPlan *p, const IrOp **order, uint32_t nord); /* LpVal.shared */
/* An error diagnostic on module m, and *err set; returns -1. lp_error (plan) and
 * le_error (emitter) are this with their context's module and flag. */
int lo_error(IrModule *m, int *err, IrLoc loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define lp_error(p, ...) lo_error((p)->m, &(p)->err, __VA_ARGS__)

/* ==== emit ===================================================================== */

/* ---- lo_type.c: MLIR types ----
 * One descriptor for every type the lowering writes; lt_str spells it. */
#define LT_DYN INT64_MIN          /* '?' size, stride or offset */
#define LT_INDEX IR_DTYPE_COUNT   /* element type 'index' */
typedef enum LtKind { LT_SCALAR, LT_TENSOR, LT_MEMREF } LtKind;
typedef struct LoType {
    uint8_t kind;                 /* LtKind */
    uint8_t elem;                 /* IrDtype or LT_INDEX */
    uint8_t rank;
    uint8_t strided;              /* memref with a strided<> layout */
    int64_t shape[IR_MAX_RANK];   /* LT_DYN: dynamic */
    int64_t stride[IR_MAX_RANK];  /* memref strides, LT_DYN: dynamic */
    int64_t offset;               /* memref offset, LT_DYN: dynamic */
} LoType;

LoType lt_scalar(int elem);
LoType lt_tensor(int elem, int rank, const int64_t *shape);
/* Storage element of materialised tiles: i1 tiles are stored as i8 bytes. */
int lt_storage_elem(int dtype);
/* The materialised tensor type of IR tile type t (i1 -> i8). */
LoType lt_of_tile(const IrModule *m, IrType t);
const char *lt_elem_name(int elem);          /* "f32", "i8", "index" */
/* Appends the spelling of t to b. */
struct LoBuf;
void lt_print(struct LoBuf *b, const LoType *t);

/* ---- lo_buf.c: text buffer ----
 * SSA values are named %v<N>; lo_emit() writes one "  %vN = <text>" line and
 * returns N, so callers refer to earlier values by number ("%%v%u"). */
typedef struct LoBuf {
    char *p;
    size_t n, cap;
    int indent;          /* spaces before each emitted line */
    unsigned next;       /* next SSA number (when ctr is NULL) */
    unsigned *ctr;       /* shared SSA counter, so several buffers number alike */
} LoBuf;

void lo_buf_init(LoBuf *b);
void lo_buf_fini(LoBuf *b);
void lo_printf(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lo_vprintf(LoBuf *b, const char *fmt, va_list ap);
void lo_append(LoBuf *b, const char *s, size_t n);
unsigned lo_fresh(LoBuf *b);   /* a fresh SSA number (block arguments) */
unsigned lo_emit(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lo_line(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *lo_buf_take(LoBuf *b, size_t *len);   /* malloc'ed, NUL-terminated; b is reset */

/* ---- lo_math.c ----
 * Emits scalar arith code computing fn(args) for float type 'fty' ("f32" or
 * "f64") into b and returns the SSA number of the result, or 0 when fn has no
 * expansion for that type (the caller then emits the math dialect op itself).
 * The code is branch-free so that it vectorises. Covered for f32: EXP, EXP2,
 * EXPM1, LOG, LOG2, LOG10, LOG1P, SIN, COS, TAN, TANH, ERF, ATAN, ASIN, ACOS,
 * SINH, COSH, ASINH, ACOSH, ATANH, CBRT, POWF, ATAN2. */
unsigned lo_math_emit(LoBuf *b, IrOpc fn, const unsigned *args, int nargs, const char *fty);
bool lo_math_expands(IrOpc fn);   /* whether lo_math_emit expands fn for f32 */

/* ---- the emission context (lo_emit*.c) ---- */

typedef struct LeVal {
    unsigned ssa;        /* scalar or materialised tensor; 0: none yet */
    int scope;           /* emission scope of ssa */
    uint8_t as_i8;       /* an i1 tile materialised as i8 */
    unsigned *carry;     /* AK_CARRY slots of a carried pointer / block pointer */
} LeVal;

typedef struct LeMemo {
    unsigned ssa;
    int scope;
} LeMemo;

typedef struct LeCtx {
    IrModule *m;
    IrFunc *f;
    const LoOptions *opt;
    LoPlan *plan;
    LoExprs *x;
    LoBuf *out;          /* where ops are written now */
    LeVal *vals;         /* per IR value */
    unsigned *param_ssa; /* MLIR SSA of each kernel parameter */
    unsigned pid_ssa[3], num_ssa[3], pctx_ssa;
    int *scope_parent;   /* emission scopes (regions): SSA visibility */
    int nscopes, capscopes, scope;
    LeMemo *memo;        /* emitted index value of each AExpr, by id */
    uint32_t capmemo;
    IrArena strs;        /* spelled types */
    int decl_dpbf16;     /* bit 0/1: the 256/512-bit vdpbf16ps is called (declared
                            after the kernel) */
    int decl_prefetch;   /* llvm.prefetch is called (declared after the kernel) */
    int decl_atomic;     /* lo_emit_mem.c: atomic helpers called (bit kind*4 + log2(bytes)),
                            defined after the kernel */
    int debug_used;      /* lo_emit_debug.c: bit 0 tt.print, bit 1 tt.assert met */
    LoBuf debug_globals; /* their descriptor strings, written after the kernel */
    unsigned ndebug_strs;
    int err;
} LeCtx;

/* lo_emit_view.c */
int le_scope_push(LeCtx *c);
void le_scope_pop(LeCtx *c, int saved);
/* An scf.for from lo to hi by step carrying one value (init, of type ty), its body
 * in a new emission scope: le_for_open writes the header and gives the induction
 * variable (iv) and the carried value (carry); le_for_close yields v and returns
 * the loop's result. */
typedef struct LeLoop {
    unsigned res, iv, carry;
    int saved;
} LeLoop;
void le_for_open(LeCtx *c, LeLoop *l, int64_t lo, int64_t hi, int64_t step, unsigned init, const char *ty);
unsigned le_for_close(LeCtx *c, LeLoop *l, unsigned v, const char *ty);
bool le_scope_visible(const LeCtx *c, int s);
#define le_error(c, ...) lo_error((c)->m, &(c)->err, __VA_ARGS__)
const char *le_ty(LeCtx *c, const LoType *t);          /* spelling, owned by the context */
const char *le_tile_ty(LeCtx *c, IrType t);            /* materialised tensor of an IR tile */
const char *le_elem(LeCtx *c, IrType t);               /* MLIR element of an IR type */
unsigned le_index(LeCtx *c, const AExpr *e);           /* SSA of type index, memoised */
unsigned le_const_index(LeCtx *c, int64_t v);
unsigned le_scalar(LeCtx *c, IrRef v);                 /* SSA of an IR scalar */
void le_set_scalar(LeCtx *c, IrRef v, unsigned ssa);
void le_set_tensor(LeCtx *c, IrRef v, unsigned ssa);
/* A strided memref view of kernel argument 'param': element offset 'base' plus
 * sum_k coef[k] * start[k] (start: SSA index or 0), sizes 'size' (SSA index or 0:
 * the static ssize[k]). With allow_unit, dims whose coefficient is the constant 0
 * become size-1 dims (unit[k] set) so the caller broadcasts them. Writes the view
 * type to *vt and returns the view SSA. */
unsigned le_view(LeCtx *c, int param, IrType elem, int rank, const AExpr *base, const AExpr *const *coef,
                 const unsigned *start, const unsigned *size, const int64_t *ssize, bool allow_unit, bool *unit,
                 LoType *vt);
/* Run-time addresses: the bytes of an element of 'elem' (its storage: i1 as i8);
 * memref<?xT> at byte address addr (SSA of type index when is_index, else i64),
 * a descriptor like an argument's (cg_) built in the LLVM dialect and cast;
 * the byte address (index) of base 'param'. */
int le_elem_bytes(const LeCtx *c, IrType elem);
unsigned le_memref_at(LeCtx *c, unsigned addr, bool is_index, IrType elem);
unsigned le_base_address(LeCtx *c, int param, IrType elem);
/* Tensor type of such a view's contents. */
LoType le_view_tensor(IrType elem, const IrModule *m, int rank, const unsigned *size, const int64_t *ssize,
                      const bool *unit);
/* The `attrs = {tritium.kind = "...", tritium.tile = [...]}` of a linalg.generic. */
void le_kind_attrs(LeCtx *c, LoBuf *b, const char *kind, int nt, const int64_t *tile, int64_t lanes);

/* lo_emit_scalar.c */
unsigned le_const(LeCtx *c, int dtype, int64_t iv, double fv);
unsigned le_scalar_op(LeCtx *c, IrOp *op, const unsigned *args);
unsigned le_elem_cast(LoBuf *b, unsigned x, int from, int to); /* element type conversion */

/* lo_emit_generic.c */
typedef struct LoIter {
    int rank;
    int64_t shape[IR_MAX_RANK];      /* tile shape */
    Region reg;                      /* valid region (all NULL: the full tile) */
    unsigned lo[IR_MAX_RANK];        /* SSA (index) of the region start, 0: zero */
    unsigned size[IR_MAX_RANK];      /* SSA (index) of the region size, 0: shape[d] */
} LoIter;
void le_iter(LeCtx *c, const Region *r, int rank, const int64_t *shape, LoIter *it);
LoType le_iter_tensor(const LoIter *it, int elem);
/* A linalg.generic over 'it' computing the element-wise value v into 'outs' (SSA
 * of a tensor of the region shape; 0: a fresh tensor). With dest_val, reads of
 * dest_val at the output index use the output element (in-place update of a
 * loop-carried tile). Returns the result tensor SSA. */
unsigned le_generic(LeCtx *c, const LoIter *it, IrRef v, unsigned outs, const LoType *outs_type, IrRef dest_val);
/* A lazy view load read in place (LA_VIEW, uniform padding, no zero-stride lanes): its
 * valid region as a tensor of the argument's memory (*tt, no padding; *it its iteration
 * space), or 0 when the load is no such view. */
unsigned le_load_view_tensor(LeCtx *c, IrRef v, LoIter *it, LoType *tt);

/* lo_emit_touch.c: a scope boundary reads the lazy view load v without copying it
 * (docs/compiler.md §2.1); false when v is no in-place view (the caller snapshots it). */
bool le_load_touch(LeCtx *c, IrRef v);
unsigned le_materialize(LeCtx *c, IrRef v);            /* full-tile tensor SSA */
/* The vector accumulator of a row reduction over a static extent e, a multiple of
 * the vector length vl: 4, 2 or 1 vectors, whichever divides e; 0 for one chunk. */
int64_t le_reduction_lanes(int64_t e, int vl);
/* A linalg.generic reducing tile v along 'axis' with the combine ops of region
 * (one operand), from init (tensor of the result shape). */
unsigned le_generic_reduce(LeCtx *c, IrRef v, int axis, IrBlock *region, unsigned init, const LoType *init_type,
                           bool simple_combiner);
/* tensor<shape x index> of the element offsets of a (gathered) pointer tile. */
unsigned le_offsets_tensor(LeCtx *c, IrRef ptr, const PtrForm *pf);
/* The tritium.tile of an element-wise generic over an iteration space of the
 * given shape (LT_DYN: dynamic): outer dims by one, the innermost by the vector
 * length, untiled when its static extent fits one vector. Returns rank. */
int le_elementwise_tile(const LeCtx *c, int rank, const int64_t *shape, int elem_bytes, int64_t *tile);
/* A fresh tensor of type t that the code generator never merges with a store's
 * destination (bufferization.alloc_tensor). */
unsigned le_alloc_tensor(LeCtx *c, const LoType *t);
/* The tile load v copied into a fresh buffer where it stands (snapshot, wrap-around). */
unsigned le_load_snapshot(LeCtx *c, IrRef v);
/* A dense full tile of v in element type elem (a dot operand): a tile load not yet
 * read is copied into a buffer at memref level (le_load_packed: padded edges),
 * anything else is materialised (and converted by a copy when its type differs). */
unsigned le_dense_tile(LeCtx *c, IrRef v, int elem);
/* The tile load v, not yet read, copied into a fresh buffer of element type elem in
 * the layout of a packed operand: the tile's last dim split by nr (0: not split),
 * the dims in the order perm (buffer dim j = expanded tile dim perm[j]; NULL: in
 * order). A tile whose valid region is whole (checked at run time) is copied straight
 * from memory in one pass; an edge tile goes through a padded dense copy. Returns
 * the tensor SSA and, when pt is not NULL, its type. NULL when v is not such a load. */
unsigned le_load_packed(LeCtx *c, IrRef v, int elem, int nr, const int8_t *perm, LoType *pt);
bool le_load_is_packable(LeCtx *c, IrRef v);
/* tensor.expand_shape (memref.expand_shape for an identity-layout memref) of x (type
 * bt) splitting its last dim by nr; writes the result type */
unsigned le_expand_last(LeCtx *c, unsigned x, const LoType *bt, int nr, LoType *xt);
/* dst = cast(src) as an all-parallel "pack" generic into a fresh tensor of type dt;
 * 'in' is the input's indexing map: for each src dim, the dst dim indexing it
 * (-1 ends). */
unsigned le_pack_copy(LeCtx *c, unsigned src, const LoType *st, const int *in, const LoType *dt);

/* lo_emit_mem.c */
int le_load(LeCtx *c, IrOp *op);     /* scalar loads; tile loads (lazy or snapshot) */
int le_store(LeCtx *c, IrOp *op);
int le_atomic(LeCtx *c, IrOp *op);

/* lo_emit_compute.c */
int le_dot(LeCtx *c, IrOp *op);
unsigned le_fill(LeCtx *c, const LoType *t, unsigned x); /* a tensor of type t filled with scalar x */
int le_dot_pairs(LeCtx *c, IrOp *op, const LpDot *pd); /* lo_emit_dot_pairs.c */

/* lo_emit_prefetch.c: a dot operand's next tile in a K loop (the tile moved by its
 * K extent along K), prefetched a share of its rows at a time. */
typedef struct LePrefetch {
    unsigned ptr;        /* SSA index: the kernel argument's aligned pointer */
    int esize;           /* element bytes */
    unsigned base;       /* SSA index: element offset of the next tile's origin */
    unsigned rstride;    /* SSA index: element stride between its rows */
    int64_t rows;        /* rows (the dim that is not contiguous) */
    int64_t lpr, step;   /* cache lines per row, elements per line */
} LePrefetch;
/* Plans the prefetch of load v's next tile (kdim: v's K dim, kext its extent),
 * emitting the base offset at the current point; false when v is not a load of a
 * strided 2-D view with a contiguous dim. */
bool le_prefetch_plan(LeCtx *c, IrRef v, int kdim, int64_t kext, LePrefetch *p);
/* Prefetches share 'part' (SSA index; 0: all rows) of 'parts' of the rows. */
void le_prefetch_rows(LeCtx *c, const LePrefetch *p, unsigned part, int64_t parts);
int le_reduce(LeCtx *c, IrOp *op);
int le_scan(LeCtx *c, IrOp *op);

/* lo_emit_debug.c: tt.print and tt.assert as runtime calls, and the module-level
 * globals they need (written after the kernel function) */
int le_debug_op(LeCtx *c, IrOp *op);
void le_debug_globals(LeCtx *c, LoBuf *o);
void le_atomic_helpers(LeCtx *c, LoBuf *o);

/* lo_emit_scan.c: scans and reductions the vectorised path does not take */
int le_sequential_combine(LeCtx *c, IrOp *op, bool scan);
int le_shape_op(LeCtx *c, IrOp *op); /* reshape, cat, join, split */

#endif /* LO_INT_H */
