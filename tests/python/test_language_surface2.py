"""Issue 10 surface: tl.condition, tl.const, dtype float layouts (exponent_bias,
fp_mantissa_width) of every float dtype, fp8 included, against torch.finfo."""
import math

import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _cond_kernel(X, Z, N: tl.constexpr):
    i = 0
    acc = 0.0
    while tl.condition(i < N, disable_licm=True):
        acc += tl.load(X + i)
        i += 1
    tl.store(Z, acc)


def test_condition_while():
    x = torch.arange(10, dtype=torch.float32)
    z = torch.zeros(1)
    _cond_kernel[(1,)](x, z, 7)
    assert z.item() == x[:7].sum().item()


@triton.jit
def _const_kernel(X: tl.const, Z, N: tl.constexpr):
    tl.store(Z + tl.arange(0, N), tl.load(X + tl.arange(0, N)) * 2)


def test_const_annotation():
    x = torch.randn(16)
    z = torch.empty_like(x)
    _const_kernel[(1,)](x, z, 16)
    assert torch.equal(z, x * 2)


_FLOATS = [(tl.float16, torch.float16), (tl.bfloat16, torch.bfloat16), (tl.float32, torch.float32),
           (tl.float64, torch.float64), (tl.float8e4nv, torch.float8_e4m3fn), (tl.float8e5, torch.float8_e5m2),
           (tl.float8e4b8, torch.float8_e4m3fnuz), (tl.float8e5b16, torch.float8_e5m2fnuz)]


@pytest.mark.parametrize("tdt,ref", _FLOATS, ids=[str(t) for t, _ in _FLOATS])
def test_float_layout(tdt, ref):
    fi = torch.finfo(ref)
    # mantissa bits: the largest m with 1 + 2^-m exact in the dtype (finfo.eps of the fnuz
    # formats is not 2^-m in torch)
    m = max(k for k in range(1, 53) if torch.tensor(1 + 2.0 ** -k, dtype=torch.float64).to(ref).double() == 1 + 2.0 ** -k)
    assert tdt.fp_mantissa_width == m
    assert tdt.exponent_bias == 1 - round(math.log2(fi.smallest_normal))
    assert tdt.primitive_bitwidth == fi.bits


def test_float8e4b15_layout():
    # no torch dtype: 4 exponent bits with bias 15, 3 mantissa bits (upstream's values)
    assert (tl.float8e4b15.exponent_bias, tl.float8e4b15.fp_mantissa_width) == (15, 3)


def test_pi32_t():
    assert tl.pi32_t == tl.pointer_type(tl.int32)
