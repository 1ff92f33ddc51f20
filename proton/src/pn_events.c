/*
 * pn_events.c — counter event names: resolution, probing, listing, and the choice
 * of the process-wide event set.
 *
 * Names go through libpfm4 (pfm_get_os_event_encoding, user-level only) and, when
 * libpfm4 does not know them (RISC-V has no libpfm4 tables), through a small table
 * of the generic perf names ("cycles", "task-clock", ...) plus raw "rNNNN" codes.
 * The set comes from PROTON_EVENTS (comma-separated, "none" or "" for no counters);
 * the default is "cycles,instructions" when a hardware PMU opens, else
 * "task-clock,page-faults,context-switches" with one notice on stderr; without
 * perf_event at all (ENOSYS: qemu-user, kernels without it) one notice says so and
 * only times are measured. Named events
 * that do not resolve or open are dropped with one notice too (naming them, and what
 * is counted instead: the others, or times only). Notices are printed only once
 * something actually records (pn_counters_notice).
 * Reference: man perf_event_open(2), libpfm4 pfm_get_os_event_encoding(3).
 */
#include "pn_int.h"

#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

PnCounterSet pn_ctrs;
static int setup_done;               /* read lock-free after publication */
static int notice_done;
static pthread_mutex_t setup_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the generic perf names -------------------------------------------------------- */

#define GENERIC_EVENTS(X) \
    X("cycles", HARDWARE, HW_CPU_CYCLES, "CPU cycles") \
    X("cpu-cycles", HARDWARE, HW_CPU_CYCLES, "CPU cycles") \
    X("instructions", HARDWARE, HW_INSTRUCTIONS, "instructions retired") \
    X("cache-references", HARDWARE, HW_CACHE_REFERENCES, "last-level cache accesses") \
    X("cache-misses", HARDWARE, HW_CACHE_MISSES, "last-level cache misses") \
    X("branches", HARDWARE, HW_BRANCH_INSTRUCTIONS, "branch instructions retired") \
    X("branch-instructions", HARDWARE, HW_BRANCH_INSTRUCTIONS, "branch instructions retired") \
    X("branch-misses", HARDWARE, HW_BRANCH_MISSES, "mispredicted branches") \
    X("bus-cycles", HARDWARE, HW_BUS_CYCLES, "bus cycles") \
    X("ref-cycles", HARDWARE, HW_REF_CPU_CYCLES, "reference cycles (not scaled by frequency)") \
    X("stalled-cycles-frontend", HARDWARE, HW_STALLED_CYCLES_FRONTEND, "front-end stall cycles") \
    X("stalled-cycles-backend", HARDWARE, HW_STALLED_CYCLES_BACKEND, "back-end stall cycles") \
    X("task-clock", SOFTWARE, SW_TASK_CLOCK, "ns on CPU of this thread") \
    X("cpu-clock", SOFTWARE, SW_CPU_CLOCK, "ns of the per-CPU high-resolution timer") \
    X("page-faults", SOFTWARE, SW_PAGE_FAULTS, "page faults") \
    X("faults", SOFTWARE, SW_PAGE_FAULTS, "page faults") \
    X("minor-faults", SOFTWARE, SW_PAGE_FAULTS_MIN, "minor page faults") \
    X("major-faults", SOFTWARE, SW_PAGE_FAULTS_MAJ, "major page faults") \
    X("context-switches", SOFTWARE, SW_CONTEXT_SWITCHES, "context switches") \
    X("cs", SOFTWARE, SW_CONTEXT_SWITCHES, "context switches") \
    X("cpu-migrations", SOFTWARE, SW_CPU_MIGRATIONS, "migrations to another CPU") \
    X("alignment-faults", SOFTWARE, SW_ALIGNMENT_FAULTS, "alignment faults") \
    X("emulation-faults", SOFTWARE, SW_EMULATION_FAULTS, "emulation faults")

static const struct {
    const char *name;
    uint32_t type;
    uint64_t config;
    const char *desc;
} generic[] = {
#define X(n, t, c, d) { n, PERF_TYPE_##t, PERF_COUNT_##c, d },
    GENERIC_EVENTS(X)
#undef X
};

static int pfm_ok;                   /* pfm_initialize succeeded */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;

static void
pfm_init_once(void)
{
    pfm_ok = pfm_initialize() == PFM_SUCCESS;
}

static int
pfm_ready(void)
{
    pthread_once(&pfm_once, pfm_init_once);
    return pfm_ok;
}

static void
whyf(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    if (!why || !n)
        return;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
}

static int
generic_lookup(const char *spec, struct perf_event_attr *a)
{
    char *end;
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++) {
        if (strcasecmp(spec, generic[i].name) == 0) {
            a->type = generic[i].type;
            a->config = generic[i].config;
            return 0;
        }
    }
    if ((spec[0] == 'r' || spec[0] == 'R') && spec[1]) {
        uint64_t v = strtoull(spec + 1, &end, 16);
        if (*end == '\0') {
            a->type = PERF_TYPE_RAW;
            a->config = v;
            return 0;
        }
    }
    return -1;
}

/* Fills 'ev' for 'spec' (user level only). Returns 0, or -ENOENT with the reason. */
int
pn_event_resolve(const char *spec, PnEvent *ev, char *why, size_t whylen)
{
    struct perf_event_attr a;
    int rc = PFM_ERR_NOTFOUND;
    memset(ev, 0, sizeof *ev);
    memset(&a, 0, sizeof a);
    if (strlen(spec) >= sizeof ev->spec) {
        whyf(why, whylen, "event name too long");
        return -ENAMETOOLONG;
    }
    if (pfm_ready()) {
        pfm_perf_encode_arg_t arg;
        memset(&arg, 0, sizeof arg);
        arg.attr = &a;
        arg.size = sizeof arg;
        rc = pfm_get_os_event_encoding(spec, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
    }
    if (rc != PFM_SUCCESS) {
        memset(&a, 0, sizeof a);
        if (generic_lookup(spec, &a) < 0) {
            whyf(why, whylen, "unknown event (libpfm4: %s)",
                 pfm_ok ? pfm_strerror(rc) : "not initialised");
            return -ENOENT;
        }
    }
    a.size = sizeof a;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.disabled = 0;
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                    PERF_FORMAT_TOTAL_TIME_RUNNING;
    ev->attr = a;
    snprintf(ev->spec, sizeof ev->spec, "%s", spec);
    ev->is_ns = a.type == PERF_TYPE_SOFTWARE &&
                (a.config == PERF_COUNT_SW_TASK_CLOCK || a.config == PERF_COUNT_SW_CPU_CLOCK);
    ev->is_hw = a.type != PERF_TYPE_SOFTWARE && a.type != PERF_TYPE_TRACEPOINT;
    snprintf(ev->name, sizeof ev->name, "%s%s", spec, ev->is_ns ? " (ns)" : "");
    return 0;
}

/* perf_event_open for this thread on any CPU; -errno with an explanation. */
int
pn_event_open(const struct perf_event_attr *a, int group_fd, char *why, size_t whylen)
{
    int fd = (int)syscall(SYS_perf_event_open, a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
    int e = errno, lvl = -1;
    FILE *f;
    if (fd >= 0)
        return fd;
    if ((f = fopen("/proc/sys/kernel/perf_event_paranoid", "r"))) {
        if (fscanf(f, "%d", &lvl) != 1)
            lvl = -1;
        fclose(f);
    }
    if (e == ENOENT || e == EOPNOTSUPP)
        whyf(why, whylen, "not supported here%s (perf_event_open: %s)",
             a->type == PERF_TYPE_SOFTWARE ? "" : ", no hardware PMU for it", strerror(e));
    else if (e == EACCES || e == EPERM)
        whyf(why, whylen, "not permitted (perf_event_paranoid=%d; perf_event_open: %s)", lvl,
             strerror(e));
    else
        whyf(why, whylen, "perf_event_open: %s", strerror(e));
    return -e;
}

/* Opens 'name' for this thread now and closes it again. */
int
pn_event_probe(const char *name, char *why, size_t whylen)
{
    PnEvent ev;
    int rc = pn_event_resolve(name, &ev, why, whylen), fd;
    if (rc < 0)
        return rc;
    ev.attr.read_format = 0;
    fd = pn_event_open(&ev.attr, -1, why, whylen);
    if (fd < 0)
        return fd;
    close(fd);
    if (why && whylen)
        why[0] = '\0';
    return 0;
}

/* ---- the process-wide set ------------------------------------------------------------- */

static void
add_event(PnCounterSet *cs, const char *spec, char *bad, size_t badlen)
{
    char why[200];
    PnEvent *ev = &cs->ev[cs->n];
    size_t l = strlen(bad);
    if (cs->n >= PN_MAX_COUNTERS) {
        snprintf(bad + l, badlen - l, "%s%s (more than %d events)", l ? "; " : "", spec,
                 PN_MAX_COUNTERS);
        return;
    }
    int rc = pn_event_probe(spec, why, sizeof why);
    if (rc == -ENOSYS) { /* no perf_event at all: every other event would say the same */
        cs->absent = 1;
        return;
    }
    if (rc < 0) {
        snprintf(bad + l, badlen - l, "%s%s: %s", l ? "; " : "", spec, why);
        return;
    }
    pn_event_resolve(spec, ev, NULL, 0);
    cs->n++;
}

/* One line naming what was dropped and why, and what is measured instead: the
 * remaining events, or times only (timestamps, never reported as cycles). */
static void
set_notice(PnCounterSet *cs, const char *what, const char *bad)
{
    char names[256] = "";
    size_t l = 0;
    if (cs->absent && !cs->n) {
        snprintf(cs->notice, sizeof cs->notice,
                 "proton: perf_event is not available here (perf_event_open: %s; qemu-user and kernels "
                 "without CONFIG_PERF_EVENTS have none); no counters, measuring time only\n",
                 strerror(ENOSYS));
        return;
    }
    for (int i = 0; i < cs->n; i++)
        l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", cs->ev[i].spec);
    if (cs->n)
        snprintf(cs->notice, sizeof cs->notice, "proton: %s (%s); counting %s instead\n", what,
                 bad, names);
    else
        snprintf(cs->notice, sizeof cs->notice,
                 "proton: %s (%s); no counters, measuring time only\n", what, bad);
}

static void
choose(PnCounterSet *cs)
{
    const char *env = getenv("PROTON_EVENTS");
    char bad[384] = "";
    memset(cs, 0, sizeof *cs);
    if (!env || strcasecmp(env, "auto") == 0 || strcasecmp(env, "default") == 0) {
        add_event(cs, "cycles", bad, sizeof bad);
        if (cs->n) {
            add_event(cs, "instructions", bad, sizeof bad);
        } else if (cs->absent) {
            set_notice(cs, "", bad);
        } else {
            add_event(cs, "task-clock", bad, sizeof bad);
            add_event(cs, "page-faults", bad, sizeof bad);
            add_event(cs, "context-switches", bad, sizeof bad);
            set_notice(cs, "no hardware performance counters", bad);
        }
    } else if (*env && strcasecmp(env, "none") != 0) {
        char *copy = strdup(env), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            while (*tok == ' ')
                tok++;
            if (*tok && !cs->absent)
                add_event(cs, tok, bad, sizeof bad);
        }
        free(copy);
        if (cs->absent)
            set_notice(cs, "", bad);
        else if (bad[0])
            set_notice(cs, cs->n ? "some PROTON_EVENTS are unavailable"
                                 : "no PROTON_EVENTS event is available", bad);
    }
    cs->source = cs->n ? "software" : "none";
    cs->ru = cs->n > 0;
    for (int i = 0; i < cs->n; i++) {
        if (cs->ev[i].is_hw)
            cs->source = "hardware";
        if (!pn_ru_kind(&cs->ev[i].attr))
            cs->ru = 0;
    }
    env = getenv("PROTON_SW_COUNTERS");
    if (env && strcasecmp(env, "perf") == 0)
        cs->ru = 0;
    cs->ruwatch = cs->ru && !(env && strcasecmp(env, "rusage") == 0);
}

/* Resolves the event set once. Safe from any thread; cheap after the first call. */
void
pn_counters_setup(void)
{
    if (PN_ACQ(&setup_done))
        return;
    pthread_mutex_lock(&setup_mu);
    if (!setup_done) {
        uint32_t gen = pn_ctrs.gen;
        choose(&pn_ctrs);
        pn_ctrs.gen = gen + 1;
        __atomic_add_fetch(&pn_prepare_epoch, 1, __ATOMIC_RELAXED); /* groups reopen */
        PN_REL(&setup_done, 1);
    }
    pthread_mutex_unlock(&setup_mu);
}

void
pn_counters_reset(void)
{
    pthread_mutex_lock(&setup_mu);
    PN_REL(&setup_done, 0);
    notice_done = 0;
    pthread_mutex_unlock(&setup_mu);
}

void
pn_counters_notice(void)
{
    if (PN_LD(&notice_done) || !pn_ctrs.notice[0])
        return;
    pthread_mutex_lock(&setup_mu);
    if (!notice_done) {
        fputs(pn_ctrs.notice, stderr);
        notice_done = 1;
    }
    pthread_mutex_unlock(&setup_mu);
}

int
pn_counter_count(void)
{
    pn_counters_setup();
    return pn_ctrs.n;
}

const char *
pn_counter_name(int i)
{
    pn_counters_setup();
    return i >= 0 && i < pn_ctrs.n ? pn_ctrs.ev[i].name : NULL;
}

const char *
pn_counter_source(void)
{
    pn_counters_setup();
    return pn_ctrs.source;
}

/* ---- listing ----------------------------------------------------------------------- */

/* hardware-ness of a libpfm4 event of the generic "perf" PMU, from its encoding */
static int
perf_pmu_is_hw(const char *full)
{
    struct perf_event_attr a;
    pfm_perf_encode_arg_t arg;
    memset(&a, 0, sizeof a);
    memset(&arg, 0, sizeof arg);
    arg.attr = &a;
    arg.size = sizeof arg;
    if (pfm_get_os_event_encoding(full, PFM_PLM3, PFM_OS_PERF_EVENT, &arg) != PFM_SUCCESS)
        return -1;
    if (a.type == PERF_TYPE_TRACEPOINT)
        return -2;
    return a.type != PERF_TYPE_SOFTWARE;
}

static int
list_pmu(int p, PnEventFn fn, void *user)
{
    pfm_pmu_info_t pi;
    pfm_event_info_t ei;
    char full[512];
    int count = 0;
    memset(&pi, 0, sizeof pi);
    pi.size = sizeof pi;
    if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || !pi.is_present)
        return 0;
    for (int i = pi.first_event; i != -1; i = pfm_get_event_next(i)) {
        int hw = 1;
        memset(&ei, 0, sizeof ei);
        ei.size = sizeof ei;
        if (pfm_get_event_info(i, PFM_OS_PERF_EVENT, &ei) != PFM_SUCCESS)
            continue;
        snprintf(full, sizeof full, "%s::%s", pi.name, ei.name);
        if (pi.type == PFM_PMU_TYPE_OS_GENERIC) {
            hw = perf_pmu_is_hw(full);
            if (hw == -2)
                continue;
            if (hw < 0)
                hw = 1;
        }
        fn(full, ei.desc ? ei.desc : "", pi.name, hw, user);
        count++;
    }
    return count;
}

/* Every event: the generic names first, then every present libpfm4 PMU's events. */
int
pn_events_foreach(PnEventFn fn, void *user)
{
    int count = 0, p;
    if (!fn)
        return -EINVAL;
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++, count++)
        fn(generic[i].name, generic[i].desc, "generic", generic[i].type != PERF_TYPE_SOFTWARE,
           user);
    pthread_mutex_lock(&setup_mu);
    if (pfm_ready()) {
        pfm_for_all_pmus(p) count += list_pmu(p, fn, user);
    }
    pthread_mutex_unlock(&setup_mu);
    return count;
}
