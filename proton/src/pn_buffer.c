/*
 * pn_buffer.c — per-thread timeline buffers, the process-wide event budget, and
 * exact drop counts.
 *
 * A thread appends fixed-size PnRec records to its own list of chunks
 * (PN_CHUNK_RECS records each); the append (pn_buf_reserve/commit, inlined from
 * pn_int.h) is a bounds check, a few stores and a release store of the count. The
 * budget (PROTON_TRACE_LIMIT events per class: program instances + in-kernel scopes,
 * and launches + host scopes) lives in a global pool that threads take from
 * PN_BUDGET_GRAIN events at a time with one CAS, so the pool is touched once per
 * grain, not per event. The budget is one pool for all threads: a thread that finds
 * it empty takes half of what other threads took and did not use (their 'avail',
 * which owners decrement atomically), so nothing is dropped while budget sits unused
 * with an idle thread, and min(limit, recorded) events are kept. An event that finds
 * no budget is dropped and counted, per consumer slot, in the thread's drop counters:
 * kept + dropped is always exact.
 * Chunks whose records belong only to finished consumers are freed by their owner
 * (pn_tls_gc) and their events returned to the pool.
 */
#include "pn_int.h"

#include <stdlib.h>
#include <string.h>

uint64_t pn_trace_limit = 1000000;
uint64_t pn_budget_used[2];
uint64_t pn_budget_gen[2];
uint64_t pn_budget_dry[2];

/* gives n events of class cls back to the pool */
static void
budget_return(int cls, uint64_t n)
{
    if (!n)
        return;
    __atomic_fetch_sub(&pn_budget_used[cls], n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&pn_budget_gen[cls], 1, __ATOMIC_RELEASE);
}

/* takes up to PN_BUDGET_GRAIN events from the pool; 0 when it is empty */
static int
budget_take(PnBuf *b, int cls)
{
    uint64_t used = PN_LD(&pn_budget_used[cls]);
    for (;;) {
        uint64_t lim = PN_LD(&pn_trace_limit), take;
        if (used >= lim)
            return 0;
        take = lim - used < PN_BUDGET_GRAIN ? lim - used : PN_BUDGET_GRAIN;
        if (__atomic_compare_exchange_n(&pn_budget_used[cls], &used, used + take, 1,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            __atomic_add_fetch(&b->avail[cls], (int64_t)take, __ATOMIC_RELAXED);
            return 1;
        }
    }
}

/* The pool is empty: takes half of the unused budget of other threads (the registry
 * is walked under pn_mu, tried only: a writer holding it means drop this event).
 * Skipped while nothing went back to the pool since the last scan found nothing. */
static int
budget_steal(PnTls *t, int cls)
{
    uint64_t gen = PN_ACQ(&pn_budget_gen[cls]);
    int got = 0;
    if (PN_LD(&pn_budget_dry[cls]) == gen + 1 || pn_trylock() != 0)
        return 0;
    for (PnTls *x = pn_tls_first(); x && !got; x = pn_tls_next(x)) {
        int64_t a = PN_LD(&x->buf.avail[cls]), take;
        if (x == t)
            continue;
        while (a > 0) {
            take = (a + 1) / 2;
            if (__atomic_compare_exchange_n(&x->buf.avail[cls], &a, a - take, 1, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                __atomic_add_fetch(&t->buf.avail[cls], take, __ATOMIC_RELAXED);
                got = 1;
                break;
            }
        }
    }
    pn_unlock();
    if (!got)
        PN_ST(&pn_budget_dry[cls], gen + 1); /* +1: 0 means "never scanned" */
    return got;
}

static PnChunk *
chunk_new(PnBuf *b)
{
    PnChunk *c = b->spare ? b->spare : malloc(sizeof *c + PN_CHUNK_RECS * sizeof(PnRec));
    b->spare = NULL;
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->cap = PN_CHUNK_RECS;
    if (b->tail)
        PN_REL(&b->tail->next, c);
    else
        PN_REL(&b->head, c);
    b->tail = c;
    return c;
}

/* The slow half of pn_buf_reserve: takes one event of budget (unless the fast path
 * did: have_budget) from the pool or other threads, and starts a chunk when needed.
 * Returns where to write, or NULL after counting the event as dropped. Allocates one
 * chunk per PN_CHUNK_RECS records. */
PnRec *
pn_buf_reserve_slow(PnTls *t, int cls, int nrec, uint32_t mask, int have_budget)
{
    PnBuf *b = &t->buf;
    PnChunk *c = b->tail;
    while (!have_budget) {
        if (!budget_take(b, cls) && !budget_steal(t, cls))
            goto drop;
        have_budget = pn_budget_use(&b->avail[cls]);
    }
    if (!c || c->n + (uint32_t)nrec > c->cap) {
        if (!(c = chunk_new(b))) {
            __atomic_add_fetch(&b->avail[cls], 1, __ATOMIC_RELAXED);
            goto drop;
        }
    }
    return &c->rec[c->n];
drop:
    pn_drop(t, mask, 1);
    return NULL;
}

/* Counts 'n' dropped events for every consumer in 'mask'. Owner thread only. */
void
pn_drop(PnTls *t, uint32_t mask, uint64_t n)
{
    while (mask) {
        int s = __builtin_ctz(mask);
        uint64_t ct = PN_LD(&pn_slot_ctick[s]);
        mask &= mask - 1;
        if (t->drop_ctick[s] != ct) {
            PN_ST(&t->drop[s], 0);
            PN_ST(&t->drop_ctick[s], ct);
        }
        PN_ST(&t->drop[s], t->drop[s] + n);
    }
}

/* Events dropped for the consumer (slot, ctick), over every thread. Holds pn_mu. */
uint64_t
pn_dropped(int slot, uint64_t ctick)
{
    uint64_t n = 0;
    for (PnTls *t = pn_tls_first(); t; t = pn_tls_next(t))
        if (PN_LD(&t->drop_ctick[slot]) == ctick)
            n += PN_LD(&t->drop[slot]);
    return n;
}

/* a chunk is dead when none of its consumers is still the one that recorded it */
static int
chunk_dead(const PnChunk *c)
{
    uint32_t m = c->umask;
    while (m) {
        int s = __builtin_ctz(m);
        uint64_t ct = PN_LD(&pn_slot_ctick[s]);
        m &= m - 1;
        if (ct && ct <= c->max_mtick)
            return 0;
    }
    return 1;
}

static void
chunk_release(PnChunk *c)
{
    budget_return(0, c->nev[0]);
    budget_return(1, c->nev[1]);
    free(c);
}

/* Gives a dead chunk's budget back and keeps it as the spare when there is none. */
static void
chunk_retire(PnBuf *b, PnChunk *c)
{
    if (b->spare) {
        chunk_release(c);
        return;
    }
    budget_return(0, c->nev[0]);
    budget_return(1, c->nev[1]);
    b->spare = c;
}

void
pn_buf_keep_spare(PnBuf *b)
{
    if (!b->spare)
        b->spare = malloc(sizeof(PnChunk) + PN_CHUNK_RECS * sizeof(PnRec));
}

/* Frees dead chunks and returns their events to the pool. The caller holds pn_mu
 * and is the owner (or the thread has exited), so nobody appends meanwhile. */
void
pn_buf_gc(PnBuf *b)
{
    PnChunk **pp = &b->head, *prev = NULL;
    while (*pp) {
        PnChunk *c = *pp;
        if (chunk_dead(c)) {
            *pp = c->next;
            if (b->tail == c)
                b->tail = prev;
            chunk_retire(b, c);
        } else {
            prev = c;
            pp = &c->next;
        }
    }
}

/* Nonzero when this thread can keep no more events of class 'cls' (its share and
 * the pool are empty): callers may skip producing them and count them as dropped. */
int
pn_budget_exhausted(const PnTls *t, int cls)
{
    return PN_LD(&t->buf.avail[cls]) <= 0 && PN_LD(&pn_budget_used[cls]) >= PN_LD(&pn_trace_limit) &&
           PN_LD(&pn_budget_dry[cls]) == PN_LD(&pn_budget_gen[cls]) + 1;
}

/* Returns budget taken from the pool but not used. Owner (or exited thread). */
void
pn_buf_return_budget(PnBuf *b)
{
    for (int k = 0; k < 2; k++) {
        int64_t a = __atomic_exchange_n(&b->avail[k], 0, __ATOMIC_RELAXED);
        if (a > 0)
            budget_return(k, (uint64_t)a);
    }
}

/* Frees every chunk. Same conditions as pn_buf_gc. */
void
pn_buf_free(PnBuf *b)
{
    PnChunk *c = b->head, *n;
    for (; c; c = n) {
        n = c->next;
        chunk_release(c);
    }
    free(b->spare);
    b->spare = NULL;
    b->head = b->tail = NULL;
    pn_buf_return_budget(b);
}

/* Calls 'fn' for every record of thread 't' that belongs to consumer (slot, ctick),
 * with its counter extension (or NULL), from position 'pos' ({NULL, 0}: the start) on;
 * 'pos' is left after the last record visited, so a second scan sees only what was
 * appended meanwhile. Holds pn_mu (chunks are freed only under it). Stops at the
 * first nonzero return of 'fn' and returns it. */
int
pn_buf_scan(const PnTls *t, int slot, uint64_t ctick, PnBufPos *pos, PnRecFn fn, void *user)
{
    uint32_t bit = 1u << slot, i = pos->c ? pos->i : 0;
    const PnChunk *c = pos->c ? pos->c : PN_ACQ(&t->buf.head);
    int rc;
    for (; c; c = PN_ACQ(&c->next), i = 0) {
        uint32_t n = PN_ACQ(&c->n);
        for (; i < n; i++) {
            const PnRec *r = &c->rec[i];
            if (r->kind == PN_EV_CTR || !(r->mask & bit) || r->mtick < ctick)
                continue;
            rc = fn(r, r->nctr && i + 1 < n ? (const PnCtrRec *)&c->rec[i + 1] : NULL, user);
            if (rc)
                return rc;
        }
        pos->c = c;
        pos->i = n;
    }
    return 0;
}

/* pn_buf_scan from the start */
int
pn_buf_foreach(const PnTls *t, int slot, uint64_t ctick, PnRecFn fn, void *user)
{
    PnBufPos pos = { NULL, 0 };
    return pn_buf_scan(t, slot, ctick, &pos, fn, user);
}
