"""tl.sort and tl.flip (python/triton/language/sort.py) against torch references: sizes,
dtypes, descending, NaN order, flip along each dim."""
import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _sort_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, DESC: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(Z + offs, tl.sort(x, descending=DESC))


@pytest.mark.parametrize("M,N", [(1, 1), (1, 2), (4, 8), (2, 32), (2, 64), (1, 256)])
@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("dt", [torch.int32, torch.int8, torch.uint8, torch.float32, torch.float16, torch.int64])
def test_sort(M, N, desc, dt):
    g = torch.Generator().manual_seed(M * 1000 + N)
    if dt.is_floating_point:
        x = torch.randn(M, N, generator=g).to(dt)
    else:
        lo, hi = (0, 255) if dt == torch.uint8 else (-100, 100)
        x = torch.randint(lo, hi, (M, N), generator=g).to(dt)
    z = torch.empty_like(x)
    _sort_kernel[(1,)](x, z, M, N, desc)
    ref = torch.sort(x, dim=-1, descending=desc).values
    assert torch.equal(z, ref)


def test_sort_nan_and_signed_zero():
    x = torch.tensor([[1.0, float("nan"), -0.0, -float("inf"), 2.0, float("nan"), 0.0, float("inf")]])
    for desc in (False, True):
        z = torch.empty_like(x)
        _sort_kernel[(1,)](x, z, 1, 8, desc)
        ref = torch.sort(x, dim=-1, descending=desc).values
        assert torch.equal(torch.isnan(z), torch.isnan(ref))
        m = ~torch.isnan(ref)
        assert torch.equal(z[m], ref[m])


@triton.jit
def _sort_dim_kernel(X, Z, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.store(Z + tl.arange(0, N), x.sort(0))


@pytest.mark.parametrize("dt", [torch.float32, torch.int32])
def test_sort_one_row_32(dt):
    """One row of 32 32-bit values: LLVM 19's SLP vectorizer miscompiled the network on
    [1, 32] into masked gathers with AVX-512 (32/64-byte vectors; the compiler now turns
    SLP off, compiler/src/cg_target.c); x.sort(0) of a 1-D tile and [1, 32] both ways."""
    x = torch.randn(32).mul(100).to(dt)
    z = torch.empty_like(x)
    _sort_dim_kernel[(1,)](x, z, 32)
    assert torch.equal(z, torch.sort(x).values)
    for desc in (False, True):
        z = torch.empty_like(x)
        _sort_kernel[(1,)](x.view(1, 32), z.view(1, 32), 1, 32, desc)
        assert torch.equal(z, torch.sort(x, descending=desc).values)


@triton.jit
def _flip_kernel(X, Z, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, DIM: tl.constexpr):
    offs = (tl.arange(0, A)[:, None, None] * (B * C) + tl.arange(0, B)[None, :, None] * C
            + tl.arange(0, C)[None, None, :])
    x = tl.load(X + offs)
    tl.store(Z + offs, tl.flip(x, DIM))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_flip(dim):
    x = torch.arange(4 * 8 * 2, dtype=torch.float32).reshape(4, 8, 2) * 1.5 - 7
    z = torch.empty_like(x)
    _flip_kernel[(1,)](x, z, 4, 8, 2, dim)
    assert torch.equal(z, torch.flip(x, [dim]))


@triton.jit
def _flip_default_kernel(X, Z, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.store(Z + tl.arange(0, N), tl.flip(x))


def test_flip_default_dim_int64():
    x = torch.randint(-(2 ** 40), 2 ** 40, (16,), dtype=torch.int64)
    z = torch.empty_like(x)
    _flip_default_kernel[(1,)](x, z, 16)
    assert torch.equal(z, torch.flip(x, [0]))


def test_sort_non_pow2_error():
    @triton.jit
    def k(X, N: tl.constexpr):
        x = tl.load(X + tl.arange(0, N))
        tl.store(X + tl.arange(0, N), tl.sort(tl.reshape(x, [2, N // 2]), dim=0))
    with pytest.raises(Exception, match="last dim"):
        k[(1,)](torch.zeros(8), 8)
