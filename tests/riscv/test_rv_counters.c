/*
 * test_rv_counters.c — Proton's clock and counters on RISC-V (pn_clock, pn_events,
 * pn_counters), cross-built by tests/riscv/run.sh and run under
 * qemu-riscv64 -cpu rv64,v=true,vlen=256 (natively on a board).
 *
 * rdtime is the clock, at the device-tree timebase when /proc/device-tree has one (a
 * board), else calibrated (qemu-user); the timebase file parser (4- and 8-byte
 * big-endian); event names: the generic perf names and raw r<hex> codes, which is all
 * that resolves on RISC-V (libpfm4 has no RISC-V tables); the fallback when
 * perf_event_open does not exist (ENOSYS under qemu-user): no counters, and one honest
 * notice line; and the user-space read of a counter through a perf_event mmap page
 * (cycle and instret CSRs, the seqlock, multiplex extension) on a page the test fills,
 * since no kernel here gives one.
 */
#include "test_proton_util.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <time.h>

static int
setup(void **state)
{
    (void)state;
    unsetenv("PROTON_KERNEL_CAPTURE");
    unsetenv("PROTON_EVENTS");
    pt_reset();
    return 0;
}

static uint64_t
mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
test_clock_is_rdtime(void **state)
{
    (void)state;
    pn_init();
    assert_string_equal(pn_clock_source(), "rdtime");
    uint64_t t0 = pn_ticks(), n0 = mono_ns();
    struct timespec d = {0, 30 * 1000 * 1000};
    nanosleep(&d, NULL);
    uint64_t t1 = pn_ticks(), n1 = mono_ns();
    assert_true(t1 > t0);
    double ns = (double)pn_ticks_to_ns(t1 - t0), ref = (double)(n1 - n0);
    printf("rdtime: %.0f Hz (%s), 30 ms sleep measured %.2f ms (monotonic %.2f ms)\n", pn_clock_hz(),
           pn_clock_exact() ? "device-tree timebase" : "calibrated", ns / 1e6, ref / 1e6);
    assert_true(ns > 0.8 * ref && ns < 1.25 * ref);
}

static void
write_bytes(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static void
test_timebase_file(void **state)
{
    (void)state;
    char p[600];
    snprintf(p, sizeof p, "%s/timebase-frequency", pt_tmpdir());
    static const unsigned char k1[4] = {0x01, 0x6e, 0x36, 0x00}; /* 24 MHz, the K1's */
    write_bytes(p, k1, 4);
    assert_true(pn_clock_timebase_hz(p) == 24e6);
    static const unsigned char u64[8] = {0, 0, 0, 0, 0x3b, 0x9a, 0xca, 0x00}; /* 1 GHz as a u64 */
    write_bytes(p, u64, 8);
    assert_true(pn_clock_timebase_hz(p) == 1e9);
    write_bytes(p, k1, 3);
    assert_true(pn_clock_timebase_hz(p) == 0);
    static const unsigned char nine[9] = {0};
    write_bytes(p, nine, 9);
    assert_true(pn_clock_timebase_hz(p) == 0);
    assert_true(pn_clock_timebase_hz("/nonexistent/timebase-frequency") == 0);
}

static void
test_event_names(void **state)
{
    PnEvent ev;
    char why[256];
    (void)state;
    assert_int_equal(pn_event_resolve("r12", &ev, why, sizeof why), 0);
    assert_int_equal(ev.attr.type, PERF_TYPE_RAW);
    assert_int_equal(ev.attr.config, 0x12);
    assert_true(ev.is_hw);
    assert_int_equal(ev.attr.exclude_kernel, 1);
    assert_int_equal(pn_event_resolve("R0001c2", &ev, why, sizeof why), 0);
    assert_int_equal(ev.attr.config, 0x1c2);
    assert_int_equal(pn_event_resolve("rffffffffffff", &ev, why, sizeof why), 0);
    assert_true(ev.attr.config == 0xffffffffffffull);
    assert_string_equal(ev.name, "rffffffffffff");
    assert_int_equal(pn_event_resolve("r", &ev, why, sizeof why), -ENOENT);
    assert_int_equal(pn_event_resolve("r12g", &ev, why, sizeof why), -ENOENT);
    assert_non_null(strstr(why, "unknown event"));
    assert_int_equal(pn_event_resolve("cycles", &ev, why, sizeof why), 0);
    assert_int_equal(ev.attr.type, PERF_TYPE_HARDWARE);
    assert_int_equal(ev.attr.config, PERF_COUNT_HW_CPU_CYCLES);
    assert_int_equal(pn_event_resolve("instructions", &ev, why, sizeof why), 0);
    assert_int_equal(ev.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
    assert_int_equal(pn_event_resolve("task-clock", &ev, why, sizeof why), 0);
    assert_true(ev.is_ns && !ev.is_hw);
    assert_int_equal(ev.attr.read_format & PERF_FORMAT_GROUP, PERF_FORMAT_GROUP);
}

/* The notice pn_counters_notice prints, captured from stderr. */
static void
notice_text(char *buf, size_t cap)
{
    char p[600];
    snprintf(p, sizeof p, "%s/notice.txt", pt_tmpdir());
    fflush(stderr);
    int saved = dup(2), fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    dup2(fd, 2);
    pn_counters_notice();
    pn_counters_notice(); /* once only */
    fflush(stderr);
    dup2(saved, 2);
    close(fd);
    close(saved);
    FILE *f = fopen(p, "r");
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static int
lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Without perf_event (qemu-user: ENOSYS) nothing opens, no counter is invented and one
 * line says why; where it exists (a board) the default set is hardware or software. */
static void
test_default_set_and_notice(void **state)
{
    char why[256], text[1024];
    (void)state;
    int rc = pn_event_probe("task-clock", why, sizeof why);
    pn_counters_reset();
    int n = pn_counter_count();
    notice_text(text, sizeof text);
    printf("counters: %d (%s); notice: %s", n, pn_counter_source(), text[0] ? text : "(none)\n");
    if (rc == -ENOSYS) {
        assert_non_null(strstr(why, "perf_event_open: Function not implemented"));
        assert_int_equal(n, 0);
        assert_string_equal(pn_counter_source(), "none");
        assert_non_null(strstr(text, "proton: perf_event is not available here"));
        assert_non_null(strstr(text, "no counters, measuring time only"));
        assert_null(strstr(text, "cycles")); /* a timestamp is never called cycles */
        assert_int_equal(lines(text), 1);
    } else {
        assert_true(n > 0);
        assert_true(!strcmp(pn_counter_source(), "hardware") || !strcmp(pn_counter_source(), "software"));
        assert_true(lines(text) <= 1);
    }
}

static void
test_named_events_fallback(void **state)
{
    char why[256], text[1024];
    (void)state;
    int absent = pn_event_probe("task-clock", why, sizeof why) == -ENOSYS;
    setenv("PROTON_EVENTS", "r12,cycles,no-such-event", 1);
    pn_counters_reset();
    int n = pn_counter_count();
    notice_text(text, sizeof text);
    unsetenv("PROTON_EVENTS");
    pn_counters_reset();
    assert_int_equal(lines(text), 1);
    if (absent) {
        assert_int_equal(n, 0);
        assert_non_null(strstr(text, "perf_event is not available here"));
    } else {
        assert_non_null(strstr(text, "no-such-event: unknown event"));
    }
}

/* ---- the mmap page read ---------------------------------------------------------------- */

static sigjmp_buf ill_jmp;

static void
on_sigill(int sig)
{
    (void)sig;
    siglongjmp(ill_jmp, 1);
}

/* 1 when user mode may read the cycle and instret CSRs (qemu-user; a board only when
 * the kernel allows it). */
static int
counters_readable(void)
{
    struct sigaction sa = {.sa_handler = on_sigill}, old;
    volatile int ok = 0;
    sigaction(SIGILL, &sa, &old);
    if (!sigsetjmp(ill_jmp, 1)) {
        uint64_t v;
        __asm__ __volatile__("csrr %0, 0xc00" : "=r"(v));
        __asm__ __volatile__("csrr %0, 0xc02" : "=r"(v));
        ok = 1;
    }
    sigaction(SIGILL, &old, NULL);
    return ok;
}

static void
test_mmap_page_read(void **state)
{
    (void)state;
    if (!counters_readable())
        skip(); /* the kernel keeps cycle/instret from user mode */
    static struct perf_event_mmap_page pg;
    uint64_t v1, v2, e, r;
    memset(&pg, 0, sizeof pg);
    pg.cap_user_rdpmc = 1;
    pg.index = 1; /* hardware counter 0: the cycle CSR */
    pg.pmc_width = 64;
    pg.offset = 1000;
    pg.time_enabled = pg.time_running = 5000;
    assert_int_equal(pn_ctr_read_page(&pg, &v1, &e, &r), 0);
    assert_int_equal(pn_ctr_read_page(&pg, &v2, &e, &r), 0);
    assert_true(v1 > 1000 && v2 >= v1);
    assert_true(e == 5000 && r == 5000);
    pg.index = 3; /* counter 2: instret */
    assert_int_equal(pn_ctr_read_page(&pg, &v1, &e, &r), 0);
    assert_true(v1 > 1000);
    pg.pmc_width = 8; /* the raw value is sign-extended from the counter's width */
    pg.offset = 1u << 20;
    assert_int_equal(pn_ctr_read_page(&pg, &v1, &e, &r), 0);
    assert_true(v1 >= (1u << 20) - 128 && v1 < (1u << 20) + 128);
    pg.pmc_width = 64;
    pg.index = 0; /* not on a counter right now: read() instead */
    assert_int_equal(pn_ctr_read_page(&pg, &v1, &e, &r), -1);
    pg.index = 1;
    pg.cap_user_rdpmc = 0;
    assert_int_equal(pn_ctr_read_page(&pg, &v1, &e, &r), -1);
    pg.cap_user_rdpmc = 1;
    pg.time_running = 2000; /* multiplexed, no user time: read() */
    assert_int_equal(pn_ctr_read_page(&pg, &v1, &e, &r), -1);
    pg.cap_user_time = 1; /* multiplexed with user time: both extended to now */
    pg.time_mult = 1;
    pg.time_shift = 0;
    pg.time_offset = 7;
    assert_int_equal(pn_ctr_read_page(&pg, &v1, &e, &r), 0);
    assert_true(e > 5000 && r > 2000 && e - r == 3000);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_is_rdtime), /* first: the others switch to the fake clock */
        cmocka_unit_test_setup(test_timebase_file, setup),
        cmocka_unit_test_setup(test_event_names, setup),
        cmocka_unit_test_setup(test_default_set_and_notice, setup),
        cmocka_unit_test_setup(test_named_events_fallback, setup),
        cmocka_unit_test_setup(test_mmap_page_read, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    pt_rm_dir();
    return rc;
}
