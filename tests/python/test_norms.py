"""Row reductions, normalisations and activation chains against torch (issue 11).

The kernels are the ones bench/bench_norms.py times: softmax (masked and not),
log-softmax, layer norm in the three-pass tutorial form, RMS norm, cross-entropy
(forward), SiLU and GELU chains, max/min rows (NaN padding masked out by tl.where). Odd row lengths (masked
tails), row lengths that are a multiple of the vector width, rows longer than one
block, fp32, fp16 and bf16 in memory (fp32 inside the kernel). The reference is
torch on fp32 copies of the inputs. Then the riscv64 assembly of softmax and layer
norm: its loops carry no scalar float reductions and touch no stack.
"""
import re
import subprocess
import sys
import os

import pytest
import torch

import triton
import triton.compiler
import triton.language as tl
from triton.backends.compiler import GPUTarget

from tritium_testutil import asm_loops

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from bench_norms import (cross_entropy_kernel, layer_norm_kernel, log_softmax_kernel,  # noqa: E402
                         rms_norm_kernel, silu_kernel, softmax_kernel)

OPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin", "tritium-opt")
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
SHAPES = [(5, 1), (7, 37), (64, 512), (13, 1000), (3, 4096), (2, 5000)]


def _tol(dt):
    return {torch.float32: dict(atol=1e-5, rtol=1e-4), torch.float16: dict(atol=2e-3, rtol=2e-3),
            torch.bfloat16: dict(atol=1.6e-2, rtol=1.6e-2)}[dt]


def _x(m, n, dt, scale=3.0):
    return (torch.randn(m, n) * scale).to(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("m,n", SHAPES)
def test_softmax(m, n, dt):
    x = _x(m, n, dt)
    y = torch.empty_like(x)
    softmax_kernel[(m,)](x, y, n, n, BLOCK=triton.next_power_of_2(n), MASKED=True)
    torch.testing.assert_close(y.float(), torch.softmax(x.float(), 1).to(dt).float(), **_tol(dt))


@pytest.mark.parametrize("n", [16, 512, 1024])
def test_softmax_unmasked(n):
    x = _x(9, n, torch.float32)
    y, z = torch.empty_like(x), torch.empty_like(x)
    softmax_kernel[(9,)](x, y, n, n, BLOCK=n, MASKED=False)
    softmax_kernel[(9,)](x, z, n, n, BLOCK=n, MASKED=True)
    torch.testing.assert_close(y, torch.softmax(x, 1), **_tol(torch.float32))
    assert torch.equal(y, z)  # the mask on full vectors changes nothing


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("m,n", SHAPES)
def test_log_softmax(m, n, dt):
    x = _x(m, n, dt)
    y = torch.empty_like(x)
    log_softmax_kernel[(m,)](x, y, n, n, BLOCK=triton.next_power_of_2(n))
    torch.testing.assert_close(y.float(), torch.log_softmax(x.float(), 1).to(dt).float(), **_tol(dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("m,n,block,masked", [(7, 37, 64, True), (13, 1000, 256, True), (4, 1024, 1024, True),
                                              (3, 4100, 1024, True), (2, 2048, 512, True), (4, 1024, 1024, False),
                                              (2, 2048, 512, False)])
def test_layer_norm(m, n, block, dt, masked):
    x = _x(m, n, dt) + 1.5
    w = torch.rand(n).to(dt)
    b = torch.randn(n).to(dt)
    y = torch.empty_like(x)
    layer_norm_kernel[(m,)](x, y, w, b, n, n, 1e-5, BLOCK=block, MASKED=masked)
    want = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
    torch.testing.assert_close(y.float(), want.to(dt).float(), **_tol(dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("m,n", SHAPES)
def test_rms_norm(m, n, dt):
    x = _x(m, n, dt)
    w = torch.rand(n).to(dt)
    y = torch.empty_like(x)
    rms_norm_kernel[(m,)](x, y, w, n, n, 1e-6, BLOCK=triton.next_power_of_2(n))
    want = torch.rms_norm(x.float(), (n,), w.float(), 1e-6)
    torch.testing.assert_close(y.float(), want.to(dt).float(), **_tol(dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("m,n", SHAPES)
def test_cross_entropy(m, n, dt):
    x = _x(m, n, dt)
    t = torch.randint(0, n, (m,))
    loss = torch.empty(m)
    cross_entropy_kernel[(m,)](x, t, loss, n, n, BLOCK=triton.next_power_of_2(n))
    want = torch.nn.functional.cross_entropy(x.float(), t, reduction="none")
    torch.testing.assert_close(loss, want, atol=1e-4, rtol=1e-4)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [1, 1000, 4096, 70001])
def test_activation_chains(n, dt):
    x = (torch.randn(n) * 4).to(dt)
    out = torch.empty_like(x)
    gelu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    torch.testing.assert_close(out.float(), torch.nn.functional.gelu(x.float()).to(dt).float(), **_tol(dt))
    if dt == torch.float32:
        silu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        torch.testing.assert_close(out, torch.nn.functional.silu(x), **_tol(dt))


@triton.jit
def row_stats(x_ptr, mx_ptr, mn_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=float("nan")).to(tl.float32)
    valid = cols < n
    tl.store(mx_ptr + row, tl.max(tl.where(valid, x, -float("inf")), axis=0))
    tl.store(mn_ptr + row, tl.min(tl.where(valid, x, float("inf")), axis=0))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("m,n", [(6, 1), (5, 33), (4, 1024), (3, 3000)])
def test_row_max_min(m, n, dt):
    x = (torch.randn(m, n) * 100 - 50).to(dt)  # negative rows too: no 0 hides a wrong init
    mx, mn = torch.empty(m), torch.empty(m)
    row_stats[(m,)](x, mx, mn, n, n, BLOCK=triton.next_power_of_2(n))
    xf = x.float()
    assert torch.equal(mx, xf.max(1).values) and torch.equal(mn, xf.min(1).values)


# ---- riscv64: the inner loops of softmax and layer norm --------------------------------------

def _rv_asm(fn, sig, consts):
    k = triton.compile(triton.compiler.ASTSource(fn, sig, consts), target=GPUTarget("cpu", "riscv64", 0))
    return k.asm["asm"]


SCALAR_FP = re.compile(r"^f(max|min|add|sub|mul|madd|msub|nmadd|div)\.(s|d)\b")


@pytest.mark.parametrize("which", ["softmax", "layer_norm"])
def test_riscv_inner_loops_vector_only(which):
    if which == "softmax":
        asm = _rv_asm(softmax_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "stride": "i32"},
                      {"BLOCK": 1024, "MASKED": True})
    else:
        asm = _rv_asm(layer_norm_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32",
                                          "stride": "i32", "N": "i32", "eps": "fp32"},
                      {"BLOCK": 1024, "MASKED": True})
    loops = asm_loops(asm, r"^b")
    assert loops, asm[-2000:]
    for label, body in loops:
        vec = sum(i.startswith("v") for i in body)
        scalar_fp = [i for i in body if SCALAR_FP.match(i)]
        stack = [i for i in body if "(sp)" in i]
        assert not scalar_fp, (label, scalar_fp)     # no scalar reduction loop
        assert not stack, (label, stack)             # no per-iteration stack round trip
        assert vec * 2 >= len(body), (label, body)   # mostly vector instructions


# ---- masked rows: full vectors unmasked, the masked tail alone (cg_split.c) -------------------

@pytest.mark.parametrize("n", [1, 15, 16, 17, 63, 64, 65, 1000, 1008, 1023, 1024])
def test_softmax_split_bounds(n):
    """Row lengths either side of the vector and chunk widths; each row is followed by
    NaN in memory (row stride > n), which a full-vector read past n would pull in."""
    m, stride = 5, 1024 + 64
    buf = torch.full((m, stride), float("nan"))
    buf[:, :n] = torch.randn(m, n) * 3
    y = torch.full((m, stride), 7.0)
    softmax_kernel[(m,)](buf, y, n, stride, BLOCK=1024, MASKED=True)
    torch.testing.assert_close(y[:, :n], torch.softmax(buf[:, :n], 1), **_tol(torch.float32))
    assert torch.all(y[:, n:] == 7.0)  # nothing stored past the row


@pytest.mark.parametrize("n,block", [(1000, 256), (1008, 256), (1024, 256), (777, 1024), (17, 16), (1, 1024),
                                     (17, 1024), (1000, 1024), (1023, 1024), (1024, 1024), (1025, 1024)])
def test_layer_norm_split_bounds(n, block):
    m, stride = 4, 1100
    buf = torch.full((m, stride), float("nan"))
    buf[:, :n] = torch.randn(m, n) + 1.5
    w, b = torch.rand(n), torch.randn(n)
    y = torch.full((m, stride), 7.0)
    layer_norm_kernel[(m,)](buf, y, w, b, stride, n, 1e-5, BLOCK=block, MASKED=True)
    want = torch.nn.functional.layer_norm(buf[:, :n], (n,), w, b, 1e-5)
    torch.testing.assert_close(y[:, :n], want, **_tol(torch.float32))
    assert torch.all(y[:, n:] == 7.0)


SM_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "stride": "i32"}


def _loop_loads(asm, is_rv):
    """(masked, plain) vector loads of each innermost loop that has a max reduction step."""
    out = []
    for label, body in asm_loops(asm, r"^b" if is_rv else r"^j"):
        if not any(i.startswith("vfmax.vv" if is_rv else "vmaxps") for i in body):
            continue
        if is_rv:
            loads = [i for i in body if re.match(r"^vle(8|16|32|64)\.v", i)]
            masked = [i for i in loads if i.endswith("v0.t")]
        else:  # a vector register and a memory operand: a load (stores have no max in their loop)
            loads = [i for i in body if re.search(r"\(%r\w+", i) and re.search(r"%[xyz]mm", i)
                     and not i.startswith("vmovaps\t%") and not i.startswith("vmovups\t%")]
            masked = [i for i in loads if "{%k" in i or i.startswith("vmaskmov")]
        out.append((label, len(masked), len(loads) - len(masked)))
    return out


@pytest.mark.parametrize("arch", [0, "znver1", "riscv64"])
def test_masked_row_loop_loads_unmasked(arch, tmp_path):
    """The masked softmax's max loop reads full vectors with plain loads; the masked loads
    are in the tail loop alone (before the split every load of the row was masked, or, on
    AVX2, tested in bounds per vector). Host, AVX2 (znver1 through tritium-opt), RVV."""
    k = triton.compile(triton.compiler.ASTSource(softmax_kernel, SM_SIG, {"BLOCK": 1024, "MASKED": True}),
                       target=GPUTarget("cpu", "riscv64" if arch == "riscv64" else 0, 0))
    asm = k.asm["asm"]
    if arch == "znver1":
        (tmp_path / "k_tt.mlir").write_text(k.asm["ttir"])
        p = subprocess.run([OPT, str(tmp_path / "k_tt.mlir"), "--emit=asm", "--mcpu=znver1"],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        asm = p.stdout
    loops = _loop_loads(asm, arch == "riscv64")
    assert any(plain and not masked for _, masked, plain in loops), loops  # the full-vector loop
    assert all(not (masked and plain) for _, masked, plain in loops), loops  # no loop mixes the two


@triton.jit
def _chunked_row_stats(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Per row: max and sum over chunks of BN columns, carried as [BM, BN] tiles that are
    reduced only after the loop (ir_accum carries them reduced), from a non-zero max init."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    mx = tl.full([BM, BN], -1e30, tl.float32)
    sm = tl.zeros([BM, BN], dtype=tl.float32)
    for off in range(0, N, BN):
        cols = off + tl.arange(0, BN)
        msk = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=msk, other=0.).to(tl.float32)
        mx = tl.maximum(mx, tl.where(msk, x, -1e30))
        sm += x
    tl.store(out_ptr + rows * 2, tl.max(mx, axis=1), mask=rows < M)
    tl.store(out_ptr + rows * 2 + 1, tl.sum(sm, axis=1), mask=rows < M)


@pytest.mark.parametrize("dt", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("m,n,bm,bn", [(5, 37, 4, 16), (9, 1000, 8, 128), (3, 4100, 2, 1024), (1, 1, 1, 16)])
def test_chunked_accumulators_reduced_after_loop(m, n, bm, bn, dt):
    x = _x(m, n, dt)
    out = torch.empty(m, 2)
    _chunked_row_stats[(triton.cdiv(m, bm),)](x, out, m, n, BM=bm, BN=bn)
    torch.testing.assert_close(out[:, 0], x.float().amax(1), atol=0, rtol=0)
    torch.testing.assert_close(out[:, 1], x.float().sum(1), atol=1e-3, rtol=1e-4)


@triton.jit
def _index_reductions(x_ptr, out_ptr, idx_ptr, M, N, c, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    out = tl.zeros([BM], dtype=tl.float32)
    isum = tl.zeros([BM], dtype=tl.int32)
    for off in range(0, N, BN):
        cols = off + tl.arange(0, BN)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.).to(tl.float32)
        d = tl.where(cols[None, :] < N, x - c, 0.)
        out += tl.sum(d * d, axis=1)
        isum += tl.sum(tl.where(cols[None, :] < N, cols[None, :] + rows[:, None] * 0, 0), axis=1)
    tl.store(out_ptr + rows, out, mask=rows < M)
    tl.store(idx_ptr + rows, isum, mask=rows < M)


@pytest.mark.parametrize("dt", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("m,n,bm,bn", [(3, 1000, 1, 1024), (5, 1024, 1, 1024), (4, 3000, 2, 512),
                                       (7, 37, 4, 64), (2, 5000, 1, 8192),
                                       (3, 9000, 1, 16384)])
def test_row_reduction_reads_column_index(m, n, bm, bn, dt):
    """A row reduction whose body reads the column index (layer norm's where(cols < N, x - mean, 0))
    tiled into a vector accumulator: the index comes from an iota input, must be offset per chunk
    and per loop step; the integer sum of the indices checks the values themselves."""
    x = _x(m, n, dt)
    out = torch.empty(m)
    idx = torch.empty(m, dtype=torch.int32)
    c = 0.25
    _index_reductions[(triton.cdiv(m, bm),)](x, out, idx, m, n, c, BM=bm, BN=bn)
    want = ((x.float() - c) ** 2).sum(1)
    torch.testing.assert_close(out, want, atol=1e-3, rtol=1e-4)
    assert torch.equal(idx, torch.full((m,), n * (n - 1) // 2, dtype=torch.int32))


@triton.jit
def _where_sq_sum(x_ptr, out_ptr, stride, N, c, OTHER: tl.constexpr, SWAP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("nan"))
        if SWAP:
            d = tl.where(N > cols, x - c, OTHER)
        else:
            d = tl.where(cols < N, x - c, OTHER)
        acc += d * d
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("other", [0.0, 2.5, float("inf")])
@pytest.mark.parametrize("n,block", [(1, 1024), (17, 1024), (1000, 1024), (1023, 1024), (1024, 1024),
                                     (1025, 1024), (1000, 256), (1024, 256), (17, 16)])
def test_where_mask_in_split_row_loop(n, block, other, swap):
    """layer norm's tl.where(cols < N, x - c, OTHER) summed squared: on the full vectors of the
    split loop the compare is folded to true (cg_split_cmp.c); lanes past N, padded with NaN by
    the load and followed by NaN in memory, must still become OTHER (any constant, not only the
    sum's identity), so the result is the valid part's sum plus OTHER^2 per padded lane."""
    m, stride = 3, 1100
    buf = torch.full((m, stride), float("nan"))
    buf[:, :n] = torch.randn(m, n) + 1.5
    out = torch.empty(m)
    c = 0.75
    _where_sq_sum[(m,)](buf, out, stride, n, c, OTHER=other, SWAP=swap, BLOCK=block)
    pad = triton.cdiv(n, block) * block - n
    want = ((buf[:, :n].double() - c) ** 2).sum(1) + (pad * other * other if pad else 0.0)
    torch.testing.assert_close(out.double(), want, atol=1e-3, rtol=1e-5)


def test_layer_norm_full_vectors_have_no_compare():
    """The masked layer norm's variance pass: its full-vector loop (plain loads, no masks)
    has no integer vector compare left; the masked tail loop keeps it (host x86 assembly)."""
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "stride": "i32",
           "N": "i32", "eps": "fp32"}
    k = triton.compile(triton.compiler.ASTSource(layer_norm_kernel, sig, {"BLOCK": 1024, "MASKED": True}),
                       target=GPUTarget("cpu", 0, 0))
    asm = k.asm["asm"]
    if not re.search(r"%zmm", asm):
        pytest.skip("host without AVX-512")
    sq = []  # loops that sum (x - mean)^2: vsubps, an FMA, no vector store (the third pass stores)
    store = re.compile(r"^vmov\w*\s+%[xyz]mm\d+(\s*\{%k\d\})?,\s*-?\d*\(")
    for label, body in asm_loops(asm, r"^j"):
        if (any(i.startswith("vsubps") for i in body) and any(i.startswith("vfmadd") for i in body)
                and not any(store.match(i) for i in body)):
            sq.append((label, any(i.startswith("vpcmp") for i in body), any("{%k" in i for i in body)))
    assert any(not cmp and not msk for _, cmp, msk in sq), sq  # the full-vector loop, compare folded
    assert all(msk for _, cmp, msk in sq if cmp), sq  # a compare only where the loads are masked
