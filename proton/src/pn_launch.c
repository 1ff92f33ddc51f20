/*
 * pn_launch.c — the launch hooks (runtime) and the in-kernel record functions.
 *
 * pn_launch_begin snapshots the consumers that record now (pn_rec_mask) and gives
 * the launch a worker slot per OpenMP thread in the launching thread's scratch.
 * Each worker writes only its own slot: counter deltas between pn_worker_begin and
 * pn_worker_end, and its in-kernel scope aggregates (one PnKNode per distinct scope
 * path, found through the worker's child table). pn_launch_end runs after the
 * parallel region has joined, so it reads every slot without atomics, sums them into
 * the launching thread's per-consumer trees (the kernel node under the thread's
 * current host scope, or, in python-context sessions, under the node of the Python
 * call path pending at begin; in-kernel scope nodes below it) and appends one launch
 * record to the timeline (its aux field holds the Python path id). Program and
 * scope events go to the worker's own timeline. Nothing here locks; allocation
 * happens only when a thread first records, when a scratch or table must grow, once
 * per PN_CHUNK_RECS timeline records, and when a new tree node appears.
 */
#include "pn_int.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>

_Static_assert(sizeof(PnLaunchInt) <= sizeof(PnLaunch), "PnLaunch too small");
_Static_assert(sizeof(PnRec) == 64 && sizeof(PnCtrRec) == 64, "record size");

static void record_ctr(PnThread *pt, uint32_t scope, uint32_t flags);

/* ---- scratch: worker slots of one launch ------------------------------------------- */

static PnWorkerSlot *
scratch_get(PnTls *t, uint32_t nthreads, uint32_t nscopes)
{
    PnScratch *sc = &t->scr[t->lnest];
    uint32_t want = nthreads < 4 ? 4 : nthreads;
    if (sc->cap < nthreads) {
        free(sc->ws);
        sc->ws = aligned_alloc(64, want * sizeof(PnWorkerSlot));
        sc->cap = sc->ws ? want : 0;
        if (!sc->ws)
            return NULL;
    }
    if (nscopes && sc->kcap < nthreads) {
        free(sc->kn);
        sc->kn = malloc((size_t)want * PN_KNODES * sizeof(PnKNode));
        sc->kcap = sc->kn ? want : 0;
        if (!sc->kn)
            return NULL;
    }
    for (uint32_t i = 0; i < nthreads; i++) {
        PnWorkerSlot *w = &sc->ws[i];
        w->used = 0;
        w->nknodes = 0;
        w->ctr_ok = 0;
        w->klost = 0;
        w->kn = nscopes ? sc->kn + (size_t)i * PN_KNODES : NULL;
    }
    return sc->ws;
}

/* opens (or reopens, when the event set changed) this thread's counter group; the
 * first call per thread is slow (perf_event_open per event, mmap) */
static inline void
ctr_ensure(PnTls *t)
{
    if (PN_LIKELY(t->grp.state != 0 && t->grp.gen == PN_LD(&pn_ctrs.gen)))
        return;
    pn_counters_setup();
    pn_ctr_close(&t->grp);
    pn_ctr_open(&t->grp);
}

/* ---- getting threads ready ---------------------------------------------------------- */

volatile uint32_t pn_prepare_epoch = 1;

void
pn_thread_prepare(void)
{
    PnTls *t;
    if (!PN_LD(&pn_rec_mask) || !(t = pn_tls()))
        return;
    pn_tls_maybe_gc(t);
    ctr_ensure(t);
    if (PN_LD(&pn_trace_mask))
        pn_buf_keep_spare(&t->buf);
}

/* ---- launching thread ----------------------------------------------------------------- */

void
pn_launch_begin(PnLaunch *l, uint32_t site, const int32_t grid[3], int nthreads)
{
    PnLaunchInt *L = (PnLaunchInt *)l;
    uint32_t mask = PN_LD(&pn_rec_mask);
    const PnSite *s;
    PnTls *t;
    L->on = 0;
    if (!mask || !(t = pn_tls()) || t->lnest >= PN_LAUNCH_NEST)
        return;
    pn_tls_maybe_gc(t);
    t->cur_next.set = 0;
    if (PN_UNLIKELY(t->lnext.set)) { /* pn_launch_next: this launch is renamed / gets metrics */
        t->cur_next = t->lnext;
        t->lnext.set = 0;
        if (t->cur_next.site_name)
            site = pn_site_derive(site, t->cur_next.site_name);
    }
    s = pn_site_get(site);
    L->path = t->pypend; /* pn_python_frames: this launch's Python call path */
    t->pypend = 0;
    L->state[0] = t->state[0]; /* pn_state_enter: the kernel hangs below the state */
    L->state[1] = t->state[1];
    L->t = t;
    L->site = site;
    L->nscopes = s ? s->nscopes : 0;
    L->nthreads = nthreads < 1 ? 1 : nthreads > PN_MAX_WORKERS ? PN_MAX_WORKERS : (uint32_t)nthreads;
    memcpy(L->grid, grid, sizeof L->grid);
    L->mask = mask;
    L->tmask = mask & PN_LD(&pn_trace_mask);
    /* once the budget is gone, program events are not produced, only counted */
    L->programs = L->tmask && !pn_budget_exhausted(t, PN_BUDGET_WORK);
    if (!(L->ws = scratch_get(t, L->nthreads, L->nscopes)))
        return;
    t->lnest++;
    ctr_ensure(t); /* before t0: a first launch must not time the group's opening */
    L->seq = ((uint64_t)t->tid << 40) | ++t->lseq;
    L->args = NULL;
    L->on = 1;
    L->t0 = L->mtick = pn_now();
}

void
pn_launch_args(PnLaunch *l, const uint64_t *args)
{
    PnLaunchInt *L = (PnLaunchInt *)l;
    if (L->on)
        L->args = args;
}

/* Scopes whose static cost a launch carries (ids below this) */
#define PN_COST_SCOPES 64

/* The launch's cost from its arguments into c: the kernel's four values, then four
 * per scope id; 1 exact, 0 inexact, -1: none. */
static int
launch_cost(const PnLaunchInt *L, double c[4 * (1 + PN_COST_SCOPES)])
{
    const PnSite *s;
    if (!L->args || !(s = pn_site_get(L->site)) || !s->cost_fn)
        return -1;
    uint32_t ns = L->nscopes < PN_COST_SCOPES ? L->nscopes : PN_COST_SCOPES;
    int rc = s->cost_fn(s->cost, L->args, L->grid, c, (int)(4 * (1 + ns)));
    return rc < 0 ? -1 : rc;
}

/* the kernel node under 'parent', through the one-entry cache */
static int32_t
kernel_node(PnTSlot *ts, int32_t parent, uint32_t site, const int32_t g[3])
{
    int32_t n;
    if (ts->c_node >= 0 && ts->c_parent == parent && ts->c_site == site && ts->c_grid[0] == g[0] &&
        ts->c_grid[1] == g[1] && ts->c_grid[2] == g[2])
        return ts->c_node;
    n = pn_tslot_child(ts, parent, PN_NODE_KERNEL, site, g);
    if (n >= 0) {
        ts->c_node = n;
        ts->c_parent = parent;
        ts->c_site = site;
        memcpy(ts->c_grid, g, sizeof ts->c_grid);
    }
    return n;
}

/* The launch's wall time of tree node 'node': the longest any one worker spent in
 * it (wn/wmax: the nodes seen so far in this launch, at most 'cap'). */
static void
wall_max(int32_t *wn, uint64_t *wmax, uint32_t *nw, uint32_t cap, int32_t node, uint64_t ticks)
{
    for (uint32_t i = 0; i < *nw; i++)
        if (wn[i] == node) {
            if (ticks > wmax[i])
                wmax[i] = ticks;
            return;
        }
    if (*nw < cap) {
        wn[*nw] = node;
        wmax[(*nw)++] = ticks;
    }
}

static void cost_add(PnPNode *n, int exact, const double c[4]);

/* sums every worker's in-kernel scope paths into the tree below kernel node 'kn';
 * a scope's cost (cost + 4 + 4 * id, when cexact >= 0) goes to its first path */
static void
merge_kscopes(PnTSlot *ts, int32_t knode, const PnLaunchInt *L, uint64_t programs, int nctr, int cexact,
              const double *cost)
{
    uint64_t costed = 0;
    int32_t map[PN_KNODES], wn[PN_KNODES];
    uint64_t wmax[PN_KNODES];
    uint32_t nw = 0;
    for (uint32_t w = 0; w < L->nthreads; w++) {
        const PnWorkerSlot *ws = &L->ws[w];
        int kc = (ws->ctr_ok & 2) ? nctr : 0;
        for (uint32_t j = 0; j < (ws->used ? ws->nknodes : 0); j++) {
            const PnKNode *k = &ws->kn[j];
            int32_t parent = k->parent < 0 ? knode : map[k->parent], node;
            PnPNode *n;
            map[j] = -1;
            if (parent < 0 || (node = pn_tslot_child(ts, parent, PN_NODE_KSCOPE, k->scope, NULL)) < 0)
                continue;
            map[j] = node;
            n = pn_pnode(ts, node);
            PN_ST(&n->count, n->count + k->count);
            PN_ST(&n->ticks, n->ticks + k->ticks);
            wall_max(wn, wmax, &nw, PN_KNODES, node, k->ticks);
            if (programs) {
                double v = n->norm + (double)k->ticks / (double)programs;
                __atomic_store(&n->norm, &v, __ATOMIC_RELAXED);
            }
            for (int i = 0; i < kc; i++)
                PN_ST(&n->ctr[i], n->ctr[i] + k->ctr[i]);
            if (kc)
                PN_ST(&n->ctr_n, (uint32_t)kc);
        }
    }
    for (uint32_t i = 0; i < nw; i++) {
        PnPNode *n = pn_pnode(ts, wn[i]);
        PN_ST(&n->wall, n->wall + wmax[i]);
        if (cexact >= 0 && n->key < PN_COST_SCOPES && n->key < L->nscopes && !(costed & (1ull << n->key))) {
            costed |= 1ull << n->key;
            cost_add(n, cexact, cost + 4 + 4 * n->key);
        }
    }
}

static void
cost_add(PnPNode *n, int exact, const double c[4])
{
    if (exact < 0)
        return;
    for (int i = 0; i < 4; i++) {
        double v = n->cost[i] + c[i];
        __atomic_store(&n->cost[i], &v, __ATOMIC_RELAXED);
    }
    PN_ST(&n->cost_n, n->cost_n + 1);
    if (!exact)
        PN_ST(&n->cost_inexact, n->cost_inexact + 1);
}

static void
kernel_add(PnPNode *n, uint64_t dur, uint64_t programs, uint32_t threads, int nctr,
           const uint64_t *ctr)
{
    PN_ST(&n->count, n->count + 1);
    PN_ST(&n->ticks, n->ticks + dur);
    if (dur < n->tmin)
        PN_ST(&n->tmin, dur);
    if (dur > n->tmax)
        PN_ST(&n->tmax, dur);
    PN_ST(&n->programs, n->programs + programs);
    if (threads > n->threads)
        PN_ST(&n->threads, threads);
    for (int i = 0; i < nctr; i++)
        PN_ST(&n->ctr[i], n->ctr[i] + ctr[i]);
    if (nctr)
        PN_ST(&n->ctr_n, (uint32_t)nctr);
}

/* once per process: in-kernel scope records that could not be aggregated */
static void
klost_notice(const PnLaunchInt *L, uint64_t n)
{
    static int once;
    const PnSite *s = pn_site_get(L->site);
    if (__atomic_exchange_n(&once, 1, __ATOMIC_RELAXED))
        return;
    fprintf(stderr,
            "proton: %llu in-kernel scope records of kernel %s were not aggregated (unbalanced "
            "enter/exit, nesting deeper than %d, or more than %d scope paths)\n",
            (unsigned long long)n, s ? s->name : "?", PN_KDEPTH, PN_KNODES);
}

static void
launch_record(PnTls *t, const PnLaunchInt *L, uint64_t t1, uint32_t threads, int nctr,
              const uint64_t *ctr)
{
    int nrec = nctr ? 2 : 1;
    PnRec *r = pn_buf_reserve(t, PN_BUDGET_HOST, nrec, L->tmask, L->mtick);
    if (!r)
        return;
    r->kind = PN_EV_LAUNCH;
    r->nctr = (uint8_t)nctr;
    r->depth = 0;
    r->mask = L->tmask;
    r->id = L->site;
    r->site = threads;
    r->t0 = L->t0;
    r->t1 = t1;
    r->mtick = L->mtick;
    r->seq = L->seq;
    memcpy(r->xyz, L->grid, sizeof r->xyz);
    r->aux = L->path;
    if (nctr) {
        PnCtrRec *c = (PnCtrRec *)(r + 1);
        c->kind = PN_EV_CTR;
        memcpy(c->v, ctr, (size_t)nctr * sizeof(uint64_t));
    }
    pn_buf_commit(t, nrec);
}

void
pn_launch_end(PnLaunch *l)
{
    PnLaunchInt *L = (PnLaunchInt *)l;
    uint64_t t1 = pn_now(), ctr[PN_MAX_COUNTERS] = { 0 }, programs = 1, dur;
    uint32_t used = 0, mask, pymask;
    uint64_t klost = 0;
    int nctr = 0, cexact;
    double cost[4 * (1 + PN_COST_SCOPES)];
    PnTls *t;
    if (!L->on)
        return;
    t = L->t;
    L->on = 0;
    t->lnest--;
    dur = t1 - L->t0;
    for (uint32_t w = 0; w < L->nthreads; w++) {
        const PnWorkerSlot *ws = &L->ws[w];
        if (!ws->used)
            continue;
        used++;
        klost += ws->klost;
        if (ws->ctr_ok & 1) {
            nctr = pn_ctrs.n;
            for (int i = 0; i < nctr; i++)
                ctr[i] += ws->ctr[i];
        }
    }
    for (int d = 0; d < 3; d++)
        programs *= L->grid[d] > 0 ? (uint64_t)L->grid[d] : 0;
    cexact = launch_cost(L, cost); /* after t1: not part of the launch's time */
    if (L->tmask && !L->programs)
        pn_drop(t, L->tmask, programs);
    pymask = PN_LD(&pn_py_mask);
    for (mask = L->mask; mask; mask &= mask - 1) {
        int s = __builtin_ctz(mask);
        uint64_t ct = PN_LD(&pn_slot_ctick[s]);
        PnTSlot *ts;
        int32_t parent, node;
        if (!ct || ct > L->mtick || !(ts = pn_tls_slot(t, s, ct)))
            continue;
        if (PN_UNLIKELY(pymask & (1u << s)))
            parent = pn_tslot_path(ts, L->path);
        else
            parent = ts->depth ? ts->stack[ts->depth - 1] : 0;
        if (PN_UNLIKELY(L->state[0]) && parent >= 0)
            parent = pn_state_node(ts, parent, L->state);
        if (parent < 0 || (node = kernel_node(ts, parent, L->site, L->grid)) < 0)
            continue;
        kernel_add(pn_pnode(ts, node), dur, programs, used ? used : L->nthreads, nctr, ctr);
        cost_add(pn_pnode(ts, node), cexact, cost);
        for (int i = 0; t->cur_next.set && i < t->cur_next.n; i++)
            pn_node_metric_add(pn_pnode(ts, node), t->cur_next.mid[i], t->cur_next.kind[i], 0,
                               (int64_t)t->cur_next.val[i], t->cur_next.val[i]);
        if (L->nscopes)
            merge_kscopes(ts, node, L, programs, pn_ctrs.n, cexact, cost);
    }
    if (L->tmask)
        launch_record(t, L, t1, used ? used : L->nthreads, nctr, ctr);
    if ((L->mask & (1u << PN_CAPTURE_SLOT)) && !PN_LD(&pn_capture_dirty))
        PN_ST(&pn_capture_dirty, 1);
    if (PN_UNLIKELY(klost))
        klost_notice(L, klost);
    t->cur_next.set = 0;
}

int
pn_launch_next(const char *name, int n, const char *const *names, const double *values)
{
    PnTls *t;
    char stripped[256];
    if (n < 0 || n > PN_NEXT_METRICS) {
        pn_set_error(EINVAL, "pn_launch_next: at most %d metrics", PN_NEXT_METRICS);
        return -EINVAL;
    }
    if (!PN_LD(&pn_rec_mask) || !(t = pn_tls()))
        return 0;
    t->lnext.set = 1;
    t->lnext.site_name = name && *name ? pn_name_cached(t, name) : 0;
    t->lnext.n = 0;
    for (int i = 0; i < n; i++) {
        int flags = pn_metric_flags(names[i], stripped, sizeof stripped);
        (void)flags;
        uint32_t id = pn_name_cached(t, stripped);
        if (!id)
            continue;
        int k = pn_metric_kind(stripped, values[i] == (double)(int64_t)values[i] ? PN_METRIC_INT : PN_METRIC_DOUBLE);
        t->lnext.mid[t->lnext.n] = id;
        t->lnext.kind[t->lnext.n] = k;
        t->lnext.val[t->lnext.n] = values[i];
        t->lnext.n++;
    }
    return 0;
}

int
pn_launch_wants_programs(const PnLaunch *l)
{
    const PnLaunchInt *L = (const PnLaunchInt *)l;
    return L->on && L->programs;
}

/* ---- workers ------------------------------------------------------------------------ */

/* the worker's child table must cover 'ns' scopes; all entries -1 between launches */
static int
kids_ensure(PnTls *t, uint32_t ns)
{
    size_t n = (size_t)(PN_KNODES + 1) * ns;
    int8_t *k;
    if (t->kids_ns >= ns)
        return 0;
    if (!(k = malloc(n)))
        return -1;
    memset(k, 0xff, n);
    free(t->kids);
    t->kids = k;
    t->kids_ns = ns;
    return 0;
}

PnThread *
pn_worker_begin(PnLaunch *l, int worker)
{
    PnLaunchInt *L = (PnLaunchInt *)l;
    PnWorkerSlot *ws;
    PnTls *t;
    if (!L->on || worker < 0 || (uint32_t)worker >= L->nthreads || !(t = pn_tls()))
        return &pn_tls_noop.pub;
    if (t != L->t)
        pn_tls_maybe_gc(t);
    ws = &L->ws[worker];
    ws->tid = t->tid;
    ws->used = 1;
    if (L->nscopes && kids_ensure(t, L->nscopes) < 0)
        ws->kn = NULL;
    t->cur = L;
    t->wslot = ws;
    t->kdepth = 0;
    t->wc_ok = 0;
    ctr_ensure(t);
    /* in-kernel scopes read counters only where that costs no syscall (rdpmc) */
    t->pub.record = t->grp.state == 1 && t->grp.rdpmc ? record_ctr : pn_record_plain;
    if (t->grp.state == 1 && pn_ctr_read(&t->grp, &t->wc0) == 0)
        t->wc_ok = 1;
    return &t->pub;
}

void
pn_worker_end(PnLaunch *l, PnThread *pt)
{
    PnTls *t = (PnTls *)pt;
    PnLaunchInt *L = (PnLaunchInt *)l;
    PnWorkerSlot *ws;
    PnCtrVal v;
    if (t == &pn_tls_noop || !(ws = t->wslot))
        return;
    if (t->wc_ok && pn_ctr_read_after(&t->grp, &t->wc0, &v) == 0) {
        pn_ctr_delta(&t->wc0, &v, t->grp.n, ws->ctr);
        ws->ctr_ok |= 1;
    }
    if (t->grp.state == 1 && t->grp.rdpmc)
        ws->ctr_ok |= 2;
    for (uint32_t j = 0; ws->kn && j < ws->nknodes; j++)
        t->kids[(uint32_t)(ws->kn[j].parent + 1) * L->nscopes + ws->kn[j].scope] = -1;
    ws->klost += t->kdepth;
    t->cur = NULL;
    t->wslot = NULL;
    t->kdepth = 0;
}

void
pn_program_begin(PnThread *pt, const int32_t pid[3])
{
    PnTls *t = (PnTls *)pt;
    if (t == &pn_tls_noop)
        return;
    memcpy(t->prog_pid, pid, sizeof t->prog_pid);
    t->prog_t0 = pn_now();
}

void
pn_worker_assist(PnThread *pt, const int32_t pid[3])
{
    PnTls *t = (PnTls *)pt;
    if (t != &pn_tls_noop)
        memcpy(t->prog_pid, pid, sizeof t->prog_pid);
}

void
pn_program_end(PnThread *pt)
{
    uint64_t now = pn_now();
    PnTls *t = (PnTls *)pt;
    PnLaunchInt *L;
    PnRec *r;
    if (t == &pn_tls_noop || !(L = t->cur) || !L->programs)
        return;
    if (!(r = pn_buf_reserve(t, PN_BUDGET_WORK, 1, L->tmask, L->mtick)))
        return;
    r->kind = PN_EV_PROGRAM;
    r->nctr = 0;
    r->depth = 0;
    r->mask = L->tmask;
    r->id = 0;
    r->site = L->site;
    r->t0 = t->prog_t0;
    r->t1 = now;
    r->mtick = L->mtick;
    r->seq = L->seq;
    memcpy(r->xyz, t->prog_pid, sizeof r->xyz);
    r->aux = 0;
    pn_buf_commit(t, 1);
}

/* ---- in-kernel scopes ---------------------------------------------------------------- */

/* the worker's node for 'scope' under 'parent' (-1 = the kernel), or -1 when full */
static inline int32_t
knode_get(PnTls *t, PnWorkerSlot *ws, uint32_t ns, int32_t parent, uint32_t scope)
{
    int8_t *e = &t->kids[(uint32_t)(parent + 1) * ns + scope];
    PnKNode *k;
    if (*e >= 0)
        return *e;
    if (!ws->kn || ws->nknodes >= PN_KNODES)
        return -1;
    k = &ws->kn[ws->nknodes];
    k->scope = (uint16_t)scope;
    k->parent = (int16_t)parent;
    k->count = k->ticks = 0;
    memset(k->ctr, 0, sizeof k->ctr);
    *e = (int8_t)ws->nknodes;
    return (int32_t)ws->nknodes++;
}

static inline void
scope_start(PnTls *t, PnLaunchInt *L, uint32_t scope, int with_ctr)
{
    PnWorkerSlot *ws = t->wslot;
    PnKFrame *f;
    int32_t parent, node;
    if (PN_UNLIKELY(t->kdepth >= PN_KDEPTH)) {
        ws->klost++;
        return;
    }
    parent = t->kdepth ? t->kstack[t->kdepth - 1].node : -1;
    node = (t->kdepth && parent < 0) ? -1 : knode_get(t, ws, L->nscopes, parent, scope);
    f = &t->kstack[t->kdepth++];
    f->scope = scope;
    f->node = node;
    f->ctr_ok = 0;
    if (with_ctr) {
        PnCtrVal v;
        if (pn_ctr_read_rdpmc(&t->grp, &v) == 0) {
            memcpy(f->ctr, v.v, sizeof f->ctr);
            f->ctr_ok = 1;
        }
    }
    f->t0 = pn_now();
}

static inline void
scope_end(PnTls *t, PnLaunchInt *L, uint32_t scope, uint64_t now, const PnCtrVal *cv)
{
    PnWorkerSlot *ws = t->wslot;
    uint64_t d[PN_MAX_COUNTERS];
    int32_t i = (int32_t)t->kdepth - 1;
    int nctr;
    PnKFrame *f;
    PnRec *r;
    while (i >= 0 && t->kstack[i].scope != scope)
        i--;
    if (PN_UNLIKELY(i < 0)) {
        ws->klost++;
        return;
    }
    f = &t->kstack[i];
    nctr = cv && f->ctr_ok ? t->grp.n : 0;
    for (int k = 0; k < nctr; k++)
        d[k] = cv->v[k] - f->ctr[k];
    /* measured durations: an outer scope's value covers the scopes nested in it */
    if (f->node >= 0) {
        PnKNode *k = &ws->kn[f->node];
        k->count++;
        k->ticks += now - f->t0;
        for (int c = 0; c < nctr; c++)
            k->ctr[c] += d[c];
    }
    if (L->tmask && (r = pn_buf_reserve(t, PN_BUDGET_WORK, nctr ? 2 : 1, L->tmask, L->mtick))) {
        r->kind = PN_EV_SCOPE;
        r->nctr = (uint8_t)nctr;
        r->depth = (uint16_t)i;
        r->mask = L->tmask;
        r->id = scope;
        r->site = L->site;
        r->t0 = f->t0;
        r->t1 = now;
        r->mtick = L->mtick;
        r->seq = L->seq;
        memcpy(r->xyz, t->prog_pid, sizeof r->xyz);
        r->aux = 0;
        if (nctr) {
            PnCtrRec *c = (PnCtrRec *)(r + 1);
            c->kind = PN_EV_CTR;
            memcpy(c->v, d, (size_t)nctr * sizeof(uint64_t));
        }
        pn_buf_commit(t, nctr ? 2 : 1);
    }
    if ((uint32_t)i != t->kdepth - 1)
        memmove(f, f + 1, (t->kdepth - 1 - (uint32_t)i) * sizeof *f);
    t->kdepth--;
}

/* PnThread.record without counters: timestamps only. Each record reads the clock
 * once: a start as its last step (scope_start), an end as its first, after the
 * scope's work has completed (pn_now_after). */
void
pn_record_plain(PnThread *pt, uint32_t scope, uint32_t flags)
{
    PnTls *t = (PnTls *)pt;
    PnLaunchInt *L = t->cur;
    if (PN_UNLIKELY(!L || scope >= L->nscopes))
        return;
    if (flags & PN_REC_START)
        scope_start(t, L, scope, 0);
    else
        scope_end(t, L, scope, pn_now_after(), NULL);
}

/* PnThread.record with counters read through rdpmc (no syscall); one clock read
 * per record as above. */
static void
record_ctr(PnThread *pt, uint32_t scope, uint32_t flags)
{
    PnTls *t = (PnTls *)pt;
    PnLaunchInt *L = t->cur;
    PnCtrVal v;
    if (PN_UNLIKELY(!L || scope >= L->nscopes))
        return;
    if (flags & PN_REC_START) {
        scope_start(t, L, scope, 1);
    } else {
        uint64_t now = pn_now_after();
        int ok = pn_ctr_read_rdpmc(&t->grp, &v) == 0;
        scope_end(t, L, scope, now, ok ? &v : NULL);
    }
}

