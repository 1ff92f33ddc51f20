/*
 * cli_html.c — `proton-cli html FILE -o report.html`: one self-contained page (inline
 * CSS and JS from viewers/assets/, no network) with a summary header, an icicle/flame
 * view of the call tree, a sortable table of kernels and scopes, a per-thread timeline
 * (traces) and a roofline chart (when flops and bytes are known).
 *
 * The table is rendered here as plain HTML, so the page degrades to it without
 * JavaScript; the script only adds sorting and draws the charts from a JSON block.
 * Everything from the input is escaped: element text and attributes through
 * cli_html_escape(), the JSON block through cli_json_script_escape() (no "</script>",
 * "<!--" or U+2028 can end or confuse the script element).
 */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_html_assets.h"

enum { TABLE_MAX_ROWS = 5000, TIMELINE_MAX_SPANS = 20000 };

/* Columns computed for the page, in this order. */
static const char *const page_metrics[] = {"time/ns", "count", "avg_time/ns", "gflop/s",
                                           "gbyte/s", "flop/s", "byte/s"};
enum { C_TIME, C_COUNT, C_AVG, C_GFLOPS, C_GBS, C_FLOPS_RATE, C_BYTES_RATE, C_NCOLS };

/* ---- escaping ------------------------------------------------------------------------------- */

void
cli_html_escape(CliBuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': cli_buf_puts(b, "&amp;"); break;
        case '<': cli_buf_puts(b, "&lt;"); break;
        case '>': cli_buf_puts(b, "&gt;"); break;
        case '"': cli_buf_puts(b, "&quot;"); break;
        case '\'': cli_buf_puts(b, "&#39;"); break;
        default: cli_buf_putc(b, *s);
        }
    }
}

/* JSON text is escaped character by character: '<', '>' and '&' only occur inside
 * strings there, where \u003c etc. mean the same to JSON.parse. */
void
cli_json_script_escape(CliBuf *b, const char *json)
{
    for (const unsigned char *c = (const unsigned char *)json; *c; c++) {
        if (*c == '<')
            cli_buf_puts(b, "\\u003c");
        else if (*c == '>')
            cli_buf_puts(b, "\\u003e");
        else if (*c == '&')
            cli_buf_puts(b, "\\u0026");
        else if (c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9)) {
            cli_buf_puts(b, c[2] == 0xa8 ? "\\u2028" : "\\u2029");
            c += 2;
        } else
            cli_buf_putc(b, (char)*c);
    }
}

/* ---- data ----------------------------------------------------------------------------------- */

static const char *
node_kind(const CliNode *n)
{
    if (!n->parent)
        return "root";
    if (n->flags & CLI_NODE_KERNEL)
        return "kernel";
    if (n->flags & CLI_NODE_INKERNEL)
        return "scope";
    return "host";
}

static void
add_num(cJSON *o, const char *key, double v)
{
    if (!isnan(v))
        cJSON_AddNumberToObject(o, key, v);
}

static cJSON *
tree_json(const CliNode *n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "n", n->name);
    cJSON_AddStringToObject(o, "k", node_kind(n));
    add_num(o, "t", n->col[C_TIME]);
    add_num(o, "c", n->col[C_COUNT]);
    add_num(o, "f", n->col[C_GFLOPS]);
    add_num(o, "b", n->col[C_GBS]);
    if (n->first) {
        cJSON *ch = cJSON_AddArrayToObject(o, "ch");
        for (const CliNode *c = n->first; c; c = c->next)
            cJSON_AddItemToArray(ch, tree_json(c)); /* depth <= CLI_MAX_DEPTH */
    }
    return o;
}

/* Outermost first, then longest: launches and host scopes survive the cap. */
static int
cmp_span_keep(const void *a, const void *b)
{
    const CliSpan *x = *(CliSpan *const *)a, *y = *(CliSpan *const *)b;
    if (x->depth != y->depth)
        return x->depth - y->depth;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return (x > y) - (x < y);
}

/* Threads with their slices; past TIMELINE_MAX_SPANS only the outermost and longest stay. */
static cJSON *
timeline_json(const CliProfile *p)
{
    cJSON *o = cJSON_CreateObject();
    int n = p->nspans, keep = n < TIMELINE_MAX_SPANS ? n : TIMELINE_MAX_SPANS;
    const CliSpan **v = cli_xmalloc(sizeof(CliSpan *) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        v[i] = &p->spans[i];
    if (keep < n)
        qsort(v, (size_t)n, sizeof *v, cmp_span_keep);
    double t0 = INFINITY, t1 = -INFINITY;
    cJSON **rows = cli_xcalloc((size_t)(p->nthreads ? p->nthreads : 1), sizeof(cJSON *));
    cJSON *threads = cJSON_AddArrayToObject(o, "threads");
    for (int t = 0; t < p->nthreads; t++) {
        const CliThread *th = &p->threads[t];
        cJSON *tj = cJSON_CreateObject();
        char label[512];
        snprintf(label, sizeof label, "%s", th->name ? th->name : "thread");
        if (!th->name)
            snprintf(label, sizeof label, "tid %s", th->tid);
        cJSON_AddStringToObject(tj, "name", label);
        cJSON_AddStringToObject(tj, "proc", th->pname ? th->pname : th->pid);
        cJSON_AddNumberToObject(tj, "sort", th->sort);
        rows[t] = cJSON_AddArrayToObject(tj, "s");
        cJSON_AddItemToArray(threads, tj);
    }
    for (int i = 0; i < keep; i++) {
        const CliSpan *s = v[i];
        cJSON *a = cJSON_CreateArray();
        cJSON_AddItemToArray(a, cJSON_CreateNumber(s->ts));
        cJSON_AddItemToArray(a, cJSON_CreateNumber(s->dur));
        cJSON_AddItemToArray(a, cJSON_CreateNumber(s->depth));
        cJSON_AddItemToArray(a, cJSON_CreateNumber(s->cat));
        cJSON_AddItemToArray(a, cJSON_CreateString(s->name));
        cJSON_AddItemToArray(rows[s->thread], a);
        t0 = s->ts < t0 ? s->ts : t0;
        t1 = s->ts + s->dur > t1 ? s->ts + s->dur : t1;
    }
    cJSON_AddNumberToObject(o, "t0", isfinite(t0) ? t0 : 0);
    cJSON_AddNumberToObject(o, "t1", isfinite(t1) ? t1 : 0);
    double total = p->spans_total > n ? (double)p->spans_total : n;
    cJSON_AddNumberToObject(o, "dropped", total - keep);
    cJSON_AddNumberToObject(o, "total", total);
    free(rows);
    free(v);
    return o;
}

/* Upstream's specs.py peaks for a CUDA device entry (FLOP/s at 'width' bits, bytes/s). */
static int
cuda_peaks(const cJSON *d, int width, double *flops, double *bw)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(d, "arch");
    double sms = 0, clock = 0, bus = 0, mem = 0;
    const cJSON *x;
    if ((x = cJSON_GetObjectItemCaseSensitive(d, "num_sms")) && cJSON_IsNumber(x)) sms = x->valuedouble;
    if ((x = cJSON_GetObjectItemCaseSensitive(d, "clock_rate")) && cJSON_IsNumber(x)) clock = x->valuedouble;
    if ((x = cJSON_GetObjectItemCaseSensitive(d, "bus_width")) && cJSON_IsNumber(x)) bus = x->valuedouble;
    if ((x = cJSON_GetObjectItemCaseSensitive(d, "memory_clock_rate")) && cJSON_IsNumber(x)) mem = x->valuedouble;
    if (!cJSON_IsString(arch))
        return -1;
    double w = width / 8.0;
    const char *a = arch->valuestring;
    if (strcmp(a, "80") == 0)
        *flops = 624e12 / w;
    else if (strcmp(a, "89") == 0)
        *flops = 330.3e12 / w;
    else if (strcmp(a, "90") == 0)
        *flops = (sms / 114 * clock / 1.755e6 * 1513) * 1e12 / w;
    else if (strcmp(a, "100") == 0)
        *flops = sms * 16384 * (clock / 1e3) * 1e6 / w;
    else
        return -1;
    *bw = 2 * bus * mem * 1e3 / 8;
    return *flops > 0 && *bw > 0 ? 0 : -1;
}

/* Where the page's roofs come from (cli_html_main): machine 1 resolves this machine's (or
 * the profile CPU's) measured roofs through cli_roof_peaks_for(), from peaks_file when set. */
typedef struct RoofOpts {
    int machine;
    const char *peaks_file;
} RoofOpts;

/* Points for every kernel and scope with flops, bytes and time. The roofs: the device's
 * peaks when device info says what it is (CUDA), else the measured roofs of the machine
 * (RoofOpts), else the highest values measured in the data, and then "measured" is true
 * so the chart labels the roof "highest measured", not "peak". Sets *err (and returns
 * NULL) when the roofs named by the options cannot be read. */
static cJSON *
roofline_json(const CliProfile *p, const RoofOpts *ro, CliErr *e, int *err)
{
    cJSON *o = cJSON_CreateObject(), *pts = cJSON_AddArrayToObject(o, "points");
    double maxf = 0, maxb = 0;
    int npts = 0;
    *err = 0;
    for (CliNode *n = p->root->first ? p->root : NULL; n; n = cli_node_next_preorder(n, p->root)) {
        double f = n->col[C_FLOPS_RATE], b = n->col[C_BYTES_RATE];
        if (!(n->flags & CLI_NODE_INKERNEL) || isnan(f) || isnan(b) || b <= 0 || f <= 0)
            continue;
        char *path = cli_node_path_dup(n);
        cJSON *pt = cJSON_CreateObject();
        cJSON_AddStringToObject(pt, "n", n->name);
        cJSON_AddStringToObject(pt, "p", path);
        cJSON_AddNumberToObject(pt, "ai", f / b);
        cJSON_AddNumberToObject(pt, "g", f / 1e9);
        add_num(pt, "t", n->col[C_TIME]);
        cJSON_AddItemToArray(pts, pt);
        free(path);
        maxf = f > maxf ? f : maxf;
        maxb = b > maxb ? b : maxb;
        npts++;
    }
    if (npts == 0) {
        cJSON_Delete(o);
        return NULL;
    }
    double pf = 0, pb = 0;
    const char *src = NULL;
    char label[8192], note[1024] = "";
    const cJSON *cuda = p->device_info ? cJSON_GetObjectItemCaseSensitive(p->device_info, "CUDA") : NULL;
    if (cuda && cuda->child) {
        int width = cli_profile_metric_find(p, "flops16") >= 0 ? 16
                    : cli_profile_metric_find(p, "flops8") >= 0 ? 8
                    : cli_profile_metric_find(p, "flops64") >= 0 ? 64 : 32;
        if (cuda_peaks(cuda->child, width, &pf, &pb) == 0) {
            snprintf(label, sizeof label, "peaks of CUDA device %s (fp%d) from device info",
                     cuda->child->string, width);
            src = label;
        }
    }
    CliPeaks pk;
    int r = !src && ro && ro->machine ? cli_roof_peaks_for(p, ro->peaks_file, 0, &pk, note, sizeof note, e) : 0;
    if (r < 0) {
        cJSON_Delete(o);
        *err = 1;
        return NULL;
    }
    if (r > 0) {
        int width, t = cli_roof_type(p, p->root, &width);
        const char *ty = width == 16 && pk.fma[t] > 0 ? "bf16" : t == 1 ? "fp64" : "fp32";
        pf = cli_roof_peak_gflops(&pk, t) * 1e9;
        pb = pk.read_gbps * 1e9;
        snprintf(label, sizeof label, "%s FMA peak and streaming read bandwidth measured on %s "
                 "(%d threads) at %s, from %s%s%s", ty, pk.cpu_model, pk.threads, pk.measured_at,
                 pk.path, note[0] ? "; " : "", note);
        src = label;
        cJSON_AddStringToObject(o, "type", ty);
    }
    if (!src) {
        pf = maxf;
        pb = maxb;
        snprintf(label, sizeof label, "the highest GFLOP/s and GB/s measured in this profile, not "
                 "a machine peak (%s)", note[0] ? note : "the device info gives none");
        src = label;
        r = -1;
    }
    cJSON_AddNumberToObject(o, "peakG", pf / 1e9);
    cJSON_AddNumberToObject(o, "peakBW", pb / 1e9);
    cJSON_AddBoolToObject(o, "measured", r < 0);
    cJSON_AddStringToObject(o, "source", src);
    return o;
}

/* ---- page ----------------------------------------------------------------------------------- */

static void
card(CliBuf *b, const char *key, const char *val)
{
    cli_buf_puts(b, "<div class=\"card\"><div class=\"k\">");
    cli_html_escape(b, key);
    cli_buf_puts(b, "</div><div class=\"v\" title=\"");
    cli_html_escape(b, val);
    cli_buf_puts(b, "\">");
    cli_html_escape(b, val);
    cli_buf_puts(b, "</div></div>\n");
}

static void
fmt_time(char *buf, size_t len, double ns)
{
    if (isnan(ns))
        snprintf(buf, len, "-");
    else if (ns >= 1e9)
        snprintf(buf, len, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, len, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, len, "%.3f us", ns / 1e3);
    else
        snprintf(buf, len, "%.0f ns", ns);
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct kernel names: a kernel called from several places is one kernel with
 * several call-path nodes (the console table counts the same way, by name and grid). */
static int
count_kernels(const CliProfile *p, int nodes)
{
    const char **names = cli_xmalloc(sizeof(char *) * (size_t)(nodes ? nodes : 1));
    int n = 0, distinct = 0;
    for (CliNode *x = p->root; x; x = cli_node_next_preorder(x, p->root))
        if (x->flags & CLI_NODE_KERNEL)
            names[n++] = x->name;
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++)
        distinct += i == 0 || strcmp(names[i], names[i - 1]) != 0;
    free(names);
    return distinct;
}

static void
header(CliBuf *b, const CliProfile *p)
{
    char v[128];
    double launches = 0;
    int knodes = 0, kernels;
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root))
        if (n->flags & CLI_NODE_KERNEL) {
            knodes++;
            launches += isnan(n->col[C_COUNT]) ? 0 : n->col[C_COUNT];
        }
    kernels = count_kernels(p, knodes);
    cli_buf_puts(b, "<header>\n<h1>Proton report</h1>\n<div class=\"file\">");
    cli_html_escape(b, p->path);
    cli_buf_printf(b, " &middot; %s</div>\n<div class=\"cards\">\n",
                   p->kind == CLI_KIND_TRACE ? "Chrome trace" : "hatchet tree");
    snprintf(v, sizeof v, "%d", kernels);
    card(b, "Kernels", v);
    snprintf(v, sizeof v, "%.0f", launches);
    card(b, "Launches", v);
    fmt_time(v, sizeof v, p->root->col[C_TIME]);
    card(b, "Total time", v);
    int threads = p->nthreads_max;
    if (p->kind == CLI_KIND_TRACE && p->nthreads > threads)
        threads = p->nthreads;
    snprintf(v, sizeof v, "%d", threads);
    card(b, "Threads", threads ? v : "unknown");
    card(b, "Counters", p->counter_source ? p->counter_source : "unknown");
    card(b, "Clock", p->clock_source ? p->clock_source : "unknown");
    const char *dev = p->cpu_model ? p->cpu_model : p->device_type ? p->device_type : "unknown";
    card(b, "Device", dev);
    if (p->dropped_events > 0) {
        snprintf(v, sizeof v, "%ld", p->dropped_events);
        card(b, "Dropped events", v);
    }
    cli_buf_puts(b, "</div>\n</header>\n");
}

static void
cell_num(CliBuf *b, double v, const char *fmt, double scale)
{
    char num[32], txt[64];
    if (isnan(v)) {
        cli_buf_puts(b, "<td class=\"num missing\" data-v=\"\">-</td>");
        return;
    }
    cli_fmt_double(num, v);
    snprintf(txt, sizeof txt, fmt, v * scale);
    cli_buf_printf(b, "<td class=\"num\" data-v=\"%s\">%s</td>", num, txt);
}

static int
cmp_time_desc(const CliNode *a, const CliNode *b, void *user)
{
    double x = a->col[C_TIME], y = b->col[C_TIME];
    if (isnan(x) != isnan(y))
        return isnan(x) ? 1 : -1;
    if (!isnan(x) && x != y)
        return x > y ? -1 : 1;
    return 0;
}

/* Server-side table: every node but ROOT in tree order (children by time). */
static void
table(CliBuf *b, const CliProfile *p)
{
    double total = p->root->col[C_TIME];
    int rows = 0;
    /* one time unit for the column, chosen from the total */
    const char *unit = "ms";
    double scale = 1e-6;
    if (!isnan(total) && total < 1e6) {
        unit = "us";
        scale = 1e-3;
    } else if (!isnan(total) && total >= 1e10) {
        unit = "s";
        scale = 1e-9;
    }
    cli_buf_puts(b, "<section id=\"table-section\">\n<h2>Kernels and scopes</h2>\n"
                    "<p class=\"hint\">Click a column header to sort. Times are inclusive "
                    "(a kernel's time covers its in-kernel scopes; scope times add up over "
                    "all program instances).</p>\n<div class=\"tablewrap\">"
                    "<table id=\"nodes\">\n<thead><tr><th data-type=\"text\">Name</th>"
                    "<th data-type=\"text\">Kind</th><th>Count</th>");
    cli_buf_printf(b, "<th>Time (%s)</th><th>%% of total</th><th>Avg (us)</th><th>GFLOP/s</th>"
                      "<th>GB/s</th></tr></thead>\n<tbody>\n", unit);
    for (CliNode *n = p->root->first ? p->root->first : NULL; n;
         n = cli_node_next_preorder(n, p->root)) {
        if (++rows > TABLE_MAX_ROWS)
            break;
        char *path = cli_node_path_dup(n);
        cli_buf_printf(b, "<tr class=\"%s\"><td class=\"name\" title=\"", node_kind(n));
        cli_html_escape(b, path);
        cli_buf_printf(b, "\" data-v=\"%d\"><span style=\"padding-left:%dpx\">", n->seq,
                       (n->depth - 1) * 14);
        cli_html_escape(b, n->name);
        cli_buf_printf(b, "</span></td><td>%s</td>", node_kind(n));
        cell_num(b, n->col[C_COUNT], "%.0f", 1);
        cell_num(b, n->col[C_TIME], "%.3f", scale);
        cell_num(b, total > 0 ? n->col[C_TIME] / total * 100 : NAN, "%.1f", 1);
        cell_num(b, n->col[C_AVG], "%.3f", 1e-3);
        cell_num(b, n->col[C_GFLOPS], "%.2f", 1);
        cell_num(b, n->col[C_GBS], "%.2f", 1);
        cli_buf_puts(b, "</tr>\n");
        free(path);
    }
    cli_buf_puts(b, "</tbody>\n</table></div>\n");
    if (rows > TABLE_MAX_ROWS)
        cli_buf_printf(b, "<p class=\"hint\">First %d of %d nodes shown.</p>\n", TABLE_MAX_ROWS,
                       p->nnodes - 1);
    cli_buf_puts(b, "</section>\n");
}

/* Server-side list of the compiler remarks of each kernel node (nothing when none). */
static int
remarks_section(CliBuf *b, const CliProfile *p, int write)
{
    int k = 0;
    for (CliNode *n = p->root->first; n; n = cli_node_next_preorder(n, p->root)) {
        const char *rm = cli_node_remarks(p, n);
        if (!rm)
            continue;
        if (!write) {
            k++;
            continue;
        }
        if (!k++)
            cli_buf_puts(b, "<section id=\"remarks-section\">\n<h2>Compiler remarks</h2>\n"
                            "<p class=\"hint\">What the compiler could not lower the fast way, "
                            "per kernel (file:line:column of the kernel source).</p>\n<ul class=\"remarks\">\n");
        char *path = cli_node_path_dup(n);
        cli_buf_puts(b, "<li><b title=\"");
        cli_html_escape(b, path);
        cli_buf_puts(b, "\">");
        cli_html_escape(b, n->name);
        cli_buf_puts(b, "</b><pre>");
        cli_html_escape(b, rm);
        cli_buf_puts(b, "</pre></li>\n");
        free(path);
    }
    if (write && k)
        cli_buf_puts(b, "</ul>\n</section>\n");
    return k;
}

static void
section(CliBuf *b, const char *id, const char *title, const char *hint)
{
    cli_buf_printf(b, "<section id=\"%s-section\">\n<h2>%s</h2>\n", id, title);
    if (hint)
        cli_buf_printf(b, "<p class=\"hint\">%s</p>\n", hint);
    cli_buf_printf(b, "<div id=\"%s\" class=\"chart\"></div>\n<noscript><p class=\"hint\">"
                      "This view needs JavaScript; the table below has the numbers.</p>"
                      "</noscript>\n</section>\n", id);
}

/* Computes the page's columns, then writes the page top to bottom; 0, or -1 with e set
 * when the roofs cannot be read (ro: see RoofOpts; NULL: no machine roofs). */
static int
render(CliProfile *p, const RoofOpts *ro, CliBuf *b, CliErr *e)
{
    int missing[C_NCOLS];
    CliMetricSpec m[C_NCOLS];
    for (int i = 0; i < C_NCOLS; i++)
        cli_metric_parse(page_metrics[i], &m[i], NULL);
    cli_metrics_compute(p, m, C_NCOLS, missing);
    CliView v = {.depth = 1 << 30, .sort = CLI_SORT_METRIC};
    cli_view_apply(p, &v);
    cli_tree_sort(p->root, cmp_time_desc, NULL);

    cJSON *data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, "file", p->path);
    cJSON_AddItemToObject(data, "tree", tree_json(p->root));
    int has_tl = p->kind == CLI_KIND_TRACE && p->nspans > 0;
    if (has_tl)
        cJSON_AddItemToObject(data, "timeline", timeline_json(p));
    int roof_err;
    cJSON *roof = roofline_json(p, ro, e, &roof_err);
    if (roof_err) {
        cJSON_Delete(data);
        return -1;
    }
    if (roof)
        cJSON_AddItemToObject(data, "roofline", roof);
    char *json = cJSON_PrintUnformatted(data);
    cJSON_Delete(data);

    cli_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta name=\"generator\" content=\"proton-cli " CLI_VERSION "\">\n<title>");
    cli_html_escape(b, p->path);
    cli_buf_puts(b, " &middot; Proton report</title>\n<style>\n");
    cli_buf_puts(b, cli_asset_report_css);
    cli_buf_puts(b, "</style>\n</head>\n<body>\n");
    header(b, p);
    cli_buf_puts(b, "<nav><a href=\"#flame-section\">Call tree</a><a href=\"#table-section\">"
                    "Table</a>");
    if (has_tl)
        cli_buf_puts(b, "<a href=\"#timeline-section\">Timeline</a>");
    if (roof)
        cli_buf_puts(b, "<a href=\"#roofline-section\">Roofline</a>");
    if (remarks_section(b, p, 0))
        cli_buf_puts(b, "<a href=\"#remarks-section\">Remarks</a>");
    cli_buf_puts(b, "</nav>\n<main>\n");
    section(b, "flame", "Call tree",
            "Icicle view: width is inclusive time. Hover for details, click to zoom in, "
            "click the top bar to zoom out.");
    if (has_tl)
        section(b, "timeline", "Timeline",
                "One row per thread (nested slices stack downwards). Drag to zoom, "
                "double-click to reset.");
    if (roof)
        section(b, "roofline", "Roofline", NULL);
    table(b, p);
    remarks_section(b, p, 1);
    cli_buf_puts(b, "</main>\n<div id=\"tip\" class=\"tip\" hidden></div>\n"
                    "<script type=\"application/json\" id=\"tritium-data\">");
    cli_json_script_escape(b, json);
    cli_buf_puts(b, "</script>\n<script>\n");
    cli_buf_puts(b, cli_asset_report_js);
    cli_buf_puts(b, "</script>\n</body>\n</html>\n");
    free(json);
    return 0;
}

void
cli_html_render(CliProfile *p, CliBuf *b)
{
    render(p, NULL, b, NULL);
}

/* ---- main ----------------------------------------------------------------------------------- */

static const char html_usage[] =
    "usage: proton-cli html [options] FILE -o report.html\n"
    "\n"
    "Writes one self-contained HTML page (inline CSS and JavaScript, no network):\n"
    "summary header, icicle view of the call tree, sortable table of kernels and\n"
    "scopes, per-thread timeline (Chrome-trace input) and a roofline chart (when flops\n"
    "and bytes are known). Without JavaScript the page still shows the table.\n"
    "\n"
    "  -o, --output FILE   where to write (default: FILE with .html appended; '-' stdout)\n"
    "  --peaks FILE        the roofline's roofs from FILE (see `proton-cli roofline`); by\n"
    "                      default this machine's cached roofs, measured once when missing\n"
    "  -h, --help          this help\n"
    "\n"
    "Exit codes: 0 ok, 1 usage error, 2 unreadable or malformed input.\n";

int
cli_html_main(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                          {"peaks", required_argument, 0, 'P'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *out = NULL;
    RoofOpts ro = {.machine = 1};
    char *defout = NULL;
    int c, rc = CLI_EXIT_INPUT;
    CliErr e;
    CliBuf b = {0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'P': ro.peaks_file = optarg; break;
        case 'h': fputs(html_usage, stdout); return CLI_EXIT_OK;
        case ':': cli_error("html", "option '%s' needs a value", argv[optind - 1]); return 1;
        default: cli_error("html", "unknown option '%s' (see --help)", argv[optind - 1]); return 1;
        }
    }
    if (argc - optind != 1) {
        cli_error("html", "want exactly one input file (see --help)");
        return CLI_EXIT_USAGE;
    }
    const char *in = argv[optind];
    if (!out) {
        size_t n = strlen(in) + 6;
        defout = cli_xmalloc(n);
        snprintf(defout, n, "%s.html", in);
        out = defout;
    }
    CliProfile *p = cli_profile_load(in, &e);
    if (!p) {
        cli_error("html", "%s", e.msg);
        goto out;
    }
    if (render(p, &ro, &b, &e) != 0) {
        cli_error("html", "%s", e.msg);
        cli_profile_destroy(p);
        goto out;
    }
    if (p->spans_total > TIMELINE_MAX_SPANS)
        cli_error("html", "note: %s has %ld timeline slices; the page's timeline shows %d of "
                  "them (the outermost and longest), the tree and the table cover all",
                  in, p->spans_total, TIMELINE_MAX_SPANS);
    cli_profile_destroy(p);
    if (cli_file_write_atomic(out, b.s, b.n, &e) != 0) {
        cli_error("html", "%s", e.msg);
        goto out;
    }
    rc = CLI_EXIT_OK;
out:
    free(defout);
    cli_buf_fini(&b);
    return rc;
}
