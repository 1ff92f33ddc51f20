/*
 * test_runtime_launch.c — unit tests of the grid launcher (rt_launch.c, rt_omp.c) and
 * of program teams for smt.parallel loops (rt_team.c).
 *
 * A recording kernel counts how often each program instance runs and on which thread;
 * a team kernel does the same for the iterations of its parallel loop.
 * The Proton launch hooks are replaced by mocks through `ld --wrap` (runtime/build.mk),
 * so the tests see exactly which hooks the launcher calls, with or without libproton.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proton.h"
#include "rt_int.h"
#include "runtime.h"

/* ---- the recording kernel -------------------------------------------------------------- */

enum { MAXP = 4096 };

typedef struct Rec {
    int32_t g[3];
    _Atomic int count[MAXP];
    pid_t tid[MAXP];
    void *pctx[MAXP];
    _Atomic int bad; /* programs that saw a wrong grid, pid or a NULL pctx */
} Rec;

static void
rec_kernel(const uint64_t *args, int32_t x, int32_t y, int32_t z, int32_t nx, int32_t ny,
           int32_t nz, void *pctx)
{
    Rec *r = (Rec *)(uintptr_t)args[0];
    int64_t lin = x + (int64_t)nx * (y + (int64_t)ny * z);

    if (nx != r->g[0] || ny != r->g[1] || nz != r->g[2] || x < 0 || y < 0 || z < 0 ||
        x >= nx || y >= ny || z >= nz || !pctx || lin >= MAXP) {
        atomic_fetch_add(&r->bad, 1);
        return;
    }
    /* instrumented kernels call record() unconditionally */
    ((PnThread *)pctx)->record(pctx, 0, PN_REC_START);
    ((PnThread *)pctx)->record(pctx, 0, PN_REC_END);
    atomic_fetch_add(&r->count[lin], 1);
    r->tid[lin] = gettid();
    r->pctx[lin] = pctx;
}

static Rec *
run(int32_t gx, int32_t gy, int32_t gz, int nthreads)
{
    static Rec r;
    uint64_t args[1] = {(uint64_t)(uintptr_t)&r};
    int32_t grid[3] = {gx, gy, gz};

    memset(&r, 0, sizeof r);
    memcpy(r.g, grid, sizeof grid);
    assert_int_equal(rt_launch(rec_kernel, args, grid, nthreads, 7), 0);
    return &r;
}

static int64_t
nprog(const Rec *r)
{
    return (int64_t)r->g[0] * r->g[1] * r->g[2];
}

static void
expect_each_once(const Rec *r)
{
    assert_int_equal(atomic_load(&r->bad), 0);
    for (int64_t i = 0; i < nprog(r); i++)
        if (atomic_load(&r->count[i]) != 1)
            fail_msg("grid (%d,%d,%d): program %lld ran %d times", r->g[0], r->g[1], r->g[2],
                     (long long)i, atomic_load(&r->count[i]));
}

static int
distinct_tids(const Rec *r)
{
    pid_t seen[64];
    int n = 0;

    for (int64_t i = 0; i < nprog(r); i++) {
        int k = 0;
        while (k < n && seen[k] != r->tid[i])
            k++;
        if (k == n && n < 64)
            seen[n++] = r->tid[i];
    }
    return n;
}

/* ---- Proton mocks (ld --wrap) ------------------------------------------------------------ */

static struct {
    _Atomic int launch_begin, launch_end, worker_begin, worker_end, prog_begin, prog_end;
    _Atomic int prepare;
    _Atomic int in_launch;         /* prepare called between launch begin and end (wrong) */
    _Atomic int records;
    _Atomic unsigned workers_seen; /* bit per worker index */
    _Atomic int assists, assist_nonzero_pid;
    int wants_programs;
    int last_nthreads;
    uint32_t last_site;
    int32_t last_grid[3];
    pid_t launch_tid;
} mock;

static void
mock_record(PnThread *t, uint32_t id, uint32_t flags)
{
    (void)t, (void)id, (void)flags;
    atomic_fetch_add(&mock.records, 1);
}

static PnThread mock_threads[PN_MAX_WORKERS];

void
__wrap_pn_launch_begin(PnLaunch *l, uint32_t site, const int32_t grid[3], int nthreads)
{
    (void)l;
    atomic_fetch_add(&mock.launch_begin, 1);
    mock.last_site = site;
    mock.last_nthreads = nthreads;
    memcpy(mock.last_grid, grid, sizeof mock.last_grid);
    mock.launch_tid = gettid();
    atomic_store(&mock.in_launch, 1);
}

void
__wrap_pn_launch_end(PnLaunch *l)
{
    (void)l;
    atomic_fetch_add(&mock.launch_end, 1);
    atomic_store(&mock.in_launch, 0);
}

void
__wrap_pn_thread_prepare(void)
{
    atomic_fetch_add(&mock.prepare, atomic_load(&mock.in_launch) ? 1000 : 1);
}

PnThread *
__wrap_pn_worker_begin(PnLaunch *l, int worker)
{
    (void)l;
    atomic_fetch_add(&mock.worker_begin, 1);
    atomic_fetch_or(&mock.workers_seen, 1u << worker);
    mock_threads[worker].record = mock_record;
    return &mock_threads[worker];
}

void
__wrap_pn_worker_end(PnLaunch *l, PnThread *t)
{
    (void)l;
    /* no cmocka asserts off the main thread: count instead */
    if (t >= mock_threads && t < mock_threads + PN_MAX_WORKERS)
        atomic_fetch_add(&mock.worker_end, 1);
}

int
__wrap_pn_launch_wants_programs(const PnLaunch *l)
{
    (void)l;
    return mock.wants_programs;
}

void
__wrap_pn_program_begin(PnThread *t, const int32_t pid[3])
{
    (void)t, (void)pid;
    atomic_fetch_add(&mock.prog_begin, 1);
}

void
__wrap_pn_program_end(PnThread *t)
{
    (void)t;
    atomic_fetch_add(&mock.prog_end, 1);
}

void
__wrap_pn_worker_assist(PnThread *t, const int32_t pid[3])
{
    (void)t;
    atomic_fetch_add(&mock.assists, 1);
    if (pid[0] || pid[1] || pid[2])
        atomic_fetch_add(&mock.assist_nonzero_pid, 1);
}

static int
hooks_called(void)
{
    return mock.launch_begin + mock.launch_end + mock.worker_begin + mock.worker_end +
           mock.prog_begin + mock.prog_end;
}

static int
reset_mock(void **state)
{
    (void)state;
    memset(&mock, 0, sizeof mock);
    pn_active_flag = 0;
    rt_threads_set_default(2);
    return 0;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void
test_every_program_once(void **state)
{
    static const int32_t grids[][3] = {
        {1, 1, 1}, {2, 1, 1}, {7, 1, 1},  {64, 1, 1}, {1024, 1, 1}, {5, 3, 1}, {1, 9, 1},
        {4, 3, 2}, {2, 2, 2}, {1, 1, 13}, {3, 1, 4},  {16, 16, 16}, {7, 5, 3},
    };
    static const int threads[] = {0, 1, 2, 3, 8};

    (void)state;
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++)
            expect_each_once(run(grids[g][0], grids[g][1], grids[g][2], threads[t]));
    assert_int_equal(hooks_called(), 0); /* Proton off: no hook at all */
}

static void
test_empty_grid(void **state)
{
    Rec *r;

    (void)state;
    r = run(0, 5, 5, 0);
    for (int i = 0; i < MAXP; i++)
        assert_int_equal(atomic_load(&r->count[i]), 0);
    run(5, 0, 1, 2);
    run(1, 1, 0, 1);
    pn_active_flag = 1; /* nothing to record either */
    run(0, 0, 0, 2);
    assert_int_equal(hooks_called(), 0);
}

static void
test_bad_launch(void **state)
{
    uint64_t args[1] = {0};
    int32_t neg[3] = {-1, 1, 1}, ok[3] = {4, 1, 1};

    (void)state;
    assert_int_equal(rt_launch(rec_kernel, args, neg, 0, 0), -EINVAL);
    assert_int_equal(rt_launch(rec_kernel, args, ok, -2, 0), -EINVAL);
    assert_non_null(strstr(rt_last_error(), "bad launch"));
}

static void
test_inline_paths(void **state)
{
    pid_t me = gettid();
    Rec *r;

    (void)state;
    r = run(1, 1, 1, 8); /* one program: always inline */
    assert_int_equal(r->tid[0], me);
    r = run(64, 2, 1, 1); /* one thread: inline */
    expect_each_once(r);
    for (int i = 0; i < 128; i++)
        assert_int_equal(r->tid[i], me);
}

/* Static schedule: thread t of T runs one contiguous chunk, the first n % T chunks one
 * program longer. */
static void
test_static_chunks(void **state)
{
    Rec *r;

    (void)state;
    r = run(64, 1, 1, 2);
    expect_each_once(r);
    assert_int_equal(distinct_tids(r), 2);
    for (int i = 1; i < 64; i++)
        assert_true((r->tid[i] == r->tid[i - 1]) == (i != 32));
    r = run(5, 2, 1, 3); /* 10 programs on 3 threads: 4 + 3 + 3 */
    expect_each_once(r);
    assert_int_equal(distinct_tids(r), 3);
    for (int i = 1; i < 10; i++)
        assert_true((r->tid[i] == r->tid[i - 1]) == (i != 4 && i != 7));
}

static void
test_grid_smaller_than_threads(void **state)
{
    Rec *r;

    (void)state;
    r = run(3, 1, 1, 16);
    expect_each_once(r);
    assert_true(distinct_tids(r) <= 3);
    expect_each_once(run(1, 2, 1, 0));
    rt_threads_set_default(8);
    r = run(1, 1, 2, 0);
    expect_each_once(r);
    assert_true(distinct_tids(r) <= 2);
}

static void
test_omp_num_threads(void **state)
{
    char *saved = getenv("OMP_NUM_THREADS") ? strdup(getenv("OMP_NUM_THREADS")) : NULL;
    cpu_set_t set;
    Rec *r;

    (void)state;
    setenv("OMP_NUM_THREADS", "3", 1);
    rt_threads_set_default(0);
    assert_int_equal(rt_threads_default(), 3);
    r = run(30, 1, 1, 0);
    expect_each_once(r);
    assert_int_equal(distinct_tids(r), 3);
    r = run(30, 1, 1, 2); /* per-launch override */
    assert_int_equal(distinct_tids(r), 2);
    setenv("OMP_NUM_THREADS", "2,1", 1);
    rt_threads_set_default(0);
    assert_int_equal(rt_threads_default(), 2);
    setenv("OMP_NUM_THREADS", "bogus", 1);
    rt_threads_set_default(0);
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    assert_int_equal(rt_threads_default(), CPU_COUNT(&set));
    unsetenv("OMP_NUM_THREADS");
    rt_threads_set_default(0);
    assert_int_equal(rt_threads_default(), CPU_COUNT(&set));
    if (saved)
        setenv("OMP_NUM_THREADS", saved, 1);
    free(saved);
}

static void
test_runtime_resolved(void **state)
{
    const char *forced = getenv("TRITIUM_OMP_LIB");

    (void)state;
    assert_int_equal(rt_threads_init(), 0);
    assert_non_null(rt_omp.parallel);
    /* no OpenMP runtime is linked into this test: it was found or loaded at run time */
    if (forced && *forced)
        assert_string_equal(rt_threads_runtime(), forced);
    else
        assert_non_null(strstr(rt_threads_runtime(), "gomp"));
}

/* Proton off: every program gets the same non-NULL no-op context. */
static void
test_pctx_noop(void **state)
{
    Rec *r;

    (void)state;
    r = run(1, 1, 1, 0);
    void *noop = r->pctx[0];
    assert_non_null(noop);
    r = run(40, 1, 1, 2);
    expect_each_once(r);
    for (int i = 0; i < 40; i++)
        assert_ptr_equal(r->pctx[i], noop);
    assert_int_equal(hooks_called() + mock.records, 0);
}

static void
test_proton_hooks_parallel(void **state)
{
    Rec *r;

    (void)state;
    pn_active_flag = 1;
    r = run(64, 1, 1, 2);
    expect_each_once(r);
    assert_int_equal(mock.launch_begin, 1);
    assert_int_equal(mock.launch_end, 1);
    assert_int_equal(mock.last_site, 7);
    assert_int_equal(mock.last_nthreads, 2);
    assert_int_equal(mock.last_grid[0], 64);
    assert_int_equal(mock.launch_tid, gettid());
    assert_int_equal(mock.worker_begin, 2);
    assert_int_equal(mock.worker_end, 2);
    assert_int_equal(mock.workers_seen, 3);
    assert_int_equal(mock.prog_begin, 0); /* not asked for */
    assert_int_equal(mock.records, 2 * 64);
    /* static schedule: worker 0 ran the first half with its own PnThread */
    for (int i = 0; i < 64; i++)
        assert_ptr_equal(r->pctx[i], &mock_threads[i < 32 ? 0 : 1]);

    memset(&mock, 0, sizeof mock);
    mock.wants_programs = 1;
    r = run(4, 3, 2, 3);
    expect_each_once(r);
    assert_int_equal(mock.worker_begin, 3);
    assert_int_equal(mock.prog_begin, 24);
    assert_int_equal(mock.prog_end, 24);
}

/* Before the first recorded multi-threaded launch of a pn_prepare_epoch, every team
 * thread gets ready (pn_thread_prepare) outside the launch, so the launch's window does
 * not include opening counters or allocating (issue 14); not again in that epoch, and
 * again for a larger team or a new epoch. */
static void
test_team_prepared_before_first_launch(void **state)
{
    (void)state;
    pn_active_flag = 1;
    pn_prepare_epoch += 7;
    expect_each_once(run(64, 1, 1, 2));
    assert_int_equal(mock.prepare, 2);
    expect_each_once(run(64, 1, 1, 2));
    assert_int_equal(mock.prepare, 2);
    expect_each_once(run(3, 1, 1, 1)); /* inline: the launching thread prepares in begin */
    assert_int_equal(mock.prepare, 2);
    expect_each_once(run(64, 1, 1, 3));
    assert_int_equal(mock.prepare, 2 + 3);
    pn_prepare_epoch++;
    expect_each_once(run(64, 1, 1, 2));
    assert_int_equal(mock.prepare, 2 + 3 + 2);
    pn_active_flag = 0;
    pn_prepare_epoch++;
    expect_each_once(run(64, 1, 1, 2)); /* nothing records: nothing to prepare */
    assert_int_equal(mock.prepare, 2 + 3 + 2);
}

static void
test_proton_hooks_inline(void **state)
{
    Rec *r;

    (void)state;
    pn_active_flag = 1;
    mock.wants_programs = 1;
    r = run(1, 1, 1, 0);
    expect_each_once(r);
    assert_int_equal(mock.launch_begin, 1);
    assert_int_equal(mock.last_nthreads, 1);
    assert_int_equal(mock.worker_begin, 1);
    assert_int_equal(mock.workers_seen, 1);
    assert_int_equal(mock.prog_begin, 1);
    assert_ptr_equal(r->pctx[0], &mock_threads[0]);
    memset(&mock, 0, sizeof mock);
    r = run(10, 1, 1, 1);
    expect_each_once(r);
    assert_int_equal(mock.launch_begin + mock.launch_end, 2);
    assert_int_equal(mock.worker_begin, 1);
    assert_int_equal(mock.prog_begin, 0);
}

/* A launch from inside a running program (a nested OpenMP region) runs on one thread
 * and still covers its grid. */
static Rec nested_inner[2];

static void
nesting_kernel(const uint64_t *args, int32_t x, int32_t y, int32_t z, int32_t nx, int32_t ny,
               int32_t nz, void *pctx)
{
    Rec *r = &nested_inner[x];
    uint64_t a[1] = {(uint64_t)(uintptr_t)r};
    int32_t g[3] = {8, 2, 1};

    (void)args, (void)y, (void)z, (void)nx, (void)ny, (void)nz, (void)pctx;
    memcpy(r->g, g, sizeof g);
    rt_launch(rec_kernel, a, g, 2, 0);
}

static void
test_nested_launch(void **state)
{
    int32_t g[3] = {2, 1, 1};

    (void)state;
    memset(nested_inner, 0, sizeof nested_inner);
    assert_int_equal(rt_launch(nesting_kernel, NULL, g, 2, 0), 0);
    expect_each_once(&nested_inner[0]);
    expect_each_once(&nested_inner[1]);
}

/* libgomp's pool does not survive fork: a child must still finish its launches. */
static void
test_launch_after_fork(void **state)
{
    int status;
    pid_t pid;

    (void)state;
    expect_each_once(run(64, 1, 1, 2)); /* the parent's pool is warm */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20); /* a hang becomes SIGALRM */
        Rec *r = run(64, 1, 1, 2);
        int ok = atomic_load(&r->bad) == 0 && distinct_tids(r) == 1;
        for (int i = 0; i < 64; i++)
            ok &= atomic_load(&r->count[i]) == 1;
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    expect_each_once(run(64, 1, 1, 2)); /* the parent still runs in parallel */
    assert_int_equal(distinct_tids(run(64, 1, 1, 2)), 2);
}

static void
test_huge_grid_rejected(void **state)
{
    uint64_t args[1] = {0};
    int32_t g[3] = {INT32_MAX, INT32_MAX, INT32_MAX};

    (void)state;
    assert_int_equal(rt_launch(rec_kernel, args, g, 0, 0), -EINVAL);
}

/* The real thing: a kernel .so compiled now, loaded, launched on a 3-D grid. */
static const char so_src[] =
    "#include <stdint.h>\n"
    "void tritium_kernel(const uint64_t *a, int32_t x, int32_t y, int32_t z, int32_t nx,\n"
    "                    int32_t ny, int32_t nz, void *p) {\n"
    "    int *count = (int *)(uintptr_t)a[0];\n"
    "    int *bad = (int *)(uintptr_t)a[1];\n"
    "    if (!p || nx != (int32_t)a[2] || ny != (int32_t)a[3] || nz != (int32_t)a[4])\n"
    "        __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);\n"
    "    __atomic_fetch_add(&count[x + nx * (y + ny * z)], 1, __ATOMIC_RELAXED);\n"
    "}\n";

/* Compiles C source 'text' into dir/k.so (dir made from its template); loads it. */
static RtKernel *
build_so(const char *text, char *dir, char *so, size_t cap)
{
    char src[64], cmd[256];
    RtKernel *k;
    FILE *f;

    assert_non_null(mkdtemp(dir));
    snprintf(src, sizeof src, "%s/k.c", dir);
    snprintf(so, cap, "%s/k.so", dir);
    f = fopen(src, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O2 -o %s %s", so, src);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(rt_kernel_load(so, &k), 0);
    return k;
}

static void
test_so_kernel_3d(void **state)
{
    char dir[] = "/tmp/tritium-launch-XXXXXX", so[64];
    int32_t g[3] = {6, 5, 4};
    int count[120] = {0}, bad = 0;
    uint64_t args[5] = {(uint64_t)(uintptr_t)count, (uint64_t)(uintptr_t)&bad, 6, 5, 4};

    (void)state;
    RtKernel *k = build_so(so_src, dir, so, sizeof so);
    for (int t = 0; t <= 3; t++) {
        memset(count, 0, sizeof count);
        assert_int_equal(rt_launch(rt_kernel_fn(k), args, g, t, 0), 0);
        for (int i = 0; i < 120; i++)
            assert_int_equal(count[i], 1);
    }
    assert_int_equal(bad, 0);
    rt_kernel_unload(k);
    rt_fs_remove_tree(dir);
}

/* ---- program teams (smt.parallel loops) ---------------------------------------------------- */

enum { MAXI = 2048, NPROG = 8 };

/* What a team kernel saw: per program, the code around its loop; per iteration, who ran it. */
typedef struct TeamRec {
    int64_t iters;                 /* trip count of each program's loop */
    int nested;                    /* iterations run an inner parallel loop of 4 */
    int wait_for_help;             /* iteration 0 waits until another thread ran one */
    _Atomic int before[NPROG], after[NPROG];
    _Atomic int count[NPROG][MAXI];
    pid_t tid[NPROG][MAXI], prog_tid[NPROG];
    void *pctx[NPROG][MAXI];
    _Atomic int inner[NPROG][MAXI][4];
    _Atomic int inner_other_thread; /* inner iterations not on their outer iteration's thread */
    _Atomic pid_t other_tid;       /* the last thread to run an iteration other than 0 */
    _Atomic int timeouts;
} TeamRec;

static TeamRec team_rec;

typedef struct LoopCtx {
    TeamRec *r;
    int prog;
    int64_t outer;
    pid_t tid;
} LoopCtx;

static void
inner_body(void *data, int64_t lo, int64_t hi, void *pctx)
{
    LoopCtx *c = data;
    (void)pctx;
    for (int64_t i = lo; i < hi; i++) {
        atomic_fetch_add(&c->r->inner[c->prog][c->outer][i], 1);
        if (gettid() != c->tid)
            atomic_fetch_add(&c->r->inner_other_thread, 1);
    }
}

/* Iteration 0 waits (at most ~10 s) until another iteration ran on another thread.
 * Whichever thread claimed iteration 0 (the leader or a helper: the first claim can
 * go either way) blocks here, so every other iteration runs elsewhere; with no
 * second thread in the team this times out. */
static void
wait_for_help(TeamRec *r)
{
    pid_t me = gettid(), t;
    for (long spins = 0; !(t = atomic_load(&r->other_tid)) || t == me; spins++) {
        if (spins > 200L * 1000) {
            atomic_fetch_add(&r->timeouts, 1);
            return;
        }
        usleep(50);
    }
}

static void
team_body(void *data, int64_t lo, int64_t hi, void *pctx)
{
    LoopCtx *c = data;
    TeamRec *r = c->r;
    for (int64_t i = lo; i < hi; i++) {
        if (i == 0 && r->wait_for_help)
            wait_for_help(r);
        atomic_fetch_add(&r->count[c->prog][i], 1);
        r->tid[c->prog][i] = gettid();
        r->pctx[c->prog][i] = pctx;
        if (i != 0)
            atomic_store(&r->other_tid, gettid());
        ((PnThread *)pctx)->record(pctx, 0, PN_REC_START);
        ((PnThread *)pctx)->record(pctx, 0, PN_REC_END);
        if (r->nested) {
            LoopCtx in = {r, c->prog, i, gettid()};
            rt_parallel_for(inner_body, &in, 4, pctx);
        }
    }
}

/* A program: code before the loop, the loop through rt_parallel_for, code after it. */
static void
team_kernel(const uint64_t *args, int32_t x, int32_t y, int32_t z, int32_t nx, int32_t ny,
            int32_t nz, void *pctx)
{
    TeamRec *r = (TeamRec *)(uintptr_t)args[0];
    int prog = (int)(x + (int64_t)nx * (y + (int64_t)ny * z));
    LoopCtx c = {r, prog, 0, 0};

    (void)nz;
    if (prog >= NPROG)
        return;
    r->prog_tid[prog] = gettid();
    atomic_fetch_add(&r->before[prog], 1);
    rt_parallel_for(team_body, &c, r->iters, pctx);
    atomic_fetch_add(&r->after[prog], 1);
}

static TeamRec *
run_team(int32_t gx, int nthreads, int64_t iters, unsigned flags)
{
    TeamRec *r = &team_rec;
    uint64_t args[1] = {(uint64_t)(uintptr_t)r};
    int32_t grid[3] = {gx, 1, 1};
    int nested = r->nested, wait = r->wait_for_help;

    memset(r, 0, sizeof *r);
    r->iters = iters;
    r->nested = nested;
    r->wait_for_help = wait;
    assert_int_equal(rt_launch_ex(team_kernel, args, grid, nthreads, 7, flags), 0);
    return r;
}

/* Each program ran once, before and after its loop, and each iteration exactly once. */
static void
expect_team_once(const TeamRec *r, int programs)
{
    for (int p = 0; p < programs; p++) {
        assert_int_equal(atomic_load(&r->before[p]), 1);
        assert_int_equal(atomic_load(&r->after[p]), 1);
        for (int64_t i = 0; i < r->iters; i++)
            if (atomic_load(&r->count[p][i]) != 1)
                fail_msg("program %d iteration %lld ran %d times", p, (long long)i,
                         atomic_load(&r->count[p][i]));
        for (int64_t i = 0; r->nested && i < r->iters; i++)
            for (int k = 0; k < 4; k++)
                assert_int_equal(atomic_load(&r->inner[p][i][k]), 1);
    }
    assert_int_equal(atomic_load(&r->timeouts), 0);
}

static int
team_tids(const TeamRec *r, int prog)
{
    pid_t seen[64];
    int n = 0;
    for (int64_t i = 0; i < r->iters; i++) {
        int k = 0;
        while (k < n && seen[k] != r->tid[prog][i])
            k++;
        if (k == n && n < 64)
            seen[n++] = r->tid[prog][i];
    }
    return n;
}

static void
test_team_every_iteration_once(void **state)
{
    static const int grids[] = {1, 2, 3, 5, 8};
    static const int threads[] = {0, 1, 2, 3, 4, 8};
    static const int64_t iters[] = {0, 1, 2, 7, 100, MAXI};

    (void)state;
    for (int nested = 0; nested < 2; nested++) {
        team_rec.nested = nested;
        for (size_t g = 0; g < sizeof grids / sizeof *grids; g++)
            for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
                for (size_t i = 0; i < sizeof iters / sizeof *iters; i++)
                    expect_team_once(run_team(grids[g], threads[t], iters[i], RT_LAUNCH_TEAMS),
                                     grids[g]);
    }
    /* a loop inside a parallel loop's body runs on the thread that meets it */
    assert_int_equal(atomic_load(&team_rec.inner_other_thread), 0);
    team_rec.nested = 0;
    assert_int_equal(hooks_called(), 0);
}

/* grid (1,) on 2 threads: the idle thread runs iterations (iteration 0 does not finish
 * until it has); grid (2,) on 2 threads: no thread is idle, each loop stays on its
 * program's thread; without the flag the loop never leaves it. */
static void
test_team_spreads_iterations(void **state)
{
    TeamRec *r;

    (void)state;
    team_rec.wait_for_help = 1;
    r = run_team(1, 2, 64, RT_LAUNCH_TEAMS);
    team_rec.wait_for_help = 0;
    expect_team_once(r, 1);
    assert_int_equal(team_tids(r, 0), 2);
    assert_int_equal(r->prog_tid[0], gettid()); /* the launching thread leads */

    r = run_team(2, 2, 64, RT_LAUNCH_TEAMS);
    expect_team_once(r, 2);
    for (int p = 0; p < 2; p++) {
        assert_int_equal(team_tids(r, p), 1);
        assert_int_equal(r->tid[p][0], r->prog_tid[p]);
    }
    r = run_team(1, 2, 64, 0);
    expect_team_once(r, 1);
    assert_int_equal(team_tids(r, 0), 1);
    r = run_team(1, 1, 64, RT_LAUNCH_TEAMS);
    assert_int_equal(team_tids(r, 0), 1);
}

/* With Proton on, a helper is a worker of its own: its iterations get its PnThread and
 * are tagged with the leader's program. */
static void
test_team_proton(void **state)
{
    TeamRec *r;

    (void)state;
    pn_active_flag = 1;
    mock.wants_programs = 1;
    team_rec.wait_for_help = 1;
    r = run_team(1, 2, 64, RT_LAUNCH_TEAMS);
    team_rec.wait_for_help = 0;
    expect_team_once(r, 1);
    assert_int_equal(mock.launch_begin, 1);
    assert_int_equal(mock.last_nthreads, 2);
    assert_int_equal(mock.worker_begin, 2);
    assert_int_equal(mock.worker_end, 2);
    assert_int_equal(mock.workers_seen, 3);
    assert_int_equal(mock.prog_begin, 1); /* one program, on its leader */
    assert_int_equal(mock.records, 2 * 64);
    assert_true(mock.assists >= 1);
    assert_int_equal(mock.assist_nonzero_pid, 0);
    for (int i = 0; i < 64; i++)
        assert_ptr_equal(r->pctx[0][i], &mock_threads[r->tid[0][i] == r->prog_tid[0] ? 0 : 1]);

    memset(&mock, 0, sizeof mock);
    r = run_team(3, 8, 100, RT_LAUNCH_TEAMS); /* teams of 3, 3, 2 */
    expect_team_once(r, 3);
    assert_int_equal(mock.worker_begin, 8);
    assert_int_equal(mock.workers_seen, 0xff);
    assert_int_equal(mock.records, 2 * 300);
}

static void
test_team_partition(void **state)
{
    int member, seen[3] = {0};

    (void)state;
    /* 8 threads, 3 programs: threads 0-2, 3-5, 6-7 */
    for (int t = 0; t < 8; t++) {
        int g = rt_team_of(t, 8, 3, &member);
        assert_int_equal(g, t < 3 ? 0 : t < 6 ? 1 : 2);
        assert_int_equal(member, t < 3 ? t : t < 6 ? t - 3 : t - 6);
        seen[g]++;
    }
    for (int g = 0; g < 3; g++)
        assert_int_equal(seen[g], rt_team_size(g, 8, 3));
    assert_int_equal(rt_team_of(1, 2, 1, &member), 0);
    assert_int_equal(member, 1);
}

/* A kernel library exporting tritium_parallel_for gets it pointed at rt_parallel_for. */
static const char par_so_src[] =
    "#include <stdint.h>\n"
    "static void serial(void (*b)(void *, int64_t, int64_t, void *), void *d, int64_t n, void *p)\n"
    "{ if (n > 0) b(d, 0, n, p); }\n"
    "void (*tritium_parallel_for)(void (*)(void *, int64_t, int64_t, void *), void *, int64_t,\n"
    "                             void *) = serial;\n"
    "void tritium_kernel(const uint64_t *a, int32_t x, int32_t y, int32_t z, int32_t nx,\n"
    "                    int32_t ny, int32_t nz, void *p) { (void)a; }\n";

static void
test_team_loader_binds(void **state)
{
    char dir[] = "/tmp/tritium-team-XXXXXX", so[64];

    (void)state;
    RtKernel *k = build_so(par_so_src, dir, so, sizeof so);
    assert_int_equal(rt_kernel_launch_flags(k), RT_LAUNCH_TEAMS);
    void *h = dlopen(so, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    void (**slot)(RtParallelBody, void *, int64_t, void *) = dlsym(h, "tritium_parallel_for");
    assert_non_null(slot);
    assert_true(*slot == rt_parallel_for);
    dlclose(h);
    rt_kernel_unload(k);
    rt_fs_remove_tree(dir);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, reset_mock, reset_mock)
    const struct CMUnitTest tests[] = {
        T(test_every_program_once),  T(test_empty_grid),
        T(test_bad_launch),          T(test_inline_paths),
        T(test_static_chunks),       T(test_grid_smaller_than_threads),
        T(test_omp_num_threads),     T(test_runtime_resolved),
        T(test_pctx_noop),           T(test_proton_hooks_parallel),
        T(test_team_prepared_before_first_launch),
        T(test_proton_hooks_inline), T(test_nested_launch),
        T(test_launch_after_fork),   T(test_huge_grid_rejected),
        T(test_so_kernel_3d),        T(test_team_every_iteration_once),
        T(test_team_spreads_iterations), T(test_team_proton),
        T(test_team_partition),      T(test_team_loader_binds),
    };
#undef T
    return cmocka_run_group_tests_name("runtime_launch", tests, NULL, NULL);
}
