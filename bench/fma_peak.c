/*
 * fma_peak.c — the machine's measured FMA peak, for bench_matmul.py: GFLOP/s of
 * independent vector FMA chains (enough accumulators to hide the latency) per
 * element type, on one thread and on every thread (OpenMP), for the vector widths
 * the compiler may use (64-byte vectors only where the CPU has them).
 *
 * Built by the benchmark with the host compiler (-O2 -march=native -fopenmp);
 * prints one line per measurement: "<dtype> <vector bytes> <threads> <GFLOP/s>".
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHAINS 12
#define ITERS 20000000L

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* FMAs of one thread over 'iters' steps of CHAINS independent chains; returns
 * the flops done (2 per lane per FMA). The result is written so it is not dead. */
#define KERNEL(NAME, T, BYTES)                                                        \
    typedef T NAME##_v __attribute__((vector_size(BYTES)));                           \
    static double NAME(long iters, volatile T *sink)                                 \
    {                                                                                 \
        NAME##_v acc[CHAINS], m, a;                                                   \
        for (int i = 0; i < CHAINS; i++)                                              \
            acc[i] = (NAME##_v){0} + (T)(i + 1) * (T)1e-3;                            \
        m = (NAME##_v){0} + (T)0.999999;                                              \
        a = (NAME##_v){0} + (T)1e-7;                                                  \
        for (long it = 0; it < iters; it++) {                                         \
            _Pragma("GCC unroll 12") for (int i = 0; i < CHAINS; i++)                \
                acc[i] = acc[i] * m + a;                                              \
            __asm__ volatile("" : "+x"(m));                                           \
        }                                                                             \
        T s = 0;                                                                      \
        for (int i = 0; i < CHAINS; i++)                                              \
            for (int l = 0; l < (int)(BYTES / sizeof(T)); l++)                        \
                s += acc[i][l];                                                       \
        *sink = s;                                                                    \
        return 2.0 * (double)iters * CHAINS * (double)(BYTES / sizeof(T));            \
    }

KERNEL(f32_32, float, 32)
KERNEL(f64_32, double, 32)
#ifdef __AVX512F__
KERNEL(f32_64, float, 64)
KERNEL(f64_64, double, 64)
#endif

typedef double (*Kern)(long, volatile void *);

static void
measure(const char *dtype, int bytes, double (*k)(long, volatile void *))
{
    int nt = omp_get_max_threads();
    for (int threads = 1; threads <= nt; threads = threads == nt ? nt + 1 : nt) {
        double best = 0;
        for (int rep = 0; rep < 3; rep++) {
            double flops = 0, t0 = now();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
            {
                double sink;
                flops += k(ITERS / 4, &sink);
            }
            double g = flops / (now() - t0) / 1e9;
            if (g > best)
                best = g;
        }
        printf("%s %d %d %.1f\n", dtype, bytes, threads, best);
        fflush(stdout);
    }
}

int
main(void)
{
    measure("fp32", 32, (double (*)(long, volatile void *))f32_32);
    measure("fp64", 32, (double (*)(long, volatile void *))f64_32);
#ifdef __AVX512F__
    measure("fp32", 64, (double (*)(long, volatile void *))f32_64);
    measure("fp64", 64, (double (*)(long, volatile void *))f64_64);
#endif
    return 0;
}
