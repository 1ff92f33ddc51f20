/*
 * cli_roofline.c — `proton-cli roofline`: this machine's roofs (measured once by
 * cli_peak.c and cached per CPU model and thread count) and, for a profile, each kernel's
 * and scope's arithmetic intensity, attained rate and fraction of the roof. The same
 * resolution of peaks (cli_roof_peaks_for) feeds the roofline of `proton-cli html`.
 *
 * Cache: $XDG_CACHE_HOME/tritium (else ~/.cache/tritium)/roofline-<model>-<N>t.json, one
 * small JSON object (format "tritium-roofline-peaks", version 1), written through a
 * temporary file and rename(). A file that does not parse or check is reported on
 * stderr and measured again. TRITIUM_ROOFLINE_PEAKS=FILE (or --peaks FILE) uses FILE
 * instead of the cache and never measures.
 */
#include "cli.h"
#include "cli_peak.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PEAKS_FORMAT "tritium-roofline-peaks"
#define PEAKS_METHOD                                                                           \
    "FMA: 12 independent vector FMA chains per thread (the widest vectors the CPU has; "       \
    "bf16: AVX-512 vdpbf16ps pair-dot, 4 flops per fp32 lane) on every online CPU at once, "  \
    "summing each thread's flops per second of its own CPU time, best of 4 runs of 25 ms; "    \
    "read: every thread sums its slice of a buffer 4x the last-level cache (at least "        \
    "128 MiB), wall time, best of 6 passes"

/* ---- this machine ------------------------------------------------------------------------ */

/* The CPU model as Tritium's profiler names it (pn_device.c): the first of /proc/cpuinfo's
 * "model name", "uarch", "cpu model", "CPU part", "isa" lines, else the device tree. */
static void
machine_model(char *out, size_t n)
{
    static const char *const keys[] = {"model name", "uarch", "cpu model", "CPU part", "isa"};
    char line[1024], found[5][256] = {""};
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            for (int i = 0; i < 5; i++) {
                size_t k = strlen(keys[i]);
                char *v = line + k;
                if (found[i][0] || strncmp(line, keys[i], k) != 0)
                    continue;
                v += strspn(v, " \t");
                if (*v++ != ':')
                    continue;
                v += strspn(v, " \t");
                snprintf(found[i], sizeof found[i], "%.*s", (int)strcspn(v, "\n"), v);
            }
        fclose(f);
        for (int i = 0; i < 5; i++)
            if (found[i][0]) {
                size_t l = strnlen(found[i], n - 1);
                memcpy(out, found[i], l);
                out[l] = '\0';
                return;
            }
    }
    if ((f = fopen("/proc/device-tree/model", "r"))) {
        size_t l = fread(out, 1, n - 1, f);
        out[l] = '\0';
        fclose(f);
    }
}

static int
machine_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n <= 256 ? (int)n : n > 256 ? 256 : 1;
}

int
cli_roof_cache_path(const char *model, int threads, char *out, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[3072], slug[97];
    if (xdg && xdg[0] == '/')
        snprintf(dir, sizeof dir, "%s/tritium", xdg);
    else if (home && home[0])
        snprintf(dir, sizeof dir, "%s/.cache/tritium", home);
    else
        return -1;
    size_t k = 0;
    for (const char *s = model; *s && k < sizeof slug - 1; s++) {
        int ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                 *s == '.' || *s == '-';
        if (ok)
            slug[k++] = *s;
        else if (k && slug[k - 1] != '_')
            slug[k++] = '_';
    }
    while (k && slug[k - 1] == '_')
        k--;
    slug[k] = '\0';
    int w = snprintf(out, n, "%s/roofline-%s-%dt.json", dir, k ? slug : "cpu", threads);
    return w > 0 && (size_t)w < n ? 0 : -1;
}

/* ---- the peaks file ---------------------------------------------------------------------- */

static int
num_field(const cJSON *o, const char *key, double lo, double *out, CliErr *e)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < lo)
        return cli_err_set(e, "'%s' is not a number >= %g", key, lo), -1;
    *out = x->valuedouble;
    return 0;
}

/* Reads and checks a peaks file; 0, or -1 with e set (without the path). */
static int
peaks_read(const char *path, CliPeaks *pk, CliErr *e)
{
    CliErr le;
    cJSON *j = cli_json_load(path, &le);
    double v, threads;
    memset(pk, 0, sizeof *pk);
    if (!j) {
        const char *m = strstr(le.msg, ": ");
        cli_err_set(e, "%s", m ? m + 2 : le.msg);
        return -1;
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(j, "format");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(j, "cpu_model");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(j, "measured_at");
    const cJSON *fma = cJSON_GetObjectItemCaseSensitive(j, "fma_gflops");
    int rc = -1;
    if (!cJSON_IsObject(j) || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, PEAKS_FORMAT) != 0)
        cli_err_set(e, "not a peaks file (no \"format\": \"" PEAKS_FORMAT "\")");
    else if (num_field(j, "version", 1, &v, e) != 0 || v != 1)
        cli_err_set(e, "unknown version (want 1)");
    else if (!cJSON_IsString(model) || !model->valuestring[0])
        cli_err_set(e, "'cpu_model' is not a string");
    else if (num_field(j, "threads", 1, &threads, e) != 0 || threads != floor(threads) || threads > 1e6)
        cli_err_set(e, "'threads' is not a positive integer");
    else if (!cJSON_IsObject(fma))
        cli_err_set(e, "'fma_gflops' is not an object");
    else if (num_field(fma, "fp32", 1e-9, &pk->fma[CLI_PEAK_FP32], e) == 0 &&
             num_field(fma, "fp64", 1e-9, &pk->fma[CLI_PEAK_FP64], e) == 0 &&
             (!cJSON_GetObjectItemCaseSensitive(fma, "bf16") ||
              num_field(fma, "bf16", 0, &pk->fma[CLI_PEAK_BF16], e) == 0) &&
             num_field(j, "read_gbps", 1e-9, &pk->read_gbps, e) == 0)
        rc = 0;
    if (rc == 0) {
        snprintf(pk->cpu_model, sizeof pk->cpu_model, "%s", model->valuestring);
        pk->threads = (int)threads;
        snprintf(pk->measured_at, sizeof pk->measured_at, "%s",
                 cJSON_IsString(at) ? at->valuestring : "?");
        snprintf(pk->path, sizeof pk->path, "%s", path);
    }
    cJSON_Delete(j);
    return rc;
}

static int
mkdir_p(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *s = buf + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int
peaks_write(const char *path, const CliPeaks *pk, CliErr *e)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir_p(dir) != 0)
            return cli_err_set(e, "%s: cannot create: %s", dir, strerror(errno)), -1;
    }
    cJSON *j = cJSON_CreateObject(), *fma;
    cJSON_AddStringToObject(j, "format", PEAKS_FORMAT);
    cJSON_AddNumberToObject(j, "version", 1);
    cJSON_AddStringToObject(j, "cpu_model", pk->cpu_model);
    cJSON_AddNumberToObject(j, "threads", pk->threads);
    cJSON_AddStringToObject(j, "measured_at", pk->measured_at);
    fma = cJSON_AddObjectToObject(j, "fma_gflops");
    for (int t = 0; t < CLI_PEAK_NTYPES; t++)
        cJSON_AddNumberToObject(fma, cli_peak_type_name((CliPeakType)t), cli_round15(pk->fma[t]));
    cJSON_AddNumberToObject(j, "vector_bytes", pk->vector_bytes);
    cJSON_AddNumberToObject(j, "read_gbps", cli_round15(pk->read_gbps));
    cJSON_AddNumberToObject(j, "read_buffer_mib", pk->read_mib);
    cJSON_AddNumberToObject(j, "seconds", cli_round15(pk->seconds));
    cJSON_AddStringToObject(j, "method", PEAKS_METHOD);
    CliBuf b = {0};
    cli_json_print(&b, j);
    cJSON_Delete(j);
    int rc = cli_file_write_atomic(path, b.s, b.n, e);
    cli_buf_fini(&b);
    return rc;
}

/* Measures this machine, printing progress on stderr. */
static void
measure(CliPeaks *pk, const char *model, int threads)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(pk, 0, sizeof *pk);
    snprintf(pk->cpu_model, sizeof pk->cpu_model, "%s", model);
    pk->threads = threads;
    fprintf(stderr, "proton-cli: measuring the roofs of this machine (%s, %d threads), once:",
            model, threads);
    for (int t = 0; t < CLI_PEAK_NTYPES; t++) {
        int w = cli_peak_widest((CliPeakType)t);
        pk->fma[t] = w ? cli_peak_fma((CliPeakType)t, w, threads, 0.025, 4) : 0;
        if (t == CLI_PEAK_FP32)
            pk->vector_bytes = w;
        fprintf(stderr, w ? " %s %.1f GFLOP/s," : " %s: no pair-dot instruction,",
                cli_peak_type_name((CliPeakType)t), pk->fma[t]);
        fflush(stderr);
    }
    size_t bytes = cli_peak_read_bytes();
    pk->read_mib = (int)(bytes >> 20);
    pk->read_gbps = cli_peak_read(threads, bytes, 6);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pk->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    time_t now = time(NULL);
    strftime(pk->measured_at, sizeof pk->measured_at, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(stderr, " streaming read %.1f GB/s (%.1f s)\n", pk->read_gbps, pk->seconds);
}

int
cli_roof_machine_peaks(int remeasure, CliPeaks *pk, CliErr *e)
{
    char model[256], path[4096];
    int threads = machine_threads();
    machine_model(model, sizeof model);
    int cached = cli_roof_cache_path(model, threads, path, sizeof path) == 0;
    if (cached && !remeasure && access(path, F_OK) == 0) {
        CliErr why = {""};
        int r = peaks_read(path, pk, &why);
        if (r == 0 && strcmp(pk->cpu_model, model) == 0 && pk->threads == threads)
            return 0;
        if (r == 0)
            snprintf(why.msg, sizeof why.msg, "it is for %s, %d threads", pk->cpu_model, pk->threads);
        cli_error(NULL, "note: cache %s is not usable (%s); measuring again", path, why.msg);
    }
    measure(pk, model, threads);
    if (!(pk->fma[CLI_PEAK_FP32] > 0 && pk->fma[CLI_PEAK_FP64] > 0 && pk->read_gbps > 0))
        return cli_err_set(e, "measuring the roofs failed (fp32 %g, fp64 %g GFLOP/s, read %g GB/s)",
                           pk->fma[CLI_PEAK_FP32], pk->fma[CLI_PEAK_FP64], pk->read_gbps), -1;
    if (!cached) {
        cli_error(NULL, "note: neither XDG_CACHE_HOME nor HOME is set; the roofs are not cached");
        snprintf(pk->path, sizeof pk->path, "(not cached)");
        return 0;
    }
    CliErr we;
    if (peaks_write(path, pk, &we) != 0)
        cli_error(NULL, "note: cannot cache the roofs: %s", we.msg);
    snprintf(pk->path, sizeof pk->path, "%s", path);
    return 0;
}

int
cli_roof_peaks_for(const CliProfile *p, const char *file, int remeasure, CliPeaks *pk,
                   char *note, size_t note_n, CliErr *e)
{
    char model[256];
    const char *env = getenv("TRITIUM_ROOFLINE_PEAKS");
    note[0] = '\0';
    if (p && p->device_type && !cli_streq_nocase(p->device_type, "CPU")) {
        snprintf(note, note_n, "a %s profile: CPU roofs do not apply", p->device_type);
        return 0;
    }
    if (!file && env && env[0])
        file = env;
    if (file) {
        CliErr why;
        if (peaks_read(file, pk, &why) != 0)
            return cli_err_set(e, "%s: %s", file, why.msg), -1;
        const char *pm = p ? p->cpu_model : NULL;
        if (pm && pm[0] && strcmp(pm, "unknown") != 0 && strcmp(pm, pk->cpu_model) != 0)
            snprintf(note, note_n, "the roofs are of %s; the profile ran on %s", pk->cpu_model, pm);
        return 1;
    }
    machine_model(model, sizeof model);
    int threads = machine_threads();
    const char *pm = p ? p->cpu_model : NULL;
    int known = pm && pm[0] && strcmp(pm, "unknown") != 0;
    if (known && (strcmp(pm, model) != 0 || (p->num_cores > 0 && p->num_cores != threads))) {
        char path[4096];
        int pt = p->num_cores > 0 ? p->num_cores : threads;
        CliErr why = {""};
        if (cli_roof_cache_path(pm, pt, path, sizeof path) == 0 && access(path, F_OK) == 0) {
            if (peaks_read(path, pk, &why) == 0 && strcmp(pk->cpu_model, pm) == 0 && pk->threads == pt)
                return 1;
            snprintf(note, note_n, "the cache file %s for %s, %d threads, where this profile ran, "
                     "is not usable (%s)", path, pm, pt, why.msg[0] ? why.msg : "it is for another CPU");
            return 0;
        }
        snprintf(note, note_n, "no roofs are cached for %s, %d threads, where this profile "
                 "ran: run `proton-cli roofline` there and copy its cache file to %s, or use "
                 "--peaks FILE", pm, pt, path);
        return 0;
    }
    if (cli_roof_machine_peaks(remeasure, pk, e) != 0)
        return -1;
    if (!known)
        snprintf(note, note_n, "the profile does not name its CPU; these are the roofs of this "
                 "machine");
    return 1;
}

int
cli_roof_type(const CliProfile *p, const CliNode *n, int *width)
{
    static const int widths[] = {8, 16, 32, 64};
    double best = -1;
    *width = 32;
    for (int i = 0; i < 4; i++) {
        char name[32];
        double v = 0;
        for (int s = 0; s < 2; s++) {
            snprintf(name, sizeof name, "%sflops%d", s ? "scope_" : "", widths[i]);
            int id = cli_profile_metric_find(p, name);
            double x = id >= 0 ? cli_metric_inclusive(p, n, id) : NAN;
            v += isnan(x) ? 0 : x;
        }
        if (v > best && v > 0) {
            best = v;
            *width = widths[i];
        }
    }
    return *width == 64 ? CLI_PEAK_FP64 : *width == 16 ? CLI_PEAK_BF16 : CLI_PEAK_FP32;
}

double
cli_roof_peak_gflops(const CliPeaks *pk, int t)
{
    return pk->fma[t] > 0 ? pk->fma[t] : pk->fma[CLI_PEAK_FP32];
}

/* ---- the subcommand ------------------------------------------------------------------------ */

static const char roofline_usage[] =
    "usage: proton-cli roofline [options] [FILE...]\n"
    "\n"
    "Without FILE: this machine's roofs, the peak FMA rate per type (fp32, fp64, bf16 where\n"
    "the CPU has a pair-dot instruction) and the streaming read bandwidth. They are measured\n"
    "once (about 1 s, progress on stderr) and cached in $XDG_CACHE_HOME/tritium (else\n"
    "~/.cache/tritium)/roofline-<cpu model>-<threads>t.json. With FILE: every kernel and\n"
    "scope with flops, bytes and time: arithmetic intensity, attained GFLOP/s and GB/s, its\n"
    "roof min(peak of its type, intensity x bandwidth) and the fraction of it it reached.\n"
    "\n"
    "  --remeasure         measure again and rewrite the cache\n"
    "  --peaks FILE        use the roofs in FILE (a cache file; also TRITIUM_ROOFLINE_PEAKS)\n"
    "  --cache-path        print where this machine's roofs are cached and exit\n"
    "  --format F          text (default) or json\n"
    "  -h, --help          this help\n"
    "\n"
    "Exit codes: 0 ok, 1 usage error, 2 unreadable or malformed input.\n";

static void
peaks_text(const CliPeaks *pk, CliBuf *b)
{
    cli_buf_printf(b, "roofs: %s, %d threads: FMA fp32 %.1f, fp64 %.1f", pk->cpu_model,
                   pk->threads, pk->fma[CLI_PEAK_FP32], pk->fma[CLI_PEAK_FP64]);
    if (pk->fma[CLI_PEAK_BF16] > 0)
        cli_buf_printf(b, ", bf16 %.1f", pk->fma[CLI_PEAK_BF16]);
    cli_buf_printf(b, " GFLOP/s; streaming read %.1f GB/s\n  measured %s; from %s\n",
                   pk->read_gbps, pk->measured_at, pk->path);
}

static cJSON *
peaks_json(const CliPeaks *pk)
{
    cJSON *o = cJSON_CreateObject(), *f;
    cJSON_AddStringToObject(o, "cpu_model", pk->cpu_model);
    cJSON_AddNumberToObject(o, "threads", pk->threads);
    f = cJSON_AddObjectToObject(o, "fma_gflops");
    for (int t = 0; t < CLI_PEAK_NTYPES; t++)
        cJSON_AddNumberToObject(f, cli_peak_type_name((CliPeakType)t), cli_round15(pk->fma[t]));
    cJSON_AddNumberToObject(o, "read_gbps", cli_round15(pk->read_gbps));
    cJSON_AddStringToObject(o, "measured_at", pk->measured_at);
    cJSON_AddStringToObject(o, "source", pk->path);
    return o;
}

enum { R_TIME, R_FLOPS, R_BYTES, R_NCOLS };
#define ROW_FMT "%10s %9s %10s %9s %14s %7s  %-7s  %s\n"

/* One row per kernel (named by its path) and per node below a kernel (indented). */
static void
render_profile(CliProfile *p, const CliPeaks *pk, const char *note, CliBuf *b, cJSON *jrows)
{
    static const char *const specs[R_NCOLS] = {"time/ms", "flop/s", "byte/s"};
    CliMetricSpec m[R_NCOLS];
    int missing[R_NCOLS];
    for (int i = 0; i < R_NCOLS; i++)
        cli_metric_parse(specs[i], &m[i], NULL);
    cli_metrics_compute(p, m, R_NCOLS, missing);
    CliView v = {.depth = 1 << 30, .sort = CLI_SORT_METRIC};
    cli_view_apply(p, &v);
    cli_view_sort(p, &v);
    if (b) {
        cli_buf_printf(b, "== %s ==\n", p->path);
        if (note[0])
            cli_buf_printf(b, "note: %s\n", note);
        cli_buf_printf(b, ROW_FMT, "time/ms", "flop/B", "GFLOP/s", "GB/s", "roof",
                       "of roof", "bound", "name");
    }
    int rows = 0, above = 0;
    for (CliNode *n = p->root; n; n = cli_node_next_preorder(n, p->root)) {
        if (!(n->flags & CLI_NODE_INKERNEL))
            continue;
        double t = n->col[R_TIME], f = n->col[R_FLOPS], by = n->col[R_BYTES];
        /* ok: a point on the roofline; mem: bytes but no flops (a load scope), measured
         * against the bandwidth alone */
        int ok = !isnan(f) && !isnan(by) && f > 0 && by > 0;
        int mem = !ok && !isnan(by) && by > 0 && (isnan(f) || f == 0);
        int width;
        CliPeakType ty = (CliPeakType)cli_roof_type(p, n, &width);
        double ai = ok ? f / by : mem ? 0 : NAN, peak = pk ? cli_roof_peak_gflops(pk, ty) : NAN;
        double roof = pk && ok ? fmin(peak, ai * pk->read_gbps) : pk && mem ? pk->read_gbps : NAN;
        double frac = ok ? f / 1e9 / roof : mem ? by / 1e9 / roof : NAN;
        const char *bound = !pk || !(ok || mem)        ? "-"
                            : mem || ai * pk->read_gbps < peak ? "memory"
                                                               : "compute";
        char name[4096];
        const CliNode *k = n;
        while (!(k->flags & CLI_NODE_KERNEL) && k->parent)
            k = k->parent;
        if (n == k) {
            char *path = cli_node_path_dup(n);
            snprintf(name, sizeof name, "%s", strncmp(path, "ROOT > ", 7) == 0 ? path + 7 : path);
            free(path);
        } else {
            snprintf(name, sizeof name, "%*s%s", 2 * (n->depth - k->depth), "", n->name);
        }
        rows++;
        above += frac > 1.05;
        if (jrows) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "name", n == k ? name : n->name);
            cJSON_AddStringToObject(r, "kind", n == k ? "kernel" : "scope");
            cJSON_AddNumberToObject(r, "depth", n->depth - k->depth);
#define JNUM(key, x) isnan(x) ? (void)cJSON_AddNullToObject(r, key) \
                              : (void)cJSON_AddNumberToObject(r, key, cli_round15(x))
            JNUM("time_ms", t);
            JNUM("flop_per_byte", ai);
            JNUM("gflops", ok ? f / 1e9 : mem ? 0 : NAN);
            JNUM("gbytes", ok || mem ? by / 1e9 : NAN);
            if (ok || mem)
                cJSON_AddStringToObject(r, "type", mem ? "bytes" : cli_peak_type_name(ty));
            else
                cJSON_AddNullToObject(r, "type");
            JNUM(mem ? "roof_gbytes" : "roof_gflops", roof);
            JNUM("of_roof", frac);
#undef JNUM
            cJSON_AddStringToObject(r, "bound", bound);
            cJSON_AddItemToArray(jrows, r);
            continue;
        }
        char c[6][64];
        cli_fmt_value(c[0], t, 3);
        cli_fmt_value(c[1], ai, 3);
        cli_fmt_value(c[2], ok ? f / 1e9 : 0, 3);
        cli_fmt_value(c[3], by / 1e9, 3);
        for (int i = 1; i < 4; i++)
            if (!ok && !mem)
                strcpy(c[i], "-");
        if (isnan(roof))
            snprintf(c[4], sizeof c[4], "-");
        else if (mem)
            snprintf(c[4], sizeof c[4], "%.1f GB/s", roof);
        else
            snprintf(c[4], sizeof c[4], "%.1f %s", roof, cli_peak_type_name(ty));
        if (isnan(frac))
            strcpy(c[5], "-");
        else
            snprintf(c[5], sizeof c[5], "%.1f%%", 100 * frac);
        cli_buf_printf(b, ROW_FMT, isnan(t) ? "-" : c[0], c[1], c[2], c[3], c[4], c[5], bound,
                       name);
    }
    if (b && !rows)
        cli_buf_printf(b, "note: %s has no kernels\n", p->path);
    if (b && above)
        cli_buf_printf(b, "note: %d row%s above the roof: the static bytes or flops count more than "
                       "ran, or the roofs were measured on a busy machine (--remeasure)\n", above,
                       above == 1 ? " is" : "s are");
}

int
cli_roofline_main(int argc, char **argv)
{
    enum { O_REMEASURE = 256, O_PEAKS, O_CACHE_PATH, O_FORMAT };
    static const struct option opts[] = {{"remeasure", no_argument, 0, O_REMEASURE},
                                          {"peaks", required_argument, 0, O_PEAKS},
                                          {"cache-path", no_argument, 0, O_CACHE_PATH},
                                          {"format", required_argument, 0, O_FORMAT},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *peaks_file = NULL;
    int remeasure = 0, cache_path = 0, json = 0, c, rc = CLI_EXIT_INPUT;
    CliErr e;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_REMEASURE: remeasure = 1; break;
        case O_PEAKS: peaks_file = optarg; break;
        case O_CACHE_PATH: cache_path = 1; break;
        case O_FORMAT:
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0)
                return cli_error("roofline", "unknown format '%s' (text, json)", optarg), 1;
            json = strcmp(optarg, "json") == 0;
            break;
        case 'h': fputs(roofline_usage, stdout); return CLI_EXIT_OK;
        case ':': cli_error("roofline", "option '%s' needs a value", argv[optind - 1]); return 1;
        default: cli_error("roofline", "unknown option '%s' (see --help)", argv[optind - 1]); return 1;
        }
    }
    if (cache_path) {
        char model[256], path[4096];
        machine_model(model, sizeof model);
        if (cli_roof_cache_path(model, machine_threads(), path, sizeof path) != 0)
            return cli_error("roofline", "neither XDG_CACHE_HOME nor HOME is set"), CLI_EXIT_INPUT;
        puts(path);
        return CLI_EXIT_OK;
    }
    CliBuf b = {0};
    cJSON *jall = json ? cJSON_CreateObject() : NULL, *jfiles = NULL;
    CliPeaks pk;
    char note[1024] = "";
    if (optind == argc) {
        int r = cli_roof_peaks_for(NULL, peaks_file, remeasure, &pk, note, sizeof note, &e);
        if (r < 0) {
            cli_error("roofline", "%s", e.msg);
            goto out;
        }
        if (json)
            cJSON_AddItemToObject(jall, "roofs", peaks_json(&pk));
        else
            peaks_text(&pk, &b);
    } else if (json) {
        jfiles = cJSON_AddArrayToObject(jall, "files");
    }
    for (int i = optind; i < argc; i++) {
        CliProfile *p = cli_profile_load_opts(argv[i], 0, &e);
        if (!p) {
            cli_error("roofline", "%s", e.msg);
            goto out;
        }
        int r = cli_roof_peaks_for(p, peaks_file, remeasure, &pk, note, sizeof note, &e);
        if (r < 0) {
            cli_error("roofline", "%s", e.msg);
            cli_profile_destroy(p);
            goto out;
        }
        remeasure = 0; /* once is enough */
        if (json) {
            cJSON *f = cJSON_CreateObject();
            cJSON_AddStringToObject(f, "file", p->path);
            cJSON_AddItemToObject(f, "roofs", r ? peaks_json(&pk) : cJSON_CreateNull());
            if (note[0])
                cJSON_AddStringToObject(f, "note", note);
            render_profile(p, r ? &pk : NULL, note, NULL, cJSON_AddArrayToObject(f, "rows"));
            cJSON_AddItemToArray(jfiles, f);
        } else {
            if (i > optind)
                cli_buf_putc(&b, '\n');
            if (r)
                peaks_text(&pk, &b);
            render_profile(p, r ? &pk : NULL, note, &b, NULL);
        }
        cli_profile_destroy(p);
    }
    if (jall)
        cli_json_print(&b, jall);
    fwrite(b.s ? b.s : "", 1, b.n, stdout);
    rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_INPUT;
out:
    cJSON_Delete(jall);
    cli_buf_fini(&b);
    return rc;
}
