"""Element-wise operators and math functions against torch.

Compile budget: one kernel per dtype computes every binary/unary operator into
separate output slots, one kernel per (namespace, dtype) computes every math function;
the results are memoised so each parametrised test asserts one (op, dtype) pair
without another compile. Type promotion cases are one kernel each (the dtypes differ),
with the result dtype checked at compile time (tl.static_assert) and the values at run
time.

Reference semantics (upstream triton/language/semantic.py, plus spine-triton's rule
that fp16 `/` and `%` stay fp16):
* `//` and `%` on integers truncate like C (torch.div(rounding_mode="trunc"),
  torch.fmod); `%` on floats is C fmod too (sign of the dividend, upstream's arith.remf);
  `//` on floats floors.
* int / int is fp32; bf16 `/` and `%` compute in fp32.
* a Python scalar of the same or a lower kind than the tensor does not take part in
  promotion (int16 tensor + 3 stays int16); a kernel scalar argument does (it is a
  0-d tensor: int16 tensor + i32 argument is int32).
"""
import functools
import math

import numpy as np
import pytest
import torch

import triton
import triton.language as tl
from triton.language.extra import libdevice as generic_libdevice
from triton.language.extra.cpu import libdevice

from tritium_testutil import (FLOAT_DTYPES, INT_DTYPES, TL, assert_int_equal, bits_equal, dt_name as _name,
                              gen as _gen, rand_values, unsigned_values)

N = 300          # not a multiple of BLOCK: the last program is partial
BLOCK = 128


# ---- binary and unary operators, every dtype ----------------------------------------------

CMP_OPS = ["lt", "le", "gt", "ge", "eq", "ne"]
SAME_OPS_FLOAT = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "neg", "abs"]
SAME_OPS_INT = ["add", "sub", "mul", "maximum", "minimum", "neg", "abs", "and", "or", "xor", "shl", "shr", "invert"]
SAME_OPS_BOOL = ["and", "or", "xor"]
INT_DIV_OPS = ["floordiv", "mod", "truediv"]


@triton.jit
def _binop_kernel(x_ptr, y_ptr, same_ptr, cmp_ptr, div_ptr, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(cmp_ptr + 0 * n + offs, x < y, mask=m)
    tl.store(cmp_ptr + 1 * n + offs, x <= y, mask=m)
    tl.store(cmp_ptr + 2 * n + offs, x > y, mask=m)
    tl.store(cmp_ptr + 3 * n + offs, x >= y, mask=m)
    tl.store(cmp_ptr + 4 * n + offs, x == y, mask=m)
    tl.store(cmp_ptr + 5 * n + offs, x != y, mask=m)
    if KIND == "bool":
        tl.store(same_ptr + 0 * n + offs, x & y, mask=m)
        tl.store(same_ptr + 1 * n + offs, x | y, mask=m)
        tl.store(same_ptr + 2 * n + offs, x ^ y, mask=m)
    elif KIND == "float":
        tl.store(same_ptr + 0 * n + offs, x + y, mask=m)
        tl.store(same_ptr + 1 * n + offs, x - y, mask=m)
        tl.store(same_ptr + 2 * n + offs, x * y, mask=m)
        tl.store(same_ptr + 3 * n + offs, x // y, mask=m)
        tl.store(same_ptr + 4 * n + offs, x % y, mask=m)
        tl.store(same_ptr + 5 * n + offs, tl.maximum(x, y), mask=m)
        tl.store(same_ptr + 6 * n + offs, tl.minimum(x, y), mask=m)
        tl.store(same_ptr + 7 * n + offs, -x, mask=m)
        tl.store(same_ptr + 8 * n + offs, tl.abs(x), mask=m)
        tl.store(div_ptr + offs, x / y, mask=m)
    else:
        # integer //, % and / have their own kernel (_int_div_kernel): see
        # test_int_division_masked_tail for why they are not in this masked kernel
        tl.store(same_ptr + 0 * n + offs, x + y, mask=m)
        tl.store(same_ptr + 1 * n + offs, x - y, mask=m)
        tl.store(same_ptr + 2 * n + offs, x * y, mask=m)
        tl.store(same_ptr + 3 * n + offs, tl.maximum(x, y), mask=m)
        tl.store(same_ptr + 4 * n + offs, tl.minimum(x, y), mask=m)
        tl.store(same_ptr + 5 * n + offs, -x, mask=m)
        tl.store(same_ptr + 6 * n + offs, tl.abs(x), mask=m)
        tl.store(same_ptr + 7 * n + offs, x & y, mask=m)
        tl.store(same_ptr + 8 * n + offs, x | y, mask=m)
        tl.store(same_ptr + 9 * n + offs, x ^ y, mask=m)
        tl.store(same_ptr + 10 * n + offs, x << 2, mask=m)
        tl.store(same_ptr + 11 * n + offs, x >> 1, mask=m)
        tl.store(same_ptr + 12 * n + offs, ~x, mask=m)


@triton.jit
def _int_div_kernel(x_ptr, y_ptr, q_ptr, r_ptr, d_ptr, BLOCK: tl.constexpr):
    # whole tiles, no mask (the masked form is test_int_division_masked_tail)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(q_ptr + offs, x // y)
    tl.store(r_ptr + offs, x % y)
    tl.store(d_ptr + offs, x / y)


def _kind(dt):
    return "bool" if dt == torch.bool else "float" if dt.is_floating_point else "int"


def _div_dtype(dt):
    """Result dtype of x / y for two tensors of dtype dt."""
    if dt in (torch.float16, torch.float32, torch.float64):
        return dt
    return torch.float32  # ints and bf16


@functools.lru_cache(maxsize=None)
def _binop_results(dt):
    g = _gen(100 + list(TL).index(dt))
    x = rand_values(dt, N, g)
    y = rand_values(dt, N, g, nonzero=True)
    kind = _kind(dt)
    nsame = {"bool": 3, "float": 9, "int": 13}[kind]
    same = torch.zeros(nsame * N, dtype=dt)
    cmp = torch.zeros(len(CMP_OPS) * N, dtype=torch.bool)
    div = torch.zeros(N, dtype=_div_dtype(dt))
    _binop_kernel[(triton.cdiv(N, BLOCK),)](x, y, same, cmp, div, N, KIND=kind, BLOCK=BLOCK)
    return x, y, same.view(nsame, N), cmp.view(len(CMP_OPS), N), div


def _cmp_ref(op, a, b):
    return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b}[op]


ALL_DTYPES = [torch.bool] + INT_DTYPES + FLOAT_DTYPES


@pytest.mark.parametrize("op", CMP_OPS)
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=_name)
def test_comparison(dt, op):
    x, y, _, cmp, _ = _binop_results(dt)
    if dt.is_floating_point:
        a, b = x.double(), y.double()
    else:  # numpy compares in the dtype itself: unsigned values stay unsigned (uint64 too)
        a, b = x.numpy(), y.numpy()
    got = cmp[CMP_OPS.index(op)]
    assert torch.equal(got, torch.as_tensor(_cmp_ref(op, a, b)))


@pytest.mark.parametrize("op", SAME_OPS_BOOL)
def test_bool_logic(op):
    x, y, same, _, _ = _binop_results(torch.bool)
    want = {"and": x & y, "or": x | y, "xor": x ^ y}[op]
    assert torch.equal(same[SAME_OPS_BOOL.index(op)], want)


def _int_ref(op, a, b):
    """a op b on numpy arrays of the kernel's dtype: C semantics (wrapping, unsigned
    compares and shifts logically), which torch lacks for uint16/32/64."""
    return {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
        "floordiv": lambda: (a - np.fmod(a, b)) // b,  # C-style, truncating (exact: b divides a - fmod)
        "mod": lambda: np.fmod(a, b),                    # sign of the dividend
        "maximum": lambda: np.maximum(a, b), "minimum": lambda: np.minimum(a, b),
        "neg": lambda: -a, "abs": lambda: np.abs(a), "and": lambda: a & b, "or": lambda: a | b,
        "xor": lambda: a ^ b, "shl": lambda: a << 2, "shr": lambda: a >> 1, "invert": lambda: ~a,
    }[op]()


@pytest.mark.parametrize("op", SAME_OPS_INT)
@pytest.mark.parametrize("dt", INT_DTYPES, ids=_name)
def test_int_arith(dt, op):
    x, y, same, _, _ = _binop_results(dt)
    assert_int_equal(same[SAME_OPS_INT.index(op)], _int_ref(op, x.numpy(), y.numpy()), dt)


N_FULL = 2 * BLOCK  # whole tiles


@functools.lru_cache(maxsize=None)
def _int_div_results(dt):
    g = _gen(200 + list(TL).index(dt))
    x = rand_values(dt, N_FULL, g)
    y = rand_values(dt, N_FULL, g, nonzero=True, lo=-20 if dt.is_signed else 1, hi=20)
    q, r, d = torch.zeros_like(x), torch.zeros_like(x), torch.zeros(N_FULL)
    _int_div_kernel[(N_FULL // BLOCK,)](x, y, q, r, d, BLOCK=BLOCK)
    return x, y, {"floordiv": q, "mod": r, "truediv": d}


@pytest.mark.parametrize("op", INT_DIV_OPS)
@pytest.mark.parametrize("dt", INT_DTYPES, ids=_name)
def test_int_division(dt, op):
    x, y, out = _int_div_results(dt)
    if op == "truediv":  # int / int is fp32 (uitofp for unsigned operands)
        assert out[op].dtype == torch.float32
        torch.testing.assert_close(out[op], x.to(torch.float32) / y.to(torch.float32), rtol=1e-6, atol=0)
    else:
        assert_int_equal(out[op], _int_ref(op, x.numpy(), y.numpy()), dt)


@pytest.mark.parametrize("op", ["//", "%"])
def test_int_division_masked_tail(op, run_py, tmp_path, session_cache_dir):
    """x // y and x % y with masked loads on n=5 < BLOCK: masked-off lanes must not trap (SIGFPE)."""
    script = tmp_path / "intdiv.py"
    script.write_text(f"""
import torch, triton, triton.language as tl

@triton.jit
def div_kernel(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    tl.store(o_ptr + offs, x {op} y, mask=m)

x = torch.tensor([7, -7, 9, 10, -11], dtype=torch.int32)
y = torch.tensor([2, 2, -4, 3, 5], dtype=torch.int32)
o = torch.zeros(5, dtype=torch.int32)
div_kernel[(1,)](x, y, o, 5, BLOCK=128)
print("RESULT", o.tolist())
""")
    proc = run_py(script, session_cache_dir)
    assert proc.returncode == 0, f"child died (rc={proc.returncode}): {proc.stderr[-500:]}"
    want = [3, -3, -2, 3, -2] if op == "//" else [1, -1, 1, 1, -1]
    assert f"RESULT {want}" in proc.stdout


def _float_ref(op, x, y, dt):
    cd = dt if dt != torch.bfloat16 or op not in ("floordiv", "mod") else torch.float32
    a, b = x.to(cd), y.to(cd)
    r = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
        "floordiv": lambda: torch.floor(a / b),
        "mod": lambda: torch.fmod(a, b),  # C fmod: sign of the dividend
        "maximum": lambda: torch.maximum(a, b), "minimum": lambda: torch.minimum(a, b),
        "neg": lambda: -a, "abs": lambda: a.abs(),
    }[op]()
    return r.to(dt)


@pytest.mark.parametrize("op", SAME_OPS_FLOAT)
@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=_name)
def test_float_arith(dt, op):
    x, y, same, _, _ = _binop_results(dt)
    torch.testing.assert_close(same[SAME_OPS_FLOAT.index(op)], _float_ref(op, x, y, dt))


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=_name)
def test_float_truediv(dt):
    x, y, _, _, div = _binop_results(dt)
    assert div.dtype == _div_dtype(dt)  # fp16 stays fp16 (spine-triton), bf16 computes in fp32
    cd = _div_dtype(dt)
    torch.testing.assert_close(div, x.to(cd) / y.to(cd))


def test_division_semantics_explicit():
    """The textbook cases: C-style truncation for ints, C fmod for float %, floor for float //."""
    xs, ys = [-7, 7, -7, 7, 6, -6, 0, 1], [2, -2, -2, 2, 3, 3, 5, 1]
    x = torch.tensor(xs * (BLOCK // 8), dtype=torch.int32)
    y = torch.tensor(ys * (BLOCK // 8), dtype=torch.int32)
    q, r, d = torch.zeros_like(x), torch.zeros_like(x), torch.zeros(BLOCK)
    _int_div_kernel[(1,)](x, y, q, r, d, BLOCK=BLOCK)
    assert q[:8].tolist() == [-3, -3, 3, 3, 2, -2, 0, 1]   # //
    assert r[:8].tolist() == [-1, 1, -1, 1, 0, 0, 0, 0]    # %
    torch.testing.assert_close(d[:8], torch.tensor([-3.5, -3.5, 3.5, 3.5, 2.0, -2.0, 0.0, 1.0]))
    n = 8
    xf, yf = x[:n].float(), y[:n].float()
    samef, cmp, divf = torch.zeros(9 * n), torch.zeros(6 * n, dtype=torch.bool), torch.zeros(n)
    _binop_kernel[(1,)](xf, yf, samef, cmp, divf, n, KIND="float", BLOCK=BLOCK)
    samef = samef.view(9, n)
    assert samef[3].tolist() == [-4.0, -4.0, 3.0, 3.0, 2.0, -2.0, 0.0, 1.0]  # float // floors
    assert samef[4].tolist() == [-1.0, 1.0, -1.0, 1.0, 0.0, 0.0, 0.0, 0.0]  # float % is C fmod


# Dividends and divisors of every sign, exact and inexact quotients, signed zeros,
# infinities, NaN and a zero divisor: C fmod takes the sign of the dividend.
FMOD_X = [-1.5, 1.5, -1.5, 1.5, -7.0, 7.0, 5.25, -5.25, 0.0, -0.0, -2.0, 1e4, -1e4, 3.0, float("inf"),
          float("nan"), 2.0, -2.5, 0.1, -0.1, 12345.5, -0.75, 6.0, -6.0]
FMOD_Y = [1.0, 1.0, -1.0, -1.0, 3.0, -3.0, 2.0, 2.0, 1.0, 1.0, 1.0, 3.0, 3.0, float("inf"), 2.0,
          1.0, 0.0, float("-inf"), 0.03, 0.03, -7.25, 0.5, 4.0, -4.0]


@triton.jit
def _fmod_kernel(x_ptr, y_ptr, o_ptr, s_ptr, a, b, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, x % y)                          # tensor % tensor
    tl.store(o_ptr + BLOCK + offs, x % tl.load(y_ptr))     # tensor % scalar
    tl.store(s_ptr, tl.load(x_ptr) % tl.load(y_ptr))       # scalar % scalar, in the tensor's dtype
    tl.store(s_ptr + 1, a % b)                             # fp32 scalar arguments


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=_name)
def test_float_mod_is_c_fmod(dt):
    """Triton's float `%` is C fmod (upstream emits arith.remf): -1.5 % 1.0 is -0.5, not the
    floor-mod 0.5, for tensors and scalars of every float dtype."""
    n = len(FMOD_X)
    x = torch.tensor(FMOD_X + [1.0] * (32 - n)).to(dt)
    y = torch.tensor(FMOD_Y + [1.0] * (32 - n)).to(dt)
    rd = torch.float32 if dt == torch.bfloat16 else dt  # bf16 % computes in fp32
    o = torch.zeros(64, dtype=rd)
    s = torch.zeros(2, dtype=rd)
    _fmod_kernel[(1,)](x, y, o, s, -1.5, 1.0, BLOCK=32)
    X, Y = x.to(rd), y.to(rd)
    want = torch.cat([torch.fmod(X, Y), torch.fmod(X, Y[0])])
    nan = torch.isnan(want)
    assert torch.equal(torch.isnan(o), nan)
    assert bits_equal(o[~nan], want[~nan]), (o.view(2, 32)[:, :n], want.view(2, 32)[:, :n])  # signed zeros too
    assert o[0].item() == -0.5 and s.tolist() == [-0.5, -0.5]
    assert math.copysign(1.0, o[9].item()) == -1.0  # -0.0 % 1.0 keeps the sign of the dividend


@triton.jit
def _libdevice_fmod_kernel(x_ptr, y_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, libdevice.fmod(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@pytest.mark.parametrize("dt", [torch.float32, torch.float64], ids=_name)
def test_libdevice_fmod_is_exact(dt):
    """libdevice.fmod is `%` (exact C fmod), also where x / y is huge or inexact."""
    x = torch.tensor([1e20, -1.5, 7.0, 1e10, 0.3, -5.0, 100.0, 3.0], dtype=dt)
    y = torch.tensor([3.0, 1.0, 0.1, 0.7, 0.1, 3.0, 7.0, 0.0], dtype=dt)
    o = torch.zeros(8, dtype=dt)
    _libdevice_fmod_kernel[(1,)](x, y, o, BLOCK=8)
    torch.testing.assert_close(o, torch.fmod(x, y), rtol=0, atol=0, equal_nan=True)


# ---- shifts with operands of different signedness and width ---------------------------------

SIGNED_INTS = [torch.int8, torch.int16, torch.int32, torch.int64]
UNSIGNED_INTS = [torch.uint8, torch.uint16, torch.uint32, torch.uint64]


def _int_promote(a, b):
    """upstream integer_promote_impl: the wider type; an unsigned type of >= width wins."""
    ra, rb = a.itemsize, b.itemsize
    if a.is_signed == b.is_signed:
        return a if ra > rb else b
    if not a.is_signed:
        return a if ra >= rb else b
    return b if rb >= ra else a


@triton.jit
def _shr_kernel(x_ptr, y0, y1, y2, y3, o0, o1, o2, o3, olit, E0: tl.constexpr, E1: tl.constexpr,
                E2: tl.constexpr, E3: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    r0 = x >> tl.load(y0 + offs)
    r1 = x >> tl.load(y1 + offs)
    r2 = x >> tl.load(y2 + offs)
    r3 = x >> tl.load(y3 + offs)
    tl.static_assert(r0.dtype == E0, "unexpected result dtype")
    tl.static_assert(r1.dtype == E1, "unexpected result dtype")
    tl.static_assert(r2.dtype == E2, "unexpected result dtype")
    tl.static_assert(r3.dtype == E3, "unexpected result dtype")
    tl.store(o0 + offs, r0)
    tl.store(o1 + offs, r1)
    tl.store(o2 + offs, r2)
    tl.store(o3 + offs, r3)
    lit = x >> 3  # a Python int does not take part in promotion: int8 >> 3 is int8
    tl.static_assert(lit.dtype == x.dtype, "x >> 3 must keep x's dtype")
    tl.store(olit + offs, lit)


def _shift_operand(dt, n, g):
    """Values over dt's whole range, its edges (min, -1, 0, max) among them."""
    info = torch.iinfo(dt)
    if dt.is_signed:
        v = torch.randint(info.min, info.max, (n,), generator=g, dtype=torch.int64).to(dt)
        edges = torch.tensor([info.min, info.min + 1, -1, 0, 1, info.max], dtype=dt)
        return torch.cat([edges, v[len(edges):]])
    return unsigned_values(dt, n, g)


@pytest.mark.parametrize("xdt", SIGNED_INTS + UNSIGNED_INTS, ids=_name)
def test_shift_right_mixed_signedness(xdt):
    """x >> y follows upstream for every width pair of a signed x with an unsigned y (and
    the reverse): both operands go to the promoted type (sign-extending a signed x), and
    the shift is arithmetic exactly when x is signed, even where the promoted type is
    unsigned (int32 >> uint32 is an arithmetic shift whose result is uint32)."""
    g = _gen(300 + list(TL).index(xdt))
    n = BLOCK
    x = _shift_operand(xdt, n, g)
    ydts = UNSIGNED_INTS if xdt.is_signed else SIGNED_INTS
    rdts = [_int_promote(xdt, ydt) for ydt in ydts]
    # shift amounts below the promoted width, 0 and width - 1 included
    ys = []
    for ydt, rdt in zip(ydts, rdts):
        w = rdt.itemsize * 8
        y = torch.randint(0, w, (n,), generator=g, dtype=torch.int64)
        y[:2] = torch.tensor([0, w - 1])
        ys.append(y.to(ydt))
    outs = [torch.zeros(n, dtype=rdt) for rdt in rdts]
    lit = torch.zeros(n, dtype=xdt)
    _shr_kernel[(1,)](x, *ys, *outs, lit, *[TL[r] for r in rdts], BLOCK=n)
    xv = [int(v) for v in x.tolist()]
    if not xdt.is_signed:  # torch reads uint32/uint64 through int64: back to the unsigned value
        xv = [v % (1 << (xdt.itemsize * 8)) for v in xv]
    for y, rdt, out in zip(ys, rdts, outs):
        yv = [int(v) % (1 << (y.dtype.itemsize * 8)) for v in y.tolist()]
        # the value of x (signed for signed x) shifted like Python's >> (arithmetic), wrapped to rdt
        assert_int_equal(out, np.array([a >> b for a, b in zip(xv, yv)], dtype=object).astype(np.int64)
                         if rdt != torch.uint64 else
                         np.array([(a >> b) % (1 << 64) for a, b in zip(xv, yv)], dtype=np.uint64), rdt)
    assert_int_equal(lit, np.array([a >> 3 for a in xv], dtype=object).astype(
        np.uint64 if xdt == torch.uint64 else np.int64), xdt)


# ---- type promotion with scalars and mixed dtypes -------------------------------------------

@triton.jit
def _mixed_kernel(x_ptr, y_ptr, o_ptr, n, s, OP: tl.constexpr, YMODE: tl.constexpr, EXPECT: tl.constexpr,
                  BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    if YMODE == "tensor":
        y = tl.load(y_ptr + offs, mask=m, other=1)
    elif YMODE == "int":
        y = 3
    elif YMODE == "float":
        y = 2.5
    else:  # "arg": a runtime scalar kernel argument (i32)
        y = s
    if OP == "add":
        z = x + y
    elif OP == "radd":
        z = y + x
    elif OP == "sub":
        z = x - y
    elif OP == "rsub":
        z = y - x
    elif OP == "mul":
        z = x * y
    elif OP == "div":
        z = x / y
    elif OP == "rdiv":
        z = y / x
    elif OP == "floordiv":
        z = x // y
    else:
        z = x % y
    tl.static_assert(z.dtype == EXPECT, "unexpected result dtype")
    tl.store(o_ptr + offs, z, mask=m)


T = torch
PROMOTION_CASES = [
    # (op, x dtype, y mode, y dtype, expected result dtype)
    ("add", T.int16, "int", None, T.int16),        # python int next to int16 stays int16
    ("radd", T.int16, "int", None, T.int16),
    ("rsub", T.int16, "int", None, T.int16),
    ("add", T.int16, "arg", None, T.int32),        # a kernel scalar argument (i32) promotes
    ("mul", T.int64, "arg", None, T.int64),
    ("add", T.float64, "arg", None, T.float64),
    ("add", T.float16, "arg", None, T.float16),
    ("add", T.uint8, "int", None, T.uint8),
    ("mul", T.int8, "float", None, T.float32),     # higher kind scalar: fp32
    ("add", T.int32, "float", None, T.float32),
    ("div", T.int16, "int", None, T.float32),      # int / int is fp32
    ("div", T.int32, "tensor", T.int32, T.float32),
    ("div", T.int64, "tensor", T.int64, T.float32),
    ("floordiv", T.int32, "int", None, T.int32),
    ("mod", T.int32, "int", None, T.int32),
    ("mod", T.float32, "float", None, T.float32),
    ("add", T.float16, "float", None, T.float16),
    ("add", T.float16, "int", None, T.float16),
    ("div", T.float16, "float", None, T.float16),  # spine-triton: fp16 / stays fp16
    ("div", T.float16, "int", None, T.float16),
    ("rdiv", T.float16, "float", None, T.float16),
    ("div", T.float16, "tensor", T.float16, T.float16),
    ("mod", T.float16, "tensor", T.float16, T.float16),
    ("mul", T.bfloat16, "float", None, T.bfloat16),
    ("div", T.bfloat16, "float", None, T.float32),  # bf16 / and % compute in fp32
    ("div", T.bfloat16, "tensor", T.bfloat16, T.float32),
    ("add", T.bfloat16, "tensor", T.bfloat16, T.bfloat16),
    ("add", T.bfloat16, "tensor", T.float16, T.float16),  # upstream rule 3: fp16 wins over bf16
    ("add", T.float16, "tensor", T.float32, T.float32),
    ("sub", T.float32, "tensor", T.float64, T.float64),
    ("add", T.float64, "float", None, T.float64),
    ("add", T.int8, "tensor", T.uint8, T.uint8),    # unsigned of >= rank wins
    ("add", T.int32, "tensor", T.uint8, T.int32),
    ("add", T.int64, "tensor", T.uint32, T.int64),
    ("add", T.uint32, "tensor", T.int32, T.uint32),
    ("sub", T.uint16, "tensor", T.int8, T.uint16),
    ("add", T.int8, "tensor", T.int16, T.int16),
    ("add", T.bool, "tensor", T.int8, T.int8),
]


def _operand(dt, n, g):
    if dt == T.bool:
        return torch.rand(n, generator=g) > 0.5
    if dt.is_floating_point:
        return rand_values(dt, n, g, nonzero=True)
    if dt.is_signed:
        return rand_values(dt, n, g, nonzero=True, lo=-20, hi=20)
    # the whole range: a uint8 promoted to int32 must be zero-extended, not sign-extended
    return unsigned_values(dt, n, g, nonzero=True)


def _mixed_ref(op, x, y, E):
    if E.is_floating_point:
        X = x.to(E)
        Y = y.to(E) if isinstance(y, torch.Tensor) else y
        fns = {"add": lambda: X + Y, "radd": lambda: Y + X, "sub": lambda: X - Y, "rsub": lambda: Y - X,
               "mul": lambda: X * Y, "div": lambda: X / Y, "rdiv": lambda: Y / X,
               "floordiv": lambda: torch.floor(X / Y), "mod": lambda: torch.fmod(X, Y)}
        r = fns[op]()
        return r if isinstance(r, torch.Tensor) else torch.full_like(X, r)
    X = x.to(E).to(torch.int64)
    Y = y.to(E).to(torch.int64) if isinstance(y, torch.Tensor) else y
    fns = {"add": lambda: X + Y, "radd": lambda: Y + X, "sub": lambda: X - Y, "rsub": lambda: Y - X,
           "mul": lambda: X * Y, "floordiv": lambda: torch.div(X, Y, rounding_mode="trunc"),
           "mod": lambda: torch.fmod(X, Y)}
    return fns[op]()


@pytest.mark.parametrize("op,xdt,ymode,ydt,expect", PROMOTION_CASES,
                         ids=[f"{c[0]}-{_name(c[1])}-{c[2]}{'-' + _name(c[3]) if c[3] else ''}"
                              for c in PROMOTION_CASES])
def test_promotion(op, xdt, ymode, ydt, expect):
    g = _gen(7)
    x = _operand(xdt, N, g)
    y = _operand(ydt, N, g) if ydt is not None else None
    s = 3
    out = torch.zeros(N, dtype=expect)
    # the static_assert inside the kernel fails compilation when the result dtype differs
    _mixed_kernel[(triton.cdiv(N, BLOCK),)](x, y if y is not None else x, out, N, s, OP=op, YMODE=ymode,
                                            EXPECT=TL[expect], BLOCK=BLOCK)
    yv = y if ymode == "tensor" else {"int": 3, "float": 2.5, "arg": s}[ymode]
    ref = _mixed_ref(op, x, yv, expect)
    if expect.is_floating_point:
        torch.testing.assert_close(out, ref.to(expect))
    else:
        assert_int_equal(out, ref, expect)


def test_promotion_error_unsigned_and_negative_literal():
    """Upstream's rule: an unsigned tensor next to a negative Python int is an error."""
    x = torch.ones(N, dtype=torch.uint8)
    with pytest.raises(triton.CompilationError, match="unsigned tensor and a negative scalar"):
        _negative_literal_kernel[(1,)](x, x, N, BLOCK=BLOCK)


@triton.jit
def _negative_literal_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(o_ptr + offs, x + (-1), mask=offs < n)


# ---- comparisons between different dtypes and with Python scalars ---------------------------

@triton.jit
def _cmp_mixed_kernel(x_ptr, y_ptr, o_ptr, n, S: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    if S is None:
        y = tl.load(y_ptr + offs, mask=m)
    else:
        y = S  # a Python scalar, as if written in the source
    tl.static_assert((x < y).dtype == tl.int1)
    tl.static_assert((y == x).dtype == tl.int1)
    tl.store(o_ptr + 0 * n + offs, x < y, mask=m)
    tl.store(o_ptr + 1 * n + offs, x <= y, mask=m)
    tl.store(o_ptr + 2 * n + offs, x > y, mask=m)
    tl.store(o_ptr + 3 * n + offs, x >= y, mask=m)
    tl.store(o_ptr + 4 * n + offs, x == y, mask=m)
    tl.store(o_ptr + 5 * n + offs, x != y, mask=m)
    tl.store(o_ptr + 6 * n + offs, y < x, mask=m)   # reflected operands (scalar on the left)
    tl.store(o_ptr + 7 * n + offs, y == x, mask=m)


MIXED_CMP_OPS = CMP_OPS + ["rlt", "req"]

# (x dtype, y: a dtype or a Python scalar, computation dtype by upstream's rules, pairs that
# tell the computation dtype apart from torch's: (x, y) for tensors, x values for scalars)
MIXED_CMP_CASES = [
    (T.int8, T.uint8, T.uint8, [(-1, 200), (-56, 200), (-128, 128), (-100, 156), (5, 5)]),  # unsigned wins
    (T.int32, T.float16, T.float16, [(2049, 2048.0), (2051, 2052.0), (-2049, -2048.0), (3, 3.0)]),
    (T.bfloat16, T.float32, T.float32, [(1.0, 1.0 + 2 ** -10), (-2.0, -2.0 - 2 ** -12), (0.5, 0.5)]),
    (T.uint32, T.int32, T.uint32, [(3, -5), (2 ** 32 - 5, -5), (2 ** 31, -2 ** 31), (7, 7)]),
    (T.int8, 5, T.int8, [4, 5, 6, -128, 127]),           # a Python int does not promote
    (T.int8, 2.5, T.float32, [2, 3, -3]),                # a Python float does: fp32
    (T.uint8, 200, T.uint8, [199, 200, 201, 0, 255]),
    (T.uint8, 127.5, T.float32, [127, 128, 0, 255]),
    (T.float16, 3, T.float16, [3.0, 2.998046875, 3.001953125]),
    (T.float16, 0.1, T.float16, [0.0999755859375, 0.10003662109375, 0.09991455078125]),  # fp16(0.1) == 0.1
    (T.bfloat16, 257, T.bfloat16, [256.0, 258.0]),       # 257 rounds to 256 in bf16
    (T.bfloat16, 0.1, T.bfloat16, [0.10009765625, 0.099609375]),
    (T.float64, 3, T.float64, [3.0, 3.0000000000000004, 2.9999999999999996]),
    (T.float64, 0.1, T.float64, [0.1, 0.10000000149011612]),  # compared in fp64, not via fp32
]


def _mixed_cmp_id(c):
    y = _name(c[1]) if isinstance(c[1], torch.dtype) else f"{type(c[1]).__name__}{c[1]}"
    return f"{_name(c[0])}-vs-{y}"


def _full_range(dt, n, g):
    if dt.is_floating_point or not dt.is_signed:
        return rand_values(dt, n, g)
    info = torch.iinfo(dt)
    return torch.randint(info.min, info.max + 1, (n,), generator=g, dtype=torch.int64).to(dt)


def _exact(values, dt):
    """A tensor of dt from Python numbers, without a detour through torch's default fp32."""
    return torch.tensor(values, dtype=torch.float64 if dt.is_floating_point else torch.int64).to(dt)


def _as_cmp(v, C):
    """v (a tensor or a Python scalar) converted to the computation dtype C, in a dtype torch
    compares in (uint16/32 are widened to int64 after the conversion, which keeps order)."""
    if not isinstance(v, torch.Tensor):
        v = torch.tensor(v, dtype=torch.float64 if isinstance(v, float) else torch.int64)
    t = v.to(C)
    return t.to(torch.int64) if C in (T.uint16, T.uint32) else t


@pytest.mark.parametrize("xdt,y,C,special", MIXED_CMP_CASES, ids=[_mixed_cmp_id(c) for c in MIXED_CMP_CASES])
def test_comparison_mixed_dtypes(xdt, y, C, special):
    """x OP y between different dtypes or with a Python scalar: the result is int1 and the
    comparison runs in upstream's promoted type (semantic.binary_op_type_checking_impl)."""
    g = _gen(300)
    x = _full_range(xdt, N, g)
    if isinstance(y, torch.dtype):
        yt = _full_range(y, N, g)
        x[:len(special)] = _exact([p[0] for p in special], xdt)
        yt[:len(special)] = _exact([p[1] for p in special], y)
        yv, s = yt, None
    else:
        x[:len(special)] = _exact(special, xdt)
        yv, s = y, y
    out = torch.zeros(len(MIXED_CMP_OPS) * N, dtype=torch.bool)
    _cmp_mixed_kernel[(triton.cdiv(N, BLOCK),)](x, yv if s is None else x, out, N, S=s, BLOCK=BLOCK)
    out = out.view(len(MIXED_CMP_OPS), N)
    a, b = _as_cmp(x, C), _as_cmp(yv, C)
    refs = {op: _cmp_ref(op, a, b).expand(N) for op in CMP_OPS}
    refs["rlt"], refs["req"] = (b < a).expand(N), (b == a).expand(N)
    for k, op in enumerate(MIXED_CMP_OPS):
        bad = (out[k] != refs[op]).nonzero().flatten()[:5].tolist()
        assert not bad, f"{op}: lanes {bad} x={x[bad].tolist()} got {out[k][bad].tolist()}"


# ---- math functions: tl.*, tl.math.*, libdevice ----------------------------------------------

MATH_OPS = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "sigmoid", "erf", "tanh", "abs"]
POSITIVE_DOMAIN = {"log", "log2", "sqrt", "rsqrt"}


@triton.jit
def _math_kernel(x_ptr, p_ptr, o_ptr, n, NS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)  # any sign
    p = tl.load(p_ptr + offs, mask=m, other=1.0)  # positive domain (log, sqrt, ...)
    if x.dtype == tl.float16 or x.dtype == tl.bfloat16:  # upstream's math takes fp32/fp64 only
        x = x.to(tl.float32)
        p = p.to(tl.float32)
    if NS == "tl":
        tl.store(o_ptr + 0 * n + offs, tl.exp(x), mask=m)
        tl.store(o_ptr + 1 * n + offs, tl.exp2(x), mask=m)
        tl.store(o_ptr + 2 * n + offs, tl.log(p), mask=m)
        tl.store(o_ptr + 3 * n + offs, tl.log2(p), mask=m)
        tl.store(o_ptr + 4 * n + offs, tl.sqrt(p), mask=m)
        tl.store(o_ptr + 5 * n + offs, tl.rsqrt(p), mask=m)
        tl.store(o_ptr + 6 * n + offs, tl.sin(x), mask=m)
        tl.store(o_ptr + 7 * n + offs, tl.cos(x), mask=m)
        tl.store(o_ptr + 8 * n + offs, tl.sigmoid(x), mask=m)
        tl.store(o_ptr + 9 * n + offs, tl.erf(x), mask=m)
        tl.store(o_ptr + 10 * n + offs, tl.tanh(x), mask=m)
        tl.store(o_ptr + 11 * n + offs, tl.abs(x), mask=m)
    elif NS == "math":
        tl.store(o_ptr + 0 * n + offs, tl.math.exp(x), mask=m)
        tl.store(o_ptr + 1 * n + offs, tl.math.exp2(x), mask=m)
        tl.store(o_ptr + 2 * n + offs, tl.math.log(p), mask=m)
        tl.store(o_ptr + 3 * n + offs, tl.math.log2(p), mask=m)
        tl.store(o_ptr + 4 * n + offs, tl.math.sqrt(p), mask=m)
        tl.store(o_ptr + 5 * n + offs, tl.math.rsqrt(p), mask=m)
        tl.store(o_ptr + 6 * n + offs, tl.math.sin(x), mask=m)
        tl.store(o_ptr + 7 * n + offs, tl.math.cos(x), mask=m)
        tl.store(o_ptr + 8 * n + offs, tl.math.sigmoid(x), mask=m)
        tl.store(o_ptr + 9 * n + offs, tl.math.erf(x), mask=m)
        tl.store(o_ptr + 10 * n + offs, tl.math.tanh(x), mask=m)
        tl.store(o_ptr + 11 * n + offs, tl.math.abs(x), mask=m)
    else:  # libdevice (spine-triton's triton.language.extra.cpu.libdevice; it has no sigmoid)
        tl.store(o_ptr + 0 * n + offs, libdevice.exp(x), mask=m)
        tl.store(o_ptr + 1 * n + offs, libdevice.exp2(x), mask=m)
        tl.store(o_ptr + 2 * n + offs, libdevice.log(p), mask=m)
        tl.store(o_ptr + 3 * n + offs, libdevice.log2(p), mask=m)
        tl.store(o_ptr + 4 * n + offs, libdevice.sqrt(p), mask=m)
        tl.store(o_ptr + 5 * n + offs, libdevice.rsqrt(p), mask=m)
        tl.store(o_ptr + 6 * n + offs, libdevice.sin(x), mask=m)
        tl.store(o_ptr + 7 * n + offs, libdevice.cos(x), mask=m)
        tl.store(o_ptr + 9 * n + offs, libdevice.erf(x), mask=m)
        tl.store(o_ptr + 10 * n + offs, libdevice.tanh(x), mask=m)
        tl.store(o_ptr + 11 * n + offs, libdevice.abs(x), mask=m)


_MATH_REF = {"exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "log2": torch.log2, "sqrt": torch.sqrt,
             "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos, "sigmoid": torch.sigmoid, "erf": torch.erf,
             "tanh": torch.tanh, "abs": torch.abs}
_MATH_TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float64: dict(rtol=1e-12, atol=1e-13),
             torch.float16: dict(rtol=2e-3, atol=1e-3), torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2)}


def _run_math(ns, dt, x, p):
    n = x.numel()
    out = torch.full((len(MATH_OPS) * n,), float("nan"), dtype=dt)
    _math_kernel[(triton.cdiv(n, BLOCK),)](x, p, out, n, NS=ns, BLOCK=BLOCK)
    return out.view(len(MATH_OPS), n)


@functools.lru_cache(maxsize=None)
def _math_results(ns, dt):
    g = _gen(11)
    x = (torch.randn(N, generator=g) * 3).to(dt)
    if dt == torch.float16:
        x = x.clamp(-9, 9)  # keeps exp(x) below fp16's 65504
    p = (torch.rand(N, generator=g) * 20 + 0.01).to(dt)
    return x, p, _run_math(ns, dt, x, p)


MATH_CASES = ([("tl", dt, op) for dt in FLOAT_DTYPES for op in MATH_OPS]
              + [("math", dt, op) for dt in FLOAT_DTYPES for op in MATH_OPS]
              + [("libdevice", dt, op) for dt in (torch.float32, torch.float64) for op in MATH_OPS if op != "sigmoid"])


@pytest.mark.parametrize("ns,dt,op", MATH_CASES, ids=[f"{c[0]}-{_name(c[1])}-{c[2]}" for c in MATH_CASES])
def test_math(ns, dt, op):
    x, p, out = _math_results(ns, dt)
    arg = p if op in POSITIVE_DOMAIN else x
    ref = _MATH_REF[op](arg.double()).to(dt)
    torch.testing.assert_close(out[MATH_OPS.index(op)], ref, **_MATH_TOL[dt])


@triton.jit
def _generic_libdevice_kernel(x_ptr, p_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    p = tl.load(p_ptr + offs, mask=m, other=1.0)
    tl.store(o_ptr + 0 * n + offs, generic_libdevice.exp(x), mask=m)
    tl.store(o_ptr + 1 * n + offs, generic_libdevice.log(p), mask=m)
    tl.store(o_ptr + 2 * n + offs, generic_libdevice.sqrt(p), mask=m)
    tl.store(o_ptr + 3 * n + offs, generic_libdevice.erf(x), mask=m)
    tl.store(o_ptr + 4 * n + offs, generic_libdevice.tanh(x), mask=m)
    tl.store(o_ptr + 5 * n + offs, generic_libdevice.pow(p, x), mask=m)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64], ids=_name)
def test_libdevice_generic_path(dt):
    """`from triton.language.extra import libdevice` (upstream's backend-neutral path) is the
    CPU libdevice, in kernels too."""
    import triton.language.extra.libdevice as by_path
    assert by_path is generic_libdevice
    assert generic_libdevice.exp is libdevice.exp and generic_libdevice.pow is libdevice.pow
    g = _gen(12)
    x = (torch.randn(N, generator=g) * 2).to(dt)
    p = (torch.rand(N, generator=g) * 10 + 0.01).to(dt)
    out = torch.zeros(6 * N, dtype=dt)
    _generic_libdevice_kernel[(triton.cdiv(N, BLOCK),)](x, p, out, N, BLOCK=BLOCK)
    out = out.view(6, N)
    xd, pd = x.double(), p.double()
    for k, ref in enumerate([xd.exp(), pd.log(), pd.sqrt(), torch.erf(xd), xd.tanh(), pd.pow(xd)]):
        torch.testing.assert_close(out[k], ref.to(dt), **_MATH_TOL[dt])


SPECIAL_X = [0.0, -0.0, 1.0, -1.0, 20.0, -20.0, 88.0, -88.0, 100.0, -100.0, 1e-30, 1e5, -1e5,
             float("inf"), float("-inf"), float("nan")]
SPECIAL_P = [0.0, -0.0, 1.0, 2.0, 1e-30, 1e30, 3e-39, float("inf"), float("nan"), -1.0, 0.5, 1e-5, 1e5,
             65504.0, 4.0, 0.25]


@pytest.mark.parametrize("op", MATH_OPS)
def test_math_special_values_fp32(op):
    """inf, nan, signed zero, overflow/underflow and denormal inputs behave like torch."""
    x = torch.tensor(SPECIAL_X, dtype=torch.float32)
    p = torch.tensor(SPECIAL_P, dtype=torch.float32)
    out = _run_math("tl", torch.float32, x, p)
    arg = p if op in POSITIVE_DOMAIN else x
    ref = _MATH_REF[op](arg)
    torch.testing.assert_close(out[MATH_OPS.index(op)], ref, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_sin_cos_large_arguments_fp32(op):
    x = torch.tensor([1e12, -3e13, 1e14, 7.5e15, 1e20, -1e25, 1e30, 3e38], dtype=torch.float32)
    out = _run_math("tl", torch.float32, x, torch.ones_like(x))
    ref = _MATH_REF[op](x.double()).float()
    torch.testing.assert_close(out[MATH_OPS.index(op)], ref, rtol=1e-5, atol=1e-5)


# ---- where, maximum/minimum with scalars, fma, cdiv, full, zeros, arange, program ids --------

@triton.jit
def _misc_kernel(x_ptr, y_ptr, z_ptr, f_ptr, i_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    local = tl.arange(0, BLOCK)
    offs = pid * BLOCK + local
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.load(y_ptr + offs, mask=m, other=0.0)
    z = tl.load(z_ptr + offs, mask=m, other=0.0)
    tl.store(f_ptr + 0 * n + offs, tl.fma(x, y, z), mask=m)
    tl.store(f_ptr + 1 * n + offs, tl.math.fma(x, 2.0, 1.0), mask=m)
    tl.store(f_ptr + 2 * n + offs, tl.where(x > y, x, y), mask=m)
    tl.store(f_ptr + 3 * n + offs, tl.where(x > 0, x, 0.5), mask=m)
    tl.store(f_ptr + 4 * n + offs, tl.where(x > y, 1.5, -1.5), mask=m)
    tl.store(f_ptr + 5 * n + offs, tl.maximum(x, 0.0), mask=m)
    tl.store(f_ptr + 6 * n + offs, tl.minimum(0.25, y), mask=m)
    tl.store(f_ptr + 7 * n + offs, tl.full([BLOCK], 3.5, tl.float32) + tl.zeros([BLOCK], dtype=tl.float32), mask=m)
    tl.store(f_ptr + 8 * n + offs, x * 2 + 1, mask=m)      # python scalars broadcast over the tile
    tl.store(f_ptr + 9 * n + offs, 1.0 - x / 4, mask=m)
    tl.store(i_ptr + 0 * n + offs, tl.cdiv(offs, 3), mask=m)
    tl.store(i_ptr + 1 * n + offs, offs * 0 + pid, mask=m)
    tl.store(i_ptr + 2 * n + offs, offs * 0 + tl.num_programs(0), mask=m)
    tl.store(i_ptr + 3 * n + offs, tl.arange(16, 16 + BLOCK), mask=m)
    tl.store(i_ptr + 4 * n + offs, tl.full([BLOCK], -7, tl.int32), mask=m)
    tl.store(i_ptr + 5 * n + offs, tl.where(m, offs, -1), mask=m)


def test_misc_ops():
    g = _gen(5)
    x, y, z = (torch.randn(N, generator=g) for _ in range(3))
    f = torch.zeros(10 * N)
    i = torch.zeros(6 * N, dtype=torch.int32)
    grid = (triton.cdiv(N, BLOCK),)
    _misc_kernel[grid](x, y, z, f, i, N, BLOCK=BLOCK)
    f, i = f.view(10, N), i.view(6, N)
    ar = torch.arange(N)
    tc = torch.testing.assert_close
    tc(f[0], torch.addcmul(z, x, y), rtol=1e-6, atol=1e-6)
    tc(f[1], x * 2 + 1)
    tc(f[2], torch.where(x > y, x, y))
    tc(f[3], torch.where(x > 0, x, torch.tensor(0.5)))
    tc(f[4], torch.where(x > y, torch.tensor(1.5), torch.tensor(-1.5)))
    tc(f[5], x.clamp(min=0))
    tc(f[6], y.clamp(max=0.25))
    tc(f[7], torch.full((N,), 3.5))
    tc(f[8], x * 2 + 1)
    tc(f[9], 1.0 - x / 4)
    assert i[0].tolist() == ((ar + 2) // 3).tolist()
    assert i[1].tolist() == (ar // BLOCK).tolist()
    assert i[2].tolist() == [grid[0]] * N
    assert i[3].tolist() == (ar % BLOCK + 16).tolist()
    assert i[4].tolist() == [-7] * N
    assert i[5].tolist() == ar.tolist()


@triton.jit
def _fma_kernel(x_ptr, y_ptr, z_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    z = tl.load(z_ptr + offs, mask=m)
    tl.static_assert(tl.fma(x, y, z).dtype == x.dtype)
    tl.store(o_ptr + 0 * n + offs, tl.fma(x, y, z), mask=m)
    tl.store(o_ptr + 1 * n + offs, tl.math.fma(x, 2.0, 1.0), mask=m)  # Python scalars keep x's dtype


# x * y + z rounds once: with x = 1 + e, y = 1 - e, z = -1 the exact result is -e*e, while
# rounding x * y first gives 1 (a tie broken to even, or the nearer neighbour) and then 0
FMA_EPS = {torch.float16: 2 ** -6, torch.bfloat16: 2 ** -5, torch.float32: 2 ** -13, torch.float64: 2 ** -27}
FMA_TOL = {torch.float16: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=8e-3, atol=8e-3),
           torch.float32: dict(rtol=1e-6, atol=1e-6), torch.float64: dict(rtol=1e-14, atol=1e-14)}


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=_name)
def test_fma_dtypes(dt):
    g = _gen(400)
    x, y, z = (rand_values(dt, N, g) for _ in range(3))
    e = FMA_EPS[dt]
    f64 = torch.float64
    x[:2] = torch.tensor([1 + e, -1 - e], dtype=f64).to(dt)
    y[:2] = torch.tensor([1 - e, 1 - e], dtype=f64).to(dt)
    z[:2] = torch.tensor([-1.0, 1.0], dtype=f64).to(dt)
    out = torch.zeros(2 * N, dtype=dt)
    _fma_kernel[(triton.cdiv(N, BLOCK),)](x, y, z, out, N, BLOCK=BLOCK)
    out = out.view(2, N)
    # products of two values of dt are exact in fp64, so the reference is rounded once (to dt)
    ref = (x.double() * y.double() + z.double()).to(dt)
    assert out[0][:2].tolist() == [-e * e, e * e], "tl.fma must round once (fused)"
    torch.testing.assert_close(out[0], ref, **FMA_TOL[dt])
    torch.testing.assert_close(out[1], (x.double() * 2 + 1).to(dt), **FMA_TOL[dt])


@triton.jit
def _where_kernel(c_ptr, x_ptr, y_ptr, o_ptr, n, S: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    c = tl.load(c_ptr + offs, mask=m)
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.static_assert(tl.where(c, x, y).dtype == x.dtype)
    tl.static_assert(tl.where(c, x, S).dtype == x.dtype)  # a Python scalar of the same kind
    tl.store(o_ptr + 0 * n + offs, tl.where(c, x, y), mask=m)
    tl.store(o_ptr + 1 * n + offs, tl.where(x != y, x, y), mask=m)  # a condition computed in the kernel
    tl.store(o_ptr + 2 * n + offs, tl.where(c, x, S), mask=m)
    tl.store(o_ptr + 3 * n + offs, tl.where(c, S, y), mask=m)


WHERE_DTYPES = [torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int64, torch.uint8, torch.bool]
WHERE_SCALAR = {torch.float16: 1.5, torch.bfloat16: -2.25, torch.float64: 0.1, torch.int8: -7, torch.int64: 2 ** 40,
                torch.uint8: 200, torch.bool: True}


@pytest.mark.parametrize("dt", WHERE_DTYPES, ids=_name)
def test_where_dtypes(dt):
    g = _gen(500)
    c = rand_values(torch.bool, N, g)
    x, y = rand_values(dt, N, g), rand_values(dt, N, g)
    s = WHERE_SCALAR[dt]
    out = torch.zeros(4 * N, dtype=dt)
    _where_kernel[(triton.cdiv(N, BLOCK),)](c, x, y, out, N, S=s, BLOCK=BLOCK)
    out = out.view(4, N)
    st = torch.tensor(s, dtype=torch.float64 if isinstance(s, float) else torch.int64).to(dt)
    assert bits_equal(out[0], torch.where(c, x, y))
    assert bits_equal(out[1], torch.where(x != y, x, y))
    assert bits_equal(out[2], torch.where(c, x, st))
    assert bits_equal(out[3], torch.where(c, st, y))


@triton.jit
def _cdiv_kernel(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    tl.static_assert(tl.cdiv(x, y).dtype == x.dtype)
    tl.store(o_ptr + 0 * n + offs, tl.cdiv(x, y), mask=m)
    tl.store(o_ptr + 1 * n + offs, tl.cdiv(x, 8), mask=m)
    tl.store(o_ptr + 2 * n + offs, tl.cdiv(x, triton.cdiv(7, 2)), mask=m)  # the host helper on constants


@pytest.mark.parametrize("dt", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint32], ids=_name)
def test_cdiv_dtypes(dt):
    """cdiv(x, d) = (x + d - 1) // d, for x >= 0 and 1 <= d <= 8 up to the type's maximum - 8
    (uint32: the upper half too, where a signed division would go wrong)."""
    g = _gen(600)
    top = torch.iinfo(dt).max - 8 if dt != torch.uint32 else 2 ** 32 - 9
    x = unsigned_values(torch.uint32, N, g).to(torch.int64) if dt == torch.uint32 else \
        torch.randint(0, 200, (N,), generator=g)
    x = torch.minimum(x, torch.tensor(top))
    x[:4] = torch.tensor([0, 1, top, top - 1])
    y = torch.randint(1, 9, (N,), generator=g)
    out = torch.zeros(3 * N, dtype=dt)
    _cdiv_kernel[(triton.cdiv(N, BLOCK),)](x.to(dt), y.to(dt), out, N, BLOCK=BLOCK)
    out = out.view(3, N)
    xs, ys = x.tolist(), y.tolist()
    for k, want in enumerate([[-(-a // b) for a, b in zip(xs, ys)], [-(-a // 8) for a in xs],
                              [-(-a // 4) for a in xs]]):
        assert out[k].tolist() == want, f"output {k}"


def test_host_helpers():
    assert triton.cdiv(0, 128) == 0
    assert triton.cdiv(1, 128) == 1
    assert triton.cdiv(128, 128) == 1
    assert triton.cdiv(129, 128) == 2
    assert [triton.next_power_of_2(v) for v in (0, 1, 2, 3, 5, 64, 65, 1000)] == [1, 1, 2, 4, 8, 64, 128, 1024]



@triton.jit
def _scale_rows(S, Y, Z, N, P: tl.constexpr, W: tl.constexpr):
    rows = tl.program_id(0) * P + tl.arange(0, P)[:, None]
    s = tl.load(S + rows, mask=rows < N, other=3)  # a masked [P, 1] column
    cols = tl.arange(0, W)[None, :]
    y = tl.load(Y + rows * W + cols)
    tl.store(Z + rows * W + cols, tl.where(s == 0xFF, float("nan"), y * s.to(y.dtype)))


@pytest.mark.parametrize("sdt, ydt", [(torch.uint8, torch.float16), (torch.float32, torch.float32)])
def test_masked_column_load_broadcast(sdt, ydt):
    """A masked [P, 1] load broadcast against a [P, W] tile (it failed in MLIR 19's
    lower-vector-mask before the pad of its unit dim was collapsed, docs/compiler.md §1.3)."""
    for n in (5, 16, 23, 32):
        s = torch.randint(1, 5, (32,)).to(sdt)
        s[1] = 0xFF if sdt == torch.uint8 else 255.0
        y = torch.randn(32, 8).to(ydt)
        z = torch.empty_like(y)
        _scale_rows[(2,)](s, y, z, n, 16, 8)
        sr = s.clone().float()
        sr[n:] = 3
        want = torch.where(sr[:, None] == 255, float("nan"), y.float() * sr[:, None]).to(ydt)
        torch.testing.assert_close(z, want, equal_nan=True, rtol=0, atol=0)
