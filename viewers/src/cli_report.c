/*
 * cli_report.c — `proton-cli report FILE...`: the call-path tree of each file with the
 * chosen metric columns, as text (proton-viewer's layout: "<v1> <v2> <name>" behind
 * ├─ └─ │ connectors, children sorted by the first metric, largest first), CSV or JSON.
 */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char report_usage[] =
    "usage: proton-cli report [options] FILE...\n"
    "\n"
    "Prints the call-path tree of .hatchet and Chrome-trace .json files with metric\n"
    "columns. Children are sorted by the first metric, largest first.\n"
    "\n"
    "  -m, --metrics M1[,M2...]  columns (default time/ms). Raw names (count, cycles,\n"
    "                            instructions, bytes, any metric in the file; case and\n"
    "                            unit ignored) or derived: time/s|ms|us|ns, time/%,\n"
    "                            avg_time/<unit>, cpu_time/<unit>, <metric>/%, ipc,\n"
    "                            flop[8|16|32|64]/s, gflop<w>/s, tflop<w>/s,\n"
    "                            byte/s, gbyte/s, tbyte/s\n"
    "  -l, --list                list the metrics each file provides and exit\n"
    "  -d, --depth N             show nodes above depth N (ROOT is depth 0; default 100)\n"
    "  -t, --threshold X         hide nodes whose first metric is below X (ancestors of\n"
    "                            shown nodes stay)\n"
    "  -i, --include REGEX       keep only paths through a frame matching REGEX\n"
    "  -e, --exclude REGEX       drop frames matching REGEX with their subtrees\n"
    "                            (REGEX: POSIX extended, anchored at the start like\n"
    "                            Python re.match; \\d \\w \\s accepted)\n"
    "      --sort KEY            metric (default: first metric), name, none (file order)\n"
    "                            or one of the -m metrics\n"
    "  -f, --frame-format F      full | file_function_line | function_line | file_function\n"
    "      --format F            text (default) | csv | json\n"
    "      --print-sorted        after the tree, list nodes sorted by the first metric\n"
    "      --color, --no-color   force colours on or off (default: on a terminal only)\n"
    "      --no-header           no \"# metric [unit] | ...\" line naming the columns\n"
    "      --remarks             under each kernel, the compiler's remarks about it (gather\n"
    "                            fallbacks, unanalysable masks, ...): text and json output\n"
    "  -h, --help                this help\n"
    "\n"
    "Metrics a file lacks print as \"-\" (null in JSON, empty in CSV), never as 0.\n"
    "Exit codes: 0 ok, 1 usage error, 2 unreadable or malformed input.\n";

typedef struct Report {
    CliMetricSpec *m;
    int nm;
    CliView v;
    CliFormat fmt;
    int list, print_sorted;
    int multi;
    int header;       /* the "# columns" line (text output) */
    int remarks;      /* --remarks: compiler remarks under kernel nodes */
    const char *sort_text;
} Report;

/* Pre-order over shown nodes only. */
static CliNode *
next_shown(CliNode *n, const CliNode *top)
{
    if ((n->flags & CLI_NODE_SHOWN) && n->first)
        for (CliNode *c = n->first; c; c = c->next)
            if (c->flags & CLI_NODE_SHOWN)
                return c;
    while (n && n != top) {
        for (CliNode *s = n->next; s; s = s->next)
            if (s->flags & CLI_NODE_SHOWN)
                return s;
        n = n->parent;
    }
    return NULL;
}

static void
value_text(const CliNode *n, int i, char buf[64])
{
    if (n->scol && n->scol[i])
        snprintf(buf, 64, "%s", n->scol[i]);
    else
        cli_fmt_value(buf, n->col[i], 3);
}

/* ---- text ----------------------------------------------------------------------------------- */

/* The unit of metric m's column, as the header names it. */
static void
column_unit(const CliMetricSpec *m, char *buf, size_t len)
{
    const char *slash = strrchr(m->text, '/'), *u = slash ? slash + 1 : "";
    const char *paren = strchr(m->base, '(');
    int cpu = strncmp(m->base, "cpu_time", 8) == 0;
    switch (m->kind) {
    case CLI_MK_TIME:
        snprintf(buf, len, "%s, %s", u, cpu ? "summed over threads" : "wall");
        break;
    case CLI_MK_AVG: snprintf(buf, len, "%s per count%s", u, cpu ? ", summed over threads" : ", wall"); break;
    case CLI_MK_PCT: snprintf(buf, len, "%% of %s", m->base[0] ? m->base : "total"); break;
    case CLI_MK_RATE: snprintf(buf, len, "%s", m->text); break;
    case CLI_MK_IPC: snprintf(buf, len, "instructions per cycle"); break;
    default:
        if (strcmp(m->base, "count") == 0)
            snprintf(buf, len, "launches; scopes: executions");
        else if (strcmp(m->base, "bytes") == 0)
            snprintf(buf, len, "B");
        else if (strncmp(m->base, "flops", 5) == 0)
            snprintf(buf, len, "flop");
        else if (paren)
            snprintf(buf, len, "%.*s", (int)strcspn(paren + 1, ")"), paren + 1);
        else
            snprintf(buf, len, "%s", "as in the file");
        break;
    }
}

/* "# time/ms [ms, wall] | count [launches; scopes: executions] | name": what each
 * column holds. */
static void
render_header(const Report *r, CliBuf *b)
{
    char unit[128];
    cli_buf_puts(b, "# ");
    for (int i = 0; i < r->nm; i++) {
        column_unit(&r->m[i], unit, sizeof unit);
        cli_buf_printf(b, "%s [%s] | ", r->m[i].text, unit);
    }
    cli_buf_puts(b, "name\n");
}

/* --remarks: node n's remarks, one "  remark: file:line:col: message" line each, indented
 * to the node's depth; returns how many. */
static int
render_remarks(const CliProfile *p, const CliNode *n, CliBuf *b)
{
    const char *s = cli_node_remarks(p, n);
    int k = 0;
    while (s && *s) {
        size_t len = strcspn(s, "\n");
        if (len)
            cli_buf_printf(b, "%*s  remark: %.*s\n", 2 * n->depth, "", (int)len, s), k++;
        s += len + (s[len] == '\n');
    }
    return k;
}

static void
render_text(CliProfile *p, Report *r, const int *missing, CliBuf *b)
{
    double lo = INFINITY, hi = -INFINITY;
    int nremarks = 0;
    char val[64], name[4096];
    for (CliNode *n = p->root; n; n = next_shown(n, p->root))
        if (!isnan(n->col[0])) {
            lo = n->col[0] < lo ? n->col[0] : lo;
            hi = n->col[0] > hi ? n->col[0] : hi;
        }
    if (r->multi)
        cli_buf_printf(b, "== %s ==\n", p->path);
    if (r->header)
        render_header(r, b);
    for (CliNode *n = p->root; n; n = next_shown(n, p->root)) {
        cli_tree_prefix(b, n, p->root);
        for (int i = 0; i < r->nm; i++) {
            const char *color = !r->v.color ? ""
                                : n->scol && n->scol[i] ? (i ? "\033[2m" : "")
                                : i ? "\033[2m" : cli_heat_color(n->col[0], lo, hi);
            value_text(n, i, val);
            cli_buf_puts(b, color);
            cli_buf_puts(b, val);
            if (*color)
                cli_buf_puts(b, "\033[0m");
            cli_buf_putc(b, ' ');
        }
        cli_frame_format(n->name, r->v.frame, name, sizeof name);
        cli_buf_puts(b, name);
        cli_buf_putc(b, '\n');
        if (r->remarks)
            nremarks += render_remarks(p, n, b);
    }
    if (r->remarks && !nremarks)
        cli_buf_printf(b, "note: %s has no compiler remarks for the nodes shown\n", p->path);
    for (int i = 0; i < r->nm; i++)
        if (missing[i])
            cli_buf_printf(b, "note: %s has no data for metric '%s' (shown as -)\n", p->path,
                           r->m[i].text);
}

static int
cmp_sorted(const void *a, const void *b)
{
    const CliNode *x = *(CliNode *const *)a, *y = *(CliNode *const *)b;
    double u = x->col[0], v = y->col[0];
    if (isnan(u) != isnan(v))
        return isnan(u) ? 1 : -1;
    if (!isnan(u) && u != v)
        return u > v ? -1 : 1;
    return x->seq - y->seq;
}

/* --print-sorted: every shown node but ROOT, by the first metric. */
static void
render_sorted(CliProfile *p, Report *r, CliBuf *b)
{
    int k = 0;
    CliNode **v = cli_xmalloc(sizeof(CliNode *) * (size_t)p->nnodes);
    char name[4096], val[64];
    for (CliNode *n = next_shown(p->root, p->root); n; n = next_shown(n, p->root))
        v[k++] = n;
    qsort(v, (size_t)k, sizeof *v, cmp_sorted);
    cli_buf_printf(b, "Sorted nodes by metric %s\n", r->m[0].text);
    for (int i = 0; i < k; i++) {
        cli_frame_format(v[i]->name, r->v.frame, name, sizeof name);
        if (strlen(name) > 100)
            memcpy(name + 100, "...", 4);
        value_text(v[i], 0, val);
        cli_buf_printf(b, "%-105s %s\n", name, val);
    }
    free(v);
}

/* ---- csv ------------------------------------------------------------------------------------- */

static void
csv_field(CliBuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        cli_buf_puts(b, s);
        return;
    }
    cli_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            cli_buf_putc(b, '"');
        cli_buf_putc(b, *s);
    }
    cli_buf_putc(b, '"');
}

static void
render_csv(CliProfile *p, Report *r, int first_file, CliBuf *b)
{
    char name[4096], num[32];
    if (first_file) {
        cli_buf_puts(b, "file,path,name,depth");
        for (int i = 0; i < r->nm; i++) {
            cli_buf_putc(b, ',');
            csv_field(b, r->m[i].text);
        }
        cli_buf_puts(b, "\r\n");
    }
    for (CliNode *n = p->root; n; n = next_shown(n, p->root)) {
        char *path = cli_node_path_dup(n);
        csv_field(b, p->path);
        cli_buf_putc(b, ',');
        csv_field(b, path);
        cli_buf_putc(b, ',');
        csv_field(b, cli_frame_format(n->name, r->v.frame, name, sizeof name));
        cli_buf_printf(b, ",%d", n->depth);
        for (int i = 0; i < r->nm; i++) {
            cli_buf_putc(b, ',');
            if (n->scol && n->scol[i])
                csv_field(b, n->scol[i]);
            else if (!isnan(n->col[i])) {
                cli_fmt_double(num, cli_round15(n->col[i]));
                cli_buf_puts(b, num);
            }
        }
        cli_buf_puts(b, "\r\n");
        free(path);
    }
}

/* ---- json ------------------------------------------------------------------------------------ */

static cJSON *
json_node(const CliProfile *p, CliNode *n, Report *r)
{
    char name[4096];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", cli_frame_format(n->name, r->v.frame, name, sizeof name));
    cJSON *vals = cJSON_AddArrayToObject(o, "values");
    for (int i = 0; i < r->nm; i++) {
        if (n->scol && n->scol[i])
            cJSON_AddItemToArray(vals, cJSON_CreateString(n->scol[i]));
        else if (isnan(n->col[i]))
            cJSON_AddItemToArray(vals, cJSON_CreateNull());
        else
            cJSON_AddItemToArray(vals, cJSON_CreateNumber(cli_round15(n->col[i])));
    }
    cJSON *kids = cJSON_AddArrayToObject(o, "children");
    for (CliNode *c = n->first; c; c = c->next)
        if (c->flags & CLI_NODE_SHOWN)
            cJSON_AddItemToArray(kids, json_node(p, c, r)); /* depth <= CLI_MAX_DEPTH */
    const char *rm = r->remarks ? cli_node_remarks(p, n) : NULL;
    if (rm) {
        cJSON *a = cJSON_AddArrayToObject(o, "remarks");
        while (*rm) {
            size_t len = strcspn(rm, "\n");
            if (len) {
                char *one = cli_xmalloc(len + 1);
                memcpy(one, rm, len);
                one[len] = 0;
                cJSON_AddItemToArray(a, cJSON_CreateString(one));
                free(one);
            }
            rm += len + (rm[len] == '\n');
        }
    }
    return o;
}

static cJSON *
render_json(CliProfile *p, Report *r, const int *missing)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", p->path);
    cJSON_AddStringToObject(o, "kind", p->kind == CLI_KIND_TRACE ? "trace" : "hatchet");
    cJSON *ms = cJSON_AddArrayToObject(o, "metrics");
    cJSON *miss = cJSON_AddArrayToObject(o, "missing");
    for (int i = 0; i < r->nm; i++) {
        cJSON_AddItemToArray(ms, cJSON_CreateString(r->m[i].text));
        if (missing[i])
            cJSON_AddItemToArray(miss, cJSON_CreateString(r->m[i].text));
    }
    cJSON_AddItemToObject(o, "tree", json_node(p, p->root, r));
    return o;
}

/* ---- main ------------------------------------------------------------------------------------- */

/* Default column: time/ms when the first file has a time, else its first summed metric. */
static const char *
default_metric(const CliProfile *p, char *buf, size_t len)
{
    if (cli_metric_resolve(p, "time") >= 0)
        return "time/ms";
    for (int i = 0; i < p->nmetrics; i++)
        if (p->metrics[i].hinted && p->metrics[i].numeric && strlen(p->metrics[i].name) < 60) {
            snprintf(buf, len, "%s", p->metrics[i].name);
            return buf;
        }
    return "time/ms";
}

static int
parse_args(Report *r, int argc, char **argv, const char **metrics)
{
    enum { O_SORT = 256, O_FORMAT, O_COLOR, O_NOCOLOR, O_SORTED, O_NOHEADER, O_REMARKS };
    static const struct option opts[] = {
        {"metrics", required_argument, 0, 'm'}, {"list", no_argument, 0, 'l'},
        {"depth", required_argument, 0, 'd'},   {"threshold", required_argument, 0, 't'},
        {"include", required_argument, 0, 'i'}, {"exclude", required_argument, 0, 'e'},
        {"sort", required_argument, 0, O_SORT}, {"frame-format", required_argument, 0, 'f'},
        {"format", required_argument, 0, O_FORMAT}, {"color", no_argument, 0, O_COLOR},
        {"colour", no_argument, 0, O_COLOR},    {"no-color", no_argument, 0, O_NOCOLOR},
        {"print-sorted", no_argument, 0, O_SORTED}, {"help", no_argument, 0, 'h'},
        {"no-header", no_argument, 0, O_NOHEADER}, {"remarks", no_argument, 0, O_REMARKS},
        {0, 0, 0, 0}};
    CliErr e;
    long d;
    int c, color = -1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:ld:t:i:e:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': *metrics = optarg; break;
        case 'l': r->list = 1; break;
        case 'd':
            if (cli_parse_int(optarg, 0, 1000000, &d) != 0)
                return cli_error("report", "-d wants a depth >= 0, got '%s'", optarg), -1;
            r->v.depth = (int)d;
            break;
        case 't':
            if (cli_parse_double(optarg, &r->v.threshold) != 0)
                return cli_error("report", "-t wants a number, got '%s'", optarg), -1;
            r->v.has_threshold = 1;
            break;
        case 'i':
        case 'e': {
            CliRegex *re = c == 'i' ? &r->v.include : &r->v.exclude;
            cli_regex_fini(re);
            if (cli_regex_init(re, optarg, &e) != 0)
                return cli_error("report", "%s", e.msg), -1;
            *(c == 'i' ? &r->v.has_include : &r->v.has_exclude) = 1;
            break;
        }
        case 'f':
            if (cli_frame_parse(optarg, &r->v.frame) != 0)
                return cli_error("report", "unknown frame format '%s' (full, file_function_line, "
                                 "function_line, file_function)", optarg), -1;
            break;
        case O_SORT: r->sort_text = optarg; break;
        case O_FORMAT:
            if (strcmp(optarg, "text") == 0) r->fmt = CLI_FMT_TEXT;
            else if (strcmp(optarg, "csv") == 0) r->fmt = CLI_FMT_CSV;
            else if (strcmp(optarg, "json") == 0) r->fmt = CLI_FMT_JSON;
            else return cli_error("report", "unknown format '%s' (text, csv, json)", optarg), -1;
            break;
        case O_COLOR: color = 1; break;
        case O_NOCOLOR: color = 0; break;
        case O_SORTED: r->print_sorted = 1; break;
        case O_NOHEADER: r->header = 0; break;
        case O_REMARKS: r->remarks = 1; break;
        case 'h': fputs(report_usage, stdout); return 1;
        case ':': return cli_error("report", "option '%s' needs a value", argv[optind - 1]), -1;
        default: return cli_error("report", "unknown option '%s' (see --help)", argv[optind - 1]), -1;
        }
    }
    r->v.color = r->fmt == CLI_FMT_TEXT && cli_use_color(stdout, color);
    return 0;
}

/* The whole subcommand in order (options, load every file, compute, filter, sort, render);
 * longer than 60 lines on purpose so the flow reads top to bottom. */
int
cli_report_main(int argc, char **argv)
{
    Report r = {.header = 1};
    CliErr e;
    CliBuf out = {0};
    const char *metrics = NULL;
    char defbuf[64];
    int rc = CLI_EXIT_USAGE, nfiles = 0;
    CliProfile **ps = NULL;
    cJSON *jall = NULL;
    r.v.depth = 100;
    int pr = parse_args(&r, argc, argv, &metrics);
    if (pr != 0) {
        rc = pr > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        goto out;
    }
    nfiles = argc - optind;
    if (nfiles <= 0) {
        cli_error("report", "no input file (see --help)");
        goto out;
    }
    if (metrics && (r.nm = cli_metric_parse_list(metrics, &r.m, &e)) < 0) {
        cli_error("report", "%s", e.msg);
        goto out;
    }
    ps = cli_xcalloc((size_t)nfiles, sizeof *ps);
    for (int i = 0; i < nfiles; i++)
        if (!(ps[i] = cli_profile_load_opts(argv[optind + i], 0, &e))) {
            cli_error("report", "%s", e.msg);
            rc = CLI_EXIT_INPUT;
            goto out;
        }
    r.multi = nfiles > 1;
    if (r.list) {
        for (int i = 0; i < nfiles; i++) {
            if (r.multi)
                printf("%s== %s ==\n", i ? "\n" : "", ps[i]->path);
            cli_metrics_list(ps[i], stdout);
        }
        rc = CLI_EXIT_OK;
        goto out;
    }
    if (!r.m && (r.nm = cli_metric_parse_list(default_metric(ps[0], defbuf, sizeof defbuf),
                                              &r.m, &e)) < 0) {
        cli_error("report", "%s", e.msg);
        goto out;
    }
    if (r.sort_text && cli_sort_parse(r.sort_text, r.m, r.nm, &r.v) != 0) {
        cli_error("report", "unknown sort key '%s' (metric, name, none or a -m metric)",
                  r.sort_text);
        goto out;
    }
    if (r.fmt == CLI_FMT_JSON)
        jall = cJSON_CreateArray();
    for (int i = 0; i < nfiles; i++) {
        int *missing = cli_xcalloc((size_t)r.nm, sizeof(int));
        cli_metrics_compute(ps[i], r.m, r.nm, missing);
        cli_view_apply(ps[i], &r.v);
        cli_view_sort(ps[i], &r.v);
        if (r.fmt == CLI_FMT_TEXT) {
            if (i > 0)
                cli_buf_putc(&out, '\n');
            render_text(ps[i], &r, missing, &out);
            if (r.print_sorted)
                render_sorted(ps[i], &r, &out);
        } else if (r.fmt == CLI_FMT_CSV) {
            render_csv(ps[i], &r, i == 0, &out);
            for (int k = 0; k < r.nm; k++)
                if (missing[k])
                    cli_error("report", "note: %s has no data for metric '%s'", ps[i]->path,
                              r.m[k].text);
        } else {
            cJSON_AddItemToArray(jall, render_json(ps[i], &r, missing));
        }
        free(missing);
    }
    if (jall) {
        cli_json_print(&out, jall);
    }
    if (out.n)
        fwrite(out.s, 1, out.n, stdout);
    rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_INPUT;
out:
    cJSON_Delete(jall);
    for (int i = 0; ps && i < nfiles; i++)
        cli_profile_destroy(ps[i]);
    free(ps);
    free(r.m);
    cli_view_fini(&r.v);
    cli_buf_fini(&out);
    return rc;
}
