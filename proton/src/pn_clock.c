/*
 * pn_clock.c — the timestamp source and its conversion to nanoseconds.
 *
 * Sources, chosen once at pn_clock_init(): rdtsc on x86-64 when the TSC is invariant
 * (cpuinfo flags constant_tsc and nonstop_tsc), rdtime on riscv64, cntvct_el0 on
 * aarch64, else clock_gettime(CLOCK_MONOTONIC) in ns. The rate is exact where the
 * hardware says it (CPUID 0x15 crystal ratio, the KVM/VMware timing leaf 0x40000010,
 * the device-tree timebase-frequency, cntfrq_el0); otherwise it is calibrated against
 * CLOCK_MONOTONIC_RAW between the init anchor and the first conversion (at least 5 ms
 * apart, usually the whole run), so init stays cheap and the rate gets more precise
 * the later it is needed. Once fixed, the rate never changes within a process.
 * Conversion is a 64x64->128 multiply by a 32.32 fixed-point ns-per-tick factor.
 */
#include "pn_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

int pn_clk_kind = PN_CLK_GETTIME;
uint64_t pn_fake_ticks = 1000000;

static struct {
    uint64_t a_tick, a_ns;      /* calibration anchor: ticks and CLOCK_MONOTONIC_RAW */
    uint64_t e_tick, e_ns;      /* epoch anchor: ticks and CLOCK_REALTIME */
    double hz;                  /* ticks per second, once fixed (or exact) */
    uint64_t mult;              /* ns per tick, 32.32 fixed point */
    int exact;
    int fixed;                  /* read lock-free after publication */
    uint64_t last_unique;
} ck;
static pthread_mutex_t ck_mu = PTHREAD_MUTEX_INITIALIZER;

#define CAL_MIN_NS 5000000u

static uint64_t
clk_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* a (tick, ns) pair: the clock read bracketed by two tick reads, best of 16 */
static void
anchor(clockid_t id, uint64_t *tick, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = pn_now();
        uint64_t n = clk_ns(id);
        uint64_t b = pn_now();
        if (b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = n;
        }
    }
}

/* ---- per-architecture detection ------------------------------------------------ */

#if defined(__x86_64__)
static int
tsc_invariant(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int ok = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    }
    fclose(f);
    return ok;
}

/* exact TSC rate from CPUID when the processor or hypervisor publishes it, else 0 */
static double
tsc_hz_cpuid(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, NULL) >= 0x15) {
        __cpuid_count(0x15, 0, a, b, c, d);
        if (a && b && c)
            return (double)c * b / a;
    }
    __cpuid(0x40000000, a, b, c, d);
    if (a >= 0x40000010 && a < 0x40000100) {
        __cpuid(0x40000010, a, b, c, d);
        if (a)
            return a * 1000.0;
    }
    return 0;
}
#endif

/* Documented in pn_int.h. */
double
pn_clock_timebase_hz(const char *path)
{
    unsigned char b[9];
    FILE *f = fopen(path, "rb");
    size_t n;
    uint64_t v = 0;
    if (!f)
        return 0;
    n = fread(b, 1, sizeof b, f);
    fclose(f);
    if (n != 4 && n != 8)
        return 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | b[i];
    return (double)v;
}

/* ---- api --------------------------------------------------------------------------- */

static void
set_rate(double hz, int exact)
{
    ck.hz = hz;
    ck.exact = exact;
    ck.mult = (uint64_t)(1e9 / hz * 4294967296.0 + 0.5);
    PN_REL(&ck.fixed, 1);
}

/* Chooses the source and takes the anchors. Called once from pn_init(). */
void
pn_clock_init(void)
{
    double hz = 0;
    int kind = PN_CLK_GETTIME;
#if defined(__x86_64__)
    if (tsc_invariant()) {
        kind = PN_CLK_TSC;
        hz = tsc_hz_cpuid();
    }
#elif defined(__riscv) && __riscv_xlen == 64
    kind = PN_CLK_RDTIME;
    hz = pn_clock_timebase_hz("/proc/device-tree/cpus/timebase-frequency");
#elif defined(__aarch64__)
    uint64_t frq;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
    kind = PN_CLK_CNTVCT;
    hz = (double)frq;
#endif
    if (getenv("PROTON_CLOCK") && strcmp(getenv("PROTON_CLOCK"), "clock_gettime") == 0)
        kind = PN_CLK_GETTIME;
    pn_clk_kind = kind;
    if (kind == PN_CLK_GETTIME)
        hz = 1e9;
    anchor(CLOCK_MONOTONIC_RAW, &ck.a_tick, &ck.a_ns);
    anchor(CLOCK_REALTIME, &ck.e_tick, &ck.e_ns);
    if (hz > 0)
        set_rate(hz, 1);
}

/* Tests: switch to clock_gettime or to the fake clock (pn_fake_ticks, 1 GHz). Only
 * valid while nothing is recorded. */
void
pn_clock_force(int kind)
{
    if (kind != PN_CLK_GETTIME && kind != PN_CLK_FAKE)
        return;
    pthread_mutex_lock(&ck_mu);
    pn_clk_kind = kind;
    anchor(CLOCK_MONOTONIC_RAW, &ck.a_tick, &ck.a_ns);
    anchor(CLOCK_REALTIME, &ck.e_tick, &ck.e_ns);
    set_rate(1e9, 1);
    pthread_mutex_unlock(&ck_mu);
}

/* Fixes the calibrated rate on first use: ticks over CLOCK_MONOTONIC_RAW since the
 * init anchor, waiting until the interval is at least CAL_MIN_NS long. */
static void
fix_rate(void)
{
    uint64_t tick, ns;
    pthread_mutex_lock(&ck_mu);
    if (!ck.fixed) {
        if (ck.a_ns == 0)
            pn_clock_init();
        while (clk_ns(CLOCK_MONOTONIC_RAW) - ck.a_ns < CAL_MIN_NS) {
            struct timespec d = { 0, 500000 };
            nanosleep(&d, NULL);
        }
        if (!ck.fixed) {
            anchor(CLOCK_MONOTONIC_RAW, &tick, &ns);
            set_rate((double)(tick - ck.a_tick) * 1e9 / (double)(ns - ck.a_ns), 0);
        }
    }
    pthread_mutex_unlock(&ck_mu);
}

double
pn_clock_hz(void)
{
    if (PN_UNLIKELY(!PN_ACQ(&ck.fixed)))
        fix_rate();
    return ck.hz;
}

int
pn_clock_exact(void)
{
    pn_clock_hz();
    return ck.exact;
}

uint64_t
pn_ticks(void)
{
    return pn_now();
}

/* Converts a tick difference to ns. */
uint64_t
pn_ticks_to_ns(uint64_t ticks)
{
    if (PN_UNLIKELY(!PN_ACQ(&ck.fixed)))
        fix_rate();
    return (uint64_t)(((unsigned __int128)ticks * ck.mult) >> 32);
}

/* CLOCK_REALTIME ns of a tick value, through the epoch anchor taken at init. */
uint64_t
pn_ticks_to_epoch_ns(uint64_t ticks)
{
    if (ticks >= ck.e_tick)
        return ck.e_ns + pn_ticks_to_ns(ticks - ck.e_tick);
    return ck.e_ns - pn_ticks_to_ns(ck.e_tick - ticks);
}

const char *
pn_clock_source(void)
{
    switch (pn_clk_kind) {
    case PN_CLK_TSC: return "tsc";
    case PN_CLK_RDTIME: return "rdtime";
    case PN_CLK_CNTVCT: return "cntvct";
    case PN_CLK_FAKE: return "fake";
    default: return "clock_gettime";
    }
}

/* A tick strictly greater than every value returned before: slot identities must
 * differ even when two slots are created within one tick. */
uint64_t
pn_clock_unique_tick(void)
{
    uint64_t t = pn_now();
    pthread_mutex_lock(&ck_mu);
    if (pn_clk_kind == PN_CLK_FAKE && ck.last_unique > t)
        ck.last_unique = 0; /* tests move the fake clock backwards between cases */
    if (t <= ck.last_unique)
        t = ck.last_unique + 1;
    ck.last_unique = t;
    pthread_mutex_unlock(&ck_mu);
    return t;
}
