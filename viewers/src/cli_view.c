/*
 * cli_view.c — what report and diff share once the columns are computed: frame-name
 * formats (-f), the filters (-d, -i, -e, -t) with proton-viewer's meaning, child sorting
 * (--sort), the tree connectors (├─ └─ │) and the heat colours.
 *
 * Filters only hide nodes; values are always computed on the whole tree (hatchet's
 * squash recomputes inclusive sums after filtering, we do not: a parent's time stays the
 * time it really took, whatever is hidden below it). ROOT is always shown.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- frame names ------------------------------------------------------------------------- */

int
cli_frame_parse(const char *s, CliFrame *f)
{
    static const char *names[] = {"full", "file_function_line", "function_line",
                                  "file_function"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *f = (CliFrame)i;
            return 0;
        }
    return -1;
}

/* Upstream's rules: file_function_line keeps what follows the last '/', function_line
 * what follows the last ':', file_function is "<file>@<function>". Names without '@'
 * (kernels, scopes, ROOT) are left alone by file_function. */
const char *
cli_frame_format(const char *name, CliFrame f, char *buf, size_t len)
{
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    switch (f) {
    case CLI_FRAME_FILE_FUNCTION_LINE:
        snprintf(buf, len, "%s", base);
        break;
    case CLI_FRAME_FUNCTION_LINE: {
        const char *colon = strrchr(name, ':');
        snprintf(buf, len, "%s", colon ? colon + 1 : name);
        break;
    }
    case CLI_FRAME_FILE_FUNCTION: {
        const char *at = strrchr(name, '@');
        if (!at) {
            snprintf(buf, len, "%s", name);
            break;
        }
        size_t flen = strcspn(base, ":");
        size_t fnlen = strcspn(at + 1, ":");
        snprintf(buf, len, "%.*s@%.*s", (int)flen, base, (int)fnlen, at + 1);
        break;
    }
    default:
        snprintf(buf, len, "%s", name);
    }
    return buf;
}

/* ---- filters ------------------------------------------------------------------------------- */

/* Nodes in pre-order, so that reverse iteration visits children before parents. */
static CliNode **
preorder(const CliProfile *p, int *count)
{
    CliNode **v = cli_xmalloc(sizeof(CliNode *) * (size_t)(p->nnodes ? p->nnodes : 1));
    int k = 0;
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root))
        v[k++] = n;
    *count = k;
    return v;
}

/* Keeps nodes with a KEEP-marked node at or below them (KEEP set by the caller), or at or
 * above them when 'down' is set (include: the whole path through the match). */
static void
keep_paths(CliNode **v, int k, int down)
{
    for (int i = k - 1; i >= 0; i--) /* MATCH: has a kept node below it */
        if ((v[i]->flags & (CLI_NODE_KEEP | CLI_NODE_MATCH)) && v[i]->parent)
            v[i]->parent->flags |= CLI_NODE_MATCH;
    for (int i = 0; i < k; i++) {
        CliNode *n = v[i];
        int below = down && n->parent && (n->parent->flags & CLI_NODE_KEEP);
        if (below)
            n->flags |= CLI_NODE_KEEP;
        if (!(n->flags & (CLI_NODE_KEEP | CLI_NODE_MATCH)))
            n->flags &= ~CLI_NODE_SHOWN;
    }
    for (int i = 0; i < k; i++)
        v[i]->flags &= ~(CLI_NODE_KEEP | CLI_NODE_MATCH);
}

void
cli_view_apply(CliProfile *p, const CliView *v)
{
    int k;
    CliNode **all = preorder(p, &k);
    for (int i = 0; i < k; i++) {
        CliNode *n = all[i];
        n->flags &= ~(CLI_NODE_SHOWN | CLI_NODE_KEEP | CLI_NODE_MATCH | CLI_NODE_LAST);
        int show = !n->parent || (n->parent->flags & CLI_NODE_SHOWN);
        if (show && v->has_exclude && n->parent && cli_regex_match(&v->exclude, n->name))
            show = 0;
        if (show)
            n->flags |= CLI_NODE_SHOWN;
    }
    if (v->has_include) {
        for (int i = 0; i < k; i++)
            if ((all[i]->flags & CLI_NODE_SHOWN) && cli_regex_match(&v->include, all[i]->name))
                all[i]->flags |= CLI_NODE_KEEP;
        keep_paths(all, k, 1);
    }
    if (v->has_threshold) {
        for (int i = 0; i < k; i++)
            if ((all[i]->flags & CLI_NODE_SHOWN) && !isnan(all[i]->col[0]) &&
                all[i]->col[0] >= v->threshold)
                all[i]->flags |= CLI_NODE_KEEP;
        keep_paths(all, k, 0);
    }
    for (int i = 0; i < k; i++)
        if (all[i]->depth >= v->depth)
            all[i]->flags &= ~CLI_NODE_SHOWN;
    p->root->flags |= CLI_NODE_SHOWN;
    /* last shown child of each parent, for the connectors */
    for (int i = 0; i < k; i++) {
        CliNode *last = NULL;
        for (CliNode *c = all[i]->first; c; c = c->next)
            if (c->flags & CLI_NODE_SHOWN)
                last = c;
        if (last)
            last->flags |= CLI_NODE_LAST;
    }
    free(all);
}

/* ---- sorting ------------------------------------------------------------------------------- */

static int
cmp_metric(const CliNode *a, const CliNode *b, void *user)
{
    int i = *(const int *)user;
    double x = a->col[i], y = b->col[i];
    if (isnan(x) != isnan(y))
        return isnan(x) ? 1 : -1; /* missing last */
    if (!isnan(x) && x != y)
        return x > y ? -1 : 1;    /* largest first */
    return strcmp(a->name, b->name);
}

static int
cmp_name(const CliNode *a, const CliNode *b, void *user)
{
    return strcmp(a->name, b->name);
}

static int
cmp_none(const CliNode *a, const CliNode *b, void *user)
{
    return 0;
}

void
cli_view_sort(CliProfile *p, const CliView *v)
{
    int i = v->sort_metric;
    if (v->sort == CLI_SORT_METRIC)
        cli_tree_sort(p->root, cmp_metric, &i);
    else if (v->sort == CLI_SORT_NAME)
        cli_tree_sort(p->root, cmp_name, NULL);
    else
        cli_tree_sort(p->root, cmp_none, NULL);
    /* the LAST flags depend on the order */
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root)) {
        CliNode *last = NULL;
        for (CliNode *c = n->first; c; c = c->next) {
            c->flags &= ~CLI_NODE_LAST;
            if (c->flags & CLI_NODE_SHOWN)
                last = c;
        }
        if (last)
            last->flags |= CLI_NODE_LAST;
    }
}

int
cli_sort_parse(const char *s, const CliMetricSpec *m, int nm, CliView *v)
{
    v->sort_metric = 0;
    if (strcmp(s, "metric") == 0) {
        v->sort = CLI_SORT_METRIC;
        return 0;
    }
    if (strcmp(s, "name") == 0) {
        v->sort = CLI_SORT_NAME;
        return 0;
    }
    if (strcmp(s, "none") == 0 || strcmp(s, "file") == 0) {
        v->sort = CLI_SORT_NONE;
        return 0;
    }
    for (int i = 0; i < nm; i++)
        if (cli_streq_nocase(s, m[i].text)) {
            v->sort = CLI_SORT_METRIC;
            v->sort_metric = i;
            return 0;
        }
    return -1;
}

/* ---- drawing ------------------------------------------------------------------------------- */

/* Ancestors (below top) decide the "│  " / "   " columns, the node its own connector. */
void
cli_tree_prefix(CliBuf *b, const CliNode *n, const CliNode *top)
{
    if (n == top)
        return;
    const CliNode *chain[CLI_MAX_DEPTH + 2];
    int k = 0;
    for (const CliNode *a = n->parent; a && a != top && k < CLI_MAX_DEPTH; a = a->parent)
        chain[k++] = a;
    while (k-- > 0)
        cli_buf_puts(b, (chain[k]->flags & CLI_NODE_LAST) ? "   " : "│  ");
    cli_buf_puts(b, (n->flags & CLI_NODE_LAST) ? "└─ " : "├─ ");
}

/* Six steps from red (largest) to green (smallest), as hatchet colours its first column;
 * a missing value (NaN, printed "-") is dimmed, never put on the scale. */
const char *
cli_heat_color(double x, double lo, double hi)
{
    static const char *steps[] = {"\033[38;5;196m", "\033[38;5;208m", "\033[38;5;220m",
                                  "\033[38;5;148m", "\033[38;5;34m", "\033[38;5;22m"};
    if (isnan(x))
        return "\033[2m";
    if (!(hi > lo))
        return steps[0];
    double f = (x - lo) / (hi - lo);
    if (!isfinite(f))
        f = 0;
    int i = (int)((1 - f) * 6);
    return steps[i < 0 ? 0 : i > 5 ? 5 : i];
}

void
cli_view_fini(CliView *v)
{
    cli_regex_fini(&v->include);
    cli_regex_fini(&v->exclude);
}
