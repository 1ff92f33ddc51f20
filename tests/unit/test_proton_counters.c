/*
 * test_proton_counters.c — event names, probing, the default set and its honest
 * fallback, perf_event groups read per thread, multiplex scaling, and counter
 * deltas summed over every worker of a launch (pn_events, pn_counters, pn_launch).
 *
 * The development VMs have no hardware PMU, so hardware events are checked only
 * where they open; software events (page-faults, task-clock) are really counted:
 * two workers that each touch fresh pages must show at least that many faults.
 * The getrusage source of the software set is checked against perf's own
 * task-clock read around each of its readings (the value must fall between), and a
 * slot whose thread never began reports nothing while the others still add up.
 */
#include "test_proton_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void touch_pages(void);
static void touch_n(size_t n);
static uint64_t ru_switches(const struct rusage *r);

static int
setup(void **state)
{
    (void)state;
    unsetenv("PROTON_KERNEL_CAPTURE");
    unsetenv("PROTON_EVENTS");
    pt_reset();
    return 0;
}

static void
test_resolve(void **state)
{
    PnEvent ev;
    char why[256];
    (void)state;
    assert_int_equal(pn_event_resolve("task-clock", &ev, why, sizeof why), 0);
    assert_int_equal(ev.attr.type, PERF_TYPE_SOFTWARE);
    assert_int_equal(ev.attr.config, PERF_COUNT_SW_TASK_CLOCK);
    assert_true(ev.is_ns);
    assert_false(ev.is_hw);
    assert_string_equal(ev.name, "task-clock (ns)");
    assert_int_equal(ev.attr.exclude_kernel, 1);
    assert_int_equal(pn_event_resolve("page-faults", &ev, why, sizeof why), 0);
    assert_string_equal(ev.name, "page-faults");
    assert_int_equal(pn_event_resolve("cycles", &ev, why, sizeof why), 0);
    assert_int_equal(ev.attr.type, PERF_TYPE_HARDWARE);
    assert_int_equal(ev.attr.config, PERF_COUNT_HW_CPU_CYCLES);
    assert_true(ev.is_hw);
    assert_int_equal(pn_event_resolve("perf::PERF_COUNT_SW_CONTEXT_SWITCHES", &ev, why, sizeof why), 0);
    assert_int_equal(ev.attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
    assert_int_equal(pn_event_resolve("r01c2", &ev, why, sizeof why), 0);
    assert_int_equal(ev.attr.type, PERF_TYPE_RAW);
    assert_int_equal(ev.attr.config, 0x1c2);
    assert_int_equal(pn_event_resolve("no-such-event-xyz", &ev, why, sizeof why), -ENOENT);
    assert_non_null(strstr(why, "unknown event"));
}

static void
test_probe(void **state)
{
    char why[256];
    int rc;
    (void)state;
    assert_int_equal(pn_event_probe("task-clock", why, sizeof why), 0);
    assert_int_equal(pn_event_probe("page-faults", why, sizeof why), 0);
    rc = pn_event_probe("cycles", why, sizeof why);
    if (rc < 0) /* no PMU here: say why, never pretend */
        assert_true(strstr(why, "perf_event_open") != NULL);
    assert_int_equal(pn_event_probe("bogus-event", why, sizeof why), -ENOENT);
}

typedef struct Seen {
    int n, task_clock_sw, cycles_hw, libpfm;
} Seen;

static void
on_event(const char *name, const char *desc, const char *pmu, int is_hw, void *user)
{
    Seen *s = user;
    assert_non_null(desc);
    s->n++;
    if (strcmp(name, "task-clock") == 0 && !is_hw)
        s->task_clock_sw = 1;
    if (strcmp(name, "cycles") == 0 && is_hw)
        s->cycles_hw = 1;
    if (strcmp(pmu, "perf") == 0 && strstr(name, "::"))
        s->libpfm = 1;
}

static void
test_events_foreach(void **state)
{
    Seen s = { 0 };
    int n;
    (void)state;
    n = pn_events_foreach(on_event, &s);
    assert_int_equal(n, s.n);
    assert_true(n > 20);
    assert_true(s.task_clock_sw);
    assert_true(s.cycles_hw);
    assert_true(s.libpfm);
    assert_int_equal(pn_events_foreach(NULL, NULL), -EINVAL);
}

/* stderr of 'fn' as a string (caller frees) */
static char *
capture_stderr(void (*fn)(void))
{
    char *path = pt_path("stderr.txt");
    int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    fflush(stderr);
    dup2(fd, 2);
    close(fd);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    return pt_read(path);
}

static void
record_twice(void)
{
    uint32_t k = pt_kernel("notice_k", 0, NULL);
    pn_capture_enable(1);
    pt_launch(k, 1, 100, 0);
    pt_launch(k, 1, 100, 0);
    pn_capture_enable(0);
}

static void
nothing(void)
{
    pn_counter_count();
}

/* the default: cycles+instructions with a PMU, else software events and ONE notice
 * that names them, printed only once something records */
static void
test_default_set(void **state)
{
    char why[256], *err;
    (void)state;
    err = capture_stderr(nothing);
    assert_string_equal(err, ""); /* resolving alone prints nothing */
    free(err);
    if (pn_event_probe("cycles", why, sizeof why) == 0) {
        assert_string_equal(pn_counter_source(), "hardware");
        assert_string_equal(pn_counter_name(0), "cycles");
        assert_string_equal(pn_counter_name(1), "instructions");
        return;
    }
    assert_string_equal(pn_counter_source(), "software");
    assert_int_equal(pn_counter_count(), 3);
    assert_string_equal(pn_counter_name(0), "task-clock (ns)");
    assert_string_equal(pn_counter_name(1), "page-faults");
    assert_string_equal(pn_counter_name(2), "context-switches");
    assert_null(pn_counter_name(3));
    err = capture_stderr(record_twice);
    assert_non_null(strstr(err, "no hardware performance counters"));
    assert_non_null(strstr(err, "task-clock, page-faults, context-switches"));
    assert_null(strstr(strstr(err, "proton:") + 1, "proton:")); /* once */
    free(err);
}

static void
test_explicit_set(void **state)
{
    (void)state;
    setenv("PROTON_EVENTS", "page-faults, bogus-event,task-clock", 1);
    pt_reset();
    assert_int_equal(pn_counter_count(), 2);
    assert_string_equal(pn_counter_name(0), "page-faults");
    assert_string_equal(pn_counter_name(1), "task-clock (ns)");
    assert_string_equal(pn_counter_source(), "software");
    setenv("PROTON_EVENTS", "none", 1);
    pt_reset();
    assert_int_equal(pn_counter_count(), 0);
    assert_string_equal(pn_counter_source(), "none");
}

/* an explicit set where no event opens: ONE notice naming the dropped events and
 * saying that only times are measured (no "cycles" made up from timestamps) */
static void
test_no_event_available(void **state)
{
    char why[256], *err;
    (void)state;
    setenv("PROTON_EVENTS", "bogus-event", 1);
    pt_reset();
    assert_int_equal(pn_counter_count(), 0);
    assert_string_equal(pn_counter_source(), "none");
    err = capture_stderr(record_twice);
    assert_non_null(strstr(err, "proton: no PROTON_EVENTS event is available (bogus-event: unknown event"));
    assert_non_null(strstr(err, "); no counters, measuring time only\n"));
    assert_null(strstr(strstr(err, "proton:") + 1, "proton:")); /* once */
    free(err);
    if (pn_event_probe("cycles", why, sizeof why) == 0)
        return;
    setenv("PROTON_EVENTS", "cycles", 1); /* no PMU here */
    pt_reset();
    err = capture_stderr(record_twice);
    assert_non_null(strstr(err, "proton: no PROTON_EVENTS event is available (cycles: "));
    assert_non_null(strstr(err, "measuring time only"));
    assert_null(strstr(strstr(err, "proton:") + 1, "proton:"));
    free(err);
}

/* multiplex scaling: value * enabled / running over the interval */
static void
test_delta_scaling(void **state)
{
    PnCtrVal a = { { 100, 5 }, 1000, 1000 }, b = { { 300, 5 }, 3000, 2000 };
    PnCtrVal c = { { 0 }, 0, 0 }, e = { { 1ull << 62 }, 4, 2 };
    uint64_t d[2];
    (void)state;
    pn_ctr_delta(&a, &b, 2, d);
    assert_int_equal(d[0], 400); /* 200 counted in half the time */
    assert_int_equal(d[1], 0);
    pn_ctr_delta(&a, &a, 1, d);
    assert_int_equal(d[0], 0);
    pn_ctr_delta(&c, &e, 1, d); /* no overflow in the scaling */
    assert_int_equal(d[0], 1ull << 63);
    b.running = a.running; /* did not run at all: not counted */
    pn_ctr_delta(&a, &b, 1, d);
    assert_int_equal(d[0], 0);
}

/* a group opened for this thread really counts */
static void
test_group_counts(void **state)
{
    PnCtrGroup g;
    PnCtrVal v0, v1;
    uint64_t d[PN_MAX_COUNTERS];
    volatile double x = 1;
    (void)state;
    setenv("PROTON_EVENTS", "task-clock,page-faults", 1);
    pt_reset();
    assert_int_equal(pn_ctr_open(&g), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(pn_ctr_read(&g, &v0), 0);
    for (int i = 0; i < 3000000; i++)
        x = x * 1.0000001 + 1e-9;
    assert_int_equal(pn_ctr_read(&g, &v1), 0);
    pn_ctr_delta(&v0, &v1, g.n, d);
    assert_true(d[0] > 100000); /* > 0.1 ms of task-clock */
    pn_ctr_close(&g);
}

#define PAGES 200

/* perf's task-clock of this thread, read directly */
static uint64_t
tc_now(int fd)
{
    uint64_t v = 0;
    assert_int_equal(read(fd, &v, sizeof v), (ssize_t)sizeof v);
    return v;
}

/* The software set is served by getrusage plus task-clock extended while the thread
 * is not switched: every delta must lie between perf's task-clock deltas read just
 * inside and just outside the two readings (1 us of slack for the two clocks),
 * faults must count the pages touched, and a sleep must count as a switch. */
static void
test_rusage_source(void **state)
{
    PnCtrGroup g;
    PnCtrVal a, b;
    uint64_t d[PN_MAX_COUNTERS];
    struct perf_event_attr at;
    int fd, switched = 0;
    (void)state;
    setenv("PROTON_EVENTS", "task-clock,page-faults,context-switches", 1);
    setenv("PROTON_SW_COUNTERS", "perf", 1);
    pt_reset();
    assert_int_equal(pn_ctr_open(&g), 0);
    assert_int_equal(g.ru, 0); /* PROTON_SW_COUNTERS=perf: the group read() */
    pn_ctr_close(&g);
    unsetenv("PROTON_SW_COUNTERS");
    pt_reset();
    assert_int_equal(pn_ctr_open(&g), 0);
    assert_int_equal(g.ru, 1);
    assert_int_equal(g.n, 3);
    memset(&at, 0, sizeof at);
    at.size = sizeof at;
    at.type = PERF_TYPE_SOFTWARE;
    at.config = PERF_COUNT_SW_TASK_CLOCK;
    at.exclude_kernel = 1;
    fd = (int)syscall(SYS_perf_event_open, &at, 0, -1, -1, 0);
    assert_true(fd >= 0);
    for (int i = 0; i < 60; i++) {
        uint64_t p0 = tc_now(fd), p0b, p1, p1b;
        volatile double x = 1;
        struct rusage r1, r2;
        assert_int_equal(pn_ctr_read(&g, &a), 0);
        p0b = tc_now(fd);
        getrusage(RUSAGE_THREAD, &r1);
        for (int j = 0; j < (i % 4) * 20000; j++)
            x = x * 1.0000001 + 1e-9;
        if (i % 3 == 0)
            usleep(200); /* sleeps: a voluntary switch */
        if (i % 5 == 0)
            touch_pages();
        getrusage(RUSAGE_THREAD, &r2);
        p1 = tc_now(fd);
        assert_int_equal(pn_ctr_read(&g, &b), 0);
        p1b = tc_now(fd);
        pn_ctr_delta(&a, &b, g.n, d);
        assert_true(d[0] + 1000 >= p1 - p0b);
        assert_true(d[0] <= p1b - p0 + 1000);
        if (i % 5 == 0)
            assert_true(d[1] >= PAGES - 8);
        /* not d[2] >= 1 after each sleep: a sleep whose timer fires before the
         * thread is off the CPU (a vCPU stalled for 200 us) is no switch */
        assert_true(d[2] >= ru_switches(&r2) - ru_switches(&r1));
        switched += d[2] > 0;
    }
    /* 20 of the 60 intervals sleep; under ASan on a loaded VM a few of those
     * sleeps may not switch (see above), so ask for half of them: a counter
     * stuck at zero still fails */
    assert_true(switched >= 10);
    close(fd);
    pn_ctr_close(&g);
}

static uint64_t
ru_faults(const struct rusage *r)
{
    return (uint64_t)r->ru_minflt + (uint64_t)r->ru_majflt;
}

static uint64_t
ru_switches(const struct rusage *r)
{
    return (uint64_t)r->ru_nvcsw + (uint64_t)r->ru_nivcsw;
}

/* pn_ctr_read_after with the watcher: the interval's faults and switches must lie
 * between getrusage's deltas just inside and just outside the two readings, also
 * over fault storms that overflow the watcher's ring many times; an interval in
 * which getrusage (outside) saw neither fault nor switch must be served without a
 * system call (g.ru_skips), and every other one by getrusage. PROTON_SW_COUNTERS=
 * rusage opens no watcher. */
static void
test_rusage_watch(void **state)
{
    PnCtrGroup g;
    PnCtrVal a, b;
    uint64_t d[PN_MAX_COUNTERS], quiet = 0;
    (void)state;
    setenv("PROTON_EVENTS", "task-clock,page-faults,context-switches", 1);
    setenv("PROTON_SW_COUNTERS", "rusage", 1);
    pt_reset();
    assert_int_equal(pn_ctr_open(&g), 0);
    assert_int_equal(g.ru, 1);
    assert_null(g.w.pc);
    pn_ctr_close(&g);
    unsetenv("PROTON_SW_COUNTERS");
    pt_reset();
    assert_int_equal(pn_ctr_open(&g), 0);
    assert_int_equal(g.ru, 1);
    if (!g.w.pc) { /* needs perf_event_paranoid <= 1 or CAP_PERFMON */
        PnRuWatch w;
        print_message("no page-fault watcher here (%s): getrusage at both ends\n",
                      pn_ruwatch_open(&w) < 0 ? "perf_event_open refused" : "?");
        pn_ctr_close(&g);
        return;
    }
    for (int i = 0; i < 400; i++) {
        struct rusage r0, r1, r2, r3;
        uint64_t skips = g.ru_skips;
        volatile double x = 1;
        getrusage(RUSAGE_THREAD, &r0);
        assert_int_equal(pn_ctr_read(&g, &a), 0);
        getrusage(RUSAGE_THREAD, &r1);
        for (int j = 0; j < (i % 4) * 5000; j++)
            x = x * 1.0000001 + 1e-9;
        if (i % 7 == 0)
            usleep(100);
        if (i % 11 == 0)
            touch_n(i % 22 == 0 ? 20000 : 3); /* 20000: the ring overflows ~40 times */
        getrusage(RUSAGE_THREAD, &r2);
        assert_int_equal(pn_ctr_read_after(&g, &a, &b), 0);
        getrusage(RUSAGE_THREAD, &r3);
        pn_ctr_delta(&a, &b, g.n, d);
        assert_true(d[1] >= ru_faults(&r2) - ru_faults(&r1));
        assert_true(d[1] <= ru_faults(&r3) - ru_faults(&r0));
        assert_true(d[2] >= ru_switches(&r2) - ru_switches(&r1));
        assert_true(d[2] <= ru_switches(&r3) - ru_switches(&r0));
        if (ru_faults(&r3) == ru_faults(&r0) && ru_switches(&r3) == ru_switches(&r0)) {
            quiet++;
            assert_int_equal(g.ru_skips, skips + 1);
        }
        if (i % 11 == 0)
            assert_int_equal(g.ru_skips, skips); /* faulted: served by getrusage */
    }
    assert_true(quiet >= 100); /* most compute-only intervals see nothing */
    pn_ctr_close(&g);
    assert_null(g.w.pc);
}

/* ---- page faults over two workers ------------------------------------------------------ */


typedef struct Work {
    PnLaunch *l;
    int worker;
} Work;

/* n fresh pages written once each: n minor faults */
static void
touch_n(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    madvise(p, n * pg, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < n; i++)
        p[i * pg] = 1;
    munmap(p, n * pg);
}

static void
touch_pages(void)
{
    touch_n(PAGES);
}

static void *
worker(void *arg)
{
    Work *w = arg;
    PnThread *t = pn_worker_begin(w->l, w->worker);
    touch_pages();
    pn_worker_end(w->l, t);
    return NULL;
}

static void
test_page_faults_two_workers(void **state)
{
    uint32_t k = pt_kernel("touch", 0, NULL);
    int id;
    PnLaunch l;
    int32_t g[3] = { 2, 1, 1 };
    pthread_t th;
    Work w0, w1;
    cJSON *t, *n;
    (void)state;
    setenv("PROTON_EVENTS", "page-faults,task-clock", 1);
    pt_reset();
    id = pn_session_start(pt_path("faults"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    pt_tick(100);
    pn_launch_begin(&l, k, g, 2);
    w0 = (Work){ &l, 0 };
    w1 = (Work){ &l, 1 };
    pthread_create(&th, NULL, worker, &w1);
    worker(&w0);
    pthread_join(th, NULL);
    pt_tick(100);
    pn_launch_end(&l);
    t = pt_tree(id);
    n = pt_find(cJSON_GetArrayItem(t, 0), "touch");
    assert_int_equal(pt_im(n, "threads"), 2);
    assert_true(pt_im(n, "page-faults") >= 2 * PAGES - 8);
    assert_true(pt_im(n, "page-faults") < 2 * PAGES + 200);
    assert_true(pt_im(n, "task-clock (ns)") > 0);
    assert_int_equal(pt_im(cJSON_GetArrayItem(t, 0), "page-faults"), 0); /* root hint */
    cJSON_Delete(t);
    pn_session_finalize(id, "");
}

/* Three worker slots, the middle one never begun (a thread with no program): it
 * reports nothing, the kernel counts two threads, and the faults are the sum of what
 * the two working threads touched (PAGES and 2 * PAGES). */
static void *
worker_twice(void *arg)
{
    Work *w = arg;
    PnThread *t = pn_worker_begin(w->l, w->worker);
    touch_pages();
    touch_pages();
    pn_worker_end(w->l, t);
    return NULL;
}

static void
test_idle_worker_slot(void **state)
{
    uint32_t k = pt_kernel("touch3", 0, NULL);
    int id;
    PnLaunch l;
    int32_t g[3] = { 3, 1, 1 };
    pthread_t th;
    Work w0, w2;
    cJSON *t, *n;
    (void)state;
    setenv("PROTON_EVENTS", "task-clock,page-faults,context-switches", 1);
    pt_reset();
    id = pn_session_start(pt_path("idle"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    pn_launch_begin(&l, k, g, 3);
    w0 = (Work){ &l, 0 };
    w2 = (Work){ &l, 2 };
    pthread_create(&th, NULL, worker_twice, &w2);
    worker(&w0);
    pthread_join(th, NULL);
    pn_launch_end(&l);
    t = pt_tree(id);
    n = pt_find(cJSON_GetArrayItem(t, 0), "touch3");
    assert_int_equal(pt_im(n, "threads"), 2);
    assert_true(pt_im(n, "page-faults") >= 3 * PAGES - 12);
    assert_true(pt_im(n, "page-faults") < 3 * PAGES + 200);
    assert_true(pt_im(n, "task-clock (ns)") > 0);
    cJSON_Delete(t);
    pn_session_finalize(id, "");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_resolve, setup),
        cmocka_unit_test_setup(test_probe, setup),
        cmocka_unit_test_setup(test_events_foreach, setup),
        cmocka_unit_test_setup(test_default_set, setup),
        cmocka_unit_test_setup(test_explicit_set, setup),
        cmocka_unit_test_setup(test_no_event_available, setup),
        cmocka_unit_test_setup(test_delta_scaling, setup),
        cmocka_unit_test_setup(test_group_counts, setup),
        cmocka_unit_test_setup(test_page_faults_two_workers, setup),
        cmocka_unit_test_setup(test_rusage_source, setup),
        cmocka_unit_test_setup(test_rusage_watch, setup),
        cmocka_unit_test_setup(test_idle_worker_slot, setup),
    };
    return cmocka_run_group_tests_name("proton counters", tests, NULL, NULL);
}
