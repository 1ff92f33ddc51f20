/*
 * test_proton.c — sessions, host scopes, kernel and in-kernel scope aggregation,
 * vector metrics, states, a new thread's stack, phases, msgpack, python-context call paths (proton/src: pn_session, pn_scope,
 * pn_launch, pn_tree, pn_merge, pn_frames).
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

/* ---- vector metrics ------------------------------------------------------------------ */

/* a node's list metric as cJSON prints it ("[2,4,6]"; 1.0 prints as 1), or "" when
 * absent / not a list */
static const char *
vec_text(cJSON *node, const char *name)
{
    static char buf[4][512];
    static int i;
    char *b = buf[i++ % 4], *s;
    cJSON *m = node ? cJSON_GetObjectItem(cJSON_GetObjectItem(node, "metrics"), name) : NULL;
    b[0] = '\0';
    if (m && cJSON_IsArray(m) && (s = cJSON_PrintUnformatted(m))) {
        snprintf(b, sizeof buf[0], "%s", s);
        free(s);
    }
    return b;
}

/* the session's hatchet text without whitespace, to check how numbers are written */
static char *
compact_tree(int id)
{
    PtBuf b = { 0 };
    size_t j = 0;
    assert_int_equal(pn_session_tree_json(id, pt_buf_write, &b), 0);
    for (size_t i = 0; i < b.n; i++)
        if (b.s[i] != ' ' && b.s[i] != '\n')
            b.s[j++] = b.s[i];
    b.s[j] = '\0';
    return b.s;
}

/* the node reached from 'node' through children named names[0..n) (names may hold
 * '/', unlike pt_find's paths), or NULL */
static cJSON *
find_chain(cJSON *node, const char *const *names, int n)
{
    for (int i = 0; i < n && node; i++) {
        cJSON *c, *found = NULL;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(node, "children"))
        {
            const cJSON *nm = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "frame"), "name");
            if (strcmp(nm->valuestring, names[i]) == 0)
                found = c;
        }
        node = found;
    }
    return node;
}

/* element-wise sums, int / double elements, (pty), roofline coercions, long vectors,
 * every recording consumer; in the file as JSON arrays without root hints */
static void
test_vector_metrics(void **state)
{
    int a = pn_session_start(pt_path("vec_a"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    int b = pn_session_start(pt_path("vec_b"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    static const int64_t iv[3] = { 1, 2, 3 };
    static const double dv[2] = { 0.5, 1.5 };
    int64_t big[100];
    cJSON *t, *root, *n, *bigv;
    uint64_t s;
    char *text;
    (void)state;
    pt_tick(100);
    for (int k = 0; k < 100; k++)
        big[k] = k;
    for (int i = 0; i < 2; i++) {
        s = pn_scope_enter("v");
        assert_int_equal(pn_scope_add_metric_vec("vi", PN_METRIC_INT, iv, NULL, 3), 0);
        assert_int_equal(pn_scope_add_metric_vec("vd", PN_METRIC_DOUBLE, NULL, dv, 2), 0);
        assert_int_equal(pn_scope_add_metric_vec("p (pty)", PN_METRIC_INT, iv + i, NULL, 2), 0);
        assert_int_equal(pn_scope_add_metric_vec("flops16", PN_METRIC_INT, iv, NULL, 2), 0);
        assert_int_equal(pn_scope_add_metric_vec("bytes", PN_METRIC_DOUBLE, NULL, dv, 2), 0);
        assert_int_equal(pn_scope_add_metric_vec("e", PN_METRIC_DOUBLE, NULL, NULL, 0), 0);
        assert_int_equal(pn_scope_add_metric_vec("big", PN_METRIC_INT, big, NULL, 100), 0);
        assert_int_equal(pn_scope_add_metric("scalar", PN_METRIC_INT, 4, 0), 0);
        pn_scope_exit(s);
    }
    for (int id = a; id <= b; id++) {
        t = pt_tree(id);
        root = cJSON_GetArrayItem(t, 0);
        n = pt_find(root, "v");
        assert_string_equal(vec_text(n, "vi"), "[2,4,6]");
        assert_string_equal(vec_text(n, "vd"), "[1,3]");
        assert_string_equal(vec_text(n, "p"), "[2,3]");
        assert_string_equal(vec_text(n, "flops16"), "[2,4]");
        assert_string_equal(vec_text(n, "bytes"), "[0,2]"); /* [(int)0.5, (int)1.5], twice */
        assert_string_equal(vec_text(n, "e"), "[]");
        bigv = cJSON_GetObjectItem(cJSON_GetObjectItem(n, "metrics"), "big");
        assert_int_equal(cJSON_GetArraySize(bigv), 100);
        assert_int_equal(cJSON_GetArrayItem(bigv, 99)->valueint, 198);
        assert_int_equal(pt_im(n, "scalar"), 8);
        /* no root hints for vectors, not even roofline names */
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "metrics")), 0);
        cJSON_Delete(t);
        text = compact_tree(id); /* doubles keep their fraction, ints have none */
        assert_non_null(strstr(text, "\"vd\":[1.0,3.0]"));
        assert_non_null(strstr(text, "\"flops16\":[2.0,4.0]"));
        assert_non_null(strstr(text, "\"vi\":[2,4,6]"));
        free(text);
    }
    assert_int_equal(pn_session_finalize(-1, ""), 0);
}

/* size and type mismatches: upstream messages, nothing added to any consumer */
static void
test_vector_metric_errors(void **state)
{
    int a = pn_session_start(pt_path("vecerr_a"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    int b = pn_session_start(pt_path("vecerr_b"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    static const int64_t iv[3] = { 1, 2, 3 };
    static const double dv[3] = { 1.0, 2.0, 3.0 };
    uint64_t s;
    cJSON *t, *n;
    (void)state;
    pt_tick(100);
    s = pn_scope_enter("v");
    assert_int_equal(pn_scope_add_metric_vec("vi", PN_METRIC_INT, iv, NULL, 3), 0);
    assert_int_equal(pn_scope_add_metric("sc", PN_METRIC_DOUBLE, 0, 1.0), 0);
    pn_session_deactivate(a);
    assert_int_equal(pn_scope_add_metric_vec("vi", PN_METRIC_INT, iv, NULL, 3), 0); /* b only */
    pn_session_activate(a);
    assert_int_equal(pn_scope_add_metric_vec("vi", PN_METRIC_INT, iv, NULL, 2), -EINVAL);
    assert_string_equal(pn_last_error(), "Vector metric size mismatch for valueId 0 (vi): current=3, new=2");
    assert_int_equal(pn_scope_add_metric_vec("vi", PN_METRIC_DOUBLE, NULL, dv, 3), -EINVAL);
    assert_string_equal(pn_last_error(), "Metric value type mismatch for valueId 0 (vi): "
                                         "current=std::vector<int64_t>, new=std::vector<double>");
    assert_int_equal(pn_scope_add_metric("vi", PN_METRIC_INT, 1, 0), -EINVAL);
    assert_string_equal(pn_last_error(), "Metric value type mismatch for valueId 0 (vi): "
                                         "current=std::vector<int64_t>, new=int64_t");
    assert_int_equal(pn_scope_add_metric_vec("sc", PN_METRIC_DOUBLE, NULL, dv, 1), -EINVAL);
    assert_string_equal(pn_last_error(), "Metric value type mismatch for valueId 0 (sc): current=double, "
                                         "new=std::vector<double>");
    assert_int_equal(pn_scope_add_metric_vec("x", 5, iv, NULL, 1), -EINVAL);
    assert_int_equal(pn_scope_add_metric_vec("x", PN_METRIC_INT, NULL, dv, 1), -EINVAL);
    assert_int_equal(pn_scope_add_metric_vec(NULL, PN_METRIC_INT, iv, NULL, 1), -EINVAL);
    pn_scope_exit(s);
    t = pt_tree(a);
    n = pt_find(cJSON_GetArrayItem(t, 0), "v");
    assert_string_equal(vec_text(n, "vi"), "[1,2,3]");
    assert_true(pt_metric(n, "sc") == 1.0);
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "metrics"), "x"));
    cJSON_Delete(t);
    t = pt_tree(b);
    assert_string_equal(vec_text(pt_find(cJSON_GetArrayItem(t, 0), "v"), "vi"), "[2,4,6]");
    cJSON_Delete(t);
    assert_int_equal(pn_session_finalize(-1, ""), 0);
}

typedef struct VecArg {
    int64_t v[3];
    uint32_t n;
} VecArg;

static void *
vec_thread(void *p)
{
    VecArg *a = p;
    uint64_t s = pn_scope_enter("v");
    pn_scope_add_metric_vec("m", PN_METRIC_INT, a->v, NULL, a->n);
    pn_scope_exit(s);
    return NULL;
}

/* per-thread trees merge element-wise; a length another thread used differently keeps
 * the first thread's value (threads merge in the order they first recorded) */
static void
test_vector_metrics_threads(void **state)
{
    int id = pn_session_start(pt_path("vec_threads"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    VecArg args[3] = { { { 1, 2, 0 }, 2 }, { { 10, 20, 0 }, 2 }, { { 5, 5, 5 }, 3 } };
    cJSON *t;
    (void)state;
    pt_tick(100);
    vec_thread(&args[0]);
    for (int i = 1; i < 3; i++) {
        pthread_t th;
        pthread_create(&th, NULL, vec_thread, &args[i]);
        pthread_join(th, NULL);
    }
    t = pt_tree(id);
    assert_string_equal(vec_text(pt_find(cJSON_GetArrayItem(t, 0), "v"), "m"), "[11,22]");
    cJSON_Delete(t);
    assert_int_equal(pn_session_finalize(id, ""), 0);
}

/* ---- states, a new thread's stack, phases, msgpack (reference §1.4-§1.6, §3.1) --------------- */

/* upstream's state test: test0, state, test1 with a metric → ROOT/test0/test1/state
 * holds the metric; a kernel hangs below the state; the metadata state is two levels */
static void
test_states(void **state)
{
    uint32_t k = pt_kernel("add_kernel", 0, NULL);
    int id = pn_session_start(pt_path("states"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t s0, s1;
    cJSON *t, *root;
    (void)state;
    pt_tick(100);
    s0 = pn_scope_enter("test0");
    assert_int_equal(pn_state_enter("state"), 0);
    s1 = pn_scope_enter("test1");
    assert_int_equal(pn_scope_add_metric("a", PN_METRIC_DOUBLE, 0, 1.0), 0);
    pt_launch(k, 1, 10, 0);
    assert_int_equal(pn_scope_exit(s1), 0);
    pt_launch(k, 1, 20, 0);
    pn_state_exit();
    pt_launch(k, 1, 30, 0);
    assert_int_equal(pn_state_enter("__proton_launch_metadata:add_kernel"), 0);
    pt_launch(k, 1, 40, 0);
    pn_state_exit();
    assert_int_equal(pn_scope_exit(s0), 0);
    t = pt_tree(id);
    root = cJSON_GetArrayItem(t, 0);
    assert_true(pt_metric(pt_find(root, "test0/test1/state"), "a") == 1.0);
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(pt_find(root, "test0/test1"), "metrics"), "a"));
    assert_int_equal(pt_im(pt_find(root, "test0/test1/state/add_kernel"), "time (ns)"), 10);
    assert_int_equal(pt_im(pt_find(root, "test0/state/add_kernel"), "time (ns)"), 20);
    assert_int_equal(pt_im(pt_find(root, "test0/add_kernel"), "time (ns)"), 30);
    assert_int_equal(pt_im(pt_find(root, "test0/__proton_launch_metadata/add_kernel/add_kernel"), "time (ns)"), 40);
    cJSON_Delete(t);
    assert_int_equal(pn_session_finalize(id, ""), 0);
}

static void *
inherit_thread(void *p)
{
    uint64_t s = pn_scope_enter("in_thread");
    (void)p;
    pt_launch(*(uint32_t *)p, 1, 5, 0);
    pn_scope_exit(s);
    return NULL;
}

/* a thread that first records into a session starts from the main thread's open
 * scopes (and never pops them) */
static void
test_thread_inherits_main_stack(void **state)
{
    uint32_t k = pt_kernel("add_kernel", 0, NULL);
    int id = pn_session_start(pt_path("inherit"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t s;
    pthread_t th;
    cJSON *t;
    (void)state;
    pt_tick(100);
    s = pn_scope_enter("main_outer");
    pthread_create(&th, NULL, inherit_thread, &k);
    pthread_join(th, NULL);
    assert_int_equal(pn_scope_exit(s), 0);
    pthread_create(&th, NULL, inherit_thread, &k);
    pthread_join(th, NULL);
    t = pt_tree(id);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "main_outer/in_thread/add_kernel"), "count"), 1);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "in_thread/add_kernel"), "count"), 1);
    cJSON_Delete(t);
    assert_int_equal(pn_session_finalize(id, ""), 0);
}

static cJSON *
phase_tree(int id, int phase)
{
    PtBuf b = { 0 };
    cJSON *j;
    assert_int_equal(pn_session_phase_tree(id, phase, 0, pt_buf_write, &b), 0);
    j = cJSON_Parse(b.s);
    free(b.s);
    return j;
}

/* phases: completion only by flushing, open scopes carry over, clear, part files */
static void
test_phases(void **state)
{
    uint32_t k = pt_kernel("add_kernel", 0, NULL);
    int id = pn_session_start(pt_path("phases"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t s;
    cJSON *t;
    char *txt;
    (void)state;
    pt_tick(100);
    s = pn_scope_enter("step");
    pt_launch(k, 1, 10, 0);
    assert_int_equal(pn_session_phase_complete(id, 0), 0);
    assert_int_equal(pn_session_advance_phase(id), 1);
    pt_launch(k, 1, 20, 0);
    assert_int_equal(pn_scope_exit(s), 0);
    pt_launch(k, 1, 30, 0);
    assert_int_equal(pn_session_phase_complete(id, 0), 0);
    assert_int_equal(pn_session_flush(id), 0);
    assert_int_equal(pn_session_phase_complete(id, 0), 1);
    assert_int_equal(pn_session_phase_complete(id, 1), 0);
    t = phase_tree(id, 0);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "step/add_kernel"), "time (ns)"), 10);
    cJSON_Delete(t);
    t = phase_tree(id, 1);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "step/add_kernel"), "time (ns)"), 20);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "add_kernel"), "time (ns)"), 30);
    cJSON_Delete(t);
    /* clearing the current phase starts it over; a phase not held is an empty tree */
    assert_int_equal(pn_session_clear(id, 1, 0), 0);
    pt_launch(k, 1, 40, 0);
    t = phase_tree(id, 1);
    assert_int_equal(pt_nchildren(cJSON_GetArrayItem(t, 0)), 1);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "add_kernel"), "time (ns)"), 40);
    cJSON_Delete(t);
    t = phase_tree(id, 7);
    assert_int_equal(pt_nchildren(cJSON_GetArrayItem(t, 0)), 0);
    cJSON_Delete(t);
    assert_int_equal(pn_session_advance_phase(id), 2);
    assert_int_equal(pn_session_clear(id, 0, 0), 0);
    assert_int_equal(pn_session_finalize(id, ""), 0);
    assert_null(pt_read(pt_path("phases.part_0.hatchet")));
    assert_non_null(txt = pt_read(pt_path("phases.part_1.hatchet")));
    free(txt);
    assert_non_null(txt = pt_read(pt_path("phases.part_2.hatchet")));
    free(txt);
    assert_null(pt_read(pt_path("phases.hatchet")));
    assert_int_equal(pn_session_advance_phase(id), -EINVAL);
}

static void
mp_write(const char *s, size_t n, void *user)
{
    pt_buf_write(s, n, user);
}

/* the msgpack encoding of small values, byte for byte */
static void
test_msgpack_encoding(void **state)
{
    static const unsigned char want[] = {
        0x86,                                           /* map of 6 */
        0xa1, 'a', 0x93, 0x01, 0xff, 0xcd, 0x01, 0x00,  /* "a": [1, -1, 256] */
        0xa1, 'b', 0xca, 0x3f, 0xc0, 0x00, 0x00,        /* "b": 1.5 (float32, exact) */
        0xa1, 'c', 0xcb, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a, /* "c": 0.1 */
        0xa1, 'd', 0xd1, 0xfe, 0xd4,                    /* "d": -300 */
        0xa1, 'e', 0xa2, 'h', 'i',                      /* "e": "hi" */
        0xa1, 'f', 0xc0,                                /* "f": null */
    };
    cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();
    PtBuf b = { 0 };
    (void)state;
    cJSON_AddItemToArray(a, pn_json_int(1));
    cJSON_AddItemToArray(a, pn_json_int(-1));
    cJSON_AddItemToArray(a, pn_json_uint(256));
    cJSON_AddItemToObject(o, "a", a);
    cJSON_AddItemToObject(o, "b", pn_json_double(1.5));
    cJSON_AddItemToObject(o, "c", pn_json_double(0.1));
    cJSON_AddItemToObject(o, "d", pn_json_int(-300));
    cJSON_AddStringToObject(o, "e", "hi");
    cJSON_AddNullToObject(o, "f");
    assert_int_equal(pn_msgpack_write(o, mp_write, &b), 0);
    assert_int_equal(b.n, sizeof want);
    assert_memory_equal(b.s, want, sizeof want);
    free(b.s);
    cJSON_Delete(o);
}

/* ---- python-context sessions ------------------------------------------------------------- */

/* kernels under the Python stack handed over before the launch, outermost first;
 * no frames: ROOT; scope names only in the shadow session running alongside; scope
 * metrics on the path given at the scope's enter; in-kernel scopes under the kernel */
static void
test_python_frames(void **state)
{
    static const char *scopes[] = { "load" };
    static const char *fn[3] = { "/app/main.py:10@<module>", "/app/main.py:4@step", "/app/lib.py:7@run" };
    uint32_t k = pt_kernel("pyk", 1, scopes), f[3];
    int py = pn_session_start(pt_path("pyctx"), PN_CONTEXT_PYTHON, PN_DATA_TREE);
    int sh = pn_session_start(pt_path("pyctx_shadow"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    cJSON *t, *root, *n;
    uint64_t s;
    (void)state;
    pt_tick(100);
    assert_true(pn_python_active());
    for (int i = 0; i < 3; i++)
        assert_true((f[i] = pn_frame_intern(fn[i])) > 0);
    assert_int_equal(pn_frame_intern(fn[1]), f[1]);
    assert_int_equal(pn_python_frames(f, 2), 0); /* the scope's enter site */
    s = pn_scope_enter("step");
    assert_int_equal(pn_scope_add_metric("a", PN_METRIC_INT, 1, 0), 0);
    assert_int_equal(pn_scope_add_metric_vec("v", PN_METRIC_INT, (const int64_t[]){ 1, 2 }, NULL, 2), 0);
    for (int i = 0; i < 2; i++) { /* one call site, twice: one node */
        assert_int_equal(pn_python_frames(f, 3), 0);
        pt_launch(k, 2, 100, 5);
    }
    pt_launch(k, 1, 100, 5); /* nothing pending: consumed by the launches before */
    assert_int_equal(pn_python_frames(f, 1), 0);
    pt_launch(k, 1, 100, 5);
    pn_scope_exit(s);
    t = pt_tree(py);
    root = cJSON_GetArrayItem(t, 0);
    n = pt_find(find_chain(root, fn, 3), "pyk");
    assert_int_equal(pt_im(n, "count"), 2);
    assert_int_equal(pt_im(pt_find(n, "load"), "scope_count"), 4);
    assert_int_equal(pt_im(pt_find(root, "pyk"), "count"), 1);
    assert_int_equal(pt_im(pt_find(find_chain(root, fn, 1), "pyk"), "count"), 1);
    assert_null(pt_find(root, "step"));
    n = find_chain(root, fn, 2);
    assert_int_equal(pt_im(n, "a"), 1);
    assert_string_equal(vec_text(n, "v"), "[1,2]");
    assert_int_equal(pt_nchildren(root), 2); /* <module> and the frameless kernel */
    cJSON_Delete(t);
    t = pt_tree(sh);
    root = cJSON_GetArrayItem(t, 0);
    assert_int_equal(pt_nchildren(root), 1);
    assert_int_equal(pt_im(pt_find(root, "step/pyk"), "count"), 4);
    assert_int_equal(pt_im(pt_find(root, "step"), "a"), 1);
    cJSON_Delete(t);
    pn_session_deactivate(py);
    assert_false(pn_python_active());
    assert_int_equal(pn_session_finalize(-1, ""), 0);
}

/* stacks deeper than PN_MAX_FRAMES keep the innermost frames; bad arguments */
static void
test_python_frames_limits(void **state)
{
    uint32_t k = pt_kernel("deep", 0, NULL), f[PN_MAX_FRAMES + 10];
    int py = pn_session_start(pt_path("pydeep"), PN_CONTEXT_PYTHON, PN_DATA_TREE);
    char name[64];
    const char *first = "/d.py:10@f";
    cJSON *t, *n;
    (void)state;
    pt_tick(100);
    for (int i = 0; i < PN_MAX_FRAMES + 10; i++) {
        snprintf(name, sizeof name, "/d.py:%d@f", i);
        f[i] = pn_frame_intern(name);
    }
    assert_int_equal(pn_python_frames(f, PN_MAX_FRAMES + 10), 0);
    pt_launch(k, 1, 100, 0);
    assert_int_equal(pn_python_frames(NULL, 2), -EINVAL);
    assert_int_equal(pn_python_frames(f, -1), -EINVAL);
    assert_int_equal(pn_python_frames(NULL, 0), 0);
    t = pt_tree(py);
    n = find_chain(cJSON_GetArrayItem(t, 0), &first, 1);
    for (int d = 1; d < PN_MAX_FRAMES && n; d++)
        n = cJSON_GetArrayItem(cJSON_GetObjectItem(n, "children"), 0);
    assert_non_null(n);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "frame"), "name")->valuestring,
                        "/d.py:265@f");
    assert_int_equal(pt_nchildren(cJSON_GetArrayItem(t, 0)), 1);
    assert_int_equal(pt_im(pt_find(n, "deep"), "count"), 1);
    cJSON_Delete(t);
    assert_int_equal(pn_session_finalize(py, ""), 0);
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
        cmocka_unit_test_setup(test_vector_metrics, setup),
        cmocka_unit_test_setup(test_vector_metric_errors, setup),
        cmocka_unit_test_setup(test_vector_metrics_threads, setup),
        cmocka_unit_test_setup(test_states, setup),
        cmocka_unit_test_setup(test_thread_inherits_main_stack, setup),
        cmocka_unit_test_setup(test_phases, setup),
        cmocka_unit_test_setup(test_msgpack_encoding, setup),
        cmocka_unit_test_setup(test_python_frames, setup),
        cmocka_unit_test_setup(test_python_frames_limits, setup),
    };
    return cmocka_run_group_tests_name("proton core", tests, NULL, NULL);
}
