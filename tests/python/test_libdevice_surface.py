"""Upstream's libdevice names (triton.language.extra.libdevice) with its dtypes, each
checked against numpy or exact rational arithmetic (fractions): bit counts, high and
24-bit multiplies, bit casts, float <-> int conversions in every rounding mode (with
saturation), directed-rounding arithmetic, nextafter, ldexp/ilogb/logb, hypot and the
norms, sinpi/cospi, exp10, and the names the CPU backend refuses (a CompilationError
naming them, never an approximation)."""
import math
from fractions import Fraction

import numpy as np
import pytest

import triton
import triton.language as tl
from triton.language.extra import libdevice

N = 1024


@triton.jit
def _fn_kernel(O, A, B, C, D, FN: tl.constexpr, NARGS: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    f = getattr(libdevice, FN)
    if NARGS == 1:
        r = f(tl.load(A + o))
    elif NARGS == 2:
        r = f(tl.load(A + o), tl.load(B + o))
    elif NARGS == 3:
        r = f(tl.load(A + o), tl.load(B + o), tl.load(C + o))
    else:
        r = f(tl.load(A + o), tl.load(B + o), tl.load(C + o), tl.load(D + o))
    tl.store(O + o, r)


def run(fn, out_dtype, *args):
    args = [np.ascontiguousarray(a) for a in args]
    out = np.zeros(len(args[0]), out_dtype)
    pad = list(args) + [args[0]] * (4 - len(args))
    _fn_kernel[(1,)](out, *pad, FN=fn, NARGS=len(args), BLOCK=len(args[0]))
    return out


rng = np.random.default_rng(10)


def ints(dtype, n=N):
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    v[:6] = [0, 1, info.max, info.min, info.max - 1, 2]
    return v


def floats(dtype, n=N, scale=1e3):
    v = (rng.standard_normal(n) * scale).astype(dtype)
    v[:8] = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0]
    return v


# ---- integer bit functions -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_bit_counts_and_reversal(dtype):
    x = ints(dtype)
    bits = np.dtype(dtype).itemsize * 8
    u = [int(v) & ((1 << bits) - 1) for v in x]
    np.testing.assert_array_equal(run("popc", np.int32, x), [bin(v).count("1") for v in u])
    np.testing.assert_array_equal(run("clz", np.int32, x), [bits - v.bit_length() for v in u])
    np.testing.assert_array_equal(run("ffs", np.int32, x), [(v & -v).bit_length() for v in u])
    rev = [int(format(v, f"0{bits}b")[::-1], 2) for v in u]
    np.testing.assert_array_equal(run("brev", dtype, x).view(np.uint64 if bits == 64 else np.uint32), rev)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_mulhi(dtype):
    x, y = ints(dtype), ints(dtype)[::-1].copy()
    bits = np.dtype(dtype).itemsize * 8
    ref = np.array([(int(a) * int(b)) >> bits for a, b in zip(x, y)], dtype=object)
    np.testing.assert_array_equal(run("mulhi", dtype, x, y).astype(object), np.array(ref, dtype=object))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_mul24_hadd_rhadd_sad(dtype):
    x, y = ints(dtype), ints(dtype)[::-1].copy()
    signed = np.dtype(dtype).kind == "i"

    def low24(v):
        v = int(v) & 0xFFFFFF
        return v - (1 << 24) if signed and v >> 23 else v

    def wrap(v):
        v &= 0xFFFFFFFF
        return v - (1 << 32) if signed and v >> 31 else v
    np.testing.assert_array_equal(run("mul24", dtype, x, y).astype(object),
                                  [wrap(low24(a) * low24(b)) for a, b in zip(x, y)])
    np.testing.assert_array_equal(run("hadd", dtype, x, y).astype(object),
                                  [(int(a) + int(b)) >> 1 for a, b in zip(x, y)])
    np.testing.assert_array_equal(run("rhadd", dtype, x, y).astype(object),
                                  [(int(a) + int(b) + 1) >> 1 for a, b in zip(x, y)])
    z = ints(np.uint32)
    np.testing.assert_array_equal(run("sad", dtype, x, y, z).astype(object),
                                  [wrap(abs(int(a) - int(b)) + int(c)) for a, b, c in zip(x, y, z)])


def test_byte_perm():
    x, y, s = ints(np.int32), ints(np.int32)[::-1].copy(), ints(np.int32)
    ref = []
    for a, b, c in zip(x, y, s):
        v = (int(b) & 0xFFFFFFFF) << 32 | (int(a) & 0xFFFFFFFF)
        r = sum(((v >> (8 * ((int(c) >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))
        ref.append(r)
    np.testing.assert_array_equal(run("byte_perm", np.int32, x, y, s).view(np.uint32), ref)


# ---- bit casts and float classification ------------------------------------------------------

def test_bit_casts():
    i32, f32 = ints(np.int32), floats(np.float32)
    i64, f64 = ints(np.int64), floats(np.float64)
    np.testing.assert_array_equal(run("int_as_float", np.float32, i32).view(np.int32), i32)
    np.testing.assert_array_equal(run("float_as_int", np.int32, f32), f32.view(np.int32))
    np.testing.assert_array_equal(run("uint_as_float", np.float32, i32.view(np.uint32)).view(np.int32), i32)
    np.testing.assert_array_equal(run("float_as_uint", np.int32, f32), f32.view(np.int32))
    np.testing.assert_array_equal(run("longlong_as_double", np.float64, i64).view(np.int64), i64)
    np.testing.assert_array_equal(run("double_as_longlong", np.int64, f64), f64.view(np.int64))
    np.testing.assert_array_equal(run("double2hiint", np.int32, f64), (f64.view(np.int64) >> 32).astype(np.int32))
    np.testing.assert_array_equal(run("double2loint", np.int32, f64), f64.view(np.int64).astype(np.int32))
    hi, lo = (f64.view(np.int64) >> 32).astype(np.int32), f64.view(np.int64).astype(np.int32)
    np.testing.assert_array_equal(run("hiloint2double", np.float64, hi, lo).view(np.int64), f64.view(np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_signbit_nextafter_ldexp_ilogb(dtype):
    x = floats(dtype)
    fi = np.finfo(dtype)
    x[8:16] = [np.inf, -np.inf, np.nan, fi.tiny, fi.tiny / 8, -fi.tiny / 3, fi.max, -fi.max]
    y = floats(dtype)[::-1].copy()
    y[8:16] = [0.0, 1.0, 1.0, 0.0, np.inf, 1.0, np.inf, 0.0]
    np.testing.assert_array_equal(run("signbit", np.int32, x), np.signbit(x).astype(np.int32))
    np.testing.assert_array_equal(run("nextafter", dtype, x, y), np.nextafter(x, y))
    n = rng.integers(-300 if dtype == np.float32 else -2200, 300 if dtype == np.float32 else 2200, N)
    n = n.astype(np.int32)
    np.testing.assert_array_equal(run("ldexp", dtype, x, n), np.ldexp(x, n))
    np.testing.assert_array_equal(run("scalbn", dtype, x, n), np.ldexp(x, n))
    ilogb = []
    for v in x:
        if v == 0 or np.isnan(v):
            ilogb.append(-2 ** 31)
        elif np.isinf(v):
            ilogb.append(2 ** 31 - 1)
        else:
            ilogb.append(math.frexp(float(v))[1] - 1)
    np.testing.assert_array_equal(run("ilogb", np.int32, x), ilogb)
    logb = np.where(x == 0, -np.inf, np.where(np.isinf(x), np.inf, np.array(ilogb, dtype)))
    logb = np.where(np.isnan(x), np.nan, logb).astype(dtype)
    np.testing.assert_array_equal(run("logb", dtype, x), logb)
    np.testing.assert_array_equal(run("fdim", dtype, x, y), np.where(np.isnan(x) | np.isnan(y), np.nan,
                                                                      np.where(x > y, x - y, 0)).astype(dtype))


# ---- conversions -------------------------------------------------------------------------------

_ROUNDERS = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
@pytest.mark.parametrize("src", ["float", "double"])
@pytest.mark.parametrize("dst, bits, signed", [("int", 32, True), ("uint", 32, False), ("ll", 64, True),
                                               ("ull", 64, False)])
def test_float_to_int(mode, src, dst, bits, signed):
    dtype = np.float32 if src == "float" else np.float64
    x = floats(dtype, scale=3e9 if bits == 32 else 1e19)
    x[8:14] = [np.nan, np.inf, -np.inf, 2.0 ** bits, -2.0 ** 70, 0.5]
    lo, hi = (-2 ** (bits - 1), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    ref = []
    for v in _ROUNDERS[mode](x.astype(np.float64)):
        ref.append(0 if np.isnan(v) else min(max(int(v) if np.isfinite(v) else (hi if v > 0 else lo), lo), hi))
    out_dtype = np.int32 if bits == 32 else np.int64
    got = run(f"{src}2{dst}_{mode}", out_dtype, x)
    got = got.view(np.uint32 if bits == 32 else np.uint64) if not signed else got
    np.testing.assert_array_equal(got.astype(object), np.array(ref, dtype=object))


def exact_round(q, mode, dtype):
    """The dtype value of the rational q rounded in mode (IEEE 754 directed rounding)."""
    fi = np.finfo(dtype)
    big = Fraction(float(fi.max))
    if abs(q) > big:
        half_ulp = Fraction(2) ** (fi.maxexp - fi.nmant - 2)
        up = mode == "ru" if q > 0 else mode == "rd"
        inf = up or (mode == "rn" and abs(q) >= big + half_ulp)
        v = dtype(np.inf) if inf else fi.max
        return v if q > 0 else -v
    c = dtype(float(q))
    while Fraction(float(c)) < q:
        c = np.nextafter(c, dtype(np.inf))
    while Fraction(float(np.nextafter(c, dtype(-np.inf)))) >= q:
        c = np.nextafter(c, dtype(-np.inf))
    # c: the smallest value >= q
    if Fraction(float(c)) == q or mode == "ru":
        return c
    below = np.nextafter(c, dtype(-np.inf))
    if mode == "rd" or (mode == "rz" and q > 0):
        return below
    if mode == "rz":
        return c
    dc, db = Fraction(float(c)) - q, q - Fraction(float(below))
    if dc != db:
        return c if dc < db else below
    return c if int(np.array(c).view(np.int32 if dtype == np.float32 else np.int64)) % 2 == 0 else below


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
@pytest.mark.parametrize("src, dst, name", [(np.int32, np.float32, "int2float"), (np.uint32, np.float32, "uint2float"),
                                            (np.int64, np.float32, "ll2float"), (np.uint64, np.float32, "ull2float"),
                                            (np.int64, np.float64, "ll2double"), (np.uint64, np.float64, "ull2double")])
def test_int_to_float(mode, src, dst, name):
    x = ints(src, 256)
    ref = [exact_round(Fraction(int(v)), mode, dst) for v in x]
    np.testing.assert_array_equal(run(f"{name}_{mode}", dst, x), np.array(ref, dst))


def test_int_to_double_rn():
    x = ints(np.int32)
    np.testing.assert_array_equal(run("int2double_rn", np.float64, x), x.astype(np.float64))
    u = ints(np.uint32)
    np.testing.assert_array_equal(run("uint2double_rn", np.float64, u), u.astype(np.float64))


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
def test_double_to_float(mode):
    x = floats(np.float64, 256, scale=1e3) * np.exp(rng.uniform(-200, 200, 256))
    x[8:12] = [1e-46, -1e-46, 1.0 + 2.0 ** -40, -(1.0 + 2.0 ** -40)]
    ref = [exact_round(Fraction(float(v)), mode, np.float32) for v in x]
    np.testing.assert_array_equal(run(f"double2float_{mode}", np.float32, x), np.array(ref, np.float32))


# ---- arithmetic in a rounding mode ---------------------------------------------------------------

_EXACT = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b}


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "rcp", "sqrt"])
def test_directed_arithmetic_fp32(op, mode):
    a = floats(np.float32, 256) * np.float32(1e-3)
    b = floats(np.float32, 256)[::-1].copy()
    b[:16] = [2.0 ** -30, -(2.0 ** -30), 3.0, 1e-38, 7.0, -1e30, 1e-7, 5.0, 2.0 ** -149, 1.5, 1.0, -3.0, 11.0,
              1e20, 6.0, 0.1]
    b[b == 0] = 1.0
    if op in ("rcp", "sqrt"):
        a = np.abs(b) if op == "sqrt" else b
        got = run(f"{op}_{mode}", np.float32, a)
        if op == "rcp":
            ref = [exact_round(1 / Fraction(float(v)), mode, np.float32) for v in a]
        else:  # the root rounded: compare squares of the neighbours exactly
            ref = []
            for v in a:
                q = Fraction(float(v))
                c = np.float32(math.sqrt(float(v)))
                lo = max((c, np.nextafter(c, np.float32(-1)), np.nextafter(c, np.float32(np.inf))),
                         key=lambda t: (Fraction(float(t)) ** 2 <= q, float(t)) if Fraction(float(t)) ** 2 <= q
                         else (False, -float(t)))
                # lo: the largest candidate whose square is <= q
                exact = Fraction(float(lo)) ** 2 == q
                hi = lo if exact else np.nextafter(lo, np.float32(np.inf))
                if exact or mode in ("rd", "rz"):
                    ref.append(lo)
                elif mode == "ru":
                    ref.append(hi)
                else:
                    mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
                    ref.append(hi if mid * mid < q else lo)
        np.testing.assert_array_equal(got, np.array(ref, np.float32))
        return
    got = run(f"{op}_{mode}", np.float32, a, b)
    ref = [exact_round(_EXACT[op](Fraction(float(x)), Fraction(float(y))), mode, np.float32) for x, y in zip(a, b)]
    np.testing.assert_array_equal(got, np.array(ref, np.float32))


@pytest.mark.parametrize("mode", ["rz", "rd", "ru"])
def test_directed_add_fp64(mode):
    a = floats(np.float64, 256)
    b = floats(np.float64, 256)[::-1] * 1e-12
    b[:4] = [2.0 ** -1074, -(2.0 ** -1074), 1e-300, -1e-300]
    got = run(f"add_{mode}", np.float64, a, b)
    ref = [exact_round(Fraction(float(x)) + Fraction(float(y)), mode, np.float64) for x, y in zip(a, b)]
    np.testing.assert_array_equal(got, np.array(ref, np.float64))
    big = np.full(4, np.finfo(np.float64).max)
    got = run(f"add_{mode}", np.float64, big * [1, -1, 1, -1], big * [1, -1, 1, -1])
    want = {"rz": [big[0], -big[0]], "rd": [big[0], -np.inf], "ru": [np.inf, -big[0]]}[mode]
    np.testing.assert_array_equal(got, want * 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rn_arithmetic_and_aliases(dtype):
    a, b, c = floats(dtype), floats(dtype)[::-1].copy() + dtype(0.25), floats(dtype)
    np.testing.assert_array_equal(run("add_rn", dtype, a, b), a + b)
    np.testing.assert_array_equal(run("mul_rn", dtype, a, b), a * b)
    np.testing.assert_array_equal(run("div_rn", dtype, a, b), a / b)
    np.testing.assert_array_equal(run("sqrt_rn", dtype, np.abs(a)), np.sqrt(np.abs(a)))
    np.testing.assert_array_equal(run("fma_rn", dtype, a, b, c),
                                  np.array([float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                                            for x, y, z in zip(a, b, c)]).astype(dtype)
                                  if dtype == np.float64 else
                                  (a.astype(np.float64) * b + c).astype(dtype))
    np.testing.assert_array_equal(run("nearbyint", dtype, a), np.rint(a))
    np.testing.assert_array_equal(run("llrint", np.int64, a), np.rint(a).astype(np.int64))
    np.testing.assert_array_equal(run("llround", np.int64, a),
                                  (np.sign(a) * np.floor(np.abs(a.astype(np.float64)) + 0.5)).astype(np.int64))
    if dtype == np.float32:
        s = np.concatenate([floats(dtype, N - 4, 1.0), [np.nan, 2.0, -0.5, 1.0]]).astype(dtype)
        np.testing.assert_array_equal(run("saturatef", dtype, s), np.where(np.isnan(s), 0, np.clip(s, 0, 1)))
        np.testing.assert_array_equal(run("fast_dividef", dtype, a, b), a / b)


# ---- transcendental compositions --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_norms_exp10_pi_functions(dtype):
    tol = dict(rtol=4e-7, atol=0) if dtype == np.float32 else dict(rtol=4e-16, atol=0)
    x, y, z, w = (floats(dtype) for _ in range(4))
    x[8:12], y[8:12] = [np.inf, np.nan, 1e30, 3e-39], [np.nan, 1.0, 1e30, 4e-39]
    wide = [v.astype(np.longdouble) for v in (x, y, z, w)]
    np.testing.assert_allclose(run("hypot", dtype, x, y), np.hypot(wide[0], wide[1]).astype(dtype), **tol)
    np.testing.assert_allclose(run("rhypot", dtype, x, y), (1 / np.hypot(wide[0], wide[1])).astype(dtype), **tol)
    n3 = np.sqrt(wide[0] ** 2 + wide[1] ** 2 + wide[2] ** 2)
    n4 = np.sqrt(wide[0] ** 2 + wide[1] ** 2 + wide[2] ** 2 + wide[3] ** 2)
    fin = slice(12, None)  # longdouble squares overflow at 1e30 in fp32's reference only
    np.testing.assert_allclose(run("norm3d", dtype, x, y, z)[fin], n3.astype(dtype)[fin], **tol)
    np.testing.assert_allclose(run("rnorm3d", dtype, x, y, z)[fin], (1 / n3).astype(dtype)[fin], **tol)
    np.testing.assert_allclose(run("norm4d", dtype, x, y, z, w)[fin], n4.astype(dtype)[fin], **tol)
    np.testing.assert_allclose(run("rnorm4d", dtype, x, y, z, w)[fin], (1 / n4).astype(dtype)[fin], **tol)
    e = floats(dtype, scale=10)
    np.testing.assert_allclose(run("exp10", dtype, e), (10.0 ** e.astype(np.longdouble)).astype(dtype),
                               rtol=2e-6 if dtype == np.float32 else 1e-14)
    p = floats(dtype, scale=100)
    p[16:20] = [0.5, 1.5, -2.5, 1e7]
    r = np.fmod(p.astype(np.longdouble), 2)
    atol = 1e-6 if dtype == np.float32 else 1e-15
    np.testing.assert_allclose(run("sinpi", dtype, p), np.sin(np.pi * r).astype(dtype), rtol=0, atol=atol)
    np.testing.assert_allclose(run("cospi", dtype, p), np.cos(np.pi * r).astype(dtype), rtol=0, atol=atol)
    q = np.abs(floats(dtype)) + 1
    np.testing.assert_allclose(run("rcbrt", dtype, q), (1 / np.cbrt(q.astype(np.longdouble))).astype(dtype), **tol)


@pytest.mark.parametrize("fn, nargs", [("erfc", 1), ("lgamma", 1), ("j0", 1), ("remainder", 2), ("fma_rz", 3)])
def test_unsupported_names_refuse(fn, nargs):
    x = np.ones(16, np.float32)
    with pytest.raises(triton.CompilationError, match=f"libdevice.{fn} is not supported"):
        run(fn, np.float32, *([x] * nargs))


def test_directed_fp64_mul_refuses():
    x = np.ones(16, np.float64)
    with pytest.raises(triton.CompilationError, match="directed rounding of an fp64"):
        run("mul_ru", np.float64, x, x)


def test_signature_mismatch_names_upstream_signatures():
    with pytest.raises(triton.CompilationError, match=r"libdevice.popc: no signature for fp32"):
        run("popc", np.int32, np.ones(16, np.float32))


def test_upstream_names_all_present():
    names = ("clz popc byte_perm mulhi mul24 brev sad ffs hadd rhadd signbit copysign nextafter hypot rhypot "
             "norm3d rnorm3d norm4d rnorm4d exp10 sinpi cospi rcbrt ldexp scalbn ilogb logb fdim llrint llround "
             "nearbyint saturatef fast_dividef fast_expf fast_powf int_as_float float_as_uint hiloint2double "
             "double2hiint float2int_rd float2ull_ru double2ll_rz ll2float_ru ull2double_rd int2double_rn "
             "double2float_ru add_rz sub_rd mul_ru div_rz rcp_rd sqrt_ru fma_rn").split()
    missing = [n for n in names if not hasattr(libdevice, n)]
    assert not missing
    assert tl is not None
