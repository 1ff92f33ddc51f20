/*
 * samples.h — runs the hand-written Linalg samples of tests/codegen (one .mlir file each)
 * through their compiled tritium_kernel entry over a grid with real buffers and
 * compares with a scalar C reference computed in double.
 *
 * Header-only, plain C and libm, so that the host unit test
 * (tests/unit/test_codegen.c) and the RISC-V harness run under qemu
 * (tests/codegen/rv_harness.c) share it. Each runner returns 0 when the kernel
 * matched, else -1 with a message in msg. Output buffers carry guard elements
 * around the valid region that a masked kernel must leave untouched.
 */
#ifndef CGT_SAMPLES_H
#define CGT_SAMPLES_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*CgtEntry)(const uint64_t *args, int32_t pid_x, int32_t pid_y, int32_t pid_z,
                         int32_t num_x, int32_t num_y, int32_t num_z, void *pctx);

typedef struct CgtSample {
    const char *name;     /* file tests/codegen/<name>.mlir */
    const char *vec_need; /* what the x86 assembly must contain ("" for no check) */
    int (*run)(CgtEntry fn, char *msg, size_t cap);
} CgtSample;

#define CGT_GUARD 12345.0f

static uint64_t
cgt_ptr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static uint64_t
cgt_i32(int32_t v)
{
    return (uint64_t)(uint32_t)v;
}

static void
cgt_grid(CgtEntry fn, const uint64_t *args, int nx, int ny)
{
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++)
            fn(args, x, y, 0, nx, ny, 1, NULL);
}

/* deterministic values in [lo, hi) */
static void
cgt_fill(float *p, size_t n, uint32_t seed, float lo, float hi)
{
    uint32_t s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = lo + (hi - lo) * (float)(s >> 8) / 16777216.0f;
    }
}

static float *
cgt_buf(size_t n, float v)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = v;
    return p;
}

/* |got - want| <= atol + rtol |want| */
static int
cgt_close(float got, double want, double rtol, double atol)
{
    return fabs((double)got - want) <= atol + rtol * fabs(want);
}

#define CGT_FAIL(...)                                                                            \
    do {                                                                                         \
        snprintf(msg, cap, __VA_ARGS__);                                                         \
        rc = -1;                                                                                 \
        goto out;                                                                                \
    } while (0)

/* ---- vadd: out = x + y, masked 1-D blocks of 1024 --------------------------------- */

static int
cgt_run_vadd(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, n = 10007, block = 1024;
    float *x = cgt_buf(n, 0), *y = cgt_buf(n, 0), *o = cgt_buf(n + 64, CGT_GUARD);
    cgt_fill(x, n, 1, -10, 10);
    cgt_fill(y, n, 2, -10, 10);
    uint64_t args[4] = {cgt_ptr(x), cgt_ptr(y), cgt_ptr(o), cgt_i32(n)};
    cgt_grid(fn, args, (n + block - 1) / block, 1);
    for (int i = 0; i < n; i++)
        if (o[i] != x[i] + y[i])
            CGT_FAIL("vadd: out[%d] = %g, want %g", i, o[i], x[i] + y[i]);
    for (int i = n; i < n + 64; i++)
        if (o[i] != CGT_GUARD)
            CGT_FAIL("vadd: guard out[%d] overwritten", i);
out:
    free(x), free(y), free(o);
    return rc;
}

/* ---- gelu: exact (erf), tanh and sigmoid (exp) forms -------------------------------- */

static int
cgt_run_gelu(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, n = 5003, block = 512;
    float *x = cgt_buf(n, 0);
    float *o[3] = {cgt_buf(n + 16, CGT_GUARD), cgt_buf(n + 16, CGT_GUARD), cgt_buf(n + 16, CGT_GUARD)};
    cgt_fill(x, n, 3, -6, 6);
    x[0] = 0.0f, x[1] = -0.0f, x[2] = 1e-20f, x[3] = -30.0f, x[4] = 30.0f;
    uint64_t args[5] = {cgt_ptr(x), cgt_ptr(o[0]), cgt_ptr(o[1]), cgt_ptr(o[2]), cgt_i32(n)};
    cgt_grid(fn, args, (n + block - 1) / block, 1);
    for (int i = 0; i < n; i++) {
        double v = x[i];
        double want[3] = {0.5 * v * (1.0 + erf(v * 0.7071067811865476)),
                          0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))),
                          v / (1.0 + exp(-1.702 * v))};
        /* erf form: 1 + erf cancels for x < -3, so its absolute error is erf's (a
         * few ulp of 1, ~1.2e-7) times 0.5 |x| */
        double atol[3] = {1e-7 + 1.2e-7 * 0.5 * fabs(v), 1e-7, 1e-7};
        for (int k = 0; k < 3; k++)
            if (!cgt_close(o[k][i], want[k], 2e-6, atol[k]))
                CGT_FAIL("gelu: out%d[%d] (x=%g) = %.9g, want %.9g", k, i, v, o[k][i], want[k]);
    }
    for (int k = 0; k < 3; k++)
        for (int i = n; i < n + 16; i++)
            if (o[k][i] != CGT_GUARD)
                CGT_FAIL("gelu: guard out%d[%d] overwritten", k, i);
out:
    free(x), free(o[0]), free(o[1]), free(o[2]);
    return rc;
}

/* ---- bcast2d: out[i, j] = x[i] + y[j], masked 32x64 tiles --------------------------- */

static int
cgt_run_bcast2d(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, m = 70, n = 100, ldo = 104;
    float *x = cgt_buf(m, 0), *y = cgt_buf(n, 0), *o = cgt_buf((size_t)m * ldo + 64, CGT_GUARD);
    cgt_fill(x, m, 4, -1, 1);
    cgt_fill(y, n, 5, -1, 1);
    uint64_t args[6] = {cgt_ptr(x), cgt_ptr(y), cgt_ptr(o), cgt_i32(m), cgt_i32(n), cgt_i32(ldo)};
    cgt_grid(fn, args, (n + 63) / 64, (m + 31) / 32);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldo; j++) {
            float want = j < n ? x[i] + y[j] : CGT_GUARD;
            if (o[(size_t)i * ldo + j] != want)
                CGT_FAIL("bcast2d: out[%d,%d] = %g, want %g", i, j, o[(size_t)i * ldo + j], want);
        }
out:
    free(x), free(y), free(o);
    return rc;
}

/* ---- rowsum: out[r] = sum_j x[r * ld + j], 16x128 tiles ------------------------------ */

static int
cgt_run_rowsum(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, rows = 64, cols = 128, ld = 131;
    float *x = cgt_buf((size_t)rows * ld, 0), *o = cgt_buf(rows + 16, CGT_GUARD);
    cgt_fill(x, (size_t)rows * ld, 6, -1, 1);
    uint64_t args[3] = {cgt_ptr(x), cgt_ptr(o), cgt_i32(ld)};
    cgt_grid(fn, args, rows / 16, 1);
    for (int r = 0; r < rows; r++) {
        double want = 0;
        for (int j = 0; j < cols; j++)
            want += x[(size_t)r * ld + j];
        if (!cgt_close(o[r], want, 1e-5, 1e-5))
            CGT_FAIL("rowsum: out[%d] = %.9g, want %.9g", r, o[r], want);
    }
    for (int r = rows; r < rows + 16; r++)
        if (o[r] != CGT_GUARD)
            CGT_FAIL("rowsum: guard out[%d] overwritten", r);
out:
    free(x), free(o);
    return rc;
}

/* ---- fullsum: out[pid] = sum of a masked block of 1024 -------------------------------- */

static int
cgt_run_fullsum(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, n = 5000, block = 1024, nb = (n + block - 1) / block;
    float *x = cgt_buf(n + 1024, 1e30f), *o = cgt_buf(nb + 16, CGT_GUARD);
    cgt_fill(x, n, 7, -1, 1);
    uint64_t args[3] = {cgt_ptr(x), cgt_ptr(o), cgt_i32(n)};
    cgt_grid(fn, args, nb, 1);
    for (int b = 0; b < nb; b++) {
        double want = 0;
        for (int i = b * block; i < n && i < (b + 1) * block; i++)
            want += x[i];
        if (!cgt_close(o[b], want, 1e-5, 1e-4))
            CGT_FAIL("fullsum: out[%d] = %.9g, want %.9g", b, o[b], want);
    }
    for (int b = nb; b < nb + 16; b++)
        if (o[b] != CGT_GUARD)
            CGT_FAIL("fullsum: guard out[%d] overwritten", b);
out:
    free(x), free(o);
    return rc;
}

/* ---- strided2d: out[i * so + j] = 2 x[i * sx0 + j * sx1] + i, masked 16x32 tiles ------- */

static int
cgt_run_strided2d(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, m = 37, n = 45, so = 48, sx0 = 1, sx1 = 37; /* x column-major */
    float *x = cgt_buf((size_t)m * n, 0), *o = cgt_buf((size_t)m * so + 64, CGT_GUARD);
    cgt_fill(x, (size_t)m * n, 8, -4, 4);
    uint64_t args[7] = {cgt_ptr(x), cgt_ptr(o), cgt_i32(m), cgt_i32(n),
                        cgt_i32(sx0), cgt_i32(sx1), cgt_i32(so)};
    cgt_grid(fn, args, (n + 31) / 32, (m + 15) / 16);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < so; j++) {
            float want = j < n ? 2.0f * x[(size_t)i * sx0 + (size_t)j * sx1] + (float)i : CGT_GUARD;
            if (o[(size_t)i * so + j] != want)
                CGT_FAIL("strided2d: out[%d,%d] = %g, want %g", i, j, o[(size_t)i * so + j], want);
        }
out:
    free(x), free(o);
    return rc;
}

/* ---- matmul: C = A B, 32x32 tiles, K = 64 ------------------------------------------------ */

static int
cgt_run_matmul(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, M = 64, N = 64, K = 64, lda = 67, ldb = 69, ldc = 65;
    float *a = cgt_buf((size_t)M * lda, 0), *b = cgt_buf((size_t)K * ldb, 0);
    float *c = cgt_buf((size_t)M * ldc, CGT_GUARD);
    cgt_fill(a, (size_t)M * lda, 9, -1, 1);
    cgt_fill(b, (size_t)K * ldb, 10, -1, 1);
    uint64_t args[6] = {cgt_ptr(a), cgt_ptr(b), cgt_ptr(c), cgt_i32(lda), cgt_i32(ldb), cgt_i32(ldc)};
    cgt_grid(fn, args, N / 32, M / 32);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < ldc; j++) {
            double want = CGT_GUARD;
            if (j < N) {
                want = 0;
                for (int k = 0; k < K; k++)
                    want += (double)a[(size_t)i * lda + k] * b[(size_t)k * ldb + j];
            }
            if (!cgt_close(c[(size_t)i * ldc + j], want, 1e-5, 1e-5))
                CGT_FAIL("matmul: C[%d,%d] = %.9g, want %.9g", i, j, c[(size_t)i * ldc + j], want);
        }
out:
    free(a), free(b), free(c);
    return rc;
}

/* ---- matmul_loop: C = A B with the K loop in the kernel (K = 80) ------------------------- */

static int
cgt_run_matmul_loop(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, M = 64, N = 96, K = 80, lda = 83, ldb = 99, ldc = 97;
    float *a = cgt_buf((size_t)M * lda, 0), *b = cgt_buf((size_t)K * ldb, 0);
    float *c = cgt_buf((size_t)M * ldc, CGT_GUARD);
    cgt_fill(a, (size_t)M * lda, 11, -1, 1);
    cgt_fill(b, (size_t)K * ldb, 12, -1, 1);
    uint64_t args[7] = {cgt_ptr(a), cgt_ptr(b), cgt_ptr(c), cgt_i32(K),
                        cgt_i32(lda), cgt_i32(ldb), cgt_i32(ldc)};
    cgt_grid(fn, args, N / 32, M / 32);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < ldc; j++) {
            double want = CGT_GUARD;
            if (j < N) {
                want = 0;
                for (int k = 0; k < K; k++)
                    want += (double)a[(size_t)i * lda + k] * b[(size_t)k * ldb + j];
            }
            if (!cgt_close(c[(size_t)i * ldc + j], want, 1e-5, 1e-5))
                CGT_FAIL("matmul_loop: C[%d,%d] = %.9g, want %.9g", i, j, c[(size_t)i * ldc + j],
                         want);
        }
out:
    free(a), free(b), free(c);
    return rc;
}

/* ---- f64math: libm calls for f64 math ------------------------------------------------------ */

static int
cgt_run_f64math(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, n = 1000;
    double *x = malloc((size_t)n * sizeof *x), *o = malloc((size_t)(n + 8) * sizeof *o);
    for (int i = 0; i < n; i++)
        x[i] = -5.0 + 10.0 * i / n;
    for (int i = 0; i < n + 8; i++)
        o[i] = CGT_GUARD;
    uint64_t args[3] = {cgt_ptr(x), cgt_ptr(o), cgt_i32(n)};
    cgt_grid(fn, args, (n + 255) / 256, 1);
    for (int i = 0; i < n; i++) {
        double v = x[i];
        double want = exp(v) + erf(v) + tanh(v) + sin(v) + atan2(v, 2.0) + pow(fabs(v), 1.5);
        if (fabs(o[i] - want) > 1e-12 * (1 + fabs(want)))
            CGT_FAIL("f64math: out[%d] (x=%g) = %.17g, want %.17g", i, v, o[i], want);
    }
    for (int i = n; i < n + 8; i++)
        if (o[i] != CGT_GUARD)
            CGT_FAIL("f64math: guard out[%d] overwritten", i);
out:
    free(x), free(o);
    return rc;
}

/* ---- reductions: row sum of squares, row max, row argmax of an 8x256 tile ------------------ */

static int
cgt_run_reductions(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, rows = 8, cols = 256;
    float *x = cgt_buf((size_t)rows * cols, 0), *sq = cgt_buf(rows, 0), *mx = cgt_buf(rows, 0);
    float *cs = cgt_buf(cols, 0);
    int32_t am[8];
    cgt_fill(x, (size_t)rows * cols, 15, -3, 3);
    uint64_t args[5] = {cgt_ptr(x), cgt_ptr(sq), cgt_ptr(mx), cgt_ptr(am), cgt_ptr(cs)};
    cgt_grid(fn, args, 1, 1);
    for (int j = 0; j < cols; j++) {
        double s = 0;
        for (int r = 0; r < rows; r++)
            s += x[(size_t)r * cols + j];
        if (!cgt_close(cs[j], s, 1e-5, 1e-5))
            CGT_FAIL("reductions: colsum[%d] = %.9g, want %.9g", j, cs[j], s);
    }
    for (int r = 0; r < rows; r++) {
        double s = 0;
        float m = -INFINITY;
        int a = 0;
        for (int j = 0; j < cols; j++) {
            float v = x[(size_t)r * cols + j];
            s += (double)v * v;
            if (v > m)
                m = v, a = j;
        }
        if (!cgt_close(sq[r], s, 1e-5, 1e-5))
            CGT_FAIL("reductions: sumsq[%d] = %.9g, want %.9g", r, sq[r], s);
        if (mx[r] != m)
            CGT_FAIL("reductions: max[%d] = %g, want %g", r, mx[r], m);
        if (am[r] != a)
            CGT_FAIL("reductions: argmax[%d] = %d, want %d", r, am[r], a);
    }
out:
    free(x), free(sq), free(mx), free(cs);
    return rc;
}

/* ---- trig: sin and cos, ordinary and huge arguments ---------------------------------- */

static int
cgt_run_trig(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, n = 3001, block = 512;
    float *x = cgt_buf(n, 0);
    float *o[2] = {cgt_buf(n + 16, CGT_GUARD), cgt_buf(n + 16, CGT_GUARD)};
    cgt_fill(x, n, 5, -100, 100);
    /* the first 1024 lanes all huge (every vector takes the cold region), then
     * one huge lane in every 37 (some vectors do), the rest ordinary (skipped) */
    for (int i = 0; i < n; i++)
        if (i < 1024 || i % 37 == 0)
            x[i] = ldexpf(x[i] / 100.0f + 1.5f, 17 + (i * 7) % 110) * (i & 1 ? -1.0f : 1.0f);
    uint64_t args[4] = {cgt_ptr(x), cgt_ptr(o[0]), cgt_ptr(o[1]), cgt_i32(n)};
    cgt_grid(fn, args, (n + block - 1) / block, 1);
    for (int i = 0; i < n; i++) {
        double want[2] = {sin((double)x[i]), cos((double)x[i])};
        for (int k = 0; k < 2; k++)
            if (!cgt_close(o[k][i], want[k], 0, 5e-7))
                CGT_FAIL("trig: out%d[%d] (x=%g) = %.9g, want %.9g", k, i, x[i], o[k][i], want[k]);
    }
    for (int k = 0; k < 2; k++)
        for (int i = n; i < n + 16; i++)
            if (o[k][i] != CGT_GUARD)
                CGT_FAIL("trig: guard out%d[%d] overwritten", k, i);
out:
    free(x), free(o[0]), free(o[1]);
    return rc;
}

/* ---- par: rows 1, 3, ... < stop of a 16x32 array, in an smt.parallel loop ------------ */

static int
cgt_run_par(CgtEntry fn, char *msg, size_t cap)
{
    int rc = 0, rows = 16, cols = 32, K = 3, stop = 15;
    float *x = cgt_buf((size_t)rows * cols, 0), *o = cgt_buf((size_t)rows * cols, CGT_GUARD);
    cgt_fill(x, (size_t)rows * cols, 11, -1, 1);
    uint64_t args[4] = {cgt_ptr(x), cgt_ptr(o), cgt_i32(K), cgt_i32(stop)};
    cgt_grid(fn, args, 1, 1);
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        for (int j = 0; j < cols; j++)
            sum += x[r * cols + j];
        for (int j = 0; j < cols; j++) {
            int in = r % 2 == 1 && r < stop;
            double want = in ? (K - 1) * (double)x[r * cols + j] + sum : CGT_GUARD;
            if (!cgt_close(o[r * cols + j], want, 1e-5, 1e-5))
                CGT_FAIL("par: out[%d,%d] = %.9g, want %.9g", r, j, o[r * cols + j], want);
        }
    }
out:
    free(x), free(o);
    return rc;
}

static const CgtSample cgt_samples[] = {
    {"vadd", "vec", cgt_run_vadd},
    {"gelu", "vec", cgt_run_gelu},
    {"trig", "vec", cgt_run_trig},
    {"bcast2d", "vec", cgt_run_bcast2d},
    {"rowsum", "vec", cgt_run_rowsum},
    {"fullsum", "vec", cgt_run_fullsum},
    {"reductions", "vec", cgt_run_reductions},
    {"strided2d", "", cgt_run_strided2d},
    {"matmul", "fma", cgt_run_matmul},
    {"matmul_loop", "fma", cgt_run_matmul_loop},
    {"f64math", "", cgt_run_f64math},
    {"par", "vec", cgt_run_par},
};
#define CGT_NSAMPLES ((int)(sizeof cgt_samples / sizeof cgt_samples[0]))

static const CgtSample *
cgt_sample(const char *name)
{
    for (int i = 0; i < CGT_NSAMPLES; i++)
        if (strcmp(cgt_samples[i].name, name) == 0)
            return &cgt_samples[i];
    return NULL;
}

#endif /* CGT_SAMPLES_H */
