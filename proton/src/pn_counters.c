/*
 * pn_counters.c — one perf_event group per thread, read with rdpmc or read().
 *
 * A thread opens its group lazily the first time it records (pid=0, cpu=-1: this
 * thread on any CPU; leader disabled until every member is open, then enabled for
 * the whole group; user level only). Every member is mmapped; when the kernel sets
 * cap_user_rdpmc the counters are read in user space with the seqlock protocol of
 * include/uapi/linux/perf_event.h (rdpmc on x86-64, csrr of hpmcounterN on riscv64,
 * mrs of pmevcntrN_el0/pmccntr_el0 on aarch64), with time_enabled/time_running
 * extended to "now" through cap_user_time when the group is multiplexed. Otherwise
 * (no rdpmc, event not on a counter right now, software events) one read() of the
 * group returns every value plus time_enabled/time_running.
 * Deltas are scaled by enabled/running over the interval (multiplexing).
 *
 * When every event is one getrusage(RUSAGE_THREAD) has or can derive (task-clock,
 * page-faults, minor-/major-faults, context-switches: the default set without a
 * PMU), the group is not read at all: faults and switches come from getrusage
 * (0.3 us here against 0.9 us for a group read()), and task-clock from one
 * task-clock event read only when the thread was switched since the last such read
 * (its switch count moved); otherwise the thread has been on the CPU ever since,
 * so task-clock is that reading plus the time elapsed (Proton's clock).
 * The end of a worker's interval (pn_ctr_read_after) skips even that getrusage when
 * the thread's watcher (pn_ruwatch.c) saw no fault and no switch since the start:
 * faults and switches are then the start's, task-clock the start's plus the time
 * elapsed. PROTON_SW_COUNTERS=rusage reads getrusage at both ends;
 * PROTON_SW_COUNTERS=perf keeps the group read().
 * Reference: perf_event_open(2), getrusage(2); tools/lib/perf/mmap.c in the kernel tree.
 */
#include "pn_int.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ---- reading a hardware counter from user space ------------------------------------ */

#if defined(__x86_64__)
static inline uint64_t
read_pmc(uint32_t counter)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
    return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t
read_cyc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#define HAVE_PMC 1
#elif defined(__riscv) && __riscv_xlen == 64
/* csrr needs the CSR number in the instruction: one case per hpmcounter */
#define CSR_CASE(n) \
    case n: __asm__ __volatile__("csrr %0, " #n : "=r"(v)); break;
#define CSR_CASES4(n) CSR_CASE(n) CSR_CASE(n + 1) CSR_CASE(n + 2) CSR_CASE(n + 3)
static inline uint64_t
read_pmc(uint32_t counter)
{
    uint64_t v = 0;
    switch (0xc00 + counter) {
        CSR_CASES4(0xc00) CSR_CASES4(0xc04) CSR_CASES4(0xc08) CSR_CASES4(0xc0c)
        CSR_CASES4(0xc10) CSR_CASES4(0xc14) CSR_CASES4(0xc18) CSR_CASES4(0xc1c)
    default: break;
    }
    return v;
}
static inline uint64_t
read_cyc(void)
{
    uint64_t t;
    __asm__ __volatile__("rdtime %0" : "=r"(t));
    return t;
}
#define HAVE_PMC 1
#elif defined(__aarch64__)
#define PMEV_CASE(n) \
    case n: __asm__ __volatile__("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); break;
#define PMEV_CASES4(a, b, c, d) PMEV_CASE(a) PMEV_CASE(b) PMEV_CASE(c) PMEV_CASE(d)
static inline uint64_t
read_pmc(uint32_t counter)
{
    uint64_t v = 0;
    if (counter == 31) {
        __asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
        return v;
    }
    switch (counter) {
        PMEV_CASES4(0, 1, 2, 3) PMEV_CASES4(4, 5, 6, 7) PMEV_CASES4(8, 9, 10, 11)
        PMEV_CASES4(12, 13, 14, 15) PMEV_CASES4(16, 17, 18, 19) PMEV_CASES4(20, 21, 22, 23)
        PMEV_CASES4(24, 25, 26, 27) PMEV_CASE(28) PMEV_CASE(29) PMEV_CASE(30)
    default: break;
    }
    return v;
}
static inline uint64_t
read_cyc(void)
{
    uint64_t t;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(t)::"memory");
    return t;
}
#define HAVE_PMC 1
#else
#define HAVE_PMC 0
#endif

#define BARRIER() __asm__ __volatile__("" ::: "memory")

/* One event through its mmap page. Returns 0, or -1 when the value cannot be read
 * in user space right now (no rdpmc, not on a counter, multiplexed without
 * cap_user_time): the caller then falls back to read(). Tests call it on a page
 * they fill themselves (tests/riscv/test_rv_counters.c: cycle and instret under qemu). */
int
pn_ctr_read_page(volatile struct perf_event_mmap_page *pc, uint64_t *val, uint64_t *ena, uint64_t *run)
{
#if HAVE_PMC
    uint32_t seq, idx;
    uint64_t count, enabled, running, cyc = 0, toff = 0, tcyc = 0, tmask = ~0ull;
    uint32_t tmult = 0;
    uint16_t tshift = 0;
    int utime, tshort = 0;
    do {
        seq = pc->lock;
        BARRIER();
        enabled = pc->time_enabled;
        running = pc->time_running;
        utime = pc->cap_user_time;
        if (utime && enabled != running) {
            cyc = read_cyc();
            toff = pc->time_offset;
            tmult = pc->time_mult;
            tshift = pc->time_shift;
            tshort = pc->cap_user_time_short;
            if (tshort) {
                tcyc = pc->time_cycles;
                tmask = pc->time_mask;
            }
        }
        idx = pc->index;
        count = pc->offset;
        if (!pc->cap_user_rdpmc || !idx)
            return -1;
        {
            uint16_t width = pc->pmc_width;
            int64_t pmc = (int64_t)read_pmc(idx - 1);
            pmc = (int64_t)((uint64_t)pmc << (64 - width)) >> (64 - width);
            count += (uint64_t)pmc;
        }
        BARRIER();
    } while (pc->lock != seq);
    if (enabled != running) {
        uint64_t quot, rem, delta;
        if (!utime)
            return -1;
        if (tshort)
            cyc = tcyc + ((cyc - tcyc) & tmask);
        quot = cyc >> tshift;
        rem = cyc & (((uint64_t)1 << tshift) - 1);
        delta = toff + quot * tmult + ((rem * tmult) >> tshift);
        enabled += delta;
        running += delta;
    }
    *val = count;
    *ena = enabled;
    *run = running;
    return 0;
#else
    (void)pc, (void)val, (void)ena, (void)run;
    return -1;
#endif
}

/* ---- software events through getrusage ------------------------------------------- */

int
pn_ru_kind(const struct perf_event_attr *a)
{
    if (a->type != PERF_TYPE_SOFTWARE)
        return 0;
    switch (a->config) {
    case PERF_COUNT_SW_TASK_CLOCK: return PN_RU_TASK_CLOCK;
    case PERF_COUNT_SW_PAGE_FAULTS: return PN_RU_FAULTS;
    case PERF_COUNT_SW_PAGE_FAULTS_MIN: return PN_RU_MINFLT;
    case PERF_COUNT_SW_PAGE_FAULTS_MAJ: return PN_RU_MAJFLT;
    case PERF_COUNT_SW_CONTEXT_SWITCHES: return PN_RU_CSW;
    default: return 0;
    }
}

/* The time the task-clock base is extended by: Proton's hardware clock when it has
 * one (a few ns), else CLOCK_MONOTONIC_RAW in ns (never the fake clock of tests). */
static inline int
ru_hwclock(void)
{
    return pn_clk_kind == PN_CLK_TSC || pn_clk_kind == PN_CLK_RDTIME || pn_clk_kind == PN_CLK_CNTVCT;
}

static inline uint64_t
ru_now(void)
{
    struct timespec ts;
    if (PN_LIKELY(ru_hwclock()))
        return pn_now();
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
switches(const struct rusage *ru)
{
    return (uint64_t)ru->ru_nvcsw + (uint64_t)ru->ru_nivcsw;
}

/* Opens only what getrusage lacks: one task-clock event (fd[0]), when in the set. */
static int
ru_open(PnCtrGroup *g)
{
    int tc = -1;
    for (int i = 0; i < pn_ctrs.n; i++)
        if ((g->rukind[i] = (uint8_t)pn_ru_kind(&pn_ctrs.ev[i].attr)) == PN_RU_TASK_CLOCK)
            tc = i;
    if (tc >= 0) {
        struct perf_event_attr a = pn_ctrs.ev[tc].attr;
        a.read_format = 0;
        a.disabled = 0;
        if ((g->fd[0] = pn_event_open(&a, -1, NULL, 0)) < 0) {
            g->fd[0] = -1;
            return -1;
        }
    }
    if (pn_ctrs.ruwatch)
        pn_ruwatch_open(&g->w); /* best effort: closed means getrusage at both ends */
    g->n = (uint8_t)pn_ctrs.n;
    g->ru = 1;
    g->state = 1;
    return 0;
}

/* A new task-clock base: the event read between two getrusage calls that show the
 * same switch count (cs: the first one's), so the thread ran throughout. ru and ns
 * become the second call's values and the base's time. A thread switched on every
 * try still gets this reading (as a group read() would give it), but no base. */
static int
ru_rebase(PnCtrGroup *g, struct rusage *ru, uint64_t *ns, uint64_t *cs)
{
    for (int k = 0; k < 4; k++) {
        uint64_t tc, t, c2;
        if (read(g->fd[0], &tc, sizeof tc) != (ssize_t)sizeof tc)
            return -1;
        t = ru_now();
        if (getrusage(RUSAGE_THREAD, ru) < 0)
            return -1;
        c2 = switches(ru);
        if (c2 == *cs || k == 3) {
            g->base_tc = tc;
            g->base_ns = *ns = t;
            g->base_cs = c2;
            g->ru_base = c2 == *cs;
            *cs = c2;
            return 0;
        }
        *cs = c2;
    }
    return -1;
}

/* The watcher is looked at (and emptied) first: a fault or switch after the look
 * shows at the next one even when this getrusage already counted it. The time is
 * taken before getrusage: an unchanged switch count then also covers it. */
static int
ru_read(PnCtrGroup *g, PnCtrVal *out)
{
    struct rusage ru;
    uint64_t ns, cs, tc = 0;
    if (g->w.pc)
        pn_ruwatch_quiet(&g->w);
    ns = ru_now();
    if (getrusage(RUSAGE_THREAD, &ru) < 0)
        return -1;
    cs = switches(&ru);
    if (g->fd[0] >= 0) {
        if ((!g->ru_base || cs != g->base_cs) && ru_rebase(g, &ru, &ns, &cs) < 0)
            return -1;
        tc = g->base_tc + (ru_hwclock() ? pn_ticks_to_ns(ns - g->base_ns) : ns - g->base_ns);
        if (tc < g->last_tc) /* a new base read a little behind the previous extension */
            tc = g->last_tc;
        g->last_tc = tc;
    }
    for (int i = 0; i < g->n; i++) {
        uint64_t v = 0;
        switch (g->rukind[i]) {
        case PN_RU_TASK_CLOCK: v = tc; break;
        case PN_RU_FAULTS: v = (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt; break;
        case PN_RU_MINFLT: v = (uint64_t)ru.ru_minflt; break;
        case PN_RU_MAJFLT: v = (uint64_t)ru.ru_majflt; break;
        case PN_RU_CSW: v = cs; break;
        default: break;
        }
        out->v[i] = v;
    }
    out->enabled = out->running = 0; /* never multiplexed: deltas are not scaled */
    return 0;
}

/* The end of an interval with nothing in it: the start's values, task-clock extended
 * by the time since the base (the thread ran throughout: no switch was seen). */
static void
ru_extend(PnCtrGroup *g, const PnCtrVal *since, PnCtrVal *out)
{
    uint64_t tc = 0;
    if (g->fd[0] >= 0 && g->ru_base) {
        uint64_t ns = ru_now();
        tc = g->base_tc + (ru_hwclock() ? pn_ticks_to_ns(ns - g->base_ns) : ns - g->base_ns);
        if (tc < g->last_tc)
            tc = g->last_tc;
        g->last_tc = tc;
    }
    for (int i = 0; i < g->n; i++)
        out->v[i] = g->rukind[i] == PN_RU_TASK_CLOCK ? tc : since->v[i];
    out->enabled = out->running = 0;
}

/* ---- api ---------------------------------------------------------------------------- */

/* Opens this thread's group with the process-wide event set. 0, or -1 (no counters
 * for this thread; the state stays -1 until the set changes). */
int
pn_ctr_open(PnCtrGroup *g)
{
    long page = sysconf(_SC_PAGESIZE);
    int lead = -1;
    pn_counters_setup();
    memset(g, 0, sizeof *g);
    for (int i = 0; i < PN_MAX_COUNTERS; i++)
        g->fd[i] = -1;
    g->gen = pn_ctrs.gen;
    g->state = -1;
    pn_counters_notice(); /* also when nothing opened: say what was dropped */
    if (pn_ctrs.n == 0)
        return -1;
    if (pn_ctrs.ru) {
        if (ru_open(g) == 0)
            return 0;
        pn_ctr_close(g);
        g->state = -1;
        return -1;
    }
    for (int i = 0; i < pn_ctrs.n; i++) {
        struct perf_event_attr a = pn_ctrs.ev[i].attr;
        a.disabled = i == 0;
        g->fd[i] = pn_event_open(&a, lead, NULL, 0);
        if (g->fd[i] < 0) {
            g->fd[i] = -1;
            pn_ctr_close(g);
            g->state = -1;
            return -1;
        }
        if (i == 0)
            lead = g->fd[0];
        g->n++;
    }
    ioctl(lead, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    g->rdpmc = HAVE_PMC;
    for (int i = 0; i < g->n; i++) {
        void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, g->fd[i], 0);
        g->pc[i] = p == MAP_FAILED ? NULL : p;
        if (!g->pc[i] || !g->pc[i]->cap_user_rdpmc)
            g->rdpmc = 0;
    }
    g->state = 1;
    return 0;
}

void
pn_ctr_close(PnCtrGroup *g)
{
    long page = sysconf(_SC_PAGESIZE);
    if (g->w.pc)
        pn_ruwatch_close(&g->w);
    for (int i = 0; i < PN_MAX_COUNTERS; i++) {
        if (g->pc[i])
            munmap(g->pc[i], (size_t)page);
        g->pc[i] = NULL;
    }
    for (int i = PN_MAX_COUNTERS - 1; i >= 0; i--) {
        if (g->fd[i] >= 0)
            close(g->fd[i]);
        g->fd[i] = -1;
    }
    g->state = 0;
    g->rdpmc = 0;
    g->n = 0;
    g->ru = 0;
    g->ru_base = 0;
    g->last_tc = 0;
}

/* All members through rdpmc; -1 when any of them cannot be read that way now. */
int
pn_ctr_read_rdpmc(PnCtrGroup *g, PnCtrVal *out)
{
    uint64_t e, r;
    for (int i = 0; i < g->n; i++) {
        if (pn_ctr_read_page(g->pc[i], &out->v[i], &e, &r) < 0)
            return -1;
        if (i == 0) {
            out->enabled = e;
            out->running = r;
        }
    }
    return 0;
}

/* Current values of the group; 0, or -1 when the group cannot be read. */
int
pn_ctr_read(PnCtrGroup *g, PnCtrVal *out)
{
    struct {
        uint64_t nr, ena, run, v[PN_MAX_COUNTERS];
    } b;
    ssize_t n;
    if (g->ru)
        return ru_read(g, out);
    if (g->rdpmc && pn_ctr_read_rdpmc(g, out) == 0)
        return 0;
    n = read(g->fd[0], &b, sizeof b);
    if (n < (ssize_t)(3 * sizeof(uint64_t)) || b.nr != g->n)
        return -1;
    memcpy(out->v, b.v, g->n * sizeof(uint64_t));
    out->enabled = b.ena;
    out->running = b.run;
    return 0;
}

/* As pn_ctr_read, at the end of an interval whose start read gave since. */
int
pn_ctr_read_after(PnCtrGroup *g, const PnCtrVal *since, PnCtrVal *out)
{
    if (g->ru && g->w.pc && (g->fd[0] < 0 || g->ru_base) && pn_ruwatch_quiet(&g->w)) {
        ru_extend(g, since, out);
        g->ru_skips++;
        return 0;
    }
    return pn_ctr_read(g, out);
}

/* d[i] = (b - a) scaled by enabled/running over the interval; 0 when the group did
 * not run at all in it. Scaling uses quotient and remainder to avoid overflow. */
void
pn_ctr_delta(const PnCtrVal *a, const PnCtrVal *b, int n, uint64_t *d)
{
    uint64_t de = b->enabled - a->enabled, dr = b->running - a->running;
    for (int i = 0; i < n; i++) {
        uint64_t dv = b->v[i] - a->v[i];
        if (dr == de)
            d[i] = dv;
        else if (dr == 0)
            d[i] = 0;
        else
            d[i] = dv / dr * de + (uint64_t)((unsigned __int128)(dv % dr) * de / dr);
    }
}
