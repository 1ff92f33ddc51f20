/*
 * cli_diff.c — `proton-cli diff BASE NEW`: node-by-node change of one metric between two
 * profiles, largest regressions first.
 *
 * Nodes are matched by their path of frame names from ROOT (the k-th sibling of a name
 * matches the k-th sibling of that name on the other side). A regression is an increase
 * for times and counts and a decrease for rates (gflop/s, gbyte/s, ipc). A node present
 * on one side only is marked "◀ only in BASE" / "▶ only in NEW" (proton-viewer's marks)
 * and counted as going from or to zero for the ordering; its ratio is undefined. A node
 * in both files whose value is missing on one side has no delta (printed "-", listed
 * last, neither regressed nor improved): missing is never zero.
 */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char diff_usage[] =
    "usage: proton-cli diff [options] BASE NEW\n"
    "\n"
    "Compares one metric node by node (nodes matched by their path of names) and lists\n"
    "the changes, largest regressions first. Nodes found in one file only are marked\n"
    "'◀ only in BASE' or '▶ only in NEW'.\n"
    "\n"
    "  -m, --metric M          the metric (default time/ms; same names as report)\n"
    "  -d, --depth N           only nodes above depth N (ROOT is depth 0)\n"
    "  -t, --threshold X       hide rows whose absolute change is below X\n"
    "  -i, --include REGEX     keep only paths through a frame matching REGEX\n"
    "  -e, --exclude REGEX     drop frames matching REGEX with their subtrees\n"
    "  -n, --top N             print at most N rows\n"
    "  -f, --frame-format F    full | file_function_line | function_line | file_function\n"
    "      --format F          text (default) | csv | json\n"
    "      --color, --no-color force colours on or off (default: on a terminal only)\n"
    "  -h, --help              this help\n"
    "\n"
    "Exit codes: 0 ok, 1 usage error, 2 unreadable or malformed input.\n";

typedef struct Row {
    CliNode *base, *new;  /* either may be NULL */
    double b, n, delta, ratio, key;
} Row;

typedef struct Diff {
    const CliDiffOpts *o;
    Row *rows;
    int nrows, caprows;
} Diff;

/* ---- matching -------------------------------------------------------------------------------- */

/* For each node of b, aux points to its match in a (or NULL), and the reverse. */
static void
match(CliProfile *a, CliProfile *b)
{
    for (CliNode *n = a->root; n; n = cli_node_next_preorder(n, a->root))
        n->aux = NULL;
    for (CliNode *n = b->root; n; n = cli_node_next_preorder(n, b->root))
        n->aux = NULL;
    b->root->aux = a->root;
    a->root->aux = b->root;
    for (CliNode *n = b->root; n; n = cli_node_next_preorder(n, b->root)) {
        CliNode *other = n->aux;
        if (!other)
            continue;
        for (CliNode *c = n->first; c; c = c->next)
            for (CliNode *o = other->first; o; o = o->next)
                if (!o->aux && strcmp(o->name, c->name) == 0) {
                    o->aux = c;
                    c->aux = o;
                    break;
                }
    }
}

static void
add_row(Diff *d, CliNode *base, CliNode *new)
{
    if (d->nrows == d->caprows) {
        d->caprows = d->caprows ? d->caprows * 2 : 64;
        d->rows = cli_xrealloc(d->rows, sizeof(Row) * (size_t)d->caprows);
    }
    Row *r = &d->rows[d->nrows];
    r->base = base;
    r->new = new;
    r->b = base ? base->col[0] : NAN;
    r->n = new ? new->col[0] : NAN;
    double b0 = isnan(r->b) ? 0 : r->b, n0 = isnan(r->n) ? 0 : r->n;
    if (base && new) /* a node in both files lacking the value on one side: no change known */
        r->delta = isnan(r->b) || isnan(r->n) ? NAN : r->n - r->b;
    else
        r->delta = isnan(r->b) && isnan(r->n) ? NAN : n0 - b0;
    r->ratio = !isnan(r->b) && !isnan(r->n) && r->b != 0 ? r->n / r->b : NAN;
    r->key = isnan(r->delta) ? -INFINITY : d->o->m.higher_better ? -r->delta : r->delta;
    if (!isnan(r->delta) && fabs(r->delta) < d->o->min_delta)
        return;
    if (isnan(r->delta) && d->o->min_delta > 0)
        return;
    d->nrows++;
}

static int
cmp_row(const void *x, const void *y)
{
    const Row *a = x, *b = y;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    const CliNode *na = a->new ? a->new : a->base, *nb = b->new ? b->new : b->base;
    return na->seq - nb->seq;
}

static void
collect(Diff *d, CliProfile *base, CliProfile *new)
{
    for (CliNode *n = new->root; n; n = cli_node_next_preorder(n, new->root)) {
        CliNode *o = n->aux;
        int shown = (n->flags & CLI_NODE_SHOWN) || (o && (o->flags & CLI_NODE_SHOWN));
        if (shown)
            add_row(d, o, n);
    }
    for (CliNode *o = base->root; o; o = cli_node_next_preorder(o, base->root))
        if (!o->aux && (o->flags & CLI_NODE_SHOWN))
            add_row(d, o, NULL);
    if (d->nrows > 1)
        qsort(d->rows, (size_t)d->nrows, sizeof(Row), cmp_row);
}

/* ---- output ------------------------------------------------------------------------------------ */

static void
path_text(const Diff *d, const CliNode *n, CliBuf *b)
{
    const CliNode *chain[CLI_MAX_DEPTH + 2];
    char name[4096];
    int k = 0;
    for (; n && k < CLI_MAX_DEPTH + 2; n = n->parent)
        chain[k++] = n;
    if (k == 1) {
        cli_path_put_name(b, chain[0]->name);
        return;
    }
    for (int i = k - 2; i >= 0; i--) {
        cli_path_put_name(b, cli_frame_format(chain[i]->name, d->o->v.frame, name, sizeof name));
        if (i)
            cli_buf_puts(b, " > ");
    }
}

static const char *
only_mark(const Row *r)
{
    return !r->base ? "▶ only in NEW" : !r->new ? "◀ only in BASE" : NULL;
}

static void
render_text(Diff *d, CliProfile *base, CliProfile *new, CliBuf *b)
{
    char bv[64], nv[64], dv[64], rv[64];
    int reg = 0, imp = 0, onlyb = 0, onlyn = 0;
    cli_buf_printf(b, "metric %s: BASE %s, NEW %s\n", d->o->m.text, base->path, new->path);
    cli_buf_printf(b, "%12s %12s %12s %8s  %s\n", "BASE", "NEW", "DELTA", "RATIO", "NODE");
    for (int i = 0; i < d->nrows; i++) {
        const Row *r = &d->rows[i];
        onlyb += !r->new;
        onlyn += !r->base;
        if (r->base && r->new && !isnan(r->delta) && r->delta != 0)
            *(r->key > 0 ? &reg : &imp) += 1;
        if (d->o->top && i >= d->o->top)
            continue;
        cli_fmt_value(bv, r->b, 3);
        cli_fmt_value(nv, r->n, 3);
        cli_fmt_value(dv, r->delta, 3);
        if (!isnan(r->delta) && r->delta > 0) {
            memmove(dv + 1, dv, strlen(dv) + 1);
            dv[0] = '+';
        }
        if (isnan(r->ratio))
            snprintf(rv, sizeof rv, "-");
        else
            snprintf(rv, sizeof rv, "%.3fx", r->ratio);
        const char *col = !d->o->color || isnan(r->delta) || r->key == 0 ? ""
                          : r->key > 0 ? "\033[31m" : "\033[32m";
        cli_buf_printf(b, "%12s %12s %s%12s%s %8s  ", bv, nv, col, dv, *col ? "\033[0m" : "", rv);
        path_text(d, r->new ? r->new : r->base, b);
        if (only_mark(r))
            cli_buf_printf(b, " %s", only_mark(r));
        cli_buf_putc(b, '\n');
    }
    if (d->o->top && d->nrows > d->o->top)
        cli_buf_printf(b, "... %d more rows (-n)\n", d->nrows - (int)d->o->top);
    cli_fmt_value(bv, base->root->col[0], 3);
    cli_fmt_value(nv, new->root->col[0], 3);
    cli_buf_printf(b, "ROOT %s -> %s; %d regressed, %d improved, %d only in BASE, %d only in NEW\n",
                   bv, nv, reg, imp, onlyb, onlyn);
}

static cJSON *
num_or_null(double v)
{
    return isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(cli_round15(v));
}

static void
render_json(Diff *d, CliProfile *base, CliProfile *new, CliBuf *b)
{
    char name[4096];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "metric", d->o->m.text);
    cJSON_AddStringToObject(o, "base", base->path);
    cJSON_AddStringToObject(o, "new", new->path);
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (int i = 0; i < d->nrows && (!d->o->top || i < d->o->top); i++) {
        const Row *r = &d->rows[i];
        cJSON *row = cJSON_CreateObject(), *path = cJSON_AddArrayToObject(row, "path");
        const CliNode *chain[CLI_MAX_DEPTH + 2];
        int k = 0;
        for (const CliNode *n = r->new ? r->new : r->base; n && k < CLI_MAX_DEPTH + 2; n = n->parent)
            chain[k++] = n;
        while (k-- > 0)
            cJSON_AddItemToArray(path, cJSON_CreateString(
                                           cli_frame_format(chain[k]->name, d->o->v.frame, name, sizeof name)));
        cJSON_AddItemToObject(row, "base", num_or_null(r->b));
        cJSON_AddItemToObject(row, "new", num_or_null(r->n));
        cJSON_AddItemToObject(row, "delta", num_or_null(r->delta));
        cJSON_AddItemToObject(row, "ratio", num_or_null(r->ratio));
        if (!r->base || !r->new)
            cJSON_AddStringToObject(row, "only", r->base ? "base" : "new");
        else
            cJSON_AddNullToObject(row, "only");
        cJSON_AddItemToArray(rows, row);
    }
    cli_json_print(b, o);
    cJSON_Delete(o);
}

static void
csv_num(CliBuf *b, double v)
{
    char num[32];
    cli_buf_putc(b, ',');
    if (!isnan(v)) {
        cli_fmt_double(num, cli_round15(v));
        cli_buf_puts(b, num);
    }
}

static void
render_csv(Diff *d, CliBuf *b)
{
    cli_buf_puts(b, "path,base,new,delta,ratio,only\r\n");
    for (int i = 0; i < d->nrows && (!d->o->top || i < d->o->top); i++) {
        const Row *r = &d->rows[i];
        CliBuf p = {0};
        path_text(d, r->new ? r->new : r->base, &p);
        cli_buf_putc(b, '"');
        for (const char *c = p.s ? p.s : ""; *c; c++) { /* an empty name writes nothing */
            if (*c == '"')
                cli_buf_putc(b, '"');
            cli_buf_putc(b, *c);
        }
        cli_buf_putc(b, '"');
        cli_buf_fini(&p);
        csv_num(b, r->b);
        csv_num(b, r->n);
        csv_num(b, r->delta);
        csv_num(b, r->ratio);
        cli_buf_puts(b, !r->base ? ",new\r\n" : !r->new ? ",base\r\n" : ",\r\n");
    }
}

/* ---- main -------------------------------------------------------------------------------------- */

static int
parse_args(CliDiffOpts *d, int argc, char **argv, const char **metric)
{
    enum { O_FORMAT = 256, O_COLOR, O_NOCOLOR };
    static const struct option opts[] = {
        {"metric", required_argument, 0, 'm'}, {"metrics", required_argument, 0, 'm'},
        {"depth", required_argument, 0, 'd'},  {"threshold", required_argument, 0, 't'},
        {"include", required_argument, 0, 'i'}, {"exclude", required_argument, 0, 'e'},
        {"top", required_argument, 0, 'n'},    {"frame-format", required_argument, 0, 'f'},
        {"format", required_argument, 0, O_FORMAT}, {"color", no_argument, 0, O_COLOR},
        {"no-color", no_argument, 0, O_NOCOLOR}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    CliErr e;
    long v;
    int c, color = -1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:d:t:i:e:n:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': *metric = optarg; break;
        case 'd':
            if (cli_parse_int(optarg, 0, 1000000, &v) != 0)
                return cli_error("diff", "-d wants a depth >= 0, got '%s'", optarg), -1;
            d->v.depth = (int)v;
            break;
        case 't':
            if (cli_parse_double(optarg, &d->min_delta) != 0 || d->min_delta < 0)
                return cli_error("diff", "-t wants a number >= 0, got '%s'", optarg), -1;
            break;
        case 'n':
            if (cli_parse_int(optarg, 1, 1000000000, &d->top) != 0)
                return cli_error("diff", "-n wants a count >= 1, got '%s'", optarg), -1;
            break;
        case 'i':
        case 'e': {
            CliRegex *re = c == 'i' ? &d->v.include : &d->v.exclude;
            cli_regex_fini(re);
            if (cli_regex_init(re, optarg, &e) != 0)
                return cli_error("diff", "%s", e.msg), -1;
            *(c == 'i' ? &d->v.has_include : &d->v.has_exclude) = 1;
            break;
        }
        case 'f':
            if (cli_frame_parse(optarg, &d->v.frame) != 0)
                return cli_error("diff", "unknown frame format '%s'", optarg), -1;
            break;
        case O_FORMAT:
            if (strcmp(optarg, "text") == 0) d->fmt = CLI_FMT_TEXT;
            else if (strcmp(optarg, "csv") == 0) d->fmt = CLI_FMT_CSV;
            else if (strcmp(optarg, "json") == 0) d->fmt = CLI_FMT_JSON;
            else return cli_error("diff", "unknown format '%s' (text, csv, json)", optarg), -1;
            break;
        case O_COLOR: color = 1; break;
        case O_NOCOLOR: color = 0; break;
        case 'h': fputs(diff_usage, stdout); return 1;
        case ':': return cli_error("diff", "option '%s' needs a value", argv[optind - 1]), -1;
        default: return cli_error("diff", "unknown option '%s' (see --help)", argv[optind - 1]), -1;
        }
    }
    d->color = d->fmt == CLI_FMT_TEXT && cli_use_color(stdout, color);
    return 0;
}

void
cli_diff_render(CliProfile *base, CliProfile *new, const CliDiffOpts *o, CliBuf *b,
                int missing[2])
{
    Diff d = {.o = o};
    CliProfile *ps[2] = {base, new};
    for (int i = 0; i < 2; i++) {
        int miss = 0;
        cli_metrics_compute(ps[i], &o->m, 1, &miss);
        cli_view_apply(ps[i], &o->v);
        if (missing)
            missing[i] = miss;
    }
    match(base, new);
    collect(&d, base, new);
    if (o->fmt == CLI_FMT_TEXT)
        render_text(&d, base, new, b);
    else if (o->fmt == CLI_FMT_JSON)
        render_json(&d, base, new, b);
    else
        render_csv(&d, b);
    free(d.rows);
}

/* Options, load both files, then cli_diff_render(). */
int
cli_diff_main(int argc, char **argv)
{
    CliDiffOpts o = {0};
    CliErr e;
    CliBuf out = {0};
    CliProfile *ps[2] = {0};
    const char *metric = "time/ms";
    int rc = CLI_EXIT_USAGE, missing[2] = {0};
    o.v.depth = 100;
    int pr = parse_args(&o, argc, argv, &metric);
    if (pr != 0) {
        rc = pr > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        goto out;
    }
    if (argc - optind != 2) {
        cli_error("diff", "want exactly two files, BASE and NEW (see --help)");
        goto out;
    }
    if (strchr(metric, ',')) {
        cli_error("diff", "diff compares one metric at a time");
        goto out;
    }
    if (cli_metric_parse(metric, &o.m, &e) != 0) {
        cli_error("diff", "%s", e.msg);
        goto out;
    }
    for (int i = 0; i < 2; i++)
        if (!(ps[i] = cli_profile_load_opts(argv[optind + i], 0, &e))) {
            cli_error("diff", "%s", e.msg);
            rc = CLI_EXIT_INPUT;
            goto out;
        }
    cli_diff_render(ps[0], ps[1], &o, &out, missing);
    for (int i = 0; i < 2; i++)
        if (missing[i])
            cli_error("diff", "note: %s has no data for metric '%s'", ps[i]->path, o.m.text);
    fwrite(out.s, 1, out.n, stdout);
    rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_INPUT;
out:
    cli_profile_destroy(ps[0]);
    cli_profile_destroy(ps[1]);
    cli_view_fini(&o.v);
    cli_buf_fini(&out);
    return rc;
}
