/*
 * test_codegen.c — cg_compile end to end: each hand-written Linalg sample of
 * tests/codegen/ is compiled for the host, dlopen'ed and run over a grid against
 * a scalar C reference (tests/codegen/samples.h); the assembly must use vector
 * registers; every sample also compiles for the RISC-V cross target; errors name
 * the failing stage; concurrent compiles work.
 */
#include "codegen.h"

#include "../codegen/expand.h"
#include "../codegen/samples.h"

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char tmpdir[256];

/* tests/codegen/<name>.mlir relative to the repository root (the working
 * directory of scripts/run_tests.sh) or $TRITIUM_ROOT. */
static char *
read_sample(const char *name, size_t *len)
{
    const char *root = getenv("TRITIUM_ROOT");
    char path[512];
    snprintf(path, sizeof path, "%s%stests/codegen/%s.mlir", root ? root : "", root ? "/" : "",
             name);
    size_t n;
    char *text = cgt_read_file(path, &n);
    if (!text)
        return NULL;
    char *ex = cgt_expand_math(text, n, len);
    free(text);
    return ex;
}

static void
host_options(CgOptions *o, int stages)
{
    memset(o, 0, sizeof *o);
    o->opt_level = 3;
    o->want_stages = stages;
    unsetenv("SPINE_TRITON_TARGET_ARCH");
    assert_int_equal(cg_host_target(&o->target), 0);
}

static void
test_host_target(void **state)
{
    CgTarget t;
    unsetenv("SPINE_TRITON_TARGET_ARCH");
    assert_int_equal(cg_host_target(&t), 0);
    assert_true(strncmp(t.triple, "x86_64", 6) == 0 || strncmp(t.triple, "riscv64", 7) == 0 ||
                strncmp(t.triple, "aarch64", 7) == 0);
    assert_true(t.cpu[0] != '\0');
    assert_true(t.vector_bytes == 16 || t.vector_bytes == 32 || t.vector_bytes == 64);
    /* AVX-512 is used at 512 bits, except on AMD Zen (256-bit streams are faster) */
    if (strstr(t.features, "+avx512f") && !strstr(t.features, "-evex512"))
        assert_int_equal(t.vector_bytes, strncmp(t.cpu, "znver", 5) == 0 ? 32 : 64);
    printf("host: %s cpu %s vector %d bytes\n", t.triple, t.cpu, t.vector_bytes);
    setenv("SPINE_TRITON_TARGET_ARCH", "riscv64", 1);
    assert_int_equal(cg_host_target(&t), 0);
    unsetenv("SPINE_TRITON_TARGET_ARCH");
    assert_string_equal(t.triple, "riscv64-unknown-linux-gnu");
    assert_string_equal(t.cpu, "spacemit-x60");
    assert_non_null(strstr(t.features, "+v"));
    assert_int_equal(t.vector_bytes, 32);
}

/* Does the assembly use the target's widest vector registers (and FMAs)? */
static int
asm_has(const char *as, const CgTarget *t, const char *need)
{
    if (!need[0] || strncmp(t->triple, "x86_64", 6) != 0)
        return 1;
    /* 256-bit or wider registers (the samples' hand-written tiles are 8 floats; the
     * matmul micro-kernel uses two vectors per row, which LLVM may fuse into one
     * wider register) */
    bool ok = strstr(as, "%zmm") != NULL || strstr(as, "%ymm") != NULL;
    if (t->vector_bytes <= 16)
        ok |= strstr(as, "%xmm") != NULL;
    if (!ok)
        return 0;
    return strcmp(need, "fma") != 0 || strstr(as, "vfmadd") != NULL;
}

/* Every undefined dynamic symbol of the ELF .so at 'path' is defined by libc or
 * libm (docs/compiler.md §1.2); returns the first offender's name, or NULL. */
static const char *
foreign_symbol(const char *path)
{
    static char bad[128];
    size_t n;
    char *img = cgt_read_file(path, &n);
    assert_non_null(img);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    void *libc = dlopen("libc.so.6", RTLD_NOW), *libm = dlopen("libm.so.6", RTLD_NOW);
    const char *res = NULL;
    for (int i = 0; i < eh->e_shnum && !res; i++) {
        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
        const char *str = img + sh[sh[i].sh_link].sh_offset;
        for (size_t k = 1; k < sh[i].sh_size / sizeof *sym && !res; k++) {
            const char *name = str + sym[k].st_name;
            if (sym[k].st_shndx != SHN_UNDEF || !name[0])
                continue;
            if (!dlsym(libc, name) && !dlsym(libm, name)) {
                snprintf(bad, sizeof bad, "%s", name);
                res = bad;
            }
        }
    }
    dlclose(libc);
    dlclose(libm);
    free(img);
    return res;
}

static void
run_sample(const CgtSample *s)
{
    size_t len;
    char *text = read_sample(s->name, &len);
    assert_non_null(text);
    CgOptions o;
    host_options(&o, 1);
    o.stream_variant = 1; /* the streaming entry must compute the same results */
    char so[512];
    snprintf(so, sizeof so, "%s/%s.so", tmpdir, s->name);
    CgResult res;
    int rc = cg_compile(text, len, &o, so, &res);
    if (rc)
        fprintf(stderr, "%s: %s\n", s->name, res.error);
    assert_int_equal(rc, 0);
    assert_non_null(res.asm_text);
    assert_non_null(res.llvm_ir);
    assert_non_null(res.ll_mlir);
    assert_true(res.obj_len > 0);
    printf("%-10s mlir %6.1f ms  llvm %6.1f ms  link %5.1f ms\n", s->name, res.ms_mlir,
           res.ms_llvm, res.ms_link);
    if (!asm_has(res.asm_text, &o.target, s->vec_need)) {
        fprintf(stderr, "%s: no vector code (%s) in:\n%s\n", s->name, s->vec_need, res.asm_text);
        fail();
    }
    const char *foreign = foreign_symbol(so);
    if (foreign)
        fprintf(stderr, "%s: undefined symbol %s is not from libc/libm\n", s->name, foreign);
    assert_null(foreign);
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fprintf(stderr, "dlopen: %s\n", dlerror());
    assert_non_null(h);
    CgtEntry fn = (CgtEntry)(uintptr_t)dlsym(h, CG_ENTRY_SYMBOL);
    assert_non_null(fn);
    char msg[256] = "";
    rc = s->run(fn, msg, sizeof msg);
    if (rc)
        fprintf(stderr, "%s\n", msg);
    assert_int_equal(rc, 0);
    CgtEntry nt = (CgtEntry)(uintptr_t)dlsym(h, CG_ENTRY_SYMBOL_NT);
    assert_int_equal(nt != NULL, res.streamed_stores > 0);
    if (nt) {
        const char *body = strstr(res.asm_text, CG_ENTRY_SYMBOL_NT ":");
        assert_non_null(body);
        if (strncmp(o.target.triple, "x86_64", 6) == 0 && !(strstr(body, "movnt") && strstr(body, "sfence"))) {
            fprintf(stderr, "%s: no movnt/sfence in the streaming entry:\n%s\n", s->name, body);
            fail();
        }
        rc = s->run(nt, msg, sizeof msg);
        if (rc)
            fprintf(stderr, "%s (streaming entry): %s\n", s->name, msg);
        assert_int_equal(rc, 0);
    }
    printf("%-10s streaming entry: %d non-temporal stores\n", s->name, res.streamed_stores);
    dlclose(h);
    unlink(so);
    cg_result_fini(&res);
    free(text);
}

static void test_vadd(void **state) { run_sample(cgt_sample("vadd")); }
static void test_gelu(void **state) { run_sample(cgt_sample("gelu")); }
static void test_bcast2d(void **state) { run_sample(cgt_sample("bcast2d")); }
static void test_rowsum(void **state) { run_sample(cgt_sample("rowsum")); }
static void test_fullsum(void **state) { run_sample(cgt_sample("fullsum")); }
static void test_reductions(void **state) { run_sample(cgt_sample("reductions")); }
static void test_strided2d(void **state) { run_sample(cgt_sample("strided2d")); }
static void test_matmul(void **state) { run_sample(cgt_sample("matmul")); }
static void test_matmul_loop(void **state) { run_sample(cgt_sample("matmul_loop")); }
static void test_f64math(void **state) { run_sample(cgt_sample("f64math")); }

/* Every sample compiles for the cross target into a RISC-V ELF with the
 * double-float ABI, and links. */
static void
test_riscv_objects(void **state)
{
    for (int i = 0; i < CGT_NSAMPLES; i++) {
        size_t len;
        char *text = read_sample(cgt_samples[i].name, &len);
        assert_non_null(text);
        CgOptions o = {.opt_level = 3, .want_stages = 1, .stream_variant = 1};
        setenv("SPINE_TRITON_TARGET_ARCH", "riscv64", 1);
        assert_int_equal(cg_host_target(&o.target), 0);
        unsetenv("SPINE_TRITON_TARGET_ARCH");
        char so[512];
        snprintf(so, sizeof so, "%s/rv_%s.so", tmpdir, cgt_samples[i].name);
        CgResult res;
        int rc = cg_compile(text, len, &o, so, &res);
        if (rc)
            fprintf(stderr, "%s (riscv): %s\n", cgt_samples[i].name, res.error);
        assert_int_equal(rc, 0);
        const uint8_t *e = res.obj;
        assert_true(res.obj_len > 64 && memcmp(e, "\177ELF", 4) == 0);
        assert_int_equal(e[4], 2);                   /* ELFCLASS64 */
        assert_int_equal(e[18] | e[19] << 8, 243);   /* EM_RISCV */
        assert_int_equal((e[48] >> 1) & 3, 2);       /* EF_RISCV_FLOAT_ABI_DOUBLE */
        if (strcmp(cgt_samples[i].vec_need, "vec") == 0) /* vsetvli or vsetivli: RVV code */
            assert_true(strstr(res.asm_text, "vsetvli") || strstr(res.asm_text, "vsetivli"));
        FILE *f = fopen(so, "rb");
        assert_non_null(f);
        fclose(f);
        unlink(so);
        cg_result_fini(&res);
        free(text);
    }
}

static void
expect_error(const char *text, const CgOptions *o, const char *needle)
{
    CgResult res;
    char so[512];
    snprintf(so, sizeof so, "%s/bad.so", tmpdir);
    assert_int_not_equal(cg_compile(text, strlen(text), o, so, &res), 0);
    assert_non_null(res.error);
    if (!strstr(res.error, needle))
        fprintf(stderr, "error text lacks '%s':\n%s\n", needle, res.error);
    assert_non_null(strstr(res.error, needle));
    assert_int_not_equal(access(so, F_OK), 0);
    cg_result_fini(&res);
}

static void
test_errors(void **state)
{
    CgOptions o;
    host_options(&o, 0);
    expect_error("func.func @k(%a: i32 {", &o, "[parse]");
    expect_error("func.func private @k() { return }", &o, "no public func.func");
    expect_error("func.func @k(%a: i32) { return }", &o, "six i32");
    size_t len;
    char *text = read_sample("vadd", &len);
    o.ld_path = "/nonexistent/ld.lld";
    expect_error(text, &o, "[link]");
    free(text);
}

typedef struct Job {
    const char *text;
    size_t len;
    int id, rc;
} Job;

static void *
compile_job(void *arg)
{
    Job *j = arg;
    CgOptions o = {.opt_level = 3};
    cg_host_target(&o.target);
    char so[512];
    snprintf(so, sizeof so, "%s/conc%d.so", tmpdir, j->id);
    for (int k = 0; k < 3 && j->rc == 0; k++) {
        CgResult res;
        j->rc = cg_compile(j->text, j->len, &o, so, &res);
        cg_result_fini(&res);
    }
    unlink(so);
    return NULL;
}

static void
test_concurrent(void **state)
{
    unsetenv("SPINE_TRITON_TARGET_ARCH");
    size_t l1, l2;
    char *t1 = read_sample("gelu", &l1), *t2 = read_sample("rowsum", &l2);
    Job jobs[2] = {{t1, l1, 0, 0}, {t2, l2, 1, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, compile_job, &jobs[i]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].rc, 0);
    }
    free(t1), free(t2);
}

/* Compiles an inline module for the host and returns its entry (handle in *h). */
static CgtEntry
compile_inline(const char *text, const char *name, void **h)
{
    CgOptions o;
    host_options(&o, 0);
    char so[512];
    snprintf(so, sizeof so, "%s/%s.so", tmpdir, name);
    CgResult res;
    int rc = cg_compile(text, strlen(text), &o, so, &res);
    if (rc)
        fprintf(stderr, "%s: %s\n", name, res.error);
    assert_int_equal(rc, 0);
    cg_result_fini(&res);
    *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(*h);
    unlink(so);
    CgtEntry fn = (CgtEntry)(uintptr_t)dlsym(*h, CG_ENTRY_SYMBOL);
    assert_non_null(fn);
    return fn;
}

/* Every scalar kind is read from the low bytes of its 8-byte slot (§1.2). */
static void
test_scalar_slots(void **state)
{
    static const char text[] =
        "func.func @args(%o: memref<?xf64>, %b: i1, %c: i8, %s: i16, %l: i64, %h: f16,\n"
        "    %bh: bf16, %f: f32, %d: f64, %px: i32, %py: i32, %pz: i32, %nx: i32, %ny: i32,\n"
        "    %nz: i32, %pctx: !llvm.ptr) {\n"
        "  %v0 = arith.uitofp %b : i1 to f64\n"
        "  %v1 = arith.sitofp %c : i8 to f64\n"
        "  %v2 = arith.sitofp %s : i16 to f64\n"
        "  %v3 = arith.sitofp %l : i64 to f64\n"
        "  %v4 = arith.extf %h : f16 to f64\n"
        "  %v5 = arith.extf %bh : bf16 to f64\n"
        "  %v6 = arith.extf %f : f32 to f64\n"
        "  %v8 = arith.sitofp %px : i32 to f64\n"
        "  %v9 = arith.sitofp %nz : i32 to f64\n"
        "  %i0 = arith.constant 0 : index\n  %i1 = arith.constant 1 : index\n"
        "  %i2 = arith.constant 2 : index\n  %i3 = arith.constant 3 : index\n"
        "  %i4 = arith.constant 4 : index\n  %i5 = arith.constant 5 : index\n"
        "  %i6 = arith.constant 6 : index\n  %i7 = arith.constant 7 : index\n"
        "  %i8 = arith.constant 8 : index\n  %i9 = arith.constant 9 : index\n"
        "  memref.store %v0, %o[%i0] : memref<?xf64>\n  memref.store %v1, %o[%i1] : memref<?xf64>\n"
        "  memref.store %v2, %o[%i2] : memref<?xf64>\n  memref.store %v3, %o[%i3] : memref<?xf64>\n"
        "  memref.store %v4, %o[%i4] : memref<?xf64>\n  memref.store %v5, %o[%i5] : memref<?xf64>\n"
        "  memref.store %v6, %o[%i6] : memref<?xf64>\n  memref.store %d, %o[%i7] : memref<?xf64>\n"
        "  memref.store %v8, %o[%i8] : memref<?xf64>\n  memref.store %v9, %o[%i9] : memref<?xf64>\n"
        "  return\n}\n";
    void *h;
    CgtEntry fn = compile_inline(text, "args", &h);
    double out[10] = {0};
    uint64_t args[9];
    memset(args, 0xa5, sizeof args); /* garbage in the unused high bytes */
    float f = 2.5f;
    double d = -7.25;
    uint8_t b = 1;
    int8_t c = -5;
    int16_t sh = -300;
    uint16_t h16 = 0x3e00, bf16 = 0xc040; /* f16 1.5, bf16 -3.0 */
    args[0] = cgt_ptr(out);
    memcpy(&args[1], &b, 1); /* little-endian: the low bytes come first */
    memcpy(&args[2], &c, 1);
    memcpy(&args[3], &sh, 2);
    args[4] = (uint64_t)(int64_t)-5000000000ll;
    memcpy(&args[5], &h16, 2);
    memcpy(&args[6], &bf16, 2);
    memcpy(&args[7], &f, 4);
    memcpy(&args[8], &d, 8);
    fn(args, 11, 0, 0, 1, 1, 4, NULL);
    double want[10] = {1, -5, -300, -5000000000.0, 1.5, -3.0, 2.5, -7.25, 11, 4};
    for (int i = 0; i < 10; i++)
        assert_true(out[i] == want[i]);
    dlclose(h);
}

/* A dynamically sized intermediate (heap buffer) is freed again: run under ASan
 * this would report the leak. */
static void
test_dynamic_temp(void **state)
{
    static const char text[] =
        "#id = affine_map<(d0) -> (d0)>\n"
        "func.func @chain(%a0: memref<?xf32>, %a1: memref<?xf32>, %n: i32, %px: i32, %py: i32,\n"
        "    %pz: i32, %nx: i32, %ny: i32, %nz: i32, %pctx: !llvm.ptr) {\n"
        "  %ni = arith.index_cast %n : i32 to index\n"
        "  %two = arith.constant 2.0 : f32\n  %one = arith.constant 1.0 : f32\n"
        "  %xv = memref.reinterpret_cast %a0 to offset: [0], sizes: [%ni], strides: [1]\n"
        "      : memref<?xf32> to memref<?xf32, strided<[1]>>\n"
        "  %x = bufferization.to_tensor %xv restrict : memref<?xf32, strided<[1]>>\n"
        "  %ov = memref.reinterpret_cast %a1 to offset: [0], sizes: [%ni], strides: [1]\n"
        "      : memref<?xf32> to memref<?xf32, strided<[1]>>\n"
        "  %o = bufferization.to_tensor %ov restrict writable : memref<?xf32, strided<[1]>>\n"
        "  %e = tensor.empty(%ni) : tensor<?xf32>\n"
        "  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = [\"parallel\"]}\n"
        "      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) attrs = {tritium.kind = \"elementwise\", tritium.tile = [8]} {\n"
        "    ^bb0(%p: f32, %q: f32):\n      %m = arith.mulf %p, %two : f32\n"
        "      linalg.yield %m : f32\n  } -> tensor<?xf32>\n"
        "  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = [\"parallel\"]}\n"
        "      ins(%t, %x : tensor<?xf32>, tensor<?xf32>) outs(%o : tensor<?xf32>) attrs = {tritium.kind = \"elementwise\", tritium.tile = [8]} {\n"
        "    ^bb0(%p: f32, %y: f32, %q: f32):\n      %m = arith.addf %p, %y : f32\n"
        "      linalg.yield %m : f32\n  } -> tensor<?xf32>\n"
        "  bufferization.materialize_in_destination %r in restrict writable %ov\n"
        "      : (tensor<?xf32>, memref<?xf32, strided<[1]>>) -> ()\n"
        "  return\n}\n";
    void *h;
    CgtEntry fn = compile_inline(text, "chain", &h);
    enum { N = 1000 };
    float x[N], o[N];
    cgt_fill(x, N, 13, -1, 1);
    uint64_t args[3] = {cgt_ptr(x), cgt_ptr(o), cgt_i32(N)};
    fn(args, 0, 0, 0, 1, 1, 1, NULL);
    for (int i = 0; i < N; i++)
        assert_true(o[i] == 2.0f * x[i] + x[i]);
    dlclose(h);
}

/* Private helper functions are inlined before tiling (their calls sit in the
 * generic's body) and removed. */
static void
test_private_helper(void **state)
{
    static const char text[] =
        "#id = affine_map<(d0) -> (d0)>\n"
        "func.func private @twice_plus(%a: f32, %b: f32) -> f32 {\n"
        "  %t = arith.addf %a, %a : f32\n  %r = arith.addf %t, %b : f32\n"
        "  return %r : f32\n}\n"
        "func.func @h(%a0: memref<?xf32>, %a1: memref<?xf32>, %n: i32, %px: i32, %py: i32,\n"
        "    %pz: i32, %nx: i32, %ny: i32, %nz: i32, %pctx: !llvm.ptr) {\n"
        "  %ni = arith.index_cast %n : i32 to index\n"
        "  %one = arith.constant 1.0 : f32\n"
        "  %xv = memref.reinterpret_cast %a0 to offset: [0], sizes: [%ni], strides: [1]\n"
        "      : memref<?xf32> to memref<?xf32, strided<[1]>>\n"
        "  %x = bufferization.to_tensor %xv restrict : memref<?xf32, strided<[1]>>\n"
        "  %ov = memref.reinterpret_cast %a1 to offset: [0], sizes: [%ni], strides: [1]\n"
        "      : memref<?xf32> to memref<?xf32, strided<[1]>>\n"
        "  %o = bufferization.to_tensor %ov restrict writable : memref<?xf32, strided<[1]>>\n"
        "  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = [\"parallel\"]}\n"
        "      ins(%x : tensor<?xf32>) outs(%o : tensor<?xf32>) attrs = {tritium.kind = \"elementwise\", tritium.tile = [8]} {\n"
        "    ^bb0(%p: f32, %q: f32):\n"
        "      %m = func.call @twice_plus(%p, %one) : (f32, f32) -> f32\n"
        "      linalg.yield %m : f32\n  } -> tensor<?xf32>\n"
        "  bufferization.materialize_in_destination %r in restrict writable %ov\n"
        "      : (tensor<?xf32>, memref<?xf32, strided<[1]>>) -> ()\n"
        "  return\n}\n";
    void *h;
    CgtEntry fn = compile_inline(text, "helper", &h);
    enum { N = 333 };
    float x[N], o[N];
    cgt_fill(x, N, 14, -1, 1);
    uint64_t args[3] = {cgt_ptr(x), cgt_ptr(o), cgt_i32(N)};
    fn(args, 0, 0, 0, 1, 1, 1, NULL);
    for (int i = 0; i < N; i++)
        assert_true(o[i] == x[i] + x[i] + 1.0f);
    assert_null(dlsym(h, "twice_plus"));
    dlclose(h);
}

typedef struct RecCtx {
    void (*record)(void *ctx, int32_t id);
    int calls, last;
} RecCtx;

static void
record_hook(void *ctx, int32_t id)
{
    RecCtx *c = ctx;
    c->calls++;
    c->last = id;
}

/* An instrumented kernel loads the record function from pctx and calls it. */
static void
test_pctx_call(void **state)
{
    static const char text[] =
        "func.func @rec(%o: memref<?xi32>, %px: i32, %py: i32, %pz: i32, %nx: i32, %ny: i32,\n"
        "    %nz: i32, %pctx: !llvm.ptr) {\n"
        "  %fp = llvm.load %pctx : !llvm.ptr -> !llvm.ptr\n"
        "  %c7 = arith.constant 7 : i32\n"
        "  llvm.call %fp(%pctx, %c7) : !llvm.ptr, (!llvm.ptr, i32) -> ()\n"
        "  %i = arith.index_cast %px : i32 to index\n"
        "  memref.store %px, %o[%i] : memref<?xi32>\n"
        "  return\n}\n";
    void *h;
    CgtEntry fn = compile_inline(text, "rec", &h);
    RecCtx ctx = {record_hook, 0, 0};
    int32_t out[4] = {-1, -1, -1, -1};
    uint64_t args[1] = {cgt_ptr(out)};
    for (int p = 0; p < 4; p++)
        fn(args, p, 0, 0, 4, 1, 1, &ctx);
    assert_int_equal(ctx.calls, 4);
    assert_int_equal(ctx.last, 7);
    for (int p = 0; p < 4; p++)
        assert_int_equal(out[p], p);
    dlclose(h);
}

int
main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tritium_cg_XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_target),
        cmocka_unit_test(test_vadd),        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_bcast2d),     cmocka_unit_test(test_rowsum),
        cmocka_unit_test(test_fullsum),     cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_strided2d),
        cmocka_unit_test(test_matmul),      cmocka_unit_test(test_matmul_loop),
        cmocka_unit_test(test_f64math),     cmocka_unit_test(test_riscv_objects),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_scalar_slots), cmocka_unit_test(test_pctx_call),
        cmocka_unit_test(test_dynamic_temp), cmocka_unit_test(test_private_helper),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(tmpdir);
    return rc;
}
