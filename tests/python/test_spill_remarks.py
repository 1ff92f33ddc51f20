"""Register spills LLVM reports become a compiler remark (issue 12, item 5).

A 128x128 fp32 accumulator tile with a 64-deep K step holds more live vectors than any
x86 register file, so the greedy register allocator spills: the compiled kernel's
`metadata["remarks"]` carries one "spills: ..." remark with the counts, at the kernel's
`def` line. A vector add needs no spills and gets no such remark. `tritium-opt
--remarks` prints the same remark for the TTIR.
"""
import os
import re
import subprocess

import torch
import triton
import triton.language as tl

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPILL = re.compile(r"^spills: LLVM's register allocator added (\d+) spills? and (\d+) reloads? ")


@triton.jit
def add_kernel(x, y, o, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + off, tl.load(x + off) + tl.load(y + off))


@triton.jit
def big_tile_mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a + rm[:, None] * K + (k + rk)[None, :]), tl.load(b + (k + rk)[:, None] * N + rn[None, :]))
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


def spill_remarks(kernel):
    return [r for r in kernel.metadata["remarks"] if r[3].startswith("spills:")]


def test_big_dot_tile_gets_a_spill_remark_with_counts():
    a, b, c = torch.randn(256, 256), torch.randn(256, 256), torch.empty(256, 256)
    big_tile_mm[(2, 2)](a, b, c, 256, 256, 256, BM=128, BN=128, BK=64)
    torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-4)
    k = big_tile_mm.warmup(a, b, c, 256, 256, 256, BM=128, BN=128, BK=64, grid=(2, 2))
    rs = spill_remarks(k)
    assert len(rs) == 1, k.metadata["remarks"]
    f, line, col, msg = rs[0]
    assert f == os.path.abspath(__file__)
    src = open(__file__).read().splitlines()
    assert src[line - 1].startswith("def big_tile_mm("), (line, src[line - 1])
    spills, reloads = map(int, SPILL.match(msg).groups())
    assert spills > 0 and reloads > 0


def test_vector_add_gets_none():
    x, y, o = torch.randn(4096), torch.randn(4096), torch.empty(4096)
    add_kernel[(4,)](x, y, o, BLOCK=1024)
    torch.testing.assert_close(o, x + y)
    k = add_kernel.warmup(x, y, o, BLOCK=1024, grid=(4,))
    assert spill_remarks(k) == [], k.metadata["remarks"]


def test_tritium_opt_prints_the_spill_remark(tmp_path):
    a, b, c = torch.randn(256, 256), torch.randn(256, 256), torch.empty(256, 256)
    k = big_tile_mm.warmup(a, b, c, 256, 256, 256, BM=128, BN=128, BK=64, grid=(2, 2))
    ttir = tmp_path / "mm.ttir"
    ttir.write_text(k.asm["ttir"])
    r = subprocess.run([os.path.join(REPO, "build", "bin", "tritium-opt"), str(ttir), "--emit=obj", "-o",
                        str(tmp_path / "mm.o"), "--remarks"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert re.search(r":\d+:\d+: remark: spills: LLVM's register allocator added \d+ spill", r.stderr), r.stderr
