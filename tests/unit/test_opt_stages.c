/*
 * test_opt_stages.c — tritium-opt emits every stage for the sample kernels in
 * tests/ir/stages/ (TTIR as the front end dumps it: 1-D and 2-D tiles, masks, loops,
 * reductions, dot, block pointers, fp16, in-kernel scopes; every .ttir file there).
 *
 * Runs the built tool once per file and stage (TRITIUM_OPT, else bin/tritium-opt of
 * the build tree this test belongs to, so the ASan build checks the ASan tool) and
 * checks that each output carries its stage's marker:
 *   ttir   tt.func and tt. ops; the text parses and prints back identically
 *   linalg linalg. ops inside func.func       llmlir llvm.func (LLVM dialect)
 *   llir   define ... @tritium_kernel          asm    the tritium_kernel: label
 *   obj    a relocatable ELF object for this machine that defines tritium_kernel
 *   so     an ELF shared object; dlopen + dlsym find tritium_kernel
 * Kernels are compiled for the host (SPINE_TRITON_TARGET_ARCH is unset), so that
 * the shared objects can be loaded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <regex.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler.h"

extern char **environ;

static char opt_path[PATH_MAX];
static char tmpdir[] = "/tmp/tritium-opt-stages-XXXXXX";
static glob_t samples;

/* ---- helpers ------------------------------------------------------------------------------ */

/* Reads all of path into a NUL-terminated buffer (caller frees); NULL if unreadable. */
static uint8_t *
read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
            *len = fread(buf, 1, (size_t)n, f);
            buf[*len] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* Runs `tritium-opt in --emit=stage -o out` with stderr to tmpdir/err; returns the exit
 * status (-1 when the tool could not run or died from a signal). */
static int
run_opt(const char *in, const char *stage, const char *out)
{
    char emit[64], err[PATH_MAX];
    snprintf(emit, sizeof emit, "--emit=%s", stage);
    snprintf(err, sizeof err, "%s/err", tmpdir);
    char *argv[] = {opt_path, (char *)in, emit, "-o", (char *)out, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, opt_path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* The tool's standard error from the last run_opt (caller frees). */
static char *
last_stderr(void)
{
    char err[PATH_MAX];
    size_t n;
    snprintf(err, sizeof err, "%s/err", tmpdir);
    return (char *)read_all(err, &n);
}

/* Runs one stage and returns its output (caller frees); fails the test with the tool's
 * messages unless it succeeded. */
static uint8_t *
emit(const char *in, const char *stage, char *out, size_t out_size, size_t *len)
{
    snprintf(out, out_size, "%s/out.%s", tmpdir, stage);
    unlink(out);
    int rc = run_opt(in, stage, out);
    if (rc != 0) {
        char *msg = last_stderr();
        print_error("%s", msg ? msg : "");
        free(msg);
        fail_msg("%s --emit=%s: exit status %d", in, stage, rc);
    }
    uint8_t *buf = read_all(out, len);
    assert_non_null(buf);
    assert_true(*len > 0);
    return buf;
}

static void
expect_match(const char *file, const char *stage, const char *text, const char *pattern)
{
    regex_t re;
    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0);
    int rc = regexec(&re, text, 0, NULL, 0);
    regfree(&re);
    if (rc != 0)
        fail_msg("%s --emit=%s: no match for /%s/", file, stage, pattern);
}

/* The ELF header of a file's contents, checked for the 64-bit little-endian ident. */
static const Elf64_Ehdr *
elf_header(const uint8_t *buf, size_t len)
{
    assert_true(len >= sizeof(Elf64_Ehdr));
    assert_memory_equal(buf, ELFMAG, SELFMAG);
    assert_int_equal(buf[EI_CLASS], ELFCLASS64);
    assert_int_equal(buf[EI_DATA], ELFDATA2LSB);
    return (const Elf64_Ehdr *)buf;
}

/* e_machine of this test's own executable: what the host's tools produce. */
static int
host_machine(void)
{
    size_t len;
    uint8_t *self = read_all("/proc/self/exe", &len);
    assert_non_null(self);
    int m = elf_header(self, len)->e_machine;
    free(self);
    return m;
}

/* Does the relocatable object define a function symbol named `name`? */
static int
defines_function(const uint8_t *buf, size_t len, const char *name)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
    assert_true(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= len);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strtab = &sh[sh[i].sh_link];
        assert_true(sh[i].sh_offset + sh[i].sh_size <= len && strtab->sh_offset + strtab->sh_size <= len);
        const Elf64_Sym *sym = (const Elf64_Sym *)(buf + sh[i].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            if (sym[k].st_name >= strtab->sh_size || sym[k].st_shndx == SHN_UNDEF ||
                ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC)
                continue;
            if (strcmp((const char *)buf + strtab->sh_offset + sym[k].st_name, name) == 0)
                return 1;
        }
    }
    return 0;
}

/* ---- one check per stage ------------------------------------------------------------------ */

/* tt.func with tt. ops, and the text round-trips through the parser and printer. */
static void
check_ttir(const char *file, const uint8_t *out, size_t len, const char *path)
{
    const char *text = (const char *)out;
    expect_match(file, "ttir", text, "tt\\.func ");
    expect_match(file, "ttir", text, "= tt\\.[a-z_]+");
    IrModule *m = ir_parse_module(text, len, path, stderr);
    assert_non_null(m);
    char *again = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&again, &n);
    assert_non_null(f);
    ir_print_module(f, m, 0);
    fclose(f);
    ir_module_destroy(m);
    assert_string_equal(again, text);
    free(again);
}

static void
check_linalg(const char *file, const uint8_t *out, size_t len, const char *path)
{
    expect_match(file, "linalg", (const char *)out, "linalg\\.(generic|matmul|fill|copy|map|reduce)");
    expect_match(file, "linalg", (const char *)out, "func\\.func ");
    assert_null(strstr((const char *)out, " tt.")); /* upstream dialects only */
}

static void
check_llmlir(const char *file, const uint8_t *out, size_t len, const char *path)
{
    expect_match(file, "llmlir", (const char *)out, "llvm\\.func ");
}

static void
check_llir(const char *file, const uint8_t *out, size_t len, const char *path)
{
    expect_match(file, "llir", (const char *)out, "^define .*@tritium_kernel\\(");
}

static void
check_asm(const char *file, const uint8_t *out, size_t len, const char *path)
{
    expect_match(file, "asm", (const char *)out, "^tritium_kernel:");
}

static void
check_obj(const char *file, const uint8_t *out, size_t len, const char *path)
{
    const Elf64_Ehdr *eh = elf_header(out, len);
    assert_int_equal(eh->e_type, ET_REL);
    assert_int_equal(eh->e_machine, host_machine());
    if (!defines_function(out, len, "tritium_kernel"))
        fail_msg("%s --emit=obj: no tritium_kernel function symbol", file);
}

static void
check_so(const char *file, const uint8_t *out, size_t len, const char *path)
{
    assert_int_equal(elf_header(out, len)->e_type, ET_DYN);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fail_msg("%s --emit=so: dlopen: %s", file, dlerror());
    void *entry = dlsym(h, "tritium_kernel");
    dlclose(h);
    assert_non_null(entry);
}

typedef void (*StageCheck)(const char *file, const uint8_t *out, size_t len, const char *path);

static const struct {
    const char *name;
    StageCheck check;
} stages[] = {
    {"ttir", check_ttir}, {"linalg", check_linalg}, {"llmlir", check_llmlir}, {"llir", check_llir},
    {"asm", check_asm},   {"obj", check_obj},       {"so", check_so},
};
enum { NSTAGES = sizeof stages / sizeof stages[0] };

/* ---- tests -------------------------------------------------------------------------------- */

/* Every sample through one stage; *state is the index into stages[]. */
static void
test_stage(void **state)
{
    int s = (int)(intptr_t)*state;
    assert_true(samples.gl_pathc > 0);
    for (size_t i = 0; i < samples.gl_pathc; i++) {
        const char *in = samples.gl_pathv[i];
        const char *base = strrchr(in, '/') ? strrchr(in, '/') + 1 : in;
        char out[PATH_MAX];
        size_t len;
        uint8_t *buf = emit(in, stages[s].name, out, sizeof out, &len);
        stages[s].check(base, buf, len, out);
        free(buf);
    }
}

/* An unknown stage names the valid ones (obj among them) and fails with status 1. */
static void
test_unknown_stage(void **state)
{
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/out.bogus", tmpdir);
    assert_int_equal(run_opt(samples.gl_pathv[0], "bogus", out), 1);
    char *msg = last_stderr();
    assert_non_null(msg);
    assert_non_null(strstr(msg, "unknown stage 'bogus'"));
    assert_non_null(strstr(msg, "obj"));
    free(msg);
}

/* ---- set-up ------------------------------------------------------------------------------- */

/* Finds the tool and the samples, makes the output directory. */
static int
setup(void **state)
{
    const char *env = getenv("TRITIUM_OPT");
    if (env) {
        snprintf(opt_path, sizeof opt_path, "%s", env);
    } else {
        /* <build>/tests/test_opt_stages -> <build>/bin/tritium-opt */
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return -1;
        exe[n] = '\0';
        for (int up = 0; up < 2; up++)
            *strrchr(exe, '/') = '\0';
        snprintf(opt_path, sizeof opt_path, "%.*s/bin/tritium-opt", (int)(sizeof opt_path - 20), exe);
    }
    if (access(opt_path, X_OK) != 0) {
        fprintf(stderr, "test_opt_stages: %s is not built\n", opt_path);
        return -1;
    }
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof pattern, "%.*s/../ir/stages/*.ttir", (int)(strrchr(__FILE__, '/') - __FILE__),
             __FILE__);
    if (glob(pattern, 0, NULL, &samples) != 0 || samples.gl_pathc == 0) {
        fprintf(stderr, "test_opt_stages: no samples match %s\n", pattern);
        return -1;
    }
    unsetenv("SPINE_TRITON_TARGET_ARCH");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int
teardown(void **state)
{
    static const char *const leftovers[] = {"err", "out.bogus"};
    char p[PATH_MAX];
    for (int s = 0; s < NSTAGES; s++) {
        snprintf(p, sizeof p, "%s/out.%s", tmpdir, stages[s].name);
        unlink(p);
    }
    for (size_t i = 0; i < sizeof leftovers / sizeof leftovers[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, leftovers[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    globfree(&samples);
    return 0;
}

/* test_stage for stages[i], named after the stage */
#define STAGE_TEST(i, name) {"emit_" name, test_stage, NULL, NULL, (void *)(intptr_t)(i)}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        STAGE_TEST(0, "ttir"), STAGE_TEST(1, "linalg"), STAGE_TEST(2, "llmlir"), STAGE_TEST(3, "llir"),
        STAGE_TEST(4, "asm"),  STAGE_TEST(5, "obj"),    STAGE_TEST(6, "so"),
        cmocka_unit_test(test_unknown_stage),
    };
    _Static_assert(NSTAGES == 7, "one STAGE_TEST per entry of stages[]");
    return cmocka_run_group_tests_name("opt_stages", tests, setup, teardown);
}
