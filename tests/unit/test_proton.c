/*
 * test_proton.c — sessions, host scopes, kernel and in-kernel scope aggregation
 * (proton/src: pn_session, pn_scope, pn_launch, pn_tree, pn_merge).
 *
 * Every test runs on the fake clock (1 tick = 1 ns, moved by the test), so times
 * are exact. Upstream semantics checked: reference/proton.md §1 and §7.
 */
#include "test_proton_util.h"

#include <fcntl.h>

static int
setup(void **state)
{
    (void)state;
    unsetenv("PROTON_KERNEL_CAPTURE");
    unsetenv("TRITON_PROTON_DISABLE");
    unsetenv("TRITON_DISABLE_PROTON");
    setenv("PROTON_EVENTS", "none", 1);
    pt_reset();
    return 0;
}

/* ids count up from a process-wide counter, never reused; same path = same id */
static void
test_session_ids(void **state)
{
    int a, b, c, a2;
    (void)state;
    a = pn_session_start(pt_path("ids_a"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    b = pn_session_start(pt_path("ids_b"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    assert_true(a >= 0);
    assert_int_equal(b, a + 1);
    a2 = pn_session_start(pt_path("ids_a"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    assert_int_equal(a2, a);
    assert_int_equal(pn_session_finalize(a, ""), 0);
    c = pn_session_start(pt_path("ids_a"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    assert_int_equal(c, b + 1);
    assert_int_equal(pn_session_finalize(-1, ""), 0);
    assert_int_equal(pn_active(), 0);
}

static void
test_unknown_session(void **state)
{
    (void)state;
    assert_int_equal(pn_session_activate(12345), -EINVAL);
    assert_string_equal(pn_last_error(), "Session has not been initialized: 12345");
    assert_int_equal(pn_session_deactivate(12345), -EINVAL);
    assert_int_equal(pn_session_finalize(12345, ""), 0);
    assert_int_equal(pn_session_depth(12345), -1);
    assert_int_equal(pn_session_start("x", 7, PN_DATA_TREE), -EINVAL);
    assert_string_equal(pn_last_error(), "Unknown context source: 7");
    assert_int_equal(pn_session_start("x", PN_CONTEXT_SHADOW, 9), -EINVAL);
    assert_string_equal(pn_last_error(), "Unknown data: 9");
}

/* kernels launched inside scopes become children of those scopes; times exact */
static void
test_kernels_under_scopes(void **state)
{
    uint32_t k = pt_kernel("add_kernel", 0, NULL), m = pt_kernel("mul_kernel", 0, NULL);
    int id = pn_session_start(pt_path("nest"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t s1, s2;
    cJSON *tree, *root, *n;
    (void)state;
    pt_tick(100);
    s1 = pn_scope_enter("outer");
    s2 = pn_scope_enter("inner");
    for (int i = 0; i < 3; i++)
        pt_launch(k, 8, 1000 + (uint64_t)i, 0);
    pn_scope_exit(s2);
    pt_launch(m, 2, 500, 0);
    pn_scope_exit(s1);
    pt_launch(k, 4, 700, 0);
    tree = pt_tree(id);
    assert_non_null(tree);
    root = cJSON_GetArrayItem(tree, 0);
    n = pt_find(root, "outer/inner/add_kernel");
    assert_non_null(n);
    assert_int_equal(pt_im(n, "count"), 3);
    assert_int_equal(pt_im(n, "time (ns)"), 3003);
    assert_int_equal(pt_im(n, "programs"), 24);
    assert_int_equal(pt_im(n, "threads"), 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "metrics"), "device_type")->valuestring, "CPU");
    n = pt_find(root, "outer/mul_kernel");
    assert_int_equal(pt_im(n, "count"), 1);
    assert_int_equal(pt_im(n, "time (ns)"), 500);
    n = pt_find(root, "add_kernel");
    assert_int_equal(pt_im(n, "count"), 1);
    assert_int_equal(pt_im(n, "time (ns)"), 700);
    assert_int_equal(pt_nchildren(root), 2);
    /* host scopes carry no count/time of their own; the root carries zero hints */
    assert_int_equal(pt_im(pt_find(root, "outer"), "count"), -1);
    assert_int_equal(pt_im(root, "count"), 0);
    assert_int_equal(pt_im(root, "time (ns)"), 0);
    cJSON_Delete(tree);
    pn_session_finalize(id, "");
}

/* in-kernel scopes nest under their kernel; count per program, normalized time */
static void
test_inkernel_scopes(void **state)
{
    static const char *names[] = { "load", "compute" };
    uint32_t k = pt_kernel("scoped", 2, names);
    int id = pn_session_start(pt_path("kscopes"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    PnLaunch l;
    int32_t g[3] = { 4, 1, 1 };
    cJSON *tree, *root, *n;
    (void)state;
    pt_tick(100);
    for (int rep = 0; rep < 2; rep++) {
        uint64_t t0;
        PnThread *t;
        pn_launch_begin(&l, k, g, 1);
        t0 = pn_fake_ticks;
        t = pn_worker_begin(&l, 0);
        for (int p = 0; p < 4; p++) {
            t->record(t, 0, PN_REC_START);
            pt_tick(10);
            t->record(t, 1, PN_REC_START);
            pt_tick(30);
            t->record(t, 1, PN_REC_END);
            pt_tick(10);
            t->record(t, 0, PN_REC_END);
        }
        t->record(t, 1, PN_REC_END); /* unmatched end: ignored */
        t->record(t, 7, PN_REC_START); /* unknown scope id: ignored */
        pn_worker_end(&l, t);
        pn_fake_ticks = t0 + 1000;
        pn_launch_end(&l);
    }
    tree = pt_tree(id);
    root = cJSON_GetArrayItem(tree, 0);
    /* measured durations (load covers compute), under names hatchet does not add
     * to the kernel's count and time */
    n = pt_find(root, "scoped/load");
    assert_int_equal(pt_im(n, "scope_count"), 8);
    assert_int_equal(pt_im(n, "scope_time (ns)"), 8 * 50);
    assert_true(pt_metric(n, "normalized_time (ns)") == 100.0); /* 2 launches x 50 ns */
    assert_int_equal(pt_im(n, "count"), -1);
    n = pt_find(root, "scoped/load/compute");
    assert_int_equal(pt_im(n, "scope_count"), 8);
    assert_int_equal(pt_im(n, "scope_time (ns)"), 8 * 30);
    assert_true(pt_metric(n, "normalized_time (ns)") == 60.0);
    assert_int_equal(pt_im(root, "scope_time (ns)"), -1); /* no hint: shown per node */
    assert_int_equal(pt_im(pt_find(root, "scoped"), "count"), 2);
    assert_int_equal(pt_im(pt_find(root, "scoped"), "time (ns)"), 2000);
    cJSON_Delete(tree);
    pn_session_finalize(id, "");
}

/* two sessions at once record independently (upstream: 2 then 3 kernels) */
static void
test_two_sessions(void **state)
{
    uint32_t k = pt_kernel("k2", 0, NULL);
    int a = pn_session_start(pt_path("two_a"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    int b = pn_session_start(pt_path("two_b"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    cJSON *ta, *tb;
    (void)state;
    pt_tick(100);
    pt_launch(k, 1, 100, 0);
    pt_launch(k, 1, 100, 0);
    ta = pt_tree(a);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(ta, 0), "k2"), "count"), 2);
    assert_int_equal(pn_session_finalize(a, ""), 0);
    pt_launch(k, 1, 100, 0);
    pn_session_deactivate(b);
    pt_launch(k, 1, 100, 0); /* not recorded: b is inactive */
    pn_session_activate(b);
    tb = pt_tree(b);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(tb, 0), "k2"), "count"), 3);
    cJSON_Delete(ta);
    cJSON_Delete(tb);
    pn_session_finalize(b, "");
}

/* start() on a live session's path re-activates it and data accumulates */
static void
test_same_path_reuse(void **state)
{
    uint32_t k = pt_kernel("k3", 0, NULL);
    int a = pn_session_start(pt_path("reuse"), PN_CONTEXT_SHADOW, PN_DATA_TREE), a2;
    cJSON *t;
    (void)state;
    pt_tick(100);
    pt_launch(k, 1, 100, 0);
    pn_session_deactivate(a);
    assert_int_equal(pn_active(), 0);
    pt_launch(k, 1, 100, 0);
    a2 = pn_session_start(pt_path("reuse"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    assert_int_equal(a2, a);
    assert_int_equal(pn_active(), 1);
    pt_launch(k, 1, 100, 0);
    t = pt_tree(a);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "k3"), "count"), 2);
    cJSON_Delete(t);
    pn_session_finalize(a, "");
}

/* scope ids: one process-wide counter, +1 per enter, recorded or not */
static void
test_scope_ids(void **state)
{
    uint64_t a, b, c;
    int id;
    (void)state;
    a = pn_scope_enter("x");
    b = pn_scope_enter("y");
    pn_scope_exit(b);
    pn_scope_exit(a);
    id = pn_session_start(pt_path("sids"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    c = pn_scope_enter("z");
    assert_true(a >= 1);
    assert_int_equal(b, a + 1);
    assert_int_equal(c, b + 1);
    assert_int_equal(pn_scope_exit(c), 0);
    assert_int_equal(pn_scope_exit(0), -EINVAL);
    assert_string_equal(pn_last_error(), "Context stack is empty");
    pn_session_finalize(id, "");
}

/* context.depth: 0, 1, 2, 1, 0 */
static void
test_depth(void **state)
{
    int id = pn_session_start(pt_path("depth"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t a, b;
    (void)state;
    assert_int_equal(pn_session_depth(id), 0);
    a = pn_scope_enter("a");
    assert_int_equal(pn_session_depth(id), 1);
    b = pn_scope_enter("b");
    assert_int_equal(pn_session_depth(id), 2);
    pn_scope_exit(b);
    assert_int_equal(pn_session_depth(id), 1);
    pn_scope_exit(a);
    assert_int_equal(pn_session_depth(id), 0);
    pn_session_finalize(id, "");
    /* finalize inside a scope: a later session starts at depth 0 */
    id = pn_session_start(pt_path("depth2"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    a = pn_scope_enter("a");
    pn_session_finalize(id, "");
    id = pn_session_start(pt_path("depth3"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    assert_int_equal(pn_session_depth(id), 0);
    pn_scope_exit(a);
    assert_int_equal(pn_session_depth(id), 0);
    pn_session_finalize(id, "");
}

/* scope metrics: sums, (pty) overwrite, (exc) stripped, roofline coercion, the
 * upstream type-mismatch message */
static void
test_scope_metrics(void **state)
{
    int id = pn_session_start(pt_path("metrics"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t s;
    cJSON *t, *root, *n;
    (void)state;
    for (int i = 0; i < 2; i++) {
        s = pn_scope_enter("test3");
        assert_int_equal(pn_scope_add_metric("a", PN_METRIC_DOUBLE, 0, 1.0), 0);
        assert_int_equal(pn_scope_add_metric("p (pty)", PN_METRIC_DOUBLE, 0, 1.0 + i), 0);
        assert_int_equal(pn_scope_add_metric("cpu_time (ns)(exc)", PN_METRIC_INT, 5, 0), 0);
        assert_int_equal(pn_scope_add_metric("flops32", PN_METRIC_INT, 3, 0), 0);
        assert_int_equal(pn_scope_add_metric("bytes", PN_METRIC_DOUBLE, 0, 7.9), 0);
        pn_scope_exit(s);
    }
    s = pn_scope_enter("test3");
    assert_int_equal(pn_scope_add_metric("a", PN_METRIC_INT, 1, 0), -EINVAL);
    assert_string_equal(pn_last_error(),
                        "Metric value type mismatch for valueId 0 (a): current=double, new=int64_t");
    pn_scope_exit(s);
    t = pt_tree(id);
    root = cJSON_GetArrayItem(t, 0);
    n = pt_find(root, "test3");
    assert_int_equal(pt_nchildren(root), 1);
    assert_true(pt_metric(n, "a") == 2.0);
    assert_true(pt_metric(n, "p") == 2.0);
    assert_int_equal(pt_im(n, "cpu_time (ns)"), 10);
    assert_true(pt_metric(n, "flops32") == 6.0);
    assert_int_equal(pt_im(n, "bytes"), 14);
    /* roofline metrics get root hints; others (and exclusive ones) do not */
    assert_int_equal(pt_im(root, "flops32"), 0);
    assert_int_equal(pt_im(root, "bytes"), 0);
    assert_int_equal(pt_im(root, "a"), -1);
    assert_int_equal(pt_im(root, "cpu_time (ns)"), -1);
    cJSON_Delete(t);
    pn_session_finalize(id, "");
}

/* only (exc) metrics: root metrics stay {} (upstream test) */
static void
test_exc_only_root_empty(void **state)
{
    int id = pn_session_start(pt_path("exc"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t s = pn_scope_enter("s");
    cJSON *t;
    (void)state;
    pn_scope_add_metric("m (exc)", PN_METRIC_INT, 1, 0);
    pn_scope_exit(s);
    t = pt_tree(id);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 0), "metrics")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetArrayItem(t, 1)), 0);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "s"), "m"), 1);
    cJSON_Delete(t);
    pn_session_finalize(id, "");
}

/* deactivated: scopes and kernels are not recorded, root has no device info */
static void
test_deactivated(void **state)
{
    uint32_t k = pt_kernel("k4", 0, NULL);
    int id = pn_session_start(pt_path("deact"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t s;
    cJSON *t;
    (void)state;
    pn_session_deactivate(id);
    s = pn_scope_enter("hidden");
    pt_launch(k, 1, 100, 0);
    pn_scope_exit(s);
    t = pt_tree(id);
    assert_int_equal(pt_nchildren(cJSON_GetArrayItem(t, 0)), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetArrayItem(t, 1)), 0);
    cJSON_Delete(t);
    pn_session_finalize(id, "");
}

/* finalize format checks and the file names */
static void
test_finalize_formats(void **state)
{
    int a = pn_session_start(pt_path("fmt_tree"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    int b = pn_session_start(pt_path("fmt_trace"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    PtBuf buf = { 0 };
    (void)state;
    assert_int_equal(pn_session_finalize(a, "chrome_trace"), -EINVAL);
    assert_string_equal(pn_last_error(), "Output format not supported");
    assert_int_equal(pn_session_finalize(a, "bogus"), -EINVAL);
    assert_string_equal(pn_last_error(), "Unknown output format: bogus");
    assert_int_equal(pn_session_tree_json(b, pt_buf_write, &buf), -EINVAL);
    assert_string_equal(pn_last_error(), "Only TreeData is supported for getData() for now");
    assert_int_equal(pn_session_finalize(a, "hatchet"), 0);
    assert_int_equal(pn_session_finalize(b, ""), 0);
    assert_int_equal(access(pt_path("fmt_tree.hatchet"), F_OK), 0);
    assert_int_equal(access(pt_path("fmt_trace.chrome_trace"), F_OK), 0);
    free(buf.s);
}

/* capture store: per kernel[grid] results, reset, enable/disable */
static void
test_capture_results(void **state)
{
    uint32_t k = pt_kernel("cap_kernel", 0, NULL);
    PtBuf b = { 0 };
    cJSON *j, *r;
    (void)state;
    pn_capture_enable(1);
    assert_int_equal(pn_active(), 1);
    pt_tick(100);
    pt_launch(k, 4, 100, 0);
    pt_launch(k, 4, 300, 0);
    pt_launch(k, 8, 50, 0);
    pn_capture_enable(0);
    pt_launch(k, 8, 50, 0); /* stopped: not recorded */
    assert_int_equal(pn_capture_results_json(pt_buf_write, &b), 0);
    j = cJSON_Parse(b.s);
    r = cJSON_GetObjectItem(j, "cap_kernel[4,1,1]");
    assert_non_null(r);
    assert_int_equal(cJSON_GetObjectItem(r, "count")->valuedouble, 2);
    assert_int_equal(cJSON_GetObjectItem(r, "total_ns")->valuedouble, 400);
    assert_int_equal(cJSON_GetObjectItem(r, "min_ns")->valuedouble, 100);
    assert_int_equal(cJSON_GetObjectItem(r, "max_ns")->valuedouble, 300);
    assert_true(cJSON_GetObjectItem(r, "avg_ns")->valuedouble == 200.0);
    r = cJSON_GetObjectItem(j, "cap_kernel[8,1,1]");
    assert_int_equal(cJSON_GetObjectItem(r, "count")->valuedouble, 1);
    cJSON_Delete(j);
    pn_capture_reset();
    b.n = 0;
    pn_capture_results_json(pt_buf_write, &b);
    assert_string_equal(b.s, "{}");
    free(b.s);
}

/* TRITON_PROTON_DISABLE: nothing starts, nothing records */
static void
test_disabled(void **state)
{
    (void)state;
    setenv("TRITON_PROTON_DISABLE", "1", 1);
    setenv("PROTON_KERNEL_CAPTURE", "1", 1);
    pt_reset();
    assert_int_equal(pn_disabled(), 1);
    assert_int_equal(pn_active(), 0);
    assert_int_equal(pn_session_start(pt_path("dis"), PN_CONTEXT_SHADOW, PN_DATA_TREE), -ECANCELED);
    pn_capture_enable(1);
    assert_int_equal(pn_active(), 0);
    /* the spine-triton profiler calls: no file, no table on stderr, empty results */
    assert_int_equal(pn_capture_dump(pt_path("dis.json")), 0);
    assert_int_equal(access(pt_path("dis.json"), F_OK), -1);
    {
        int saved = dup(2), fd = open(pt_path("dis.err"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char *err;
        fflush(stderr);
        dup2(fd, 2);
        close(fd);
        assert_int_equal(pn_capture_dump(NULL), 0);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        err = pt_read(pt_path("dis.err"));
        assert_string_equal(err, "");
        free(err);
    }
    {
        PtBuf b = { 0 };
        assert_int_equal(pn_capture_results_json(pt_buf_write, &b), 0);
        assert_string_equal(b.s, "{}");
        free(b.s);
    }
    unsetenv("TRITON_PROTON_DISABLE");
    unsetenv("PROTON_KERNEL_CAPTURE");
    pt_reset();
    assert_int_equal(pn_disabled(), 0);
}

/* nothing recording: hooks hand out the no-op thread, nothing is active */
static void
test_nothing_records(void **state)
{
    uint32_t k = pt_kernel("idle", 0, NULL);
    PnLaunch l;
    int32_t g[3] = { 1, 1, 1 };
    PnThread *t;
    (void)state;
    assert_int_equal(pn_active(), 0);
    pn_launch_begin(&l, k, g, 1);
    t = pn_worker_begin(&l, 0);
    assert_ptr_equal(t, pn_thread_noop());
    t->record(t, 0, PN_REC_START);
    pn_program_begin(t, g);
    pn_program_end(t);
    pn_worker_end(&l, t);
    pn_launch_end(&l);
    assert_int_equal(pn_launch_wants_programs(&l), 0);
    assert_int_equal(pn_active(), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_session_ids, setup),
        cmocka_unit_test_setup(test_unknown_session, setup),
        cmocka_unit_test_setup(test_kernels_under_scopes, setup),
        cmocka_unit_test_setup(test_inkernel_scopes, setup),
        cmocka_unit_test_setup(test_two_sessions, setup),
        cmocka_unit_test_setup(test_same_path_reuse, setup),
        cmocka_unit_test_setup(test_scope_ids, setup),
        cmocka_unit_test_setup(test_depth, setup),
        cmocka_unit_test_setup(test_scope_metrics, setup),
        cmocka_unit_test_setup(test_exc_only_root_empty, setup),
        cmocka_unit_test_setup(test_deactivated, setup),
        cmocka_unit_test_setup(test_finalize_formats, setup),
        cmocka_unit_test_setup(test_capture_results, setup),
        cmocka_unit_test_setup(test_disabled, setup),
        cmocka_unit_test_setup(test_nothing_records, setup),
    };
    return cmocka_run_group_tests_name("proton core", tests, NULL, NULL);
}
