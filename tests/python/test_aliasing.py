"""Loads observe memory as it was when they execute in program order, whatever the
fusion: kernels that load a buffer and later store into it (or into a buffer the load
is still needed after) give torch's answers. Each reference is computed before the
launch from a copy of the inputs.

These were wrong before the lowering's plan (docs/compiler.md §2.3): a load fused into
a store to the same argument read elements the store had already written, and a load
still used after a store was folded into the later read."""
import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _swap(x_ptr, y_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MASKED:
        m = offs < n
        a = tl.load(x_ptr + offs, mask=m)
        b = tl.load(y_ptr + offs, mask=m)
        tl.store(x_ptr + offs, b, mask=m)
        tl.store(y_ptr + offs, a, mask=m)
    else:
        a = tl.load(x_ptr + offs)
        b = tl.load(y_ptr + offs)
        tl.store(x_ptr + offs, b)
        tl.store(y_ptr + offs, a)


@pytest.mark.parametrize("n,masked", [(256, False), (1024, False), (64, True), (1000, True)])
def test_swap_two_arrays(n, masked):
    x, y = torch.randn(n), torch.randn(n)
    x0, y0 = x.clone(), y.clone()
    _swap[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, MASKED=masked)
    assert torch.equal(x, y0) and torch.equal(y, x0)


@triton.jit
def _add_row0(x_ptr, y_ptr, z_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    offs = rm[:, None] * BN + rn[None, :]
    z = tl.load(x_ptr + offs) + tl.load(y_ptr + offs) + tl.load(z_ptr + rn)[None, :]
    tl.store(z_ptr + offs, z)


def test_store_over_a_broadcast_row_it_reads():
    x, y, z = torch.randn(16, 32), torch.randn(16, 32), torch.randn(16, 32)
    ref = x + y + z[0][None, :]
    _add_row0[(1,)](x, y, z, BM=16, BN=32)
    torch.testing.assert_close(z, ref)


# The epilogues of upstream's test_dot: z = x @ y, then z += the matrix / its column 0 /
# its row 0 of Z, stored into Z.
@triton.jit
def _dot_epilogue(X, Y, Z, sx, sy, sz, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  ADD_MATRIX: tl.constexpr, ADD_ROWS: tl.constexpr, ADD_COLS: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    x = tl.load(X + om[:, None] * sx + ok[None, :])
    y = tl.load(Y + ok[:, None] * sy + on[None, :])
    zs = Z + om[:, None] * sz + on[None, :]
    z = tl.dot(x, y)
    if ADD_MATRIX:
        z += tl.load(zs)
    if ADD_ROWS:
        z += tl.load(Z + om * sz)[:, None]
    if ADD_COLS:
        z += tl.load(Z + on)[None, :]
    tl.store(zs, z)


@pytest.mark.parametrize("epilogue", ["add-matrix", "add-rows", "add-cols"])
def test_dot_epilogues_read_z_before_writing_it(epilogue):
    M = N = K = 32
    x, y, z = torch.randn(M, K), torch.randn(K, N), torch.randn(M, N)
    ref = x @ y
    ref += {"add-matrix": z, "add-rows": z[:, 0][:, None], "add-cols": z[0][None, :]}[epilogue]
    _dot_epilogue[(1,)](x, y, z, K, N, N, BM=M, BN=N, BK=K, ADD_MATRIX=epilogue == "add-matrix",
                        ADD_ROWS=epilogue == "add-rows", ADD_COLS=epilogue == "add-cols")
    torch.testing.assert_close(z, ref, rtol=1e-4, atol=1e-4)


@triton.jit
def _transpose_in_place(x_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    t = tl.load(x_ptr + r[:, None] * B + r[None, :])
    tl.store(x_ptr + r[None, :] * B + r[:, None], t)


def test_transpose_in_place():
    x = torch.randn(32, 32)
    ref = x.t().clone()
    _transpose_in_place[(1,)](x, B=32)
    assert torch.equal(x, ref)


@triton.jit
def _shift_right(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n - 1)
    tl.store(x_ptr + offs + 1, v, mask=offs < n - 1)


def test_shift_within_one_array():
    x = torch.arange(64, dtype=torch.float32)
    ref = x.clone()
    ref[1:] = x[:-1]
    _shift_right[(1,)](x, 64, BLOCK=64)
    assert torch.equal(x, ref)


@triton.jit
def _load_then_loop_stores(x_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * 2.0
    for i in range(ITERS):
        tl.store(x_ptr + offs, v + i, mask=m)


def test_load_before_a_loop_that_stores():
    x = torch.randn(100)
    ref = x * 2.0 + 2
    _load_then_loop_stores[(1,)](x, 100, ITERS=3, BLOCK=128)
    torch.testing.assert_close(x, ref)


@triton.jit
def _normalize_rows_in_place(x_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    p = x_ptr + row * stride + offs
    v = tl.load(p, mask=m, other=0.0)
    tl.store(p, v / tl.sum(v, axis=0), mask=m)
    tl.store(x_ptr + row * stride, tl.sum(v, axis=0))


def test_reduction_and_stores_into_its_input():
    x = torch.rand(8, 40) + 0.5
    s = x.sum(1)
    ref = x / s[:, None]
    ref[:, 0] = s
    _normalize_rows_in_place[(8,)](x, x.stride(0), 40, BLOCK=64)
    torch.testing.assert_close(x, ref)


@triton.jit
def _gather_into_source(x_ptr, idx_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + tl.load(idx_ptr + offs))
    tl.store(x_ptr + offs, v)


def test_gather_stored_into_its_source():
    x = torch.randn(64)
    idx = torch.randperm(64).to(torch.int32)
    ref = x[idx.long()].clone()
    _gather_into_source[(1,)](x, idx, BLOCK=64)
    assert torch.equal(x, ref)
