/*
 * test_proton_writers.c — the .hatchet, Chrome-trace and console writers, JSON
 * numbers, output paths and atomic files (pn_hatchet, pn_chrome, pn_console,
 * pn_json, pn_output). Files are written, read back with cJSON and checked for
 * structure and exact values against docs/formats.md. With PN_TEST_OUT set the
 * files stay there for tests/proton/run.sh (trace validator, proton-viewer).
 */
#include "test_proton_util.h"

#include <dirent.h>
#include <math.h>
#include <time.h>

static int
setup(void **state)
{
    (void)state;
    unsetenv("PROTON_KERNEL_CAPTURE");
    unsetenv("PROTON_OUTPUT");
    unsetenv("RANK");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    setenv("PROTON_EVENTS", "none", 1);
    pt_reset();
    return 0;
}

static int
keys_sorted(const cJSON *obj)
{
    const cJSON *c;
    const char *prev = NULL;
    cJSON_ArrayForEach(c, obj)
    {
        if (prev && strcmp(prev, c->string) >= 0)
            return 0;
        prev = c->string;
    }
    return 1;
}

/* every node: keys children, frame, metrics in that order; frame {name, type};
 * metrics sorted */
static void
check_node(const cJSON *n)
{
    const cJSON *c = n->child, *ch;
    assert_string_equal(c->string, "children");
    assert_string_equal(c->next->string, "frame");
    assert_string_equal(c->next->next->string, "metrics");
    assert_null(c->next->next->next);
    assert_string_equal(c->next->child->string, "name");
    assert_string_equal(c->next->child->next->string, "type");
    assert_string_equal(c->next->child->next->valuestring, "function");
    assert_true(keys_sorted(c->next->next));
    cJSON_ArrayForEach(ch, c) check_node(ch);
}

/* a session with host scopes, kernels, in-kernel scopes and metrics → .hatchet */
static void
test_hatchet_file(void **state)
{
    static const char *sc[] = { "load", "store" };
    PnKernelDesc d = { .name = "vec_add", .constexprs = "{\"BLOCK\": 128}", .bytes_per_program = 1536,
                       .flops_per_program = { 0, 128, 0 }, .nscopes = 2, .scope_names = sc };
    uint32_t k = pn_kernel_register(&d);
    int id = pn_session_start(pt_path("writer_tree"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    uint64_t s;
    char *text;
    cJSON *j, *root, *n, *dev;
    (void)state;
    pt_tick(100);
    s = pn_scope_enter("step");
    pn_scope_add_metric("flops32", PN_METRIC_DOUBLE, 0, 10.5);
    pt_launch(k, 4, 1000, 20);
    pt_launch(k, 4, 3000, 30);
    pn_scope_exit(s);
    assert_int_equal(pn_session_finalize(id, ""), 0);
    text = pt_read(pt_path("writer_tree.hatchet"));
    assert_non_null(text);
    assert_memory_equal(text, "\n[\n    {\n        \"children\": [", 30);
    assert_string_equal(text + strlen(text) - 3, "\n]\n");
    j = cJSON_Parse(text);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(j), 2);
    root = cJSON_GetArrayItem(j, 0);
    check_node(root);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "frame"), "name")->valuestring, "ROOT");
    n = pt_find(root, "step/vec_add");
    assert_int_equal(pt_im(n, "count"), 2);
    assert_int_equal(pt_im(n, "time (ns)"), 4000);
    assert_int_equal(pt_im(n, "programs"), 8);
    assert_int_equal(pt_im(n, "bytes"), 8 * 1536);
    assert_true(pt_metric(n, "flops32") == 8 * 128.0);
    assert_true(strstr(text, "\"flops32\": 1024.0") != NULL); /* floats keep their point */
    assert_true(pt_metric(pt_find(root, "step"), "flops32") == 10.5);
    n = pt_find(root, "step/vec_add/load");
    assert_int_equal(pt_im(n, "scope_count"), 8);
    assert_int_equal(pt_im(n, "scope_time (ns)"), 4 * 20 + 4 * 30);
    assert_true(pt_metric(n, "normalized_time (ns)") == 50.0); /* (80 + 120) / 4 */
    /* root hints for what hatchet should sum */
    assert_int_equal(pt_im(root, "count"), 0);
    assert_int_equal(pt_im(root, "time (ns)"), 0);
    assert_int_equal(pt_im(root, "bytes"), 0);
    assert_int_equal(pt_im(root, "flops32"), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "metrics")), 4);
    dev = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 1), "CPU"), "0");
    assert_non_null(dev);
    assert_true(keys_sorted(dev));
    assert_string_equal(cJSON_GetObjectItem(dev, "clock_source")->valuestring, "fake");
    assert_string_equal(cJSON_GetObjectItem(dev, "counter_source")->valuestring, "none");
    assert_string_equal(cJSON_GetObjectItem(dev, "tritium_version")->valuestring, PN_VERSION);
    assert_true(cJSON_GetObjectItem(dev, "num_cores")->valueint >= 1);
    assert_int_equal(cJSON_GetObjectItem(dev, "num_sms")->valueint,
                     cJSON_GetObjectItem(dev, "num_cores")->valueint);
    assert_true(strlen(cJSON_GetObjectItem(dev, "model")->valuestring) > 0);
    cJSON_Delete(j);
    free(text);
}

static int
count_events(const cJSON *evs, const char *cat, const char *ph)
{
    const cJSON *e;
    int n = 0;
    cJSON_ArrayForEach(e, evs)
    {
        const cJSON *c = cJSON_GetObjectItem(e, "cat");
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, ph) == 0 &&
            (!cat || (c && strcmp(c->valuestring, cat) == 0)))
            n++;
    }
    return n;
}

static const cJSON *
nth_event(const cJSON *evs, const char *cat, int nth)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, evs)
    {
        const cJSON *c = cJSON_GetObjectItem(e, "cat");
        if (c && strcmp(c->valuestring, cat) == 0 && nth-- == 0)
            return e;
    }
    return NULL;
}

/* data="trace": host scopes, kernels, programs, in-kernel scopes; exact ts/dur */
static void
test_chrome_file(void **state)
{
    static const char *sc[] = { "inner" };
    PnKernelDesc d = { .name = "tk", .constexprs = "{\"BLOCK\": 64, \"ACT\": \"relu\"}", .nscopes = 1,
                       .scope_names = sc };
    uint32_t k = pn_kernel_register(&d);
    int id = pn_session_start(pt_path("writer_trace"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    uint64_t s, t_scope;
    cJSON *j, *evs, *o, *args, *cs;
    const cJSON *e;
    time_t now = time(NULL);
    double base;
    (void)state;
    pt_tick(1000);
    t_scope = pn_fake_ticks;
    s = pn_scope_enter("step");
    pt_launch(k, 4, 2000, 100);
    pt_launch(k, 4, 2000, 100);
    pn_scope_exit(s);
    pt_launch(k, 2, 1500, 100);
    assert_int_equal(pn_session_finalize(id, ""), 0);
    j = pt_parse_file(pt_path("writer_trace.chrome_trace"));
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "displayTimeUnit")->valuestring, "ns");
    base = cJSON_GetObjectItem(j, "baseTimeNanoseconds")->valuedouble;
    assert_true(base > (double)(now - 86400) * 1e9 && base < (double)(now + 86400) * 1e9);
    o = cJSON_GetObjectItem(j, "otherData");
    assert_string_equal(cJSON_GetObjectItem(o, "tool")->valuestring, "tritium-proton");
    assert_int_equal(cJSON_GetObjectItem(o, "pid")->valueint, getpid());
    assert_int_equal(cJSON_GetObjectItem(o, "dropped_events")->valueint, 0);
    assert_string_equal(cJSON_GetObjectItem(o, "counter_source")->valuestring, "none");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "events")), 0);
    evs = cJSON_GetObjectItem(j, "traceEvents");
    assert_int_equal(count_events(evs, NULL, "M"), 3);
    assert_int_equal(count_events(evs, "host_scope", "X"), 1);
    assert_int_equal(count_events(evs, "kernel", "X"), 3);
    assert_int_equal(count_events(evs, "program", "X"), 10);
    assert_int_equal(count_events(evs, "scope", "X"), 10);
    /* the host scope starts the trace: ts 0 */
    e = nth_event(evs, "host_scope", 0);
    assert_true(cJSON_GetObjectItem(e, "ts")->valuedouble == 0.0);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "step");
    /* first kernel: starts 10 ns after the scope (pt_launch ticks 10 first), 2 us */
    e = nth_event(evs, "kernel", 0);
    (void)t_scope;
    assert_true(cJSON_GetObjectItem(e, "ts")->valuedouble == 0.01);
    assert_true(cJSON_GetObjectItem(e, "dur")->valuedouble == 2.0);
    args = cJSON_GetObjectItem(e, "args");
    assert_int_equal(cJSON_GetObjectItem(args, "programs")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(args, "threads")->valueint, 1);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(args, "grid"), 0)->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(args, "constexprs"), "BLOCK")->valueint, 64);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(args, "constexprs"), "ACT")->valuestring, "relu");
    cs = cJSON_GetObjectItem(args, "call_stack");
    assert_int_equal(cJSON_GetArraySize(cs), 3);
    assert_string_equal(cJSON_GetArrayItem(cs, 1)->valuestring, "step");
    assert_string_equal(cJSON_GetArrayItem(cs, 2)->valuestring, "tk");
    e = nth_event(evs, "kernel", 2);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "call_stack")), 2);
    /* in-kernel scope: 100 ns, inside program 0 of the first launch */
    e = nth_event(evs, "scope", 0);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "inner");
    assert_true(cJSON_GetObjectItem(e, "dur")->valuedouble == 0.1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "kernel")->valuestring, "tk");
    e = nth_event(evs, "program", 1);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "tk[1,0,0]");
    cJSON_Delete(j);
}

/* names of a Chrome event's args.call_stack joined with '/' */
static const char *
stack_of(const cJSON *e)
{
    static char b[256];
    const cJSON *c;
    size_t l = 0;
    b[0] = '\0';
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "call_stack"))
        l += (size_t)snprintf(b + l, sizeof b - l, "%s%s", l ? "/" : "", c->valuestring);
    return b;
}

static int
is_open(const cJSON *e)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "open"));
}

/* a trace written while host scopes are open (dump inside a scope): each open scope
 * gets an event ending at the write time, marked "open", and the kernels inside get
 * the full call_stack; once the scopes are closed the next dump has each of them once,
 * none marked open */
static void
test_chrome_open_scopes(void **state)
{
    uint32_t k = pt_kernel("ok", 0, NULL);
    uint64_t outer, done, inner;
    cJSON *j, *evs;
    const cJSON *e;
    (void)state;
    pn_capture_enable(1);
    pt_tick(1000);
    outer = pn_scope_enter("outer");       /* T */
    done = pn_scope_enter("done");
    pt_launch(k, 2, 1000, 0);               /* T+10 .. T+1010 */
    assert_int_equal(pn_scope_exit(done), 0); /* T+1020 */
    inner = pn_scope_enter("inner");
    pt_launch(k, 2, 1000, 0);               /* T+1030 .. T+2030 */
    pt_tick(500);                           /* written at T+2540 */
    assert_int_equal(pn_capture_dump(pt_path("open_scopes.json")), 0);
    j = pt_parse_file(pt_path("open_scopes.json"));
    evs = cJSON_GetObjectItem(j, "traceEvents");
    assert_int_equal(count_events(evs, "host_scope", "X"), 3);
    e = nth_event(evs, "host_scope", 0);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "outer");
    assert_true(is_open(e));
    assert_true(cJSON_GetObjectItem(e, "ts")->valuedouble == 0.0);
    assert_true(cJSON_GetObjectItem(e, "dur")->valuedouble == 2.54);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "scope_id")->valuedouble, outer);
    assert_string_equal(stack_of(e), "ROOT/outer");
    e = nth_event(evs, "host_scope", 1);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "done");
    assert_false(is_open(e));
    assert_true(cJSON_GetObjectItem(e, "dur")->valuedouble == 1.02);
    assert_string_equal(stack_of(e), "ROOT/outer/done");
    e = nth_event(evs, "host_scope", 2);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "inner");
    assert_true(is_open(e));
    assert_true(cJSON_GetObjectItem(e, "ts")->valuedouble == 1.02);
    assert_true(cJSON_GetObjectItem(e, "dur")->valuedouble == 1.52);
    assert_string_equal(stack_of(e), "ROOT/outer/inner");
    assert_string_equal(stack_of(nth_event(evs, "kernel", 0)), "ROOT/outer/done/ok");
    assert_string_equal(stack_of(nth_event(evs, "kernel", 1)), "ROOT/outer/inner/ok");
    cJSON_Delete(j);
    pt_tick(100);
    assert_int_equal(pn_scope_exit(inner), 0);
    pt_tick(100);
    assert_int_equal(pn_scope_exit(outer), 0);
    assert_int_equal(pn_capture_dump(pt_path("closed_scopes.json")), 0);
    j = pt_parse_file(pt_path("closed_scopes.json"));
    evs = cJSON_GetObjectItem(j, "traceEvents");
    assert_int_equal(count_events(evs, "host_scope", "X"), 3);
    for (int i = 0; i < 3; i++)
        assert_false(is_open(nth_event(evs, "host_scope", i)));
    assert_true(cJSON_GetObjectItem(nth_event(evs, "host_scope", 0), "dur")->valuedouble == 2.74);
    assert_true(cJSON_GetObjectItem(nth_event(evs, "host_scope", 2), "dur")->valuedouble == 1.62);
    assert_string_equal(stack_of(nth_event(evs, "kernel", 1)), "ROOT/outer/inner/ok");
    cJSON_Delete(j);
    pn_capture_enable(0);
}

/* a session finalized inside a scope: the scope is in the trace, marked open; a scope
 * entered before the session started is not (the session never recorded it) */
static void
test_chrome_finalize_in_scope(void **state)
{
    uint32_t k = pt_kernel("fk", 0, NULL);
    uint64_t before = pn_scope_enter("before"), s;
    int id = pn_session_start(pt_path("fin_in_scope"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    cJSON *j, *evs;
    (void)state;
    s = pn_scope_enter("outer");
    pt_launch(k, 1, 100, 0);
    assert_int_equal(pn_session_finalize(id, ""), 0);
    assert_int_equal(pn_scope_exit(s), 0); /* the scope's exit is harmless afterwards */
    assert_int_equal(pn_scope_exit(before), 0);
    j = pt_parse_file(pt_path("fin_in_scope.chrome_trace"));
    evs = cJSON_GetObjectItem(j, "traceEvents");
    assert_int_equal(count_events(evs, "host_scope", "X"), 1);
    assert_string_equal(cJSON_GetObjectItem(nth_event(evs, "host_scope", 0), "name")->valuestring, "outer");
    assert_true(is_open(nth_event(evs, "host_scope", 0)));
    assert_string_equal(stack_of(nth_event(evs, "kernel", 0)), "ROOT/outer/fk");
    cJSON_Delete(j);
}

/* a python-context trace session: a kernel's call_stack is ROOT, the Python frames of
 * its launch, the kernel; no host-scope events (scope names are not part of its
 * paths); a shadow trace session at the same time keeps the scope call_stack; the
 * tree file of a python session holds the frames as nodes and vectors as arrays */
static void
test_chrome_python_context(void **state)
{
    static const char *fn[2] = { "/w.py:3@<module>", "/w.py:9@run" };
    uint32_t k = pt_kernel("pk", 0, NULL), f[2] = { pn_frame_intern(fn[0]), pn_frame_intern(fn[1]) };
    int py = pn_session_start(pt_path("py_trace"), PN_CONTEXT_PYTHON, PN_DATA_TRACE);
    int sh = pn_session_start(pt_path("py_trace_shadow"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    int tree = pn_session_start(pt_path("py_tree"), PN_CONTEXT_PYTHON, PN_DATA_TREE);
    uint64_t s;
    cJSON *j, *evs, *node;
    (void)state;
    pt_tick(1000);
    pn_python_frames(f, 1);
    s = pn_scope_enter("step");
    pn_scope_add_metric_vec("v", PN_METRIC_DOUBLE, NULL, (const double[]){ 0.5, 2.0 }, 2);
    pn_python_frames(f, 2);
    pt_launch(k, 2, 1000, 0);
    pt_launch(k, 2, 1000, 0); /* no frames: ROOT/pk */
    pn_scope_exit(s);
    assert_int_equal(pn_session_finalize(-1, ""), 0);
    (void)py, (void)sh, (void)tree;
    j = pt_parse_file(pt_path("py_trace.chrome_trace"));
    evs = cJSON_GetObjectItem(j, "traceEvents");
    assert_int_equal(count_events(evs, "host_scope", "X"), 0);
    assert_int_equal(count_events(evs, "kernel", "X"), 2);
    assert_string_equal(stack_of(nth_event(evs, "kernel", 0)), "ROOT//w.py:3@<module>//w.py:9@run/pk");
    assert_string_equal(stack_of(nth_event(evs, "kernel", 1)), "ROOT/pk");
    cJSON_Delete(j);
    j = pt_parse_file(pt_path("py_trace_shadow.chrome_trace"));
    evs = cJSON_GetObjectItem(j, "traceEvents");
    assert_int_equal(count_events(evs, "host_scope", "X"), 1);
    assert_string_equal(stack_of(nth_event(evs, "kernel", 0)), "ROOT/step/pk");
    assert_string_equal(stack_of(nth_event(evs, "kernel", 1)), "ROOT/step/pk");
    cJSON_Delete(j);
    j = pt_parse_file(pt_path("py_tree.hatchet"));
    node = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "children"), 0);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(node, "frame"), "name")->valuestring, fn[0]);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(node, "metrics"), "v"), 1)->valuedouble ==
                2.0);
    node = cJSON_GetArrayItem(cJSON_GetObjectItem(node, "children"), 0);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(node, "frame"), "name")->valuestring, fn[1]);
    assert_int_equal(pt_im(pt_find(node, "pk"), "count"), 1);
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(j, 0), "pk"), "count"), 1);
    cJSON_Delete(j);
}

/* the capture store written in all three formats */
static void
test_capture_formats(void **state)
{
    uint32_t k = pt_kernel("cap_fmt", 0, NULL);
    char *txt;
    cJSON *j;
    (void)state;
    pn_capture_enable(1);
    pt_tick(100);
    for (int i = 0; i < 5; i++)
        pt_launch(k, 16, 2000 + 1000 * (uint64_t)i, 0);
    pt_launch(k, 32, 1500, 0);
    assert_int_equal(pn_capture_dump(pt_path("capture.json")), 0);
    assert_int_equal(pn_capture_dump(pt_path("capture.hatchet")), 0);
    assert_int_equal(pn_capture_dump(pt_path("capture.txt")), 0);
    j = pt_parse_file(pt_path("capture.json"));
    assert_int_equal(count_events(cJSON_GetObjectItem(j, "traceEvents"), "kernel", "X"), 6);
    assert_int_equal(count_events(cJSON_GetObjectItem(j, "traceEvents"), "program", "X"), 112);
    cJSON_Delete(j);
    j = pt_parse_file(pt_path("capture.hatchet"));
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(j, 0), "cap_fmt"), "count"), 6);
    cJSON_Delete(j);
    txt = pt_read(pt_path("capture.txt"));
    assert_non_null(txt);
    /* one kernel on two grids: one kernel, two rows (as proton-cli html counts it) */
    assert_non_null(strstr(txt, "== Proton: 1 kernel, 6 launches, 21.5 us total (clock: fake 1.000 GHz, counters: none) =="));
    assert_non_null(strstr(txt, "cap_fmt[16,1,1]                  5     20.0 us      2.0 us      6.0 us      4.0 us"));
    assert_non_null(strstr(txt, "cap_fmt[32,1,1]                  1      1.5 us"));
    /* longest total first */
    assert_true(strstr(txt, "cap_fmt[16,1,1]") < strstr(txt, "cap_fmt[32,1,1]"));
    free(txt);
    pn_capture_enable(0);
}


/* the capture store keeps a timeline only when its output needs one: not for a
 * .hatchet or a console table (nothing recorded, nothing dropped), yes for a Chrome
 * trace, and never at PROTON_TRACE_LIMIT=0 (issue 14) */
static void
test_capture_timeline_only_when_needed(void **state)
{
    static const struct {
        const char *out, *limit;
        int timeline;
    } cases[] = { { "tl.hatchet", NULL, 0 }, { "tl.txt", NULL, 0 }, { "tl.json", NULL, 1 },
                  { "tl0.json", "0", 0 }, { "tl1.hatchet", "1", 0 } };
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint32_t k;
        setenv("PROTON_KERNEL_CAPTURE", "1", 1);
        setenv("PROTON_OUTPUT", pt_path(cases[c].out), 1);
        if (cases[c].limit)
            setenv("PROTON_TRACE_LIMIT", cases[c].limit, 1);
        else
            unsetenv("PROTON_TRACE_LIMIT");
        pt_reset();
        k = pt_kernel("tl", 0, NULL);
        for (int i = 0; i < 20; i++)
            pt_launch(k, 4, 1000, 0);
        pthread_mutex_lock(&pn_mu);
        assert_int_equal(pn_dropped(PN_CAPTURE_SLOT, pn_slot_ctick[PN_CAPTURE_SLOT]), 0);
        pthread_mutex_unlock(&pn_mu);
        assert_int_equal(pn_tls_cur->buf.head != NULL, cases[c].timeline);
        assert_int_equal(pn_capture_dump(NULL), 0);
    }
    unsetenv("PROTON_KERNEL_CAPTURE");
    unsetenv("PROTON_OUTPUT");
    unsetenv("PROTON_TRACE_LIMIT");
    pt_reset();
}

/* PROTON_VERBOSE=1 adds per-launch rows */
static void
test_console_verbose(void **state)
{
    uint32_t k = pt_kernel("verb", 0, NULL);
    char *txt;
    (void)state;
    setenv("PROTON_VERBOSE", "1", 1);
    pt_reset();
    pn_capture_enable(1);
    pt_launch(k, 2, 1000, 0);
    pt_launch(k, 2, 3000, 0);
    assert_int_equal(pn_capture_dump(pt_path("verbose.txt")), 0);
    txt = pt_read(pt_path("verbose.txt"));
    assert_non_null(strstr(txt, "-- launches --"));
    assert_non_null(strstr(txt, "3.0 us"));
    free(txt);
    unsetenv("PROTON_VERBOSE");
    pn_capture_enable(0);
}

/* text of pn_json_double(v); also checks that it reads back as exactly 'v' */
static void
expect_double(double v, const char *want)
{
    cJSON *j = pn_json_double(v);
    char *end;
    if (want)
        assert_string_equal(j->valuestring, want);
    assert_true(strtod(j->valuestring, &end) == v);
    assert_int_equal(*end, '\0');
    assert_non_null(strpbrk(j->valuestring, ".e")); /* always reads as a float */
    cJSON_Delete(j);
}

/* doubles as nlohmann::json's to_chars prints them (upstream .hatchet files):
 * shortest round-trip digits, fixed notation for decimal exponents -5 < e < 15 with
 * ".0" when integral, otherwise d[.ddd]e+XX with at least two exponent digits */
static void
test_json_doubles(void **state)
{
    static const struct {
        double v;
        const char *s;
    } d[] = { { 0.0, "0.0" }, { -0.0, "-0.0" }, { 1.0, "1.0" }, { 100.0, "100.0" },
              { 1024.0, "1024.0" }, { 1638400.0, "1638400.0" }, { 0.1, "0.1" },
              { 0.0001, "0.0001" }, { 1e-5, "1e-05" }, { 2.5e-7, "2.5e-07" },
              { 123.456, "123.456" }, { 1e14, "100000000000000.0" },
              { 123456789012345.0, "123456789012345.0" }, { 1e15, "1e+15" },
              { 1234567890123456.0, "1.234567890123456e+15" }, { 1e16, "1e+16" },
              { 1e20, "1e+20" }, { 1.5e300, "1.5e+300" }, { 1.5e-300, "1.5e-300" },
              { -3.0, "-3.0" }, { -100.0, "-100.0" }, { -0.25, "-0.25" },
              { -1.5e-5, "-1.5e-05" }, { 1.0 / 3.0, "0.3333333333333333" },
              { 5e-324, "5e-324" }, { 1.7976931348623157e308, "1.7976931348623157e+308" },
              { 4.35, "4.35" }, { 0.3, "0.3" } };
    uint64_t x = 0x9e3779b97f4a7c15ull;
    cJSON *j;
    (void)state;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        expect_double(d[i].v, d[i].s);
    for (int i = 0; i < 100000; i++) { /* random bit patterns read back exactly */
        double v;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(&v, &x, sizeof v);
        if (isfinite(v))
            expect_double(v, NULL);
        expect_double((double)(x >> 11) / 1000.0, NULL); /* Chrome ts/dur values */
    }
    /* JSON has no NaN or infinity: they are written as null */
    j = pn_json_double(NAN);
    assert_true(cJSON_IsNull(j));
    cJSON_Delete(j);
    j = pn_json_double(-INFINITY);
    assert_true(cJSON_IsNull(j));
    cJSON_Delete(j);
}

static void
test_json_numbers(void **state)
{
    cJSON *j;
    PtBuf b = { 0 };
    (void)state;
    j = pn_json_uint(UINT64_MAX);
    assert_string_equal(j->valuestring, "18446744073709551615");
    cJSON_Delete(j);
    j = pn_json_int(INT64_MIN);
    assert_string_equal(j->valuestring, "-9223372036854775808");
    cJSON_Delete(j);
    j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "k\"", "a\\b\n\x01\xc3\xa9");
    cJSON_AddItemToObject(j, "e", cJSON_CreateArray());
    pn_json_print(j, 0, pt_buf_write, &b);
    assert_string_equal(b.s, "{\"k\\\"\":\"a\\\\b\\n\\u0001\xc3\xa9\",\"e\":[]}");
    b.n = 0;
    pn_json_print(j, 1, pt_buf_write, &b);
    assert_string_equal(b.s, "{\n    \"k\\\"\": \"a\\\\b\\n\\u0001\xc3\xa9\",\n    \"e\": []\n}");
    cJSON_Delete(j);
    free(b.s);
}

static void
expect_path(const char *in, const char *out)
{
    char *p = pn_path_expand(in);
    assert_string_equal(p, out);
    free(p);
}

static void
test_path_expansion(void **state)
{
    char want[256];
    (void)state;
    snprintf(want, sizeof want, "dir/%d/out.json", (int)getpid());
    expect_path("dir/%p/out.json", want);
    expect_path("a%%b.json", "a%b.json");
    expect_path("x_%r.json", "x_0.json");
    setenv("RANK", "3", 1);
    expect_path("out.json", "out.rank3.json");
    expect_path("run.d/out", "run.d/out.rank3");
    expect_path("run.d/.hidden", "run.d/.hidden.rank3");
    expect_path("x_%r.json", "x_3.json");
    unsetenv("RANK");
    setenv("OMPI_COMM_WORLD_RANK", "12", 1);
    expect_path("t.hatchet", "t.rank12.hatchet");
    unsetenv("OMPI_COMM_WORLD_RANK");
    setenv("PMI_RANK", "bogus", 1);
    expect_path("t.hatchet", "t.hatchet");
    unsetenv("PMI_RANK");
}

/* a session finalized under a rank variable writes <name>.rank<N>.hatchet */
static void
test_session_rank_file(void **state)
{
    int id;
    (void)state;
    setenv("PMI_RANK", "5", 1);
    id = pn_session_start(pt_path("ranked"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    assert_int_equal(pn_session_finalize(id, ""), 0);
    assert_int_equal(access(pt_path("ranked.rank5.hatchet"), F_OK), 0);
    unsetenv("PMI_RANK");
}

static int
tmp_files_left(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp."))
            n++;
    if (d)
        closedir(d);
    return n;
}

static void
test_atomic_write(void **state)
{
    PnOut o;
    (void)state;
    unlink(pt_path("atomic.txt"));
    assert_int_equal(pn_out_open(&o, pt_path("atomic.txt")), 0);
    fputs("partial", o.f);
    assert_int_equal(access(pt_path("atomic.txt"), F_OK), -1); /* not there until done */
    assert_int_equal(pn_out_close(&o, 1), 0);
    assert_int_equal(access(pt_path("atomic.txt"), F_OK), 0);
    assert_int_equal(pn_out_open(&o, pt_path("aborted.txt")), 0);
    assert_int_equal(pn_out_close(&o, 0), 0);
    assert_int_equal(access(pt_path("aborted.txt"), F_OK), -1);
    assert_int_equal(tmp_files_left(pt_tmpdir()), 0);
    assert_int_equal(pn_out_open(&o, "/nonexistent-dir-for-proton/x.json"), -ENOENT);
    assert_non_null(strstr(pn_last_error(), "/nonexistent-dir-for-proton/x.json"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_hatchet_file, setup),
        cmocka_unit_test_setup(test_chrome_file, setup),
        cmocka_unit_test_setup(test_chrome_open_scopes, setup),
        cmocka_unit_test_setup(test_chrome_finalize_in_scope, setup),
        cmocka_unit_test_setup(test_capture_formats, setup),
        cmocka_unit_test_setup(test_console_verbose, setup),
        cmocka_unit_test_setup(test_capture_timeline_only_when_needed, setup),
        cmocka_unit_test_setup(test_json_doubles, setup),
        cmocka_unit_test_setup(test_json_numbers, setup),
        cmocka_unit_test_setup(test_path_expansion, setup),
        cmocka_unit_test_setup(test_session_rank_file, setup),
        cmocka_unit_test_setup(test_atomic_write, setup),
        cmocka_unit_test_setup(test_chrome_python_context, setup),
    };
    return cmocka_run_group_tests_name("proton writers", tests, NULL, NULL);
}
