/*
 * pn_scope.c — host scopes (proton.scope, enter_scope/exit_scope) and scope metrics.
 *
 * Each thread keeps one stack of host frames; each frame remembers which consumers
 * it was pushed on (those recording at enter time), so deactivating or finishing a
 * session between enter and exit leaves every consumer's own stack balanced. Scope
 * ids come from one process-wide counter starting at 1. In each consumer the scope
 * becomes a child node of the thread's current node (same name at the same path =
 * same node); kernels launched meanwhile become its children. Consumers that keep a
 * timeline also get one host-scope event at exit; a trace written while a scope is
 * still open reads the thread's stack (pn_scope_open), so the owner publishes its
 * frames with release stores and each frame carries its id as a sequence number.
 * Python-context sessions get no scope nodes (their call paths are Python stacks):
 * a scope is pushed only on the other consumers, and its frame keeps the Python
 * path pending at enter (pn_python_frames), where those sessions put its metrics.
 * Semantics: reference/proton.md §1.4 (metrics, suffixes, the type-mismatch text),
 * §1.5 (states), §1.8 (python context). A state (pn_state_enter) is the last element
 * of the call path: a scope entered while one is set keeps its own node (kernels and
 * inner scopes go below it) and its metrics go to the state's leaf below it; each
 * stack entry remembers that node (mnode) and the id of the frame that pushed it
 * (sid), so a pop never takes an entry another frame pushed. Vector metrics are summed element-wise and keep their
 * length and element type.
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t scope_next;

uint64_t
pn_scope_enter(const char *name)
{
    uint64_t id = __atomic_add_fetch(&scope_next, 1, __ATOMIC_RELAXED), now;
    uint32_t mask = PN_LD(&pn_rec_mask), nid, m, pushed = 0, d, pypath;
    PnHostFrame *f;
    PnTls *t = pn_tls_cur;
    if (!mask && !t)
        return id;
    if (!t && !(t = pn_tls()))
        return id;
    pn_tls_maybe_gc(t);
    pypath = t->pypend;
    t->pypend = 0;
    if (PN_UNLIKELY((d = t->hdepth) >= PN_MAX_DEPTH)) {
        t->hover++;
        return id;
    }
    nid = mask ? pn_name_cached(t, name ? name : "") : 0;
    f = &t->hstack[d];
    PN_ST(&f->id, 0); /* writers may read the frame meanwhile: see pn_scope_open */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    f->pypath = pypath;
    f->state[0] = t->state[0];
    f->state[1] = t->state[1];
    now = pn_now();
    for (m = mask & ~PN_LD(&pn_py_mask); m; m &= m - 1) {
        int s = __builtin_ctz(m);
        uint64_t ct = PN_LD(&pn_slot_ctick[s]);
        PnTSlot *ts;
        int32_t node;
        if (!ct || ct > now || !(ts = pn_tls_slot(t, s, ct)) || ts->depth >= PN_MAX_DEPTH)
            continue;
        node = pn_tslot_child(ts, ts->depth ? ts->stack[ts->depth - 1] : 0, PN_NODE_HOST, nid, NULL);
        if (node < 0)
            continue;
        ts->stack[ts->depth] = node;
        ts->mnode[ts->depth] = PN_UNLIKELY(t->state[0]) ? pn_state_node(ts, node, t->state) : node;
        if (ts->mnode[ts->depth] < 0)
            ts->mnode[ts->depth] = node;
        ts->sid[ts->depth++] = id;
        pushed |= 1u << s;
    }
    PN_ST(&f->name, nid);
    PN_ST(&f->mask, pushed);
    PN_ST(&f->tmask, pushed & PN_LD(&pn_trace_mask));
    PN_ST(&f->mtick, now);
    PN_ST(&f->t0, now); /* one clock read: host scopes are long, the bookkeeping is not */
    PN_REL(&f->id, id);
    PN_REL(&t->hdepth, d + 1);
    return id;
}

int
pn_scope_exit(uint64_t scope_id)
{
    uint64_t now = pn_now();
    PnTls *t = pn_tls_cur;
    PnHostFrame *f;
    PnRec *r;
    uint32_t d;
    int rc = 0;
    if (t && t->hover) {
        t->hover--;
        return 0;
    }
    if (!t || !t->hdepth) {
        pn_set_error(EINVAL, "Context stack is empty");
        return -EINVAL;
    }
    d = t->hdepth - 1;
    f = &t->hstack[d];
    for (uint32_t m = f->mask; m; m &= m - 1) {
        int s = __builtin_ctz(m);
        PnTSlot *ts = t->slot[s];
        if (ts && ts->ctick == PN_LD(&pn_slot_ctick[s]) && ts->depth && ts->sid[ts->depth - 1] == f->id)
            ts->depth--;
    }
    if (f->tmask && (r = pn_buf_reserve(t, PN_BUDGET_HOST, 1, f->tmask, f->mtick))) {
        memset(r, 0, sizeof *r);
        r->kind = PN_EV_HOST;
        r->depth = (uint16_t)d;
        r->mask = f->tmask;
        r->id = f->name;
        r->t0 = f->t0;
        r->t1 = now;
        r->mtick = f->mtick;
        r->seq = f->id;
        pn_buf_commit(t, 1);
    }
    /* popped after the record is published: a writer sees the scope open, closed, or
     * both (and then keeps the record), never neither */
    PN_REL(&t->hdepth, d);
    if (scope_id && scope_id != f->id) {
        pn_set_error(EINVAL, "Context stack is not balanced");
        rc = -EINVAL;
    }
    return rc;
}

/* ---- states ------------------------------------------------------------------------ */

static const char META[] = "__proton_launch_metadata";

int
pn_state_enter(const char *name)
{
    PnTls *t = pn_tls();
    const char *colon;
    if (!t)
        return -ENOMEM;
    if (!name || !*name) {
        t->state[0] = t->state[1] = 0;
        return 0;
    }
    if (strncmp(name, META, sizeof META - 1) == 0 && name[sizeof META - 1] == ':') {
        colon = name + sizeof META - 1;
        t->state[0] = pn_name_cached(t, META);
        t->state[1] = colon[1] ? pn_name_cached(t, colon + 1) : 0;
    } else {
        t->state[0] = pn_name_cached(t, name);
        t->state[1] = 0;
    }
    return t->state[0] ? 0 : -ENOMEM;
}

void
pn_state_exit(void)
{
    PnTls *t = pn_tls_cur;
    if (t)
        t->state[0] = t->state[1] = 0;
}

int32_t
pn_state_node(PnTSlot *s, int32_t node, const uint32_t st[2])
{
    for (int i = 0; i < 2 && st[i] && node >= 0; i++)
        node = pn_tslot_child(s, node, PN_NODE_HOST, st[i], NULL);
    return node;
}

/* Frame 'f' as a record, read while its owner may rewrite it: the id works as a
 * seqlock sequence (0 while written, never reused). 0 when the frame changed or is
 * not newer than 'prev' (the frame below it), i.e. not part of one consistent stack. */
static int
read_frame(const PnHostFrame *f, uint64_t prev, uint32_t depth, PnRec *r)
{
    uint64_t id = PN_ACQ(&f->id), t0 = PN_LD(&f->t0), mtick = PN_LD(&f->mtick);
    uint32_t name = PN_LD(&f->name), tmask = PN_LD(&f->tmask), mask = PN_LD(&f->mask);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!id || id <= prev || PN_LD(&f->id) != id)
        return 0;
    memset(r, 0, sizeof *r);
    r->kind = PN_EV_HOST;
    r->aux = PN_REC_OPEN;
    r->depth = (uint16_t)depth;
    r->mask = tmask;
    r->id = name;
    r->t0 = t0;
    r->mtick = mtick;
    r->seq = id;
    r->site = mask; /* for pn_scope_open_all */
    return 1;
}

/* The host scopes open on thread 't' that consumer (slot, ctick) records, outermost
 * first, as PN_EV_HOST records marked PN_REC_OPEN with t1 = 0 (the writer sets the
 * end). The owner may push and pop meanwhile, so the stack is read like a seqlock:
 * frames bottom-up (each consistent, ids increasing), then the depth again (scopes
 * popped since are in the timeline: their record is appended before the pop), then
 * every id again; the frames up to the first one that changed form a stack that
 * really existed. Holds pn_mu (so 't' stays allocated). Returns a malloc'ed array
 * (NULL when nothing is open or out of memory) and its size in *n. */
PnRec *
pn_scope_open_all(const PnTls *t, uint32_t *n)
{
    uint32_t d = PN_ACQ(&t->hdepth), k;
    PnRec *out;
    *n = 0;
    if (d > PN_MAX_DEPTH)
        d = PN_MAX_DEPTH;
    if (!d || !(out = calloc(d, sizeof *out)))
        return NULL;
    for (k = 0; k < d && read_frame(&t->hstack[k], k ? out[k - 1].seq : 0, k, &out[k]); k++)
        ;
    d = PN_ACQ(&t->hdepth);
    if (k > d)
        k = d;
    for (uint32_t i = 0; i < k; i++)
        if (PN_LD(&t->hstack[i].id) != out[i].seq)
            k = i;
    if (!k) {
        free(out);
        return NULL;
    }
    *n = k;
    return out;
}

PnRec *
pn_scope_open(const PnTls *t, int slot, uint64_t ctick, uint32_t *n)
{
    uint32_t bit = 1u << slot, k;
    PnRec *out = pn_scope_open_all(t, &k);
    *n = 0;
    if (!out)
        return NULL;
    for (uint32_t i = 0; i < k; i++)
        if ((out[i].mask & bit) && out[i].mtick >= ctick)
            out[(*n)++] = out[i];
    if (!*n) {
        free(out);
        return NULL;
    }
    return out;
}

/* ---- metrics ------------------------------------------------------------------------ */

/* strips a trailing "(exc)" / "(pty)" (and the spaces before it) into 'out' */
int
pn_metric_flags(const char *name, char *out, size_t n)
{
    size_t l = strlen(name);
    int flags = 0;
    if (l >= n)
        l = n - 1;
    memcpy(out, name, l);
    out[l] = '\0';
    if (l >= 5 && strcmp(out + l - 5, "(exc)") == 0)
        flags = PN_MF_EXC;
    else if (l >= 5 && strcmp(out + l - 5, "(pty)") == 0)
        flags = PN_MF_PTY;
    if (flags) {
        l -= 5;
        while (l && out[l - 1] == ' ')
            l--;
        out[l] = '\0';
    }
    return flags;
}

/* upstream's C++ type names */
static const char *
kind_name(int kind)
{
    static const char *const names[4] = { "int64_t", "double", "std::vector<int64_t>",
                                          "std::vector<double>" };
    return names[kind & 3];
}

/* roofline names have fixed types (upstream metric.py): flops* float, bytes int */
int
pn_metric_kind(const char *name, int kind)
{
    if (strcmp(name, "bytes") == 0)
        return PN_METRIC_INT;
    if (strncmp(name, "flops", 5) == 0 &&
        (!name[5] || !strcmp(name + 5, "8") || !strcmp(name + 5, "16") ||
         !strcmp(name + 5, "32") || !strcmp(name + 5, "64")))
        return PN_METRIC_DOUBLE;
    return kind;
}

/* The node metrics go to in consumer 's', or NULL: the innermost scope's node, or,
 * in a python-context session, the node of the Python path given at its enter. */
static PnPNode *
metric_node(PnTls *t, int s, uint32_t pymask)
{
    uint64_t ct = PN_LD(&pn_slot_ctick[s]);
    PnTSlot *ts;
    int32_t node;
    if (!ct || !(ts = pn_tls_slot(t, s, ct)))
        return NULL;
    if (PN_UNLIKELY(pymask & (1u << s)))
        node = pn_tslot_path(ts, t->hdepth ? t->hstack[t->hdepth - 1].pypath : 0);
    else
        node = ts->depth ? ts->mnode[ts->depth - 1] : 0;
    return node < 0 ? NULL : pn_pnode(ts, node);
}

/* A metric about to be added: its interned, stripped name and flags, the kind after
 * the roofline coercion, and the nodes it goes to in each recording consumer. */
typedef struct MAdd {
    char stripped[256];
    uint32_t nid;
    int flags, kind;
    uint32_t len;                  /* vectors */
    PnPNode *node[PN_NSLOTS];
    int nnode;
} MAdd;

/* fills 'a' for a value of 'kind' (PN_MK_VEC set for vectors); 0 or -errno */
static int
madd_prepare(MAdd *a, PnTls *t, uint32_t mask, const char *name, int kind, uint32_t len)
{
    uint32_t pymask = PN_LD(&pn_py_mask);
    a->flags = pn_metric_flags(name, a->stripped, sizeof a->stripped);
    a->kind = pn_metric_kind(a->stripped, kind & 1) | (kind & PN_MK_VEC);
    a->len = len;
    a->nnode = 0;
    if (!(a->nid = pn_name_cached(t, a->stripped)))
        return -ENOMEM;
    for (uint32_t m = mask; m; m &= m - 1) {
        PnPNode *n = metric_node(t, __builtin_ctz(m), pymask);
        PnMetric *old = n ? pn_node_metric(n, a->nid) : NULL;
        if (old && old->kind != a->kind) {
            pn_set_error(EINVAL, "Metric value type mismatch for valueId 0 (%s): current=%s, new=%s",
                         a->stripped, kind_name(old->kind), kind_name(a->kind));
            return -EINVAL;
        }
        if (old && (a->kind & PN_MK_VEC) && old->len != len) {
            pn_set_error(EINVAL, "Vector metric size mismatch for valueId 0 (%s): current=%u, new=%u",
                         a->stripped, old->len, len);
            return -EINVAL;
        }
        if (n)
            a->node[a->nnode++] = n;
    }
    return 0;
}

int
pn_scope_add_metric(const char *name, int kind, int64_t ival, double dval)
{
    uint32_t mask = PN_LD(&pn_rec_mask);
    MAdd a;
    PnTls *t;
    int rc;
    if (!mask)
        return 0;
    if (!name || (kind != PN_METRIC_INT && kind != PN_METRIC_DOUBLE)) {
        pn_set_error(EINVAL, "pn_scope_add_metric: bad name or kind");
        return -EINVAL;
    }
    if (!(t = pn_tls()))
        return -ENOMEM;
    if ((rc = madd_prepare(&a, t, mask, name, kind, 0)) < 0)
        return rc;
    if (a.kind != kind) {
        if (a.kind == PN_METRIC_INT)
            ival = (int64_t)dval;
        else
            dval = (double)ival;
    }
    for (int i = 0; i < a.nnode; i++)
        if (pn_node_metric_add(a.node[i], a.nid, a.kind, a.flags, ival, dval) < 0)
            return -ENOMEM;
    return 0;
}

/* the n values as 'kind' elements (PN_METRIC_INT / _DOUBLE), converting when the
 * roofline coercion changed the type */
static void
vec_values(PnMVal *out, int kind, const int64_t *iv, const double *dv, int from, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        if (kind == PN_METRIC_INT)
            out[k].i = from == PN_METRIC_INT ? iv[k] : (int64_t)dv[k];
        else
            out[k].d = from == PN_METRIC_DOUBLE ? dv[k] : (double)iv[k];
    }
}

int
pn_scope_add_metric_vec(const char *name, int kind, const int64_t *ivals, const double *dvals,
                        uint32_t n)
{
    uint32_t mask = PN_LD(&pn_rec_mask);
    PnMVal small[64], *v = small;
    MAdd a;
    PnTls *t;
    int rc;
    if (!mask)
        return 0;
    if (!name || (kind != PN_METRIC_INT && kind != PN_METRIC_DOUBLE) ||
        (n && !(kind == PN_METRIC_INT ? (const void *)ivals : (const void *)dvals))) {
        pn_set_error(EINVAL, "pn_scope_add_metric_vec: bad name, kind or values");
        return -EINVAL;
    }
    if (!(t = pn_tls()))
        return -ENOMEM;
    if ((rc = madd_prepare(&a, t, mask, name, kind | PN_MK_VEC, n)) < 0)
        return rc;
    if (n > 64 && !(v = malloc(n * sizeof *v)))
        return -ENOMEM;
    vec_values(v, a.kind & 1, ivals, dvals, kind, n);
    for (int i = 0; i < a.nnode && rc == 0; i++)
        rc = pn_node_metric_add_vec(a.node[i], a.nid, a.kind, a.flags, v, n);
    if (v != small)
        free(v);
    return rc;
}
