/*
 * cli_peak.c — this machine's roofs, measured: peak FMA GFLOP/s per element type and
 * streaming read GB/s (see cli_peak.h; docs/proton-cli.md `roofline` has the method).
 *
 * FMA peak: every thread runs CHAINS independent accumulator chains of vector FMAs
 * (acc = acc * m + a, which converges instead of overflowing or going subnormal) for a
 * number of steps calibrated to the requested duration; the sum over threads of each
 * one's flops / its thread CPU time, best of the runs. The x86 kernels use intrinsics in functions compiled for
 * their ISA (target attributes) and are picked at run time from cpuid, so the binary
 * needs no -march; elsewhere a scalar fma() loop stands in.
 *
 * Read bandwidth: the threads first touch (and so place) their own slice of a buffer
 * far larger than the last-level cache, then sum it with several accumulators; bytes /
 * wall time of one pass, best of the passes.
 */
#include "cli_peak.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PEAK_X86 1
#endif

#define CHAINS 12

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *
cli_peak_type_name(CliPeakType t)
{
    static const char *const names[] = {"fp32", "fp64", "bf16"};
    return t < CLI_PEAK_NTYPES ? names[t] : "?";
}

/* ---- FMA kernels: each runs 'iters' steps and returns the flops it did ----------------- */

static volatile double sink; /* keeps results live */

typedef double (*FmaKernel)(long iters);

/* The scalar fallback (no x86 vector ISA): fma() / fmaf() chains. */
#define SCALAR_KERNEL(NAME, T, FMA)                                                     \
    static double NAME(long iters)                                                      \
    {                                                                                   \
        T acc[CHAINS], m = (T)0.999999, a = (T)1e-7, s = 0;                             \
        for (int i = 0; i < CHAINS; i++)                                                \
            acc[i] = (T)(i + 1) * (T)1e-3;                                              \
        for (long it = 0; it < iters; it++) {                                           \
            for (int i = 0; i < CHAINS; i++)                                            \
                acc[i] = FMA(acc[i], m, a);                                             \
            __asm__ volatile("" : "+r"(m));                                             \
        }                                                                               \
        for (int i = 0; i < CHAINS; i++)                                                \
            s += acc[i];                                                                \
        sink = s;                                                                       \
        return 2.0 * (double)iters * CHAINS;                                            \
    }

SCALAR_KERNEL(fma_scalar_f32, float, fmaf)
SCALAR_KERNEL(fma_scalar_f64, double, fma)

#ifdef PEAK_X86
/* One kernel per (vector type, FMA intrinsic); LANES is the flops per FMA / 2. The empty
 * asm makes m opaque each step so the chains cannot be folded. */
#define FMA_KERNEL(NAME, TARGET, VT, SET1, FMADD, REDUCE, LANES, CONSTRAINT)            \
    __attribute__((target(TARGET))) static double NAME(long iters)                      \
    {                                                                                   \
        VT acc[CHAINS], m = SET1(0.999999), a = SET1(1e-7);                             \
        for (int i = 0; i < CHAINS; i++)                                                \
            acc[i] = SET1((i + 1) * 1e-3);                                              \
        for (long it = 0; it < iters; it++) {                                           \
            _Pragma("GCC unroll 12") for (int i = 0; i < CHAINS; i++)                  \
                acc[i] = FMADD(acc[i], m, a);                                           \
            __asm__ volatile("" : CONSTRAINT(m));                                       \
        }                                                                               \
        double s = 0;                                                                   \
        for (int i = 0; i < CHAINS; i++)                                                \
            s += REDUCE(acc[i]);                                                        \
        sink = s;                                                                       \
        return 2.0 * (double)iters * CHAINS * LANES;                                    \
    }

#define X_REG(v) "+x"(v)
#define V_REG(v) "+v"(v)

__attribute__((target("avx"))) static double sum256_ps(__m256 v)
{
    float f[8];
    _mm256_storeu_ps(f, v);
    return (double)f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
__attribute__((target("avx"))) static double sum256_pd(__m256d v)
{
    double f[4];
    _mm256_storeu_pd(f, v);
    return f[0] + f[1] + f[2] + f[3];
}

FMA_KERNEL(fma_avx2_f32, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, sum256_ps, 8, X_REG)
FMA_KERNEL(fma_avx2_f64, "avx2,fma", __m256d, _mm256_set1_pd, _mm256_fmadd_pd, sum256_pd, 4, X_REG)
FMA_KERNEL(fma_avx512_f32, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_reduce_add_ps,
           16, V_REG)
FMA_KERNEL(fma_avx512_f64, "avx512f", __m512d, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_reduce_add_pd,
           8, V_REG)

/* vdpbf16ps: per fp32 lane acc += a0*b0 + a1*b1 (two bf16 products) — 4 flops a lane. */
__attribute__((target("avx512f,avx512bf16"))) static double
fma_avx512_bf16(long iters)
{
    __m512 acc[CHAINS];
    __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
    __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(5e-4f));
    for (int i = 0; i < CHAINS; i++)
        acc[i] = _mm512_set1_ps((float)(i + 1) * 1e-3f);
    for (long it = 0; it < iters; it++) {
        _Pragma("GCC unroll 12") for (int i = 0; i < CHAINS; i++)
            acc[i] = _mm512_dpbf16_ps(acc[i], x, y);
        __asm__ volatile("" : "+v"(x));
    }
    double s = 0;
    for (int i = 0; i < CHAINS; i++)
        s += _mm512_reduce_add_ps(acc[i]);
    sink = s;
    return 4.0 * (double)iters * CHAINS * 16;
}

static int
has(const char *feature)
{
    __builtin_cpu_init();
    if (strcmp(feature, "avx512f") == 0)
        return __builtin_cpu_supports("avx512f");
    if (strcmp(feature, "avx2fma") == 0)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (strcmp(feature, "avx512bf16") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
    return 0;
}
#endif

/* The kernel for (t, vec_bytes), or NULL when this CPU has none. */
static FmaKernel
fma_kernel(CliPeakType t, int vec_bytes)
{
#ifdef PEAK_X86
    if (vec_bytes == 64 && has("avx512f"))
        return t == CLI_PEAK_FP32   ? fma_avx512_f32
               : t == CLI_PEAK_FP64 ? fma_avx512_f64
               : has("avx512bf16")  ? fma_avx512_bf16
                                    : NULL;
    if (vec_bytes == 32 && has("avx2fma"))
        return t == CLI_PEAK_FP32 ? fma_avx2_f32 : t == CLI_PEAK_FP64 ? fma_avx2_f64 : NULL;
#endif
    if (vec_bytes == 8 && t != CLI_PEAK_BF16)
        return t == CLI_PEAK_FP32 ? fma_scalar_f32 : fma_scalar_f64;
    return NULL;
}

int
cli_peak_widest(CliPeakType t)
{
    static const int widths[] = {64, 32, 8};
    for (int i = 0; i < 3; i++)
        if (fma_kernel(t, widths[i]))
            return widths[i];
    return 0;
}

/* ---- running a function on N threads at once ----------------------------------------- */

typedef struct Job {
    int *go;
    void (*fn)(struct Job *);
    FmaKernel k;
    long iters;
    const float *p; /* read: this thread's slice */
    size_t n;       /* floats */
    int touch;      /* read: first touch instead of sum */
    double cpu;     /* fma: seconds this thread was on a CPU */
} Job;

static void *
job_main(void *arg)
{
    Job *j = arg;
    while (!__atomic_load_n(j->go, __ATOMIC_ACQUIRE))
        sched_yield();
    j->fn(j);
    return NULL;
}

/* Wall seconds from releasing every thread to the last one finishing; thread 0 runs on
 * the caller. *ran gets how many ran (fewer than n only when a thread cannot start). */
static double
run_threads(Job *jobs, int n, int *ran)
{
    pthread_t tid[256];
    int go = 0, started = 1;
    for (int i = 0; i < n; i++)
        jobs[i].go = &go;
    for (; started < n; started++)
        if (pthread_create(&tid[started], NULL, job_main, &jobs[started]) != 0)
            break;
    double t0 = now();
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    jobs[0].fn(&jobs[0]);
    for (int i = 1; i < started; i++)
        pthread_join(tid[i], NULL);
    *ran = started;
    return now() - t0;
}

static double
thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void
job_fma(Job *j)
{
    double t0 = thread_cpu();
    j->k(j->iters);
    j->cpu = thread_cpu() - t0;
}

double
cli_peak_fma(CliPeakType t, int vec_bytes, int threads, double secs, int reps)
{
    FmaKernel k = fma_kernel(t, vec_bytes ? vec_bytes : cli_peak_widest(t));
    if (!k)
        return 0;
    threads = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    /* calibrate on one thread: double the steps until a run takes >= 5 ms */
    long iters = 1 << 12;
    double t1, flops;
    for (;;) {
        double t0 = now();
        flops = k(iters);
        t1 = now() - t0;
        if (t1 >= 5e-3 || iters > (1L << 40))
            break;
        iters *= 2;
    }
    double per_step = flops / (double)iters; /* one thread */
    iters = (long)((double)iters * secs / (t1 > 0 ? t1 : 1e-3));
    iters = iters < 1024 ? 1024 : iters;
    /* Each thread's rate over the time it was on a CPU, summed: a thread the shared
     * machine kept waiting does not lower the figure (wall time would), and SMT siblings
     * sharing one core's FMA units still do (each one's CPU time runs on). */
    double best = 0;
    Job jobs[256];
    for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
        int ran;
        for (int i = 0; i < threads; i++)
            jobs[i] = (Job){.fn = job_fma, .k = k, .iters = iters};
        double w = run_threads(jobs, threads, &ran), g = 0;
        for (int i = 0; i < ran; i++)
            g += per_step * (double)iters / (jobs[i].cpu > 0 ? jobs[i].cpu : w) / 1e9;
        best = g > best ? g : best;
    }
    return best;
}

/* ---- streaming read -------------------------------------------------------------------- */

#ifdef PEAK_X86
__attribute__((target("avx"))) static double
sum_avx(const float *p, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_load_ps(p + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(p + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(p + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(p + i + 24));
    }
    double s = sum256_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++)
        s += p[i];
    return s;
}
#endif

static double
sum_plain(const float *p, size_t n)
{
    float s[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++)
            s[l] += p[i + l];
    double t = 0;
    for (int l = 0; l < 8; l++)
        t += s[l];
    for (; i < n; i++)
        t += p[i];
    return t;
}

static void
job_read(Job *j)
{
    if (j->touch) {
        memset((void *)j->p, 0, j->n * sizeof(float));
        return;
    }
#ifdef PEAK_X86
    if (__builtin_cpu_supports("avx")) {
        sink = sum_avx(j->p, j->n);
        return;
    }
#endif
    sink = sum_plain(j->p, j->n);
}

size_t
cli_peak_read_bytes(void)
{
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], unit = 0;
        unsigned long v = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fscanf(f, "%lu%c", &v, &unit) >= 1) {
            size_t b = v * (unit == 'K' ? 1024UL : unit == 'M' ? 1048576UL : 1UL);
            best = b > best ? b : best;
        }
        fclose(f);
    }
    size_t want = 4 * best, floor = (size_t)128 << 20;
    return want > floor ? want : floor;
}

double
cli_peak_read(int threads, size_t bytes, int reps)
{
    threads = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    bytes &= ~(size_t)4095;
    float *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return 0;
#ifdef MADV_HUGEPAGE
    madvise(buf, bytes, MADV_HUGEPAGE);
#endif
    size_t n = bytes / sizeof(float), per = (n / (size_t)threads) & ~(size_t)63;
    Job jobs[256];
    double best = 0;
    for (int r = -2; r < (reps < 1 ? 1 : reps); r++) { /* -2: first touch, -1: warm-up */
        for (int i = 0; i < threads; i++)
            jobs[i] = (Job){.fn = job_read, .p = buf + (size_t)i * per, .n = per, .touch = r == -2};
        int ran;
        double w = run_threads(jobs, threads, &ran);
        double g = (double)per * sizeof(float) * ran / w / 1e9;
        if (r >= 0)
            best = g > best ? g : best;
    }
    munmap(buf, bytes);
    return best;
}
