/*
 * cli_tree.c — the profile model: a call-path tree whose nodes carry short lists of
 * metric values, a per-profile metric table (hashed by name), and the tree walks the
 * renderers need (non-recursive pre-order, stable child sorting, paths).
 *
 * Every node, string and value lives in the profile's arena; only the metric table and
 * its hash are malloc'd. Depth is bounded (CLI_MAX_DEPTH) when reading, so the few
 * recursive walkers elsewhere are safe.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- profile and metric table ------------------------------------------------------- */

CliProfile *
cli_profile_create(const char *path, CliKind kind)
{
    CliProfile *p = cli_xcalloc(1, sizeof *p);
    p->path = cli_arena_strdup(&p->arena, path ? path : "-");
    p->kind = kind;
    p->root = cli_node_new(p, NULL, "ROOT");
    return p;
}

void
cli_profile_destroy(CliProfile *p)
{
    if (!p)
        return;
    free(p->metrics);
    free(p->metric_index_keys);
    free(p->metric_index_vals);
    free(p->threads);
    free(p->spans);
    cJSON_Delete(p->device_info);
    cli_arena_fini(&p->arena);
    free(p);
}

unsigned
cli_hash_str(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void
index_insert(CliProfile *p, char *key, int val)
{
    unsigned mask = (unsigned)p->metric_index_cap - 1;
    unsigned i = cli_hash_str(key) & mask;
    while (p->metric_index_keys[i])
        i = (i + 1) & mask;
    p->metric_index_keys[i] = key;
    p->metric_index_vals[i] = val;
}

static void
index_grow(CliProfile *p)
{
    int cap = p->metric_index_cap ? p->metric_index_cap * 2 : 64;
    free(p->metric_index_keys);
    free(p->metric_index_vals);
    p->metric_index_keys = cli_xcalloc((size_t)cap, sizeof(char *));
    p->metric_index_vals = cli_xcalloc((size_t)cap, sizeof(int));
    p->metric_index_cap = cap;
    for (int i = 0; i < p->nmetrics; i++)
        index_insert(p, (char *)p->metrics[i].name, i);
}

int
cli_profile_metric_find(const CliProfile *p, const char *name)
{
    if (!p->metric_index_cap)
        return -1;
    unsigned mask = (unsigned)p->metric_index_cap - 1;
    for (unsigned i = cli_hash_str(name) & mask; p->metric_index_keys[i]; i = (i + 1) & mask)
        if (strcmp(p->metric_index_keys[i], name) == 0)
            return p->metric_index_vals[i];
    return -1;
}

int
cli_profile_metric_id(CliProfile *p, const char *name)
{
    int id = cli_profile_metric_find(p, name);
    if (id >= 0)
        return id;
    if (p->nmetrics == p->capmetrics) {
        p->capmetrics = p->capmetrics ? p->capmetrics * 2 : 16;
        p->metrics = cli_xrealloc(p->metrics, (size_t)p->capmetrics * sizeof *p->metrics);
    }
    if ((p->nmetrics + 1) * 2 > p->metric_index_cap)
        index_grow(p);
    id = p->nmetrics++;
    CliMetricInfo *m = &p->metrics[id];
    memset(m, 0, sizeof *m);
    m->name = cli_arena_strdup(&p->arena, name);
    index_insert(p, (char *)m->name, id);
    return id;
}

/* ---- nodes -------------------------------------------------------------------------- */

CliNode *
cli_node_new(CliProfile *p, CliNode *parent, const char *name)
{
    CliNode *n = cli_arena_alloc(&p->arena, sizeof *n);
    n->name = cli_arena_strdup(&p->arena, name);
    n->parent = parent;
    if (parent) {
        n->order = parent->nkids++;
        n->depth = parent->depth + 1;
        if (parent->last)
            parent->last->next = n;
        else
            parent->first = n;
        parent->last = n;
    }
    p->nnodes++;
    return n;
}

CliNode *
cli_node_child(CliProfile *p, CliNode *parent, const char *name)
{
    for (CliNode *c = parent->first; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    return cli_node_new(p, parent, name);
}

const CliVal *
cli_node_val(const CliNode *n, int id)
{
    for (const CliNodeVal *v = n->vals; v; v = v->next)
        if (v->metric == id)
            return &v->v;
    return NULL;
}

static CliVal *
node_slot(CliProfile *p, CliNode *n, int id)
{
    for (CliNodeVal *v = n->vals; v; v = v->next)
        if (v->metric == id)
            return &v->v;
    CliNodeVal *v = cli_arena_alloc(&p->arena, sizeof *v);
    v->metric = id;
    /* append, so values keep the file's order */
    CliNodeVal **tail = &n->vals;
    while (*tail)
        tail = &(*tail)->next;
    *tail = v;
    return &v->v;
}

void
cli_node_set_val(CliProfile *p, CliNode *n, int id, const CliVal *v)
{
    CliVal *s = node_slot(p, n, id);
    *s = *v;
    if (v->kind == CLI_V_NUM || v->kind == CLI_V_VEC)
        p->metrics[id].numeric = 1;
    else if (v->kind == CLI_V_STR)
        p->metrics[id].strings = 1;
}

void
cli_node_set_num(CliProfile *p, CliNode *n, int id, double v)
{
    CliVal val = {.kind = CLI_V_NUM, .num = v};
    cli_node_set_val(p, n, id, &val);
}

void
cli_node_add_num(CliProfile *p, CliNode *n, int id, double v)
{
    CliVal *s = node_slot(p, n, id);
    if (s->kind != CLI_V_NUM) {
        s->kind = CLI_V_NUM;
        s->num = 0;
    }
    s->num += v;
    p->metrics[id].numeric = 1;
}

void
cli_node_max_num(CliProfile *p, CliNode *n, int id, double v)
{
    CliVal *s = node_slot(p, n, id);
    if (s->kind != CLI_V_NUM || v > s->num) {
        s->kind = CLI_V_NUM;
        s->num = v;
    }
    p->metrics[id].numeric = 1;
}

void
cli_node_set_str(CliProfile *p, CliNode *n, int id, const char *s)
{
    CliVal val = {.kind = CLI_V_STR, .str = cli_arena_strdup(&p->arena, s)};
    cli_node_set_val(p, n, id, &val);
}

/* ---- walks -------------------------------------------------------------------------- */

CliNode *
cli_node_next_preorder(const CliNode *n, const CliNode *top)
{
    if (n->first)
        return n->first;
    while (n && n != top) {
        if (n->next)
            return n->next;
        n = n->parent;
    }
    return NULL;
}

/* A node is a kernel launch when it says which device ran it (upstream and ours). */
static int
is_kernel(const CliProfile *p, const CliNode *n)
{
    int dt = cli_profile_metric_find(p, "device_type");
    int di = cli_profile_metric_find(p, "device_id");
    return (dt >= 0 && cli_node_val(n, dt)) || (di >= 0 && cli_node_val(n, di));
}

int
cli_profile_finish(CliProfile *p, CliErr *e)
{
    int nnodes = 0;
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root)) {
        n->seq = nnodes++;
        n->depth = n->parent ? n->parent->depth + 1 : 0;
        if (n->depth > CLI_MAX_DEPTH) {
            cli_err_set(e, "%s: tree deeper than %d levels", p->path, CLI_MAX_DEPTH);
            return -1;
        }
        n->flags &= ~(CLI_NODE_KERNEL | CLI_NODE_INKERNEL);
        if (n->parent && (n->parent->flags & CLI_NODE_INKERNEL))
            n->flags |= CLI_NODE_INKERNEL; /* instrumentation nodes below a kernel */
        else if (is_kernel(p, n))
            n->flags |= CLI_NODE_KERNEL | CLI_NODE_INKERNEL;
    }
    p->nnodes = nnodes;
    const CliNodeVal *v;
    for (v = p->root->vals; v; v = v->next)
        p->metrics[v->metric].hinted = 1;
    int th = cli_profile_metric_find(p, "threads");
    if (th >= 0)
        for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root)) {
            const CliVal *t = cli_node_val(n, th);
            if (t && t->kind == CLI_V_NUM && t->num > p->nthreads_max && t->num < 1e9)
                p->nthreads_max = (int)t->num;
        }
    return 0;
}

typedef struct SortCtx {
    int (*cmp)(const CliNode *, const CliNode *, void *);
    void *user;
} SortCtx;

static SortCtx *sort_ctx; /* qsort has no user pointer; the tool is single-threaded */

static int
sort_cmp(const void *a, const void *b)
{
    const CliNode *x = *(CliNode *const *)a, *y = *(CliNode *const *)b;
    int c = sort_ctx->cmp(x, y, sort_ctx->user);
    if (c)
        return c;
    return (x->order > y->order) - (x->order < y->order);
}

void
cli_tree_sort(CliNode *root, int (*cmp)(const CliNode *, const CliNode *, void *), void *user)
{
    SortCtx ctx = {cmp, user};
    CliNode **tmp = NULL;
    int cap = 0;
    sort_ctx = &ctx;
    for (CliNode *n = root; n; n = cli_node_next_preorder(n, root)) {
        if (n->nkids < 2)
            continue;
        if (n->nkids > cap) {
            cap = n->nkids;
            tmp = cli_xrealloc(tmp, (size_t)cap * sizeof *tmp);
        }
        int k = 0;
        for (CliNode *c = n->first; c; c = c->next)
            tmp[k++] = c;
        qsort(tmp, (size_t)k, sizeof *tmp, sort_cmp);
        n->first = tmp[0];
        for (int i = 0; i < k; i++)
            tmp[i]->next = i + 1 < k ? tmp[i + 1] : NULL;
        n->last = tmp[k - 1];
    }
    sort_ctx = NULL;
    free(tmp);
}

void
cli_path_put_name(CliBuf *b, const char *name)
{
    for (const char *c = name; *c; c++) {
        if (*c == '\\' || (*c == '>' && c > name && c[-1] == ' '))
            cli_buf_putc(b, '\\');
        cli_buf_putc(b, *c);
    }
}

char *
cli_node_path_dup(const CliNode *n)
{
    const CliNode *chain[CLI_MAX_DEPTH + 2];
    CliBuf b = {0};
    int k = 0;
    for (; n && k < CLI_MAX_DEPTH + 2; n = n->parent)
        chain[k++] = n;
    while (k-- > 0) {
        cli_path_put_name(&b, chain[k]->name);
        if (k)
            cli_buf_puts(&b, " > ");
    }
    return b.s ? b.s : cli_xstrdup("");
}

int
cli_count_kernels(const CliProfile *p)
{
    int k = 0;
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root))
        k += (n->flags & CLI_NODE_KERNEL) != 0;
    return k;
}
