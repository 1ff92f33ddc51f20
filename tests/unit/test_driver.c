/*
 * test_driver.c — the compile driver (driver.h): concurrent compiles in one
 * process give the sequential results; the compile server returns exactly what
 * an in-process compile does, is reused, survives a crash of its compile (which
 * fails with the signal and the Linalg input) and is replaced when killed; parse,
 * lowering and option errors come back located and typed.
 *
 * Kernels are the TTIR samples of tests/ir/stages/ (as the front end dumps them),
 * compiled for the host (SPINE_TRITON_TARGET_ARCH is unset).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"

/* Set before the first server starts: forked children read it (drv_server.c). */
#define CRASH_MARK "func.func @crashme"

/* A kernel the lowering rejects: a block pointer chosen by scf.if (line 7 below). */
static const char lower_error_ttir[] =
    "module {\n"
    "  tt.func public @ifptr(%arg0: !tt.ptr<f32>, %arg1: !tt.ptr<f32>, %arg2: i32) {\n"
    "    %c0_i32 = arith.constant 0 : i32\n"
    "    %c16_i32 = arith.constant 16 : i32\n"
    "    %c64_i64 = arith.constant 64 : i64\n"
    "    %0 = arith.cmpi sgt, %arg2, %c0_i32 : i32\n"
    "    %1 = scf.if %0 -> (!tt.ptr<tensor<16xf32>>) {\n"
    "      %c1_i64 = arith.constant 1 : i64\n"
    "      %2 = tt.make_tensor_ptr %arg0, [%c64_i64], [%c1_i64], [%c0_i32] "
    "{order = array<i32: 0>} : !tt.ptr<tensor<16xf32>>\n"
    "      scf.yield %2 : !tt.ptr<tensor<16xf32>>\n"
    "    } else {\n"
    "      %c1_i64_0 = arith.constant 1 : i64\n"
    "      %3 = tt.make_tensor_ptr %arg0, [%c64_i64], [%c1_i64_0], [%c16_i32] "
    "{order = array<i32: 0>} : !tt.ptr<tensor<16xf32>>\n"
    "      scf.yield %3 : !tt.ptr<tensor<16xf32>>\n"
    "    }\n"
    "    %4 = tt.load %1 : !tt.ptr<tensor<16xf32>>\n"
    "    %c1_i64_1 = arith.constant 1 : i64\n"
    "    %5 = tt.make_tensor_ptr %arg1, [%c64_i64], [%c1_i64_1], [%c0_i32] "
    "{order = array<i32: 0>} : !tt.ptr<tensor<16xf32>>\n"
    "    tt.store %5, %4 : !tt.ptr<tensor<16xf32>>\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

/* ---- helpers ------------------------------------------------------------------------------ */

/* The text of tests/ir/stages/<name>.ttir (caller frees). */
static char *
sample(const char *name, size_t *len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%.*s/../ir/stages/%s.ttir", (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__,
             name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&buf, &cap);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    fclose(m);
    *len = cap;
    return buf;
}

/* add2d renamed to crashme: a kernel whose Linalg contains CRASH_MARK. */
static char *
crashme(size_t *len)
{
    char *t = sample("add2d", len);
    char *at = strstr(t, "@add2d(");
    assert_non_null(at);
    char *out = NULL;
    assert_true(asprintf(&out, "%.*s@crashme(%s", (int)(at - t), t, at + strlen("@add2d(")) > 0);
    free(t);
    *len = strlen(out);
    return out;
}

static DrvStatus
compile(const char *text, size_t len, bool isolate, DrvServer *s, DrvResult *r)
{
    DrvOptions o;
    drv_options_init(&o);
    o.name = "sample.ttir";
    o.isolate = isolate;
    return drv_compile(text, len, &o, s, r);
}

static void
expect_ok(const DrvResult *r)
{
    if (r->status != DRV_OK)
        fail_msg("compile failed (%s): %s", drv_status_name(r->status), r->error ? r->error : "");
    assert_non_null(r->stage[DRV_STAGE_LINALG]);
    assert_non_null(r->obj);
    assert_true(r->obj_len > 64);
    assert_memory_equal(r->obj, "\177ELF", 4);
}

static void
expect_same_text(const char *what, const char *a, size_t na, const char *b, size_t nb)
{
    if ((a == NULL) != (b == NULL) || na != nb || (a && memcmp(a, b, na) != 0))
        fail_msg("%s differs (%zu vs %zu bytes)", what, na, nb);
}

/* Everything a compile produces, except the times and how it ran. */
static void
expect_same_result(const DrvResult *a, const DrvResult *b)
{
    assert_int_equal(a->status, b->status);
    for (int i = 0; i < DRV_STAGE_COUNT; i++)
        expect_same_text(drv_stage_name((DrvStage)i), a->stage[i], a->stage_len[i], b->stage[i], b->stage_len[i]);
    expect_same_text("object", (const char *)a->obj, a->obj_len, (const char *)b->obj, b->obj_len);
    assert_int_equal(a->cost.bytes_loaded, b->cost.bytes_loaded);
    assert_int_equal(a->cost.bytes_stored, b->cost.bytes_stored);
    assert_memory_equal(a->cost.flops, b->cost.flops, sizeof a->cost.flops);
    assert_int_equal(a->cost.exact, b->cost.exact);
    assert_int_equal(a->cost.atomics, b->cost.atomics);
    assert_int_equal(a->cost.nscopes, b->cost.nscopes);
    for (int i = 0; i < a->cost.nscopes; i++)
        assert_string_equal(a->cost.scope_names[i], b->cost.scope_names[i]);
    assert_int_equal(a->ndiags, b->ndiags);
    for (int i = 0; i < a->ndiags; i++) {
        assert_int_equal(a->diags[i].severity, b->diags[i].severity);
        assert_string_equal(a->diags[i].file, b->diags[i].file);
        assert_int_equal(a->diags[i].line, b->diags[i].line);
        assert_int_equal(a->diags[i].col, b->diags[i].col);
        assert_string_equal(a->diags[i].msg, b->diags[i].msg);
    }
    assert_int_equal(a->vector_bytes, b->vector_bytes);
    assert_int_equal(a->stream_bytes, b->stream_bytes);
    if (a->error || b->error)
        assert_string_equal(a->error ? a->error : "", b->error ? b->error : "");
}

/* ---- tests -------------------------------------------------------------------------------- */

static void
test_api_table(void **state)
{
    assert_int_equal(cg_api.abi_version, CG_ABI_VERSION);
    assert_ptr_equal(cg_api.compile, cg_compile);
    assert_ptr_equal(cg_api.host_target, cg_host_target);
    assert_ptr_equal(cg_api.result_fini, cg_result_fini);
    assert_ptr_equal(cg_api.drv_options_init, drv_options_init);
    assert_ptr_equal(cg_api.drv_compile, drv_compile);
    assert_ptr_equal(cg_api.drv_result_fini, drv_result_fini);
    assert_ptr_equal(cg_api.drv_server_create, drv_server_create);
    assert_ptr_equal(cg_api.drv_server_destroy, drv_server_destroy);
    assert_ptr_equal(cg_api.drv_server_pid, drv_server_pid);
    assert_ptr_equal(cg_api.drv_server_forget, drv_server_forget);
}

/* The defaults are a Python compile's (python/triton/compiler/compiler.py). */
static void
test_defaults_are_a_python_compile(void **state)
{
    DrvOptions o;
    memset(&o, 0xff, sizeof o);
    drv_options_init(&o);
    assert_true(o.instrument);
    assert_int_equal(o.stream, DRV_STREAM_AUTO);
    assert_int_equal(o.vector_bytes, 0);
    assert_true(o.want_stages);
    assert_int_equal(o.last, DRV_LAST_NATIVE);
    assert_null(o.target);
    assert_null(o.so_path);
    assert_false(o.isolate);
    assert_false(o.skip_passes);
}

static void
test_every_stage_and_the_cost(void **state)
{
    size_t len;
    char *t = sample("scoped", &len);
    DrvResult r;
    compile(t, len, false, NULL, &r);
    expect_ok(&r);
    for (int i = 0; i < DRV_STAGE_COUNT; i++) {
        assert_non_null(r.stage[i]);
        assert_int_equal(strlen(r.stage[i]), r.stage_len[i]);
    }
    assert_non_null(strstr(r.stage[DRV_STAGE_TTIR], "proton.record"));
    assert_non_null(strstr(r.stage[DRV_STAGE_LINALG], "llvm.call")); /* instrumented */
    assert_non_null(strstr(r.stage[DRV_STAGE_ASM], "tritium_kernel:"));
    assert_true(r.cost.bytes_loaded > 0 && r.cost.bytes_stored > 0);
    assert_true(r.cost.nscopes >= 1);
    assert_true(r.vector_bytes == 16 || r.vector_bytes == 32 || r.vector_bytes == 64);
    assert_true(r.ms[DRV_PHASE_MLIR] > 0 && r.ms[DRV_PHASE_LLVM] > 0);
    assert_null(r.error);
    drv_result_fini(&r);
    free(t);
}

typedef struct Job {
    const char *text;
    size_t len;
    const DrvResult *want;
    int rounds, mismatches;
} Job;

static void *
compile_rounds(void *arg)
{
    Job *j = arg;
    for (int i = 0; i < j->rounds; i++) {
        DrvResult r;
        compile(j->text, j->len, false, NULL, &r);
        const DrvResult *w = j->want;
        bool same = r.status == DRV_OK && r.stage_len[DRV_STAGE_LINALG] == w->stage_len[DRV_STAGE_LINALG] &&
                    !memcmp(r.stage[DRV_STAGE_LINALG], w->stage[DRV_STAGE_LINALG], r.stage_len[DRV_STAGE_LINALG]) &&
                    r.obj_len == w->obj_len && !memcmp(r.obj, w->obj, r.obj_len) &&
                    r.stream_bytes == w->stream_bytes && r.cost.bytes_loaded == w->cost.bytes_loaded &&
                    r.cost.bytes_stored == w->cost.bytes_stored && r.cost.flops[1] == w->cost.flops[1] &&
                    r.cost.exact == w->cost.exact;
        j->mismatches += !same;
        drv_result_fini(&r);
    }
    return NULL;
}

/* Two different kernels with loops (their costs multiply by trip counts) compiled on
 * two threads at once, in process (no server), give exactly the results of
 * sequential compiles: text, object, cost. */
static void
test_concurrent_compiles_match_sequential(void **state)
{
    static const char *const names[2] = {"mm", "rowsum"};
    char *text[2];
    size_t len[2];
    DrvResult want[2];
    Job jobs[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        text[i] = sample(names[i], &len[i]);
        compile(text[i], len[i], false, NULL, &want[i]);
        expect_ok(&want[i]);
        jobs[i] = (Job){text[i], len[i], &want[i], 3, 0};
    }
    /* different kernels, so that a result landing in the wrong compile shows */
    assert_false(want[0].obj_len == want[1].obj_len && !memcmp(want[0].obj, want[1].obj, want[0].obj_len));
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, compile_rounds, &jobs[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        if (jobs[i].mismatches)
            fail_msg("%s: %d of %d concurrent compiles differ from the sequential one", names[i],
                     jobs[i].mismatches, jobs[i].rounds);
        drv_result_fini(&want[i]);
        free(text[i]);
    }
}

/* Server results equal in-process results; one server serves every compile; a
 * crash fails that compile only (signal, Linalg input) and the next compile gets a
 * new server; a killed idle server is replaced; destroy ends the process. */
static void
test_server(void **state)
{
    size_t len, clen, slen;
    char *t = sample("add2d", &len), *crash = crashme(&clen), *sc = sample("scoped", &slen);
    DrvServer *s = drv_server_create();
    assert_non_null(s);
    assert_int_equal(drv_server_pid(s), 0);
    DrvResult local, r;
    compile(sc, slen, false, NULL, &local);
    compile(sc, slen, true, s, &r);
    expect_ok(&r);
    expect_same_result(&local, &r);
    assert_int_equal(r.servers_started, 1);
    assert_false(r.forked);
    pid_t pid1 = drv_server_pid(s);
    assert_true(pid1 > 0 && pid1 != getpid());
    drv_result_fini(&local);
    drv_result_fini(&r);

    compile(t, len, true, s, &r);
    expect_ok(&r);
    assert_int_equal(r.servers_started, 0);
    assert_int_equal(drv_server_pid(s), pid1);
    drv_result_fini(&r);

    assert_int_equal(compile(crash, clen, true, s, &r), DRV_ERR_CRASH);
    assert_int_equal(r.crash_signal, SIGSEGV);
    assert_non_null(strstr(r.error, "code generation crashed (signal 11"));
    assert_non_null(strstr(r.error, "unaffected"));
    assert_non_null(r.stage[DRV_STAGE_LINALG]); /* sent ahead of code generation */
    assert_non_null(strstr(r.stage[DRV_STAGE_LINALG], CRASH_MARK));
    assert_int_equal(drv_server_pid(s), 0);
    drv_result_fini(&r);

    compile(t, len, true, s, &r);
    expect_ok(&r);
    assert_int_equal(r.servers_started, 1);
    pid_t pid2 = drv_server_pid(s);
    assert_true(pid2 > 0 && pid2 != pid1);
    drv_result_fini(&r);

    kill(pid2, SIGKILL);
    usleep(100 * 1000);
    compile(t, len, true, s, &r);
    expect_ok(&r);
    assert_int_equal(r.servers_started, 1);
    pid_t pid3 = drv_server_pid(s);
    assert_true(pid3 > 0 && pid3 != pid2);
    drv_result_fini(&r);

    drv_server_destroy(s);
    assert_int_equal(kill(pid3, 0), -1); /* exited and reaped */
    assert_int_equal(errno, ESRCH);
    free(t);
    free(crash);
    free(sc);
}

/* Without a server an isolated compile forks a one-shot child. */
static void
test_one_shot_child(void **state)
{
    size_t len, clen;
    char *t = sample("add2d", &len), *crash = crashme(&clen);
    DrvResult local, r;
    compile(t, len, false, NULL, &local);
    compile(t, len, true, NULL, &r);
    expect_ok(&r);
    expect_same_result(&local, &r);
    assert_true(r.forked);
    assert_int_equal(r.servers_started, 0);
    drv_result_fini(&r);
    drv_result_fini(&local);
    assert_int_equal(compile(crash, clen, true, NULL, &r), DRV_ERR_CRASH);
    assert_int_equal(r.crash_signal, SIGSEGV);
    assert_true(r.forked);
    drv_result_fini(&r);
    /* in process the hook does nothing */
    compile(crash, clen, false, NULL, &r);
    expect_ok(&r);
    drv_result_fini(&r);
    free(t);
    free(crash);
}

static void
test_parse_error(void **state)
{
    static const char bad[] = "module {\n  tt.func public @k() {\n    %0 = arith.bogus\n  }\n}\n";
    DrvResult r;
    assert_int_equal(compile(bad, sizeof bad - 1, false, NULL, &r), DRV_ERR_PARSE);
    assert_non_null(r.error);
    assert_non_null(strstr(r.error, "sample.ttir:3:"));
    assert_null(r.stage[DRV_STAGE_LINALG]);
    drv_result_fini(&r);
}

/* A lowering error is a located diagnostic, in process and through the server. */
static void
test_lowering_error_is_located(void **state)
{
    DrvServer *s = drv_server_create();
    for (int isolate = 0; isolate < 2; isolate++) {
        DrvResult r;
        assert_int_equal(compile(lower_error_ttir, sizeof lower_error_ttir - 1, isolate, s, &r), DRV_ERR_DIAG);
        assert_true(r.ndiags >= 1);
        assert_int_equal(r.diags[0].severity, 0);
        assert_string_equal(r.diags[0].file, "sample.ttir");
        assert_int_equal(r.diags[0].line, 7);
        assert_int_equal(r.diags[0].col, 5);
        assert_non_null(strstr(r.diags[0].msg, "pointers produced by an if/else"));
        assert_non_null(strstr(r.error, "sample.ttir:7:5: error: pointers produced by an if/else"));
        drv_result_fini(&r);
    }
    drv_server_destroy(s);
}

static void
test_options_are_checked(void **state)
{
    size_t len;
    char *t = sample("add2d", &len);
    DrvOptions o;
    drv_options_init(&o);
    o.vector_bytes = 24;
    DrvResult r;
    assert_int_equal(drv_compile(t, len, &o, NULL, &r), DRV_ERR_OPTIONS);
    assert_non_null(strstr(r.error, "16, 32 or 64"));
    drv_result_fini(&r);
    drv_options_init(&o);
    o.dump_pass = "nope";
    assert_int_equal(drv_compile(t, len, &o, NULL, &r), DRV_ERR_OPTIONS);
    drv_result_fini(&r);
    /* a fixed width and no streaming variant reach the code generator */
    drv_options_init(&o);
    o.vector_bytes = 16;
    o.stream = DRV_STREAM_OFF;
    drv_compile(t, len, &o, NULL, &r);
    expect_ok(&r);
    assert_int_equal(r.vector_bytes, 16);
    assert_int_equal(r.stream_bytes, 0);
    assert_null(strstr(r.stage[DRV_STAGE_LLIR], "tritium_kernel_nt"));
    drv_result_fini(&r);
    free(t);
}

int
main(void)
{
    unsetenv("SPINE_TRITON_TARGET_ARCH");
    unsetenv("TRITIUM_VECTOR_BYTES");
    setenv("TRITIUM_CG_CRASH_FOR_TESTING", CRASH_MARK, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_table),
        cmocka_unit_test(test_defaults_are_a_python_compile),
        cmocka_unit_test(test_every_stage_and_the_cost),
        cmocka_unit_test(test_concurrent_compiles_match_sequential),
        cmocka_unit_test(test_server),
        cmocka_unit_test(test_one_shot_child),
        cmocka_unit_test(test_parse_error),
        cmocka_unit_test(test_lowering_error_is_located),
        cmocka_unit_test(test_options_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
