/*
 * driver.h — the compile driver: TTIR text in, every stage, the object and the
 * kernel .so out (libtritium_cg.so).
 *
 * One compile is: parse the TTIR (ir_parse_module, verified), run the IR pipeline
 * (canonicalize, CSE, DCE), choose the vector width (per kernel with
 * lo_vector_bytes, or fixed), lower to Linalg MLIR (lo_lower_module), decide the
 * streaming-store variant from the kernel's static cost, and generate code
 * (cg_compile: MLIR, LLVM, object, ld.lld). It is the only place that runs this
 * sequence: a Python compile (python/src/py_compile.c, through the CgApi table of
 * codegen.h) and every stage of tritium-opt (compiler/tools/tritium_opt.c, linked
 * directly) call it with the same defaults, so tritium-opt on a `_tt.mlir` dump
 * reproduces what the Python compile produced.
 *
 * Crash isolation: with DrvOptions.isolate the whole compile (lowering included)
 * runs in a forked child — the compile server (a DrvServer, forked at its first
 * compile and reused) or, when that server is busy or none is given, a one-shot
 * child — so a crash inside MLIR or LLVM fails that compile with DRV_ERR_CRASH
 * instead of killing the caller (drv_server.c).
 *
 * Ownership: a DrvResult owns every string and buffer in it; release it with
 * drv_result_fini(). DrvOptions and its strings are borrowed for the call. A
 * DrvServer belongs to its creator (drv_server_destroy()).
 * Thread safety: drv_compile may run concurrently on different threads (each
 * compile has its own IR module and MLIR and LLVM contexts). One DrvServer may be
 * shared by threads: it runs one compile at a time, the others fork.
 * Environment: the driver reads no variable of its own. cg_host_target() (the
 * default target) reads SPINE_TRITON_TARGET_ARCH (an unsupported value fails the
 * compile with DRV_ERR_SYSTEM naming the supported ones) and TRITIUM_VECTOR_BYTES, code
 * generation TRITIUM_CG_TRACE and PATH (ld.lld), and a forked child
 * TRITIUM_CG_CRASH_FOR_TESTING. TRITIUM_COMPILE_FORK belongs to the callers: it
 * sets DrvOptions.isolate (python/src/py_compile.c, tritium-opt).
 */
#ifndef TRITIUM_DRIVER_H
#define TRITIUM_DRIVER_H

#include "codegen.h"
#include "compiler.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ORDER DRV_STAGE: the text stages in pipeline order (python/triton/compiler/compiler.py
 * names them ttir, linalg, ll_mlir, llir, asm) */
typedef enum DrvStage {
    DRV_STAGE_TTIR,   /* TTIR after the passes */
    DRV_STAGE_LINALG, /* Linalg-level MLIR (docs/compiler.md §1) */
    DRV_STAGE_LLMLIR, /* LLVM-dialect MLIR (want_stages) */
    DRV_STAGE_LLIR,   /* optimised LLVM IR (want_stages) */
    DRV_STAGE_ASM,    /* assembly (want_stages) */
    DRV_STAGE_COUNT
} DrvStage;

/* Where a compile stops. */
typedef enum DrvLast {
    DRV_LAST_NATIVE, /* object file, and the .so when DrvOptions.so_path is set */
    DRV_LAST_TTIR,   /* parse and passes only */
    DRV_LAST_LINALG, /* ... and the lowering (no MLIR or LLVM) */
    DRV_LAST_COUNT
} DrvLast;

/* The tritium_kernel_nt entry (non-temporal stores, docs/compiler.md §1.2). */
typedef enum DrvStream {
    DRV_STREAM_AUTO, /* when the launcher can size a launch's stores: a static per-program
                        count (IrCost.exact), some stores, and no atomics (their ordering
                        with weakly ordered stores) */
    DRV_STREAM_OFF,
    DRV_STREAM_COUNT
} DrvStream;

/* ORDER DRV_PHASE: what DrvResult.ms times */
typedef enum DrvPhase {
    DRV_PHASE_FRONTEND, /* parse, verify and the IR passes */
    DRV_PHASE_LOWER,    /* lo_lower_module */
    DRV_PHASE_MLIR,     /* MLIR pipeline and translation to LLVM IR */
    DRV_PHASE_LLVM,     /* entry point, O3, object (and assembly) */
    DRV_PHASE_LINK,     /* ld.lld */
    DRV_PHASE_COUNT
} DrvPhase;

typedef enum DrvStatus {
    DRV_OK,
    DRV_ERR_OPTIONS, /* invalid options: error */
    DRV_ERR_PARSE,   /* the TTIR does not parse or verify: error holds the parser's
                        "name:line:col: error: ..." lines with the source line */
    DRV_ERR_DIAG,    /* the passes or the lowering reported errors: diags, and error
                        holds every diagnostic as "file:line:col: error: message" */
    DRV_ERR_CODEGEN, /* MLIR, LLVM or the linker failed: error ("[<stage>] ...") */
    DRV_ERR_CRASH,   /* the isolated child died: crash_signal, error */
    DRV_ERR_SYSTEM,  /* no child could run (pipe, fork) or the target is unknown: error */
    DRV_STATUS_COUNT
} DrvStatus;

typedef struct DrvOptions {
    const char *name;       /* the input's name in parse messages; NULL: "<input>" */
    const CgTarget *target; /* NULL: cg_host_target() */
    bool instrument;        /* lower proton.record to Proton calls (else drop them) */
    DrvStream stream;
    int vector_bytes;       /* 0: per kernel (lo_vector_bytes); else 16, 32 or 64 */
    bool want_stages;       /* fill the TTIR, LLVM-dialect, LLVM IR and assembly stages
                               (Linalg is always there once lowered) */
    DrvLast last;
    const char *so_path;    /* link the .so here, written atomically (temporary file,
                               rename); NULL: no .so */
    bool isolate;           /* compile in a forked child (see drv_compile) */
    bool skip_passes;       /* parse and verify only (tritium-opt --no-passes) */
    const char *dump_pass;  /* "canonicalize", "cse", "dce", "all" or "input": DrvResult.pass_dump
                               gets "// after <pass>" and the module; NULL: none */
    bool ttir_locs;         /* print the TTIR stage with loc(...) (IR_PRINT_LOCS) */
} DrvOptions;

typedef struct DrvDiag {
    int severity;   /* 0 error, 1 warning, 2 remark (gather/scatter fallbacks, ...) */
    char *file;     /* "" when unknown */
    int line, col;
    char *msg;
} DrvDiag;

typedef struct DrvResult {
    DrvStatus status;
    char *stage[DRV_STAGE_COUNT]; /* NUL-terminated text, NULL when not produced */
    size_t stage_len[DRV_STAGE_COUNT];
    uint8_t *obj;                 /* the relocatable object (DRV_LAST_NATIVE) */
    size_t obj_len;
    IrCost cost;                  /* per program; scope_names are copies owned by the result */
    DrvDiag *diags;               /* every diagnostic of the module, in order */
    int ndiags;
    int vector_bytes;             /* the width the kernel was lowered for */
    uint64_t stream_bytes;        /* bytes one program stores when the .so has
                                     CG_ENTRY_SYMBOL_NT (the launcher's threshold); 0: none */
    double ms[DRV_PHASE_COUNT];
    char *pass_dump;              /* DrvOptions.dump_pass output, NULL without it */
    char *error;                  /* NULL on success */
    int crash_signal;             /* DRV_ERR_CRASH: the signal that ended the child (-1: it
                                     exited without answering) */
    DrvDiag kernel;               /* where the kernel is defined (msg NULL), for remarks
                                     of code generation; filled by the front end */
    int servers_started;          /* compile servers this compile forked (stats) */
    bool forked;                  /* ran in a one-shot child (stats) */
} DrvResult;

typedef struct DrvServer DrvServer;

/* Fills o with the defaults of a Python compile: host target, instrumentation on,
 * streaming variant auto, per-kernel vector width, all stages, a full compile, no
 * .so, in process. */
void drv_options_init(DrvOptions *o);

/* Compiles 'ttir' (len bytes of TTIR text) as o says and fills res (always; release
 * it with drv_result_fini()). Returns res->status: DRV_OK, or the failure with
 * res->error. With o->isolate the compile runs in a forked child: the compile
 * server s when it is idle (started at its first compile; restarted after a
 * crash), else — s NULL or busy with another thread's compile — a one-shot child;
 * without it s is not used and may be NULL. */
DrvStatus drv_compile(const char *ttir, size_t len, const DrvOptions *o, DrvServer *s, DrvResult *res);

void drv_result_fini(DrvResult *res);

/* The name of a stage ("ttir", "linalg", "llmlir", "llir", "asm"), a phase
 * ("frontend", "lower", "mlir", "llvm", "link") or a status ("ok", "options",
 * "parse", "diag", "codegen", "crash", "system"). Static strings. */
const char *drv_stage_name(DrvStage s);
const char *drv_phase_name(DrvPhase p);
const char *drv_status_name(DrvStatus s);

/* A compile server: no process until its first compile. Caller owns the result;
 * free with drv_server_destroy(). NULL when out of memory. */
DrvServer *drv_server_create(void);
/* Ends the server process (closing its request pipe; it exits) and waits for it. */
void drv_server_destroy(DrvServer *s);
/* The server process's pid, 0 when there is none in this process. */
pid_t drv_server_pid(DrvServer *s);
/* For the owner's pthread_atfork child handler: in a forked child the parent's
 * server is not ours; closes the child's copies of its pipes (so the server sees
 * its parent's end close) and forgets it without touching the process. A server
 * inherited without the handler is recognised by its owner's pid and dropped at
 * the next compile, its pipes left open. */
void drv_server_forget(DrvServer *s);

/* ---- the library's function table ------------------------------------------------------- */

/* Exported by libtritium_cg.so for dlopen users (python/src/py_compile.c), which
 * check abi_version against the CG_ABI_VERSION they were built with: the table and
 * the structs above are its ABI. */
typedef struct CgApi {
    int abi_version; /* CG_ABI_VERSION */
    int (*host_target)(CgTarget *t);
    int (*compile)(const char *linalg, size_t len, const CgOptions *o, const char *so_path, CgResult *res);
    void (*result_fini)(CgResult *res);
    void (*drv_options_init)(DrvOptions *o);
    DrvStatus (*drv_compile)(const char *ttir, size_t len, const DrvOptions *o, DrvServer *s, DrvResult *res);
    void (*drv_result_fini)(DrvResult *res);
    DrvServer *(*drv_server_create)(void);
    void (*drv_server_destroy)(DrvServer *s);
    pid_t (*drv_server_pid)(DrvServer *s);
    void (*drv_server_forget)(DrvServer *s);
    int (*target_for_arch)(const char *arch, CgTarget *t, char *err, size_t errlen);
} CgApi;
#define CG_ABI_VERSION 7
/* dlsym(handle, "cg_api") returns a const CgApi *; programs linking the library
 * directly can use the table itself. */
extern const CgApi cg_api;

#ifdef __cplusplus
}
#endif
#endif /* TRITIUM_DRIVER_H */
