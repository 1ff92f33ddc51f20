/*
 * compiler.h — Tritium's kernel compiler: tile IR, front-end builder, passes,
 * lowering to Linalg MLIR and native code generation.
 *
 * Callers: python/src (the front end walks a kernel's Python AST and calls the
 * builder; then runs the pipeline), compiler/tools/tritium_opt.c, tests.
 *
 * Data flow: builder (or the TTIR parser) -> IrModule -> ir_pipeline_run()
 * (canonicalize, CSE, DCE, verify, analyses) -> lo_lower_module() (Linalg MLIR
 * text) -> cg_compile() (MLIR 19 + LLVM 19 C APIs: object, shared library). The
 * compile driver (driver.h) runs that sequence from TTIR text for Python and
 * tritium-opt.
 *
 * Ownership: an IrModule owns everything built into it (one arena); destroy it with
 * ir_module_destroy(). Strings returned by "get" functions are borrowed from the
 * module. Builders are owned by the caller (ir_builder_destroy).
 * Thread safety: a module and its builder are used by one thread at a time;
 * different modules are independent.
 * Errors: user mistakes (bad kernel code, bad IR text) become diagnostics on the
 * module and the call returns failure (IR_NONE, NULL or nonzero); the library
 * never exits the process.
 */
#ifndef TRITIUM_COMPILER_H
#define TRITIUM_COMPILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRITIUM_VERSION "0.1.0"

typedef struct IrModule IrModule;
typedef struct IrBuilder IrBuilder;
typedef uint32_t IrRef;  /* a value in the function being built; IR_NONE = none */
typedef uint32_t IrType; /* an interned type of the module */
#define IR_NONE 0u
#define IR_MAX_RANK 16 /* dims of a tensor type (upstream has no limit; its suite reshapes to 9) */

/* ---- element types ---- ORDER IR_DTYPE (Python reads them from _C.DTYPES) ------- */
typedef enum IrDtype {
    IR_I1, IR_I8, IR_I16, IR_I32, IR_I64,
    IR_U8, IR_U16, IR_U32, IR_U64,
    IR_F16, IR_BF16, IR_F32, IR_F64,
    /* 8-bit floats (Triton's names): e4m3fn, e5m2, e4m3 bias 15, e4m3fnuz, e5m2fnuz.
     * Neither float nor int: they are stored as i8 and only moved, selected and
     * bitcast; casts and arithmetic widen them in the builder (ir_build_fp8.c). */
    IR_F8E4NV, IR_F8E5, IR_F8E4B15, IR_F8E4B8, IR_F8E5B16,
    IR_DTYPE_COUNT
} IrDtype;

const char *ir_dtype_name(IrDtype d);     /* "int32", "fp16", ... (Triton's names) */
const char *ir_dtype_mlir(IrDtype d);     /* "i32", "f16", ... (fp8: their storage, "i8") */
const char *ir_dtype_ttir(IrDtype d);     /* the TTIR spelling: as mlir, fp8 "f8E4M3FN" ... */
int ir_dtype_bits(IrDtype d);
bool ir_dtype_is_float(IrDtype d);        /* fp16, bf16, fp32, fp64 (not the fp8s) */
bool ir_dtype_is_int(IrDtype d);          /* includes i1 */
bool ir_dtype_is_fp8(IrDtype d);
/* An fp8 format's parameters: exponent and mantissa bits, exponent bias and its
 * special values (IR_FP8_IEEE: all-ones exponent is inf/NaN; IR_FP8_FN: only
 * S.1111.111 is NaN, no inf; IR_FP8_FNUZ: only 0x80 is NaN, no inf, no -0). */
enum { IR_FP8_IEEE, IR_FP8_FN, IR_FP8_FNUZ };
typedef struct IrFp8Format { int ebits, mbits, bias, kind; } IrFp8Format;
const IrFp8Format *ir_fp8_format(IrDtype d); /* NULL for other dtypes */
bool ir_dtype_is_signed(IrDtype d);       /* signed ints (not i1) */
/* Bit patterns of v rounded to the nearest fp16 / bf16, ties to even, in one step
 * from double (no double rounding through float): overflow gives infinity,
 * subnormals are kept, a NaN gives a quiet NaN of the same sign (bf16 keeps the
 * top payload bits). The one conversion of the printer, the lowering's constants
 * and the launcher's scalar arguments. */
uint16_t ir_f16_bits(double v);
uint16_t ir_bf16_bits(double v);

/* ---- modules and types ----------------------------------------------------------- */

IrModule *ir_module_create(void);        /* caller owns; ir_module_destroy() */
void ir_module_destroy(IrModule *m);

IrType ir_type_scalar(IrModule *m, IrDtype d);
IrType ir_type_ptr(IrModule *m, IrType pointee, int addrspace);
IrType ir_type_tensor(IrModule *m, IrType elem, int rank, const int64_t *shape);
bool ir_type_is_tensor(const IrModule *m, IrType t);
bool ir_type_is_ptr(const IrModule *m, IrType t);   /* scalar pointer (incl. block ptr) */
int ir_type_rank(const IrModule *m, IrType t);       /* 0 for non-tensors */
const int64_t *ir_type_shape(const IrModule *m, IrType t);
/* Scalar element of a tensor (or the type itself). */
IrType ir_type_elem(const IrModule *m, IrType t);
/* The dtype of a scalar type, or -1 for pointers. */
int ir_type_dtype(const IrModule *m, IrType t);
/* Pointee of a pointer type (scalar ptr or block ptr), else 0. */
IrType ir_type_pointee(const IrModule *m, IrType t);
/* Writes the MLIR spelling ("tensor<128x!tt.ptr<f32>>"); returns the length. */
size_t ir_type_str(const IrModule *m, IrType t, char *buf, size_t cap);

/* ---- diagnostics ------------------------------------------------------------------ */

int ir_module_num_errors(const IrModule *m);
/* Writes every diagnostic as "file:line:col: error: message\n" to out. */
void ir_module_print_diags(const IrModule *m, FILE *out);
/* First error message (without location) and its location; NULL when none. */
const char *ir_module_first_error(const IrModule *m, const char **file, int *line, int *col);
void ir_module_clear_diags(IrModule *m);
/* Diagnostics one by one (severity 0 error, 1 warning, 2 remark); strings are
 * borrowed from the module. i counts from 0; NULL past the end. */
const char *ir_module_diag(const IrModule *m, int i, int *severity, const char **file, int *line, int *col);

/* ---- text form (TTIR) --------------------------------------------------------------- */

enum { IR_PRINT_LOCS = 1u }; /* print loc("file":line:col) after ops */
void ir_print_module(FILE *out, IrModule *m, unsigned flags);
/* Parses TTIR text into a new module; on failure returns NULL and writes
 * "name:line:col: message" plus the source line to err (if non-NULL). */
IrModule *ir_parse_module(const char *text, size_t len, const char *name, FILE *err);

/* ---- front-end builder ---------------------------------------------------------------- */
/*
 * Mirrors Triton's language semantics: every function checks types and shapes,
 * applies broadcasting and Triton's promotion rules, and either returns the new
 * value or IR_NONE after recording an error (ir_builder_error()). Operands that
 * come from Python literals are passed as IrOperand so the literal rules apply
 * (a Python int next to an int16 tensor stays int16, and so on).
 */
typedef enum IrOperandKind { IR_OPND_VALUE, IR_OPND_INT, IR_OPND_FLOAT, IR_OPND_BOOL } IrOperandKind;
typedef struct IrOperand {
    IrOperandKind kind;
    IrRef ref;      /* IR_OPND_VALUE */
    int64_t i;      /* IR_OPND_INT / BOOL; for ints > INT64_MAX see 'u' */
    uint64_t u;     /* IR_OPND_INT when is_u64 */
    bool is_u64;
    double f;       /* IR_OPND_FLOAT */
} IrOperand;

static inline IrOperand ir_opnd(IrRef r) { IrOperand o = {IR_OPND_VALUE, r, 0, 0, false, 0}; return o; }

typedef enum IrBinop {
    IR_B_ADD, IR_B_SUB, IR_B_MUL, IR_B_TRUEDIV, IR_B_FLOORDIV, IR_B_MOD,
    IR_B_AND, IR_B_OR, IR_B_XOR, IR_B_SHL, IR_B_SHR,
    IR_B_LT, IR_B_LE, IR_B_GT, IR_B_GE, IR_B_EQ, IR_B_NE,
    IR_B_LOGICAL_AND, IR_B_LOGICAL_OR,
    IR_B_MAXIMUM, IR_B_MINIMUM,   /* tl.maximum/minimum, NaN not propagated */
    IR_B_MAXIMUM_NAN, IR_B_MINIMUM_NAN, /* propagate_nan=ALL */
    IR_B_FDIV,                    /* tl.fdiv (float only, no int promotion) */
    IR_B_UMULHI, IR_B_POW, IR_B_ATAN2, IR_B_COPYSIGN,
    IR_BINOP_COUNT
} IrBinop;

typedef enum IrUnop { IR_U_NEG, IR_U_PLUS, IR_U_INVERT, IR_U_NOT } IrUnop;

typedef enum IrPadding { IR_PAD_NONE, IR_PAD_ZERO, IR_PAD_NAN, IR_PAD_NEG_INF, IR_PAD_INF } IrPadding;
typedef enum IrReduceKind {
    IR_RED_SUM, IR_RED_MAX, IR_RED_MIN, IR_RED_ARGMAX, IR_RED_ARGMIN,
    IR_RED_XOR_SUM, IR_RED_PROD, IR_RED_AND, IR_RED_OR
} IrReduceKind;

IrBuilder *ir_builder_create(IrModule *m);   /* caller owns; ir_builder_destroy() */
void ir_builder_destroy(IrBuilder *b);
IrModule *ir_builder_module(IrBuilder *b);
/* Location attached to everything built next; 'file' is copied (interned). */
void ir_builder_set_loc(IrBuilder *b, const char *file, int line, int col);
/* Message of the last failure (borrowed; valid until the next builder call). */
const char *ir_builder_error(IrBuilder *b);
/* Records a front-end error at the current location (used by the Python walker so
 * every error shares one format). Returns IR_NONE. */
IrRef ir_builder_fail(IrBuilder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Functions. Parameter types are scalar types or pointer types; divisibility is
 * the tt.divisibility hint (16 or 0). */
int ir_b_func_begin(IrBuilder *b, const char *name, bool is_public, int nparams,
                    const IrType *ptypes, const int32_t *divisibility);
IrRef ir_b_param(IrBuilder *b, int i);
int ir_b_func_end(IrBuilder *b);  /* appends tt.return; returns 0 or -1 */
IrType ir_b_type(IrBuilder *b, IrRef v);

/* Constants and tile creation. */
IrRef ir_b_const(IrBuilder *b, IrOperand lit, int dtype /* -1: literal's default */);
IrRef ir_b_program_id(IrBuilder *b, int axis);
IrRef ir_b_num_programs(IrBuilder *b, int axis);
IrRef ir_b_arange(IrBuilder *b, int64_t start, int64_t end);
IrRef ir_b_full(IrBuilder *b, int rank, const int64_t *shape, IrOperand value, int dtype);
IrRef ir_b_splat(IrBuilder *b, IrRef x, int rank, const int64_t *shape);
IrRef ir_b_broadcast_to(IrBuilder *b, IrRef x, int rank, const int64_t *shape);
IrRef ir_b_expand_dims(IrBuilder *b, IrRef x, int axis);
IrRef ir_b_reshape(IrBuilder *b, IrRef x, int rank, const int64_t *shape, bool can_reorder);
IrRef ir_b_permute(IrBuilder *b, IrRef x, int rank, const int64_t *dims);
IrRef ir_b_cat(IrBuilder *b, IrRef x, IrRef y, bool can_reorder);
IrRef ir_b_join(IrBuilder *b, IrRef x, IrRef y);
int ir_b_split(IrBuilder *b, IrRef x, IrRef out[2]);

/* Arithmetic. */
IrRef ir_b_binop(IrBuilder *b, IrBinop op, IrOperand lhs, IrOperand rhs);
IrRef ir_b_unop(IrBuilder *b, IrUnop op, IrOperand x);
/* Unary math by opcode name ("exp", "log", "sqrt", "sin", "erf", "tanh", "floor",
 * "abs", "sigmoid" ...). Returns IR_NONE with an error for unknown names or types. */
IrRef ir_b_math(IrBuilder *b, const char *fn, IrOperand x);
IrRef ir_b_fma(IrBuilder *b, IrOperand x, IrOperand y, IrOperand z);
IrRef ir_b_where(IrBuilder *b, IrOperand cond, IrOperand x, IrOperand y);
IrRef ir_b_clamp(IrBuilder *b, IrOperand x, IrOperand lo, IrOperand hi, bool propagate_nan);
/* x.to(dtype): rounding 0 = rtne, 1 = rtz; bitcast reinterprets bits. dst may be
 * a scalar or a pointer type (element type of tensors follows). */
IrRef ir_b_cast(IrBuilder *b, IrOperand x, IrType dst, bool bitcast, int rounding);
/* Cast of a Python literal or value to a tensor/scalar value (to_tensor). */
IrRef ir_b_to_value(IrBuilder *b, IrOperand x);

/* Memory. mask/other may be IR_NONE / kind VALUE with ref IR_NONE. boundary_check
 * lists block-pointer dims. cache/evict: 0 default. */
IrRef ir_b_addptr(IrBuilder *b, IrOperand ptr, IrOperand offset);
IrRef ir_b_load(IrBuilder *b, IrRef ptr, IrRef mask, IrOperand other, int nbc,
                const int64_t *boundary_check, IrPadding padding, int cache, int evict,
                bool is_volatile);
int ir_b_store(IrBuilder *b, IrRef ptr, IrOperand value, IrRef mask, int nbc,
               const int64_t *boundary_check, int cache, int evict);
IrRef ir_b_make_block_ptr(IrBuilder *b, IrOperand base, int rank, const IrOperand *shape,
                          const IrOperand *strides, const IrOperand *offsets,
                          const int64_t *block_shape, const int64_t *order);
IrRef ir_b_advance(IrBuilder *b, IrRef ptr, int rank, const IrOperand *offsets);
/* kind: "add", "fadd", "max", "min", "umax", "umin", "and", "or", "xor", "xchg". */
IrRef ir_b_atomic_rmw(IrBuilder *b, const char *kind, IrRef ptr, IrOperand val, IrRef mask,
                      const char *sem, const char *scope);
IrRef ir_b_atomic_cas(IrBuilder *b, IrRef ptr, IrOperand cmp, IrOperand val, const char *sem,
                      const char *scope);

/* SpacemiT smt.alloc: a program-local buffer; returns a pointer to its first element
 * (addrspace 1). storage ("l2", ...) is recorded, not interpreted. */
IrRef ir_b_smt_alloc(IrBuilder *b, int rank, const int64_t *shape, int dtype, const char *storage);

/* A block pointer over the same tensor as bp (made by tl.make_block_ptr, moved by
 * tl.advance in the same scope), its offsets moved by delta, with another block shape. */
IrRef ir_b_block_ptr_reblock(IrBuilder *b, IrRef bp, int rank, const IrOperand *delta, const int64_t *block_shape);

/* Compute. */
IrRef ir_b_dot(IrBuilder *b, IrRef a, IrRef bb, IrRef acc, int out_dtype /* -1 default */,
               int input_precision, int max_num_imprecise_acc);
/* Built-in reductions; axis IR_AXIS_NONE reduces all dims (result scalar). dtype -1: default
 * promotion. argmax/argmin return int32 indices. */
#define IR_AXIS_NONE INT32_MIN
IrRef ir_b_reduce(IrBuilder *b, IrReduceKind kind, IrRef x, int axis, bool keep_dims, int dtype);
/* User-defined reductions / scans: begin creates the op and enters its combine
 * block whose 2*n arguments are returned in args; end takes the n combined values.
 * The results are returned by ir_b_region_result(). */
int ir_b_reduce_begin(IrBuilder *b, const IrRef *inputs, int n, int axis, IrRef *args);
int ir_b_reduce_end(IrBuilder *b, const IrRef *vals, int n);
int ir_b_scan_begin(IrBuilder *b, const IrRef *inputs, int n, int axis, bool reverse, IrRef *args);
int ir_b_scan_end(IrBuilder *b, const IrRef *vals, int n);
IrRef ir_b_region_result(IrBuilder *b, int i); /* results of the op just closed */

/* Structured control flow. */
int ir_b_for_begin(IrBuilder *b, IrOperand lb, IrOperand ub, IrOperand step,
                   const IrRef *inits, int n, IrRef *body_args /* n + 1: iv first */);
/* Marks the innermost open for loop as smt.parallel's (bind_sub_block): its iterations
 * are independent and may run on several threads. Fails when the loop carries values. */
int ir_b_for_parallel(IrBuilder *b);
int ir_b_for_end(IrBuilder *b, const IrRef *yields, int n);
int ir_b_if_begin(IrBuilder *b, IrRef cond);                 /* enters 'then' */
int ir_b_if_else(IrBuilder *b);                              /* enters 'else' */
/* Re-enters the end of the 'then' (0) or 'else' (1) block of the innermost open if,
 * to add conversions before ir_b_if_end yields. */
int ir_b_if_block(IrBuilder *b, int which);
int ir_b_if_end(IrBuilder *b, const IrRef *then_yields, const IrRef *else_yields, int n);
int ir_b_while_begin(IrBuilder *b, const IrRef *inits, int n, IrRef *before_args);
int ir_b_while_cond(IrBuilder *b, IrRef cond, const IrRef *vals, int n, IrRef *after_args);
int ir_b_while_end(IrBuilder *b, const IrRef *yields, int n);
/* Dry runs: build into a detached block, then discard it. Placeholders are values
 * of a type with no definition, valid only inside the scratch block. */
int ir_b_scratch_begin(IrBuilder *b);
int ir_b_scratch_end(IrBuilder *b);
IrRef ir_b_placeholder(IrBuilder *b, IrType t);

/* Debugging and profiling. */
int ir_b_print(IrBuilder *b, const char *prefix, bool hex, const IrRef *vals, int n);
int ir_b_assert(IrBuilder *b, IrRef cond, const char *msg);
int ir_b_proton_record(IrBuilder *b, bool is_start, const char *name);

/* ---- pipeline --------------------------------------------------------------------- */

/* Runs canonicalize, CSE, DCE and the verifier on every function. Returns 0 or the
 * number of errors (diagnostics on the module). If dump is non-NULL, prints
 * "// after <pass>" and the IR after each pass. */
int ir_pipeline_run(IrModule *m, FILE *dump);

/* Static cost of the kernel, per program instance, from the analyses. */
#define IR_MAX_SCOPES 64
#define IR_COST_PROGRAM_MAX 2048
typedef struct IrCost {
    uint64_t bytes_loaded, bytes_stored;
    double flops[3]; /* fp16(+bf16), fp32, fp64 */
    int exact;       /* 1 when no data-dependent loop trip counts were guessed */
    int atomics;     /* atomic read-modify-write or compare-and-swap ops */
    int nscopes;     /* in-kernel Proton scopes; id = index (borrowed from the module) */
    const char *scope_names[IR_MAX_SCOPES];
    /* Loops whose trip counts are known only at launch: the program the runtime
     * evaluates from the arguments and grid (rt_cost.c); "" when every trip count
     * is constant. */
    char trips[IR_COST_PROGRAM_MAX];
} IrCost;

/* Lowers the module's public kernel to Linalg-level MLIR text (docs/compiler.md
 * describes the contract). Caller owns *text (free()). Compiler remarks (gather
 * fallbacks, ...) are added to the module as severity-2 diagnostics. */
typedef struct LoOptions {
    int vector_bytes;      /* target vector register width in bytes (16/32/64) */
    int vector_regs;       /* vector registers of the target (16 on AVX2, 32 with AVX-512
                              or RVV); 0: 32 when vector_bytes >= 64, else 16 */
    bool fma_scalar_operand; /* CgTarget.fma_scalar_operand */
    bool dot_bf16_pairs;   /* CgTarget.dot_bf16_pairs */
    bool bf16_vector_cvt;  /* vectors of f32 round to bf16 in one instruction (AVX-512 BF16);
                              else the lowering rounds with integer ops */
    bool instrument;       /* lower proton.record (else drop it) */
} LoOptions;
int lo_lower_module(IrModule *m, const LoOptions *opt, char **text, size_t *len, IrCost *cost);

/* The vector width to lower the module with: 'widest' when the kernel does
 * transcendental math that the lowering expands into polynomials (compute-bound:
 * fewer, wider instructions pay off), else 'usual' (see cg_target.c). */
int lo_vector_bytes(IrModule *m, int usual, int widest);

#ifdef __cplusplus
}
#endif
#endif /* TRITIUM_COMPILER_H */
