"""Data-dependent loads (`ptr + loaded_idx`: index select, embedding rows, a gather along
both dims) against torch, and their code: an unguarded load through loaded indices is a
tensor.extract in the lowering, which MLIR vectorises into a vector.gather — an AVX-512
`vgatherdps`/`vpgatherdd` on znver4 (compiled with tritium-opt --mcpu=znver4, so the
check holds on any host). LLVM's SLP vectorizer is off instead of "+prefer-no-gather",
which had expanded every gather to scalar loads (compiler/src/cg_target.c)."""
import os
import re
import subprocess

import pytest
import torch

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from conftest import REPO

OPT = os.path.join(REPO, "build", "bin", "tritium-opt")


@triton.jit
def index_select(X, IDX, OUT, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    i = tl.load(IDX + offs)
    tl.store(OUT + offs, tl.load(X + i))


@triton.jit
def embedding(W, IDX, OUT, D: tl.constexpr, BR: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    idx = tl.load(IDX + rows)
    cols = tl.arange(0, D)
    tl.store(OUT + rows[:, None] * D + cols[None, :], tl.load(W + idx[:, None] * D + cols[None, :]))


@triton.jit
def gather2d(X, RI, CI, OUT, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """OUT[m, n] = X[RI[m], CI[n]]: no dim is contiguous."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    r = tl.load(RI + rm)
    c = tl.load(CI + rn)
    tl.store(OUT + rm[:, None] * BN + rn[None, :], tl.load(X + r[:, None] * N + c[None, :]))


DTYPES = [torch.float32, torch.int32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.float64]


def _values(dt, shape, g):
    if dt.is_floating_point:
        return (torch.randn(shape, generator=g) * 50).to(dt)
    return torch.randint(-100, 100, shape, generator=g).to(dt)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("idt", [torch.int32, torch.int64], ids=str)
def test_index_select(dt, idt):
    g = torch.Generator().manual_seed(1)
    x = _values(dt, (1000,), g)
    i = torch.randint(0, 1000, (4096,), generator=g).to(idt)
    out = torch.empty(4096, dtype=dt)
    index_select[(16,)](x, i, out, 256)
    assert torch.equal(out, torch.index_select(x, 0, i.long()))


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_embedding(dt):
    g = torch.Generator().manual_seed(2)
    w = _values(dt, (500, 64), g)
    i = torch.randint(0, 500, (256,), generator=g, dtype=torch.int32)
    out = torch.empty(256, 64, dtype=dt)
    embedding[(16,)](w, i, out, 64, 16)
    assert torch.equal(out, torch.nn.functional.embedding(i.long(), w))


@pytest.mark.parametrize("dt", [torch.float32, torch.int32, torch.float16], ids=str)
def test_gather_both_dims(dt):
    g = torch.Generator().manual_seed(3)
    x = _values(dt, (300, 48), g)
    ri = torch.randint(0, 300, (64,), generator=g, dtype=torch.int32)
    ci = torch.randint(0, 48, (32,), generator=g, dtype=torch.int32)
    out = torch.empty(64, 32, dtype=dt)
    gather2d[(4,)](x, ri, ci, out, 48, 16, 32)
    assert torch.equal(out, x[ri.long()][:, ci.long()])


def _asm(tmp_path, fn, sig, consts, cpu):
    k = triton.compile(ASTSource(fn, sig, consts), target=GPUTarget("cpu", 0, 0))
    path = tmp_path / f"{fn.__name__}_tt.mlir"
    path.write_text(k.asm["ttir"])
    p = subprocess.run([OPT, str(path), "--emit=asm", f"--mcpu={cpu}"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize("vt, insn", [("fp32", r"vgatherdps"), ("i32", r"vpgatherdd"),
                                      ("fp64", r"vgatherdpd|vgatherqpd")])
def test_index_select_is_a_vector_gather_on_avx512(tmp_path, vt, insn):
    asm = _asm(tmp_path, index_select, {"X": f"*{vt}", "IDX": "*i32", "OUT": f"*{vt}"}, {"B": 256}, "znver4")
    assert re.search(rf"\b({insn})\b", asm), asm[-3000:]


def test_gather_both_dims_is_a_vector_gather_on_avx512(tmp_path):
    asm = _asm(tmp_path, gather2d, {"X": "*fp32", "RI": "*i32", "CI": "*i32", "OUT": "*fp32"},
               {"N": 48, "BM": 16, "BN": 32}, "znver4")
    assert re.search(r"\bvgather[dq]ps\b", asm), asm[-3000:]
