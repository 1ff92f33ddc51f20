/*
 * ir_int.h — internal structures of the tile IR, and the index of compiler/src.
 *
 * In the style of QBE's all.h: every IR struct is here, and each .c file's
 * cross-file functions are declared below under a comment naming the file.
 *
 * Shape of the IR. A module owns one arena; every object of a compile (types,
 * strings, functions, blocks, ops, values) lives in it and is freed wholesale by
 * ir_module_destroy(), so passes never free. Values are IrRef indices into the
 * function's value table (fn->vals, fn->nvals); index 0 is the "no value" ref.
 * Ops sit on a doubly linked list per block; nested regions are single blocks
 * (every structured op in Triton has single-block regions). Types are interned
 * IrType indices into the module's type table, so type equality is ==.
 *
 * Signedness lives in scalar types (IR_U32 vs IR_I32) for the front end's type
 * rules only; it prints as MLIR's signless iN. After the builder, passes and the
 * lowering must read signedness from the opcode (divsi/divui, extsi/extui ...),
 * never from a type.
 */
#ifndef IR_INT_H
#define IR_INT_H

#include "compiler.h"
#include "ir_ops.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- arena (ir_arena.c) -------------------------------------------------------- */

typedef struct IrArenaChunk IrArenaChunk;
typedef struct IrArena {
    IrArenaChunk *head;
    size_t used_total;
} IrArena;

void *ir_arena_alloc(IrArena *a, size_t n);          /* zeroed, 16-byte aligned */
void *ir_arena_grow(IrArena *a, void *p, size_t old, size_t n); /* copy to a larger block */
char *ir_arena_strdup(IrArena *a, const char *s, size_t n);
void ir_arena_fini(IrArena *a);
/* typed helpers */
#define ir_new(a, T) ((T *)ir_arena_alloc((a), sizeof(T)))
#define ir_newv(a, T, n) ((T *)ir_arena_alloc((a), sizeof(T) * (size_t)(n)))

/* ---- types (ir_type.c) ------------------------------------------------------------ */

typedef enum IrTypeKind { IR_TK_NONE, IR_TK_SCALAR, IR_TK_PTR, IR_TK_TENSOR } IrTypeKind;

typedef struct IrTypeInfo {
    uint8_t kind;     /* IrTypeKind */
    uint8_t dtype;    /* IrDtype, for scalars */
    uint8_t rank;     /* tensors */
    uint8_t addrspace;/* pointers: 1 for block pointers / smt local buffers */
    IrType elem;      /* pointer: pointee type; tensor: element type (scalar or ptr) */
    int64_t shape[IR_MAX_RANK];
} IrTypeInfo;

/* The module's interned type table. Scalar types for every IrDtype are created
 * first, so ir_type_scalar() is an array lookup. */
typedef struct IrTypeTable {
    IrTypeInfo *v;
    uint32_t n, cap;
    uint32_t *hash; /* open addressing over v indices, size hcap (power of two) */
    uint32_t hcap;
} IrTypeTable;

const IrTypeInfo *ir_type_info(const IrModule *m, IrType t);
IrType ir_type_intern(IrModule *m, const IrTypeInfo *ti);
int64_t ir_type_numel(const IrModule *m, IrType t);      /* 1 for scalars */
void ir_types_init(IrModule *m);

/* ---- locations and diagnostics ------------------------------------------------- */

typedef struct IrLoc {
    uint32_t file; /* string id in the module (0 = unknown) */
    uint32_t line, col;
} IrLoc;

typedef struct IrDiag {
    IrLoc loc;
    int severity; /* 0 error, 1 warning, 2 remark */
    char *msg;
    struct IrDiag *next;
} IrDiag;

/* ---- values, ops, blocks, functions ---------------------------------------------- */

typedef struct IrOp IrOp;
typedef struct IrBlock IrBlock;
typedef struct IrFunc IrFunc;

typedef struct IrVal {
    IrType type;
    IrOp *def;        /* defining op, or NULL for a block argument */
    IrBlock *blk;     /* block owning the argument (block args only) */
    uint32_t idx;     /* result number, or argument number */
    uint32_t nuse;    /* filled by ir_fill_uses() */
    uint32_t aux;     /* analysis scratch (pass-owned; 0 when unused) */
    uint32_t num;     /* printer numbering scratch */
} IrVal;

struct IrOp {
    uint16_t opc;     /* IrOpc */
    uint16_t mark;    /* pass scratch */
    uint32_t nargs, nres, nregs, nints;
    IrRef *args;
    IrRef *res;
    IrBlock **regs;
    int64_t i[4];     /* small integer attributes (see ir_ops.h per op) */
    double f;         /* float attribute (float constants) */
    const char *s;    /* string attribute (names, messages, callee) */
    int64_t *ints;    /* integer-array attribute (order, boundaryCheck, shapes) */
    IrLoc loc;
    IrOp *prev, *next;
    IrBlock *parent;
};

struct IrBlock {
    IrRef *args;
    uint32_t nargs, capargs;
    IrOp *first, *last;
    IrOp *parent;     /* op owning this region, NULL for the function body */
    IrFunc *fn;
};

typedef struct IrArgAttr {
    int32_t divisibility; /* tt.divisibility, 0 = none */
    bool is_constexpr;    /* never true for IR params; constexprs are folded away */
} IrArgAttr;

struct IrFunc {
    IrModule *mod;
    const char *name;
    bool is_public;       /* the kernel; private functions are noinline helpers */
    IrVal *vals;
    uint32_t nvals, capvals;
    IrBlock *body;        /* body->args are the function parameters */
    IrArgAttr *argattrs;  /* one per parameter */
    IrType *rettypes;
    uint32_t nrets;
    IrLoc loc;
    IrFunc *next;
};

struct IrModule {
    IrArena arena;
    IrTypeTable types;
    const char **strs;    /* interned strings (file names); id 0 = "" */
    uint32_t nstrs, capstrs;
    IrFunc *funcs, *lastfunc;
    IrDiag *diags, *lastdiag;
    uint32_t nerrors;
};

/* ---- core (ir_core.c) -------------------------------------------------------------- */

IrFunc *ir_func_create(IrModule *m, const char *name, bool is_public);
IrRef ir_val_new(IrFunc *f, IrType t);
static inline IrVal *ir_val(IrFunc *f, IrRef r) { return &f->vals[r]; }
static inline IrType ir_val_type(IrFunc *f, IrRef r) { return f->vals[r].type; }
IrRef ir_block_add_arg(IrBlock *b, IrType t);
IrBlock *ir_block_create(IrFunc *f, IrOp *parent);

/* Creates a detached op with nargs operands and nres results of the given types
 * (types may be NULL when nres is 0). Attach it with ir_block_append/insert. */
IrOp *ir_op_create(IrFunc *f, IrOpc opc, const IrRef *args, uint32_t nargs,
                   const IrType *restypes, uint32_t nres, uint32_t nregs);
void ir_block_append(IrBlock *b, IrOp *op);
void ir_op_insert_before(IrOp *pos, IrOp *op);
void ir_op_insert_after(IrOp *pos, IrOp *op);
void ir_op_unlink(IrOp *op);              /* detach; the op stays valid */
void ir_op_set_ints(IrFunc *f, IrOp *op, const int64_t *v, uint32_t n);
IrRef ir_op_result(const IrOp *op, uint32_t i);
/* Replaces every use of 'from' by 'to' inside f (all nested blocks). */
void ir_replace_uses(IrFunc *f, IrRef from, IrRef to);
uint32_t ir_str_intern(IrModule *m, const char *s);
const char *ir_str(const IrModule *m, uint32_t id);
void ir_diag(IrModule *m, IrLoc loc, int severity, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ir_vdiag(IrModule *m, IrLoc loc, int severity, const char *fmt, va_list ap);
extern const char *const ir_opc_name[IR_OPC_COUNT];
extern const int8_t ir_opc_nargs[IR_OPC_COUNT];
extern const int8_t ir_opc_nres[IR_OPC_COUNT];
extern const uint8_t ir_opc_flags[IR_OPC_COUNT];
extern const uint8_t ir_opc_fmt[IR_OPC_COUNT];
IrOpc ir_opc_lookup(const char *name, size_t n); /* IR_OPC_COUNT if unknown */

/* Walks every op of a block and its nested blocks in pre-order. */
typedef void (*IrOpVisit)(IrOp *op, void *user);
void ir_walk(IrBlock *b, IrOpVisit visit, void *user);

/* Recomputes IrVal.nuse for every value of f. */
void ir_fill_uses(IrFunc *f);

/* Broken invariant: prints file:line and the message, then aborts. */
_Noreturn void ir_die_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define ir_die(...) ir_die_at(__FILE__, __LINE__, __VA_ARGS__)

/* ---- printer and parser (ir_print.c, ir_parse.c) ------------------------------- */

/* Enumerated attributes (IrOp.i[] slots, see ir_ops.h). The numeric values are
 * ours; the text spellings (ir_*_name below, defined in ir_print.c) are MLIR's
 * and Triton's. ORDER IR_CMPI etc.: each name table follows its enum. */
typedef enum IrCmpi {
    IR_CMPI_EQ, IR_CMPI_NE, IR_CMPI_SLT, IR_CMPI_SLE, IR_CMPI_SGT, IR_CMPI_SGE,
    IR_CMPI_ULT, IR_CMPI_ULE, IR_CMPI_UGT, IR_CMPI_UGE, IR_CMPI_COUNT
} IrCmpi;
typedef enum IrCmpf {
    IR_CMPF_FALSE, IR_CMPF_OEQ, IR_CMPF_OGT, IR_CMPF_OGE, IR_CMPF_OLT, IR_CMPF_OLE,
    IR_CMPF_ONE, IR_CMPF_ORD, IR_CMPF_UEQ, IR_CMPF_UGT, IR_CMPF_UGE, IR_CMPF_ULT,
    IR_CMPF_ULE, IR_CMPF_UNE, IR_CMPF_UNO, IR_CMPF_TRUE, IR_CMPF_COUNT
} IrCmpf;
typedef enum IrRmw {  /* "and" ... "exch" (Triton's RMWOp spellings; xchg = exch) */
    IR_RMW_AND, IR_RMW_OR, IR_RMW_XOR, IR_RMW_ADD, IR_RMW_FADD, IR_RMW_MAX, IR_RMW_MIN,
    IR_RMW_UMAX, IR_RMW_UMIN, IR_RMW_XCHG, IR_RMW_COUNT
} IrRmw;
/* Defaults are 0 so that zeroed ops mean Triton's defaults (acq_rel, gpu). */
typedef enum IrSem { IR_SEM_ACQ_REL, IR_SEM_ACQUIRE, IR_SEM_RELEASE, IR_SEM_RELAXED, IR_SEM_COUNT } IrSem;
typedef enum IrScope { IR_SCOPE_GPU, IR_SCOPE_CTA, IR_SCOPE_SYS, IR_SCOPE_COUNT } IrScope;
typedef enum IrPrecision { IR_PREC_TF32, IR_PREC_TF32X3, IR_PREC_IEEE, IR_PREC_COUNT } IrPrecision;

/* ir_print.c */
extern const char *const ir_cmpi_name[IR_CMPI_COUNT];   /* "eq", "slt", ... */
extern const char *const ir_cmpf_name[IR_CMPF_COUNT];   /* "false", "oeq", ... */
extern const char *const ir_rmw_name[IR_RMW_COUNT];     /* "and", ..., "exch" */
extern const char *const ir_sem_name[IR_SEM_COUNT];     /* "acq_rel", ... */
extern const char *const ir_scope_name[IR_SCOPE_COUNT]; /* "gpu", "cta", "sys" */
extern const char *const ir_prec_name[IR_PREC_COUNT];   /* "tf32", "tf32x3", "ieee" */
/* Index of the n-byte word s in names[0..count), or -1. */
int ir_name_lookup(const char *const *names, int count, const char *s, size_t n);
/* ir_print_module(): see compiler.h. */
void ir_print_func(FILE *out, IrFunc *f, unsigned flags);
void ir_print_type(FILE *out, const IrModule *m, IrType t);
/* Writes a float constant of scalar dtype d so that it parses back exactly:
 * "%.6e" when that round-trips at d's precision, else MLIR's hex bit pattern. */
void ir_print_float(FILE *out, double v, IrDtype d);
/* Rounds v to the precision of float dtype d (f16/bf16/f32: round to nearest even). */
double ir_float_round(double v, IrDtype d);
/* IEEE bit pattern of v rounded to d's precision (nearest even), and back. */
uint64_t ir_float_bits(double v, IrDtype d);
double ir_float_from_bits(uint64_t b, IrDtype d);
/* Sign-extends the low bits of v for an integer dtype d (i1 gives 0 or 1). */
int64_t ir_int_norm(int64_t v, IrDtype d);

/* ---- verifier (ir_verify.c) ----------------------------------------------------- */

/* Returns 0 when f is well formed; otherwise adds an error diagnostic per problem
 * and returns the number of problems. */
int ir_verify_func(IrFunc *f);

/* ---- passes (one file each) ------------------------------------------------------- */

void ir_canonicalize(IrFunc *f); /* ir_canon.c: fold constants, simplify, Requires: - */
void ir_cse(IrFunc *f);          /* ir_cse.c: merge identical pure ops, Requires: - */
void ir_dce(IrFunc *f);          /* ir_dce.c: remove unused pure ops, Requires: - */
void ir_accum(IrFunc *f);        /* ir_accum.c: reduce-after-loop tiles carried reduced, Requires: - */
void ir_ptr_carry(IrFunc *f);    /* ir_ptrcarry.c: if/else and gathered loop pointers carried as addresses, Requires: - */
bool ir_layout(IrFunc *f);       /* ir_layout.c: fold and sink trans/reshape; true if changed */

/* ir_pipeline.c */
/* ir_pipeline_run() (compiler.h) with a choice of dumps: which = NULL or "all"
 * dumps after every pass, a pass name after that pass only, "input" the
 * verified input. Returns 0 or the number of errors. */
int ir_pipeline_run_dump(IrModule *m, FILE *dump, const char *which);
bool ir_pipeline_has_pass(const char *name); /* a valid 'which' */

#endif /* IR_INT_H */
