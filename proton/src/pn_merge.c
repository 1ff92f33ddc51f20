/*
 * pn_merge.c — merging every thread's partial tree of one consumer into one tree
 * (what the writers print), and the per-kernel rows of the console table.
 *
 * Runs under pn_mu, concurrently with recording threads: per-thread node counts are
 * read with acquire, values with relaxed loads (see pn_tree.c). Threads are visited
 * in tid order and nodes in creation order, so children appear in first-insertion
 * order and single-threaded output is deterministic. Merge keys are (parent, kind,
 * interned name) — plus the grid for kernel nodes when 'by_grid' (console, results)
 * — so specialisations of one kernel name share a node, as in upstream Proton.
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t
key_hash(int32_t parent, int kind, uint32_t name, const int32_t g[3])
{
    uint64_t h = ((uint64_t)(uint32_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)kind << 60;
    h ^= (uint64_t)(uint32_t)g[0] * 0xff51afd7ed558ccdull ^ (uint64_t)(uint32_t)g[1] << 17 ^
         (uint64_t)(uint32_t)g[2] << 41;
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ (h >> 29));
}

static int
rehash(PnTree *tr, uint32_t cap)
{
    int32_t *h = malloc(cap * sizeof *h);
    if (!h)
        return -ENOMEM;
    memset(h, 0xff, cap * sizeof *h);
    for (uint32_t i = 1; i < tr->n; i++) {
        PnTNode *x = &tr->nodes[i];
        uint32_t j = key_hash(x->parent, x->kind, x->name, x->grid) & (cap - 1);
        while (h[j] >= 0)
            j = (j + 1) & (cap - 1);
        h[j] = (int32_t)i;
    }
    free(tr->hidx);
    tr->hidx = h;
    tr->hcap = cap;
    return 0;
}

static int32_t
tree_add(PnTree *tr, int32_t parent, int kind, uint32_t name, const int32_t g[3])
{
    PnTNode *x;
    if (tr->n == tr->cap) {
        uint32_t cap = tr->cap ? tr->cap * 2 : 64;
        PnTNode *nn = realloc(tr->nodes, cap * sizeof *nn);
        if (!nn)
            return -1;
        tr->nodes = nn;
        tr->cap = cap;
    }
    x = &tr->nodes[tr->n];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->kind = (uint8_t)kind;
    x->parent = parent;
    x->first = x->last = x->next = -1;
    memcpy(x->grid, g, sizeof x->grid);
    x->tmin = UINT64_MAX;
    if (parent >= 0) {
        PnTNode *p = &tr->nodes[parent];
        if (p->last >= 0)
            tr->nodes[p->last].next = (int32_t)tr->n;
        else
            p->first = (int32_t)tr->n;
        p->last = (int32_t)tr->n;
    }
    return (int32_t)tr->n++;
}

/* the child with this key, created when absent; -1 on allocation failure */
static int32_t
tree_child(PnTree *tr, int32_t parent, int kind, uint32_t name, const int32_t g[3])
{
    uint32_t j;
    int32_t i;
    if ((tr->n + 1) * 2 > tr->hcap && rehash(tr, tr->hcap ? tr->hcap * 2 : 256) < 0)
        return -1;
    for (j = key_hash(parent, kind, name, g) & (tr->hcap - 1); (i = tr->hidx[j]) >= 0;
         j = (j + 1) & (tr->hcap - 1)) {
        PnTNode *x = &tr->nodes[i];
        if (x->parent == parent && x->kind == kind && x->name == name && x->grid[0] == g[0] &&
            x->grid[1] == g[1] && x->grid[2] == g[2])
            return i;
    }
    if ((i = tree_add(tr, parent, kind, name, g)) >= 0)
        tr->hidx[j] = i;
    return i;
}

/* element-wise sum (or overwrite, for properties) of a thread's vector into 'u' */
static void
merge_vec(PnUMetric *u, const PnMetric *m)
{
    for (uint32_t k = 0; k < u->len; k++) {
        if (u->kind == PN_MK_INT_VEC) {
            int64_t iv = PN_LD(&m->vec[k].i);
            u->vec[k].i = (m->flags & PN_MF_PTY) ? iv : u->vec[k].i + iv;
        } else {
            double dv;
            __atomic_load(&m->vec[k].d, &dv, __ATOMIC_RELAXED);
            u->vec[k].d = (m->flags & PN_MF_PTY) ? dv : u->vec[k].d + dv;
        }
    }
}

static void
merge_scalar(PnUMetric *u, const PnMetric *m)
{
    if (m->kind == PN_METRIC_INT) {
        int64_t iv = PN_LD(&m->v.i);
        u->v.i = (m->flags & PN_MF_PTY) ? iv : u->v.i + iv;
    } else {
        double dv;
        __atomic_load(&m->v.d, &dv, __ATOMIC_RELAXED);
        u->v.d = (m->flags & PN_MF_PTY) ? dv : u->v.d + dv;
    }
}

/* Sums a thread's user metrics into the merged node. A name another thread added with
 * a different type or vector length on the same path keeps the first thread's value. */
static int
merge_metrics(PnTNode *x, const PnPNode *p)
{
    for (const PnMetric *m = PN_ACQ(&p->metrics); m; m = m->next) {
        PnUMetric *u;
        for (u = x->um; u && u->name != m->name; u = u->next)
            ;
        if (!u) {
            if (!(u = calloc(1, sizeof *u + m->len * sizeof *u->vec)))
                return -ENOMEM;
            u->name = m->name;
            u->kind = m->kind;
            u->flags = m->flags;
            u->len = m->len;
            u->next = x->um;
            x->um = u;
        } else if (u->kind != m->kind || u->len != m->len) {
            continue;
        }
        if (m->kind & PN_MK_VEC) /* a new 'u' is zero: the sum is the first value */
            merge_vec(u, m);
        else
            merge_scalar(u, m);
    }
    return 0;
}

static void
merge_values(PnTNode *x, const PnPNode *p, const PnSite *site)
{
    uint64_t count = PN_LD(&p->count), programs = PN_LD(&p->programs);
    uint64_t tmin = PN_LD(&p->tmin), tmax = PN_LD(&p->tmax);
    uint32_t threads = PN_LD(&p->threads), cn = PN_LD(&p->ctr_n);
    double norm;
    __atomic_load(&p->norm, &norm, __ATOMIC_RELAXED);
    x->count += count;
    x->ticks += PN_LD(&p->ticks);
    x->wall += PN_LD(&p->wall);
    x->programs += programs;
    x->norm += norm;
    if (count && tmin < x->tmin)
        x->tmin = tmin;
    if (count && tmax > x->tmax)
        x->tmax = tmax;
    if (threads > x->threads)
        x->threads = threads;
    if (cn > x->ctr_n)
        x->ctr_n = cn;
    for (uint32_t i = 0; i < cn && i < PN_MAX_COUNTERS; i++)
        x->ctr[i] += PN_LD(&p->ctr[i]);
    if (p->kind == PN_NODE_KSCOPE && PN_LD(&p->cost_n)) { /* a scope's share of the static cost */
        double c[4];
        for (int k = 0; k < 4; k++)
            __atomic_load(&p->cost[k], &c[k], __ATOMIC_RELAXED);
        x->has_bytes |= c[0] > 0;
        x->bytes += c[0];
        for (int k = 0; k < 3; k++) {
            x->has_flops[k] |= c[1 + k] > 0;
            x->flops[k] += c[1 + k];
        }
    } else if (p->kind == PN_NODE_KERNEL && site && PN_LD(&p->cost_n)) { /* costed launch by launch */
        double c[4];
        for (int k = 0; k < 4; k++)
            __atomic_load(&p->cost[k], &c[k], __ATOMIC_RELAXED);
        if (!x->site)
            x->site = p->key;
        x->has_bytes |= c[0] > 0;
        x->bytes += c[0];
        for (int k = 0; k < 3; k++) {
            x->has_flops[k] |= c[1 + k] > 0;
            x->flops[k] += c[1 + k];
        }
        x->cost_inexact += PN_LD(&p->cost_inexact);
    } else if (p->kind == PN_NODE_KERNEL && site) {
        if (!x->site)
            x->site = p->key;
        if (site->bytes_per_program) {
            x->has_bytes = 1;
            x->bytes += (double)site->bytes_per_program * (double)programs;
        }
        for (int k = 0; k < 3; k++) {
            if (site->flops_per_program[k] > 0) {
                x->has_flops[k] = 1;
                x->flops[k] += site->flops_per_program[k] * (double)programs;
            }
        }
    }
}

/* merges one thread's tree; lsite[] tracks each local node's kernel site */
static int
merge_thread(PnTree *tr, PnTSlot *ts)
{
    static const int32_t zero[3];
    uint32_t n = PN_ACQ(&ts->nnodes);
    int32_t *map = malloc(n * sizeof *map);
    uint32_t *lsite = malloc(n * sizeof *lsite);
    int rc = 0;
    if (!map || !lsite) {
        rc = -ENOMEM;
        goto out;
    }
    map[0] = 0;
    lsite[0] = 0;
    rc = merge_metrics(&tr->nodes[0], pn_pnode(ts, 0));
    for (uint32_t i = 1; i < n && rc == 0; i++) {
        PnPNode *p = pn_pnode(ts, (int32_t)i);
        const PnSite *site;
        uint32_t name = p->key;
        int32_t parent = map[p->parent], m;
        lsite[i] = p->kind == PN_NODE_KERNEL ? p->key : lsite[p->parent];
        site = pn_site_get(lsite[i]);
        map[i] = -1;
        if (parent < 0)
            continue;
        if (p->kind == PN_NODE_KERNEL)
            name = site ? site->name_id : pn_name_intern("<unknown kernel>");
        else if (p->kind == PN_NODE_KSCOPE)
            name = site && p->key < site->nscopes ? site->scope_name_ids[p->key] : 0;
        m = tree_child(tr, parent, p->kind, name,
                       tr->by_grid && p->kind == PN_NODE_KERNEL ? p->grid : zero);
        if (m < 0) {
            rc = -ENOMEM;
            break;
        }
        map[i] = m;
        merge_values(&tr->nodes[m], p, p->kind == PN_NODE_KERNEL ? site : NULL);
        if (p->kind == PN_NODE_KERNEL)
            tr->launches += PN_LD(&p->count);
        rc = merge_metrics(&tr->nodes[m], p);
    }
out:
    free(map);
    free(lsite);
    return rc;
}

/* Builds the merged tree of consumer (slot, ctick). Holds pn_mu. On failure the
 * tree is empty but valid; always call pn_tree_fini(). 0 or -ENOMEM. */
int
pn_tree_build(PnTree *tr, int slot, uint64_t ctick, int by_grid)
{
    static const int32_t zero[3];
    int rc = 0;
    memset(tr, 0, sizeof *tr);
    tr->by_grid = by_grid;
    if (tree_add(tr, -1, PN_NODE_ROOT, pn_name_intern("ROOT"), zero) < 0)
        return -ENOMEM;
    if (!ctick)
        return 0;
    for (PnTls *t = pn_tls_first(); t && rc == 0; t = pn_tls_next(t)) {
        PnTSlot *ts = PN_ACQ(&t->slot[slot]);
        if (ts && ts->ctick == ctick)
            rc = merge_thread(tr, ts);
    }
    return rc;
}

void
pn_tree_fini(PnTree *tr)
{
    for (uint32_t i = 0; i < tr->n; i++) {
        PnUMetric *u = tr->nodes[i].um, *n;
        for (; u; u = n) {
            n = u->next;
            free(u);
        }
    }
    free(tr->nodes);
    free(tr->hidx);
    memset(tr, 0, sizeof *tr);
}

/* ---- kernel rows ------------------------------------------------------------------- */

static int
row_cmp_key(const void *a, const void *b)
{
    const PnKRow *x = a, *y = b;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return memcmp(x->grid, y->grid, sizeof x->grid);
}

static int
row_cmp_time(const void *a, const void *b)
{
    const PnKRow *x = a, *y = b;
    if (x->ticks != y->ticks)
        return x->ticks > y->ticks ? -1 : 1;
    return strcmp(pn_name_get(x->name), pn_name_get(y->name));
}

/* One row per (kernel name, grid) over every path of the tree, by total time
 * (longest first). Caller owns *rows (free()). 0 or -ENOMEM. */
int
pn_tree_kernel_rows(const PnTree *tr, PnKRow **rows, uint32_t *nrows)
{
    PnKRow *r = malloc((tr->n ? tr->n : 1) * sizeof *r);
    uint32_t n = 0, m = 0;
    if (!r)
        return -ENOMEM;
    for (uint32_t i = 0; i < tr->n; i++) {
        const PnTNode *x = &tr->nodes[i];
        if (x->kind != PN_NODE_KERNEL || !x->count)
            continue;
        memset(&r[n], 0, sizeof r[n]);
        r[n].name = x->name;
        memcpy(r[n].grid, x->grid, sizeof x->grid);
        r[n].count = x->count;
        r[n].ticks = x->ticks;
        r[n].tmin = x->tmin;
        r[n].tmax = x->tmax;
        r[n].ctr_n = x->ctr_n;
        memcpy(r[n].ctr, x->ctr, sizeof x->ctr);
        n++;
    }
    qsort(r, n, sizeof *r, row_cmp_key);
    for (uint32_t i = 0; i < n; i++) {
        if (m && row_cmp_key(&r[m - 1], &r[i]) == 0) {
            PnKRow *d = &r[m - 1];
            d->count += r[i].count;
            d->ticks += r[i].ticks;
            d->tmin = r[i].tmin < d->tmin ? r[i].tmin : d->tmin;
            d->tmax = r[i].tmax > d->tmax ? r[i].tmax : d->tmax;
            d->ctr_n = r[i].ctr_n > d->ctr_n ? r[i].ctr_n : d->ctr_n;
            for (int k = 0; k < PN_MAX_COUNTERS; k++)
                d->ctr[k] += r[i].ctr[k];
        } else {
            r[m++] = r[i];
        }
    }
    qsort(r, m, sizeof *r, row_cmp_time);
    *rows = r;
    *nrows = m;
    return 0;
}

/* ---- scope rows ---------------------------------------------------------------------- */

typedef struct SRows {
    PnSRow *v;
    uint32_t n, cap;
} SRows;

static int
srow_add(SRows *r, const char *path, uint32_t depth, const PnTNode *x)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (strcmp(r->v[i].path, path) == 0) {
            r->v[i].count += x->count;
            r->v[i].wall += x->wall;
            r->v[i].cpu += x->ticks;
            return 0;
        }
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? r->cap * 2 : 8;
        PnSRow *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    PnSRow *d = &r->v[r->n++];
    snprintf(d->path, sizeof d->path, "%s", path);
    d->depth = depth;
    d->count = x->count;
    d->wall = x->wall;
    d->cpu = x->ticks;
    return 0;
}

/* in-kernel scope nodes below node i, depth first; 'path' holds the names above */
static int
srows_walk(const PnTree *tr, int32_t i, char *path, size_t len, uint32_t depth, SRows *r)
{
    for (int32_t c = tr->nodes[i].first; c >= 0; c = tr->nodes[c].next) {
        const PnTNode *x = &tr->nodes[c];
        if (x->kind != PN_NODE_KSCOPE)
            continue;
        size_t l = len;
        int k = snprintf(path + len, 256 - len, "%s%s", len ? "/" : "", pn_name_get(x->name));
        l = k < 0 ? len : len + (size_t)k < 255 ? len + (size_t)k : 255;
        if (srow_add(r, path, depth, x) < 0 || srows_walk(tr, c, path, l, depth + 1, r) < 0)
            return -ENOMEM;
        path[len] = 0;
    }
    return 0;
}

int
pn_tree_scope_rows(const PnTree *tr, const PnKRow *k, PnSRow **rows, uint32_t *n)
{
    SRows r = { 0 };
    char path[256] = "";
    for (uint32_t i = 0; i < tr->n; i++) {
        const PnTNode *x = &tr->nodes[i];
        if (x->kind != PN_NODE_KERNEL || x->name != k->name || memcmp(x->grid, k->grid, sizeof x->grid))
            continue;
        if (srows_walk(tr, (int32_t)i, path, 0, 1, &r) < 0) {
            free(r.v);
            return -ENOMEM;
        }
    }
    *rows = r.v;
    *n = r.n;
    return 0;
}
