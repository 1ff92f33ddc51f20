/*
 * pn_scope.c — host scopes (proton.scope, enter_scope/exit_scope) and scope metrics.
 *
 * Each thread keeps one stack of host frames; each frame remembers which consumers
 * it was pushed on (those recording at enter time), so deactivating or finishing a
 * session between enter and exit leaves every consumer's own stack balanced. Scope
 * ids come from one process-wide counter starting at 1. In each consumer the scope
 * becomes a child node of the thread's current node (same name at the same path =
 * same node); kernels launched meanwhile become its children. Consumers that keep a
 * timeline also get one host-scope event at exit.
 * Semantics: reference/proton.md §1.4 (metrics, suffixes, the type-mismatch text).
 */
#include "pn_int.h"

#include <errno.h>
#include <string.h>

static uint64_t scope_next;

uint64_t
pn_scope_enter(const char *name)
{
    uint64_t id = __atomic_add_fetch(&scope_next, 1, __ATOMIC_RELAXED), now;
    uint32_t mask = PN_LD(&pn_rec_mask), nid, m;
    PnHostFrame *f;
    PnTls *t = pn_tls_cur;
    if (!mask && !t)
        return id;
    if (!t && !(t = pn_tls()))
        return id;
    pn_tls_maybe_gc(t);
    if (PN_UNLIKELY(t->hdepth >= PN_MAX_DEPTH)) {
        t->hover++;
        return id;
    }
    nid = mask ? pn_name_cached(t, name ? name : "") : 0;
    f = &t->hstack[t->hdepth++];
    f->name = nid;
    f->id = id;
    f->mask = 0;
    f->mtick = now = pn_now();
    for (m = mask; m; m &= m - 1) {
        int s = __builtin_ctz(m);
        uint64_t ct = PN_LD(&pn_slot_ctick[s]);
        PnTSlot *ts;
        int32_t node;
        if (!ct || ct > now || !(ts = pn_tls_slot(t, s, ct)) || ts->depth >= PN_MAX_DEPTH)
            continue;
        node = pn_tslot_child(ts, ts->depth ? ts->stack[ts->depth - 1] : 0, PN_NODE_HOST, nid, NULL);
        if (node < 0)
            continue;
        ts->stack[ts->depth++] = node;
        f->mask |= 1u << s;
    }
    f->tmask = f->mask & PN_LD(&pn_trace_mask);
    f->t0 = now; /* one clock read: host scopes are long, the bookkeeping is not */
    return id;
}

int
pn_scope_exit(uint64_t scope_id)
{
    uint64_t now = pn_now();
    PnTls *t = pn_tls_cur;
    PnHostFrame *f;
    PnRec *r;
    int rc = 0;
    if (t && t->hover) {
        t->hover--;
        return 0;
    }
    if (!t || !t->hdepth) {
        pn_set_error(EINVAL, "Context stack is empty");
        return -EINVAL;
    }
    f = &t->hstack[--t->hdepth];
    for (uint32_t m = f->mask; m; m &= m - 1) {
        int s = __builtin_ctz(m);
        PnTSlot *ts = t->slot[s];
        if (ts && ts->ctick == PN_LD(&pn_slot_ctick[s]) && ts->ctick <= f->mtick && ts->depth)
            ts->depth--;
    }
    if (f->tmask && (r = pn_buf_reserve(t, PN_BUDGET_HOST, 1, f->tmask, f->mtick))) {
        memset(r, 0, sizeof *r);
        r->kind = PN_EV_HOST;
        r->depth = (uint16_t)t->hdepth;
        r->mask = f->tmask;
        r->id = f->name;
        r->t0 = f->t0;
        r->t1 = now;
        r->mtick = f->mtick;
        r->seq = f->id;
        pn_buf_commit(t, 1);
    }
    if (scope_id && scope_id != f->id) {
        pn_set_error(EINVAL, "Context stack is not balanced");
        rc = -EINVAL;
    }
    return rc;
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

static const char *
kind_name(int kind)
{
    return kind == PN_METRIC_INT ? "int64_t" : "double";
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

/* the node metrics go to in consumer 's', or NULL */
static PnPNode *
metric_node(PnTls *t, int s)
{
    uint64_t ct = PN_LD(&pn_slot_ctick[s]);
    PnTSlot *ts;
    if (!ct || !(ts = pn_tls_slot(t, s, ct)))
        return NULL;
    return pn_pnode(ts, ts->depth ? ts->stack[ts->depth - 1] : 0);
}

int
pn_scope_add_metric(const char *name, int kind, int64_t ival, double dval)
{
    uint32_t mask = PN_LD(&pn_rec_mask), nid, m;
    char stripped[256];
    int flags, k;
    PnTls *t;
    if (!mask)
        return 0;
    if (!name || (kind != PN_METRIC_INT && kind != PN_METRIC_DOUBLE)) {
        pn_set_error(EINVAL, "pn_scope_add_metric: bad name or kind");
        return -EINVAL;
    }
    if (!(t = pn_tls()))
        return -ENOMEM;
    flags = pn_metric_flags(name, stripped, sizeof stripped);
    k = pn_metric_kind(stripped, kind);
    if (k != kind) {
        if (k == PN_METRIC_INT)
            ival = (int64_t)dval;
        else
            dval = (double)ival;
    }
    if (!(nid = pn_name_cached(t, stripped)))
        return -ENOMEM;
    for (m = mask; m; m &= m - 1) {
        PnPNode *n = metric_node(t, __builtin_ctz(m));
        PnMetric *old = n ? pn_node_metric(n, nid) : NULL;
        if (old && old->kind != k) {
            pn_set_error(EINVAL, "Metric value type mismatch for valueId 0 (%s): current=%s, new=%s",
                         stripped, kind_name(old->kind), kind_name(k));
            return -EINVAL;
        }
    }
    for (m = mask; m; m &= m - 1) {
        PnPNode *n = metric_node(t, __builtin_ctz(m));
        if (n && pn_node_metric_add(n, nid, k, flags, ival, dval) < 0)
            return -ENOMEM;
    }
    return 0;
}
