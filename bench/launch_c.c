/*
 * launch_c.c — launch overhead of the runtime (build/bin/tritium-launch-bench).
 *
 * Times rt_launch of an empty kernel: the 1-program inline path, grids of 2/64/1024
 * programs on N threads (fork/join of one OpenMP region), and 1024 programs on one
 * thread (per-program loop cost); first with Proton off, then with kernel capture on
 * (PROTON_KERNEL_CAPTURE=1) when libproton implements it. Prints medians and the
 * 10th/90th percentiles in nanoseconds; asserts nothing.
 *
 *   tritium-launch-bench [samples] [threads]     (defaults 20000, 2)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proton.h"
#include "runtime.h"

static uint64_t sink;

__attribute__((noinline)) static void
empty_kernel(const uint64_t *args, int32_t x, int32_t y, int32_t z, int32_t nx, int32_t ny,
             int32_t nz, void *pctx)
{
    (void)args, (void)x, (void)y, (void)z, (void)nx, (void)ny, (void)nz, (void)pctx;
    __asm__ volatile("" ::: "memory");
}

static inline uint64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void
report(const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("  %-40s median %9.1f ns   p10 %9.1f   p90 %9.1f\n", what, v[n / 2], v[n / 10],
           v[n * 9 / 10]);
}

/* Launches 'batch' times per sample and reports ns per launch. */
static void
measure(const char *what, const int32_t grid[3], int nthreads, int batch, int samples,
        uint32_t site)
{
    uint64_t args[1] = {0};
    double *v = malloc(sizeof *v * (size_t)samples);

    for (int i = 0; i < samples / 10 + 10; i++) /* warm up: pool threads, caches */
        rt_launch(empty_kernel, args, grid, nthreads, site);
    for (int s = 0; s < samples; s++) {
        uint64_t t0 = now_ns();
        for (int b = 0; b < batch; b++)
            rt_launch(empty_kernel, args, grid, nthreads, site);
        v[s] = (double)(now_ns() - t0) / batch;
    }
    report(what, v, samples);
    free(v);
}

/* Direct call through a function pointer, for scale. */
static void
measure_call(int samples)
{
    void (*volatile fn)(const uint64_t *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
                        void *) = empty_kernel;
    double *v = malloc(sizeof *v * (size_t)samples);

    for (int s = 0; s < samples; s++) {
        uint64_t t0 = now_ns();
        for (int b = 0; b < 1000; b++)
            fn(NULL, 0, 0, 0, 1, 1, 1, &sink);
        v[s] = (double)(now_ns() - t0) / 1000;
    }
    report("direct call of the kernel (reference)", v, samples);
    free(v);
}

static void
suite(int samples, int threads, uint32_t site)
{
    static const int32_t one[3] = {1, 1, 1}, two[3] = {2, 1, 1}, p64[3] = {64, 1, 1},
                         p1024[3] = {1024, 1, 1};
    char what[64];

    measure("1 program (inline)", one, 0, 1000, samples / 10, site);
    measure("1024 programs, 1 thread (inline loop)", p1024, 1, 1, samples, site);
    snprintf(what, sizeof what, "2 programs, %d threads", threads);
    measure(what, two, threads, 1, samples, site);
    snprintf(what, sizeof what, "64 programs, %d threads", threads);
    measure(what, p64, threads, 1, samples, site);
    snprintf(what, sizeof what, "1024 programs, %d threads", threads);
    measure(what, p1024, threads, 1, samples, site);
}

int
main(int argc, char **argv)
{
    int samples = argc > 1 ? atoi(argv[1]) : 20000;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    const char *scopes[1] = {NULL};
    PnKernelDesc desc = {.name = "empty_kernel", .scope_names = scopes};
    uint32_t site;

    if (samples < 100)
        samples = 100;
    rt_threads_init();
    printf("tritium-launch-bench: %d samples, OpenMP runtime %s, default %d threads\n", samples,
           rt_threads_runtime(), rt_threads_default());
    printf("Proton off:\n");
    measure_call(samples / 10);
    suite(samples, threads, 0);

    /* kernel capture, as PROTON_KERNEL_CAPTURE=1 would turn it on */
    setenv("PROTON_KERNEL_CAPTURE", "1", 0);
    if (!getenv("PROTON_OUTPUT"))
        setenv("PROTON_OUTPUT", "/tmp/tritium-launch-bench.hatchet", 1);
    if (pn_init() != 0 || !pn_active()) {
        printf("Proton capture: not available (%s)\n", pn_last_error());
        return 0;
    }
    site = pn_kernel_register(&desc);
    printf("Proton kernel capture on (site %u, clock %s):\n", site, pn_clock_source());
    suite(samples, threads, site);
    pn_capture_enable(0);
    pn_capture_reset(); /* do not write a million launches at exit */
    return 0;
}
