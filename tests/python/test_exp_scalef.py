"""The exp family's 2^n scaling as AVX-512 vscalefps (compiler/src/cg_scalef.c).

lo_math.c scales its polynomial by 2^n built from exponent bits; on x86 with AVX-512F
cg_scalef replaces that product by vscalefps on 16-lane pieces (a scalar, a narrower and a
wider vector are widened or split). Results against torch in float64 rounded to float32:
normal, subnormal and overflowing results, infinities and NaN, for scalar operands, small
tiles, a 64-lane row reduction and 16-lane element-wise tiles; then the code: vscalefps on
znver4 (through tritium-opt --mcpu, so the check holds on any host) and none on znver1.
"""
import os
import re
import subprocess

import pytest
import torch

import triton
import triton.compiler
import triton.language as tl
from triton.backends.compiler import GPUTarget

OPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin", "tritium-opt")


@triton.jit
def _unary(x_ptr, y_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    if FN == "exp":
        y = tl.exp(x)
    elif FN == "exp2":
        y = tl.exp2(x)
    elif FN == "tanh":
        y = tl.extra.cpu.libdevice.tanh(x)
    elif FN == "sinh":
        y = tl.extra.cpu.libdevice.sinh(x)
    elif FN == "cosh":
        y = tl.extra.cpu.libdevice.cosh(x)
    elif FN == "erf":
        y = tl.erf(x)
    else:
        y = tl.sigmoid(x)
    tl.store(y_ptr + offs, y, mask=m)


@triton.jit
def _scalar_exp(x_ptr, y_ptr, n):
    for i in range(0, n):
        tl.store(y_ptr + i, tl.exp(tl.load(x_ptr + i)))


@triton.jit
def _exp_row_sum(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.program_id(0) * N + tl.arange(0, N))
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.exp(x), axis=0))


REF = {"exp": torch.exp, "exp2": torch.exp2, "tanh": torch.tanh, "sinh": torch.sinh,
       "cosh": torch.cosh, "erf": torch.erf,
       # upstream's definition, 1 / (1 + exp(-x)) in fp32: 0 below x = -88.7, where exp(-x)
       # overflows (torch.sigmoid gives the subnormal there)
       "sigmoid": lambda x: (1 / (1 + torch.exp(-x.float()))).double()}


def _inputs():
    special = torch.tensor([0.0, -0.0, 1.0, -1.0, 88.7, 88.73, 89.0, 127.9, 128.0, 150.0,
                            -87.3, -95.0, -103.0, -103.9, -104.0, -149.0, -150.0, -1e30, 1e30,
                            float("inf"), float("-inf"), float("nan")])
    wide = torch.linspace(-160.0, 160.0, 20011)
    return torch.cat([special, wide, torch.randn(4099) * 4])


def _check(y, x, fn):
    want = REF[fn](x.double()).float()
    assert torch.equal(torch.isnan(y), torch.isnan(want)), x[torch.isnan(y) != torch.isnan(want)]
    ok = ~torch.isnan(want)
    # <= 4 ulp relative (lo_math's bound for these), and subnormal results within 4 of their ulps
    torch.testing.assert_close(y[ok], want[ok], rtol=4 * 2.0 ** -23, atol=4 * 2.0 ** -149)


@pytest.mark.parametrize("fn", list(REF))
@pytest.mark.parametrize("block", [8, 64, 1024])
def test_exp_family_values(fn, block):
    x = _inputs()
    y = torch.empty_like(x)
    _unary[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), FN=fn, BLOCK=block)
    _check(y, x, fn)


def test_scalar_exp():
    x = torch.tensor([0.5, -103.5, 88.5, 89.0, -150.0, float("nan"), float("-inf"), 3.0])
    y = torch.empty_like(x)
    _scalar_exp[(1,)](x, y, x.numel())
    _check(y, x, "exp")


@pytest.mark.parametrize("n", [64, 1024, 4096])
def test_exp_row_sum(n):
    x = torch.randn(5, n) * 30 - 20
    out = torch.empty(5)
    _exp_row_sum[(5,)](x, out, N=n)
    torch.testing.assert_close(out, torch.exp(x.double()).sum(1).float(), rtol=1e-5, atol=0)


def _asm(tmp_path, cpu):
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
    k = triton.compile(triton.compiler.ASTSource(_unary, sig, {"FN": "exp", "BLOCK": 1024}),
                       target=GPUTarget("cpu", 0, 0))
    path = tmp_path / "k_tt.mlir"
    path.write_text(k.asm["ttir"])
    p = subprocess.run([OPT, str(path), "--emit=asm", f"--mcpu={cpu}"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_exp_scales_with_vscalef_on_avx512(tmp_path):
    asm = _asm(tmp_path, "znver4")
    assert re.search(r"\bvscalefps\b", asm), asm[-3000:]
    assert not re.search(r"vpslld\s+\$23", asm), asm[-3000:]  # no exponent-bit building left


def test_exp_without_avx512_builds_exponent_bits(tmp_path):
    asm = _asm(tmp_path, "znver1")
    assert not re.search(r"\bvscalef", asm)
    assert re.search(r"vpslld\s+\$23", asm), asm[-3000:]
