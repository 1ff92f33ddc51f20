"""Cold regions: sin/cos reduce huge arguments exactly, behind a branch that
ordinary vectors skip (lo_math.c marks the region, compiler/src/cg_cold.c moves it).

The Payne-Hanek reduction for |x| >= 2^16 is branch-free vector code; cg_cold.c
puts it in a block entered only when some lane of the vector needs it. These tests
check both halves: the results for vectors that need it (some lanes or all) and
that the compiled code really has the branch.
"""
import re

import pytest
import torch

import triton
import triton.language as tl
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget


@triton.jit
def _trig(x_ptr, s_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(s_ptr + offs, tl.sin(x), mask=m)
    tl.store(c_ptr + offs, tl.cos(x), mask=m)


@triton.jit
def _scale(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0 + 1.0, mask=m)


_SIG = {"x_ptr": "*fp32", "s_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32"}


def _inputs(kind, n, g):
    small = (torch.rand(n, generator=g, dtype=torch.float64) * 200 - 100).float()
    huge = torch.ldexp(torch.rand(n, generator=g, dtype=torch.float64) + 1,
                       torch.randint(17, 127, (n,), generator=g)).float()
    huge = torch.where(torch.rand(n, generator=g) < 0.5, -huge, huge)
    if kind == "small":
        return small
    if kind == "huge":
        return huge
    return torch.where(torch.rand(n, generator=g) < 0.05, huge, small)  # a few lanes per vector


@pytest.mark.parametrize("kind", ["small", "huge", "mixed"])
def test_sin_cos_any_argument(kind):
    g = torch.Generator().manual_seed(11)
    n = 10007
    x = _inputs(kind, n, g)
    s = torch.empty(n)
    c = torch.empty(n)
    _trig[(triton.cdiv(n, 1024),)](x, s, c, n, BLOCK=1024)
    # references in double from the float inputs: <= 4 ulp, i.e. ~5e-7 absolute at |y| <= 1
    torch.testing.assert_close(s, torch.sin(x.double()).float(), rtol=0, atol=5e-7)
    torch.testing.assert_close(c, torch.cos(x.double()).float(), rtol=0, atol=5e-7)


def test_trig_kernel_has_cold_region():
    k = triton.compile(ASTSource(fn=_trig, signature=_SIG, constexprs={"BLOCK": 1024}),
                       target=GPUTarget("cpu", 0, 0))
    llir = k.asm["llir"]
    assert "cold.region" in llir, "the large-argument reduction is not behind a branch"
    # all f64 rounding (the reduction's work) is inside the cold blocks
    inside = outside = 0
    label = ""
    for line in llir.splitlines():
        m = re.match(r"^([\w.]+):", line)
        if m:
            label = m.group(1)
        elif "@llvm.roundeven" in line and "double" in line and not line.startswith("declare"):
            if label.startswith("cold.region"):
                inside += 1
            else:
                outside += 1
    assert inside > 0 and outside == 0, (inside, outside)


def test_plain_kernel_has_no_cold_region():
    k = triton.compile(ASTSource(fn=_scale, signature={"x_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32"},
                                 constexprs={"BLOCK": 1024}), target=GPUTarget("cpu", 0, 0))
    assert "cold." not in k.asm["llir"]


@triton.jit
def _marker_lookalikes(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    z = tl.fma(x, 1.0, -0.0)                 # the input marker's shape, in user code
    c = tl.fma(tl.cos(z), -1.0, -0.0)        # the output marker's shape, downstream of cos
    tl.store(o_ptr + offs, tl.fma(c, -1.0, -0.0) + tl.sin(x), mask=m)


@pytest.mark.parametrize("kind", ["small", "huge", "mixed", "zeros"])
def test_kernel_code_shaped_like_markers_keeps_its_meaning(kind):
    """fma(v, 1, -0) and fma(v, -1, -0) written in a kernel are v and -v, wherever they
    sit: they must not be taken for a cold region's markers (whose region is skipped,
    outputs zero, when the input is all zero: cos(0) is 1)."""
    g = torch.Generator().manual_seed(5)
    n = 4099
    x = torch.zeros(n) if kind == "zeros" else _inputs(kind, n, g)
    o = torch.empty(n)
    _marker_lookalikes[(triton.cdiv(n, 512),)](x, o, n, BLOCK=512)
    ref = (torch.cos(x.double()) + torch.sin(x.double())).float()
    torch.testing.assert_close(o, ref, rtol=0, atol=1e-6)
