"""Reductions whose body reads only tile indices (tl.arange) and scalars, with no
loaded input: MLIR 19 vectorised linalg.index of the trailing dim of a [1, N]
generic as a 1-D vector and such a row reduction lost its combine (a sum of
where(cols < N, cols, 0) over [1, N] came out 0, a max -2**31). torch computes
the reference from the same indices."""
import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def _row_index_reductions(out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    v = tl.where(cols[None, :] < N, cols[None, :] + rows[:, None], 0)
    tl.store(out_ptr + rows, tl.sum(v, axis=1))
    tl.store(out_ptr + BM + rows, tl.max(v, axis=1))
    tl.store(out_ptr + 2 * BM + rows, tl.min(tl.where(cols[None, :] < N, cols[None, :], 1 << 30), axis=1))
    tl.store(out_ptr + 3 * BM + rows, tl.argmax(v, axis=1))


@triton.jit
def _col_index_reductions(out_ptr, M, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    v = tl.where(rows[:, None] < M, rows[:, None] + cols[None, :], 0)
    tl.store(out_ptr + cols, tl.sum(v, axis=0))
    tl.store(out_ptr + BN + cols, tl.max(v, axis=0))


@pytest.mark.parametrize("bm,bn,n", [(1, 16, 9), (1, 128, 100), (1, 1024, 1000), (1, 8192, 5000),
                                     (1, 16384, 9000), (1, 32768, 32768), (4, 128, 100), (2, 16384, 12345)])
def test_row_index_reductions(bm, bn, n):
    out = torch.zeros(4 * bm, dtype=torch.int32)
    _row_index_reductions[(1,)](out, n, BM=bm, BN=bn)
    r, c = torch.arange(bm)[:, None], torch.arange(bn)[None, :]
    v = torch.where(c < n, c + r, 0)
    want = torch.cat([v.sum(1), v.amax(1), torch.where(c < n, c, 1 << 30).amin(1).expand(bm), v.argmax(1)])
    assert torch.equal(out, want.to(torch.int32))


@pytest.mark.parametrize("bm,bn,m", [(128, 1, 100), (16384, 1, 9000), (64, 4, 50)])
def test_col_index_reductions(bm, bn, m):
    out = torch.zeros(2 * bn, dtype=torch.int32)
    _col_index_reductions[(1,)](out, m, BM=bm, BN=bn)
    r, c = torch.arange(bm)[:, None], torch.arange(bn)[None, :]
    v = torch.where(r < m, r + c, 0)
    assert torch.equal(out, torch.cat([v.sum(0), v.amax(0)]).to(torch.int32))
