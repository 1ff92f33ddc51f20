/*
 * cli_metrics.c — metric specs ("time/ms", "avg_time/us", "gflop32/s", "gbyte/s", "ipc",
 * "time/%", raw names) and the columns they produce on a profile.
 *
 * Inclusive rule (hatchet's, with one refinement). A metric whose key is on the root
 * (a root "hint") is summed up the tree: inclusive = own + sum of the children's
 * inclusive values. Other metrics are per node. Refinement: on a kernel node (it carries
 * device_id/device_type) and anything below it, a node's own value already covers its
 * children (a launch's wall time covers its in-kernel scopes, an outer scope covers the
 * scopes nested in it), so there the own value is kept when present. Upstream-shaped
 * files never carry the same metric on a kernel and below it, so for them this equals
 * hatchet. A value is missing (NaN, printed "-") when neither the node nor anything
 * below it has the metric: never a made-up zero.
 */
#include "cli.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing -------------------------------------------------------------------------- */

static double
unit_seconds(const char *u)
{
    if (strcmp(u, "s") == 0)
        return 1;
    if (strcmp(u, "ms") == 0)
        return 1e-3;
    if (strcmp(u, "us") == 0)
        return 1e-6;
    if (strcmp(u, "ns") == 0)
        return 1e-9;
    return 0;
}

/* "flop", "gflop32", "tbyte" ... -> base metric and divisor; 0 when not a rate name. */
static int
rate_name(const char *left, char *base, size_t blen, double *div)
{
    const char *s = left;
    *div = 1;
    if (*s == 'g') {
        *div = 1e9;
        s++;
    } else if (*s == 't') {
        *div = 1e12;
        s++;
    }
    if (strcmp(s, "byte") == 0) {
        snprintf(base, blen, "bytes");
        return 1;
    }
    if (strncmp(s, "flop", 4) != 0)
        return 0;
    s += 4;
    if (*s == 0 || strcmp(s, "8") == 0 || strcmp(s, "16") == 0 || strcmp(s, "32") == 0 ||
        strcmp(s, "64") == 0) {
        snprintf(base, blen, "flops%s", s);
        return 1;
    }
    return 0;
}

int
cli_metric_parse(const char *text, CliMetricSpec *m, CliErr *e)
{
    char low[64];
    size_t n = strlen(text);
    memset(m, 0, sizeof *m);
    if (n == 0 || n >= sizeof m->text) {
        cli_err_set(e, "bad metric name '%.80s'", text);
        return -1;
    }
    memcpy(m->text, text, n + 1);
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)tolower((unsigned char)text[i]);
    m->factor = 1;
    char *slash = strrchr(low, '/');
    if (!slash) {
        if (strcmp(low, "ipc") == 0) {
            m->kind = CLI_MK_IPC;
            m->higher_better = 1;
            snprintf(m->base, sizeof m->base, "instructions");
            return 0;
        }
        if (strcmp(low, "util") == 0) {
            cli_err_set(e, "metric 'util' needs upstream GPU peak tables; use gflop/s or gbyte/s");
            return -1;
        }
        m->kind = CLI_MK_RAW;
        snprintf(m->base, sizeof m->base, "%s", text);
        return 0;
    }
    *slash = 0;
    const char *left = low, *unit = slash + 1;
    if (!*left) {
        cli_err_set(e, "bad metric name '%s'", text);
        return -1;
    }
    if (strcmp(unit, "%") == 0) {
        m->kind = CLI_MK_PCT;
        snprintf(m->base, sizeof m->base, "%.*s", (int)(slash - low), text);
        return 0;
    }
    if (strcmp(unit, "s") == 0 && rate_name(left, m->base, sizeof m->base, &m->factor)) {
        m->kind = CLI_MK_RATE;
        m->factor = 1 / m->factor;
        m->higher_better = 1;
        return 0;
    }
    if (strcmp(unit, "s") == 0 && (strstr(left, "flop") || strstr(left, "byte"))) {
        cli_err_set(e, "unknown rate '%s' (flop[8|16|32|64]/s, gflop<w>/s, tflop<w>/s, "
                    "byte/s, gbyte/s, tbyte/s)", text);
        return -1;
    }
    double secs = unit_seconds(unit);
    if (secs == 0) {
        cli_err_set(e, "unsupported unit '%s' in metric '%s' (use s, ms, us, ns, %% or a rate)",
                    unit, text);
        return -1;
    }
    m->factor = 1 / secs; /* seconds -> the requested unit */
    if (strncmp(left, "avg_", 4) == 0 && left[4]) {
        m->kind = CLI_MK_AVG;
        snprintf(m->base, sizeof m->base, "%.*s", (int)(slash - low - 4), text + 4);
    } else {
        m->kind = CLI_MK_TIME;
        snprintf(m->base, sizeof m->base, "%.*s", (int)(slash - low), text);
    }
    return 0;
}

int
cli_metric_parse_list(const char *text, CliMetricSpec **out, CliErr *e)
{
    int n = 0, cap = 4;
    CliMetricSpec *ms = cli_xmalloc(sizeof *ms * (size_t)cap);
    char *copy = cli_xstrdup(text), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ')
            t++;
        size_t l = strlen(t);
        while (l > 0 && t[l - 1] == ' ')
            t[--l] = 0;
        if (n == cap) {
            cap *= 2;
            ms = cli_xrealloc(ms, sizeof *ms * (size_t)cap);
        }
        if (cli_metric_parse(t, &ms[n], e) != 0) {
            free(copy);
            free(ms);
            return -1;
        }
        n++;
    }
    free(copy);
    if (n == 0) {
        cli_err_set(e, "no metric given");
        free(ms);
        return -1;
    }
    *out = ms;
    return n;
}

/* ---- resolution ---------------------------------------------------------------------------- */

/* "time (ns)" -> "time"; writes the lower-cased name without its unit. */
static void
strip_unit(const char *name, char *out, size_t len)
{
    const char *paren = strchr(name, '(');
    size_t n = paren ? (size_t)(paren - name) : strlen(name);
    while (n > 0 && name[n - 1] == ' ')
        n--;
    if (n >= len)
        n = len - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)name[i]);
    out[n] = 0;
}

int
cli_metric_resolve(const CliProfile *p, const char *name)
{
    int id = cli_profile_metric_find(p, name);
    if (id >= 0)
        return id;
    char want[256], have[256];
    snprintf(want, sizeof want, "%s", name);
    for (char *c = want; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    for (int i = 0; i < p->nmetrics; i++) {
        if (cli_streq_nocase(p->metrics[i].name, name))
            return i;
        strip_unit(p->metrics[i].name, have, sizeof have);
        if (strcmp(have, want) == 0)
            return i;
    }
    return -1;
}

const char *
cli_node_remarks(const CliProfile *p, const CliNode *n)
{
    int id = cli_profile_metric_find(p, "remarks");
    const CliVal *v = id >= 0 ? cli_node_val(n, id) : NULL;
    return v && v->kind == CLI_V_STR && v->str && *v->str ? v->str : NULL;
}

/* Nanoseconds per unit written in a raw metric's name ("(ns)", "(us)" ...); ns if none. */
static double
raw_unit_ns(const char *name)
{
    const char *paren = strrchr(name, '(');
    if (!paren)
        return 1;
    char u[8] = {0};
    size_t i = 0;
    for (paren++; *paren && *paren != ')' && i < sizeof u - 1; paren++)
        u[i++] = *paren;
    double s = unit_seconds(u);
    return s ? s * 1e9 : 1;
}

/* ---- columns ------------------------------------------------------------------------------ */

static double
own_num(const CliNode *n, int id)
{
    const CliVal *v = id >= 0 ? cli_node_val(n, id) : NULL;
    if (v && (v->kind == CLI_V_NUM || v->kind == CLI_V_VEC))
        return v->num;
    return NAN;
}

/* Inclusive (or per-node) values of raw metric id for every node, indexed by seq;
 * caller frees. NULL when id < 0. */
static double *
column_of(const CliProfile *p, int id)
{
    if (id < 0)
        return NULL;
    double *c = cli_xmalloc(sizeof(double) * (size_t)p->nnodes);
    CliNode **order = cli_xmalloc(sizeof(CliNode *) * (size_t)p->nnodes);
    int k = 0;
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root))
        order[k++] = n;
    int hinted = p->metrics[id].hinted;
    for (int i = k - 1; i >= 0; i--) {
        const CliNode *n = order[i];
        double v = own_num(n, id);
        if (hinted && !((n->flags & CLI_NODE_INKERNEL) && !isnan(v)))
            for (const CliNode *ch = n->first; ch; ch = ch->next) {
                double cv = c[ch->seq];
                if (!isnan(cv))
                    v = (isnan(v) ? 0 : v) + cv;
            }
        c[n->seq] = v;
    }
    free(order);
    return c;
}

double
cli_metric_inclusive(const CliProfile *p, const CliNode *n, int id)
{
    double *c = column_of(p, id);
    double v = c ? c[n->seq] : NAN;
    free(c);
    return v;
}

/* Tritium's .hatchet writer names the metrics of in-kernel scope nodes "scope_count" and
 * "scope_time (ns)" (so that hatchet does not add them to their kernel); for nodes below
 * a kernel that lack "count" / "time (ns)", those stand in. */
static double *
column_scoped(const CliProfile *p, int id)
{
    double *c = column_of(p, id);
    if (!c)
        return NULL;
    char alias[320];
    snprintf(alias, sizeof alias, "scope_%s", p->metrics[id].name);
    double *s = column_of(p, cli_profile_metric_find(p, alias));
    if (!s)
        return c;
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root))
        if ((n->flags & CLI_NODE_INKERNEL) && !(n->flags & CLI_NODE_KERNEL) && isnan(c[n->seq]))
            c[n->seq] = s[n->seq];
    free(s);
    return c;
}

static double
safe_div(double a, double b)
{
    if (isnan(a) || isnan(b) || b == 0)
        return NAN;
    return a / b;
}

/* Sum of the flops<w> columns present (used when a file has no plain "flops"). */
static double *
flops_any(const CliProfile *p)
{
    static const char *w[] = {"flops8", "flops16", "flops32", "flops64"};
    double *sum = NULL;
    for (int i = 0; i < 4; i++) {
        int id = cli_profile_metric_find(p, w[i]);
        double *c = id >= 0 ? column_scoped(p, id) : NULL;
        if (!c)
            continue;
        if (!sum) {
            sum = c;
            continue;
        }
        for (int k = 0; k < p->nnodes; k++)
            if (!isnan(c[k]))
                sum[k] = (isnan(sum[k]) ? 0 : sum[k]) + c[k];
        free(c);
    }
    return sum;
}

/* Fills out[seq] for spec m; returns 0, or -1 when the file lacks what m needs. */
static int
compute_one(CliProfile *p, const CliMetricSpec *m, double *out, const char **sout)
{
    int n = p->nnodes, rc = 0;
    double *a = NULL, *b = NULL;
    int id = cli_metric_resolve(p, m->base);
    if (id < 0) { /* a metric only in-kernel scope nodes carry ("scope_cpu_time (ns)") */
        char alt[320];
        snprintf(alt, sizeof alt, "scope_%s", m->base);
        id = cli_metric_resolve(p, alt);
    }
    for (int k = 0; k < n; k++)
        out[k] = NAN;
    switch (m->kind) {
    case CLI_MK_RAW:
        if (id < 0)
            return -1;
        a = column_scoped(p, id);
        memcpy(out, a, sizeof(double) * (size_t)n);
        if (sout && p->metrics[id].strings)
            for (CliNode *x = p->root; x; x = cli_node_next_preorder(x, p->root)) {
                const CliVal *v = cli_node_val(x, id);
                if (v && v->kind == CLI_V_STR)
                    sout[x->seq] = v->str;
            }
        break;
    case CLI_MK_TIME:
    case CLI_MK_AVG:
        if (id < 0 || (m->kind == CLI_MK_AVG && cli_metric_resolve(p, "count") < 0))
            return -1;
        a = column_scoped(p, id);
        if (m->kind == CLI_MK_AVG)
            b = column_scoped(p, cli_metric_resolve(p, "count"));
        for (int k = 0; k < n; k++) {
            double v = a[k] * raw_unit_ns(p->metrics[id].name) * 1e-9 * m->factor;
            out[k] = b ? safe_div(v, b[k]) : v;
        }
        break;
    case CLI_MK_PCT: {
        if (id < 0)
            return -1;
        a = column_scoped(p, id);
        double total = 0;
        if (p->metrics[id].hinted) {
            total = a[p->root->seq];
        } else {
            for (int k = 0; k < n; k++)
                total += isnan(a[k]) ? 0 : a[k];
        }
        for (int k = 0; k < n; k++)
            out[k] = safe_div(a[k] * 100.0, total);
        break;
    }
    case CLI_MK_RATE: {
        int tid = cli_metric_resolve(p, "time");
        if (strcmp(m->base, "flops") == 0 && id < 0)
            a = flops_any(p);
        else
            a = id >= 0 ? column_scoped(p, id) : NULL; /* scopes: their scope_bytes over scope_time */
        if (!a || tid < 0) {
            rc = -1;
            break;
        }
        b = column_scoped(p, tid);
        double tscale = raw_unit_ns(p->metrics[tid].name) * 1e-9;
        for (int k = 0; k < n; k++)
            out[k] = safe_div(a[k], b[k] * tscale) * m->factor;
        break;
    }
    case CLI_MK_IPC: {
        int cy = cli_metric_resolve(p, "cycles");
        if (id < 0 || cy < 0)
            return -1;
        a = column_of(p, id);
        b = column_of(p, cy);
        for (int k = 0; k < n; k++)
            out[k] = safe_div(a[k], b[k]);
        break;
    }
    default:
        rc = -1;
    }
    free(a);
    free(b);
    return rc;
}

void
cli_metrics_compute(CliProfile *p, const CliMetricSpec *m, int nm, int *missing)
{
    int n = p->nnodes;
    double *tmp = cli_xmalloc(sizeof(double) * (size_t)n);
    const char **stmp = cli_xcalloc((size_t)n, sizeof(char *));
    for (CliNode *x = p->root; x; x = cli_node_next_preorder(x, p->root)) {
        x->col = cli_arena_alloc(&p->arena, sizeof(double) * (size_t)(nm ? nm : 1));
        x->scol = NULL;
    }
    for (int i = 0; i < nm; i++) {
        memset(stmp, 0, sizeof(char *) * (size_t)n);
        missing[i] = compute_one(p, &m[i], tmp, stmp) != 0;
        for (CliNode *x = p->root; x; x = cli_node_next_preorder(x, p->root)) {
            x->col[i] = tmp[x->seq];
            if (stmp[x->seq]) {
                if (!x->scol)
                    x->scol = cli_arena_alloc(&p->arena, sizeof(char *) * (size_t)nm);
                x->scol[i] = stmp[x->seq];
            }
        }
    }
    free(tmp);
    free(stmp);
}

/* ---- listing ------------------------------------------------------------------------------- */

static int
has(const CliProfile *p, const char *name)
{
    return cli_metric_resolve(p, name) >= 0;
}

void
cli_metrics_list(const CliProfile *p, FILE *out)
{
    char low[256];
    fprintf(out, "Inclusive metrics (root-hinted, summed up the tree):\n");
    for (int i = 0; i < p->nmetrics; i++)
        if (p->metrics[i].hinted) {
            strip_unit(p->metrics[i].name, low, sizeof low);
            fprintf(out, "- %s  [%s]\n", low, p->metrics[i].name);
        }
    fprintf(out, "Per-node metrics:\n");
    for (int i = 0; i < p->nmetrics; i++)
        if (!p->metrics[i].hinted) {
            strip_unit(p->metrics[i].name, low, sizeof low);
            fprintf(out, "- %s  [%s]%s\n", low, p->metrics[i].name,
                    p->metrics[i].numeric ? "" : " (text)");
        }
    fprintf(out, "Derived metrics available:\n");
    if (has(p, "time"))
        fprintf(out, "- time/s, time/ms, time/us, time/ns, time/%%\n");
    if (has(p, "time") && has(p, "count"))
        fprintf(out, "- avg_time/s, avg_time/ms, avg_time/us, avg_time/ns\n");
    if (has(p, "cpu_time"))
        fprintf(out, "- cpu_time/<unit>%s\n", has(p, "count") ? ", avg_cpu_time/<unit>" : "");
    if (has(p, "time") && has(p, "bytes"))
        fprintf(out, "- byte/s, gbyte/s, tbyte/s\n");
    static const char *w[] = {"", "8", "16", "32", "64"};
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "flops%s", w[i]);
        int any = i == 0 && (has(p, "flops8") || has(p, "flops16") || has(p, "flops32") ||
                             has(p, "flops64"));
        if (has(p, "time") && (has(p, name) || any))
            fprintf(out, "- flop%s/s, gflop%s/s, tflop%s/s\n", w[i], w[i], w[i]);
    }
    if (has(p, "instructions") && has(p, "cycles"))
        fprintf(out, "- ipc\n");
    fprintf(out, "- <metric>/%% for any numeric metric\n");
}
