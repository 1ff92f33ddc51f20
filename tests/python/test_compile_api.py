"""Ahead-of-time compilation through upstream's API:
triton.compile(triton.compiler.ASTSource(fn, signature, constexprs),
               target=triton.backends.compiler.GPUTarget("cpu", 0, 0))
returns an object whose .asm maps every stage to its text (or bytes for "obj")."""
import re

import pytest
import torch

import triton
import triton.compiler
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def aot_scale(x_ptr, o_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


SIG = {"x_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32", "alpha": "fp32"}


@pytest.fixture(scope="module")
def compiled():
    src = triton.compiler.ASTSource(fn=aot_scale, signature=SIG, constexprs={"BLOCK": 128})
    return triton.compile(src, target=GPUTarget("cpu", 0, 0))


def test_asm_stages(compiled):
    asm = compiled.asm
    for key in ("ttir", "ttsharedir", "llir", "asm", "obj"):
        assert key in asm
    assert isinstance(asm["ttir"], str) and re.search(r"tt\.func public @aot_scale", asm["ttir"])
    assert "tt.make_range {end = 128 : i32, start = 0 : i32}" in asm["ttir"]  # the constexpr was applied
    assert isinstance(asm["ttsharedir"], str) and re.search(r"\blinalg\.\w+", asm["ttsharedir"])
    assert isinstance(asm["llir"], str) and re.search(r"^define .*@tritium_kernel\(", asm["llir"], re.MULTILINE)
    # the exported entry symbol of Tritium's kernel ABI (docs/compiler.md §1.2)
    assert isinstance(asm["asm"], str) and re.search(r"\.globl\s+tritium_kernel\b", asm["asm"])
    assert re.search(r"^tritium_kernel:", asm["asm"], re.MULTILINE)
    obj = asm["obj"]
    assert isinstance(obj, bytes) and obj[:4] == b"\x7fELF"
    assert b"tritium_kernel" in obj


def test_compiled_metadata(compiled):
    assert compiled.name == "aot_scale"
    assert compiled.metadata["name"] == "aot_scale"
    assert compiled.metadata["constexprs"] == {"BLOCK": 128}


def test_compiled_kernel_launches(compiled):
    n = 1000
    x = torch.randn(n)
    o = torch.zeros(n)
    # upstream's CompiledKernel[grid](*args) takes every argument, constexprs included
    compiled[(triton.cdiv(n, 128),)](x, o, n, 2.5, 128)
    torch.testing.assert_close(o, x * 2.5)


def test_signature_with_constexpr_entries_and_int_keys():
    """Upstream 3.x style: constexprs listed in the signature as "constexpr"; keys as indices."""
    src = triton.compiler.ASTSource(fn=aot_scale, signature={**SIG, "BLOCK": "constexpr"},
                                    constexprs={(4,): 64})
    k = triton.compile(src, target=GPUTarget("cpu", 0, 0))
    assert "end = 64" in k.asm["ttir"]
    n = 100
    x = torch.randn(n)
    o = torch.zeros(n)
    k[(2,)](x, o, n, 0.5, 64)
    torch.testing.assert_close(o, x * 0.5)


@pytest.mark.parametrize("ptr,scalar", [("*fp16", "fp32"), ("*fp64", "fp32"), ("*i32", "i32"), ("*bf16", "fp32")])
def test_signature_types(ptr, scalar):
    src = triton.compiler.ASTSource(fn=aot_scale, signature={"x_ptr": ptr, "o_ptr": ptr, "n": "i32", "alpha": scalar},
                                    constexprs={"BLOCK": 32})
    k = triton.compile(src, target=GPUTarget("cpu", 0, 0))
    elem = {"*fp16": "f16", "*fp64": "f64", "*i32": "i32", "*bf16": "bf16"}[ptr]
    assert f"!tt.ptr<{elem}>" in k.asm["ttir"]
    assert f"memref<?x{elem}>" in k.asm["ttsharedir"]


@triton.jit
def aot_scalars(o_ptr, h, b, d, f):
    tl.store(o_ptr + 0, h.to(tl.float64))
    tl.store(o_ptr + 1, b.to(tl.float64))
    tl.store(o_ptr + 2, d)
    tl.store(o_ptr + 3, f.to(tl.float64))
    tl.store(o_ptr + 4, (h * 2).to(tl.float64))   # arithmetic in the parameter's own type


def test_scalar_float_signatures_keep_their_type():
    """fp16 / bf16 / fp64 scalar signatures make f16 / bf16 / f64 parameters (they used to
    become f32), and a launch packs a Python float rounded once to that type."""
    sig = {"o_ptr": "*fp64", "h": "fp16", "b": "bf16", "d": "fp64", "f": "fp32"}
    k = triton.compile(triton.compiler.ASTSource(fn=aot_scalars, signature=sig), target=GPUTarget("cpu", 0, 0))
    head = next(line for line in k.asm["ttir"].splitlines() if "tt.func public @aot_scalars" in line)
    assert re.search(r"%arg1: f16\b.*%arg2: bf16\b.*%arg3: f64\b.*%arg4: f32\b", head), head
    assert re.search(r"%\w+: f16, %\w+: bf16, %\w+: f64, %\w+: f32", k.asm["ttsharedir"])
    o = torch.zeros(5, dtype=torch.float64)
    # above the fp16 / bf16 rounding tie by less than an fp32 ulp: rounding through fp32
    # first (as torch's double -> half does) would land on the tie and round to even, 1.0
    h, b, d, f = 1 + 2 ** -11 + 2 ** -30, 1 + 2 ** -8 + 2 ** -40, 0.1, 0.1
    k[(1,)](o, h, b, d, f)
    want = [1 + 2 ** -10, 1 + 2 ** -7, 0.1, torch.tensor(f, dtype=torch.float64).float().item(), 2 * (1 + 2 ** -10)]
    assert o.tolist() == want


def test_compile_twice_uses_the_cache(stats_delta):
    src = triton.compiler.ASTSource(fn=aot_scale, signature=SIG, constexprs={"BLOCK": 256})
    with stats_delta() as d:
        triton.compile(src, target=GPUTarget("cpu", 0, 0))
        triton.compile(src, target=GPUTarget("cpu", 0, 0))
    assert d["compiles"] == 1 and d["disk_hits"] == 1


def test_compile_error_surfaces():
    @triton.jit
    def broken(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, 10), 1.0)

    src = triton.compiler.ASTSource(fn=broken, signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 16})
    with pytest.raises(triton.CompilationError, match="power of 2"):
        triton.compile(src, target=GPUTarget("cpu", 0, 0))


def test_non_cpu_target_is_rejected():
    src = triton.compiler.ASTSource(fn=aot_scale, signature=SIG, constexprs={"BLOCK": 128})
    with pytest.raises(ValueError, match="CPU"):
        triton.compile(src, target=GPUTarget("cuda", 80, 32))
