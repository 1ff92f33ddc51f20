/*
 * fuzz_readers.c — libFuzzer harness for proton-cli's readers (tests/viewers/run.sh).
 *
 * Feeds arbitrary bytes to cli_profile_load_mem() (JSON parse, .hatchet and trace
 * readers) and, when a profile comes out, drives what the subcommands do with it: every
 * kind of metric column, filters and sorting, the HTML page and the .hatchet printer.
 * Built with clang-19 -fsanitize=fuzzer,address,undefined; any crash, leak or undefined
 * behaviour fails the run.
 */
#include "cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const specs =
    "time/ms,count,avg_time/us,time/%,gflop/s,gbyte/s,tflop16/s,ipc,cycles,device_type,cpu_time/ns";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    CliErr e;
    CliProfile *p = cli_profile_load_mem((const char *)data, size, "fuzz", &e);
    if (!p)
        return 0;
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
            if (n->flags & CLI_NODE_SHOWN)
                cli_tree_prefix(&b, n, p->root);
        cli_buf_fini(&b);
        cli_view_fini(&v);
        free(missing);
    }
    free(m);
    CliBuf html = {0};
    cli_html_render(p, &html);
    cli_buf_fini(&html);
    cli_profile_destroy(p);

    cJSON *j = cli_json_parse((const char *)data, size, &e);
    if (j) {
        CliBuf b = {0};
        cli_hatchet_print(&b, j);
        cli_buf_fini(&b);
        cJSON_Delete(j);
    }
    return 0;
}
