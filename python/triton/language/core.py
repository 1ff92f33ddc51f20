"""triton.language core: dtypes, constexpr, tensor and the builtins kernels call.

Everything here runs while a kernel is being traced by the code generator
(triton/compiler/code_generator.py). Builtins turn their arguments into builder
calls (the C extension); the type and shape rules and their error messages live in
C (compiler/src/ir_build*.c). This module only unwraps constexprs, converts Python
arguments and wraps the returned handles into `tensor` objects.
"""
from __future__ import annotations

import builtins as _py
import functools
import threading
from typing import Any, Sequence

from triton._C import tritium as _C

# ---- the builder of the kernel being traced -----------------------------------------

_state = threading.local()


class _Builder:
    """The C builder plus a cache of tl types by type id."""

    def __init__(self):
        self.c = _C.Builder()
        self._types: dict[int, dtype] = {}

    def ty(self, tid: int) -> "dtype":
        t = self._types.get(tid)
        if t is None:
            d = self.c.type_desc(tid)
            if d[0] == "scalar":
                t = _DTYPES[d[1]]
            elif d[0] == "ptr":
                t = pointer_type(self.ty(d[1]), d[2])
            else:
                t = block_type(self.ty(d[1]), list(d[2]))
            self._types[tid] = t
        return t

    def wrap(self, ref: int) -> "tensor":
        return tensor(ref, self.ty(self.c.type_of(ref)))

    def tid(self, t: "dtype") -> int:
        return t.to_ir(self)


def _builder() -> _Builder:
    b = getattr(_state, "builder", None)
    if b is None:
        raise RuntimeError("Cannot call @triton.jit'd outside of the scope of a kernel")
    return b


class _set_builder:
    def __init__(self, b):
        self.b = b

    def __enter__(self):
        self.prev = getattr(_state, "builder", None)
        _state.builder = self.b
        return self.b

    def __exit__(self, *exc):
        _state.builder = self.prev


def builtin(fn):
    """Marks a function that the code generator calls directly while tracing."""
    fn.__triton_builtin__ = True
    return fn


# ---- dtypes (codes are IrDtype's, compiler/include/compiler.h, read from _C.DTYPES) ----

_C_DTYPE_CODES = {name: (code, bits) for code, (name, bits) in enumerate(_C.DTYPES)}


class dtype:
    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]

    class SIGNEDNESS:
        SIGNED = 0
        UNSIGNED = 1

    class KIND:
        BOOLEAN = 0
        INTEGRAL = 1
        FLOATING = 2

    def __init__(self, name: str, code: int = -1, bits: int = 0):
        if code == -1 and type(self) is dtype and name in _C_DTYPE_CODES:  # tl.dtype("int8")
            code, bits = _C_DTYPE_CODES[name]
        self.name = name
        self.code = code
        self.primitive_bitwidth = bits

    # predicates (upstream names)
    def is_floating(self): return self.name in dtype.FP_TYPES
    def is_standard_floating(self): return self.name in dtype.STANDARD_FP_TYPES
    def is_fp16(self): return self.name == "fp16"
    def is_bf16(self): return self.name == "bf16"
    def is_fp32(self): return self.name == "fp32"
    def is_fp64(self): return self.name == "fp64"
    def is_fp8(self): return self.name.startswith("fp8")
    def is_fp8e4nv(self): return self.name == "fp8e4nv"
    def is_fp8e4b8(self): return self.name == "fp8e4b8"
    def is_fp8e4b15(self): return self.name == "fp8e4b15"
    def is_fp8e5(self): return self.name == "fp8e5"
    def is_fp8e5b16(self): return self.name == "fp8e5b16"
    def is_int(self): return self.name.startswith("int") or self.name.startswith("uint")
    def is_bool(self): return self.name == "int1"
    def is_int1(self): return self.name == "int1"
    def is_int_signed(self): return self.name in dtype.SINT_TYPES
    def is_int_unsigned(self): return self.name in dtype.UINT_TYPES and self.name != "int1" or self.name.startswith("uint")
    def is_ptr(self): return False
    def is_block(self): return False
    def is_void(self): return self.name == "void"

    @property
    def int_bitwidth(self): return self.primitive_bitwidth

    @property
    def int_signedness(self):
        return dtype.SIGNEDNESS.SIGNED if self.is_int_signed() else dtype.SIGNEDNESS.UNSIGNED

    # (mantissa bits, exponent bias) of the float dtypes (upstream's values; the fp8
    # formats' conversions are the C compiler's, ir_build_fp8.c)
    _FP_LAYOUT = {"fp8e4b15": (3, 15), "fp8e4nv": (3, 7), "fp8e4b8": (3, 8), "fp8e5": (2, 15), "fp8e5b16": (2, 16),
                  "fp16": (10, 15), "bf16": (7, 127), "fp32": (23, 127), "fp64": (52, 1023)}

    @property
    def fp_mantissa_width(self):
        return dtype._FP_LAYOUT[self.name][0]

    @property
    def exponent_bias(self):
        return dtype._FP_LAYOUT[self.name][1]

    def kind(self):
        if self.is_bool():
            return dtype.KIND.BOOLEAN
        return dtype.KIND.FLOATING if self.is_floating() else dtype.KIND.INTEGRAL

    def get_int_max_value(self):
        return (1 << (self.primitive_bitwidth - (1 if self.is_int_signed() else 0))) - 1

    def get_int_min_value(self):
        return -(1 << (self.primitive_bitwidth - 1)) if self.is_int_signed() else 0

    @property
    def scalar(self): return self

    def to_ir(self, b: _Builder) -> int:
        return b.c.t_scalar(self.code)

    def with_element_ty(self, t): return t

    def __eq__(self, other):
        other = _unwrap(other)
        return isinstance(other, dtype) and type(other) is type(self) and self.name == other.name

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"triton.language.{self.name}"

    @property
    def cache_key_part(self):
        return self.name


class pointer_type(dtype):
    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        element_ty = _unwrap(element_ty)
        super().__init__(f"pointer<{element_ty}>", -1, 64)
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const

    def is_ptr(self): return True
    def is_int(self): return False
    def is_floating(self): return False
    def is_const(self): return self.const

    def to_ir(self, b):
        return b.c.t_ptr(self.element_ty.to_ir(b), 0)

    def __eq__(self, other):
        other = _unwrap(other)
        return isinstance(other, pointer_type) and self.element_ty == other.element_ty

    def __hash__(self):
        return hash(("ptr", self.element_ty))

    def __repr__(self):
        return f"pointer<{self.element_ty}>"


class block_type(dtype):
    def __init__(self, element_ty: dtype, shape):
        self.element_ty = element_ty
        self.shape = tuple(int(_unwrap(s)) for s in shape)
        self.numel = 1
        for s in self.shape:
            self.numel *= s
        super().__init__(f"<{list(self.shape)}, {element_ty}>", -1, element_ty.primitive_bitwidth)

    def is_block(self): return True
    def is_ptr(self): return False

    @property
    def scalar(self): return self.element_ty

    def get_block_shapes(self): return list(self.shape)

    def to_ir(self, b):
        return b.c.t_tensor(self.element_ty.to_ir(b), list(self.shape))

    def __eq__(self, other):
        other = _unwrap(other)
        return isinstance(other, block_type) and self.element_ty == other.element_ty and self.shape == other.shape

    def __hash__(self):
        return hash(("block", self.element_ty, self.shape))


# one dtype per IrDtype, indexed by its code (the C extension's table)
_DTYPES = [dtype(name, code, bits) for code, (name, bits) in enumerate(_C.DTYPES)]
_BY_NAME = {d.name: d for d in _DTYPES}
int1, int8, int16, int32, int64 = (_BY_NAME[n] for n in ("int1", "int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_BY_NAME[n] for n in ("uint8", "uint16", "uint32", "uint64"))
float16, bfloat16, float32, float64 = (_BY_NAME[n] for n in ("fp16", "bf16", "fp32", "fp64"))
float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16 = (
    _BY_NAME[n] for n in ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16"))
void = dtype("void")
# aliases
bool_ = int1
fp16, bf16, fp32, fp64 = float16, bfloat16, float32, float64
_BY_NAME.update({"float16": float16, "bfloat16": bfloat16, "float32": float32, "float64": float64, "bool": int1,
                 "i1": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64, "u1": int1, "u8": uint8,
                 "u16": uint16, "u32": uint32, "u64": uint64, "f16": float16, "f32": float32, "f64": float64,
                 "float8e4nv": float8e4nv, "float8e5": float8e5, "float8e4b15": float8e4b15,
                 "float8e4b8": float8e4b8, "float8e5b16": float8e5b16, "float8_e4m3fn": float8e4nv,
                 "float8_e5m2": float8e5, "float8_e4m3fnuz": float8e4b8, "float8_e5m2fnuz": float8e5b16})


def str_to_ty(name: str, layout=None) -> dtype:
    """'*fp32' → pointer_type(float32), 'i32' → int32 (upstream signature strings;
    `layout` is upstream's tensor-descriptor layout, which a CPU does not use)."""
    name = name.strip()
    if name.startswith("*"):
        name = name[1:]
        const = name.startswith("k")
        if const:
            name = name[1:]
        return pointer_type(str_to_ty(name), const=const)
    if name in _BY_NAME:
        return _BY_NAME[name]
    raise ValueError(f"unknown type {name!r}")


# ---- constexpr -------------------------------------------------------------------------

class constexpr:
    """A compile-time value. Arithmetic on constexprs stays constexpr."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __index__(self): return self.value.__index__()
    def __int__(self): return int(self.value)
    def __float__(self): return float(self.value)
    def __bool__(self): return bool(self.value)
    def __hash__(self): return hash(self.value)
    def __call__(self, *args, **kwargs): return self.value(*args, **kwargs)
    def __iter__(self): return iter(self.value)
    def __len__(self): return len(self.value)
    def __getitem__(self, k): return self.value[_unwrap(k)]
    def __getattr__(self, name):
        if name == "value":
            raise AttributeError(name)
        return getattr(self.value, name)


def _cexpr_op(op, reflected=False):
    def f(self, other):
        if isinstance(other, tensor):
            return NotImplemented
        a, b = self.value, _unwrap(other)
        return constexpr(op(b, a) if reflected else op(a, b))
    return f


import operator as _op  # noqa: E402

for _name, _f in [("add", _op.add), ("sub", _op.sub), ("mul", _op.mul), ("truediv", _op.truediv),
                  ("floordiv", _op.floordiv), ("mod", _op.mod), ("pow", _op.pow), ("and", _op.and_),
                  ("or", _op.or_), ("xor", _op.xor), ("lshift", _op.lshift), ("rshift", _op.rshift)]:
    setattr(constexpr, f"__{_name}__", _cexpr_op(_f))
    setattr(constexpr, f"__r{_name}__", _cexpr_op(_f, True))
for _name, _f in [("lt", _op.lt), ("le", _op.le), ("gt", _op.gt), ("ge", _op.ge), ("eq", _op.eq), ("ne", _op.ne)]:
    setattr(constexpr, f"__{_name}__", _cexpr_op(_f))
constexpr.__neg__ = lambda self: constexpr(-self.value)
constexpr.__pos__ = lambda self: constexpr(+self.value)
constexpr.__invert__ = lambda self: constexpr(~self.value)
constexpr.__abs__ = lambda self: constexpr(_py.abs(self.value))


def _unwrap(x):
    return x.value if isinstance(x, constexpr) else x


pi32_t = pointer_type(int32)  # upstream's name


_unwrap_if_constexpr = _unwrap


def _is_num(x):
    return isinstance(x, (int, float, bool))


def _opnd(x):
    """A builder operand: a tensor, or a Python number (literal rules apply in C)."""
    x = _unwrap(x)
    if isinstance(x, tensor) or _is_num(x):
        return x
    if x is None:
        raise ValueError("expected a tensor or a number, got None")
    raise TypeError(f"unsupported operand type {type(x).__name__}")


def _to_tensor(x) -> "tensor":
    x = _unwrap(x)
    if isinstance(x, tensor):
        return x
    b = _builder()
    return b.wrap(b.c.to_value(_opnd(x)))


@builtin
def to_tensor(x):
    """A Python number or constexpr as a scalar tensor (tensors pass through)."""
    return _to_tensor(x)


# ---- tensor -----------------------------------------------------------------------------

# IrBinop / IrUnop codes (compiler.h, ORDER)
_ADD, _SUB, _MUL, _TRUEDIV, _FLOORDIV, _MOD, _AND, _OR, _XOR, _SHL, _SHR, _LT, _LE, _GT, _GE, _EQ, _NE, \
    _LAND, _LOR, _MAX, _MIN, _MAXNAN, _MINNAN, _FDIV, _UMULHI, _POW, _ATAN2, _COPYSIGN = range(28)
_NEG, _PLUS, _INVERT, _NOT = range(4)


def _binop(code, a, b):
    bld = _builder()
    return bld.wrap(bld.c.binop(code, _opnd(a), _opnd(b)))


def _unop(code, a):
    bld = _builder()
    return bld.wrap(bld.c.unop(code, _opnd(a)))


class _Shape(tuple):
    """A tensor's shape: a tuple of constexprs that compares equal to a list or tuple
    of the same ints, as upstream's tl.tuple shapes do (`x.shape == [M, N]`)."""

    def __eq__(self, other):
        other = _unwrap(other)
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(_unwrap(a) == _unwrap(b) for a, b in zip(self, other))
        return False

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = tuple.__hash__


class tensor:
    """A tile value (or a scalar) inside a kernel being traced."""

    def __init__(self, handle: int, type: dtype):
        self.handle = handle
        self.type = type
        self.dtype = type.scalar
        self.shape = _Shape(constexpr(s) for s in type.shape) if type.is_block() else _Shape()
        self.numel = constexpr(type.numel if type.is_block() else 1)

    def __repr__(self):
        return f"tensor({self.type})"

    def __bool__(self):
        raise TypeError("a tensor's truth value is only known when the kernel runs; use it as an `if` "
                        "condition directly, or tl.where")

    # arithmetic
    def __add__(self, o): return _binop(_ADD, self, o)
    def __radd__(self, o): return _binop(_ADD, o, self)
    def __sub__(self, o): return _binop(_SUB, self, o)
    def __rsub__(self, o): return _binop(_SUB, o, self)
    def __mul__(self, o): return _binop(_MUL, self, o)
    def __rmul__(self, o): return _binop(_MUL, o, self)
    def __truediv__(self, o): return _binop(_TRUEDIV, self, o)
    def __rtruediv__(self, o): return _binop(_TRUEDIV, o, self)
    def __floordiv__(self, o): return _binop(_FLOORDIV, self, o)
    def __rfloordiv__(self, o): return _binop(_FLOORDIV, o, self)
    def __mod__(self, o): return _binop(_MOD, self, o)
    def __rmod__(self, o): return _binop(_MOD, o, self)
    def __and__(self, o): return _binop(_AND, self, o)
    def __rand__(self, o): return _binop(_AND, o, self)
    def __or__(self, o): return _binop(_OR, self, o)
    def __ror__(self, o): return _binop(_OR, o, self)
    def __xor__(self, o): return _binop(_XOR, self, o)
    def __rxor__(self, o): return _binop(_XOR, o, self)
    def __lshift__(self, o): return _binop(_SHL, self, o)
    def __rlshift__(self, o): return _binop(_SHL, o, self)
    def __rshift__(self, o): return _binop(_SHR, self, o)
    def __rrshift__(self, o): return _binop(_SHR, o, self)
    def __lt__(self, o): return _binop(_LT, self, o)
    def __le__(self, o): return _binop(_LE, self, o)
    def __gt__(self, o): return _binop(_GT, self, o)
    def __ge__(self, o): return _binop(_GE, self, o)
    def __eq__(self, o): return _binop(_EQ, self, o)
    def __ne__(self, o): return _binop(_NE, self, o)
    def __neg__(self): return _unop(_NEG, self)
    def __pos__(self): return self
    def __invert__(self): return _unop(_INVERT, self)
    def __pow__(self, o): return _binop(_POW, self, o)
    def __rpow__(self, o): return _binop(_POW, o, self)
    def __abs__(self): return abs(self)
    __hash__ = None

    def logical_and(self, o): return _binop(_LAND, self, o)
    def logical_or(self, o): return _binop(_LOR, self, o)
    def __not__(self): return _unop(_NOT, self)

    def __getitem__(self, slices):
        if not isinstance(slices, tuple):
            slices = (slices,)
        ret = self
        dim = 0
        for s in slices:
            s = _unwrap(s)
            if s is None:
                ret = expand_dims(ret, dim)
                dim += 1
            elif isinstance(s, slice) and s == slice(None, None, None):
                dim += 1
            elif s is Ellipsis:
                dim = len(ret.shape) - (len(slices) - 1 - list(slices).index(Ellipsis)) + 1
            else:
                raise ValueError(f"unsupported tensor index: {s!r} (only None and ':' are supported)")
        return ret

    def __setitem__(self, k, v):
        raise RuntimeError("Tensor __setitem__ (xsmt.bind) has been removed. "
                           "Use explicit accumulator operand on smt.dot instead.")

    def to(self, dtype, fp_downcast_rounding=None, bitcast=False):
        return cast(self, dtype, fp_downcast_rounding=fp_downcast_rounding, bitcast=bitcast)

    cast = to

    @property
    def T(self):
        return trans(self)

    def __iter__(self):
        raise TypeError("iterating over a tensor is not supported in kernels")


def _member(fn):
    """Also expose a builtin as a tensor method (x.sum(), x.exp(), ...)."""
    setattr(tensor, fn.__name__, lambda self, *a, **k: fn(self, *a, **k))
    return fn


def _literal_dtype(v):
    """The dtype a Python number gets as a kernel literal (upstream's rules)."""
    if isinstance(v, bool):
        return int1
    if isinstance(v, float):
        a = _py.abs(v)
        fits = a == 0 or a == float("inf") or v != v or 2.0**-126 <= a <= (2 - 2.0**-23) * 2.0**127
        return float32 if fits else float64
    if -2**31 <= v < 2**31:
        return int32
    if 2**31 <= v < 2**32:
        return uint32
    return int64 if -2**63 <= v < 2**63 else uint64


@_member
@builtin
def item(input):
    """The element of a one-element tensor, as a scalar."""
    x = _to_tensor(input)
    if not x.type.is_block():
        return x
    if x.type.numel != 1:
        raise ValueError(f"item() needs a tensor of one element, got shape {list(x.type.shape)}")
    from .standard import _pick_first
    return reduce(reshape(x, [1]), 0, _pick_first)


# ---- program and tile construction -------------------------------------------------------

def _grid_axis(axis):
    axis = _unwrap(axis)
    if axis not in (0, 1, 2):
        raise ValueError(f"program_id axis must be 0, 1, or 2 but got {axis}")
    return axis


@builtin
def program_id(axis):
    b = _builder()
    return b.wrap(b.c.program_id(_grid_axis(axis)))


@builtin
def num_programs(axis):
    b = _builder()
    return b.wrap(b.c.num_programs(_grid_axis(axis)))


def _shape(shape):
    shape = _unwrap(shape)
    if isinstance(shape, (int, constexpr)):
        shape = [shape]
    out = []
    for s in shape:
        s = _unwrap(s)
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"shape entries must be constexpr ints, got {s!r}")
        out.append(s)
    return out


@builtin
def arange(start, end):
    start, end = _unwrap(start), _unwrap(end)
    if not isinstance(start, int) or not isinstance(end, int):
        raise ValueError("arange's arguments must be of type tl.constexpr")
    b = _builder()
    return b.wrap(b.c.arange(start, end))


@builtin
def full(shape, value, dtype):
    b = _builder()
    dt = _unwrap(dtype)
    return b.wrap(b.c.full(_shape(shape), _opnd(value), dt.code))


@builtin
def zeros(shape, dtype):
    return full(shape, 0, dtype)


@builtin
def zeros_like(input):
    return full(input.shape, 0, input.dtype)


@builtin
def full_like(input, value, dtype=None):
    return full(input.shape, value, dtype if dtype is not None else input.dtype)


@builtin
def splat(value, shape):
    b = _builder()
    return b.wrap(b.c.splat(_to_tensor(value).handle, _shape(shape)))


@_member
@builtin
def broadcast_to(input, *shape):
    shape = shape[0] if len(shape) == 1 and isinstance(_unwrap(shape[0]), (list, tuple)) else shape
    b = _builder()
    return b.wrap(b.c.broadcast_to(_to_tensor(input).handle, _shape(shape)))


@builtin
def broadcast(input, other):
    x, y = _to_tensor(input), _to_tensor(other)
    shape = []
    xs, ys = [int(s) for s in x.shape], [int(s) for s in y.shape]
    n = _py.max(len(xs), len(ys))
    xs, ys = [1] * (n - len(xs)) + xs, [1] * (n - len(ys)) + ys
    for a, c in zip(xs, ys):
        shape.append(c if a == 1 else a)
    while len(x.shape) < n:
        x = expand_dims(x, 0)
    while len(y.shape) < n:
        y = expand_dims(y, 0)
    return broadcast_to(x, shape), broadcast_to(y, shape)


def _wrap_axis(axis, ndim):
    """axis in [-ndim, ndim) as a non-negative index; upstream's error otherwise."""
    if not (-ndim <= axis < ndim):
        raise ValueError(f"invalid axis {axis}. Expected {-ndim} <= axis < {ndim}")
    return axis if axis >= 0 else axis + ndim


@_member
@builtin
def expand_dims(input, axis):
    b = _builder()
    x = _to_tensor(input)
    axes = _unwrap(axis)
    axes = list(axes) if isinstance(axes, (list, tuple)) else [axes]
    # negative axes count from the end of the result (rank + number of new dims)
    rank = len(x.shape) + len(axes)
    norm = [_wrap_axis(int(_unwrap(a)), rank) for a in axes]
    if len(set(norm)) != len(norm):
        raise ValueError(f"expand_dims received duplicate axes, normalized axes = {norm}")
    for a in sorted(norm):
        x = b.wrap(b.c.expand_dims(x.handle, a))
    return x


@_member
@builtin
def unsqueeze(x, dim):
    """A length-1 dimension inserted at dim (of the result): expand_dims of one axis."""
    x = _to_tensor(x)
    return expand_dims(x, _wrap_axis(int(_unwrap(dim)), len(x.shape) + 1))


@_member
@builtin
def squeeze(x, dim):
    """The length-1 dimension dim removed."""
    x = _to_tensor(x)
    d = _wrap_axis(int(_unwrap(dim)), len(x.shape))
    shape = [int(_unwrap(s)) for s in x.shape]
    if shape[d] != 1:
        raise ValueError(f"squeeze: dimension {d} has length {shape[d]}, not 1")
    return reshape(x, shape[:d] + shape[d + 1:])


@_member
@builtin
def reshape(input, *shape, can_reorder=False):
    shape = shape[0] if len(shape) == 1 and isinstance(_unwrap(shape[0]), (list, tuple)) else shape
    b = _builder()
    return b.wrap(b.c.reshape(_to_tensor(input).handle, _shape(shape), bool(_unwrap(can_reorder))))


@_member
@builtin
def view(input, *shape):
    return reshape(input, *shape, can_reorder=True)


@_member
@builtin
def ravel(x, can_reorder=False):
    return reshape(x, [x.numel.value], can_reorder=can_reorder)


@_member
@builtin
def permute(input, *dims):
    dims = dims[0] if len(dims) == 1 and isinstance(_unwrap(dims[0]), (list, tuple)) else dims
    b = _builder()
    return b.wrap(b.c.permute(_to_tensor(input).handle, [int(_unwrap(d)) for d in dims]))


@_member
@builtin
def trans(input, *dims):
    x = _to_tensor(input)
    if not dims:
        n = len(x.shape)
        dims = list(_py.range(n))[:-2] + [n - 1, n - 2] if n >= 2 else [0]
    return permute(x, *dims)


@builtin
def cat(input, other, can_reorder=False):
    b = _builder()
    return b.wrap(b.c.cat(_to_tensor(input).handle, _to_tensor(other).handle, bool(_unwrap(can_reorder))))


@builtin
def join(a, b_):
    b = _builder()
    x, y = _to_tensor(a), _to_tensor(b_)
    if not x.type.is_block() and not y.type.is_block():  # two scalars: a [2] tile
        return reshape(join(reshape(x, [1]), reshape(y, [1])), [2])
    return b.wrap(b.c.join(x.handle, y.handle))


@builtin
def interleave(a, b):
    """The elements of a and b alternated along the last dim (join, then merge)."""
    c = join(a, b)
    if len(c.shape) == 1:
        return c
    return reshape(c, list(c.shape[:-2]) + [2 * int(c.shape[-2])])


@builtin
def histogram(input, num_bins, mask=None):
    """Counts of the values 0..num_bins-1 in a 1-D integer tensor (others are not
    counted; with mask, only the elements where mask is true), as int32."""
    x = _to_tensor(input)
    n = int(_unwrap(num_bins))
    if len(x.shape) != 1:
        raise ValueError("histogram: the input must be 1-D")
    hit = expand_dims(x, 1) == expand_dims(arange(0, n), 0)
    if _unwrap(mask) is not None:
        hit = hit & expand_dims(_to_tensor(mask), 1)
    return sum(cast(hit, int32), 0)


@_member
@builtin
def gather(src, index, axis):
    """out[..i..] = src[.. index[..i..] ..] along axis (the other dims of index and src
    agree). Computed as a one-hot selection over src's extent along axis."""
    src, index = _to_tensor(src), _to_tensor(index)
    axis = int(_unwrap(axis))
    r = len(src.shape)
    if axis < 0:
        axis += r
    if len(index.shape) != r:
        raise ValueError("gather: src and index must have the same rank")
    n = int(src.shape[axis])
    # one-hot over the (r + 1)-dim space [index dims..., n at axis + 1]
    sel = reshape(arange(0, n), [1] * (axis + 1) + [n] + [1] * (r - axis - 1))
    hit = expand_dims(index, axis + 1) == sel
    vals = expand_dims(src, axis)
    zero = full([1] * (r + 1), 0, src.dtype)
    return sum(where(hit, vals, zero), axis + 1)


@_member
@builtin
def split(a):
    b = _builder()
    x = _to_tensor(a)
    if len(x.shape) == 1:  # a [2] tile: two scalars
        r0, r1 = split(reshape(x, [1, 2]))
        return item(r0), item(r1)
    r0, r1 = b.c.split(x.handle)
    return b.wrap(r0), b.wrap(r1)


# ---- casts and arithmetic ------------------------------------------------------------------

@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    b = _builder()
    dt = _unwrap(dtype)
    if isinstance(dt, str):
        dt = str_to_ty(dt)
    rnd = _unwrap(fp_downcast_rounding)
    r = {None: 0, "rtz": 1, "rtne": 2}.get(rnd)
    if r is None:
        raise ValueError(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rnd!r}")
    return b.wrap(b.c.cast(_opnd(input), dt.to_ir(b), bool(_unwrap(bitcast)), r))


class const:
    """Annotation of a pointer argument to read-only data (`X: tl.const`); only a hint."""


@builtin
def condition(cond, disable_licm=False):
    """A while loop's condition (`while tl.condition(c, disable_licm=True)`): cond itself;
    disable_licm is a scheduling hint with no effect here."""
    return _to_tensor(cond)


@builtin
def where(condition, x, y):
    b = _builder()
    return b.wrap(b.c.where(_opnd(condition), _opnd(x), _opnd(y)))


class PropagateNan:
    NONE = 0
    ALL = 0xFFFF


@builtin
def maximum(x, y, propagate_nan=PropagateNan.NONE):
    return _binop(_MAXNAN if _unwrap(propagate_nan) == PropagateNan.ALL else _MAX, x, y)


@builtin
def minimum(x, y, propagate_nan=PropagateNan.NONE):
    return _binop(_MINNAN if _unwrap(propagate_nan) == PropagateNan.ALL else _MIN, x, y)


@builtin
def clamp(x, min, max, propagate_nan=PropagateNan.NONE):
    b = _builder()
    return b.wrap(b.c.clamp(_opnd(x), _opnd(min), _opnd(max), _unwrap(propagate_nan) == PropagateNan.ALL))


@builtin
def fma(x, y, z):
    b = _builder()
    return b.wrap(b.c.fma(_opnd(x), _opnd(y), _opnd(z)))


@builtin
def fdiv(x, y, ieee_rounding=False):
    return _binop(_FDIV, x, y)


# Element types upstream's math functions accept (its `_check_dtype`): any other
# tensor argument is an error (fp16 needs an explicit `.to(tl.float32)`, as upstream).
_F32_F64 = ("fp32", "fp64")
_MATH_DTYPES = {name: _F32_F64 for name in
                ("exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "rsqrt", "erf", "floor", "ceil")}
_MATH_DTYPES.update(sqrt_rn=("fp32",), div_rn=("fp32",), umulhi=("int32", "int64", "uint32", "uint64"))


def _check_math_dtype(name, *args):
    allowed = _MATH_DTYPES.get(name)
    for a in args:
        a = _unwrap(a)
        if allowed and isinstance(a, tensor) and a.dtype.name not in allowed:
            raise ValueError(f"Expected dtype {list(allowed)} but got {a.dtype.name}")


@builtin
def div_rn(x, y):
    _check_math_dtype("div_rn", x, y)
    return _binop(_FDIV, x, y)


@builtin
def umulhi(x, y):
    _check_math_dtype("umulhi", x, y)
    return _binop(_UMULHI, x, y)


def _math1(name, doc=None):
    @builtin
    def f(x, _name=name):
        _check_math_dtype(_name, x)
        b = _builder()
        return b.wrap(b.c.math(_name, _opnd(x)))
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = doc or f"Element-wise {name}."
    return f


exp = _member(_math1("exp"))
exp2 = _member(_math1("exp2"))
log = _member(_math1("log"))
log2 = _member(_math1("log2"))
sqrt = _member(_math1("sqrt"))
sqrt_rn = _member(_math1("sqrt_rn"))
rsqrt = _member(_math1("rsqrt"))
sin = _member(_math1("sin"))
cos = _member(_math1("cos"))
erf = _member(_math1("erf"))
tanh = _member(_math1("tanh"))
floor = _member(_math1("floor"))
ceil = _member(_math1("ceil"))
sigmoid = _member(_math1("sigmoid"))
abs = _member(_math1("abs"))  # noqa: A001  (upstream name)


@builtin
def cdiv(x, div):
    x, div = _unwrap(x), _unwrap(div)
    if not isinstance(x, tensor) and not isinstance(div, tensor):
        return (x + div - 1) // div
    return (x + div - 1) // div


@_member
@builtin
def softmax(x, ieee_rounding=False):
    z = x - max(x, 0)
    num = exp(z)
    den = sum(num, 0)
    return fdiv(num, den, ieee_rounding)


# ---- memory ------------------------------------------------------------------------------------

_PADDING = {"": 0, None: 0, "zero": 1, "nan": 2, "neg_inf": 3, "inf": 4}
_CACHE = {"": 0, None: 0, ".ca": 1, ".cg": 2, ".cv": 3, ".wb": 4, ".cs": 5, ".wt": 6}
_EVICT = {"": 0, None: 0, "evict_normal": 0, "evict_first": 1, "evict_last": 2}


def _bc(boundary_check):
    bc = _unwrap(boundary_check)
    if bc is None:
        return ()
    if isinstance(bc, int):
        return (bc,)
    return tuple(int(_unwrap(x)) for x in bc)


@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    hook = getattr(_unwrap(pointer), "__tl_load__", None)  # pointers of extensions (smt.view)
    if hook is not None:
        return hook(boundary_check=boundary_check, padding_option=padding_option)
    b = _builder()
    mask, other = _unwrap(mask), _unwrap(other)
    pad = _unwrap(padding_option)
    if pad not in _PADDING:
        raise ValueError(f"Padding option must be one of {', '.join(repr(k) for k in _PADDING if k)}, got {pad!r}")
    m = _to_tensor(mask).handle if mask is not None else None
    o = _opnd(other) if other is not None else None
    return b.wrap(b.c.load(_to_tensor(pointer).handle, m, o, _bc(boundary_check), _PADDING[pad],
                           _CACHE.get(_unwrap(cache_modifier), 0), _EVICT.get(_unwrap(eviction_policy), 0),
                           bool(_unwrap(volatile))))


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    hook = getattr(_unwrap(pointer), "__tl_store__", None)
    if hook is not None:
        return hook(value, boundary_check=boundary_check)
    b = _builder()
    mask = _unwrap(mask)
    m = _to_tensor(mask).handle if mask is not None else None
    b.c.store(_to_tensor(pointer).handle, _opnd(value), m, _bc(boundary_check),
              _CACHE.get(_unwrap(cache_modifier), 0), _EVICT.get(_unwrap(eviction_policy), 0))


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    b = _builder()
    seq = lambda v: [_opnd(x) for x in (_unwrap(v) if isinstance(_unwrap(v), (list, tuple)) else [v])]  # noqa: E731
    bs = _shape(block_shape)
    order = _unwrap(order)
    order = [int(_unwrap(o)) for o in (order if isinstance(order, (list, tuple)) else [order])]
    return b.wrap(b.c.make_block_ptr(_opnd(base), seq(shape), seq(strides), seq(offsets), bs, order))


@_member
@builtin
def advance(base, offsets):
    hook = getattr(_unwrap(base), "__tl_advance__", None)
    if hook is not None:
        return hook(offsets)
    b = _builder()
    offs = _unwrap(offsets)
    offs = offs if isinstance(offs, (list, tuple)) else [offs]
    return b.wrap(b.c.advance(_to_tensor(base).handle, [_opnd(o) for o in offs]))


def _atomic_check(kind, ptr):
    """Upstream's element types for read-modify-write atomics: 32/64-bit integers and
    floats; fp16/bf16 only for add; no 8/16-bit integers."""
    t = ptr.dtype.scalar
    ety = t.element_ty if t.is_ptr() else None
    if ety is None:
        raise ValueError(f"atomic_{kind}: the pointer argument is {t!r}, not a pointer")
    if ety.is_fp8():
        raise ValueError(f"atomic_{kind} does not support {ety.name}")
    if ety.name in ("fp16", "bf16") and kind != "add":
        raise ValueError(f"atomic_{kind} does not support {ety.name}")
    if ety.is_int() and ety.primitive_bitwidth < 32:
        raise ValueError(f"atomic_{kind} does not support {ety.name}")


def _atomic(kind):
    @builtin
    def f(pointer, val, mask=None, sem=None, scope=None):
        b = _builder()
        _atomic_check(kind, _to_tensor(pointer))
        mask = _unwrap(mask)
        m = _to_tensor(mask).handle if mask is not None else None
        return b.wrap(b.c.atomic_rmw(kind, _to_tensor(pointer).handle, _opnd(val), m, _unwrap(sem) or "",
                                     _unwrap(scope) or ""))
    f.__name__ = f"atomic_{kind}"
    return f


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")
atomic_xchg = _atomic("xchg")


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    b = _builder()
    return b.wrap(b.c.atomic_cas(_to_tensor(pointer).handle, _opnd(cmp), _opnd(val), _unwrap(sem) or "",
                                 _unwrap(scope) or ""))


# ---- compute --------------------------------------------------------------------------------------

@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=float32):
    b = _builder()
    acc = _unwrap(acc)
    # IrPrecision codes (compiler/src/ir_int.h); CPUs compute in IEEE fp32 by default
    prec = {None: 2, "ieee": 2, "tf32": 0, "tf32x3": 1}.get(_unwrap(input_precision), 2)
    od = _unwrap(out_dtype)
    return b.wrap(b.c.dot(_to_tensor(input).handle, _to_tensor(other).handle,
                          _to_tensor(acc).handle if acc is not None else None, od.code if od else -1, prec,
                          _unwrap(max_num_imprecise_acc) or 0))


# ---- dot_scaled (microscaling): decoded to fp32, scaled, and a tl.dot ----------------------

# the dtype an operand of each format has (or is bitcast to from the unsigned int of its width)
_MX_TYPES = {"e4m3": float8e4nv, "e5m2": float8e5, "bf16": bfloat16, "fp16": float16}


def _e2m1_to_f32(n):
    """fp32 values of the 4-bit e2m1 codes in the low bits of uint8 n (0, 0.5, 1, 1.5,
    2, 3, 4, 6 and their negatives): sign, 2 exponent bits (bias 1), 1 mantissa bit."""
    n = cast(n, uint32)
    e, m = (n >> 1) & 3, n & 1
    normal = ((e + 126) << 23) | (m << 22)
    sub = where(m != 0, 0x3F000000, 0).to(uint32)
    bits = where(e == 0, sub, normal) | ((n & 8) << 28)
    return cast(bits, float32, bitcast=True)


def _e8m0_to_f32(s):
    """fp32 values of e8m0 scales (uint8): 2^(s - 127), 0 is 2^-127, 0xFF is NaN."""
    s = cast(s, uint32)
    bits = where(s == 0, 0x00400000, s << 23).to(uint32)
    bits = where(s == 0xFF, 0x7FC00000, bits).to(uint32)
    return cast(bits, float32, bitcast=True)


def _unpack_pairs(lo, hi, axis):
    """lo and hi interleaved along axis (-1 or -2): element 2i from lo, 2i + 1 from hi."""
    r = len(lo.shape)
    shape = [int(d) for d in lo.shape]
    v = join(lo, hi)  # [..., 2]
    if axis == -2:
        v = permute(v, list(_py.range(r - 1)) + [r, r - 1])
        return reshape(v, shape[:-2] + [2 * shape[-2], shape[-1]])
    return reshape(v, shape[:-1] + [2 * shape[-1]])


def _mx_operand(x, fmt, k_pack, is_rhs):
    """An operand of dot_scaled as fp32 values ([.., M, K] for lhs, [.., K, N] for rhs)."""
    side = "rhs" if is_rhs else "lhs"
    if fmt == "e2m1":
        if x.dtype != uint8:
            raise ValueError(f"dot_scaled: {side} in e2m1 must be packed two per byte as uint8, got {x.dtype}")
        axis = (-2 if is_rhs else -1) if k_pack else (-1 if is_rhs else -2)
        return _unpack_pairs(_e2m1_to_f32(x & 0xF), _e2m1_to_f32(x >> 4), axis)
    if not k_pack:
        raise ValueError("dot_scaled: only mxfp4 (e2m1) inputs can be packed along a dimension different than K")
    ty = _MX_TYPES[fmt]
    if x.dtype != ty:
        raw = uint8 if ty.primitive_bitwidth == 8 else uint16
        if x.dtype != raw:
            raise ValueError(f"dot_scaled: {side} in {fmt} must be {ty} or {raw}, got {x.dtype}")
        x = cast(x, ty, bitcast=True)
    return cast(x, float32)


def _mx_scale(v, scale, is_rhs):
    """v times its e8m0 scales: one per group of K elements; lhs_scale is [.., M, K/g],
    rhs_scale [.., N, K/g] (not transposed)."""
    side = "rhs" if is_rhs else "lhs"
    shape = [int(d) for d in v.shape]
    K, other = (shape[-2], shape[-1]) if is_rhs else (shape[-1], shape[-2])
    ss = [int(d) for d in scale.shape]
    if scale.dtype != uint8:
        raise ValueError(f"dot_scaled: {side}_scale must be e8m0 as uint8, got {scale.dtype}")
    if len(ss) != len(shape) or ss[-2] != other or ss[-1] == 0 or K % ss[-1] != 0 or K // ss[-1] != 32:
        raise ValueError(f"dot_scaled: {side}_scale must be a tensor of shape [..., {other}, {K // 32}], got {ss}")
    f = _e8m0_to_f32(scale)
    f = reshape(broadcast_to(expand_dims(f, len(ss)), ss + [32]), ss[:-1] + [K])
    if is_rhs:
        f = trans(f)
    return v * f


@builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False, lhs_k_pack=True,
               rhs_k_pack=True, out_dtype=float32):
    """The matrix product of two blocks in microscaling formats (OCP MX): lhs and rhs in
    "e2m1" (two per uint8, the first in the low bits), "e4m3", "e5m2" (fp8 or uint8),
    "bf16" or "fp16"; scales e8m0 (uint8, one per 32 elements along K; None: none).
    Computed as upstream's emulation does, by decoding to floats (fp32 here, in which
    every product is exact), scaling, and a dot accumulating in fp32."""
    lf, rf = _unwrap(lhs_format), _unwrap(rhs_format)
    for side, f in (("lhs", lf), ("rhs", rf)):
        if f not in ("e2m1", "e4m3", "e5m2", "bf16", "fp16"):
            raise ValueError(f"dot_scaled: {side}_format must be one of e2m1, e4m3, e5m2, bf16, fp16, got {f!r}")
    if _unwrap(out_dtype) != float32:
        raise ValueError("dot_scaled: only float32 is supported for out_dtype")
    a, b = _to_tensor(lhs), _to_tensor(rhs)
    if not a.type.is_block() or not b.type.is_block() or len(a.shape) != len(b.shape) or len(a.shape) not in (2, 3):
        raise ValueError("dot_scaled: lhs and rhs must both be 2-D or both 3-D blocks")
    a = _mx_operand(a, lf, bool(_unwrap(lhs_k_pack)), False)
    b = _mx_operand(b, rf, bool(_unwrap(rhs_k_pack)), True)
    if int(a.shape[-1]) != int(b.shape[-2]):
        raise ValueError(f"dot_scaled: lhs has K = {int(a.shape[-1])} elements, rhs K = {int(b.shape[-2])}")
    ls, rs = _unwrap(lhs_scale), _unwrap(rhs_scale)
    if ls is not None:
        a = _mx_scale(a, _to_tensor(ls), False)
    if rs is not None:
        b = _mx_scale(b, _to_tensor(rs), True)
    return dot(a, b, acc=acc, input_precision="ieee", out_dtype=float32)


# IrReduceKind codes (compiler.h ORDER)
_RED_SUM, _RED_MAX, _RED_MIN, _RED_ARGMAX, _RED_ARGMIN, _RED_XOR, _RED_PROD, _RED_AND, _RED_OR = range(9)


def _reduce_builtin(kind, input, axis, keep_dims, dtype=None):
    b = _builder()
    axis = _unwrap(axis)
    dt = _unwrap(dtype)
    return b.wrap(b.c.reduce(kind, _to_tensor(input).handle, axis, bool(_unwrap(keep_dims)),
                             dt.code if dt is not None else -1))


@_member
@builtin
def sum(input, axis=None, keep_dims=False, dtype=None):  # noqa: A001
    return _reduce_builtin(_RED_SUM, input, axis, keep_dims, dtype)


@_member
@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):  # noqa: A001
    if _unwrap(return_indices):
        return (_reduce_builtin(_RED_MAX, input, axis, keep_dims),
                _reduce_builtin(_RED_ARGMAX, input, axis, keep_dims))
    return _reduce_builtin(_RED_MAX, input, axis, keep_dims)


@_member
@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):  # noqa: A001
    if _unwrap(return_indices):
        return (_reduce_builtin(_RED_MIN, input, axis, keep_dims),
                _reduce_builtin(_RED_ARGMIN, input, axis, keep_dims))
    return _reduce_builtin(_RED_MIN, input, axis, keep_dims)


@_member
@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    return _reduce_builtin(_RED_ARGMAX, input, axis, keep_dims)


@_member
@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    return _reduce_builtin(_RED_ARGMIN, input, axis, keep_dims)


@_member
@builtin
def xor_sum(input, axis=None, keep_dims=False):
    return _reduce_builtin(_RED_XOR, input, axis, keep_dims)


@builtin
def reduce_or(input, axis=None, keep_dims=False):
    return _reduce_builtin(_RED_OR, input, axis, keep_dims)


@builtin
def reduce_and(input, axis=None, keep_dims=False):
    return _reduce_builtin(_RED_AND, input, axis, keep_dims)


# ---- debugging and hints ----------------------------------------------------------------------------

class _StaticAssertionFailure(AssertionError):
    """A failed tl.static_assert; the code generator raises it as upstream's
    CompileTimeAssertionFailure at the kernel line."""


@builtin
def static_assert(cond, msg=""):
    if not _unwrap(cond):
        raise _StaticAssertionFailure(f"Static assert failed: {_unwrap(msg)}" if _unwrap(msg)
                                      else "Static assert failed")


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False):
    print(*[_unwrap(v) for v in values], sep=sep, end=end, file=file, flush=flush)


def _print_operand(a):
    """A device_print operand as the runtime prints it: fp8 widened to fp32."""
    t = _to_tensor(a)
    if t.dtype.is_fp8():
        t = t.to(float32)
    return t.handle


@builtin
def device_print(prefix, *args, hex=False):
    """Prints every element of each argument at run time, one line each, as upstream's
    compiled backends do: "pid (x, y, z) idx (i, j)<prefix><value>". The prefix gets
    upstream's touch-ups: it ends in ": " and starts with " " when there are
    arguments."""
    prefix = _unwrap(prefix)
    if not isinstance(prefix, str):
        raise TypeError(f"device_print: the prefix must be a string, got {type(prefix).__name__}")
    if args and not prefix.endswith(" "):
        prefix += " "
    if args and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    b = _builder()
    b.c.print(prefix, bool(_unwrap(hex)), [_print_operand(a) for a in args])


@builtin
def device_assert(cond, msg="", mask=None):
    """Checks cond (every element) at run time when the kernel is compiled with debug
    on (TRITON_DEBUG=1, @triton.jit(debug=True), the launch option debug=True); a
    failure stops the launch, which raises RuntimeError naming the kernel, the program,
    file:line and msg. Compiles to nothing otherwise."""
    b = _builder()
    if not getattr(b, "debug", False):
        return None
    cond = _to_tensor(cond)
    mask = _unwrap(mask)
    if mask is not None:
        cond = cond | ~_to_tensor(mask)
    b.c.assert_(cond.handle, str(_unwrap(msg)))


@builtin
def multiple_of(input, values):
    return input


@builtin
def max_contiguous(input, values):
    return input


@builtin
def max_constancy(input, values):
    return input


@builtin
def assume(cond):
    return None


@builtin
def debug_barrier():
    return None


# ---- iterators (the code generator turns them into scf.for) -----------------------------------------

class range:  # noqa: A001  (upstream name)
    """tl.range(start, end, step, num_stages=None, loop_unroll_factor=None, ...)."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False, disable_licm=False):
        if arg2 is None:
            self.start, self.end = constexpr(0), arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = step if step is not None else constexpr(1)
        self.num_stages = num_stages
        self.loop_unroll_factor = loop_unroll_factor


class static_range:
    """Fully unrolled loop over constexpr bounds."""

    def __init__(self, arg1, arg2=None, step=None):
        if arg2 is None:
            self.start, self.end = 0, _unwrap(arg1)
        else:
            self.start, self.end = _unwrap(arg1), _unwrap(arg2)
        self.step = _unwrap(step) if step is not None else 1
        for v in (self.start, self.end, self.step):
            if not isinstance(v, int):
                raise TypeError("static_range bounds must be constexpr ints")


# ---- reduce / scan with user combine functions (driven by the code generator) -----------------------

@builtin
def map_elementwise(scalar_fn, *args, pack=1):
    """Applies a @triton.jit function written for scalars to every element of the
    broadcast arguments (triton/compiler/elementwise.py); a tuple when it returns one."""
    from triton.compiler.elementwise import map_elementwise as _map
    return _map(scalar_fn, *args, pack=pack)


@builtin
def reduce(input, axis, combine_fn, keep_dims=False):
    from triton.compiler.code_generator import _call_combine
    return _call_combine("reduce", input, axis, combine_fn, keep_dims=keep_dims)


@builtin
def associative_scan(input, axis, combine_fn, reverse=False):
    from triton.compiler.code_generator import _call_combine
    return _call_combine("scan", input, axis, combine_fn, reverse=reverse)


def _scan_input(input, dtype=None):
    """bf16 scans in fp32; integer sums narrower than 32 bits in (u)int32 (upstream)."""
    x = _to_tensor(input)
    dtype = _unwrap(dtype)
    if dtype is None:
        if x.dtype.scalar == bfloat16:
            dtype = float32
        elif x.dtype.scalar.is_int() and x.dtype.scalar.primitive_bitwidth < 32:
            dtype = int32 if x.dtype.scalar.is_int_signed() else uint32
    return x if dtype is None or x.dtype.scalar == dtype else cast(x, dtype)


@_member
@builtin
def cumsum(input, axis=0, reverse=False, dtype=None):
    """Inclusive prefix sums along axis (from the end with reverse=True)."""
    from .standard import _sum_combine
    return associative_scan(_scan_input(input, dtype), axis, _sum_combine, reverse)


@_member
@builtin
def cumprod(input, axis=0, reverse=False):
    """Inclusive prefix products along axis."""
    from .standard import _prod_combine
    x = _to_tensor(input)
    if x.dtype.scalar == bfloat16:
        x = cast(x, float32)
    return associative_scan(x, axis, _prod_combine, reverse)


def is_builtin(fn) -> bool:
    return getattr(fn, "__triton_builtin__", False)
