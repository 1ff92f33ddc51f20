"""The rest of upstream's libdevice surface (its names and dtypes), composed from tile
ops: signbit, ldexp/scalbn (exponent arithmetic, one rounding), ilogb/logb, fdim,
saturatef, hypot and the norms, exp10, sinpi/cospi, rcbrt, nearbyint and the fast_*
aliases. Functions with no exact composition here (erfc, the gamma and Bessel functions,
remainder, fma_rz/rd/ru, ...) raise a CompilationError naming them instead of returning
an approximation.
"""
from triton.language import core as tl
from triton.language import math as _math
from triton.language.core import builtin
from triton.language.extra.cpu.libdevice_bits import _F1, _F2, _FLOAT, _INF, _check, _splat
from triton.language.math import copysign, pow, log10, tan  # noqa: F401

# ---- float classification and steps ------------------------------------------------------

@builtin
def signbit(x):
    (x,) = _check("signbit", [x], *_F1)
    n = x.dtype.primitive_bitwidth
    return ((x.to(_FLOAT[x.dtype.name][1], bitcast=True) >> (n - 1)) & 1).to(tl.int32)


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
