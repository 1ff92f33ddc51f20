/*
 * cg_int.h — internal interface of the code generator (cg_*.c, libtritium_cg.so).
 *
 * cg_api.c drives one compile: cg_mlir.c (MLIR context, parse, pass pipeline,
 * transform script from cg_script.c, translation to LLVM IR), cg_llvm.c (entry
 * point, O3, object and assembly), cg_link.c (ld.lld). cg_target.c knows the
 * targets. Everything a compile allocates belongs to that compile; the only
 * process-wide state is the MLIR dialect registry, the pass registry and the
 * LLVM target registry, each initialised once (pthread_once) and read-only after.
 */
#ifndef CG_INT_H
#define CG_INT_H

#include "codegen.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <mlir-c/IR.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define CG_EXPORT __attribute__((visibility("default")))

/* ---- growable text (cg_api.c) -------------------------------------------- */

typedef struct CgStr {
    char *p; /* NUL-terminated when non-NULL */
    size_t n, cap;
} CgStr;

void cg_str_append(CgStr *s, const char *p, size_t n);
void cg_str_printf(CgStr *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes the text (malloc'ed, possibly NULL when empty); s is reset. */
char *cg_str_take(CgStr *s);
void cg_str_fini(CgStr *s);
double cg_now_ms(void);

/* ---- kernel signature (filled by cg_mlir.c, used by cg_llvm.c) ------------ */

typedef enum CgArgKind {
    CG_ARG_MEMREF, /* memref<?xT>: one pointer slot, five descriptor params */
    CG_ARG_INT,    /* iN (bits), index (64) */
    CG_ARG_F16,
    CG_ARG_BF16,
    CG_ARG_F32,
    CG_ARG_F64,
    CG_ARG_PTR,    /* !llvm.ptr */
    CG_ARG_KIND_COUNT
} CgArgKind;

typedef struct CgArg {
    uint8_t kind; /* CgArgKind */
    uint8_t bits; /* CG_ARG_INT width */
    uint8_t rank; /* CG_ARG_MEMREF rank */
} CgArg;

typedef struct CgSig {
    char name[256]; /* the public kernel function */
    int nargs;      /* all parameters, program ids, grid and pctx included */
    CgArg *args;    /* malloc'ed */
} CgSig;

/* ---- cg_target.c ------------------------------------------------------------ */

/* Initialises the LLVM targets (X86, RISCV) once; thread safe. */
void cg_llvm_targets_init(void);
int cg_target_is_riscv(const CgTarget *t);
/* Creates the target machine for t; NULL with a message in err on failure.
 * Caller owns the result (LLVMDisposeTargetMachine). */
LLVMTargetMachineRef cg_target_machine_create(const CgTarget *t, int opt_level, CgStr *err);

/* ---- cg_script.c ------------------------------------------------------------ */

/* Tags every linalg.generic of module with a "cg_id" attribute and returns the
 * transform-dialect script (text of a module holding @__transform_main) that
 * tiles, peels and vectorises them for target t. Caller owns the returned text
 * (free). */
char *cg_script_build(MlirOperation module, CgStr *err); /* NULL (message in err): a generic without intent */
/* The script that then eliminates empty tensors and bufferizes, and the one run
 * after cg_split_masked_loops (hoisting; 'split_transfers': possibly out-of-bounds
 * transfers get an in-bounds fast path). Caller frees. */
char *cg_script_bufferize(void);
char *cg_script_transfers(bool split_transfers);

/* ---- cg_split.c ------------------------------------------------------------- */

/* After bufferization: every loop whose vector reads may run past a masked row is
 * split into an unmasked loop over the full vectors and the masked rest. Returns
 * the number of loops split. */
int cg_split_masked_loops(MlirModule mod);

/* ---- cg_split_cmp.c --------------------------------------------------------- */

/* In 'copy', the full-vector loop of a split whose in-bounds reads of width
 * widths[i] read rows[i]: every `off + iota < n` vector compare those reads prove
 * true becomes a constant true. Returns the number replaced. */
int cg_split_fold_compares(MlirOperation copy, const MlirValue *rows, const int64_t *widths, int nrows);

/* ---- cg_reduce.c ------------------------------------------------------------ */

/* After the transform script: the scalar linalg.reduce that merges a max/min row
 * reduction's vector accumulator becomes one vector.reduction. */
void cg_reduce_minmax_merges(MlirModule mod);

/* ---- cg_mlir.c -------------------------------------------------------------- */

/* A growable list of operations (walk results). */
typedef struct CgOpVec {
    MlirOperation *v;
    size_t n, cap;
} CgOpVec;
void cg_opvec_push(CgOpVec *v, MlirOperation op);
/* Whether op's name is 'name' ("scf.for"). */
int cg_op_is(MlirOperation op, const char *name);
/* Appends every op named 'name' under root (root included) to out, in walk order. */
void cg_ops_named(MlirOperation root, const char *name, MlirWalkOrder order, CgOpVec *out);
/* Whether op is 'anc' or nested in it; the op defining v (for a block argument,
 * the op whose region holds the block) (cg_par.c). */
int cg_op_within(MlirOperation op, MlirOperation anc);
MlirOperation cg_value_owner(MlirValue v);
/* The value of an integer/index arith.constant in *out; 0 when v is not one (cg_par.c). */
int cg_const_int(MlirValue v, int64_t *out);
static inline MlirStringRef
cg_sref(const char *s)
{
    return mlirStringRefCreateFromCString(s);
}

/* Parses 'text', runs the pipeline of docs/compiler.md §1.4 and translates the
 * result into a new LLVM module in lctx (*out, owned by the caller). Fills sig
 * with the kernel signature (caller frees sig->args) and, with want_stages,
 * res->ll_mlir. Returns 0, or -1 with the MLIR diagnostics in err. */
int cg_mlir_compile(const char *text, size_t len, const CgOptions *o, LLVMContextRef lctx,
                    LLVMModuleRef *out, CgSig *sig, CgResult *res, CgStr *err);

/* ---- cg_llvm.c -------------------------------------------------------------- */

/* Adds the tritium_kernel entry to m, optimises it for o->target and emits the
 * object (res->obj) and, with want_stages, res->llvm_ir and res->asm_text.
 * Returns 0, or -1 with a message in err. */
int cg_llvm_finish(LLVMModuleRef m, const CgSig *sig, const CgOptions *o, CgResult *res,
                   CgStr *err);

/* ---- cg_spill.c ------------------------------------------------------------- */

/* What the LLVM diagnostic handler of one compile collected: spill and reload
 * instructions (folded ones included) the register allocator added, over the machine
 * functions of the object but the streaming-store twin; the first LLVM error. */
typedef struct CgSpills {
    int spills, reloads;
    int pend_spills, pend_reloads; /* of the function being compiled */
    char *error;                   /* malloc'ed, or NULL */
} CgSpills;
/* Routes c's diagnostics to the handler (s zeroed here); s must outlive the compile. */
void cg_spills_watch(LLVMContextRef c, CgSpills *s);
/* Forgets the counts so far (the assembly's codegen of a clone of m, before the object's),
 * when m's context is watched. */
void cg_spills_restart(LLVMModuleRef m);
void cg_spills_fini(CgSpills *s);

/* ---- cg_par.c: smt.parallel loops ------------------------------------------ */

/* Names of the outlined bodies ("tritium.par.<k>", their runners "<body>.run", the
 * serial fallback "tritium.par.serial") and of the exported pointer the runtime sets. */
#define CG_PAR_PREFIX "tritium.par."
#define CG_PAR_SYMBOL "tritium_parallel_for"
/* Moves the body of every scf.for marked tritium.parallel into a private function
 * called in its place (run after bufferization, before buffer hoisting). Returns the
 * number of loops outlined, or -1 with a message in err. */
int cg_par_outline(MlirModule mod, CgStr *err);
/* Turns the calls of the outlined bodies into calls through CG_PAR_SYMBOL (defined
 * here, initially a serial loop). Returns the number of bodies, or -1 with err. */
int cg_par_dispatch(LLVMModuleRef m, CgStr *err);

/* cg_stream.c: links a copy of the optimised module whose entry is
 * CG_ENTRY_SYMBOL_NT and whose stores to kernel memory are non-temporal.
 * Returns the number of such stores (0: no variant added) or -1 with err. */
int cg_stream_add(LLVMModuleRef m, const CgTarget *t, CgStr *err);

/* ---- cg_cfg.c / cg_cold.c -------------------------------------------------- */

/* Inserts an empty block before bb and points every edge into bb at it; the
 * caller moves bb's leading instructions (phis first) into it and ends it with
 * a branch. Edges out of bb keep naming bb, so a loop's back edge from bb still
 * matches the phis that move. */
LLVMBasicBlockRef cg_block_split_head(LLVMValueRef f, LLVMBasicBlockRef bb, const char *name);
/* 1 when pred(v, want) holds for the scalar v, or for every element of the
 * constant vector v (0 for a non-constant vector). */
int cg_const_lanes(LLVMValueRef v, int (*pred)(LLVMValueRef c, double want), double want);
/* Moves the cold regions the lowering marked (lo_math.c) behind a branch on
 * "any lane needs it" and removes the markers; run before optimising. Returns
 * the number of regions moved. */
int cg_cold_branch(LLVMModuleRef m);

/* cg_scalef.c: on x86 with AVX-512F, replaces the exp family's exponent-bit
 * scaling p * 2^nf (lo_math.c) by vscalefps; run before optimising. Returns the
 * number of products replaced (0 on other targets). */
int cg_scalef(LLVMModuleRef m, const CgTarget *t);

/* ---- cg_link.c -------------------------------------------------------------- */

/* Links obj into a shared library at so_path (temporary file then rename).
 * Returns 0, or -1 with the linker's output in err. */
int cg_link(const uint8_t *obj, size_t len, const CgOptions *o, const char *so_path, CgStr *err);

/* cg_mlir.c: build the dialect and pass registries now (before forking) */
void cg_mlir_warm(void);

#endif /* CG_INT_H */
