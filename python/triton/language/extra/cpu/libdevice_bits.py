"""Upstream's libdevice integer and bit functions (its names, argument and result
dtypes), composed from tile ops: popc/clz/brev/ffs, mulhi/mul24/sad/hadd/rhadd/byte_perm
and the bit casts; and the helpers the other libdevice_* modules share (_check: an
argument dtype list must be one of upstream's signatures, else a ValueError naming them).
"""
from triton.language import core as tl
from triton.language.core import builtin

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


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in ("tl", "builtin")]
