"""triton.language.math: element-wise math functions (upstream module layout)."""
from .core import (  # noqa: F401
    abs, cdiv, ceil, clamp, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, maximum, minimum,
    rsqrt, sigmoid, sin, softmax, sqrt, sqrt_rn, tanh, umulhi,
)
from .core import _math1, builtin, _binop, _POW, _ATAN2, _COPYSIGN

log10 = _math1("log10")
log1p = _math1("log1p")
expm1 = _math1("expm1")
tan = _math1("tan")
asin = _math1("asin")
acos = _math1("acos")
atan = _math1("atan")
sinh = _math1("sinh")
cosh = _math1("cosh")
asinh = _math1("asinh")
acosh = _math1("acosh")
atanh = _math1("atanh")
cbrt = _math1("cbrt")
trunc = _math1("trunc")
round = _math1("round")  # noqa: A001
rint = _math1("rint")
isnan = _math1("isnan")
isinf = _math1("isinf")
isfinited = _math1("isfinite")
finitef = _math1("isfinite")


@builtin
def pow(x, y):  # noqa: A001
    return _binop(_POW, x, y)


@builtin
def atan2(y, x):
    return _binop(_ATAN2, y, x)


@builtin
def copysign(x, y):
    return _binop(_COPYSIGN, x, y)
