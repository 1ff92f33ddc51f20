"""Every ISA path of the dot micro-kernel, on whatever CPU runs the tests.

TRITIUM_CPU picks the CPU that host kernels are compiled for (it must run here): an
AVX2 CPU (znver1) runs on any AVX-512 machine, so the AVX2 micro-kernel (16 ymm
registers) is checked against torch even where the tests run on a Zen 4. Kernels
for CPUs that cannot run here (AVX-512 on an AVX2 machine, RVV) are compiled with
`tritium-opt --mcpu` and their innermost FMA loop read: the right registers, the
register block the plan chose, no stack traffic (spills) inside it.
"""
import os
import re
import subprocess

import pytest
import torch

import triton
import triton.language as tl
import triton.language.extra.smt as smt
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from conftest import REPO
from tritium_testutil import asm_loops

OPT = os.path.join(REPO, "build", "bin", "tritium-opt")


def _host_flags():
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


@triton.jit
def dot_bp(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    a = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (pm * BM, 0), (BM, BK), (1, 0))
    b = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, pn * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a, boundary_check=(0, 1)), tl.load(b, boundary_check=(0, 1)))
        a = tl.advance(a, (0, BK))
        b = tl.advance(b, (BK, 0))
    c = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(c, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def smt_mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, [M, K], [K, 1], [pm * BM, 0], [BM, BK], [1, 0])
    b_bp = tl.make_block_ptr(b_ptr, [K, N], [N, 1], [0, pn * BN], [BK, BN], [1, 0])
    acc = smt.view(tl.zeros((BM, BN), dtype=tl.float32), (0, 0), (BM, BN), (8, 16))
    for k in range(0, K, BK):
        a = smt.view(smt.descriptor_load(a_bp, (0, k)), (0, 0), (BM, BK), (8, 8))
        b = smt.view(smt.descriptor_load(b_bp, (k, 0)), (0, 0), (BK, BN), (8, 16))
        acc += smt.dot(a, b).to(tl.float32)
    c = smt.view(acc, (0, 0), (BM, BN), (1, 1)).to(c_ptr.dtype.element_ty)
    tl.store(tl.make_block_ptr(c_ptr, [M, N], [N, 1], [pm * BM, pn * BN], [BM, BN], [1, 0]), c,
             boundary_check=(0, 1))


CHILD = r"""
import glob, os, sys, torch, triton
DUMP = os.environ.get("SPINE_TRITON_DUMP_PATH")
sys.path.insert(0, %(here)r)
from test_isa_paths import dot_bp, smt_mm   # (its conftest import clears the dump variable)
if DUMP:
    os.environ["SPINE_TRITON_DUMP_PATH"] = DUMP
M, N, K = 150, 134, 200
for dt in (torch.float32, torch.float16, torch.bfloat16):
    a = torch.randn(M, K).to(dt); b = torch.randn(K, N).to(dt)
    ref = a.float() @ b.float()
    for kern, tol in ((dot_bp, 0.3), (smt_mm, 0.6)):
        c = torch.empty(M, N, dtype=dt)
        kern[(triton.cdiv(M, 64), triton.cdiv(N, 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32)
        err = (c.float() - ref).abs().max().item()
        limit = 1e-3 if dt == torch.float32 else tol
        assert err < limit, (kern, dt, err)
print("TARGET", triton.compiler.compiler._target(None)["cpu"])
asm = "".join(open(f).read() for f in glob.glob(os.path.join(DUMP or ".", "*.s")))
print("ASM", "zmm" in asm, "ymm" in asm)
"""


@pytest.mark.skipif(not {"avx2", "fma"} <= _host_flags(), reason="the host cannot run AVX2 code")
def test_avx2_micro_kernel_matches_torch(tmp_path, run_py):
    script = tmp_path / "child.py"
    script.write_text(CHILD % {"here": os.path.dirname(os.path.abspath(__file__))})
    p = run_py(script, tmp_path / "cache", env={"TRITIUM_CPU": "znver1", "OMP_NUM_THREADS": "2",
                                                "SPINE_TRITON_DUMP_PATH": tmp_path / "dump"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "TARGET znver1" in p.stdout
    assert "ASM False True" in p.stdout  # AVX2 code: ymm registers, never zmm


def test_unknown_cpu_is_an_error(tmp_path, run_py):
    script = tmp_path / "child.py"
    script.write_text(CHILD % {"here": os.path.dirname(os.path.abspath(__file__))})
    p = run_py(script, tmp_path / "cache", env={"TRITIUM_CPU": "pentium-pro"})
    assert p.returncode != 0
    assert "unknown CPU 'pentium-pro'" in p.stderr and "znver1" in p.stderr


def _dot_ttir(tmp_path, dt="fp32"):
    """The TTIR of dot_bp with 64 x 64 x 64 tiles (the _tt.mlir dump)."""
    src = ASTSource(dot_bp, {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"},
                    {"BM": 64, "BN": 64, "BK": 64})
    k = triton.compile(src, target=GPUTarget("cpu", 0, 0))
    path = tmp_path / "dot_bp_tt.mlir"
    path.write_text(k.asm["ttir"])
    return path


def _fma_loops(asm, fma_re, branch_re):
    """(fma count, instruction count, stack references: spills) of every innermost loop
    that has FMAs; the A operand's broadcasts out of a stack tile are not spills."""
    out = []
    for _, body in asm_loops(asm, branch_re):
        n = sum(bool(re.match(fma_re, i)) for i in body)
        if n:
            out.append((n, len(body), sum(("(%rsp" in i or "(%rbp" in i or "(sp)" in i) and
                                          not i.startswith("vbroadcast") for i in body)))
    return out


@pytest.mark.parametrize("cpu, fma_re, reg, block", [
    ("znver1", r"vfmadd\d+ps\s+%ymm", "ymm", 12),          # 6 x 16 fp32: 6 rows x 2 ymm
    ("znver4", r"vfmadd\d+ps\s+%zmm", "zmm", 24),          # 6 x 64: 6 rows x 4 zmm
    ("sapphirerapids", r"vfmadd\d+ps\s+%zmm", "zmm", 24),
    ("spacemit-x60", r"vfmacc\.vf", "v", 28),              # 7 x 32: 7 rows x 4 LMUL-1 registers
])
def test_micro_kernel_for_cpu(tmp_path, cpu, fma_re, reg, block):
    ttir = _dot_ttir(tmp_path)
    asm = subprocess.run([OPT, str(ttir), "--emit=asm", f"--mcpu={cpu}"], capture_output=True, text=True)
    assert asm.returncode == 0, asm.stderr
    loops = _fma_loops(asm.stdout, fma_re, r"^(j|b)")
    assert loops, asm.stdout[-2000:]
    # the main block of the plan, one k step per iteration (the M % mr tail rows are a
    # smaller block, which LLVM may unroll)
    main = [lp for lp in loops if lp[0] == block]
    assert main, loops
    assert all(stack == 0 for _, _, stack in loops), loops  # no spills in any FMA loop
    if reg != "zmm":
        assert not re.search(r"%zmm\d", asm.stdout)  # AVX2 and RVV code never touches 512-bit registers
    if cpu == "spacemit-x60":
        n, total, _ = main[0]
        assert 100 * n / total >= 60, loops  # the bar: >= 60% vfmacc by instruction count


def test_mcpu_errors(tmp_path):
    ttir = _dot_ttir(tmp_path)
    p = subprocess.run([OPT, str(ttir), "--emit=asm", "--mcpu=pentium"], capture_output=True, text=True)
    assert p.returncode == 1 and "unknown CPU 'pentium'" in p.stderr and "znver4" in p.stderr
    p = subprocess.run([OPT, str(ttir), "--emit=asm", "--mattr=+avx2"], capture_output=True, text=True)
    assert p.returncode == 1 and "--mattr=+avx2 needs --mcpu" in p.stderr


# ---- bf16 on the pair dot product (AVX512-BF16 vdpbf16ps) ---------------------------------

@pytest.mark.parametrize("cpu, mattr, pairs", [
    ("znver4", None, True), ("sapphirerapids", None, True), ("cooperlake", None, True),
    ("znver4", "-avx512bf16", False),      # switched off: widened to fp32 FMAs
    ("cascadelake", None, False),          # AVX-512 without BF16
    ("znver1", None, False),               # AVX2
])
def test_bf16_dot_uses_pair_instruction_where_present(tmp_path, cpu, mattr, pairs):
    ttir = _dot_ttir(tmp_path, "bf16")
    cmd = [OPT, str(ttir), "--emit=asm", f"--mcpu={cpu}"] + ([f"--mattr={mattr}"] if mattr else [])
    asm = subprocess.run(cmd, capture_output=True, text=True)
    assert asm.returncode == 0, asm.stderr
    dp = _fma_loops(asm.stdout, r"vdpbf16ps\s+%zmm", r"^j")
    if pairs:
        # 64 columns = 4 zmm of fp32 lanes; 6 rows, then the 64 % 6 = 4 tail rows
        assert [n for n, _, _ in dp if n == 24], dp
        assert all(stack == 0 for _, _, stack in dp), dp  # accumulators stay in registers
    else:
        assert "vdpbf16ps" not in asm.stdout
        assert _fma_loops(asm.stdout, r"vfmadd\d+ps", r"^j"), asm.stdout[-2000:]


@triton.jit
def dot_forms(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
              TRANS_B: tl.constexpr, ACC_ARG: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        if TRANS_B:  # b is stored [N, K]
            bt = tl.load(b_ptr + rn[:, None] * K + rk[None, :], mask=(rn[:, None] < N) & (rk[None, :] < K), other=0.0)
            b = tl.trans(bt)
        else:
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if ACC_ARG:
            acc = tl.dot(a, b, acc)
        else:
            acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.skipif("avx512_bf16" not in _host_flags(), reason="the host has no AVX512-BF16 to run vdpbf16ps")
@pytest.mark.parametrize("M, N, K, BM, BN, BK", [
    (150, 134, 201, 64, 64, 32),    # edges on every dim, K odd overall (the tile pads the pair)
    (64, 64, 64, 64, 64, 64),
    (257, 300, 130, 128, 128, 64),  # 128 rows: 21 blocks of 6 and a 2-row tail
    (40, 48, 16, 32, 16, 16),       # narrow panel: one zmm of columns
])
@pytest.mark.parametrize("trans_b, acc_arg", [(False, False), (True, True)])
def test_bf16_pair_dot_matches_torch(M, N, K, BM, BN, BK, trans_b, acc_arg):
    torch.manual_seed(0)
    a = torch.randn(M, K).bfloat16()
    b = (torch.randn(N, K) if trans_b else torch.randn(K, N)).bfloat16()
    ref = a.float() @ (b.float().T if trans_b else b.float())
    src = ASTSource(dot_forms, {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*fp32", "M": "i32", "N": "i32",
                                "K": "i32"},
                    {"BM": BM, "BN": BN, "BK": BK, "TRANS_B": trans_b, "ACC_ARG": acc_arg})
    assert "vdpbf16ps" in triton.compile(src, target=GPUTarget("cpu", 0, 0)).asm["asm"]  # the path under test
    for out_dt in (torch.float32, torch.bfloat16):
        c = torch.empty(M, N, dtype=out_dt)
        dot_forms[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, TRANS_B=trans_b,
                                                           ACC_ARG=acc_arg)
        if out_dt == torch.float32:  # exact products, fp32 sums: only the order differs
            torch.testing.assert_close(c, ref, rtol=1e-4, atol=1e-3)
        else:
            torch.testing.assert_close(c, ref.bfloat16(), rtol=1.6e-2, atol=1e-2)
