/*
 * lo_math.c — branch-free f32 expansions of transcendental math ops into arith
 * code (lo_math_emit, contract in lo_int.h), so that they vectorise with the
 * surrounding linalg.generic instead of becoming scalar libm calls.
 *
 * Every function is range reduction + a polynomial + select-based fix-ups for
 * inf, NaN, signed zero and overflow/underflow. Polynomials are either Taylor
 * series (sin, cos, sinh, the log atanh series) or minimax fits computed from the
 * functions themselves by tests/codegen/lo_math_fit.py (Lawson's weighted least
 * squares, coefficients rounded to f32). Multiplies and adds carry
 * fastmath<contract> so LLVM may fuse them into FMAs; the sin/cos argument
 * reduction uses math.fma explicitly because it needs exact products (an FMA
 * instruction on AVX2/AVX-512/RVV; a libm fmaf call on x86 without FMA).
 * Accuracy (tests/unit/test_lo_math.c, against libm in double): exp, exp2, log,
 * log2 <= 2 ulp (measured <= 1); the others <= 4 ulp (measured <= 3) over their
 * normal domains, sin/cos/tan over all floats: a two-round Cody-Waite reduction
 * with pi/2 in three f32 parts below 2^16, a table-free Payne-Hanek reduction in
 * f64 above, emitted as a cold region (trig_reduce_any; cg_cold.c branches
 * around it when no lane of a vector needs it).
 * powf works in f64 internally.
 * f64 is not expanded (returns 0): the caller emits math.* and libm does it.
 */
#include "lo_int.h"

#include <stdint.h>
#include <string.h>

typedef struct Em {
    LoBuf *b;
    const char *f; /* float type: "f32" (or "f64" inside powf) */
    const char *i; /* integer type of the same width */
} Em;

/* ---- emission helpers ---------------------------------------------------------- */

#define FM "fastmath<contract>"

static unsigned
kf(Em *e, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return lo_emit(e->b, "arith.constant 0x%08X : f32", u);
}

static unsigned
kbits(Em *e, uint32_t u)
{
    return lo_emit(e->b, "arith.constant 0x%08X : f32", u);
}

static unsigned
kd(Em *e, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return lo_emit(e->b, "arith.constant 0x%016llX : f64", (unsigned long long)u);
}

/* A float constant of the current float type. */
static unsigned
kF(Em *e, double v)
{
    return e->f[1] == '6' ? kd(e, v) : kf(e, (float)v);
}

static unsigned
ki(Em *e, long long v)
{
    return lo_emit(e->b, "arith.constant %lld : %s", v, e->i);
}

static unsigned
fbin(Em *e, const char *op, unsigned a, unsigned b)
{
    return lo_emit(e->b, "arith.%s %%v%u, %%v%u " FM " : %s", op, a, b, e->f);
}

static unsigned add(Em *e, unsigned a, unsigned b) { return fbin(e, "addf", a, b); }
static unsigned sub(Em *e, unsigned a, unsigned b) { return fbin(e, "subf", a, b); }
static unsigned mul(Em *e, unsigned a, unsigned b) { return fbin(e, "mulf", a, b); }
static unsigned fdiv(Em *e, unsigned a, unsigned b) { return fbin(e, "divf", a, b); }

/* a*b + c, contractible into one FMA */
static unsigned
mad(Em *e, unsigned a, unsigned b, unsigned c)
{
    return add(e, mul(e, a, b), c);
}

/* a*b + c with a single rounding (math.fma) */
static unsigned
fma_exact(Em *e, unsigned a, unsigned b, unsigned c)
{
    return lo_emit(e->b, "math.fma %%v%u, %%v%u, %%v%u : %s", a, b, c, e->f);
}

static unsigned
fun1(Em *e, const char *op, unsigned a)
{
    return lo_emit(e->b, "%s %%v%u : %s", op, a, e->f);
}

static unsigned fabs_(Em *e, unsigned a) { return fun1(e, "math.absf", a); }
static unsigned fneg(Em *e, unsigned a) { return fun1(e, "arith.negf", a); }
static unsigned rint_(Em *e, unsigned a) { return fun1(e, "math.roundeven", a); }
static unsigned fsqrt(Em *e, unsigned a) { return fun1(e, "math.sqrt", a); }

static unsigned
copysign_(Em *e, unsigned mag, unsigned sgn)
{
    return lo_emit(e->b, "math.copysign %%v%u, %%v%u : %s", mag, sgn, e->f);
}

static unsigned
fcmp(Em *e, const char *pred, unsigned a, unsigned b)
{
    return lo_emit(e->b, "arith.cmpf %s, %%v%u, %%v%u : %s", pred, a, b, e->f);
}

static unsigned
sel(Em *e, unsigned c, unsigned a, unsigned b, const char *ty)
{
    return lo_emit(e->b, "arith.select %%v%u, %%v%u, %%v%u : %s", c, a, b, ty);
}

static unsigned fsel(Em *e, unsigned c, unsigned a, unsigned b) { return sel(e, c, a, b, e->f); }
static unsigned isel(Em *e, unsigned c, unsigned a, unsigned b) { return sel(e, c, a, b, e->i); }

static unsigned
ibin(Em *e, const char *op, unsigned a, unsigned b)
{
    return lo_emit(e->b, "arith.%s %%v%u, %%v%u : %s", op, a, b, e->i);
}

static unsigned
icmp(Em *e, const char *pred, unsigned a, unsigned b)
{
    return lo_emit(e->b, "arith.cmpi %s, %%v%u, %%v%u : %s", pred, a, b, e->i);
}

static unsigned
bor(Em *e, unsigned a, unsigned b)
{
    return lo_emit(e->b, "arith.ori %%v%u, %%v%u : i1", a, b);
}

static unsigned
band(Em *e, unsigned a, unsigned b)
{
    return lo_emit(e->b, "arith.andi %%v%u, %%v%u : i1", a, b);
}

static unsigned
bnot(Em *e, unsigned a)
{
    unsigned t = lo_emit(e->b, "arith.constant true");
    return lo_emit(e->b, "arith.xori %%v%u, %%v%u : i1", a, t);
}

static unsigned
f2bits(Em *e, unsigned a)
{
    return lo_emit(e->b, "arith.bitcast %%v%u : %s to %s", a, e->f, e->i);
}

static unsigned
bits2f(Em *e, unsigned a)
{
    return lo_emit(e->b, "arith.bitcast %%v%u : %s to %s", a, e->i, e->f);
}

static unsigned
f2i(Em *e, unsigned a)
{
    return lo_emit(e->b, "arith.fptosi %%v%u : %s to %s", a, e->f, e->i);
}

static unsigned
i2f(Em *e, unsigned a)
{
    return lo_emit(e->b, "arith.sitofp %%v%u : %s to %s", a, e->i, e->f);
}

/* c[0] + x*(c[1] + x*(... c[n-1])) */
static unsigned
horner(Em *e, unsigned x, const float *c, int n)
{
    unsigned acc = kf(e, c[n - 1]);
    for (int k = n - 2; k >= 0; k--)
        acc = mad(e, acc, x, kf(e, c[k]));
    return acc;
}

static unsigned
horner_d(Em *e, unsigned x, const double *c, int n)
{
    unsigned acc = kd(e, c[n - 1]);
    for (int k = n - 2; k >= 0; k--)
        acc = mad(e, acc, x, kd(e, c[k]));
    return acc;
}

/* x clamped below by lo; NaN becomes lo */
static unsigned
clamp_lo(Em *e, unsigned x, unsigned lo)
{
    return fsel(e, fcmp(e, "ogt", x, lo), x, lo);
}

/* x clamped above by hi; NaN becomes hi */
static unsigned
clamp_hi(Em *e, unsigned x, unsigned hi)
{
    return fsel(e, fcmp(e, "olt", x, hi), x, hi);
}

static unsigned
is_nan(Em *e, unsigned x)
{
    return fcmp(e, "uno", x, x);
}

/* |x| < inf and not NaN */
static unsigned
is_finite(Em *e, unsigned x)
{
    return fcmp(e, "olt", fabs_(e, x), kbits(e, 0x7f800000u));
}

static unsigned
nan_(Em *e)
{
    return kbits(e, 0x7fc00000u);
}

/* sign bit of x set (true for -0 and negative NaNs) */
static unsigned
signbit_(Em *e, unsigned x)
{
    return icmp(e, "slt", f2bits(e, x), ki(e, 0));
}

/* ---- exp family ------------------------------------------------------------------- */

#define LN2_HI 0x3f317000u /* 12 significant bits: n * LN2_HI is exact */
#define LN2_LO 0x3805fdf4u
#define LOG2E 0x3fb8aa3bu

/* e^r = 1 + r + r^2 P(r), |r| <= ln2/2 (minimax, rel. err 3e-9) */
static const float exp_p[] = {0x1.fffffcp-2f, 0x1.55549p-3f, 0x1.5558fcp-5f, 0x1.123b8ap-7f,
                              0x1.6a2178p-10f};
/* 2^r = 1 + r P(r), |r| <= 1/2 (minimax, rel. err 2e-9) */
static const float exp2_p[] = {0x1.62e43p-1f, 0x1.ebfbdcp-3f, 0x1.c6aee6p-5f, 0x1.3b2d52p-7f,
                               0x1.5f400ep-10f, 0x1.41fa9ep-13f};
/* e^r - 1 = r + r^2 Q(r), |r| <= ln2/2 (minimax, rel. err 1.4e-8) */
static const float expm1_q[] = {0x1.fffffep-2f, 0x1.5554aep-3f, 0x1.555676p-5f, 0x1.122904p-7f,
                                0x1.6bebcap-10f};

/* 2^n for n in [-126, 127] */
static unsigned
pow2i(Em *e, unsigned n)
{
    unsigned b = ibin(e, "addi", n, ki(e, 127));
    return bits2f(e, ibin(e, "shli", b, ki(e, 23)));
}

/* p * 2^n for n in [-252, 254], rounding once (gradual underflow, overflow to inf) */
static unsigned
scale2(Em *e, unsigned p, unsigned n)
{
    unsigned n1 = ibin(e, "shrsi", n, ki(e, 1));
    unsigned n2 = ibin(e, "subi", n, n1);
    return mul(e, mul(e, p, pow2i(e, n1)), pow2i(e, n2));
}

/* Splits e^x = p * 2^n for x already clamped to a finite range; *n is i32. */
static unsigned
exp_core(Em *e, unsigned x, unsigned *n)
{
    unsigned nf = rint_(e, mul(e, x, kbits(e, LOG2E)));
    unsigned r = mad(e, fneg(e, nf), kbits(e, LN2_HI), x);
    r = mad(e, fneg(e, nf), kbits(e, LN2_LO), r);
    unsigned r2 = mul(e, r, r);
    unsigned p = add(e, kf(e, 1.0f), mad(e, r2, horner(e, r, exp_p, 5), r));
    *n = f2i(e, nf);
    return p;
}

static unsigned
m_exp(Em *e, unsigned x)
{
    unsigned xc = clamp_hi(e, clamp_lo(e, x, kf(e, -104.0f)), kf(e, 89.0f));
    unsigned n, p = exp_core(e, xc, &n);
    return fsel(e, is_nan(e, x), x, scale2(e, p, n));
}

static unsigned
m_exp2(Em *e, unsigned x)
{
    unsigned xc = clamp_hi(e, clamp_lo(e, x, kf(e, -152.0f)), kf(e, 129.0f));
    unsigned nf = rint_(e, xc);
    unsigned r = sub(e, xc, nf);
    unsigned p = mad(e, r, horner(e, r, exp2_p, 6), kf(e, 1.0f));
    return fsel(e, is_nan(e, x), x, scale2(e, p, f2i(e, nf)));
}

static unsigned
m_expm1(Em *e, unsigned x)
{
    unsigned xc = clamp_hi(e, clamp_lo(e, x, kf(e, -104.0f)), kf(e, 89.0f));
    unsigned nf = rint_(e, mul(e, xc, kbits(e, LOG2E)));
    unsigned r = mad(e, fneg(e, nf), kbits(e, LN2_HI), xc);
    r = mad(e, fneg(e, nf), kbits(e, LN2_LO), r);
    unsigned em = mad(e, mul(e, r, r), horner(e, r, expm1_q, 5), r); /* e^r - 1 */
    unsigned n = f2i(e, nf);
    unsigned n1 = ibin(e, "shrsi", n, ki(e, 1));
    unsigned t1 = pow2i(e, n1), t2 = pow2i(e, ibin(e, "subi", n, n1));
    unsigned t = mul(e, t1, t2);
    unsigned small = mad(e, t, em, sub(e, t, kf(e, 1.0f)));             /* 2^n em + 2^n - 1 */
    unsigned big = mul(e, mul(e, add(e, em, kf(e, 1.0f)), t1), t2); /* -1 is below an ulp */
    unsigned res = fsel(e, icmp(e, "sgt", n, ki(e, 24)), big, small);
    res = fsel(e, icmp(e, "eq", n, ki(e, 0)), em, res);
    unsigned tiny = fcmp(e, "olt", fabs_(e, x), kf(e, 0x1p-25f));
    return fsel(e, bor(e, tiny, is_nan(e, x)), x, res);
}

/* ---- log family --------------------------------------------------------------------- */

typedef struct LogParts {
    unsigned k;    /* exponent as float */
    unsigned f;    /* m - 1, m in [sqrt(2)/2, sqrt(2)) */
    unsigned hfsq; /* f*f/2 */
    unsigned sr;   /* s*(hfsq + R): log1p(f) = f - hfsq + sr */
} LogParts;

/* x = 2^k m for positive finite x (subnormals included); log1p(f) via the atanh
 * series 2s + s R(s^2), s = f/(2+f), R = 2/3 z + 2/5 z^2 + 2/7 z^3 + 2/9 z^4. */
static LogParts
log_core(Em *e, unsigned x)
{
    LogParts lp;
    unsigned sub_ = fcmp(e, "olt", x, kf(e, 0x1p-126f));
    unsigned xs = fsel(e, sub_, mul(e, x, kf(e, 0x1p23f)), x);
    unsigned ix = ibin(e, "addi", f2bits(e, xs), ki(e, 0x3f800000 - 0x3f3504f3));
    unsigned k = ibin(e, "subi", ibin(e, "shrsi", ix, ki(e, 23)), ki(e, 127));
    k = ibin(e, "subi", k, isel(e, sub_, ki(e, 23), ki(e, 0)));
    unsigned mi = ibin(e, "addi", ibin(e, "andi", ix, ki(e, 0x007fffff)), ki(e, 0x3f3504f3));
    lp.f = sub(e, bits2f(e, mi), kf(e, 1.0f));
    unsigned s = fdiv(e, lp.f, add(e, kf(e, 2.0f), lp.f));
    unsigned z = mul(e, s, s);
    static const float r[] = {2.0f / 3, 2.0f / 5, 2.0f / 7, 2.0f / 9};
    unsigned R = mul(e, z, horner(e, z, r, 4));
    lp.hfsq = mul(e, kf(e, 0.5f), mul(e, lp.f, lp.f));
    lp.sr = mul(e, s, add(e, lp.hfsq, R));
    lp.k = i2f(e, k);
    return lp;
}

/* Fix-ups shared by log, log2, log10: x<0 NaN, 0 -> -inf, inf -> inf, NaN. */
static unsigned
log_special(Em *e, unsigned x, unsigned res)
{
    res = fsel(e, fcmp(e, "oeq", x, kbits(e, 0x7f800000u)), x, res);
    res = fsel(e, fcmp(e, "oeq", x, kf(e, 0.0f)), kbits(e, 0xff800000u), res);
    res = fsel(e, fcmp(e, "olt", x, kf(e, 0.0f)), nan_(e), res);
    return fsel(e, is_nan(e, x), x, res);
}

/* k ln2 + log1p(f) + extra, with ln2 and the f term split for accuracy */
static unsigned
log_combine(Em *e, LogParts lp, unsigned extra)
{
    unsigned lo = mad(e, lp.k, kbits(e, LN2_LO), extra);
    unsigned t = sub(e, lp.hfsq, add(e, lp.sr, lo));
    return sub(e, mul(e, lp.k, kbits(e, LN2_HI)), sub(e, t, lp.f));
}

static unsigned
m_log(Em *e, unsigned x)
{
    LogParts lp = log_core(e, x);
    return log_special(e, x, log_combine(e, lp, kf(e, 0.0f)));
}

/* k + log1p(f) * c with c = c_hi + c_lo */
static unsigned
log_scaled(Em *e, LogParts lp, uint32_t c_hi, uint32_t c_lo)
{
    unsigned corr = sub(e, lp.sr, lp.hfsq);
    unsigned c = kbits(e, c_hi);
    unsigned lo = mad(e, lp.f, kbits(e, c_lo), mul(e, corr, c));
    return mad(e, lp.f, c, lo);
}

static unsigned
m_log2(Em *e, unsigned x)
{
    LogParts lp = log_core(e, x);
    unsigned res = add(e, lp.k, log_scaled(e, lp, LOG2E, 0x32a57060u));
    return log_special(e, x, res);
}

static unsigned
m_log10(Em *e, unsigned x)
{
    LogParts lp = log_core(e, x);
    unsigned lf = log_scaled(e, lp, 0x3ede5bd9u, 0xb22d91afu); /* log10(e) */
    unsigned lo = mad(e, lp.k, kbits(e, 0x369a84fcu), lf);    /* log10(2) lo */
    unsigned res = mad(e, lp.k, kbits(e, 0x3e9a2000u), lo);   /* log10(2) hi */
    return log_special(e, x, res);
}

/* log1p(x) = log(u) + (1 + x - u)/u with u = 1 + x rounded */
static unsigned
m_log1p(Em *e, unsigned x)
{
    unsigned one = kf(e, 1.0f);
    unsigned u = add(e, one, x);
    LogParts lp = log_core(e, u);
    unsigned cpos = sub(e, one, sub(e, u, x));
    unsigned cneg = sub(e, x, sub(e, u, one));
    unsigned c = fdiv(e, fsel(e, fcmp(e, "ogt", lp.k, kf(e, 0.0f)), cpos, cneg), u);
    unsigned res = log_combine(e, lp, c);
    res = fsel(e, fcmp(e, "oeq", x, kbits(e, 0x7f800000u)), x, res);
    res = fsel(e, fcmp(e, "oeq", x, kf(e, -1.0f)), kbits(e, 0xff800000u), res);
    res = fsel(e, fcmp(e, "olt", x, kf(e, -1.0f)), nan_(e), res);
    unsigned tiny = fcmp(e, "olt", fabs_(e, x), kf(e, 0x1p-24f));
    return fsel(e, bor(e, tiny, is_nan(e, x)), x, res);
}

/* ---- trigonometric ------------------------------------------------------------------- */

#define TWO_OVER_PI 0x3f22f983u
static const uint32_t pio2_part[3] = {0x3fc90fdbu, 0xb33bbd2eu, 0xa6f72cedu};

/* sin r = r + r^3 S(r^2), cos r = C(r^2): Taylor to r^9 / r^10, |r| <= pi/4 */
static const float sin_s[] = {-1.0f / 6, 1.0f / 120, -1.0f / 5040, 1.0f / 362880};
static const float cos_c[] = {1.0f, -0.5f, 1.0f / 24, -1.0f / 720, 1.0f / 40320, -1.0f / 3628800};

/* r = x - j pi/2 for finite |x| < 2^16 (trig_reduce_any selects the large-argument
 * reduction above), two rounds of three-part Cody-Waite with exact (fma) products;
 * *q = j mod 4 (i32). */
static unsigned
trig_reduce(Em *e, unsigned x, unsigned *q)
{
    unsigned t = x, jsum = 0;
    unsigned jm4 = 0;
    for (int round = 0; round < 2; round++) {
        unsigned j = rint_(e, mul(e, t, kbits(e, TWO_OVER_PI)));
        unsigned nj = fneg(e, j);
        for (int p = 0; p < 3; p++)
            t = fma_exact(e, nj, kbits(e, pio2_part[p]), t);
        /* j mod 4 exactly, even when j is beyond 2^31 */
        unsigned j4 = rint_(e, mul(e, j, kf(e, 0.25f)));
        unsigned jm = mad(e, j4, kf(e, -4.0f), j);
        unsigned ji = f2i(e, jm);
        if (round == 0)
            jm4 = ji;
        else
            jsum = ibin(e, "addi", jm4, ji);
    }
    *q = ibin(e, "andi", jsum, ki(e, 3));
    return t;
}

/* 1/(2 pi) in 24-bit pieces, piece k scaled by 2^-24(k+1) - 2: each product
 * with an f32 (24-bit significand) is exact in f64. */
static const double inv_2pi_24[8] = {
    0x1.45f306p-3, 0x1.b93910p-28, 0x1.529fc0p-54, 0x1.3abe88p-77,
    0x1.ea69bap-99, 0x1.81b6c4p-123, 0x1.2b3278p-147, 0x1.0e4104p-172,
};

/* t - rint(t): t mod 1 in [-1/2, 1/2], exact in f64 */
static unsigned
frac_d(Em *d, unsigned t)
{
    return sub(d, t, rint_(d, t));
}

/* The markers of a cold region (contract in lo_int.h, consumed by cg_cold.c):
 * math.fma(v, 1, -0) = v on the way in, math.fma(v, -1, -0) = -v on the way out. */
static unsigned
cold_in(Em *e, unsigned v)
{
    return fma_exact(e, v, kF(e, 1.0), kF(e, -0.0));
}

static unsigned
cold_out(Em *e, unsigned v)
{
    return fneg(e, fma_exact(e, v, kF(e, -1.0), kF(e, -0.0)));
}

/* Payne-Hanek style reduction for any finite f32 x, in f64 and without tables:
 * x / (2 pi) mod 1 (in turns) as a sum of x * piece_k mod 1 (each product exact,
 * so each term exact). Six pieces per lane: 0..5 below 2^73, 2..7 from there on,
 * where the products with pieces 0 and 1 are whole turns (x = M 2^s, s >= 50).
 * The neglected tail is below 2^-66; the terms are summed in pairs reduced back
 * to [-1/2, 1/2] so that the roundings stay within a few 2^-54. Then quarter
 * turns: j = rint(4 sum), r = (4 sum - j) pi/2, quadrant j mod 4.
 * x = 0 gives r = 0, q = 0: the contract of a cold region. */
static unsigned
trig_reduce_large(Em *e, unsigned x, unsigned *q)
{
    Em d = {e->b, "f64", "i64"};
    unsigned hi = fcmp(e, "oge", fabs_(e, x), kf(e, 0x1p73f));
    unsigned xd = lo_emit(e->b, "arith.extf %%v%u : f32 to f64", x);
    unsigned t[6];
    for (int k = 0; k < 6; k++) {
        unsigned piece = sel(&d, hi, kd(&d, inv_2pi_24[k + 2]), kd(&d, inv_2pi_24[k]), "f64");
        t[k] = mul(&d, xd, piece);
        if (k < 4)
            t[k] = frac_d(&d, t[k]);
    }
    unsigned acc = frac_d(&d, add(&d, frac_d(&d, add(&d, t[0], t[1])), frac_d(&d, add(&d, t[2], t[3]))));
    acc = mul(&d, add(&d, acc, add(&d, t[4], t[5])), kd(&d, 4.0));
    unsigned j = rint_(&d, acc);
    unsigned f = sub(&d, acc, j);
    unsigned jq = lo_emit(e->b, "arith.fptosi %%v%u : f64 to i32", j);
    *q = i2f(e, ibin(e, "andi", jq, ki(e, 3)));
    unsigned r = mul(&d, f, kd(&d, 0x1.921fb54442d18p0));
    return lo_emit(e->b, "arith.truncf %%v%u : f64 to f32", r);
}

/* r and the quadrant for any finite x: Cody-Waite below 2^16, the table-free
 * Payne-Hanek reduction above, as a cold region: it runs only for vectors with
 * a lane that needs it (cg_cold.c), the others see r = q = 0 there and select
 * the Cody-Waite values. */
static unsigned
trig_reduce_any(Em *e, unsigned x, unsigned *q)
{
    unsigned qs, qbf;
    unsigned rs = trig_reduce(e, x, &qs);
    unsigned big = fcmp(e, "oge", fabs_(e, x), kf(e, 0x1p16f));
    unsigned xin = cold_in(e, fsel(e, big, x, kf(e, 0.0f)));
    unsigned rb = trig_reduce_large(e, xin, &qbf);
    rb = cold_out(e, rb);
    unsigned qb = f2i(e, cold_out(e, qbf));
    *q = isel(e, big, qb, qs);
    return fsel(e, big, rb, rs);
}

static void
sincos_poly(Em *e, unsigned r, unsigned *s, unsigned *c)
{
    unsigned z = mul(e, r, r);
    *s = mad(e, mul(e, r, z), horner(e, z, sin_s, 4), r);
    *c = horner(e, z, cos_c, 6);
}

/* sin (cos_shift 0) or cos (cos_shift 1) */
static unsigned
m_sincos(Em *e, unsigned x, int cos_shift)
{
    unsigned fin = is_finite(e, x);
    unsigned xs = fsel(e, fin, x, kf(e, 0.0f));
    unsigned q, r = trig_reduce_any(e, xs, &q);
    unsigned s, c;
    sincos_poly(e, r, &s, &c);
    if (cos_shift)
        q = ibin(e, "addi", q, ki(e, 1));
    unsigned odd = icmp(e, "ne", ibin(e, "andi", q, ki(e, 1)), ki(e, 0));
    unsigned v = fsel(e, odd, c, s);
    unsigned sgn = ibin(e, "shli", ibin(e, "andi", q, ki(e, 2)), ki(e, 30));
    unsigned res = bits2f(e, ibin(e, "xori", f2bits(e, v), sgn));
    if (!cos_shift)
        res = fsel(e, fcmp(e, "olt", fabs_(e, x), kf(e, 0x1p-12f)), x, res);
    return fsel(e, fin, res, nan_(e));
}

static unsigned
m_tan(Em *e, unsigned x)
{
    unsigned fin = is_finite(e, x);
    unsigned xs = fsel(e, fin, x, kf(e, 0.0f));
    unsigned q, r = trig_reduce_any(e, xs, &q);
    unsigned s, c;
    sincos_poly(e, r, &s, &c);
    unsigned odd = icmp(e, "ne", ibin(e, "andi", q, ki(e, 1)), ki(e, 0));
    unsigned res = fdiv(e, fsel(e, odd, fneg(e, c), s), fsel(e, odd, s, c));
    res = fsel(e, fcmp(e, "olt", fabs_(e, x), kf(e, 0x1p-12f)), x, res);
    return fsel(e, fin, res, nan_(e));
}

/* ---- inverse trigonometric -------------------------------------------------------------- */

#define PIO2_HI 0x3fc90fdbu
#define PIO2_LO 0xb33bbd2eu
#define PIO4_HI 0x3f490fdbu
#define PIO4_LO 0xb2bbbd2eu
#define PI_HI 0x40490fdbu
#define PI_LO 0xb3bbbd2eu

/* atan u = u + u^3 A(u^2), |u| <= tan(pi/8) (minimax, rel. err 7e-10) */
static const float atan_a[] = {-0x1.55554ap-2f, 0x1.999196p-3f, -0x1.23b51ep-3f, 0x1.b1ebe8p-4f,
                               -0x1.f1ec0cp-5f};
/* asin s = s + s^3 P(s^2), 0 <= s <= 1/2 (minimax, rel. err 3e-10) */
static const float asin_p[] = {0x1.55554cp-3f, 0x1.33387cp-4f, 0x1.6caed2p-5f, 0x1.0491ap-5f,
                               0x1.d91fa8p-7f, 0x1.3355cp-5f};

/* atan(t) for t >= 0 (or NaN): reduce to |u| <= tan(pi/8) around 0, pi/4, pi/2 */
static unsigned
atan_pos(Em *e, unsigned t)
{
    unsigned one = kf(e, 1.0f), zero = kf(e, 0.0f);
    unsigned big = fcmp(e, "ogt", t, kbits(e, 0x401a827au)); /* tan(3pi/8) */
    unsigned mid = fcmp(e, "ogt", t, kbits(e, 0x3ed413cdu)); /* tan(pi/8) */
    unsigned num = fsel(e, big, kf(e, -1.0f), fsel(e, mid, sub(e, t, one), t));
    unsigned den = fsel(e, big, t, fsel(e, mid, add(e, t, one), one));
    unsigned u = fdiv(e, num, den);
    unsigned yhi = fsel(e, big, kbits(e, PIO2_HI), fsel(e, mid, kbits(e, PIO4_HI), zero));
    unsigned ylo = fsel(e, big, kbits(e, PIO2_LO), fsel(e, mid, kbits(e, PIO4_LO), zero));
    unsigned z = mul(e, u, u);
    unsigned p = mad(e, mul(e, u, z), horner(e, z, atan_a, 5), ylo);
    return add(e, yhi, add(e, p, u));
}

static unsigned
m_atan(Em *e, unsigned x)
{
    return copysign_(e, atan_pos(e, fabs_(e, x)), x);
}

/* (hi + lo) - a */
static unsigned
const_minus(Em *e, uint32_t hi, uint32_t lo, unsigned a)
{
    return add(e, sub(e, kbits(e, hi), a), kbits(e, lo));
}

static unsigned
m_atan2(Em *e, unsigned y, unsigned x)
{
    unsigned ax = fabs_(e, x), ay = fabs_(e, y);
    unsigned swap = fcmp(e, "ogt", ay, ax);
    unsigned mx = fsel(e, swap, ay, ax), mn = fsel(e, swap, ax, ay);
    unsigned t = fdiv(e, mn, mx);
    t = fsel(e, fcmp(e, "oeq", mn, kbits(e, 0x7f800000u)), kf(e, 1.0f), t); /* inf/inf */
    t = fsel(e, fcmp(e, "oeq", mx, kf(e, 0.0f)), kf(e, 0.0f), t);         /* 0/0 */
    unsigned a = atan_pos(e, t);
    a = fsel(e, swap, const_minus(e, PIO2_HI, PIO2_LO, a), a);
    a = fsel(e, signbit_(e, x), const_minus(e, PI_HI, PI_LO, a), a);
    unsigned res = copysign_(e, a, y);
    return fsel(e, bor(e, is_nan(e, x), is_nan(e, y)), nan_(e), res);
}

/* asin(s) for the reduced argument s with z = s*s */
static unsigned
asin_poly(Em *e, unsigned s, unsigned z)
{
    return mad(e, mul(e, s, z), horner(e, z, asin_p, 6), s);
}

static unsigned
m_asin(Em *e, unsigned x)
{
    unsigned a = fabs_(e, x);
    unsigned big = fcmp(e, "ogt", a, kf(e, 0.5f));
    unsigned zb = mul(e, sub(e, kf(e, 1.0f), a), kf(e, 0.5f));
    unsigned z = fsel(e, big, zb, mul(e, a, a));
    unsigned s = fsel(e, big, fsqrt(e, zb), a);
    unsigned p = asin_poly(e, s, z);
    unsigned rb = const_minus(e, PIO2_HI, PIO2_LO, add(e, p, p)); /* pi/2 - 2 asin(s) */
    return copysign_(e, fsel(e, big, rb, p), x);
}

static unsigned
m_acos(Em *e, unsigned x)
{
    unsigned a = fabs_(e, x);
    unsigned big = fcmp(e, "ogt", a, kf(e, 0.5f));
    unsigned zb = mul(e, sub(e, kf(e, 1.0f), a), kf(e, 0.5f));
    unsigned z = fsel(e, big, zb, mul(e, x, x));
    unsigned s = fsel(e, big, fsqrt(e, zb), x);
    unsigned p = asin_poly(e, s, z);
    unsigned p2 = add(e, p, p);
    unsigned rs = const_minus(e, PIO2_HI, PIO2_LO, p);  /* pi/2 - asin(x) */
    unsigned rn = const_minus(e, PI_HI, PI_LO, p2);     /* x < -1/2 */
    unsigned rb = fsel(e, fcmp(e, "olt", x, kf(e, 0.0f)), rn, p2);
    return fsel(e, big, rb, rs);
}

/* ---- hyperbolic ------------------------------------------------------------------------- */

/* sinh x = x + x^3 S(x^2), |x| < 1: Taylor to x^11 */
static const float sinh_s[] = {1.0f / 6, 1.0f / 120, 1.0f / 5040, 1.0f / 362880, 1.0f / 39916800};
/* tanh x = x + x^3 T(x^2), |x| < 0.625 (minimax, rel. err 1.6e-10) */
static const float tanh_t[] = {-0x1.555554p-2f, 0x1.111066p-3f, -0x1.b9ee9p-5f, 0x1.638b58p-6f,
                               -0x1.0bf4fep-7f, 0x1.18e1ep-9f};

/* e^|x| / 2 for the clamped |x| */
static unsigned
half_exp(Em *e, unsigned a)
{
    unsigned n, p = exp_core(e, clamp_hi(e, a, kf(e, 90.0f)), &n);
    return scale2(e, p, ibin(e, "subi", n, ki(e, 1)));
}

static unsigned
m_sinh(Em *e, unsigned x)
{
    unsigned a = fabs_(e, x);
    unsigned h = half_exp(e, a);
    unsigned big = sub(e, h, fdiv(e, kf(e, 0.25f), h));
    unsigned z = mul(e, x, x);
    unsigned small = mad(e, mul(e, x, z), horner(e, z, sinh_s, 5), x);
    unsigned res = fsel(e, fcmp(e, "olt", a, kf(e, 1.0f)), small, copysign_(e, big, x));
    return fsel(e, is_nan(e, x), x, res);
}

static unsigned
m_cosh(Em *e, unsigned x)
{
    unsigned a = fabs_(e, x);
    unsigned h = half_exp(e, a);
    unsigned res = add(e, h, fdiv(e, kf(e, 0.25f), h));
    return fsel(e, is_nan(e, x), x, res);
}

static unsigned
m_tanh(Em *e, unsigned x)
{
    unsigned a = fabs_(e, x);
    unsigned z = mul(e, x, x);
    unsigned small = mad(e, mul(e, x, z), horner(e, z, tanh_t, 6), x);
    unsigned ac = clamp_hi(e, a, kf(e, 10.0f));
    unsigned n, p = exp_core(e, add(e, ac, ac), &n);
    unsigned ex = scale2(e, p, n); /* e^(2|x|) */
    unsigned big = sub(e, kf(e, 1.0f), fdiv(e, kf(e, 2.0f), add(e, ex, kf(e, 1.0f))));
    unsigned res = fsel(e, fcmp(e, "olt", a, kf(e, 0.625f)), small, copysign_(e, big, x));
    unsigned tiny = fcmp(e, "olt", a, kf(e, 0x1p-12f)); /* keeps the sign of zero */
    return fsel(e, bor(e, tiny, is_nan(e, x)), x, res);
}

/* asinh x = log1p(|x| + x^2/(1 + sqrt(1 + x^2))); log(2|x|) beyond 2^12 */
static unsigned
m_asinh(Em *e, unsigned x)
{
    unsigned one = kf(e, 1.0f);
    unsigned a = fabs_(e, x);
    unsigned a2 = mul(e, a, a);
    unsigned arg = add(e, a, fdiv(e, a2, add(e, one, fsqrt(e, add(e, one, a2)))));
    unsigned small = m_log1p(e, arg);
    unsigned large = add(e, m_log(e, a), kbits(e, 0x3f317218u));
    unsigned res = fsel(e, fcmp(e, "ogt", a, kf(e, 0x1p12f)), large, small);
    res = copysign_(e, res, x);
    return fsel(e, is_nan(e, x), x, res);
}

/* acosh x = log1p(t + sqrt(2t + t^2)), t = x - 1; log(2x) beyond 2^12 */
static unsigned
m_acosh(Em *e, unsigned x)
{
    unsigned t = sub(e, x, kf(e, 1.0f));
    unsigned arg = add(e, t, fsqrt(e, mad(e, t, t, add(e, t, t))));
    unsigned small = m_log1p(e, arg);
    unsigned large = add(e, m_log(e, x), kbits(e, 0x3f317218u));
    unsigned res = fsel(e, fcmp(e, "ogt", x, kf(e, 0x1p12f)), large, small);
    res = fsel(e, fcmp(e, "olt", x, kf(e, 1.0f)), nan_(e), res);
    return fsel(e, is_nan(e, x), x, res);
}

/* atanh x = log1p(2|x|/(1 - |x|)) / 2 */
static unsigned
m_atanh(Em *e, unsigned x)
{
    unsigned a = fabs_(e, x);
    unsigned arg = fdiv(e, add(e, a, a), sub(e, kf(e, 1.0f), a));
    unsigned res = mul(e, kf(e, 0.5f), m_log1p(e, arg));
    return copysign_(e, res, x);
}

/* ---- erf, cbrt, pow ------------------------------------------------------------------------- */

/* erf x = x E(x^2), |x| < 0.84 (minimax, rel. err 5e-9) */
static const float erf_e[] = {0x1.20dd74p+0f, -0x1.81271ep-2f, 0x1.ce24d4p-4f, -0x1.b73308p-6f,
                              0x1.4b8046p-8f, -0x1.4d6ccep-11f};
/* erfc a = 2^L(a - 0.84), 0.84 <= a <= 3.92 (minimax on log2 erfc, abs. err of erfc 5e-8) */
static const float erfc_l[] = {-0x1.0b89d6p+1f, -0x1.b61f38p+1f, -0x1.2f79bp+0f, -0x1.1ab8e6p-4f,
                               0x1.f20db4p-7f, -0x1.f106cp-10f};
/* 2^r = 1 + r P(r), |r| <= 1/2, one degree below exp2_p: erfc <= 0.24 absorbs it (rel. err 9e-8) */
static const float erfc_x[] = {0x1.62e42ap-1f, 0x1.ebf9b8p-3f, 0x1.c6b76p-5f, 0x1.3cec5p-7f,
                               0x1.5bb83ep-10f};

/* Both branches are computed (selects keep it vectorisable), so the large one is
 * kept short: erfc = 2^L with L a polynomial in [-23, -2] (no division, no
 * Cody-Waite reduction, one exact power-of-two scale). The expansion point is
 * the branch's low end, where erf is least close to 1 and L's rounding matters
 * most. Beyond 3.92 erfc < 2^-25 and erf rounds to 1. The fit bounds erf's
 * absolute error (<= 2.3 ulp), as libdevice's erff does, so 1 + erf(x) for
 * x < -3 (GELU's tail) carries the relative error that cancellation gives any
 * f32 erf (~0.5% at x = -3.1). Fitting log2 erfc with uniform weight keeps erfc
 * relatively accurate there but needs 3 more FMAs, ~25% of GELU's time. */
static unsigned
m_erf(Em *e, unsigned x)
{
    unsigned a = fabs_(e, x);
    unsigned z = mul(e, x, x);
    unsigned small = mul(e, x, horner(e, z, erf_e, 6));
    unsigned ac = clamp_hi(e, a, kf(e, 3.92f));
    unsigned l = horner(e, sub(e, ac, kf(e, 0.84f)), erfc_l, 6);
    unsigned nf = rint_(e, l);
    unsigned r = sub(e, l, nf);
    unsigned erfc = mul(e, mad(e, r, horner(e, r, erfc_x, 5), kf(e, 1.0f)), pow2i(e, f2i(e, nf)));
    unsigned big = sub(e, kf(e, 1.0f), erfc);
    /* "ult": a NaN takes the small branch, whose x E(x^2) is NaN */
    return fsel(e, fcmp(e, "ult", a, kf(e, 0.84f)), small, copysign_(e, big, x));
}

/* cbrt: exponent/3 bit trick, then two Halley steps y <- y (y^3 + 2a)/(2y^3 + a) */
static unsigned
m_cbrt(Em *e, unsigned x)
{
    unsigned a = fabs_(e, x);
    unsigned sub_ = fcmp(e, "olt", a, kf(e, 0x1p-126f));
    unsigned big = fcmp(e, "ogt", a, kf(e, 0x1p96f)); /* keeps 2 y^3 + a finite */
    unsigned one = kf(e, 1.0f);
    unsigned as = mul(e, a, fsel(e, sub_, kf(e, 0x1p24f), fsel(e, big, kf(e, 0x1p-96f), one)));
    unsigned i = ibin(e, "divui", f2bits(e, as), ki(e, 3));
    unsigned y = bits2f(e, ibin(e, "addi", i, ki(e, 710235477)));
    for (int k = 0; k < 2; k++) {
        unsigned y3 = mul(e, mul(e, y, y), y);
        unsigned num = add(e, y3, add(e, as, as));
        unsigned den = add(e, add(e, y3, y3), as);
        y = mul(e, y, fdiv(e, num, den));
    }
    y = mul(e, y, fsel(e, sub_, kf(e, 0x1p-8f), fsel(e, big, kf(e, 0x1p32f), one)));
    unsigned ok = band(e, fcmp(e, "ogt", a, kf(e, 0.0f)),
                       fcmp(e, "olt", a, kbits(e, 0x7f800000u)));
    return fsel(e, ok, copysign_(e, y, x), x);
}

/* log2|x| * y in f64, then 2^t in f64, rounded once to f32 */
static unsigned
pow_core(Em *e, unsigned ax, unsigned y)
{
    Em d = {e->b, "f64", "i64"};
    unsigned xd = lo_emit(e->b, "arith.extf %%v%u : f32 to f64", ax);
    unsigned yd = lo_emit(e->b, "arith.extf %%v%u : f32 to f64", y);
    unsigned ix = ibin(&d, "addi", f2bits(&d, xd),
                       ki(&d, 0x3ff0000000000000ll - 0x3fe6a09e667f3bcdll));
    unsigned k = ibin(&d, "subi", ibin(&d, "shrsi", ix, ki(&d, 52)), ki(&d, 1023));
    unsigned mi = ibin(&d, "addi", ibin(&d, "andi", ix, ki(&d, 0x000fffffffffffffll)),
                       ki(&d, 0x3fe6a09e667f3bcdll));
    unsigned f = sub(&d, bits2f(&d, mi), kF(&d, 1.0));
    unsigned s = fdiv(&d, f, add(&d, kF(&d, 2.0), f));
    unsigned z = mul(&d, s, s);
    static const double at[] = {1.0, 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13};
    unsigned lnm = mul(&d, add(&d, s, s), horner_d(&d, z, at, 7)); /* log(m) */
    unsigned l2 = mad(&d, lnm, kd(&d, 1.4426950408889634), i2f(&d, k));
    unsigned t = mul(&d, yd, l2);
    t = clamp_hi(&d, clamp_lo(&d, t, kd(&d, -200.0)), kd(&d, 200.0));
    unsigned nf = rint_(&d, t);
    unsigned r = sub(&d, t, nf);
    static const double ex[] = {1.0, 0x1.62e42fefa39efp-1, 0x1.ebfbdff82c58fp-3,
                                0x1.c6b08d704a0c0p-5, 0x1.3b2ab6fba4e77p-7, 0x1.5d87fe78a6731p-10,
                                0x1.430912f86c787p-13, 0x1.ffcbfc588b0c7p-17, 0x1.62c0223a5c824p-20,
                                0x1.b5253d395e7c4p-24};
    unsigned p = horner_d(&d, r, ex, 10);
    unsigned sc = ibin(&d, "shli", ibin(&d, "addi", f2i(&d, nf), ki(&d, 1023)), ki(&d, 52));
    unsigned rd = mul(&d, p, bits2f(&d, sc));
    return lo_emit(e->b, "arith.truncf %%v%u : f64 to f32", rd);
}

static unsigned
m_pow(Em *e, unsigned x, unsigned y)
{
    unsigned ax = fabs_(e, x);
    unsigned res = pow_core(e, ax, y);
    unsigned half = mul(e, y, kf(e, 0.5f));
    unsigned yint = fcmp(e, "oeq", rint_(e, y), y);
    unsigned yodd = band(e, yint, fcmp(e, "une", rint_(e, half), half));
    unsigned neg = signbit_(e, x);
    res = fsel(e, band(e, neg, yodd), fneg(e, res), res);
    unsigned negfin = band(e, fcmp(e, "olt", x, kf(e, 0.0f)),
                           fcmp(e, "ogt", x, kbits(e, 0xff800000u))); /* finite, < 0 */
    res = fsel(e, band(e, negfin, bnot(e, yint)), nan_(e), res);
    res = fsel(e, bor(e, is_nan(e, x), is_nan(e, y)), nan_(e), res);
    unsigned one = kf(e, 1.0f);
    unsigned unit = bor(e, fcmp(e, "oeq", y, kf(e, 0.0f)), fcmp(e, "oeq", x, one));
    /* (-1)^(+-inf) = 1 */
    unit = bor(e, unit, band(e, fcmp(e, "oeq", x, kf(e, -1.0f)),
                             fcmp(e, "oeq", fabs_(e, y), kbits(e, 0x7f800000u))));
    return fsel(e, unit, one, res);
}

/* ---- dispatch ------------------------------------------------------------------------------ */

bool
lo_math_expands(IrOpc fn)
{
    switch (fn) {
    case IR_POWF: case IR_ATAN2: case IR_EXP: case IR_EXP2: case IR_EXPM1: case IR_LOG: case IR_LOG2:
    case IR_LOG10: case IR_LOG1P: case IR_SIN: case IR_COS: case IR_TAN: case IR_TANH: case IR_ERF:
    case IR_ATAN: case IR_ASIN: case IR_ACOS: case IR_SINH: case IR_COSH: case IR_ASINH: case IR_ACOSH:
    case IR_ATANH: case IR_CBRT:
        return true;
    default:
        return false;
    }
}

unsigned
lo_math_emit(LoBuf *b, IrOpc fn, const unsigned *args, int nargs, const char *fty)
{
    if (strcmp(fty, "f32") != 0 || nargs < 1)
        return 0;
    Em e = {b, "f32", "i32"};
    unsigned x = args[0];
    if (nargs == 2) {
        switch (fn) {
        case IR_POWF: return m_pow(&e, x, args[1]);
        case IR_ATAN2: return m_atan2(&e, x, args[1]);
        default: return 0;
        }
    }
    switch (fn) {
    case IR_EXP: return m_exp(&e, x);
    case IR_EXP2: return m_exp2(&e, x);
    case IR_EXPM1: return m_expm1(&e, x);
    case IR_LOG: return m_log(&e, x);
    case IR_LOG2: return m_log2(&e, x);
    case IR_LOG10: return m_log10(&e, x);
    case IR_LOG1P: return m_log1p(&e, x);
    case IR_SIN: return m_sincos(&e, x, 0);
    case IR_COS: return m_sincos(&e, x, 1);
    case IR_TAN: return m_tan(&e, x);
    case IR_TANH: return m_tanh(&e, x);
    case IR_ERF: return m_erf(&e, x);
    case IR_ATAN: return m_atan(&e, x);
    case IR_ASIN: return m_asin(&e, x);
    case IR_ACOS: return m_acos(&e, x);
    case IR_SINH: return m_sinh(&e, x);
    case IR_COSH: return m_cosh(&e, x);
    case IR_ASINH: return m_asinh(&e, x);
    case IR_ACOSH: return m_acosh(&e, x);
    case IR_ATANH: return m_atanh(&e, x);
    case IR_CBRT: return m_cbrt(&e, x);
    default: return 0;
    }
}
