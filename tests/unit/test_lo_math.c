/*
 * test_lo_math.c — accuracy of the lo_math_emit f32 expansions: each function is
 * emitted into a linalg.generic over a 1-D buffer, compiled with cg_compile for
 * the host, run on sampled inputs plus special values, and compared with libm's
 * double-precision result (error in ulps of the correctly rounded f32 result).
 * Targets: <= 2 ulp for exp, exp2, log, log2; <= 4 ulp for the rest. Special
 * cases (zeros with their sign, infinities, NaN) must match exactly. Prints the
 * maximum error per function.
 */
#include "codegen.h"
#include "lo_int.h"

#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

typedef void (*Entry)(const uint64_t *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
                      void *);

typedef struct MathCase {
    const char *name;
    IrOpc op;
    int nargs;
    double (*ref1)(double);
    double (*ref2)(double, double);
    double max_ulp;
} MathCase;

static char tmpdir[256];
static uint32_t rng = 12345;

static uint32_t
next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static float
uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)(next_u32() >> 8) / 16777216.0f;
}

/* a random float with any exponent (finite), positive */
static float
any_positive(void)
{
    uint32_t u;
    do
        u = next_u32() & 0x7fffffffu;
    while (u >= 0x7f800000u);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- compile one function ---------------------------------------------------------- */

static char *
module_for(const MathCase *c, size_t *len)
{
    LoBuf b;
    lo_buf_init(&b);
    b.next = 10;
    int bin = c->nargs == 2;
    lo_printf(&b, "func.func @m(%%a0: memref<?xf32>, %%a1: memref<?xf32>, %%a2: memref<?xf32>, "
                  "%%n: i32, %%px: i32, %%py: i32, %%pz: i32, %%nx: i32, %%ny: i32, %%nz: i32, "
                  "%%pctx: !llvm.ptr) {\n"
                  "  %%ni = arith.index_cast %%n : i32 to index\n");
    const char *vt = "memref<?xf32, strided<[1], offset: ?>>";
    for (int i = 0; i < 3; i++)
        lo_printf(&b, "  %%m%d = memref.reinterpret_cast %%a%d to offset: [0], sizes: [%%ni], "
                      "strides: [1] : memref<?xf32> to %s\n"
                      "  %%t%d = bufferization.to_tensor %%m%d restrict%s : %s\n",
                  i, i, vt, i, i, i == 2 ? " writable" : "", vt);
    const char *id = "affine_map<(d0) -> (d0)>";
    lo_printf(&b, "  %%r = linalg.generic {indexing_maps = [%s, %s%s%s], iterator_types = "
                  "[\"parallel\"]} ins(%%t0%s : tensor<?xf32>%s) outs(%%t2 : tensor<?xf32>) "
                  "attrs = {tritium.kind = \"elementwise\", tritium.tile = [8]} {\n"
                  "  ^bb0(%%v1: f32, %s%%o: f32):\n",
              id, id, bin ? ", " : "", bin ? id : "", bin ? ", %t1" : "",
              bin ? ", tensor<?xf32>" : "", bin ? "%v2: f32, " : "");
    b.indent = 4;
    unsigned args[2] = {1, 2};
    unsigned r = lo_math_emit(&b, c->op, args, c->nargs, "f32");
    assert_int_not_equal(r, 0);
    lo_printf(&b, "    linalg.yield %%v%u : f32\n  } -> tensor<?xf32>\n"
                  "  bufferization.materialize_in_destination %%r in restrict writable %%m2 : "
                  "(tensor<?xf32>, %s) -> ()\n  return\n}\n",
              r, vt);
    char *t = lo_buf_take(&b, len);
    lo_buf_fini(&b);
    return t;
}

static void *
compile_case(const MathCase *c, Entry *fn)
{
    size_t len;
    char *text = module_for(c, &len);
    CgOptions o = {.opt_level = 3};
    unsetenv("SPINE_TRITON_TARGET_ARCH");
    cg_host_target(&o.target);
    char so[512];
    snprintf(so, sizeof so, "%s/%s.so", tmpdir, c->name);
    CgResult res;
    int rc = cg_compile(text, len, &o, so, &res);
    if (rc)
        fprintf(stderr, "%s: %s\n", c->name, res.error);
    assert_int_equal(rc, 0);
    cg_result_fini(&res);
    free(text);
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    *fn = (Entry)(uintptr_t)dlsym(h, CG_ENTRY_SYMBOL);
    assert_non_null(*fn);
    unlink(so);
    return h;
}

/* ---- error measure ----------------------------------------------------------------- */

/* Error of 'got' in ulps of the f32 result nearest 'want'; 0 for exact special
 * agreement, INFINITY on a special-case mismatch. */
static double
ulp_error(float got, double want)
{
    if (isnan(want))
        return isnan(got) ? 0 : INFINITY;
    float wf = (float)want;
    if (isinf(wf) || wf == 0.0f || isinf(got) || isnan(got)) {
        if (got == wf && signbit(got) == signbit(wf))
            return 0;
        if (!isinf(wf) && !isinf(got) && !isnan(got) && wf == 0.0f && fabs((double)got) < 0x1p-148)
            return got == 0.0f && signbit(got) != signbit(wf) ? INFINITY : 1;
        return INFINITY;
    }
    double aw = fabs((double)wf);
    double ulp = aw < 0x1p-126 ? 0x1p-149 : ldexp(1.0, ilogb(aw) - 23);
    return fabs((double)got - want) / ulp;
}

typedef struct Inputs {
    float *x, *y;
    int n, cap;
} Inputs;

static void
add_input(Inputs *in, float x, float y)
{
    if (in->n == in->cap) {
        in->cap = in->cap ? 2 * in->cap : 1024;
        in->x = realloc(in->x, (size_t)in->cap * sizeof(float));
        in->y = realloc(in->y, (size_t)in->cap * sizeof(float));
    }
    in->x[in->n] = x;
    in->y[in->n++] = y;
}

static const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, INFINITY,
                                 -INFINITY, NAN, FLT_MIN, -FLT_MIN, 1e-40f, -1e-40f, FLT_MAX,
                                 -FLT_MAX, 1e-30f, -1e-30f, 3.0f, 10.0f, -10.0f, 100.0f, -100.0f,
                                 88.7f, -88.7f, 89.0f, -104.0f, 1e-8f, -1e-8f};

/* the function's domain samples: n uniform in [lo, hi] plus any-exponent values */
static void
sample_range(Inputs *in, int n, float lo, float hi)
{
    for (int i = 0; i < n; i++)
        add_input(in, uniform(lo, hi), 0);
}

static void
sample_any(Inputs *in, int n, int sign)
{
    for (int i = 0; i < n; i++) {
        float v = any_positive();
        add_input(in, sign && (next_u32() & 1) ? -v : v, 0);
    }
}

/* the special values, finite ones only up to 'limit' in magnitude */
static void
add_specials(Inputs *in, float limit)
{
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++)
        if (!isfinite(specials[i]) || fabsf(specials[i]) <= limit)
            add_input(in, specials[i], 0);
}

/* Runs fn on in, returns the max error (ulps) and reports the worst input. */
static double
measure(const MathCase *c, Entry fn, const Inputs *in, int *worst)
{
    float *out = malloc((size_t)in->n * sizeof(float));
    uint64_t args[4] = {(uint64_t)(uintptr_t)in->x, (uint64_t)(uintptr_t)in->y,
                        (uint64_t)(uintptr_t)out, (uint32_t)in->n};
    fn(args, 0, 0, 0, 1, 1, 1, NULL);
    double max = 0;
    *worst = 0;
    for (int i = 0; i < in->n; i++) {
        double want = c->nargs == 2 ? c->ref2(in->x[i], in->y[i]) : c->ref1(in->x[i]);
        double e = ulp_error(out[i], want);
        if (!(e <= max)) {
            max = e;
            *worst = i;
        }
    }
    if (max > c->max_ulp) {
        int i = *worst;
        double want = c->nargs == 2 ? c->ref2(in->x[i], in->y[i]) : c->ref1(in->x[i]);
        fprintf(stderr, "%s(%.9g%s%.9g) = %.9g, want %.9g\n", c->name, in->x[i],
                c->nargs == 2 ? ", " : "", c->nargs == 2 ? in->y[i] : 0.0, out[i], want);
    }
    free(out);
    return max;
}

/* ---- the cases ------------------------------------------------------------------------ */

static double r_pow(double x, double y) { return pow(x, y); }

static void
fill_inputs(const MathCase *c, Inputs *in)
{
    const char *n = c->name;
    int trig = !strcmp(n, "sin") || !strcmp(n, "cos") || !strcmp(n, "tan");
    add_specials(in, FLT_MAX);
    if (!strcmp(n, "exp") || !strcmp(n, "expm1")) {
        sample_range(in, 100000, -104, 89);
        sample_range(in, 20000, -1, 1);
        sample_range(in, 20000, -1e-3f, 1e-3f);
    } else if (!strcmp(n, "exp2")) {
        sample_range(in, 100000, -151, 128);
        sample_range(in, 20000, -1, 1);
    } else if (!strncmp(n, "log", 3) && strcmp(n, "log1p") != 0) {
        sample_any(in, 100000, 0);
        sample_range(in, 50000, 0.5f, 2.0f);
    } else if (!strcmp(n, "log1p")) {
        sample_range(in, 50000, -0.999999f, 1);
        sample_range(in, 20000, -1e-4f, 1e-4f);
        sample_any(in, 50000, 0);
    } else if (trig) { /* both reductions: Cody-Waite below 2^16, Payne-Hanek above */
        sample_range(in, 100000, -1e5f, 1e5f);
        sample_range(in, 50000, -4, 4);
        sample_range(in, 20000, -1e-3f, 1e-3f);
        sample_range(in, 20000, 6e4f, 7e4f);
        sample_any(in, 100000, 1);
    } else if (!strcmp(n, "tanh") || !strcmp(n, "erf")) {
        sample_range(in, 100000, -10, 10);
        sample_range(in, 20000, -1, 1);
        sample_range(in, 20000, -1e-3f, 1e-3f);
    } else if (!strcmp(n, "asin") || !strcmp(n, "acos") || !strcmp(n, "atanh")) {
        sample_range(in, 100000, -1, 1);
        sample_range(in, 20000, -1e-3f, 1e-3f);
        sample_range(in, 20000, 0.999f, 1);
    } else if (!strcmp(n, "sinh") || !strcmp(n, "cosh")) {
        sample_range(in, 100000, -89.5f, 89.5f);
        sample_range(in, 20000, -1.5f, 1.5f);
        sample_range(in, 20000, -1e-3f, 1e-3f);
    } else if (!strcmp(n, "acosh")) {
        sample_range(in, 50000, 1, 2);
        sample_range(in, 50000, 1, 1e4f);
        sample_any(in, 50000, 0);
    } else if (!strcmp(n, "powf")) {
        for (int i = 0; i < 150000; i++)
            add_input(in, uniform(0, 20), uniform(-30, 30));
        for (int i = 0; i < 20000; i++) /* negative bases, integer exponents */
            add_input(in, uniform(-20, 0), (float)((int)uniform(-25, 25)));
        for (int i = 0; i < 20000; i++)
            add_input(in, uniform(0.9f, 1.1f), uniform(-1000, 1000));
        static const float sx[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, INFINITY,
                                   -INFINITY, NAN, 1e-40f};
        static const float sy[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, 3.0f, -3.0f, 0.5f, -0.5f,
                                   INFINITY, -INFINITY, NAN, 128.0f, -150.0f};
        for (size_t i = 0; i < sizeof sx / sizeof *sx; i++)
            for (size_t j = 0; j < sizeof sy / sizeof *sy; j++)
                add_input(in, sx[i], sy[j]);
    } else if (!strcmp(n, "atan2")) {
        for (int i = 0; i < 150000; i++)
            add_input(in, uniform(-100, 100), uniform(-100, 100));
        for (int i = 0; i < 20000; i++)
            add_input(in, any_positive() * ((next_u32() & 1) ? 1 : -1),
                      any_positive() * ((next_u32() & 1) ? 1 : -1));
        static const float s[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN};
        for (size_t i = 0; i < 7; i++)
            for (size_t j = 0; j < 7; j++)
                add_input(in, s[i], s[j]);
    } else { /* atan, asinh, cbrt: everything */
        sample_any(in, 100000, 1);
        sample_range(in, 50000, -4, 4);
    }
}

static const MathCase cases[] = {
    {"exp", IR_EXP, 1, exp, NULL, 2},       {"exp2", IR_EXP2, 1, exp2, NULL, 2},
    {"expm1", IR_EXPM1, 1, expm1, NULL, 4}, {"log", IR_LOG, 1, log, NULL, 2},
    {"log2", IR_LOG2, 1, log2, NULL, 2},    {"log10", IR_LOG10, 1, log10, NULL, 4},
    {"log1p", IR_LOG1P, 1, log1p, NULL, 4}, {"sin", IR_SIN, 1, sin, NULL, 4},
    {"cos", IR_COS, 1, cos, NULL, 4},       {"tan", IR_TAN, 1, tan, NULL, 4},
    {"tanh", IR_TANH, 1, tanh, NULL, 4},    {"erf", IR_ERF, 1, erf, NULL, 4},
    {"atan", IR_ATAN, 1, atan, NULL, 4},    {"asin", IR_ASIN, 1, asin, NULL, 4},
    {"acos", IR_ACOS, 1, acos, NULL, 4},    {"sinh", IR_SINH, 1, sinh, NULL, 4},
    {"cosh", IR_COSH, 1, cosh, NULL, 4},    {"asinh", IR_ASINH, 1, asinh, NULL, 4},
    {"acosh", IR_ACOSH, 1, acosh, NULL, 4}, {"atanh", IR_ATANH, 1, atanh, NULL, 4},
    {"cbrt", IR_CBRT, 1, cbrt, NULL, 4},    {"powf", IR_POWF, 2, NULL, r_pow, 4},
    {"atan2", IR_ATAN2, 2, NULL, atan2, 4},
};
#define NCASES ((int)(sizeof cases / sizeof *cases))

static int
run_case(const MathCase *c)
{
    Entry fn;
    void *h = compile_case(c, &fn);
    Inputs in = {0};
    fill_inputs(c, &in);
    int worst;
    double max = measure(c, fn, &in, &worst);
    printf("%-6s max error %7.3f ulp over %d inputs (target %.0f)\n", c->name, max, in.n,
           c->max_ulp);
    free(in.x), free(in.y);
    dlclose(h);
    return max <= c->max_ulp;
}

static void
test_all_functions(void **state)
{
    int ok = 1;
    for (int i = 0; i < NCASES; i++)
        ok &= run_case(&cases[i]);
    assert_true(ok);
}

/* The inputs the reduction finds hardest: the floats nearest to k pi/2 for k up
 * to 2^100 (x mod pi/2 tiny against x, so every bit of 2/pi counts). */
static void
test_trig_near_multiples_of_pio2(void **state)
{
    (void)state;
    Inputs in = {0};
    for (int i = 0; i < 60000; i++) {
        double k = ldexp((double)(next_u32() | 1u), (int)(next_u32() % 70)); /* up to 2^102 */
        float v = (float)(k * 1.5707963267948966);
        add_input(&in, (next_u32() & 1) ? -v : v, 0);
    }
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        const MathCase *c = &cases[7 + k]; /* sin, cos, tan */
        Entry fn;
        void *h = compile_case(c, &fn);
        int worst = -1;
        double max = measure(c, fn, &in, &worst);
        printf("%-6s max error %7.3f ulp over %d floats near k*pi/2 (target %g)\n", c->name, max, in.n,
               c->max_ulp);
        ok &= max <= c->max_ulp;
        dlclose(h);
    }
    free(in.x), free(in.y);
    assert_true(ok);
}

/* f64 and unknown ops are not expanded */
static void
test_not_expanded(void **state)
{
    LoBuf b;
    lo_buf_init(&b);
    unsigned a[2] = {1, 2};
    assert_int_equal(lo_math_emit(&b, IR_EXP, a, 1, "f64"), 0);
    assert_int_equal(lo_math_emit(&b, IR_SQRT, a, 1, "f32"), 0);
    assert_int_equal(b.n, 0);
    lo_buf_fini(&b);
}

int
main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tritium_lomath_XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_expanded),
        cmocka_unit_test(test_all_functions),
        cmocka_unit_test(test_trig_near_multiples_of_pio2),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(tmpdir);
    return rc;
}
