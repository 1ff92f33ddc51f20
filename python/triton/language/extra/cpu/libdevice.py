"""libdevice for CPUs (spine-triton's triton.language.extra.cpu.libdevice).

Every function lowers to Tritium's own vectorised math (compiler/src/lo_math.c);
unlike spine-triton at HEAD, acos/asin/.../tan all work.
"""
from triton.language.core import (  # noqa: F401
    _binop, _ATAN2, _MOD, _POW, _math1, builtin, cos, erf, exp, exp2, floor, ceil, log, log2, rsqrt, sin, sqrt, tanh,
    abs, div_rn, fdiv,
)
from triton.language.math import (  # noqa: F401
    acos, acosh, asin, asinh, atan, atanh, cbrt, cosh, expm1, isnan, isinf, isfinited, finitef, log10, log1p,
    rint, round, sinh, tan, trunc,
)
from triton.language import core as _core


@builtin
def pow(x, y):  # noqa: A001
    return _binop(_POW, x, y)


@builtin
def atan2(y, x):
    return _binop(_ATAN2, y, x)


@builtin
def fmod(x, y):
    return _binop(_MOD, x, y)  # float `%` is C fmod (exact)


@builtin
def gelu_none(x):
    return 0.5 * x * (1.0 + erf(x * 0.7071067811865476))


@builtin
def gelu_tanh(x):
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * x * (1.0 + 0.044715 * x * x)))


@builtin
def silu(x):
    return x / (1.0 + exp(0.0 - x))


@builtin
def relu(x):
    return _core.maximum(x, 0.0)


from triton.language.extra.cpu.libdevice_bits import *  # noqa: F401,F403,E402 (upstream's other names)
from triton.language.extra.cpu.libdevice_round import *  # noqa: F401,F403,E402
from triton.language.extra.cpu.libdevice_more import *  # noqa: F401,F403,E402
