/*
 * rt_launch.c — runs a kernel over its grid: inline for one program or one thread,
 * otherwise one OpenMP parallel region with a static schedule.
 *
 * Programs are numbered x fastest, then y, then z; thread t of T gets the contiguous
 * range [t*q + min(t, r), ...) of q or q+1 programs (q = n / T, r = n % T), the same
 * split as `omp for schedule(static)`. The team is whatever GOMP_parallel delivers
 * (fewer threads inside a nested region): the split uses omp_get_num_threads(), so
 * every program runs exactly once regardless. The region goes through the runtime
 * chosen by rt_omp.c, not a `#pragma omp`, so we never link a second libgomp.
 * Proton costs one load of pn_active_flag per launch when nothing records.
 * A kernel with smt.parallel loops launched with fewer programs than threads
 * (RT_LAUNCH_TEAMS) gets every thread: each program leads a team of the idle ones,
 * which share its parallel loops (rt_team.c).
 * A kernel with prints or asserts (RT_LAUNCH_DEBUG) runs each program under a guard
 * (run_range_debug): its print output is written when the program ends, and a failing
 * assert ends the program and stops the launch (rt_debug.c).
 */
#include "rt_int.h"

#include "proton.h"

#include <errno.h>
#include <stdlib.h>

/* What every worker of one launch needs; lives on the launching thread's stack. */
typedef struct Job {
    RtKernelFn fn;
    const uint64_t *args;
    int32_t g[3];
    int64_t n;      /* programs */
    PnLaunch *pn;   /* NULL when Proton is off */
    int programs;   /* pn_launch_wants_programs() */
    RtTeam *teams;  /* one per program when programs get teams, else NULL */
    int nthreads;   /* the team size asked of GOMP_parallel (what the teams assume) */
    RtDebugLaunch *dbg; /* RT_LAUNCH_DEBUG: prints and asserts, else NULL */
} Job;

static void
noop_record(PnThread *t, uint32_t scope_id, uint32_t flags)
{
    (void)t, (void)scope_id, (void)flags;
}

/* The pctx of unrecorded launches: instrumented kernels call record() unconditionally. */
static PnThread noop_thread = {noop_record};

/* Runs programs [lo, hi) with one pctx. The pid is stepped, not divided, per program. */
static void
run_range(const Job *j, int64_t lo, int64_t hi, PnThread *t)
{
    int64_t plane = (int64_t)j->g[0] * j->g[1];
    int32_t x = (int32_t)(lo % j->g[0]), y = (int32_t)(lo / j->g[0] % j->g[1]);
    int32_t z = (int32_t)(lo / plane);

    for (int64_t i = lo; i < hi; i++) {
        j->fn(j->args, x, y, z, j->g[0], j->g[1], j->g[2], t);
        if (++x == j->g[0]) {
            x = 0;
            if (++y == j->g[1])
                y = 0, z++;
        }
    }
}

/* Same, with a Proton timeline event around every program. */
static void
run_range_programs(const Job *j, int64_t lo, int64_t hi, PnThread *t)
{
    int32_t pid[3] = {(int32_t)(lo % j->g[0]), (int32_t)(lo / j->g[0] % j->g[1]),
                      (int32_t)(lo / ((int64_t)j->g[0] * j->g[1]))};

    for (int64_t i = lo; i < hi; i++) {
        pn_program_begin(t, pid);
        j->fn(j->args, pid[0], pid[1], pid[2], j->g[0], j->g[1], j->g[2], t);
        pn_program_end(t);
        if (++pid[0] == j->g[0]) {
            pid[0] = 0;
            if (++pid[1] == j->g[1])
                pid[1] = 0, pid[2]++;
        }
    }
}

/* One program under the debug guard: 0, or -1 when an assert failed in it (the
 * assert longjmps back here). Its own function, so no local of the caller's loop is
 * live across the setjmp. */
static int
run_guarded(const Job *j, const int32_t pid[3], PnThread *t, RtDebugFrame *f)
{
    if (setjmp(f->jb))
        return -1;
    j->fn(j->args, pid[0], pid[1], pid[2], j->g[0], j->g[1], j->g[2], t);
    return 0;
}

/* Programs [lo, hi) of a kernel with prints or asserts: each one's output written when
 * it ends; none starts once an assert of the launch has failed. */
static void
run_range_debug(const Job *j, int64_t lo, int64_t hi, PnThread *t)
{
    int32_t pid[3] = {(int32_t)(lo % j->g[0]), (int32_t)(lo / j->g[0] % j->g[1]),
                      (int32_t)(lo / ((int64_t)j->g[0] * j->g[1]))};
    RtDebugFrame f;

    rt_debug_enter(&f, j->dbg, 1);
    for (int64_t i = lo; i < hi; i++) {
        if (atomic_load_explicit(&j->dbg->failed, memory_order_acquire))
            break;
        if (j->programs)
            pn_program_begin(t, pid);
        int rc = run_guarded(j, pid, t, &f);
        f.armed = 1; /* a longjmp out of a disarmed region cannot happen; keep it set */
        if (j->programs)
            pn_program_end(t);
        rt_debug_flush();
        if (rc < 0)
            break;
        if (++pid[0] == j->g[0]) {
            pid[0] = 0;
            if (++pid[1] == j->g[1])
                pid[1] = 0, pid[2]++;
        }
    }
    rt_debug_leave(&f);
}

/* One worker's share, with the Proton worker hooks when the launch is recorded. */
static void
run_share(const Job *j, int worker, int64_t lo, int64_t hi)
{
    PnThread *t, *pctx;

    if (!j->pn) {
        if (RT_UNLIKELY(j->dbg != NULL))
            run_range_debug(j, lo, hi, &noop_thread);
        else
            run_range(j, lo, hi, &noop_thread);
        return;
    }
    t = pn_worker_begin(j->pn, worker);
    pctx = t ? t : &noop_thread;
    if (j->dbg)
        run_range_debug(j, lo, hi, pctx);
    else if (j->programs)
        run_range_programs(j, lo, hi, pctx);
    else
        run_range(j, lo, hi, pctx);
    pn_worker_end(j->pn, t);
}

/* Thread t's part when programs get teams: lead program g's team (run the program
 * with its smt.parallel loops shared out), or help it. */
static void
team_share(const Job *j, int64_t t)
{
    int member, g = rt_team_of(t, j->nthreads, j->n, &member);
    RtTeam *tm = &j->teams[g];
    PnThread *p;

    if (member == 0) {
        int32_t pid[3] = {g % j->g[0], g / j->g[0] % j->g[1],
                          (int32_t)(g / ((int64_t)j->g[0] * j->g[1]))};
        rt_team_lead(tm, pid);
        run_share(j, (int)t, g, g + 1);
        rt_team_release(tm);
        return;
    }
    p = j->pn ? pn_worker_begin(j->pn, (int)t) : &noop_thread;
    RtDebugFrame f;
    if (j->dbg) /* a helper's prints and asserts belong to the launch; it never jumps */
        rt_debug_enter(&f, j->dbg, 0);
    rt_team_help(tm, p ? p : &noop_thread, j->pn != NULL);
    if (j->dbg)
        rt_debug_leave(&f);
    if (j->pn)
        pn_worker_end(j->pn, p);
}

/* GOMP_parallel body: every team member computes its static chunk (or, with teams
 * and the team size they were planned for, its part of a team). */
static void
worker(void *data)
{
    const Job *j = data;
    int64_t t = rt_omp.thread_num(), nt = rt_omp.num_threads();
    if (j->teams && nt == j->nthreads) {
        team_share(j, t);
        return;
    }
    int64_t q = j->n / nt, r = j->n % nt;
    int64_t lo = t * q + (t < r ? t : r), hi = lo + q + (t < r);

    if (lo < hi)
        run_share(j, (int)t, lo, hi);
}

/* GOMP_parallel body: gets one team thread ready to record (pn_thread_prepare). */
static void
prepare_worker(void *data)
{
    (void)data;
    pn_thread_prepare();
}

/* The team threads' state, counters and first timeline chunk are set up once per
 * pn_prepare_epoch in an empty region before the first recorded launch, so that the
 * launch's window does not include them. */
static void
prepare_team(int nthreads)
{
    static _Atomic uint32_t epoch;
    static _Atomic int team;
    uint32_t e = pn_prepare_epoch;

    if (RT_LIKELY(atomic_load_explicit(&epoch, memory_order_relaxed) == e &&
                  atomic_load_explicit(&team, memory_order_relaxed) >= nthreads))
        return;
    rt_omp.parallel(prepare_worker, NULL, (unsigned)nthreads, 0);
    atomic_store_explicit(&team, nthreads, memory_order_relaxed);
    atomic_store_explicit(&epoch, e, memory_order_relaxed);
}

/* Runs the grid on 'nthreads' threads (1: inline), recording it when Proton is on. */
static void
run_grid(Job *j, int nthreads, uint32_t site)
{
    PnLaunch l;

    if (pn_active()) {
        if (nthreads > 1)
            prepare_team(nthreads);
        j->pn = &l;
        pn_launch_begin(&l, site, j->g, nthreads);
        pn_launch_args(&l, j->args);
        j->programs = pn_launch_wants_programs(&l);
    }
    if (nthreads == 1)
        run_share(j, 0, 0, j->n);
    else
        rt_omp.parallel(worker, j, (unsigned)nthreads, 0);
    if (j->pn)
        pn_launch_end(&l);
}

/* Teams for j's programs on t threads (t > programs): on the stack for a few, else
 * aligned heap storage the caller frees when it is not 'local'. */
static RtTeam *
plan_teams(Job *j, int t, RtTeam *local, int nlocal)
{
    RtTeam *tm = local;
    if (j->n > nlocal && !(tm = aligned_alloc(_Alignof(RtTeam), sizeof *tm * (size_t)j->n)))
        return NULL; /* then the programs run as usual, their loops serially */
    for (int g = 0; g < j->n; g++)
        rt_team_init(&tm[g], rt_team_size(g, t, j->n));
    j->teams = tm;
    j->nthreads = t;
    return tm;
}

/* The number of threads the grid of j runs on (teams planned when they apply). */
static int
threads_for(Job *j, int nthreads, int teams, RtTeam *local)
{
    int t = nthreads;
    if (t != 1) {
        if (RT_UNLIKELY(!atomic_load_explicit(&rt_omp_ready, memory_order_acquire)))
            rt_threads_init();
        if (!t)
            t = atomic_load_explicit(&rt_default_threads, memory_order_relaxed);
        if (t > j->n && !teams)
            t = (int)j->n;
        if (t > PN_MAX_WORKERS && pn_active())
            t = PN_MAX_WORKERS; /* Proton keeps per-worker state for this many */
        if (!rt_omp.parallel || atomic_load_explicit(&rt_omp_forked, memory_order_relaxed))
            t = 1;
        if (t > j->n && !plan_teams(j, t, local, 4))
            t = (int)j->n;
    }
    return t;
}

/* The launch of a kernel with prints or asserts: as any other, then the first failed
 * assert, if any, as the result. */
static int
launch_debug(Job *j, RtDebugLaunch *dbg, int nthreads, uint32_t pn_site, int teams)
{
    RtTeam local[4];
    int rc = 0;

    rt_debug_launch_init(dbg);
    j->dbg = dbg;
    run_grid(j, j->n == 1 && !teams ? 1 : threads_for(j, nthreads, teams, local), pn_site);
    if (j->teams && j->teams != local)
        free(j->teams);
    if (atomic_load_explicit(&dbg->failed, memory_order_acquire))
        rc = rt_fail(ECANCELED, "%s", dbg->report);
    rt_debug_launch_fini(dbg);
    return rc;
}

int
rt_launch(RtKernelFn fn, const uint64_t *args, const int32_t grid[3], int nthreads,
          uint32_t pn_site)
{
    return rt_launch_ex(fn, args, grid, nthreads, pn_site, 0);
}

int
rt_launch_ex(RtKernelFn fn, const uint64_t *args, const int32_t grid[3], int nthreads,
             uint32_t pn_site, unsigned flags)
{
    Job j = {fn, args, {grid[0], grid[1], grid[2]}, 0, NULL, 0, NULL, 0, NULL};
    RtTeam local[4];
    RtDebugLaunch dbg;
    int teams = (flags & RT_LAUNCH_TEAMS) != 0;

    if (RT_UNLIKELY((grid[0] | grid[1] | grid[2] | nthreads) < 0))
        return rt_fail(EINVAL, "bad launch: grid (%d, %d, %d), %d threads", grid[0], grid[1],
                       grid[2], nthreads);
    if (RT_UNLIKELY(__builtin_mul_overflow((int64_t)grid[0] * grid[1], (int64_t)grid[2], &j.n)))
        return rt_fail(EINVAL, "bad launch: grid (%d, %d, %d) has too many programs", grid[0],
                       grid[1], grid[2]);
    if (RT_UNLIKELY(flags & RT_LAUNCH_DEBUG) && j.n > 0)
        return launch_debug(&j, &dbg, nthreads, pn_site, teams);
    if (j.n == 0 || (j.n == 1 && (!teams || nthreads == 1))) {
        /* the common tiny launch: no team, no division, one predictable branch */
        if (j.n == 1 && RT_LIKELY(!pn_active()))
            fn(args, 0, 0, 0, 1, 1, 1, &noop_thread);
        else if (j.n == 1)
            run_grid(&j, 1, pn_site);
        return 0;
    }
    run_grid(&j, threads_for(&j, nthreads, teams, local), pn_site);
    if (j.teams && j.teams != local)
        free(j.teams);
    return 0;
}

