"""Upstream's libdevice conversions and arithmetic in a rounding mode (`_rn`, `_rz`,
`_rd`, `_ru`), exact: a result computed in round-to-nearest is moved one ulp when its
exact error (TwoSum, a wider product or quotient, or the conversion back) shows it on
the wrong side; float -> int conversions saturate (NaN: 0). fp64 mul/div/rcp/sqrt in a
directed mode have no exact composition here and are a CompilationError.
"""
from triton.language import core as tl
from triton.language import math as _math
from triton.language.core import builtin
from triton.language.extra.cpu.libdevice_bits import _F1, _F2, _FLOAT, _INF, _MAX, _check, _splat
from triton.language.math import copysign

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


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in ("tl", "builtin")]
