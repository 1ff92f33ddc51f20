/*
 * rt_stream.c — when a launch should use its kernel's streaming-store entry.
 *
 * A kernel library may export tritium_kernel_nt next to tritium_kernel: the
 * same code with non-temporal stores to the kernel's outputs (the compiler's
 * cg_stream.c). It saves the read-for-ownership of every output line, which is
 * a win only when the output cannot stay in the cache anyway. The launcher
 * compares the bytes a launch stores with rt_stream_threshold():
 *
 *   TRITIUM_STREAM_STORES  unset/auto  half of the last-level cache
 *                          0/off       never
 *                          1/on        whenever the kernel has the entry
 *                          <bytes>[K|M|G]  that threshold
 *
 * The last-level cache is the highest-level data or unified cache sysfs lists
 * for cpu0 (sysconf's figure is wrong on some VMs), else 8 MiB.
 */
#include "rt_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static double threshold = INFINITY;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Size in bytes of a sysfs cache size string like "32768K", or 0. */
static double
parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    switch (*end) {
    case 'k': case 'K': v *= 1024; end++; break;
    case 'm': case 'M': v *= 1024 * 1024; end++; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
    default: break;
    }
    while (*end == ' ' || *end == '\n' || *end == 'B' || *end == 'b')
        end++;
    return *end ? -1 : v;
}

static int
read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

double
rt_llc_bytes(void)
{
    double best = 0;
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        char path[96], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (read_line(path, buf, sizeof buf))
            break;
        if (!strncmp(buf, "Instruction", 11))
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (read_line(path, buf, sizeof buf))
            continue;
        int level = atoi(buf);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (read_line(path, buf, sizeof buf))
            continue;
        double sz = parse_size(buf);
        if (sz > 0 && level >= best_level) {
            best_level = level;
            best = sz;
        }
    }
    return best > 0 ? best : 8.0 * 1024 * 1024;
}

static void
init(void)
{
    const char *v = getenv("TRITIUM_STREAM_STORES");
    if (!v || !*v || !strcasecmp(v, "auto")) {
        threshold = rt_llc_bytes() / 2;
    } else if (!strcasecmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "never")) {
        threshold = INFINITY;
    } else if (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "always")) {
        threshold = 0;
    } else {
        double t = parse_size(v);
        if (t < 0) {
            rt_warn("TRITIUM_STREAM_STORES=%s is not auto, off, on or a size like 16M; using auto", v);
            t = rt_llc_bytes() / 2;
        }
        threshold = t;
    }
    rt_log("streaming stores from %.0f bytes stored per launch", threshold);
}

double
rt_stream_threshold(void)
{
    pthread_once(&once, init);
    return threshold;
}
