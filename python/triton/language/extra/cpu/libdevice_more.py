"""The rest of upstream's libdevice surface (its names, argument and result dtypes),
composed from tile ops: bit counts and permutations, high and 24-bit multiplies,
bit casts, float <-> int conversions in every rounding mode, directed-rounding
arithmetic, nextafter, ldexp/ilogb, hypot and norms, sinpi/cospi, exp10 and aliases.

Directed rounding is exact: a result computed in round-to-nearest is moved one ulp
when its exact error (TwoSum, a wider product or quotient, or the conversion back)
shows it on the wrong side. Functions with no exact composition here (erfc, the
gamma and Bessel functions, fp64 directed mul/div/sqrt, fma_rz/rd/ru, ...) raise a
CompilationError naming them instead of returning an approximation.
"""
from triton.language import core as tl
from triton.language import math as _math
from triton.language.core import builtin
from triton.language.math import copysign, pow, log10, tan  # noqa: F401

_INF = float("inf")
_FLOAT = {"fp32": (tl.float32, tl.int32, 23, 127), "fp64": (tl.float64, tl.int64, 52, 1023)}
_MAX = {"fp32": 3.4028234663852886e38, "fp64": 1.7976931348623157e308}


def _t(x):
    return tl._to_tensor(x)


def _splat(like, v, dtype):
    """v as a tensor of dtype shaped like `like` (a scalar for a scalar)."""
    return tl.full(like.shape, v, dtype) if like.shape else tl._to_tensor(v).to(dtype)


def _check(name, args, *sigs):
    """Upstream's signature table of `name`: the args' dtype names must be one of sigs."""
    got = tuple(_t(a).dtype.name for a in args)
    if got not in sigs:
        raise ValueError(f"libdevice.{name}: no signature for {', '.join(got)}; upstream's: "
                         + "; ".join("(" + ", ".join(s) + ")" for s in sigs))
    return [_t(a) for a in args]


_F1 = (("fp32",), ("fp64",))
_F2 = (("fp32", "fp32"), ("fp64", "fp64"))


def _unsigned(x):
    return x.to(tl.uint64 if x.dtype.primitive_bitwidth == 64 else tl.uint32, bitcast=True)


def _popc(u, n):
    m1, m2, m4, h = (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101)
    if n == 32:
        m1, m2, m4, h = m1 & 0xFFFFFFFF, m2 & 0xFFFFFFFF, m4 & 0xFFFFFFFF, h & 0xFFFFFFFF
    u = u - ((u >> 1) & m1)
    u = (u & m2) + ((u >> 2) & m2)
    u = (u + (u >> 4)) & m4
    return ((u * h) >> (n - 8)).to(tl.int32)


# ---- integer bit functions ---------------------------------------------------------------

@builtin
def popc(x):
    (x,) = _check("popc", [x], ("int32",), ("int64",))
    return _popc(_unsigned(x), x.dtype.primitive_bitwidth)


@builtin
def clz(x):
    (x,) = _check("clz", [x], ("int32",), ("int64",))
    n = x.dtype.primitive_bitwidth
    u = _unsigned(x)
    s = 1
    while s < n:
        u = u | (u >> s)
        s *= 2
    return n - _popc(u, n)


@builtin
def brev(x):
    (x,) = _check("brev", [x], ("int32",), ("int64",))
    n = x.dtype.primitive_bitwidth
    u = _unsigned(x)
    masks = [(1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F), (8, 0x00FF00FF00FF00FF),
             (16, 0x0000FFFF0000FFFF)]
    for s, m in masks[:4 if n == 32 else 5]:
        m = m & ((1 << n) - 1)
        u = ((u >> s) & m) | ((u & m) << s)
    u = (u >> (n // 2)) | (u << (n // 2))
    return u.to(x.dtype, bitcast=True)


@builtin
def ffs(x):
    (x,) = _check("ffs", [x], ("int32",), ("int64",))
    n = x.dtype.primitive_bitwidth
    u = _unsigned(x)
    low = u & (~u + 1)
    return tl.where(u == 0, 0, _popc(low - 1, n) + 1)


@builtin
def mulhi(x, y):
    x, y = _check("mulhi", [x, y], ("int32", "int32"), ("uint32", "uint32"), ("int64", "int64"),
                  ("uint64", "uint64"))
    if x.dtype.primitive_bitwidth == 32:
        w = tl.int64 if x.dtype.is_int_signed() else tl.uint64
        return ((x.to(w) * y.to(w)) >> 32).to(x.dtype)
    if not x.dtype.is_int_signed():
        return tl.umulhi(x, y)
    hi = tl.umulhi(_unsigned(x), _unsigned(y)).to(tl.int64, bitcast=True)  # signed: subtract the wraps
    return hi - tl.where(x < 0, y, 0) - tl.where(y < 0, x, 0)


@builtin
def mul24(x, y):
    x, y = _check("mul24", [x, y], ("int32", "int32"), ("uint32", "uint32"))
    if x.dtype.is_int_signed():
        return ((x << 8) >> 8) * ((y << 8) >> 8)
    return (x & 0xFFFFFF) * (y & 0xFFFFFF)


@builtin
def sad(x, y, z):
    x, y, z = _check("sad", [x, y, z], ("int32", "int32", "uint32"), ("uint32", "uint32", "uint32"))
    d = x.to(tl.int64) - y.to(tl.int64)
    return (tl.where(d < 0, -d, d) + z.to(tl.int64)).to(x.dtype)


@builtin
def hadd(x, y):
    x, y = _check("hadd", [x, y], ("int32", "int32"), ("uint32", "uint32"))
    w = tl.int64 if x.dtype.is_int_signed() else tl.uint64
    return ((x.to(w) + y.to(w)) >> 1).to(x.dtype)


@builtin
def rhadd(x, y):
    x, y = _check("rhadd", [x, y], ("int32", "int32"), ("uint32", "uint32"))
    w = tl.int64 if x.dtype.is_int_signed() else tl.uint64
    return ((x.to(w) + y.to(w) + 1) >> 1).to(x.dtype)


@builtin
def byte_perm(x, y, s):
    x, y, s = _check("byte_perm", [x, y, s], ("int32", "int32", "int32"))
    v = (_unsigned(y).to(tl.uint64) << 32) | _unsigned(x).to(tl.uint64)
    su = _unsigned(s)
    r = None
    for i in range(4):
        sel = ((su >> (4 * i)) & 7).to(tl.uint64)
        b = ((v >> (sel * 8)) & 0xFF) << (8 * i)
        r = b if r is None else r | b
    return r.to(tl.uint32).to(tl.int32, bitcast=True)


# ---- bit casts -------------------------------------------------------------------------

def _bitcast(name, sig, dst):
    @builtin
    def f(x):
        (x,) = _check(name, [x], sig)
        return x.to(dst, bitcast=True)
    f.__name__ = name
    return f


int_as_float = _bitcast("int_as_float", ("int32",), tl.float32)
float_as_int = _bitcast("float_as_int", ("fp32",), tl.int32)
uint_as_float = _bitcast("uint_as_float", ("uint32",), tl.float32)
float_as_uint = _bitcast("float_as_uint", ("fp32",), tl.int32)  # upstream's result dtype
longlong_as_double = _bitcast("longlong_as_double", ("int64",), tl.float64)
double_as_longlong = _bitcast("double_as_longlong", ("fp64",), tl.int64)


@builtin
def hiloint2double(hi, lo):
    hi, lo = _check("hiloint2double", [hi, lo], ("int32", "int32"))
    return ((hi.to(tl.int64) << 32) | _unsigned(lo).to(tl.int64)).to(tl.float64, bitcast=True)


@builtin
def double2loint(x):
    (x,) = _check("double2loint", [x], ("fp64",))
    return x.to(tl.int64, bitcast=True).to(tl.int32)


@builtin
def double2hiint(x):
    (x,) = _check("double2hiint", [x], ("fp64",))
    return (x.to(tl.int64, bitcast=True) >> 32).to(tl.int32)


# ---- float classification and steps ------------------------------------------------------

@builtin
def signbit(x):
    (x,) = _check("signbit", [x], *_F1)
    n = x.dtype.primitive_bitwidth
    return ((x.to(_FLOAT[x.dtype.name][1], bitcast=True) >> (n - 1)) & 1).to(tl.int32)


def _nextafter(x, y):
    ity = _FLOAT[x.dtype.name][1]
    i = x.to(ity, bitcast=True)
    away = (x > 0) == (y > x)
    step = tl.where(away, i + 1, i - 1).to(x.dtype, bitcast=True)
    tiny = copysign(_splat(x, 1, ity).to(x.dtype, bitcast=True), y)
    r = tl.where(x == 0, tiny, step)
    r = tl.where(x == y, y, r)
    return tl.where((x != x) | (y != y), x + y, r)


@builtin
def nextafter(x, y):
    x, y = _check("nextafter", [x, y], *_F2)
    return _nextafter(x, y)


def _toward(f, direction):
    """f moved one ulp toward +inf (direction 1) or -inf (-1)."""
    return _nextafter(f, _splat(f, direction * _INF, f.dtype))


def _scale2(x, k):
    """x * 2**k, exact (one rounding when the result is subnormal): exponent arithmetic."""
    fty, ity, mant, bias = _FLOAT[x.dtype.name]
    p = mant + 1
    k = tl.minimum(tl.maximum(k.to(ity), -4 * bias), 4 * bias)
    small = tl.abs(x) < 2.0 ** (1 - bias)
    xn = tl.where(small, x * 2.0 ** p, x)  # exact: normalises subnormals
    k = tl.where(small, k - p, k)
    bits = xn.to(ity, bitcast=True)
    e = (bits >> mant) & (2 * bias + 1)
    target = e + k
    normal = (bits + (k << mant)).to(fty, bitcast=True)
    c = p + 2  # a subnormal result: exponent raised by c exactly, then one rounding multiply
    sub = (bits + ((k + c) << mant)).to(fty, bitcast=True) * 2.0 ** -c
    zero = x * 0.0
    inf = copysign(_splat(x, _INF, fty), x)
    r = tl.where(target >= 2 * bias + 1, inf, tl.where(target >= 1, normal, tl.where(target < -p - 1, zero, sub)))
    return tl.where((x == 0) | (x != x) | (tl.abs(x) == _INF), x, r)


@builtin
def ldexp(x, n):
    x, n = _check("ldexp", [x, n], ("fp32", "int32"), ("fp64", "int32"))
    return _scale2(x, n)


@builtin
def scalbn(x, n):
    x, n = _check("scalbn", [x, n], ("fp32", "int32"), ("fp64", "int32"))
    return _scale2(x, n)


def _ilogb(x):
    fty, ity, mant, bias = _FLOAT[x.dtype.name]
    small = tl.abs(x) < 2.0 ** (1 - bias)
    xn = tl.where(small, x * 2.0 ** (mant + 1), x)
    e = ((xn.to(ity, bitcast=True) >> mant) & (2 * bias + 1)).to(tl.int32) - bias
    return tl.where(small, e - (mant + 1), e)


@builtin
def ilogb(x):
    (x,) = _check("ilogb", [x], *_F1)
    e = _ilogb(x)
    e = tl.where(tl.abs(x) == _INF, 2147483647, e)
    return tl.where((x == 0) | (x != x), -2147483648, e)


@builtin
def logb(x):
    (x,) = _check("logb", [x], *_F1)
    e = _ilogb(x).to(x.dtype)
    e = tl.where(x == 0, -_INF, e)
    return tl.where(tl.abs(x) == _INF, _INF, tl.where(x != x, x, e))


@builtin
def fdim(x, y):
    x, y = _check("fdim", [x, y], *_F2)
    return tl.where((x != x) | (y != y), x + y, tl.where(x > y, x - y, 0.0))


@builtin
def saturatef(x):
    (x,) = _check("saturatef", [x], ("fp32",))
    return tl.where(x > 0, tl.minimum(x, 1.0), 0.0)  # NaN -> 0, as CUDA's


# ---- conversions ---------------------------------------------------------------------------

_ROUND = {"rn": _math.rint, "rz": _math.trunc, "rd": tl.floor, "ru": tl.ceil}


def _to_int(x, mode, bits, signed, out):
    """Rounds x by mode and converts, saturating at the integer type's bounds (NaN: 0)."""
    r = _ROUND[mode](x)
    lo, hi = (-2.0 ** (bits - 1), 2.0 ** (bits - 1)) if signed else (0.0, 2.0 ** bits)
    ity = {(32, True): tl.int32, (32, False): tl.uint32, (64, True): tl.int64, (64, False): tl.uint64}[bits, signed]
    inside = (r >= lo) & (r < hi)
    v = tl.where(inside, r, 0.0).to(ity)
    if v.dtype != out:
        v = v.to(out, bitcast=True)
    top, low = ((1 << (bits - 1)) - 1, -(1 << (bits - 1))) if signed else (-1, 0)  # bit patterns in out
    v = tl.where(r >= hi, top, tl.where(inside, v, low))
    return tl.where(x != x, 0, v)


def _f2i(name, src, bits, signed, out, mode):
    @builtin
    def f(x):
        (x,) = _check(name, [x], (src,))
        return _to_int(x, mode, bits, signed, out)
    f.__name__ = name
    return f


for _m in ("rn", "rz", "rd", "ru"):
    for _src, _pre in (("fp32", "float"), ("fp64", "double")):
        globals()[f"{_pre}2int_{_m}"] = _f2i(f"{_pre}2int_{_m}", _src, 32, True, tl.int32, _m)
        globals()[f"{_pre}2uint_{_m}"] = _f2i(f"{_pre}2uint_{_m}", _src, 32, False, tl.int32, _m)
        globals()[f"{_pre}2ll_{_m}"] = _f2i(f"{_pre}2ll_{_m}", _src, 64, True, tl.int64, _m)
        globals()[f"{_pre}2ull_{_m}"] = _f2i(f"{_pre}2ull_{_m}", _src, 64, False, tl.int64, _m)


@builtin
def llrint(x):
    (x,) = _check("llrint", [x], *_F1)
    return _to_int(x, "rn", 64, True, tl.int64)


@builtin
def llround(x):
    (x,) = _check("llround", [x], *_F1)
    return _to_int(_math.round(x), "rz", 64, True, tl.int64)


def _directed(f, exact_gt, exact_lt, mode):
    """f (round-to-nearest) moved to mode's side, given whether the exact value is above
    (exact_gt) or below (exact_lt) it."""
    if mode == "rn":
        return f
    if mode == "ru":
        return tl.where(exact_gt, _toward(f, 1), f)
    if mode == "rd":
        return tl.where(exact_lt, _toward(f, -1), f)
    return tl.where((f > 0) & exact_lt, _toward(f, -1), tl.where((f < 0) & exact_gt, _toward(f, 1), f))


def _narrow(x64, mode):
    """fp64 -> fp32 in mode, exact (the conversion back is exact)."""
    f = x64.to(tl.float32)
    back = f.to(tl.float64)
    return _directed(f, back < x64, back > x64, mode)


def _i2f(name, src, dst, mode):
    @builtin
    def f(x):
        (x,) = _check(name, [x], (src,))
        r = x.to(dst)
        if mode == "rn":
            return r
        bits = x.dtype.primitive_bitwidth
        bound = 2.0 ** (bits - 1) if x.dtype.is_int_signed() else 2.0 ** bits
        over = r >= bound  # rounded up past the type: above the exact value
        back = tl.where(over, 0.0, r).to(x.dtype)
        return _directed(r, ~over & (back < x), over | (back > x), mode)
    f.__name__ = name
    return f


for _m in ("rn", "rz", "rd", "ru"):
    for _pre, _src in (("int", "int32"), ("uint", "uint32"), ("ll", "int64"), ("ull", "uint64")):
        globals()[f"{_pre}2float_{_m}"] = _i2f(f"{_pre}2float_{_m}", _src, tl.float32, _m)
    for _pre, _src in (("ll", "int64"), ("ull", "uint64")):
        globals()[f"{_pre}2double_{_m}"] = _i2f(f"{_pre}2double_{_m}", _src, tl.float64, _m)
int2double_rn = _i2f("int2double_rn", "int32", tl.float64, "rn")
uint2double_rn = _i2f("uint2double_rn", "uint32", tl.float64, "rn")


def _d2f(mode):
    @builtin
    def f(x):
        (x,) = _check(f"double2float_{mode}", [x], ("fp64",))
        return _narrow(x, mode)
    f.__name__ = f"double2float_{mode}"
    return f


for _m in ("rn", "rz", "rd", "ru"):
    globals()[f"double2float_{_m}"] = _d2f(_m)


# ---- arithmetic in a rounding mode -------------------------------------------------------------

def _add_mode(a, b, mode):
    s = a + b
    if mode == "rn":
        return s
    bb = s - a  # TwoSum: s + e == a + b exactly (no overflow)
    e = (a - (s - bb)) + (b - bb)
    r = _directed(s, e > 0, e < 0, mode)
    big = _MAX[a.dtype.name]
    ovf = (tl.abs(s) == _INF) & (tl.abs(a) != _INF) & (tl.abs(b) != _INF)  # rounded up to inf
    if mode == "rz":
        return tl.where(ovf, copysign(_splat(s, big, s.dtype), s), r)
    if mode == "rd":
        return tl.where(ovf & (s > 0), big, r)
    return tl.where(ovf & (s < 0), -big, r)


def _arith(name, op, sigs):
    mode = name[-2:]

    @builtin
    def f(*args):
        return op(*_check(name, list(args), *sigs), mode)
    f.__name__ = name
    return f


def _wide32(fn):
    """An fp32 op computed in fp64 and narrowed in the mode: exact for mul (the product
    fits), div and sqrt (an inexact fp32 quotient or root is never within an fp64 ulp
    of an fp32 number). fp64 has no exact composition here."""
    def op(*args):
        *xs, mode = args
        if xs[0].dtype.name != "fp32":
            if mode == "rn":
                return fn(*xs)
            raise ValueError("directed rounding of an fp64 mul, div, rcp or sqrt is not supported by the CPU backend")
        if mode == "rn":
            return fn(*xs)
        return _narrow(fn(*[x.to(tl.float64) for x in xs]), mode)
    return op


def _add(a, b, mode):
    return _add_mode(a, b, mode)


def _sub(a, b, mode):
    return _add_mode(a, -b, mode)


for _m in ("rn", "rz", "rd", "ru"):
    globals()[f"add_{_m}"] = _arith(f"add_{_m}", _add, _F2)
    globals()[f"sub_{_m}"] = _arith(f"sub_{_m}", _sub, _F2)
    globals()[f"mul_{_m}"] = _arith(f"mul_{_m}", _wide32(lambda a, b: a * b), _F2)
    globals()[f"div_{_m}"] = _arith(f"div_{_m}", _wide32(lambda a, b: a / b), _F2)
    globals()[f"rcp_{_m}"] = _arith(f"rcp_{_m}", _wide32(lambda a: 1.0 / a), _F1)
    globals()[f"sqrt_{_m}"] = _arith(f"sqrt_{_m}", _wide32(tl.sqrt), _F1)


@builtin
def fma_rn(x, y, z):
    x, y, z = _check("fma_rn", [x, y, z], ("fp32", "fp32", "fp32"), ("fp64", "fp64", "fp64"))
    return tl.fma(x, y, z)


@builtin
def fast_dividef(x, y):
    x, y = _check("fast_dividef", [x, y], ("fp32", "fp32"))
    return x / y


# ---- transcendental compositions --------------------------------------------------------------

@builtin
def exp10(x):
    (x,) = _check("exp10", [x], *_F1)
    return pow(_splat(x, 10.0, x.dtype), x)


def _pi_mul(x, cos):
    r = x % 2.0  # exact (fmod): sin(pi x) has period 2
    if cos:
        return tl.cos(r * 3.141592653589793)
    s = tl.sin(r * 3.141592653589793)
    return tl.where(r == _math.rint(r), r * 0.0, s)  # exact zeros at integers, signed as x


@builtin
def sinpi(x):
    (x,) = _check("sinpi", [x], *_F1)
    return _pi_mul(x, False)


@builtin
def cospi(x):
    (x,) = _check("cospi", [x], *_F1)
    c = _pi_mul(tl.abs(x), True)
    r = tl.abs(x) % 2.0
    h = r - _math.rint(r)
    return tl.where((h == 0.5) | (h == -0.5), 0.0, c)


def _norm(args):
    m = None
    for a in args:
        m = tl.abs(a) if m is None else tl.maximum(m, tl.abs(a))
    safe = tl.where(m == 0, 1.0, m)
    s = None
    for a in args:
        q = a / safe
        s = q * q if s is None else s + q * q
    r = tl.where(m == 0, 0.0, m * tl.sqrt(s))
    inf = None
    nan = None
    for a in args:
        i = tl.abs(a) == _INF
        n = a != a
        inf = i if inf is None else inf | i
        nan = n if nan is None else nan | n
    return tl.where(inf, _INF, tl.where(nan, m + s, r))


@builtin
def hypot(x, y):
    return _norm(_check("hypot", [x, y], *_F2))


@builtin
def rhypot(x, y):
    return 1.0 / _norm(_check("rhypot", [x, y], *_F2))


_F3 = (("fp32",) * 3, ("fp64",) * 3)
_F4 = (("fp32",) * 4, ("fp64",) * 4)


@builtin
def norm3d(x, y, z):
    return _norm(_check("norm3d", [x, y, z], *_F3))


@builtin
def rnorm3d(x, y, z):
    return 1.0 / _norm(_check("rnorm3d", [x, y, z], *_F3))


@builtin
def norm4d(x, y, z, w):
    return _norm(_check("norm4d", [x, y, z, w], *_F4))


@builtin
def rnorm4d(x, y, z, w):
    return 1.0 / _norm(_check("rnorm4d", [x, y, z, w], *_F4))


@builtin
def rcbrt(x):
    (x,) = _check("rcbrt", [x], *_F1)
    return 1.0 / _math.cbrt(x)


@builtin
def nearbyint(x):
    (x,) = _check("nearbyint", [x], *_F1)
    return _math.rint(x)


fast_sinf, fast_cosf, fast_log2f, fast_logf, fast_expf = tl.sin, tl.cos, tl.log2, tl.log, tl.exp
fast_tanf, fast_log10f, fast_exp10f, fast_powf = tan, log10, exp10, pow


def _missing(name):
    @builtin
    def f(*args):
        raise ValueError(f"libdevice.{name} is not supported by the CPU backend (no exact composition yet)")
    f.__name__ = name
    return f


for _n in ("erfc", "erfcx", "erfinv", "erfcinv", "normcdf", "normcdfinv", "lgamma", "tgamma", "j0", "j1", "y0",
           "y1", "jn", "yn", "cyl_bessel_i0", "cyl_bessel_i1", "remainder", "rcp64h", "rsqrt_rn", "fma_rz",
           "fma_rd", "fma_ru"):
    globals()[_n] = _missing(_n)


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in ("tl", "builtin")]
