"""Gathered loads (indices read from memory) and scattered stores against stores
that may overwrite what they read: every load of a tile observes memory as it
was before the later store, as upstream's semantics say (torch computes the
reference from copies)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gather(X, IDX, OUT, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(OUT + offs, tl.load(X + tl.load(IDX + offs)))


@triton.jit
def _scatter_own(X, IDX, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(X + tl.load(IDX + offs), tl.load(X + offs) * 2.0)


@triton.jit
def _gather_then_store(X, IDX, OUT, B: tl.constexpr):
    offs = tl.arange(0, B)
    a = tl.load(X + tl.load(IDX + offs))
    tl.store(X + offs, tl.zeros([B], dtype=tl.float32) - 1.0)
    tl.store(OUT + offs, a + 1.0)


@triton.jit
def _gather_2d_own(X, IDX, B: tl.constexpr, D: tl.constexpr):
    r = tl.arange(0, B)
    c = tl.arange(0, D)
    rows = tl.load(IDX + r)
    v = tl.load(X + rows[:, None] * D + c[None, :])
    tl.store(X + r[:, None] * D + c[None, :], v + 0.5)


def _perm(n, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, generator=g), torch.randperm(n, generator=g).to(torch.int32)


def test_gather_into_its_source_passed_twice():
    x, perm = _perm(256, 1)
    want = x[perm.long()]
    _gather[(1,)](x, perm, x, B=256)
    assert torch.equal(x, want)


def test_scatter_into_its_source():
    x, perm = _perm(256, 2)
    want = x.clone()
    want[perm.long()] = x * 2.0
    _scatter_own[(1,)](x, perm, B=256)
    assert torch.equal(x, want)


def test_gather_read_after_later_store():
    x, perm = _perm(128, 3)
    out = torch.empty(128)
    want = x[perm.long()] + 1.0
    _gather_then_store[(1,)](x, perm, out, B=128)
    assert torch.equal(out, want)
    assert torch.equal(x, torch.full((128,), -1.0))


def test_gathered_rows_into_their_source():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(32, 16, generator=g)
    perm = torch.randperm(32, generator=g).to(torch.int32)
    want = x[perm.long()] + 0.5
    _gather_2d_own[(1,)](x, perm, B=32, D=16)
    assert torch.equal(x, want)
