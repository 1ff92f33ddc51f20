/*
 * fuzz_readers.c — libFuzzer harness for proton-cli's readers (tests/viewers/run.sh).
 *
 * Feeds arbitrary bytes to cli_profile_load_mem() (JSON parse, .hatchet and trace
 * readers) and, when a profile comes out, drives what the subcommands do with it: every
 * kind of metric column, filters and sorting, the HTML page and the .hatchet printer.
 * Then two inputs go through diff (node matching, ranking, all three formats) and merge
 * (trace rewriting and tree merging, cli_merge_write()): the bytes before and after the
 * first NUL byte when there is one (run.sh seeds such pairs), else the input and a
 * fixed trace. A merge of valid inputs must read back (only the nesting limits, which
 * merging deepens by one level, may refuse it); anything else aborts.
 * Built with clang-19 -fsanitize=fuzzer,address,undefined; any crash, leak or undefined
 * behaviour fails the run.
 */
#include "cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const specs =
    "time/ms,count,avg_time/us,time/%,gflop/s,gbyte/s,tflop16/s,ipc,cycles,device_type,cpu_time/ns";

/* Second input when the fuzz input is not a pair: names that meet and miss the
 * fixtures', a pid the fixtures also use, a base time and counters. */
static const char fixed_trace[] =
    "{\"baseTimeNanoseconds\": 1764500000000000000, \"traceEvents\": ["
    "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 4242, \"tid\": 0, \"args\": {\"name\": \"p\"}},"
    "{\"ph\": \"X\", \"cat\": \"host_scope\", \"name\": \"step\", \"pid\": 4242, \"tid\": 0, \"ts\": 0,"
    " \"dur\": 50, \"args\": {\"call_stack\": [\"ROOT\", \"step\"]}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"matmul_kernel\", \"pid\": 4242, \"tid\": 0,"
    " \"ts\": 1, \"dur\": 40, \"args\": {\"programs\": 2, \"bytes\": 4096, \"flops32\": 8192,"
    " \"counters\": {\"cycles\": 1000, \"instructions\": 1500},"
    " \"call_stack\": [\"ROOT\", \"step\", \"matmul_kernel\"]}},"
    "{\"ph\": \"X\", \"cat\": \"scope\", \"name\": \"dot\", \"pid\": 4242, \"tid\": 1, \"ts\": 2,"
    " \"dur\": 10, \"args\": {\"kernel\": \"matmul_kernel\"}},"
    "{\"ph\": \"C\", \"name\": \"cycles\", \"pid\": \"gpu\", \"tid\": 0, \"ts\": 1, \"args\": {\"value\": 3}}]}";

static void
one_profile(const char *data, size_t size)
{
    CliErr e;
    CliProfile *p = cli_profile_load_mem(data, size, "fuzz", &e);
    if (!p)
        return;
    CliMetricSpec *m = NULL;
    int nm = cli_metric_parse_list(specs, &m, &e);
    if (nm > 0) {
        int *missing = calloc((size_t)nm, sizeof(int));
        CliView v = {.depth = 100, .threshold = 0.001, .has_threshold = 1};
        cli_regex_init(&v.include, ".*k", &e);
        v.has_include = 1;
        cli_metrics_compute(p, m, nm, missing);
        cli_view_apply(p, &v);
        cli_view_sort(p, &v);
        CliBuf b = {0};
        for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root))
            if (n->flags & CLI_NODE_SHOWN) {
                cli_tree_prefix(&b, n, p->root);
                char *path = cli_node_path_dup(n);
                cli_buf_puts(&b, path);
                free(path);
            }
        cli_buf_fini(&b);
        cli_view_fini(&v);
        free(missing);
    }
    free(m);
    CliBuf html = {0};
    cli_html_render(p, &html);
    cli_buf_fini(&html);
    cli_profile_destroy(p);

    cJSON *j = cli_json_parse(data, size, &e);
    if (j) {
        CliBuf b = {0};
        cli_hatchet_print(&b, j);
        cli_buf_fini(&b);
        cJSON_Delete(j);
    }
}

/* diff BASE NEW in each format, with and without filters. */
static void
diff_pair(const CliMergeIn *in)
{
    static const char *const metrics[] = {"time/ms", "count", "gbyte/s", "ipc"};
    CliErr e;
    CliProfile *a = cli_profile_load_mem(in[0].text, in[0].len, in[0].path, &e);
    CliProfile *b = a ? cli_profile_load_mem(in[1].text, in[1].len, in[1].path, &e) : NULL;
    for (int k = 0; b && k < 4; k++) {
        CliDiffOpts o = {.v.depth = k == 3 ? 3 : 100, .fmt = (CliFormat)(k % 3), .top = k,
                         .min_delta = k == 2 ? 0.5 : 0, .color = k == 0};
        int missing[2];
        if (cli_metric_parse(metrics[k], &o.m, &e) != 0)
            abort();
        if (k == 1) {
            cli_regex_init(&o.v.exclude, "s.*", &e);
            o.v.has_exclude = 1;
            o.v.frame = CLI_FRAME_FUNCTION_LINE;
        }
        CliBuf out = {0};
        cli_diff_render(a, b, &o, &out, missing);
        cli_buf_fini(&out);
        cli_view_fini(&o.v);
    }
    cli_profile_destroy(a);
    cli_profile_destroy(b);
}

/* merge into a trace and into a tree; a merged result must load again. */
static void
merge_pair(const CliMergeIn *in)
{
    CliErr e;
    for (int hatchet = 0; hatchet < 2; hatchet++) {
        CliBuf b = {0};
        if (cli_merge_write(in, 2, hatchet, cli_buf_write, &b, &e) != 0) {
            if (b.n) {
                fprintf(stderr, "merge failed after writing output: %s\n", e.msg);
                abort();
            }
            cli_buf_fini(&b);
            continue;
        }
        CliProfile *p = cli_profile_load_mem(b.s, b.n, "merged", &e);
        if (!p && !strstr(e.msg, "nested") && !strstr(e.msg, "deeper")) {
            fprintf(stderr, "merged output does not load: %s\n", e.msg);
            abort();
        }
        cli_profile_destroy(p);
        cli_buf_fini(&b);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    one_profile(text, size);
    const char *nul = memchr(text, 0, size);
    CliMergeIn in[2] = {{"a/base.json", text, size},
                        {"b/new.json", fixed_trace, sizeof fixed_trace - 1}};
    if (nul) {
        in[0].len = (size_t)(nul - text);
        in[1].text = nul + 1;
        in[1].len = size - in[0].len - 1;
    }
    diff_pair(in);
    merge_pair(in);
    return 0;
}
