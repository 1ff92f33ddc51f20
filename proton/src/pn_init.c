/*
 * pn_init.c — initialisation, the environment, errors, and writing pending output
 * at exit and on SIGTERM/SIGINT.
 *
 * pn_init reads the environment once and anchors the clock; it installs nothing
 * until something records (kernel capture on, or a session started): then
 * pn_arm_exit registers an atexit handler and takes over SIGTERM and SIGINT only
 * where their disposition is still the default. Python owns SIGINT (it becomes
 * KeyboardInterrupt), so an existing handler is never replaced; an uncaught
 * KeyboardInterrupt ends Python by re-raising SIGINT after finalisation, which
 * skips C atexit handlers, so the triton package calls pn_flush_at_exit from a
 * Python atexit hook as well. The signal handler writes pending output, restores the default
 * action and re-raises, so the exit status still says "killed by SIGTERM".
 */
#include "pn_int.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

PnConfig pn_cfg;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static __thread char err_buf[512], err_path[512];
static int drop_noticed;

/* ---- errors and environment ----------------------------------------------------------- */

const char *
pn_last_error(void)
{
    return err_buf;
}

const char *
pn_last_error_path(void)
{
    return err_path;
}

void
pn_set_error(int err, const char *fmt, ...)
{
    va_list ap;
    (void)err;
    err_path[0] = '\0';
    va_start(ap, fmt);
    vsnprintf(err_buf, sizeof err_buf, fmt, ap);
    va_end(ap);
}

void
pn_set_file_error(int err, const char *path)
{
    pn_set_error(err, "cannot write %s: %s", path, strerror(err));
    snprintf(err_path, sizeof err_path, "%s", path);
}

int
pn_env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 &&
           strcasecmp(v, "off") != 0 && strcasecmp(v, "no") != 0;
}

static void
read_env(void)
{
    const char *v;
    free(pn_cfg.output);
    memset(&pn_cfg, 0, sizeof pn_cfg);
    pn_cfg.disabled = pn_env_flag("TRITON_DISABLE_PROTON") || pn_env_flag("TRITON_PROTON_DISABLE");
    pn_cfg.capture = pn_env_flag("PROTON_KERNEL_CAPTURE");
    pn_cfg.verbose = pn_env_flag("PROTON_VERBOSE");
    if ((v = getenv("PROTON_OUTPUT")) && *v)
        pn_cfg.output = strdup(v);
    pn_trace_limit = 1000000;
    pn_capture_timeline = 0;
    __atomic_add_fetch(&pn_budget_gen[0], 1, __ATOMIC_RELAXED); /* a new limit: scan again */
    __atomic_add_fetch(&pn_budget_gen[1], 1, __ATOMIC_RELAXED);
    if ((v = getenv("PROTON_TRACE_LIMIT")) && *v) {
        char *end;
        unsigned long long l = strtoull(v, &end, 10);
        if (*end == '\0')
            pn_trace_limit = l;
        else
            fprintf(stderr, "proton: ignoring PROTON_TRACE_LIMIT=%s (not a number)\n", v);
    }
}

static void
init_once_fn(void)
{
    read_env();
    pn_clock_init();
    if (pn_cfg.disabled || !pn_cfg.capture)
        return;
    pthread_mutex_lock(&pn_mu);
    pn_capture_enable_locked(1);
    pthread_mutex_unlock(&pn_mu);
    pn_counters_setup();
    pn_arm_exit();
}

int
pn_init(void)
{
    pthread_once(&init_once, init_once_fn);
    return 0;
}

int
pn_disabled(void)
{
    pn_init();
    return pn_cfg.disabled;
}

/* ---- output at exit ------------------------------------------------------------------- */

/* finalizes every session and dumps the capture store if it has unwritten data;
 * holds pn_mu */
static void
flush_locked(int at_exit)
{
    for (int i = 1; i < PN_NSLOTS; i++) {
        if (pn_slots[i].used && pn_slot_finalize(i, "", 1) < 0)
            fprintf(stderr, "proton: %s\n", pn_last_error());
    }
    if (pn_slots[PN_CAPTURE_SLOT].used && PN_LD(&pn_capture_dirty)) {
        const char *p = pn_cfg.output;
        if (pn_capture_dump_locked(NULL) < 0) {
            fprintf(stderr, "proton: %s\n", pn_last_error());
            /* said once: the next exit hook (C's after Python's) would fail the same way */
            PN_ST(&pn_capture_dirty, 0);
        } else if (at_exit && p) {
            char *e = pn_path_expand(p);
            fprintf(stderr, "proton: wrote %s\n", e ? e : p);
            free(e);
        }
    }
}

void
pn_flush_all(void)
{
    pthread_mutex_lock(&pn_mu);
    flush_locked(0);
    pthread_mutex_unlock(&pn_mu);
}

void
pn_flush_at_exit(void)
{
    pthread_mutex_lock(&pn_mu);
    flush_locked(1);
    pthread_mutex_unlock(&pn_mu);
}

static void
on_exit_handler(void)
{
    pn_flush_at_exit();
}

/* Not async-signal-safe in general (it allocates and writes files), which is the
 * accepted price of keeping a killed run's profile; pn_mu is only tried for a
 * bounded time so a signal that interrupts a writer does not hang the process. */
static void
on_signal(int sig)
{
    static volatile sig_atomic_t busy;
    struct sigaction dfl;
    if (!busy) {
        busy = 1;
        for (int i = 0; i < 2000; i++) {
            if (pthread_mutex_trylock(&pn_mu) == 0) {
                flush_locked(1);
                pthread_mutex_unlock(&pn_mu);
                break;
            }
            usleep(1000);
        }
    }
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void
take_signal(int sig)
{
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, NULL);
}

static void
arm_once(void)
{
    atexit(on_exit_handler);
    take_signal(SIGTERM);
    take_signal(SIGINT);
}

/* Registers the exit handler and takes SIGTERM/SIGINT where they are default. */
void
pn_arm_exit(void)
{
    pthread_once(&exit_once, arm_once);
}

/* Prints, once per process, how many timeline events were dropped. */
void
pn_drop_notice(uint64_t dropped)
{
    if (!dropped || __atomic_exchange_n(&drop_noticed, 1, __ATOMIC_RELAXED))
        return;
    fprintf(stderr,
            "proton: %llu timeline events dropped (PROTON_TRACE_LIMIT=%llu); aggregated "
            "results are exact\n",
            (unsigned long long)dropped, (unsigned long long)pn_trace_limit);
}

/* ---- tests ---------------------------------------------------------------------------- */

/* Forgets every session, the capture store and the calling thread's data, then
 * re-reads the environment. Other recording threads must have exited. */
void
pn_test_reset(void)
{
    pn_init();
    pn_sessions_drop_all();
    pn_tls_reset_self();
    pthread_mutex_lock(&pn_mu);
    pn_tls_collect();
    PN_ST(&pn_capture_dirty, 0);
    read_env();
    drop_noticed = 0;
    pn_counters_reset();
    if (!pn_cfg.disabled && pn_cfg.capture)
        pn_capture_enable_locked(1);
    pthread_mutex_unlock(&pn_mu);
}
