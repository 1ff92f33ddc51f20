/*
 * test_cli.c — unit tests for proton-cli's library (viewers/, linked from libcli.a):
 * JSON loading limits, the .hatchet and trace readers, the inclusive-metric rule, metric
 * specs, filters, escaping for HTML, the .hatchet printer, tree and trace merging, and
 * diff's handling of missing values.
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
#include <unistd.h>

#include "cli.h"
#include "cli_peak.h"

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

/* Node at "ROOT/a/b" (names joined with '/' here, whatever the tool prints). */
static CliNode *
find(CliProfile *p, const char *path)
{
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root)) {
        char buf[1024] = "";
        const CliNode *chain[64];
        int k = 0;
        for (const CliNode *m = n; m && k < 64; m = m->parent)
            chain[k++] = m;
        while (k-- > 0) {
            strncat(buf, chain[k]->name, sizeof buf - strlen(buf) - 2);
            if (k)
                strcat(buf, "/");
        }
        if (strcmp(buf, path) == 0)
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

/* A one-event trace whose kernel args (or top-level fields) are 'extra'. */
static const char *
kernel_error(const char *args, const char *top, CliErr *e)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "{%s\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\","
             " \"pid\": 1, \"tid\": 0, \"ts\": 1, \"dur\": 2, \"args\": {%s}}]}",
             top, args);
    return load_error(text, e);
}

static void
test_trace_wrong_types(void **state)
{
    CliErr e;
    /* what the audit of issue 4 found accepted */
    assert_string_equal(kernel_error("\"call_stack\": [\"ROOT\", 1, {}]", "", &e),
                        "t: traceEvents[0].args.call_stack[1] is not a string");
    assert_string_equal(kernel_error("\"counters\": [1, 2]", "", &e),
                        "t: traceEvents[0].args.counters is not an object");
    assert_string_equal(kernel_error("\"programs\": \"x\"", "", &e),
                        "t: traceEvents[0].args.programs is not a number");
    assert_string_equal(kernel_error("", "\"baseTimeNanoseconds\": \"x\", ", &e),
                        "t: baseTimeNanoseconds is not a number");
    assert_string_equal(kernel_error("", "\"baseTimeNanoseconds\": 1e30, ", &e),
                        "t: baseTimeNanoseconds is out of range (0 to 2^64-1)");
    assert_string_equal(load_error("{\"traceEvents\": [{\"ph\": \"X\", \"pid\": 1e300, \"ts\": 0, "
                                   "\"dur\": 1}]}", &e),
                        "t: traceEvents[0].pid is out of range (0 to 2^32-1)");
    assert_string_equal(load_error("{\"traceEvents\": [{\"ph\": \"C\", \"pid\": [1]}]}", &e),
                        "t: traceEvents[0].pid is not a number or string");
    /* integers, ranges, nested fields */
    assert_non_null(strstr(kernel_error("\"threads\": 2.5", "", &e), "threads is not an integer"));
    assert_non_null(strstr(kernel_error("\"bytes\": -1", "", &e), "bytes is out of range"));
    assert_non_null(strstr(kernel_error("\"counters\": {\"cycles\": true}", "", &e),
                           "args.counters.cycles is not a number"));
    assert_non_null(strstr(kernel_error("\"metrics\": {\"flops\": []}", "", &e),
                           "args.metrics.flops is not a number or string"));
    assert_non_null(strstr(kernel_error("\"user\": 1e30", "", &e), "args.user is out of range"));
    assert_non_null(strstr(kernel_error("", "\"otherData\": {\"cpu_model\": 3}, ", &e),
                           "otherData.cpu_model is not a string"));
    assert_non_null(strstr(load_error("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1e16, \"dur\": 1}]}",
                                      &e), "ts is out of range"));
    /* null is absent; fields nothing reads are not checked */
    CliProfile *p = load("{\"baseTimeNanoseconds\": null, \"traceEvents\": [{\"ph\": \"X\","
                         " \"cat\": \"kernel\", \"name\": \"k\", \"pid\": null, \"ts\": 1, \"dur\": 2,"
                         " \"args\": {\"bytes\": null, \"grid\": \"any\", \"constexprs\": 7,"
                         " \"note\": \"text\"}}]}");
    assert_non_null(p);
    assert_int_equal(p->has_base, 0);
    assert_string_equal(p->threads[0].pid, "0");
    cli_profile_destroy(p);
}

static const char *counters_trace =
    "{\"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"tid\": 0, \"ts\": 0, \"dur\": 100,"
    " \"args\": {\"counters\": {\"cycles\": 1000, \"instructions\": 2500}}},"
    "{\"ph\": \"X\", \"cat\": \"scope\", \"name\": \"s\", \"tid\": 1, \"ts\": 10, \"dur\": 50,"
    " \"args\": {\"kernel\": \"k\", \"counters\": {\"cycles\": 400, \"instructions\": 300}}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"tid\": 0, \"ts\": 200, \"dur\": 100,"
    " \"args\": {\"counters\": {\"cycles\": 1000, \"instructions\": 1500}}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"plain\", \"tid\": 0, \"ts\": 400, \"dur\": 1}]}";

static void
test_trace_counters_ipc(void **state)
{
    CliProfile *p = load(counters_trace);
    int missing;
    assert_non_null(p);
    /* (2500 + 1500) / (1000 + 1000); the in-kernel scope has its own counters */
    assert_float_equal(value_at(p, "ipc", "ROOT/k", NULL), 2.0, 1e-12);
    assert_float_equal(value_at(p, "instructions", "ROOT/k", NULL), 4000, 0);
    assert_float_equal(value_at(p, "ipc", "ROOT/k/s", NULL), 0.75, 1e-12);
    assert_float_equal(value_at(p, "ipc", "ROOT", &missing), 2.0, 1e-12);
    assert_int_equal(missing, 0);
    assert_true(isnan(value_at(p, "ipc", "ROOT/plain", NULL))); /* missing, not 0 */
    cli_profile_destroy(p);
}

static void
test_path_separator_is_unambiguous(void **state)
{
    CliProfile *p = cli_profile_create("t", CLI_KIND_HATCHET);
    CliNode *a = cli_node_child(p, p->root, "/x.py:1@<module>");
    CliNode *b = cli_node_child(p, a, "a > b");
    CliNode *c = cli_node_child(p, b, "c\\ >");
    char *s = cli_node_path_dup(c);
    assert_string_equal(s, "ROOT > /x.py:1@<module> > a \\> b > c\\\\ \\>");
    free(s);
    cli_profile_destroy(p);
    assert_string_equal(cli_heat_color(NAN, 0, 1), "\033[2m"); /* missing: dim, not "low" */
    assert_string_not_equal(cli_heat_color(0, 0, 1), "\033[2m");
}

/* Merges two texts and parses the result; NULL with e set on failure. */
static cJSON *
merge_two(const char *a, const char *b, int hatchet, CliErr *e)
{
    CliMergeIn in[2] = {{"x/a.json", a, strlen(a)}, {"y/b.json", b, strlen(b)}};
    CliBuf out = {0};
    cJSON *j = NULL;
    if (cli_merge_write(in, 2, hatchet, cli_buf_write, &out, e) == 0)
        j = cli_json_parse(out.s, out.n, e);
    cli_buf_fini(&out);
    return j;
}

static void
test_merge_traces(void **state)
{
    CliErr e;
    const char *a = "{\"baseTimeNanoseconds\": 1764500000000001001, \"traceEvents\": ["
                    "{\"ph\": \"X\", \"name\": \"k\", \"pid\": 5, \"ts\": 1, \"dur\": 1}]}";
    const char *b = "{\"baseTimeNanoseconds\": 1764500000000000001, \"traceEvents\": ["
                    "{\"ph\": \"X\", \"name\": \"k\", \"pid\": 6, \"ts\": 1, \"dur\": 1}]}";
    cJSON *m = merge_two(a, b, 0, &e);
    assert_non_null(m);
    cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "traceEvents"), 0);
    assert_float_equal(cJSON_GetObjectItem(ev, "ts")->valuedouble, 2.0, 1e-9); /* +1000 ns */
    assert_float_equal(cJSON_GetObjectItem(ev, "pid")->valuedouble, 5, 0);   /* pids kept */
    cJSON_Delete(m);
    /* a string pid anywhere: every pid renumbered, so none can meet another */
    const char *c = "{\"traceEvents\": [{\"ph\": \"i\", \"pid\": \"gpu\"}, {\"ph\": \"i\"}]}";
    m = merge_two(c, b, 0, &e);
    assert_non_null(m);
    char *s = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "otherData"), "merged_from"));
    assert_string_equal(s, "[{\"file\":\"a.json\",\"shift_us\":0,\"pids\":[1,2],\"otherData\":{}},"
                           "{\"file\":\"b.json\",\"shift_us\":0,\"pids\":[3],\"otherData\":{}}]");
    free(s);
    cJSON_Delete(m);
    /* bad inputs are errors, not silently dropped fields */
    assert_null(merge_two("{\"baseTimeNanoseconds\": \"x\", \"traceEvents\": []}", b, 0, &e));
    assert_string_equal(e.msg, "x/a.json: baseTimeNanoseconds is not a number");
    assert_null(merge_two("{\"baseTimeNanoseconds\": 18000000000000000000, \"traceEvents\": [{\"ph\": \"i\"}, "
                          "{\"ph\": \"i\", \"ts\": 0}]}", "{\"baseTimeNanoseconds\": 0, \"traceEvents\": []}",
                          0, &e));
    assert_string_equal(e.msg, "x/a.json: traceEvents[1].ts is out of range once shifted by "
                               "18000000000000000.000 us onto the common clock");
    assert_null(merge_two(hatchet_text, b, 0, &e));
    assert_non_null(strstr(e.msg, "is a .hatchet tree"));
    /* into a tree: a trace is aggregated first */
    m = merge_two(hatchet_text, counters_trace, 1, &e);
    assert_non_null(m);
    CliProfile *p = cli_profile_from_json(m, "merged", &e);
    assert_non_null(p);
    assert_float_equal(value_at(p, "ipc", "ROOT/b.json/k", NULL), 2.0, 1e-12);
    cli_profile_destroy(p);
    cJSON_Delete(m);
}


/* Events are written straight from the parsed input (no copy): every field kept in its
 * order with its exact value, the first pid mapped (added where absent), the first ts
 * shifted, a process_name's args.name prefixed (added where absent), strings escaped
 * so that cJSON reads back the same text. */
static void
test_merge_rewrites_events_exactly(void **state)
{
    (void)state;
    CliErr e;
    const char *a = "{\"baseTimeNanoseconds\": 1000, \"traceEvents\": ["
                    "{\"ph\": \"X\", \"name\": \"k\\\"\\\\\\n\\u0001\", \"pid\": \"p\", \"tid\": 3, \"ts\": 0.125,"
                    " \"dur\": 1e-3, \"args\": {\"v\": [1, 2.5, -3e20, true, false, null, {}, []], \"big\": 18446744073709551615},"
                    " \"ts\": 99},"
                    "{\"ph\": \"i\", \"ts\": 4},"
                    "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": \"p\", \"args\": {\"sort\": 1}},"
                    "{\"ph\": \"M\", \"name\": \"process_name\", \"args\": {\"name\": \"main\", \"x\": 2}}]}";
    const char *b = "{\"baseTimeNanoseconds\": 0, \"traceEvents\": []}";
    cJSON *m = merge_two(a, b, 0, &e);
    if (!m)
        print_error("%s\n", e.msg);
    assert_non_null(m);
    cJSON *evs = cJSON_GetObjectItem(m, "traceEvents");
    char *s0 = cJSON_PrintUnformatted(cJSON_GetArrayItem(evs, 0));
    /* pid "p" becomes 1 (a string pid renumbers), ts + 1 us (1000 ns later base), the second ts as is */
    assert_string_equal(s0, "{\"ph\":\"X\",\"name\":\"k\\\"\\\\\\n\\u0001\",\"pid\":1,\"tid\":3,\"ts\":1.125,"
                            "\"dur\":0.001,\"args\":{\"v\":[1,2.5,-3e+20,true,false,null,{},[]],"
                            "\"big\":1.8446744073709552e+19},\"ts\":99}");
    free(s0);
    char *s1 = cJSON_PrintUnformatted(cJSON_GetArrayItem(evs, 1));
    assert_string_equal(s1, "{\"ph\":\"i\",\"ts\":5,\"pid\":2}"); /* no pid: label "0", pid 2 */
    free(s1);
    char *s2 = cJSON_PrintUnformatted(cJSON_GetArrayItem(evs, 2));
    assert_string_equal(s2, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"sort\":1,"
                            "\"name\":\"a.json: process\"}}");
    free(s2);
    char *s3 = cJSON_PrintUnformatted(cJSON_GetArrayItem(evs, 3));
    assert_string_equal(s3, "{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"a.json: main\",\"x\":2},"
                            "\"pid\":2}");
    free(s3);
    cJSON_Delete(m);
}

/* merge keeps each input's otherData and says what they have in common: one clock,
 * mixed counter sources, the union of the events, the sum of the drops (issue 14) */
static void
test_merge_keeps_other_data(void **state)
{
    (void)state;
    CliErr e;
    const char *a = "{\"otherData\": {\"tool\": \"tritium-proton\", \"pid\": 5, \"clock_source\": \"tsc\","
                    " \"counter_source\": \"software\", \"events\": [\"task-clock (ns)\", \"page-faults\"],"
                    " \"dropped_events\": 7, \"cpu_model\": \"EPYC\", \"num_cores\": 2}, \"traceEvents\": ["
                    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 5, \"ts\": 1, \"dur\": 1}]}";
    const char *b = "{\"otherData\": {\"pid\": 6, \"clock_source\": \"tsc\", \"counter_source\": \"hardware\","
                    " \"events\": [\"cycles\", \"page-faults\"], \"dropped_events\": 5, \"cpu_model\": \"EPYC\","
                    " \"num_cores\": 8}, \"traceEvents\": ["
                    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 6, \"ts\": 1, \"dur\": 1}]}";
    cJSON *m = merge_two(a, b, 0, &e);
    assert_non_null(m);
    cJSON *od = cJSON_GetObjectItem(m, "otherData");
    assert_string_equal(cJSON_GetObjectItem(od, "clock_source")->valuestring, "tsc");
    assert_string_equal(cJSON_GetObjectItem(od, "counter_source")->valuestring, "mixed (software, hardware)");
    assert_string_equal(cJSON_GetObjectItem(od, "cpu_model")->valuestring, "EPYC");
    assert_int_equal(cJSON_GetObjectItem(od, "dropped_events")->valueint, 12);
    assert_int_equal(cJSON_GetObjectItem(od, "num_cores")->valueint, 8);
    char *ev = cJSON_PrintUnformatted(cJSON_GetObjectItem(od, "events"));
    assert_string_equal(ev, "[\"task-clock (ns)\",\"page-faults\",\"cycles\"]");
    free(ev);
    cJSON *from = cJSON_GetObjectItem(od, "merged_from");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(from, 0), "otherData"), "pid")->valueint, 5);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(from, 1), "otherData"),
                                            "counter_source")->valuestring, "hardware");
    /* and the merged file reads back with them: what html's header shows */
    char *text = cJSON_PrintUnformatted(m);
    CliProfile *p = cli_profile_load_mem(text, strlen(text), "merged", &e);
    assert_non_null(p);
    assert_string_equal(p->clock_source, "tsc");
    assert_string_equal(p->counter_source, "mixed (software, hardware)");
    assert_int_equal(p->dropped_events, 12);
    cli_profile_destroy(p);
    free(text);
    cJSON_Delete(m);
}

static void
test_diff_missing_is_not_a_change(void **state)
{
    CliProfile *a = load(counters_trace), *b = load(trace_text);
    CliDiffOpts o = {.v.depth = 100, .fmt = CLI_FMT_CSV};
    CliErr e;
    CliBuf out = {0};
    int missing[2];
    assert_int_equal(cli_metric_parse("ipc", &o.m, &e), 0);
    cli_diff_render(a, b, &o, &out, missing);
    assert_int_equal(missing[0], 0);
    assert_int_equal(missing[1], 1);
    /* ROOT and k are in both files but NEW has no ipc: no delta, ratio or mark */
    assert_non_null(strstr(out.s, "\r\n\"ROOT\",2,,,,\r\n"));
    assert_non_null(strstr(out.s, "\r\n\"k\",2,,,,\r\n"));
    assert_non_null(strstr(out.s, "\r\n\"k > s\",0.75,,-0.75,,base\r\n")); /* only in BASE: to 0 */
    cli_buf_fini(&out);
    cli_profile_destroy(a);
    cli_profile_destroy(b);
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

/* The measuring code the roofline cache and bench/fma_peak.c share: short runs give sane,
 * positive figures (bounds only, no timing targets), and cache paths follow the
 * documented naming. */
static void
test_peaks_measure_and_cache_path(void **state)
{
    for (int t = 0; t < CLI_PEAK_NTYPES; t++) {
        int w = cli_peak_widest((CliPeakType)t);
        double g = cli_peak_fma((CliPeakType)t, 0, 1, 0.002, 1);
        if (t != CLI_PEAK_BF16)
            assert_true(w >= 8 && g > 0.1 && g < 1e5);
        else
            assert_true(w == 0 ? g == 0 : g > 0.1 && g < 1e5);
    }
    assert_true(cli_peak_fma(CLI_PEAK_FP64, 3, 1, 0.001, 1) == 0); /* no 3-byte vectors */
    double bw = cli_peak_read(2, (size_t)16 << 20, 1);
    assert_true(bw > 0.01 && bw < 1e5);
    assert_true(cli_peak_read_bytes() >= (size_t)128 << 20);
    char path[512];
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    assert_int_equal(cli_roof_cache_path("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", 2, path,
                                         sizeof path), 0);
    assert_string_equal(path, "/x/cache/tritium/roofline-Intel_R_Xeon_R_Platinum_8375C_CPU_2.90GHz-2t.json");
    setenv("XDG_CACHE_HOME", "relative", 1); /* not absolute: ignored, as the spec says */
    setenv("HOME", "/h", 1);
    assert_int_equal(cli_roof_cache_path("@@", 64, path, sizeof path), 0);
    assert_string_equal(path, "/h/.cache/tritium/roofline-cpu-64t.json");
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


/* ---- streamed traces (issue 14) ---- */

/* A trace of n kernel launches on 2 threads, one in-kernel scope under every launch
 * and a counter sample per launch, pretty-printed one field a line so that it spans
 * many lines and windows; written to a temporary file. Caller frees the path. */
static char *
write_big_trace(int n, size_t *bytes)
{
    char *path = strdup("/tmp/test_cli_big_XXXXXX");
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\n \"baseTimeNanoseconds\": 17,\n \"otherData\": {\"clock_source\": \"tsc\"},\n"
               " \"traceEvents\": [\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 7,\n"
                   "   \"tid\": 0, \"ts\": %d.5, \"dur\": 10,\n"
                   "   \"args\": {\"programs\": 2, \"counters\": {\"cycles\": 3}, \"note\": \"\\\"q\\\\\"}},\n"
                   "  {\"ph\": \"X\", \"cat\": \"scope\", \"name\": \"load\", \"pid\": 7, \"tid\": 1,\n"
                   "   \"ts\": %d.75, \"dur\": 2, \"args\": {\"kernel\": \"k%d\"}},\n"
                   "  {\"ph\": \"C\", \"name\": \"cycles\", \"pid\": 7, \"tid\": 0, \"ts\": %d.5,"
                   " \"args\": {\"value\": 3}},\n",
                i % 3, i * 20, i * 20, i % 3, i * 20);
    fprintf(f, "  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 7, \"tid\": 1, \"args\": {\"name\": \"w\"}}\n ]\n}\n");
    *bytes = (size_t)ftell(f);
    fclose(f);
    return path;
}

/* A file read through the sliding window gives the tree the whole-document reader
 * gives, with every launch, scope and counter. */
static void
test_stream_matches_whole_document(void **state)
{
    (void)state;
    size_t bytes;
    int n = 30000;
    char *path = write_big_trace(n, &bytes);
    assert_true(bytes > 4u << 20); /* several 1 MiB windows */
    CliErr e = {{0}};
    CliProfile *p = cli_profile_load_opts(path, 0, &e);
    if (!p)
        print_error("%s\n", e.msg);
    assert_non_null(p);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(cli_file_read(path, &text, &len, &e), 0);
    cJSON *j = cli_json_parse(text, len, &e);
    assert_non_null(j);
    CliProfile *q = cli_profile_from_json(j, path, &e);
    assert_non_null(q);
    int count = cli_profile_metric_find(p, "count"), cyc = cli_profile_metric_find(p, "cycles");
    int qcount = cli_profile_metric_find(q, "count");
    double total = 0;
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "ROOT/k%d", k);
        CliNode *a = find(p, name), *b = find(q, name);
        assert_non_null(a);
        assert_non_null(b);
        assert_true(cli_node_val(a, count)->num == cli_node_val(b, qcount)->num);
        total += cli_node_val(a, count)->num;
        assert_true(cli_node_val(a, cyc)->num == 3 * cli_node_val(a, count)->num);
        snprintf(name, sizeof name, "ROOT/k%d/load", k);
        assert_non_null(find(p, name));
        assert_true(cli_node_val(find(p, name), count)->num == cli_node_val(a, count)->num);
    }
    assert_true(total == n);
    assert_int_equal(p->nspans, 0); /* no timeline asked for */
    assert_string_equal(p->clock_source, "tsc");
    assert_true(p->has_base && p->base_ns == 17);
    cli_profile_destroy(p);
    cli_profile_destroy(q);
    cJSON_Delete(j);
    free(text);
    unlink(path);
    free(path);
}

/* Errors past the first window name the same line and column cJSON gives for the whole
 * text; a file cut in the middle says where it ends. */
static void
test_stream_error_positions(void **state)
{
    (void)state;
    size_t bytes;
    char *path = write_big_trace(20000, &bytes);
    char *text = NULL;
    size_t len = 0;
    CliErr e = {{0}}, w = {{0}};
    assert_int_equal(cli_file_read(path, &text, &len, &e), 0);
    /* a syntax error far into the file: "dur": 10 -> "dur": 1x */
    char *at = strstr(text + len / 2, "\"dur\": 10");
    at[8] = 'x';
    FILE *f = fopen(path, "w");
    fwrite(text, 1, len, f);
    fclose(f);
    assert_null(cli_profile_load_opts(path, 0, &e));
    assert_null(cli_json_parse(text, len, &w));
    char want[600];
    snprintf(want, sizeof want, "%s: %s", path, w.msg);
    assert_string_equal(e.msg, want);
    assert_non_null(strstr(e.msg, ", column "));
    /* cut in the middle of an event */
    at[8] = '0';
    f = fopen(path, "w");
    fwrite(text, 1, len / 2 + 7, f);
    fclose(f);
    assert_null(cli_profile_load_opts(path, 0, &e));
    assert_null(cli_json_parse(text, len / 2 + 7, &w));
    snprintf(want, sizeof want, "%s: %s", path, w.msg);
    assert_string_equal(e.msg, want);
    unlink(path);
    free(path);
    free(text);
}

/* Past CLI_SPANS_KEEP slices the timeline keeps the longest, spread over the file, and
 * counts them all. */
static void
test_stream_timeline_is_decimated(void **state)
{
    (void)state;
    int n = CLI_SPANS_KEEP + 50000;
    CliBuf b = {0};
    cli_buf_puts(&b, "[");
    for (int i = 0; i < n; i++)
        cli_buf_printf(&b, "%s{\"ph\":\"X\",\"cat\":\"program\",\"name\":\"p\",\"tid\":%d,\"ts\":%d,\"dur\":%d}",
                       i ? "," : "", i % 2, i * 10, i == 12345 ? 9 : 1);
    cli_buf_puts(&b, "]");
    CliErr e = {{0}};
    CliProfile *p = cli_profile_load_mem(b.s, b.n, "t", &e);
    assert_non_null(p);
    assert_int_equal(p->nspans, CLI_SPANS_KEEP);
    assert_int_equal(p->spans_total, n);
    int long_one = 0, late = 0;
    for (int i = 0; i < p->nspans; i++) {
        long_one += p->spans[i].dur == 9;
        late += p->spans[i].ts >= n * 10 / 2;
    }
    assert_int_equal(long_one, 1);
    assert_true(late > CLI_SPANS_KEEP / 3 && late < 2 * CLI_SPANS_KEEP / 3); /* spread out */
    for (int i = 1; i < p->nspans; i++) /* (thread, start) order */
        assert_true(p->spans[i - 1].thread < p->spans[i].thread ||
                    (p->spans[i - 1].thread == p->spans[i].thread && p->spans[i - 1].ts <= p->spans[i].ts));
    cli_profile_destroy(p);
    cli_buf_fini(&b);
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
        cmocka_unit_test(test_trace_wrong_types),
        cmocka_unit_test(test_trace_counters_ipc),
        cmocka_unit_test(test_path_separator_is_unambiguous),
        cmocka_unit_test(test_merge_traces),
        cmocka_unit_test(test_merge_rewrites_events_exactly),
        cmocka_unit_test(test_merge_keeps_other_data),
        cmocka_unit_test(test_diff_missing_is_not_a_change),
        cmocka_unit_test(test_metric_parse),
        cmocka_unit_test(test_regex_is_anchored_like_re_match),
        cmocka_unit_test(test_view_filters),
        cmocka_unit_test(test_frame_formats),
        cmocka_unit_test(test_number_formats),
        cmocka_unit_test(test_html_escaping),
        cmocka_unit_test(test_html_page_is_self_contained),
        cmocka_unit_test(test_peaks_measure_and_cache_path),
        cmocka_unit_test(test_hatchet_print_layout),
        cmocka_unit_test(test_merge_hatchets),
        cmocka_unit_test(test_stream_matches_whole_document),
        cmocka_unit_test(test_stream_error_positions),
        cmocka_unit_test(test_stream_timeline_is_decimated),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
