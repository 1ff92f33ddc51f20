/*
 * rt_util.c — errors, debug logging, environment flags, cache statistics and the
 * allocation helpers of the runtime.
 *
 * The error text is per thread (like errno); allocation failures abort with a message,
 * so callers carry no out-of-memory branches.
 */
#include "rt_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static _Thread_local char err_text[1024];
static _Atomic uint64_t stats[RT_STAT_COUNT];

static const char *const stat_names[RT_STAT_COUNT] = {
#define RT_STAT_NAME(e, s) s,
    RT_STATS(RT_STAT_NAME)
#undef RT_STAT_NAME
};

/* ---- errors and logging --------------------------------------------------------- */

const char *
rt_last_error(void)
{
    return err_text;
}

/* Records the error text for this thread and returns -err, so that failures read
 * `return rt_fail(errno, "open %s: %s", path, strerror(errno));`. Keeps errno. */
int
rt_fail(int err, const char *fmt, ...)
{
    int saved = errno;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err_text, sizeof err_text, fmt, ap);
    va_end(ap);
    errno = saved;
    return err > 0 ? -err : (err < 0 ? err : -EIO);
}

/* Formats one line and writes it with a single call. */
static void
vlog(const char *what, const char *fmt, va_list ap)
{
    char line[1200];

    vsnprintf(line, sizeof line, fmt, ap);
    /* one fprintf per line so concurrent processes do not interleave mid-line */
    fprintf(stderr, "[tritium] %s%s\n", what, line);
}

/* Prints "[tritium] <message>" on stderr when TRITIUM_DEBUG is on. */
void
rt_log(const char *fmt, ...)
{
    va_list ap;

    if (!rt_env_debug())
        return;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

/* Prints "[tritium] warning: <message>" on stderr, always. */
void
rt_warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

/* ---- environment ------------------------------------------------------------------ */

/* Nonzero when the variable holds 1/true/yes/on (any case, surrounding blanks allowed),
 * the spellings upstream Triton's knobs accept. */
int
rt_env_flag(const char *name)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    const char *v = getenv(name);
    char buf[8];
    size_t n = 0;

    if (!v)
        return 0;
    while (isspace((unsigned char)*v))
        v++;
    while (v[n] && !isspace((unsigned char)v[n]) && n < sizeof buf - 1) {
        buf[n] = v[n];
        n++;
    }
    buf[n] = 0;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (strcasecmp(buf, yes[i]) == 0)
            return 1;
    return 0;
}

int
rt_env_always_compile(void)
{
    return rt_env_flag("TRITON_ALWAYS_COMPILE");
}

int
rt_env_debug(void)
{
    return rt_env_flag("TRITIUM_DEBUG");
}

/* ---- statistics -------------------------------------------------------------------- */

/* Relaxed atomics: counters are independent tallies, read only for reporting. */
void
rt_stats_add(RtStat kind)
{
    if ((unsigned)kind < RT_STAT_COUNT)
        atomic_fetch_add_explicit(&stats[kind], 1, memory_order_relaxed);
}

void
rt_stats_get(RtStats *out)
{
    for (int i = 0; i < RT_STAT_COUNT; i++)
        out->count[i] = atomic_load_explicit(&stats[i], memory_order_relaxed);
}

void
rt_stats_reset(void)
{
    for (int i = 0; i < RT_STAT_COUNT; i++)
        atomic_store_explicit(&stats[i], 0, memory_order_relaxed);
}

const char *
rt_stat_name(RtStat kind)
{
    return (unsigned)kind < RT_STAT_COUNT ? stat_names[kind] : NULL;
}

/* ---- names and memory -------------------------------------------------------------- */

/* Nonzero when 's' is a safe key or file name: 1..RT_NAME_MAX bytes of [A-Za-z0-9._+-],
 * not starting with '.' (so never ".", "..", or one of our hidden temp names). */
int
rt_name_ok(const char *s)
{
    size_t n = 0;

    if (!s || !*s || *s == '.')
        return 0;
    for (; s[n]; n++) {
        unsigned char c = (unsigned char)s[n];
        if (n >= RT_NAME_MAX || !(isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+'))
            return 0;
    }
    return 1;
}

/* Out of memory inside a Python process: nothing sensible can continue, so say what
 * failed and abort (STYLE.md §6.10 class c), instead of an OOM branch at every call. */
static void *
oom(size_t n)
{
    fprintf(stderr, "[tritium] out of memory allocating %zu bytes\n", n);
    abort();
}

void *
rt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    return p ? p : oom(n);
}

void *
rt_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    return p ? p : oom(n * size);
}

char *
rt_xstrdup(const char *s)
{
    char *p = strdup(s);
    return p ? p : oom(strlen(s) + 1);
}

char *
rt_xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *p = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&p, fmt, ap);
    va_end(ap);
    return n >= 0 ? p : oom(0);
}
