/*
 * pn_init.c — initialisation, the environment and errors.
 *
 * pn_init reads the environment once and anchors the clock; it installs nothing
 * until something records (kernel capture on, or a session started): then
 * pn_arm_exit (pn_exit.c) arms the exit and signal paths.
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
    pn_capture_timeline_late = 0;
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
    pn_output_claim();
    pn_lock();
    pn_capture_enable_locked(1);
    pn_unlock();
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
    pn_lock();
    pn_tls_collect();
    PN_ST(&pn_capture_dirty, 0);
    read_env();
    drop_noticed = 0;
    pn_counters_reset();
    if (!pn_cfg.disabled && pn_cfg.capture) {
        pn_output_claim();
        pn_capture_enable_locked(1);
    }
    pn_unlock();
}
