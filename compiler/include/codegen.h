/*
 * codegen.h — native code generation from the Linalg stage (libtritium_cg.so).
 *
 * Takes the Linalg-level MLIR text produced by lo_lower_module() (contract in
 * docs/compiler.md §1), runs the MLIR 19 pipeline in process through the MLIR C
 * API, translates to LLVM IR, adds the tritium_kernel entry point, optimises at
 * O3 for the target CPU through the LLVM C API, emits an object file and links a
 * shared library with ld.lld-19.
 *
 * Callers: the compile driver (driver.h, drv_compile.c), which python/src reaches
 * through the dlopen'd CgApi table (driver.h) and tritium-opt links directly; tests.
 * Ownership: CgResult fields are malloc'ed and owned by the caller; release them with
 * cg_result_fini(). Thread safety: cg_compile may run concurrently on different
 * threads (each call has its own MLIR and LLVM contexts).
 */
#ifndef TRITIUM_CODEGEN_H
#define TRITIUM_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CgTarget {
    char triple[64];     /* "x86_64-unknown-linux-gnu", "riscv64-unknown-linux-gnu" */
    char cpu[64];        /* "znver4", "spacemit-x60", ... */
    char features[1024]; /* "+avx512f,+fma,..." */
    int vector_bytes;    /* vector width in bytes for most kernels: 16, 32 or 64 */
    int vector_bytes_max; /* widest vector register (>= vector_bytes): compute-bound kernels
                             use it where it is wider (AMD Zen with AVX-512) */
    int vector_regs;      /* vector registers: 32 with AVX-512 or RVV, else 16 */
    bool fma_scalar_operand; /* the vector FMA reads a broadcast operand from a scalar
                                register (RVV vfmacc.vf): no vector register holds it */
    bool dot_bf16_pairs;     /* a dot product of bf16 pairs into fp32 lanes (AVX512-BF16
                                vdpbf16ps): bf16 tl.dot runs on it, twice the fp32 FMA rate */
} CgTarget;

typedef struct CgOptions {
    CgTarget target;
    int opt_level;        /* 0..3; 3 by default */
    int want_stages;      /* fill CgResult.ll_mlir / llvm_ir / asm_text */
    const char *ld_path;  /* NULL: "ld.lld-19" found on PATH or in /usr/lib/llvm-19/bin */
    int stream_variant;   /* also emit CG_ENTRY_SYMBOL_NT, the same kernel with non-temporal
                             stores to its outputs (cg_stream.c) */
} CgOptions;

typedef struct CgResult {
    char *ll_mlir;        /* LLVM-dialect MLIR after the pipeline (want_stages) */
    char *llvm_ir;        /* optimised LLVM IR (want_stages) */
    char *asm_text;       /* assembly (want_stages) */
    uint8_t *obj;         /* object file bytes (always) */
    size_t obj_len;
    char *error;          /* message on failure: "[<stage or pass>] <MLIR diagnostics>",
                             LLVM or linker output */
    double ms_mlir;       /* parse .. LLVM dialect, translation to LLVM IR */
    double ms_llvm;       /* entry point, O3, object (and assembly) emission */
    double ms_link;       /* ld.lld */
    int streamed_stores;  /* stores made non-temporal in CG_ENTRY_SYMBOL_NT; 0: no variant */
    int spills, reloads;  /* spill / reload instructions (folded ones included) the register
                             allocator added, over every function of the object (cg_spill.c) */
} CgResult;

/* The values of SPINE_TRITON_TARGET_ARCH / GPUTarget.arch that cg_target_for_arch
 * accepts, as its error message lists them. */
#if defined(__x86_64__)
#define CG_TARGET_ARCHS "riscv64 (also riscv, rv64, spacemit-*: SpacemiT X60 with RVV, VLEN 256) " \
                        "and x86_64 (this machine; also host, native, or unset)"
#else
#define CG_TARGET_ARCHS "riscv64 (also riscv, rv64, spacemit-*: SpacemiT X60 with RVV, VLEN 256) " \
                        "and host (this machine; also native, or unset)"
#endif

/* Fills t for 'arch': NULL reads SPINE_TRITON_TARGET_ARCH; unset, "", "host",
 * "native" or this machine's own name ("x86_64") give the machine we run on
 * (triple, CPU name, features, vector width from LLVM's host detection);
 * "riscv64", "riscv", "rv64" or a "spacemit-*" CPU name the cross target
 * spacemit-x60 with RVV (VLEN 256). Returns 0, or -EINVAL for anything else
 * (aarch64 included: not a Tritium target) with a message naming the supported
 * values in err (when err is not NULL; truncated to errlen). */
int cg_target_for_arch(const char *arch, CgTarget *t, char *err, size_t errlen);

/* Fills t for a CPU by LLVM name, for inspecting its code where it cannot run
 * (tritium-opt --mcpu): x86-64 CPUs such as znver1 (AVX2), znver4 or
 * sapphirerapids (AVX-512), x86-64-v3/v4, and spacemit-x60; mattr ("+f,-g", may
 * be NULL) is added to the features. Returns 0, or -EINVAL with the known names in
 * err. */
int cg_target_for_cpu(const char *cpu, const char *mattr, CgTarget *t, char *err, size_t errlen);

/* cg_target_for_arch(NULL, t, NULL, 0): the target SPINE_TRITON_TARGET_ARCH names,
 * the host when unset. Returns 0 or -EINVAL. */
int cg_host_target(CgTarget *t);

/* Compiles 'linalg' (len bytes of MLIR text) and links the shared library at
 * so_path (written atomically: temporary file then rename; NULL: no link, only
 * res->obj and the stages). Returns 0 on success; on failure a nonzero value and
 * res->error. res is always filled; release it with cg_result_fini(). */
int cg_compile(const char *linalg, size_t len, const CgOptions *o, const char *so_path,
               CgResult *res);

void cg_result_fini(CgResult *res);

/* Entry-point symbol every kernel .so exports (docs/compiler.md §1.2). */
#define CG_ENTRY_SYMBOL "tritium_kernel"
/* Optional second entry with the same signature: streaming (non-temporal) stores. */
#define CG_ENTRY_SYMBOL_NT "tritium_kernel_nt"

#ifdef __cplusplus
}
#endif
#endif /* TRITIUM_CODEGEN_H */
