/*
 * pn_tree.c — per-thread partial call-path trees, one per consumer slot.
 *
 * Nodes live in chunks that never move (PN_NODE_CHUNK nodes each); a node is found
 * by an owner-only open-addressing hash on (parent, kind, key, grid), with the last
 * kernel lookup cached because Python loops launch the same kernel again and again.
 * The owner is the only writer; pn_tree_build (pn_merge.c) reads concurrently: node
 * fields are written before the node count is published with release, metric
 * values are written with relaxed atomics, and new user metrics are linked with a
 * release store. Values read during a launch may be one launch behind; that is all.
 * A vector metric keeps its elements in the metric's own allocation: its length is
 * fixed when it is created (a different length is an error, pn_scope.c).
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const int32_t zero_grid[3];

static uint32_t
node_hash(int32_t parent, int kind, uint32_t key, const int32_t g[3])
{
    uint64_t h = (uint64_t)(uint32_t)parent * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)kind << 56) ^ key;
    h *= 0xff51afd7ed558ccdull;
    h ^= (uint64_t)(uint32_t)g[0] ^ ((uint64_t)(uint32_t)g[1] << 21) ^ ((uint64_t)(uint32_t)g[2] << 42);
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ (h >> 32));
}

static int
node_eq(const PnPNode *n, int32_t parent, int kind, uint32_t key, const int32_t g[3])
{
    return n->parent == parent && n->kind == kind && n->key == key && n->grid[0] == g[0] &&
           n->grid[1] == g[1] && n->grid[2] == g[2];
}

static int
hash_grow(PnTSlot *s)
{
    uint32_t cap = s->hcap ? s->hcap * 2 : 64;
    int32_t *h = malloc(cap * sizeof *h);
    if (!h)
        return -1;
    memset(h, 0xff, cap * sizeof *h);
    for (uint32_t i = 0; i < s->hcap; i++) {
        int32_t idx = s->hidx[i];
        PnPNode *n;
        uint32_t j;
        if (idx < 0)
            continue;
        n = pn_pnode(s, idx);
        for (j = node_hash(n->parent, n->kind, n->key, n->grid) & (cap - 1); h[j] >= 0;
             j = (j + 1) & (cap - 1))
            ;
        h[j] = idx;
    }
    free(s->hidx);
    s->hidx = h;
    s->hcap = cap;
    return 0;
}

static void
node_init(PnPNode *n, int32_t parent, int kind, uint32_t key, const int32_t g[3])
{
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->kind = (uint8_t)kind;
    n->key = key;
    memcpy(n->grid, g, sizeof n->grid);
    n->tmin = UINT64_MAX;
}

/* Caller owns the result; free with pn_tslot_destroy(). NULL on allocation failure. */
PnTSlot *
pn_tslot_create(uint64_t ctick)
{
    PnTSlot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (!(s->chunk[0] = malloc(PN_NODE_CHUNK * sizeof(PnPNode))) || hash_grow(s) < 0) {
        pn_tslot_destroy(s);
        return NULL;
    }
    s->ctick = ctick;
    node_init(&s->chunk[0][0], -1, PN_NODE_ROOT, 0, zero_grid);
    s->nnodes = 1;
    s->c_node = -1;
    return s;
}

void
pn_tslot_destroy(PnTSlot *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        PnMetric *m = pn_pnode(s, (int32_t)i)->metrics, *n;
        for (; m; m = n) {
            n = m->next;
            free(m);
        }
    }
    for (int c = 0; c < PN_NODE_CHUNKS && s->chunk[c]; c++)
        free(s->chunk[c]);
    free(s->hidx);
    free(s);
}

/* Index of the child of 'parent' with this identity, created when absent (owner
 * only). Returns -1 when the tree is full or memory runs out. */
int32_t
pn_tslot_child(PnTSlot *s, int32_t parent, int kind, uint32_t key, const int32_t grid[3])
{
    const int32_t *g = grid ? grid : zero_grid;
    uint32_t j, n = s->nnodes;
    if ((s->hn + 1) * 2 > s->hcap && hash_grow(s) < 0)
        return -1;
    for (j = node_hash(parent, kind, key, g) & (s->hcap - 1); s->hidx[j] >= 0;
         j = (j + 1) & (s->hcap - 1)) {
        if (node_eq(pn_pnode(s, s->hidx[j]), parent, kind, key, g))
            return s->hidx[j];
    }
    if (n >= (uint32_t)PN_NODE_CHUNK * PN_NODE_CHUNKS)
        return -1;
    if (!s->chunk[n / PN_NODE_CHUNK]) {
        PnPNode *c = malloc(PN_NODE_CHUNK * sizeof(PnPNode));
        if (!c)
            return -1;
        PN_REL(&s->chunk[n / PN_NODE_CHUNK], c);
    }
    node_init(pn_pnode(s, (int32_t)n), parent, kind, key, g);
    s->hidx[j] = (int32_t)n;
    s->hn++;
    PN_REL(&s->nnodes, n + 1);
    return (int32_t)n;
}

/* The node's user metric called 'name', or NULL. */
PnMetric *
pn_node_metric(PnPNode *n, uint32_t name)
{
    for (PnMetric *m = n->metrics; m; m = m->next)
        if (m->name == name)
            return m;
    return NULL;
}

/* Adds (or, for properties, sets) a user metric on a node (owner only). The caller
 * has checked that an existing metric has the same kind. 0 or -ENOMEM. */
int
pn_node_metric_add(PnPNode *n, uint32_t name, int kind, int flags, int64_t i, double d)
{
    PnMetric *m = pn_node_metric(n, name);
    if (m) {
        if (kind == PN_METRIC_INT) {
            int64_t v = (flags & PN_MF_PTY) ? i : m->v.i + i;
            PN_ST(&m->v.i, v);
        } else {
            double v = (flags & PN_MF_PTY) ? d : m->v.d + d;
            __atomic_store(&m->v.d, &v, __ATOMIC_RELAXED);
        }
        return 0;
    }
    if (!(m = calloc(1, sizeof *m)))
        return -ENOMEM;
    m->name = name;
    m->kind = (uint8_t)kind;
    m->flags = (uint8_t)flags;
    if (kind == PN_METRIC_INT)
        m->v.i = i;
    else
        m->v.d = d;
    m->next = n->metrics;
    PN_REL(&n->metrics, m);
    return 0;
}

/* Adds (or, for properties, sets) a vector metric of 'len' elements on a node (owner
 * only); kind is PN_MK_INT_VEC or PN_MK_DOUBLE_VEC. The caller has checked that an
 * existing metric has the same kind and length. 0 or -ENOMEM. */
int
pn_node_metric_add_vec(PnPNode *n, uint32_t name, int kind, int flags, const PnMVal *v,
                       uint32_t len)
{
    PnMetric *m = pn_node_metric(n, name);
    int pty = flags & PN_MF_PTY;
    if (m) {
        for (uint32_t k = 0; k < len; k++) {
            if (kind == PN_MK_INT_VEC) {
                PN_ST(&m->vec[k].i, pty ? v[k].i : m->vec[k].i + v[k].i);
            } else {
                double d = pty ? v[k].d : m->vec[k].d + v[k].d;
                __atomic_store(&m->vec[k].d, &d, __ATOMIC_RELAXED);
            }
        }
        return 0;
    }
    if (!(m = calloc(1, sizeof *m + len * sizeof *v)))
        return -ENOMEM;
    m->name = name;
    m->kind = (uint8_t)kind;
    m->flags = (uint8_t)flags;
    m->len = len;
    if (len)
        memcpy(m->vec, v, len * sizeof *v);
    m->next = n->metrics;
    PN_REL(&n->metrics, m);
    return 0;
}
