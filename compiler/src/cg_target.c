/*
 * cg_target.c — code generation targets: the host (triple, CPU, features, vector
 * width from LLVM's host detection) and the RISC-V cross target selected by
 * SPINE_TRITON_TARGET_ARCH=riscv64 or GPUTarget("cpu", "riscv64") (SpacemiT X60:
 * RV64GCV, VLEN 256), plus the LLVM target machine for either. Any other architecture
 * (aarch64 included) is refused with a message naming the supported ones.
 */
#include "cg_int.h"

#include <llvm-c/Target.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <llvm-c/Support.h>
#include <stdlib.h>
#include <string.h>

#define RISCV_TRIPLE "riscv64-unknown-linux-gnu"
#define RISCV_CPU "spacemit-x60"
/* Zicond (in LLVM's spacemit-x60) is switched off: qemu 7.2 of Debian 12 cannot run it */
#define RISCV_FEATURES "+m,+a,+f,+d,+c,+v,+zfh,+zvfh,+zba,+zbb,+zbs,-zicond"
#define RISCV_VLEN_BYTES 32 /* VLEN = 256 bits on the X60 */

static pthread_once_t targets_once = PTHREAD_ONCE_INIT;

static void
init_targets(void)
{
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeRISCVTargetInfo();
    LLVMInitializeRISCVTarget();
    LLVMInitializeRISCVTargetMC();
    LLVMInitializeRISCVAsmPrinter();
    /* RVV: a fixed-length vector wider than VLEN (a dot's B panel row, a reduction's
     * accumulator) becomes several LMUL-1 registers, as a zmm pair does on x86, not
     * one register group; the micro-kernel then keeps mr x nr/VL accumulators. */
    /* The register allocator's spill counts as remarks (cg_spill.c), for that pass only.
     * VectorCombine (LLVM 19) miscompiles MLIR's one-lane shuffles: it folds
     * shuffle(fma(x0, x0), fma(x1, x0)) of <1 x float> lanes into one fma of
     * <x0, x1> * <x0, x1>, so tl.sum(x[:, None] * x[None, :], 1) over 8 lanes came out
     * wrong in row 1 (test_reduction_of_an_outer_product_of_one_load); off.
     * The SLP vectorizer (LLVM 19) miscompiles when it may build masked gathers, which
     * the x86 cost model allows with AVX-512: in the unrolled element-by-element
     * shuffles of a bitonic exchange network (tl.sort of one row of 32 fp32/int32
     * values) lanes came out duplicated and lost (tests/python/test_sort_vector_widths.py);
     * off. It is off for every target, as a process-wide option: the C API's
     * LLVMPassBuilderOptionsSetSLPVectorization(0) leaves it in default<O3> (measured:
     * the same module out), and the kernels' vectors come from MLIR (bench_norms and
     * bench_elementwise run the same without it). Gathers MLIR writes (vector.gather of
     * data-dependent loads) stay AVX-512 vgathers (znver1, AVX2: LLVM scalarises them). */
    const char *argv[] = {"tritium", "-riscv-v-fixed-length-vector-lmul-max=1",
                          "-pass-remarks-missed=^regalloc$", "-disable-vector-combine",
                          "-vectorize-slp=false"};
    LLVMParseCommandLineOptions((int)(sizeof argv / sizeof *argv), argv, NULL);
}

void
cg_llvm_targets_init(void)
{
    pthread_once(&targets_once, init_targets);
}

int
cg_target_is_riscv(const CgTarget *t)
{
    return strncmp(t->triple, "riscv64", 7) == 0;
}

static int
has_feature(const char *features, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = features; (p = strstr(p, name)) != NULL; p += n) {
        int starts = p == features || p[-1] == ',';
        int ends = p[n] == ',' || p[n] == '\0';
        if (starts && ends)
            return 1;
    }
    return 0;
}

/* x86 with AVX512-BF16 (vdpbf16ps; every such CPU also has AVX512VL for its
 * 256-bit form), not switched off again by a later "-avx512bf16". */
static bool
x86_dot_bf16(const CgTarget *t)
{
    return strncmp(t->triple, "x86_64", 6) == 0 && has_feature(t->features, "+avx512bf16") &&
           !has_feature(t->features, "-avx512bf16");
}

/* Vector widths (bytes) for an x86/RISC-V target: *max is the widest register,
 * the result what most kernels use. AMD Zen 4/5 execute 512-bit operations as two
 * 256-bit halves; measured on a Zen 4 VM, 256-bit loads/stores stream 10-20%
 * faster than 512-bit ones, while kernels heavy in arithmetic gain from issuing
 * half the instructions at 512 bits (GELU over 1M floats 0.31 -> 0.23 ms, exp(x)*y
 * 0.21 -> 0.15 ms): the default is 256 there and the compiler widens kernels with
 * expanded math (lo_vector_bytes, called by drv_compile.c). TRITIUM_VECTOR_BYTES (16, 32 or 64)
 * fixes both. */
static int
vector_bytes_for(const char *triple, const char *cpu, const char *features, int *max)
{
    const char *env = getenv("TRITIUM_VECTOR_BYTES");
    if (env && (!strcmp(env, "16") || !strcmp(env, "32") || !strcmp(env, "64")))
        return *max = atoi(env);
    if (strncmp(triple, "riscv64", 7) == 0)
        return *max = has_feature(features, "+v") ? RISCV_VLEN_BYTES : 8;
    if (has_feature(features, "+avx512f") && !has_feature(features, "-evex512")) {
        *max = 64;
        return strncmp(cpu, "znver", 5) == 0 ? 32 : 64;
    }
    if (has_feature(features, "+avx"))
        return *max = 32;
    return *max = 16;
}

/* Copies LLVM's host feature list into dst; when the full list does not fit,
 * keeps only the enabled ("+") features, which is what the CPU name cannot
 * imply on its own. */
static void
copy_features(char *dst, size_t cap, const char *all)
{
    if (strlen(all) < cap) {
        strcpy(dst, all);
        return;
    }
    size_t n = 0;
    dst[0] = '\0';
    for (const char *p = all; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (p[0] == '+' && n + len + 2 < cap) {
            if (n)
                dst[n++] = ',';
            memcpy(dst + n, p, len);
            n += len;
            dst[n] = '\0';
        }
        p += len + (e != NULL);
    }
}

/* The RISC-V cross target: SpacemiT X60, RV64GCV with VLEN 256. */
static void
riscv_target(CgTarget *t)
{
    snprintf(t->triple, sizeof t->triple, "%s", RISCV_TRIPLE);
    snprintf(t->cpu, sizeof t->cpu, "%s", RISCV_CPU);
    snprintf(t->features, sizeof t->features, "%s", RISCV_FEATURES);
    t->vector_bytes = t->vector_bytes_max = RISCV_VLEN_BYTES;
    t->vector_regs = 32;
    t->fma_scalar_operand = true;
}

/* The machine we run on, from LLVM's host detection. */
static void
native_target(CgTarget *t)
{
    char *triple = LLVMGetDefaultTargetTriple();
    char *cpu = LLVMGetHostCPUName();
    char *features = LLVMGetHostCPUFeatures();
    snprintf(t->triple, sizeof t->triple, "%s", triple);
    snprintf(t->cpu, sizeof t->cpu, "%s", cpu);
    copy_features(t->features, sizeof t->features, features);
    /* on the board itself LLVM may not report RVV: the X60 has it */
    if (cg_target_is_riscv(t) && strcmp(t->cpu, RISCV_CPU) == 0 && !has_feature(t->features, "+v"))
        snprintf(t->features, sizeof t->features, "%s", RISCV_FEATURES);
    t->vector_bytes = vector_bytes_for(t->triple, t->cpu, t->features, &t->vector_bytes_max);
    t->vector_regs = t->vector_bytes_max >= 64 || cg_target_is_riscv(t) ? 32 : 16;
    t->fma_scalar_operand = cg_target_is_riscv(t);
    t->dot_bf16_pairs = x86_dot_bf16(t);
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
}

static int
is_any(const char *s, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(s, *names) == 0)
            return 1;
    return 0;
}

/* Documented in codegen.h. */
CG_EXPORT int
cg_target_for_arch(const char *arch, CgTarget *t, char *err, size_t errlen)
{
    static const char *const riscv[] = {"riscv64", "riscv", "rv64", NULL};
#if defined(__x86_64__)
    static const char *const host[] = {"", "host", "native", "x86_64", "x86-64", "amd64", NULL};
#elif defined(__riscv)
    static const char *const host[] = {"", "host", "native", NULL};
#else
    static const char *const host[] = {"", "host", "native", NULL};
#endif
    memset(t, 0, sizeof *t);
    cg_mlir_warm(); /* callers ask for the target once, before compiling (and forking) */
    if (!arch)
        arch = getenv("SPINE_TRITON_TARGET_ARCH");
    if (!arch || is_any(arch, host)) {
        const char *cpu = getenv("TRITIUM_CPU");
        if (cpu && *cpu) { /* another CPU's code for this machine (it must run here) */
            char why[768];
            if (cg_target_for_cpu(cpu, getenv("TRITIUM_CPU_FEATURES"), t, why, sizeof why) == 0)
                return 0;
            if (err && errlen)
                snprintf(err, errlen, "TRITIUM_CPU: %s", why);
            return -EINVAL;
        }
        native_target(t);
        return 0;
    }
    if (is_any(arch, riscv) || strncmp(arch, "spacemit-", 9) == 0) {
        riscv_target(t);
        return 0;
    }
    if (err && errlen)
        snprintf(err, errlen, "unsupported target architecture '%s' (SPINE_TRITON_TARGET_ARCH or "
                 "GPUTarget.arch): supported are %s", arch, CG_TARGET_ARCHS);
    return -EINVAL;
}

/* x86-64 CPUs by name and the features that decide code generation here (LLVM
 * implies the rest from the name). */
static const struct {
    const char *cpu, *features;
} x86_cpus[] = {
    {"x86-64", "+sse2"},
    {"x86-64-v2", "+sse4.2"},
    {"x86-64-v3", "+avx,+avx2,+fma"},
    {"haswell", "+avx,+avx2,+fma"},
    {"broadwell", "+avx,+avx2,+fma"},
    {"skylake", "+avx,+avx2,+fma"},
    {"alderlake", "+avx,+avx2,+fma"},
    {"znver1", "+avx,+avx2,+fma"},
    {"znver2", "+avx,+avx2,+fma"},
    {"znver3", "+avx,+avx2,+fma"},
    {"x86-64-v4", "+avx,+avx2,+fma,+avx512f"},
    {"skylake-avx512", "+avx,+avx2,+fma,+avx512f"},
    {"cascadelake", "+avx,+avx2,+fma,+avx512f"},
    {"icelake-server", "+avx,+avx2,+fma,+avx512f"},
    {"cooperlake", "+avx,+avx2,+fma,+avx512f,+avx512bf16"},
    {"sapphirerapids", "+avx,+avx2,+fma,+avx512f,+avx512bf16,+avx512fp16"},
    {"graniterapids", "+avx,+avx2,+fma,+avx512f,+avx512bf16,+avx512fp16"},
    {"znver4", "+avx,+avx2,+fma,+avx512f,+avx512bf16"},
    {"znver5", "+avx,+avx2,+fma,+avx512f,+avx512bf16"},
};

/* Documented in codegen.h. */
CG_EXPORT int
cg_target_for_cpu(const char *cpu, const char *mattr, CgTarget *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (strcmp(cpu, RISCV_CPU) == 0) {
        riscv_target(t);
        return 0;
    }
    for (size_t i = 0; i < sizeof x86_cpus / sizeof *x86_cpus; i++) {
        if (strcmp(cpu, x86_cpus[i].cpu) != 0)
            continue;
        snprintf(t->triple, sizeof t->triple, "x86_64-unknown-linux-gnu");
        snprintf(t->cpu, sizeof t->cpu, "%s", cpu);
        /* ours for the vector width, then the caller's (LLVM: the last one wins) */
        snprintf(t->features, sizeof t->features, "%s%s%s", x86_cpus[i].features, mattr && *mattr ? "," : "",
                 mattr ? mattr : "");
        t->vector_bytes = vector_bytes_for(t->triple, t->cpu, t->features, &t->vector_bytes_max);
        t->vector_regs = t->vector_bytes_max >= 64 ? 32 : 16;
        t->dot_bf16_pairs = x86_dot_bf16(t);
        return 0;
    }
    if (err && errlen) {
        size_t n = (size_t)snprintf(err, errlen, "unknown CPU '%s': known are %s", cpu, RISCV_CPU);
        for (size_t i = 0; i < sizeof x86_cpus / sizeof *x86_cpus && n < errlen; i++)
            n += (size_t)snprintf(err + n, errlen - n, ", %s", x86_cpus[i].cpu);
    }
    return -EINVAL;
}

CG_EXPORT int
cg_host_target(CgTarget *t)
{
    return cg_target_for_arch(NULL, t, NULL, 0);
}

LLVMTargetMachineRef
cg_target_machine_create(const CgTarget *t, int opt_level, CgStr *err)
{
    cg_llvm_targets_init();
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(t->triple, &target, &msg)) {
        cg_str_printf(err, "target '%s': %s\n", t->triple, msg ? msg : "unknown");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                                 LLVMCodeGenLevelDefault,
                                                 LLVMCodeGenLevelAggressive};
    LLVMTargetMachineOptionsRef opts = LLVMCreateTargetMachineOptions();
    LLVMTargetMachineOptionsSetCPU(opts, t->cpu);
    LLVMTargetMachineOptionsSetFeatures(opts, t->features);
    if (cg_target_is_riscv(t))
        LLVMTargetMachineOptionsSetABI(opts, "lp64d");
    int lvl = opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level;
    LLVMTargetMachineOptionsSetCodeGenOptLevel(opts, levels[lvl]);
    LLVMTargetMachineOptionsSetRelocMode(opts, LLVMRelocPIC);
    LLVMTargetMachineOptionsSetCodeModel(opts, LLVMCodeModelDefault);
    LLVMTargetMachineRef tm = LLVMCreateTargetMachineWithOptions(target, t->triple, opts);
    LLVMDisposeTargetMachineOptions(opts);
    if (!tm)
        cg_str_printf(err, "cannot create a target machine for %s (cpu %s)\n", t->triple, t->cpu);
    return tm;
}
