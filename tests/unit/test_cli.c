/*
 * test_cli.c — unit tests for proton-cli's library (viewers/, linked from libcli.a):
 * JSON loading limits, the .hatchet and trace readers, the inclusive-metric rule, metric
 * specs, filters, escaping for HTML, the .hatchet printer and tree merging.
 * Golden tests of the whole tool live in tests/viewers/ (run.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- helpers ---- */

static CliProfile *
load(const char *text)
{
    CliErr e = {{0}};
    CliProfile *p = cli_profile_load_mem(text, strlen(text), "t", &e);
    if (!p)
        print_error("load failed: %s\n", e.msg);
    return p;
}

static const char *
load_error(const char *text, CliErr *e)
{
    CliProfile *p = cli_profile_load_mem(text, strlen(text), "t", e);
    cli_profile_destroy(p);
    return p ? NULL : e->msg;
}

static CliNode *
find(CliProfile *p, const char *path)
{
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root)) {
        char *s = cli_node_path_dup(n);
        int eq = strcmp(s, path) == 0;
        free(s);
        if (eq)
            return n;
    }
    return NULL;
}

/* Computes one metric spec and returns its value at path (NaN when missing). */
static double
value_at(CliProfile *p, const char *spec, const char *path, int *missing)
{
    CliMetricSpec m;
    CliErr e;
    int miss = 0;
    assert_int_equal(cli_metric_parse(spec, &m, &e), 0);
    cli_metrics_compute(p, &m, 1, &miss);
    if (missing)
        *missing = miss;
    CliNode *n = find(p, path);
    assert_non_null(n);
    return n->col[0];
}

static const char *hatchet_text =
    "[{\"frame\": {\"name\": \"ROOT\", \"type\": \"function\"},"
    "  \"metrics\": {\"count\": 0, \"time (ns)\": 0, \"bytes\": 0},"
    "  \"children\": ["
    "   {\"frame\": {\"name\": \"step\"}, \"metrics\": {\"cpu_time (ns)\": 50},"
    "    \"children\": ["
    "     {\"frame\": {\"name\": \"k\"}, \"metrics\": {\"count\": 2, \"time (ns)\": 3000000,"
    "      \"device_id\": \"0\", \"device_type\": \"CPU\", \"bytes\": 6000000},"
    "      \"children\": [{\"frame\": {\"name\": \"s\"}, \"metrics\": {\"count\": 8, \"time (ns)\": 5000000},"
    "        \"children\": [{\"frame\": {\"name\": \"inner\"}, \"metrics\": {\"count\": 8, \"time (ns)\": 4000000}}]}]},"
    "     {\"frame\": {\"name\": \"__proton_launch_metadata\"}, \"metrics\": {},"
    "      \"children\": [{\"frame\": {\"name\": \"hidden\"}, \"metrics\": {\"count\": 1}}]},"
    "     {\"frame\": {\"name\": \"empty\"}, \"metrics\": {}, \"children\": []}]},"
    "   {\"frame\": {\"name\": \"idle\"}, \"metrics\": {\"cpu_time (ns)\": 7}}]},"
    " {\"CPU\": {\"0\": {\"model\": \"Test CPU\", \"num_cores\": 4, \"counter_source\": \"software\"}}}]";

/* ---- loading limits ---- */

static void
test_json_rejects_bad_text(void **state)
{
    CliErr e;
    assert_string_equal(load_error("", &e), "t: empty file");
    assert_string_equal(load_error("  \n ", &e), "t: empty file");
    assert_non_null(strstr(load_error("[{\"frame\"", &e), "truncated"));
    assert_non_null(strstr(load_error("[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": {\"t\": 1e999}}]", &e),
                           "number out of range"));
    assert_non_null(strstr(load_error("{\"traceEvents\": []} x", &e), "unexpected text"));
    char *deep = malloc(100001);
    memset(deep, '[', 100000);
    deep[100000] = 0;
    assert_non_null(strstr(load_error(deep, &e), "nested deeper than 1000"));
    free(deep);
    char bin[] = {'[', 0, 1, 2};
    CliProfile *p = cli_profile_load_mem(bin, sizeof bin, "t", &e);
    assert_null(p);
    assert_non_null(strstr(e.msg, "NUL"));
}

static void
test_hatchet_wrong_types(void **state)
{
    CliErr e;
    assert_non_null(strstr(load_error("[{\"frame\": {\"name\": 1}, \"metrics\": {}}]", &e), "not a string"));
    assert_non_null(strstr(load_error("[{\"frame\": {\"name\": \"R\"}, \"metrics\": 3}]", &e), "not an object"));
    assert_non_null(strstr(load_error("[{\"frame\": {\"name\": \"R\"}, \"metrics\": {\"a\": true}}]", &e),
                           "not a number"));
    assert_non_null(strstr(load_error("[{\"frame\": {\"name\": \"R\"}, \"metrics\": {\"a\": [1, \"x\"]}}]", &e),
                           "non-number"));
    assert_non_null(strstr(load_error("[{\"frame\": {\"name\": \"R\"}, \"metrics\": {}, \"children\": 1}]", &e),
                           "not a list"));
    assert_non_null(strstr(load_error("[3]", &e), "not an object"));
}

static void
test_deep_tree_is_bounded(void **state)
{
    CliBuf b = {0};
    for (int i = 0; i < CLI_MAX_DEPTH + 5; i++)
        cli_buf_puts(&b, "{\"frame\": {\"name\": \"n\"}, \"metrics\": {\"count\": 1}, \"children\": [");
    cli_buf_puts(&b, "{\"frame\": {\"name\": \"leaf\"}, \"metrics\": {\"count\": 1}}");
    for (int i = 0; i < CLI_MAX_DEPTH + 5; i++)
        cli_buf_puts(&b, "]}");
    CliBuf t = {0};
    cli_buf_printf(&t, "[%s]", b.s);
    CliErr e;
    assert_non_null(strstr(load_error(t.s, &e), "deeper than"));
    cli_buf_fini(&b);
    cli_buf_fini(&t);
}

/* ---- hatchet reader and inclusive rule ---- */

static void
test_hatchet_reader_drops_metadata_and_empty(void **state)
{
    CliProfile *p = load(hatchet_text);
    assert_non_null(p);
    assert_non_null(find(p, "ROOT/step/k/s/inner"));
    assert_null(find(p, "ROOT/step/__proton_launch_metadata"));
    assert_null(find(p, "ROOT/step/empty"));
    assert_int_equal(cli_count_kernels(p), 1);
    assert_string_equal(p->cpu_model, "Test CPU");
    assert_int_equal(p->num_cores, 4);
    assert_true(p->metrics[cli_profile_metric_find(p, "count")].hinted);
    assert_false(p->metrics[cli_profile_metric_find(p, "cpu_time (ns)")].hinted);
    cli_profile_destroy(p);
}

static void
test_inclusive_rule(void **state)
{
    CliProfile *p = load(hatchet_text);
    /* a kernel's own time covers its scopes; host nodes sum their children */
    assert_float_equal(value_at(p, "time/ms", "ROOT/step/k", NULL), 3.0, 1e-12);
    assert_float_equal(value_at(p, "time/ms", "ROOT/step", NULL), 3.0, 1e-12);
    assert_float_equal(value_at(p, "time/ms", "ROOT", NULL), 3.0, 1e-12);
    /* an in-kernel scope covers the scopes nested in it */
    assert_float_equal(value_at(p, "time/ms", "ROOT/step/k/s", NULL), 5.0, 1e-12);
    assert_float_equal(value_at(p, "count", "ROOT/step/k", NULL), 2, 0);
    /* missing, never zero: no time anywhere below 'idle' */
    assert_true(isnan(value_at(p, "time/ms", "ROOT/idle", NULL)));
    /* per-node (not hinted) metric */
    assert_float_equal(value_at(p, "cpu_time/ns", "ROOT/idle", NULL), 7, 0);
    assert_true(isnan(value_at(p, "cpu_time/ns", "ROOT", NULL)));
    /* derived */
    assert_float_equal(value_at(p, "avg_time/us", "ROOT/step/k", NULL), 1500, 1e-9);
    assert_float_equal(value_at(p, "gbyte/s", "ROOT/step/k", NULL), 2.0, 1e-12);
    assert_float_equal(value_at(p, "time/%", "ROOT/step/k", NULL), 100.0, 1e-9);
    int missing = 0;
    assert_true(isnan(value_at(p, "ipc", "ROOT", &missing)));
    assert_int_equal(missing, 1);
    assert_true(isnan(value_at(p, "gflop32/s", "ROOT", &missing)));
    assert_int_equal(missing, 1);
    assert_float_equal(cli_metric_inclusive(p, find(p, "ROOT/step"), cli_profile_metric_find(p, "bytes")),
                       6e6, 0);
    cli_profile_destroy(p);
}

static void
test_scope_metric_aliases(void **state)
{
    /* Tritium's writer: in-kernel scopes carry scope_count / scope_time (ns) */
    CliProfile *p = load(
        "[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": {\"count\": 0, \"time (ns)\": 0,"
        " \"scope_count\": 0, \"scope_time (ns)\": 0}, \"children\": [{\"frame\": {\"name\": \"k\"},"
        " \"metrics\": {\"count\": 2, \"time (ns)\": 4000, \"device_type\": \"CPU\"}, \"children\": ["
        " {\"frame\": {\"name\": \"load\"}, \"metrics\": {\"scope_count\": 8, \"scope_time (ns)\": 200}}]}]}, {}]");
    assert_float_equal(value_at(p, "time/ns", "ROOT/k/load", NULL), 200, 0);
    assert_float_equal(value_at(p, "count", "ROOT/k/load", NULL), 8, 0);
    assert_float_equal(value_at(p, "avg_time/ns", "ROOT/k/load", NULL), 25, 0);
    assert_float_equal(value_at(p, "time/ns", "ROOT/k", NULL), 4000, 0);
    assert_float_equal(value_at(p, "count", "ROOT", NULL), 2, 0);
    cli_profile_destroy(p);
}

/* ---- trace reader ---- */

static const char *trace_text =
    "{\"displayTimeUnit\": \"ns\", \"baseTimeNanoseconds\": 1000,"
    " \"otherData\": {\"counter_source\": \"software\", \"clock_source\": \"tsc\", \"num_cores\": 2},"
    " \"traceEvents\": ["
    "  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"tid\": 0, \"args\": {\"name\": \"py\"}},"
    "  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 7, \"tid\": 1, \"args\": {\"name\": \"worker 1\"}},"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 7, \"tid\": 0, \"ts\": 10, \"dur\": 100,"
    "   \"args\": {\"call_stack\": [\"ROOT\", \"outer\", \"k\"], \"programs\": 2, \"threads\": 2, \"bytes\": 100,"
    "              \"counters\": {\"task-clock (ns)\": 5}}},"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 7, \"tid\": 0, \"ts\": 200, \"dur\": 50,"
    "   \"args\": {\"programs\": 2, \"threads\": 1}},"
    "  {\"ph\": \"X\", \"cat\": \"scope\", \"name\": \"a\", \"pid\": 7, \"tid\": 1, \"ts\": 20, \"dur\": 30,"
    "   \"args\": {\"kernel\": \"k\", \"program\": [0,0,0]}},"
    "  {\"ph\": \"X\", \"cat\": \"scope\", \"name\": \"b\", \"pid\": 7, \"tid\": 1, \"ts\": 25, \"dur\": 10,"
    "   \"args\": {\"kernel\": \"k\", \"program\": [0,0,0]}},"
    "  {\"ph\": \"X\", \"cat\": \"scope\", \"name\": \"a\", \"pid\": 7, \"tid\": 1, \"ts\": 210, \"dur\": 5,"
    "   \"args\": {\"kernel\": \"k\", \"program\": [1,0,0]}},"
    "  {\"ph\": \"C\", \"name\": \"task-clock\", \"pid\": 7, \"ts\": 110, \"args\": {\"value\": 5}}"
    " ]}";

static void
test_trace_aggregation(void **state)
{
    CliProfile *p = load(trace_text);
    assert_non_null(p);
    assert_int_equal(p->kind, CLI_KIND_TRACE);
    /* launches by call stack; scopes under the launch that contains them in time */
    assert_float_equal(value_at(p, "count", "ROOT/outer/k", NULL), 1, 0);
    assert_float_equal(value_at(p, "time/us", "ROOT/outer/k", NULL), 100, 1e-9);
    assert_float_equal(value_at(p, "count", "ROOT/k", NULL), 1, 0);
    assert_float_equal(value_at(p, "time/us", "ROOT/outer/k/a", NULL), 30, 1e-9);
    assert_float_equal(value_at(p, "time/us", "ROOT/outer/k/a/b", NULL), 10, 1e-9);
    assert_float_equal(value_at(p, "time/us", "ROOT/k/a", NULL), 5, 1e-9);
    assert_float_equal(value_at(p, "task-clock/ns", "ROOT", NULL), 5, 0);
    assert_float_equal(value_at(p, "threads", "ROOT/outer/k", NULL), 2, 0);
    assert_float_equal(value_at(p, "time/us", "ROOT", NULL), 150, 1e-9);
    assert_int_equal(p->nspans, 5);
    assert_int_equal(p->nthreads, 2);
    assert_string_equal(p->threads[1].name, "worker 1");
    assert_string_equal(p->threads[1].pname, "py"); /* process name shared by its threads */
    assert_string_equal(p->counter_source, "software");
    cli_profile_destroy(p);
}

static void
test_trace_errors(void **state)
{
    CliErr e;
    assert_non_null(strstr(load_error("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1}]}", &e), "without numeric"));
    assert_non_null(strstr(load_error("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": -1}]}", &e),
                           "negative dur"));
    assert_non_null(strstr(load_error("{\"traceEvents\": [{\"name\": \"x\"}]}", &e), "no \"ph\""));
    assert_non_null(strstr(load_error("{\"events\": []}", &e), "traceEvents"));
}

/* ---- metric specs, filters, names ---- */

static void
test_metric_parse(void **state)
{
    CliMetricSpec m;
    CliErr e;
    assert_int_equal(cli_metric_parse("time/ms", &m, &e), 0);
    assert_int_equal(m.kind, CLI_MK_TIME);
    assert_float_equal(m.factor, 1e3, 1e-9);
    assert_int_equal(cli_metric_parse("gflop16/s", &m, &e), 0);
    assert_int_equal(m.kind, CLI_MK_RATE);
    assert_string_equal(m.base, "flops16");
    assert_true(m.higher_better);
    assert_int_equal(cli_metric_parse("TBYTE/s", &m, &e), 0);
    assert_string_equal(m.base, "bytes");
    assert_int_equal(cli_metric_parse("avg_cpu_time/us", &m, &e), 0);
    assert_int_equal(m.kind, CLI_MK_AVG);
    assert_string_equal(m.base, "cpu_time");
    assert_int_equal(cli_metric_parse("count/%", &m, &e), 0);
    assert_int_equal(m.kind, CLI_MK_PCT);
    assert_int_equal(cli_metric_parse("IPC", &m, &e), 0);
    assert_int_equal(m.kind, CLI_MK_IPC);
    assert_int_equal(cli_metric_parse("time/hours", &m, &e), -1);
    assert_non_null(strstr(e.msg, "unsupported unit"));
    assert_int_equal(cli_metric_parse("gflop12/s", &m, &e), -1);
    assert_int_equal(cli_metric_parse("util", &m, &e), -1);
    CliMetricSpec *list;
    assert_int_equal(cli_metric_parse_list(" time/ms , count ", &list, &e), 2);
    assert_string_equal(list[1].text, "count");
    free(list);
    assert_int_equal(cli_metric_parse_list(",,", &list, &e), -1);
}

static void
test_regex_is_anchored_like_re_match(void **state)
{
    CliRegex r;
    CliErr e;
    assert_int_equal(cli_regex_init(&r, "test\\d", &e), 0);
    assert_true(cli_regex_match(&r, "test1"));
    assert_true(cli_regex_match(&r, "test12x"));
    assert_false(cli_regex_match(&r, "a test1"));
    cli_regex_fini(&r);
    assert_int_equal(cli_regex_init(&r, ".*matmul.*", &e), 0);
    assert_true(cli_regex_match(&r, "my_matmul_kernel"));
    cli_regex_fini(&r);
    assert_int_equal(cli_regex_init(&r, "a|b", &e), 0); /* the alternation stays anchored */
    assert_true(cli_regex_match(&r, "bcd"));
    assert_false(cli_regex_match(&r, "cb"));
    cli_regex_fini(&r);
    assert_int_equal(cli_regex_init(&r, "(", &e), -1);
}

static void
test_view_filters(void **state)
{
    CliProfile *p = load(hatchet_text);
    CliMetricSpec m;
    int miss;
    cli_metric_parse("time/ms", &m, NULL);
    cli_metrics_compute(p, &m, 1, &miss);
    CliView v = {.depth = 100};
    CliErr e;
    cli_regex_init(&v.include, "inn", &e);
    v.has_include = 1;
    cli_view_apply(p, &v);
    assert_true(find(p, "ROOT/step/k/s/inner")->flags & CLI_NODE_SHOWN);
    assert_true(find(p, "ROOT/step")->flags & CLI_NODE_SHOWN);
    assert_false(find(p, "ROOT/idle")->flags & CLI_NODE_SHOWN);
    cli_view_fini(&v);
    CliView t = {.depth = 3, .threshold = 4, .has_threshold = 1};
    cli_view_apply(p, &t);
    assert_true(p->root->flags & CLI_NODE_SHOWN);        /* ROOT always */
    /* s (5 ms) passes and keeps its ancestors although step and k (3 ms) do not, as in
     * proton-viewer, where the depth limit applies after filtering */
    assert_true(find(p, "ROOT/step/k")->flags & CLI_NODE_SHOWN);
    assert_false(find(p, "ROOT/step/k/s")->flags & CLI_NODE_SHOWN);
    assert_false(find(p, "ROOT/idle")->flags & CLI_NODE_SHOWN);
    CliView x = {.depth = 100};
    cli_regex_init(&x.exclude, "k", &e);
    x.has_exclude = 1;
    cli_view_apply(p, &x);
    assert_true(find(p, "ROOT/step")->flags & CLI_NODE_SHOWN);
    assert_false(find(p, "ROOT/step/k/s")->flags & CLI_NODE_SHOWN);
    cli_view_fini(&x);
    cli_profile_destroy(p);
}

static void
test_frame_formats(void **state)
{
    char buf[256];
    const char *n = "/a/b/test.py:12@foo";
    assert_string_equal(cli_frame_format(n, CLI_FRAME_FULL, buf, sizeof buf), n);
    assert_string_equal(cli_frame_format(n, CLI_FRAME_FILE_FUNCTION_LINE, buf, sizeof buf), "test.py:12@foo");
    assert_string_equal(cli_frame_format(n, CLI_FRAME_FUNCTION_LINE, buf, sizeof buf), "12@foo");
    assert_string_equal(cli_frame_format(n, CLI_FRAME_FILE_FUNCTION, buf, sizeof buf), "test.py@foo");
    assert_string_equal(cli_frame_format("kernel", CLI_FRAME_FILE_FUNCTION, buf, sizeof buf), "kernel");
}

static void
test_number_formats(void **state)
{
    char b[64];
    cli_fmt_value(b, NAN, 3);
    assert_string_equal(b, "-");
    cli_fmt_value(b, 0.6144, 3);
    assert_string_equal(b, "0.614");
    cli_fmt_value(b, -0.0001, 3);
    assert_string_equal(b, "0.000");
    cli_fmt_value(b, 1.5e300, 3);
    assert_string_equal(b, "1.5e+300");
    char d[32];
    cli_fmt_double(d, 3.0);
    assert_string_equal(d, "3");
    cli_fmt_double(d, 0.1);
    assert_string_equal(d, "0.1");
    cli_fmt_double(d, 1e300);
    assert_string_equal(d, "1e+300");
    assert_float_equal(cli_round15(18.607000000000003), 18.607, 0);
}

/* ---- escaping and writers ---- */

static void
test_html_escaping(void **state)
{
    CliBuf b = {0};
    cli_html_escape(&b, "<b a='1'>&\"");
    assert_string_equal(b.s, "&lt;b a=&#39;1&#39;&gt;&amp;&quot;");
    cli_buf_fini(&b);
    cli_json_script_escape(&b, "{\"n\": \"</script><!-- \xe2\x80\xa8 &\"}");
    assert_null(strstr(b.s, "</"));
    assert_null(strstr(b.s, "<!--"));
    assert_null(strstr(b.s, "\xe2\x80\xa8"));
    assert_non_null(strstr(b.s, "\\u003c/script\\u003e"));
    assert_non_null(strstr(b.s, "\\u2028"));
    cli_buf_fini(&b);
}

static void
test_html_page_is_self_contained(void **state)
{
    CliProfile *p = load(trace_text);
    CliBuf b = {0};
    cli_html_render(p, &b);
    assert_non_null(strstr(b.s, "<table id=\"nodes\">"));
    assert_non_null(strstr(b.s, "id=\"timeline\""));
    assert_null(strstr(b.s, "https://")); /* no network: only the SVG namespace URI appears */
    assert_null(strstr(b.s, "url("));
    assert_null(strstr(b.s, "<link"));
    assert_null(strstr(b.s, "src="));
    cli_buf_fini(&b);
    cli_profile_destroy(p);
}

static void
test_hatchet_print_layout(void **state)
{
    CliErr e;
    const char *text = "[{\"b\": 1, \"a\": [], \"c\": {\"z\": 0.5, \"y\": \"x\\\"\"}}, {}]";
    cJSON *j = cli_json_parse(text, strlen(text), &e);
    assert_non_null(j);
    CliBuf b = {0};
    cli_hatchet_print(&b, j);
    assert_string_equal(b.s, "\n[\n    {\n        \"a\": [],\n        \"b\": 1,\n        \"c\": {\n"
                             "            \"y\": \"x\\\"\",\n            \"z\": 0.5\n        }\n    },\n"
                             "    {}\n]\n");
    cli_buf_fini(&b);
    cJSON_Delete(j);
}

static void
test_merge_hatchets(void **state)
{
    CliErr e;
    cJSON *in[2];
    in[0] = cli_json_parse(hatchet_text, strlen(hatchet_text), &e);
    in[1] = cli_json_parse(hatchet_text, strlen(hatchet_text), &e);
    const char *names[2] = {"dir/rank0.hatchet", "other/rank0.hatchet"};
    cJSON *m = cli_merge_hatchets(in, names, 2);
    CliProfile *p = cli_profile_from_json(m, "merged", &e);
    assert_non_null(p);
    assert_non_null(find(p, "ROOT/rank0.hatchet/step/k/s"));
    assert_non_null(find(p, "ROOT/rank0.hatchet#2/step/k"));
    assert_float_equal(value_at(p, "time/ms", "ROOT", NULL), 6.0, 1e-12);
    cli_profile_destroy(p);
    cJSON_Delete(m);
    cJSON_Delete(in[0]);
    cJSON_Delete(in[1]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_rejects_bad_text),
        cmocka_unit_test(test_hatchet_wrong_types),
        cmocka_unit_test(test_deep_tree_is_bounded),
        cmocka_unit_test(test_hatchet_reader_drops_metadata_and_empty),
        cmocka_unit_test(test_inclusive_rule),
        cmocka_unit_test(test_scope_metric_aliases),
        cmocka_unit_test(test_trace_aggregation),
        cmocka_unit_test(test_trace_errors),
        cmocka_unit_test(test_metric_parse),
        cmocka_unit_test(test_regex_is_anchored_like_re_match),
        cmocka_unit_test(test_view_filters),
        cmocka_unit_test(test_frame_formats),
        cmocka_unit_test(test_number_formats),
        cmocka_unit_test(test_html_escaping),
        cmocka_unit_test(test_html_page_is_self_contained),
        cmocka_unit_test(test_hatchet_print_layout),
        cmocka_unit_test(test_merge_hatchets),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
