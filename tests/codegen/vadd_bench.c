/*
 * vadd_bench.c — throughput of a compiled vector-add kernel (.so from cgc) against
 * a plain C loop built with this file's flags (gcc -O3 -march=native), single
 * thread, median of 11 runs; n floats (default 64M: memory bound; 32768 repeated
 * 2048 times is cache resident). Not part of the test suite; usage:
 *   gcc -O3 -march=native tests/codegen/vadd_bench.c -ldl -o vadd_bench
 *   build/tests/codegen/cgc -o /tmp/vadd.so tests/codegen/vadd.mlir && ./vadd_bench /tmp/vadd.so [n]
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*Entry)(const uint64_t *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
                      void *);

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__attribute__((noinline)) static void
c_add(const float *restrict x, const float *restrict y, float *restrict o, long n)
{
    for (long i = 0; i < n; i++)
        o[i] = x[i] + y[i];
}

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    Entry fn = h ? (Entry)(uintptr_t)dlsym(h, "tritium_kernel") : NULL;
    if (!fn) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    const long n = argc > 2 ? atol(argv[2]) : 64l << 20;
    const int block = 1024, runs = 11;
    const int reps = n >= (1l << 22) ? 1 : (int)((64l << 20) / n);
    float *x = aligned_alloc(64, n * 4), *y = aligned_alloc(64, n * 4), *o = aligned_alloc(64, n * 4);
    for (long i = 0; i < n; i++)
        x[i] = (float)i, y[i] = 1.0f, o[i] = 0.0f;
    uint64_t args[4] = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)y, (uint64_t)(uintptr_t)o,
                        (uint32_t)n};
    int nprog = (int)((n + block - 1) / block);
    double tk[11], tc[11];
    for (int r = 0; r < runs; r++) {
        for (int which = 0; which < 2; which++) { /* alternate the order: no bias */
            int kernel = (which + r) % 2 == 0;
            double t0 = now();
            for (int k = 0; k < reps; k++) {
                if (kernel)
                    for (int p = 0; p < nprog; p++)
                        fn(args, p, 0, 0, nprog, 1, 1, NULL);
                else
                    c_add(x, y, o, n);
            }
            (kernel ? tk : tc)[r] = now() - t0;
        }
    }
    for (long i = 0; i < n; i++)
        if (o[i] != x[i] + y[i])
            return 1;
    qsort(tk, runs, sizeof(double), cmp);
    qsort(tc, runs, sizeof(double), cmp);
    double bytes = 3.0 * 4.0 * (double)n * reps;
    printf("kernel .so: %.2f GB/s (median %.1f ms)\n", bytes / tk[runs / 2] * 1e-9, tk[runs / 2] * 1e3);
    printf("C -O3 loop: %.2f GB/s (median %.1f ms)\n", bytes / tc[runs / 2] * 1e-9, tc[runs / 2] * 1e3);
    return 0;
}
