"""SPINE_TRITON_DUMP_PATH receives every stage of a compiled kernel, and
TRITON_ALWAYS_COMPILE=1 forces a recompile of a kernel that is in the disk cache."""
import os
import platform
import re

import pytest
import torch

import triton
import triton.language as tl

ELF_MAGIC = b"\x7fELF"


def _target_arch():
    """The architecture kernels are compiled for: SPINE_TRITON_TARGET_ARCH=riscv64 (or
    riscv) selects RISC-V (docs/compiler.md), otherwise the host's."""
    if os.environ.get("SPINE_TRITON_TARGET_ARCH") in ("riscv64", "riscv"):
        return "riscv64"
    return platform.machine()


def dump_vadd(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def dump_gelu(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(o_ptr + offs, 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)), mask=m)


def _run_vadd(kernel, n=4096, block=1024):
    x, y = torch.randn(n), torch.randn(n)
    o = torch.zeros(n)
    kernel[(triton.cdiv(n, block),)](x, y, o, n, BLOCK=block)
    torch.testing.assert_close(o, x + y)


@pytest.fixture
def dump_dir(tmp_path, monkeypatch, fresh_cache):
    d = tmp_path / "not" / "yet" / "there"
    assert not d.exists()
    monkeypatch.setenv("SPINE_TRITON_DUMP_PATH", str(d))
    return d


def _read(d, name):
    with open(os.path.join(d, name), "rb" if name.endswith(".so") else "r") as f:
        return f.read()


def test_dump_files(dump_dir):
    _run_vadd(triton.jit(dump_vadd))
    assert dump_dir.is_dir()  # created on demand
    k = "dump_vadd"
    expected = {f"{k}_tt.mlir", f"{k}_linalg.mlir", f"{k}_ll.mlir", f"{k}.ll", f"{k}.s", f"{k}.so"}
    assert expected <= set(os.listdir(dump_dir))

    tt = _read(dump_dir, f"{k}_tt.mlir")
    assert re.search(r"tt\.func public @dump_vadd", tt)
    assert "tt.load" in tt and "tt.store" in tt and "tt.make_range" in tt

    linalg = _read(dump_dir, f"{k}_linalg.mlir")
    assert re.search(r"\blinalg\.(generic|map|add|copy|fill)\b", linalg), linalg
    assert "func.func @dump_vadd" in linalg
    assert not re.search(r"\btt\.", linalg)  # upstream dialects only

    ll_mlir = _read(dump_dir, f"{k}_ll.mlir")
    assert "llvm.func" in ll_mlir

    llir = _read(dump_dir, f"{k}.ll")
    assert re.search(r"^define .*@tritium_kernel", llir, re.MULTILINE)
    assert re.search(r"fadd (\w+ )*<\d+ x float>", llir), "vector fadd expected in the LLVM IR"

    asm = _read(dump_dir, f"{k}.s")
    assert re.search(r"^tritium_kernel:", asm, re.MULTILINE)
    if _target_arch() == "x86_64":
        # packed single-precision add on vector registers (zmm, ymm or xmm: the width is the
        # code generator's choice for the host)
        assert re.search(r"\bvaddps\b[^\n]*%[xyz]mm\d+", asm), asm[:2000]
        assert re.search(r"\bvmovups\b[^\n]*%[xyz]mm\d+", asm)
    elif _target_arch() == "riscv64":
        # RVV: vector float add and unit-stride 32-bit loads
        assert re.search(r"\bvfadd\.v[vf]\b", asm), asm[:2000]
        assert re.search(r"\bvle32\.v\b", asm)

    so = _read(dump_dir, f"{k}.so")
    assert so[:4] == ELF_MAGIC


def test_dump_math_kernel_is_vectorized(dump_dir):
    kernel = triton.jit(dump_gelu)
    n = 3000
    x = torch.randn(n)
    o = torch.zeros(n)
    kernel[(triton.cdiv(n, 512),)](x, o, n, BLOCK=512)
    torch.testing.assert_close(o, torch.nn.functional.gelu(x), rtol=1e-5, atol=1e-6)
    asm = _read(dump_dir, "dump_gelu.s")
    # a vector polynomial, not libm calls
    if _target_arch() == "x86_64":
        assert re.search(r"\bv(fmadd|fmsub|fnmadd)\w*ps\b[^\n]*%[xyz]mm\d+", asm)
    elif _target_arch() == "riscv64":
        assert re.search(r"\bvf(n?)(macc|madd|msac|msub)\.v[vf]\b", asm)
    assert not re.search(r"call\w*\s+\w*erff?\b", asm)


def test_dump_of_two_kernels_in_one_dir(dump_dir):
    _run_vadd(triton.jit(dump_vadd))
    x = torch.randn(100)
    triton.jit(dump_gelu)[(1,)](x, torch.zeros(100), 100, BLOCK=128)
    names = set(os.listdir(dump_dir))
    for k in ("dump_vadd", "dump_gelu"):
        assert {f"{k}_tt.mlir", f"{k}_linalg.mlir", f"{k}.so"} <= names


def test_always_compile_forces_recompile(fresh_cache, monkeypatch, stats_delta):
    with stats_delta() as d:
        _run_vadd(triton.jit(dump_vadd))
    assert d["compiles"] == 1
    with stats_delta() as d:
        _run_vadd(triton.jit(dump_vadd))       # normally: from the disk cache
    assert d["compiles"] == 0 and d["disk_hits"] == 1
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    with stats_delta() as d:
        _run_vadd(triton.jit(dump_vadd))
    assert d["compiles"] == 1 and d["disk_hits"] == 0
    monkeypatch.delenv("TRITON_ALWAYS_COMPILE")
    with stats_delta() as d:
        _run_vadd(triton.jit(dump_vadd))
    assert d["compiles"] == 0 and d["disk_hits"] == 1


def test_no_dump_without_env(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.delenv("SPINE_TRITON_DUMP_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    _run_vadd(triton.jit(dump_vadd))
    assert not any(p.endswith("_tt.mlir") for p in os.listdir(tmp_path))
