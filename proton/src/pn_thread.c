/*
 * pn_thread.c — per-thread state: creation, the registry, garbage collection,
 * thread exit and fork.
 *
 * A thread gets its PnTls the first time it records (the only allocation on that
 * path besides chunks and new tree nodes). The registry is a list in creation order
 * (tid 0 first): appended under reg_mu with a release store, so registering never
 * waits for a writer holding pn_mu, and read lock-free; unlinked only under pn_mu and
 * reg_mu. Only the owner frees its data, and only while holding pn_mu, so writers
 * (which hold pn_mu) never see memory go away. When a thread exits its state is
 * marked retired and kept until nothing in it is live; pn_tls_collect frees it then.
 */
#include "pn_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct PnNameEnt {
    uint64_t h;
    const char *s;                 /* the interned text: process lifetime */
    uint32_t id;
};

pthread_mutex_t pn_mu = PTHREAD_MUTEX_INITIALIZER;
PnTls *pn_tls_list;
__thread PnTls *pn_tls_cur;
uint64_t pn_gc_epoch = 1;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER; /* appends; after pn_mu */
static PnTls *tls_tail;
static uint32_t next_tid;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void
noop_record(PnThread *t, uint32_t scope, uint32_t flags)
{
    (void)t, (void)scope, (void)flags;
}

PnTls pn_tls_noop = { .pub = { noop_record } };

/* ---- garbage ----------------------------------------------------------------------- */

/* frees stale tree slots and dead chunks; caller holds pn_mu and owns 't' (or it
 * has exited) */
static void
gc_locked(PnTls *t)
{
    PnTSlot *s, *n;
    for (int i = 0; i < PN_NSLOTS; i++) {
        s = t->slot[i];
        if (s && s->ctick != PN_LD(&pn_slot_ctick[i])) {
            PN_REL(&t->slot[i], NULL);
            s->stale_next = t->stale;
            t->stale = s;
        }
    }
    for (s = t->stale; s; s = n) {
        n = s->stale_next;
        pn_tslot_destroy(s);
    }
    t->stale = NULL;
    pn_buf_gc(&t->buf);
}

/* Owner: frees what finished consumers left behind. Skips (and retries at the next
 * hook) when a writer holds pn_mu, so a hook never waits for a file to be written. */
void
pn_tls_gc(PnTls *t)
{
    if (pn_trylock() != 0)
        return;
    t->gc_epoch = pn_gc_epoch;
    gc_locked(t);
    pn_unlock();
}

static void
tls_free(PnTls *t)
{
    for (int i = 0; i < PN_NSLOTS; i++)
        pn_tslot_destroy(t->slot[i]);
    for (PnTSlot *s = t->stale, *n; s; s = n) {
        n = s->stale_next;
        pn_tslot_destroy(s);
    }
    pn_buf_free(&t->buf);
    for (int i = 0; i < PN_LAUNCH_NEST; i++) {
        free(t->scr[i].ws);
        free(t->scr[i].kn);
    }
    free(t->kids);
    free(t->ncache);
    free(t);
}

/* Frees exited threads whose data no consumer needs any more. Holds pn_mu. */
void
pn_tls_collect(void)
{
    PnTls **pp = &pn_tls_list, *prev = NULL;
    pthread_mutex_lock(&reg_mu);
    while (*pp) {
        PnTls *t = *pp;
        int empty = 1;
        if (t->retired) {
            gc_locked(t);
            for (int i = 0; i < PN_NSLOTS; i++)
                if (t->slot[i])
                    empty = 0;
            if (t->buf.head)
                empty = 0;
        }
        if (t->retired && empty) {
            PN_REL(pp, t->next);
            if (tls_tail == t)
                tls_tail = prev;
            tls_free(t);
        } else {
            prev = t;
            pp = &t->next;
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

/* ---- life cycle -------------------------------------------------------------------- */

static void
retire(void *p)
{
    PnTls *t = p;
    pn_ctr_close(&t->grp);
    pn_lock();
    t->retired = 1;
    pn_buf_return_budget(&t->buf);
    pn_unlock();
    pn_tls_cur = NULL;
}

static void
fork_prepare(void)
{
    pthread_mutex_lock(&pn_mu);
    pthread_mutex_lock(&reg_mu);
}

static void
fork_parent(void)
{
    pthread_mutex_unlock(&reg_mu);
    pthread_mutex_unlock(&pn_mu);
}

/* The child has only the forking thread, and inherited counter fds count the parent.
 * It starts empty: the capture store and every session get a new identity (the
 * parent's data is stale and freed), so what the child writes is what it recorded,
 * and only if it recorded something. Its outputs get their own names
 * (pn_fork_child: <name>.<pid>, pn_output.c); the exit thread is started again when
 * it first records (pn_arm_exit). */
static void
fork_child(void)
{
    for (PnTls *t = pn_tls_list; t; t = t->next) {
        pn_ctr_close(&t->grp);
        if (t != pn_tls_cur)
            t->retired = 1;
        else
            t->os_tid = (int)syscall(SYS_gettid);
    }
    if (pn_slots[PN_CAPTURE_SLOT].used)
        PN_REL(&pn_slot_ctick[PN_CAPTURE_SLOT], pn_now() + 1);
    PN_ST(&pn_capture_dirty, 0);
    pn_sessions_after_fork();
    if (pn_active_flag || pn_slots[PN_CAPTURE_SLOT].used)
        pn_fork_child = 1;
    __atomic_add_fetch(&pn_gc_epoch, 1, __ATOMIC_RELAXED);
    pn_exit_after_fork();
    pthread_mutex_unlock(&reg_mu);
    pthread_mutex_unlock(&pn_mu);
}

static void
make_key(void)
{
    pthread_key_create(&tls_key, retire);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void
pn_tls_init_once(void)
{
    pthread_once(&tls_once, make_key);
}

/* Creates and registers the calling thread's state. NULL when out of memory (the
 * hooks then record nothing on this thread). */
PnTls *
pn_tls_slow(void)
{
    PnTls *t;
    pthread_once(&tls_once, make_key);
    if (!(t = calloc(1, sizeof *t)))
        return NULL;
    t->pub.record = pn_record_plain;
    t->os_tid = (int)syscall(SYS_gettid);
    t->is_main = t->os_tid == getpid();
    for (int i = 0; i < PN_MAX_COUNTERS; i++)
        t->grp.fd[i] = -1;
    t->gc_epoch = PN_LD(&pn_gc_epoch);
    pthread_mutex_lock(&reg_mu);
    t->tid = next_tid++;
    if (tls_tail)
        PN_REL(&tls_tail->next, t);
    else
        PN_REL(&pn_tls_list, t);
    tls_tail = t;
    pthread_mutex_unlock(&reg_mu);
    pthread_setspecific(tls_key, t);
    pn_tls_cur = t;
    return t;
}

/* This thread's tree for consumer 'slot' with identity 'ctick', replacing stale data
 * (which is freed later, under pn_mu). A new tree of a session starts with the
 * scopes the thread inherits (pn_session_inherit: takes pn_mu, once per thread and
 * phase). NULL when out of memory. */
PnTSlot *
pn_tls_slot(PnTls *t, int slot, uint64_t ctick)
{
    PnTSlot *s = t->slot[slot];
    if (PN_LIKELY(s && s->ctick == ctick))
        return s;
    if (s) {
        s->stale_next = t->stale;
        t->stale = s;
        t->gc_epoch = 0;
    }
    s = pn_tslot_create(ctick);
    if (s && slot != PN_CAPTURE_SLOT)
        pn_session_inherit(t, slot, s); /* the stack it starts from (upstream §1.4) */
    pn_arm_exit(); /* a forked child recording for the first time needs its exit thread */
    PN_REL(&t->slot[slot], s);
    return s;
}

static uint64_t
hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int
ncache_grow(PnTls *t)
{
    uint32_t cap = t->ncap ? t->ncap * 2 : 64;
    struct PnNameEnt *e = calloc(cap, sizeof *e);
    if (!e)
        return -1;
    for (uint32_t i = 0; i < t->ncap; i++) {
        uint32_t j;
        if (!t->ncache[i].s)
            continue;
        for (j = (uint32_t)t->ncache[i].h & (cap - 1); e[j].s; j = (j + 1) & (cap - 1))
            ;
        e[j] = t->ncache[i];
    }
    free(t->ncache);
    t->ncache = e;
    t->ncap = cap;
    return 0;
}

/* Interned id of 's' through this thread's cache (no lock on a hit); 0 on failure. */
uint32_t
pn_name_cached(PnTls *t, const char *s)
{
    uint64_t h = hash_str(s);
    uint32_t j, id;
    if ((t->nn + 1) * 2 > t->ncap && ncache_grow(t) < 0)
        return pn_name_intern(s);
    for (j = (uint32_t)h & (t->ncap - 1); t->ncache[j].s; j = (j + 1) & (t->ncap - 1))
        if (t->ncache[j].h == h && strcmp(t->ncache[j].s, s) == 0)
            return t->ncache[j].id;
    if (!(id = pn_name_intern(s)))
        return 0;
    t->ncache[j].h = h;
    t->ncache[j].s = pn_name_get(id);
    t->ncache[j].id = id;
    t->nn++;
    return id;
}

/* Tests: drop the calling thread's recorded data and budget now (it is the owner). */
void
pn_tls_reset_self(void)
{
    PnTls *t = pn_tls_cur;
    if (!t)
        return;
    pn_lock();
    gc_locked(t);
    pn_buf_free(&t->buf);
    memset(t->drop, 0, sizeof t->drop);
    memset(t->drop_ctick, 0, sizeof t->drop_ctick);
    PN_ST(&t->hdepth, 0);
    t->hover = 0;
    t->pypend = 0;
    t->gc_epoch = pn_gc_epoch;
    pn_unlock();
    pn_ctr_close(&t->grp);
}

PnThread *
pn_thread_noop(void)
{
    return &pn_tls_noop.pub;
}
