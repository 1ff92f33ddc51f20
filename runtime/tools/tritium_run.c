/*
 * tritium_run.c — tritium-run: launches an ahead-of-time kernel (tritium_aot.h) from
 * the command line, with its buffers in files, optionally recording a Proton trace.
 *
 *   tritium-run [-g X[,Y[,Z]]] [-t N] [-r N] [-o trace.json] kernel.json name=value...
 *
 * name=@path   pointer parameter: the file is read into a 64-byte-aligned buffer
 *              and written back after the launches (outputs come back in place)
 * name=zeros:N pointer parameter: N zero bytes, not written anywhere
 * name=value   scalar parameter (integer, float, true/false)
 * Prints one line: the kernel, the grid, the threads and the time per launch.
 * Exit status 0 on success, 1 on a failure (one line on stderr), 2 on bad usage.
 */
#include "tritium_aot.h"

#include "runtime.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct Buffer {
    void *data;
    size_t len;
    const char *path; /* NULL: not written back */
} Buffer;

static int
usage(void)
{
    fprintf(stderr, "usage: tritium-run [-g X[,Y[,Z]]] [-t threads] [-r repeat] [-o trace.json|run.hatchet]\n"
                    "                   kernel.json name=@file | name=zeros:BYTES | name=value ...\n");
    return 2;
}

static int
fail(const char *what)
{
    fprintf(stderr, "tritium-run: %s\n", what);
    return 1;
}

/* Reads 'path' into a new aligned buffer (at least 1 byte). */
static int
read_buffer(const char *path, Buffer *b)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -errno;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    int rc = 0;
    b->len = n > 0 ? (size_t)n : 0;
    b->data = aligned_alloc(64, (b->len + 64) / 64 * 64);
    if (!b->data)
        rc = -ENOMEM;
    else if (b->len && fread(b->data, 1, b->len, f) != b->len)
        rc = -EIO;
    fclose(f);
    b->path = path;
    return rc;
}

static int
write_buffer(const Buffer *b)
{
    FILE *f = fopen(b->path, "wb");
    if (!f)
        return -errno;
    int ok = fwrite(b->data, 1, b->len, f) == b->len;
    return fclose(f) == 0 && ok ? 0 : -EIO;
}

/* Binds one name=value argument; buffers it allocates go to bufs[*nbufs]. */
static int
bind_arg(RtAot *k, const char *arg, Buffer *bufs, int *nbufs)
{
    char name[256];
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof name) {
        fprintf(stderr, "tritium-run: '%s' is not name=value\n", arg);
        return -1;
    }
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    const char *val = eq + 1;
    int i = rt_aot_param_index(k, name);
    if (i < 0)
        return fail(rt_last_error()), -1;
    if (val[0] == '@' || !strncmp(val, "zeros:", 6)) {
        Buffer *b = &bufs[(*nbufs)++];
        int rc;
        if (val[0] == '@') {
            rc = read_buffer(val + 1, b);
        } else {
            char *end;
            unsigned long long n = strtoull(val + 6, &end, 0);
            b->len = (size_t)n;
            b->data = *end ? NULL : calloc(1, b->len + 64);
            rc = b->data ? 0 : -EINVAL;
        }
        if (rc < 0) {
            fprintf(stderr, "tritium-run: %s: %s\n", val, strerror(-rc));
            return -1;
        }
        return rt_aot_bind_ptr(k, i, b->data) < 0 ? (fail(rt_last_error()), -1) : 0;
    }
    return rt_aot_bind_text(k, i, val) < 0 ? (fail(rt_last_error()), -1) : 0;
}

static int
parse_grid(const char *s, int32_t g[3])
{
    g[0] = g[1] = g[2] = 1;
    int n = sscanf(s, "%d,%d,%d", &g[0], &g[1], &g[2]);
    return n >= 1 && g[0] >= 0 && g[1] >= 0 && g[2] >= 0 ? 0 : -1;
}

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {{"grid", required_argument, NULL, 'g'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"repeat", required_argument, NULL, 'r'},
                                         {"trace", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int32_t grid[3];
    int have_grid = 0, threads = 0, repeat = 1, c, rc = 1, nbufs = 0;
    const char *trace = NULL;
    while ((c = getopt_long(argc, argv, "+g:t:r:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'g':
            if (parse_grid(optarg, grid) < 0)
                return usage();
            have_grid = 1;
            break;
        case 't': threads = atoi(optarg); break;
        case 'r': repeat = atoi(optarg); break;
        case 'o': trace = optarg; break;
        default: return usage();
        }
    }
    if (optind >= argc || repeat < 1 || threads < 0)
        return usage();
    RtAot *k;
    if (rt_aot_load(argv[optind], &k) < 0)
        return fail(rt_last_error());
    Buffer *bufs = calloc((size_t)argc, sizeof *bufs);
    for (int a = optind + 1; a < argc; a++)
        if (bind_arg(k, argv[a], bufs, &nbufs) < 0)
            goto out;
    if (!have_grid && rt_aot_grid(k, grid) < 0) {
        fprintf(stderr, "tritium-run: %s; give one with -g X,Y,Z\n", rt_last_error());
        goto out;
    }
    if (trace && rt_aot_trace_begin() < 0) {
        fail(rt_last_error());
        goto out;
    }
    double t0 = now_ms();
    for (int r = 0; r < repeat; r++)
        if (rt_aot_launch(k, grid, threads) < 0) {
            fail(rt_last_error());
            goto out;
        }
    double ms = (now_ms() - t0) / repeat;
    if (trace && rt_aot_trace_write(trace) < 0) {
        fail(rt_last_error());
        goto out;
    }
    for (int b = 0; b < nbufs; b++)
        if (bufs[b].path && write_buffer(&bufs[b]) < 0) {
            fprintf(stderr, "tritium-run: cannot write %s: %s\n", bufs[b].path, strerror(errno));
            goto out;
        }
    printf("%s: grid %dx%dx%d, %d thread%s, %.3f ms per launch\n", rt_aot_name(k), grid[0], grid[1], grid[2],
           threads ? threads : rt_threads_default(), threads == 1 ? "" : "s", ms);
    rc = 0;
out:
    for (int b = 0; b < nbufs; b++)
        free(bufs[b].data);
    free(bufs);
    rt_aot_unload(k);
    return rc;
}
