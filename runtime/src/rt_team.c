/*
 * rt_team.c — program teams: threads of a launch lent to one program's smt.parallel loops.
 *
 * A kernel with smt.parallel loops calls rt_parallel_for (through the pointer its .so
 * exports, set by rt_loader.c) with a body that runs iterations [lo, hi). When a
 * launch has fewer programs than threads, rt_launch.c splits its one OpenMP team into
 * one team per program: the first thread of each (the leader) runs the program, the
 * others (helpers) wait in rt_team_help for loops to share. Everything else about a
 * program — the code before, between and after its loops — runs once, on the leader.
 * Outside a team (every thread busy with programs, an inline launch, a loop inside a
 * parallel body) rt_parallel_for runs the loop on the calling thread.
 *
 * A loop is posted by bumping the team's generation counter; members claim chunks of
 * iterations from an atomic counter, so every iteration runs exactly once whichever
 * threads turn up; the leader returns when every helper has checked in. Waiting spins
 * briefly, then sleeps on a futex (the same trade libgomp makes between regions).
 */
#include "rt_int.h"

#include "proton.h"

#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Polls of a word before sleeping on it (~0.1 ms). */
#define SPIN_POLLS (1 << 14)
/* The generation bit that tells helpers the program is over. */
#define TEAM_DONE 0x80000000u

/* The team of the program this thread leads, while it may post loops; NULL otherwise. */
static _Thread_local RtTeam *cur_team;

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* Waits until *w differs from 'old' and returns the new value: spins, then sleeps on
 * the futex, counting itself in *sleepers so that wake() knows to call the kernel. */
static uint32_t
await_change(_Atomic uint32_t *w, uint32_t old, _Atomic uint32_t *sleepers)
{
    uint32_t v;
    for (int i = 0; i < SPIN_POLLS; i++) {
        if ((v = atomic_load_explicit(w, memory_order_acquire)) != old)
            return v;
        cpu_relax();
    }
    atomic_fetch_add(sleepers, 1);
    while ((v = atomic_load(w)) == old)
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
    atomic_fetch_sub(sleepers, 1);
    return v;
}

/* After changing *w (a sequentially consistent read-modify-write), wakes its sleepers. */
static void
wake(_Atomic uint32_t *w, _Atomic uint32_t *sleepers)
{
    if (atomic_load(sleepers))
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Claims chunks of the posted loop until none is left. */
static void
run_chunks(RtTeam *tm, void *pctx)
{
    int64_t n = tm->n, chunk = tm->chunk, lo;
    while ((lo = atomic_fetch_add_explicit(&tm->next, chunk, memory_order_relaxed)) < n)
        tm->body(tm->data, lo, lo + chunk < n ? lo + chunk : n, pctx);
}

/* ---- api ------------------------------------------------------------------------- */

void
rt_team_init(RtTeam *tm, int size)
{
    memset(tm, 0, sizeof *tm);
    tm->size = size;
}

int
rt_team_of(int64_t t, int64_t nthreads, int64_t programs, int *member)
{
    int64_t q = nthreads / programs, r = nthreads % programs, big = r * (q + 1), g;
    g = t < big ? t / (q + 1) : r + (t - big) / q;
    *member = (int)(t - (g * q + (g < r ? g : r)));
    return (int)g;
}

int
rt_team_size(int g, int64_t nthreads, int64_t programs)
{
    return (int)(nthreads / programs + (g < nthreads % programs));
}

void
rt_team_lead(RtTeam *tm, const int32_t pid[3])
{
    memcpy(tm->pid, pid, sizeof tm->pid);
    cur_team = tm->size > 1 ? tm : NULL;
}

void
rt_team_release(RtTeam *tm)
{
    cur_team = NULL;
    if (tm->size > 1) {
        atomic_store(&tm->gen, atomic_load_explicit(&tm->gen, memory_order_relaxed) | TEAM_DONE);
        wake(&tm->gen, &tm->gen_sleepers);
    }
}

void
rt_team_help(RtTeam *tm, PnThread *pctx, int proton)
{
    uint32_t seen = 0, g;
    while (!((g = await_change(&tm->gen, seen, &tm->gen_sleepers)) & TEAM_DONE)) {
        seen = g;
        if (proton) /* scopes recorded here belong to the leader's program */
            pn_worker_assist(pctx, tm->pid);
        run_chunks(tm, pctx);
        atomic_fetch_sub(&tm->left, 1);
        wake(&tm->left, &tm->left_sleepers);
    }
}

/* Documented in runtime.h. The leader posts the loop, takes its share of the chunks and
 * waits for every helper to check in: each generation is seen by every helper, so the
 * fields are never rewritten while a helper may still read them. */
void
rt_parallel_for(RtParallelBody body, void *data, int64_t n, void *pctx)
{
    RtTeam *tm = cur_team;
    uint32_t left;

    if (n <= 0)
        return;
    if (!tm || n == 1) {
        body(data, 0, n, pctx);
        return;
    }
    cur_team = NULL; /* a parallel loop inside this one runs on the thread that meets it */
    tm->body = body;
    tm->data = data;
    tm->n = n;
    /* a few chunks per member, so that a late or slow thread costs little */
    tm->chunk = n / (4 * (int64_t)tm->size) > 0 ? n / (4 * (int64_t)tm->size) : 1;
    atomic_store_explicit(&tm->next, 0, memory_order_relaxed);
    atomic_store_explicit(&tm->left, (uint32_t)(tm->size - 1), memory_order_relaxed);
    /* only the leader writes gen; the next value differs from what every helper saw */
    atomic_store(&tm->gen, (atomic_load_explicit(&tm->gen, memory_order_relaxed) + 1) & ~TEAM_DONE);
    wake(&tm->gen, &tm->gen_sleepers);
    int armed = rt_debug_disarm(); /* an assert may not jump out while helpers run */
    run_chunks(tm, pctx);
    rt_debug_rearm(armed);
    while ((left = atomic_load_explicit(&tm->left, memory_order_acquire)) != 0)
        await_change(&tm->left, left, &tm->left_sleepers);
    cur_team = tm;
}
