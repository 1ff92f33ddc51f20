/*
 * pn_device.c — what the outputs say about the CPU: architecture, model, cores and
 * frequency (kHz, 0 when unknown).
 *
 * Model: "model name" (x86), "uarch" or "isa" (RISC-V), "CPU part" (Arm) from
 * /proc/cpuinfo, else /proc/device-tree/model. Frequency: cpufreq's
 * cpuinfo_max_freq, else "cpu MHz" from /proc/cpuinfo, else the exact TSC rate.
 * Read once.
 */
#include "pn_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static PnDevice dev;
static pthread_once_t dev_once = PTHREAD_ONCE_INIT;

/* copies the value of "key : value" into 'out' when the line starts with 'key' */
static int
field(const char *line, const char *key, char *out, size_t n)
{
    size_t k = strlen(key);
    const char *v;
    size_t l;
    if (strncmp(line, key, k) != 0 || (line[k] != ' ' && line[k] != '\t' && line[k] != ':'))
        return 0;
    if (!(v = strchr(line, ':')))
        return 0;
    for (v++; *v == ' ' || *v == '\t'; v++)
        ;
    l = strcspn(v, "\n");
    if (l >= n)
        l = n - 1;
    memcpy(out, v, l);
    out[l] = '\0';
    return l > 0;
}

static void
read_cpuinfo(char *model, size_t n, double *mhz)
{
    static const char *keys[] = { "model name", "uarch", "cpu model", "CPU part", "isa" };
    char line[1024], found[5][128] = { "" };
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char mhzs[64];
        for (int i = 0; i < 5; i++)
            if (!found[i][0])
                field(line, keys[i], found[i], sizeof found[i]);
        if (*mhz == 0 && field(line, "cpu MHz", mhzs, sizeof mhzs))
            *mhz = atof(mhzs);
    }
    fclose(f);
    for (int i = 0; i < 5; i++) {
        if (found[i][0]) {
            snprintf(model, n, "%.*s", (int)n - 1, found[i]);
            return;
        }
    }
}

static void
read_dt_model(char *model, size_t n)
{
    FILE *f = fopen("/proc/device-tree/model", "r");
    size_t l;
    if (!f)
        return;
    l = fread(model, 1, n - 1, f);
    model[l] = '\0';
    fclose(f);
}

static void
dev_init(void)
{
    struct utsname u;
    double mhz = 0;
    FILE *f;
    unsigned long long khz = 0;
    snprintf(dev.model, sizeof dev.model, "unknown");
    if (uname(&u) == 0)
        snprintf(dev.arch, sizeof dev.arch, "%s", u.machine);
    read_cpuinfo(dev.model, sizeof dev.model, &mhz);
    if (strcmp(dev.model, "unknown") == 0)
        read_dt_model(dev.model, sizeof dev.model);
    dev.num_cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if ((f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r"))) {
        if (fscanf(f, "%llu", &khz) != 1)
            khz = 0;
        fclose(f);
    }
    if (!khz && mhz > 0)
        khz = (unsigned long long)(mhz * 1000 + 0.5);
    if (!khz && pn_clk_kind == PN_CLK_TSC && pn_clock_exact())
        khz = (unsigned long long)(pn_clock_hz() / 1000 + 0.5);
    dev.clock_khz = khz;
}

/* Borrowed, process lifetime. */
const PnDevice *
pn_device(void)
{
    pthread_once(&dev_once, dev_init);
    return &dev;
}
