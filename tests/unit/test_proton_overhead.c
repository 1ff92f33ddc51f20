/*
 * test_proton_overhead.c — what the hooks cost, printed, never asserted (timings
 * depend on the machine; bench/ is where numbers are tracked).
 *
 *   launch pair   pn_launch_begin + pn_worker_begin + pn_worker_end + pn_launch_end
 *                 on one thread with kernel capture on (tree + timeline record)
 *   record pair   PnThread.record START + END inside a launch
 *   scope pair    pn_scope_enter + pn_scope_exit
 *
 * Each is measured without counters (PROTON_EVENTS=none) and with the default
 * event set (software events through read() on a machine without a PMU).
 */
#include "test_proton_util.h"

#include <time.h>

static double
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double
launch_pairs(uint32_t k, int n)
{
    int32_t g[3] = { 1, 1, 1 };
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        PnLaunch l;
        PnThread *t;
        pn_launch_begin(&l, k, g, 1);
        t = pn_worker_begin(&l, 0);
        pn_worker_end(&l, t);
        pn_launch_end(&l);
    }
    return (now_ns() - t0) / n;
}

static double
record_pairs(uint32_t k, int n)
{
    int32_t g[3] = { 1, 1, 1 };
    PnLaunch l;
    PnThread *t;
    double t0, dt;
    pn_launch_begin(&l, k, g, 1);
    t = pn_worker_begin(&l, 0);
    t0 = now_ns();
    for (int i = 0; i < n; i++) {
        t->record(t, 0, PN_REC_START);
        t->record(t, 0, PN_REC_END);
    }
    dt = (now_ns() - t0) / n;
    pn_worker_end(&l, t);
    pn_launch_end(&l);
    return dt;
}

static double
scope_pairs(int n)
{
    double t0 = now_ns();
    for (int i = 0; i < n; i++)
        pn_scope_exit(pn_scope_enter("step"));
    return (now_ns() - t0) / n;
}

static void
measure(const char *events)
{
    static const char *sc[] = { "body" };
    uint32_t k, ks;
    int id;
    setenv("PROTON_EVENTS", events, 1);
    pn_test_reset();
    k = pt_kernel("bench_k", 0, NULL);
    ks = pt_kernel("bench_scoped", 1, sc);
    pn_capture_enable(1);
    launch_pairs(k, 1000); /* warm up: first-event allocations, group open */
    printf("proton overhead [%s]: launch pair, capture on: %.1f ns\n", pn_counter_source(),
           launch_pairs(k, strcmp(events, "none") == 0 ? 200000 : 20000));
    printf("proton overhead [%s]: record pair, capture on (timeline): %.1f ns\n",
           pn_counter_source(), record_pairs(ks, 300000));
    printf("proton overhead [%s]: scope enter+exit, capture on (timeline): %.1f ns\n",
           pn_counter_source(), scope_pairs(300000));
    pn_capture_enable(0);
    pn_capture_reset();
    id = pn_session_start(pt_path("bench"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    scope_pairs(1000);
    printf("proton overhead [%s]: scope enter+exit, one tree session: %.1f ns\n",
           pn_counter_source(), scope_pairs(1000000));
    printf("proton overhead [%s]: record pair, one tree session: %.1f ns\n", pn_counter_source(),
           record_pairs(ks, 1000000));
    pn_session_finalize(id, "");
}

static void
test_overhead(void **state)
{
    (void)state;
    measure("none");
    measure("auto");
    printf("proton clock: %s at %.6f GHz (%s)\n", pn_clock_source(), pn_clock_hz() / 1e9,
           pn_clock_exact() ? "exact" : "calibrated");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overhead),
    };
    unsetenv("PROTON_KERNEL_CAPTURE");
    return cmocka_run_group_tests_name("proton overhead (printed, not asserted)", tests, NULL, NULL);
}
