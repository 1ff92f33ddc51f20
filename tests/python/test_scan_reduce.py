"""Scans (tl.cumsum, tl.cumprod, tl.associative_scan with tuples and reverse) and the
reductions walked in order (argmax/argmin, tl.reduce over tuples, several-op combine
functions), against torch and numpy."""
import numpy as np
import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _cum_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr, PROD: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    if PROD:
        z = tl.cumprod(x, axis=AXIS, reverse=REV)
    else:
        z = x.cumsum(AXIS, reverse=REV)
    tl.store(Z + offs, z)


def _ref_scan(fn, x, axis, rev):
    if rev:
        return torch.flip(fn(torch.flip(x, [axis]), axis), [axis])
    return fn(x, axis)


@pytest.mark.parametrize("shape", [(8, 32), (1, 64), (16, 1), (4, 4)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_cumsum_cumprod(shape, axis, rev, dtype):
    torch.manual_seed(0)
    if dtype.is_floating_point:
        x = torch.rand(shape, dtype=dtype) + 0.5
    else:
        x = torch.randint(-3, 4, shape, dtype=dtype)
    for prod, fn in ((False, torch.cumsum), (True, torch.cumprod)):
        z = torch.empty_like(x)
        _cum_kernel[(1, )](x, z, *shape, axis, rev, prod)
        ref = _ref_scan(fn, x, axis, rev).to(dtype)
        torch.testing.assert_close(z, ref, rtol=1e-5, atol=1e-5)


@triton.jit
def _cumsum_i8_kernel(X, Z, N: tl.constexpr):
    tl.store(Z + tl.arange(0, N), tl.cumsum(tl.load(X + tl.arange(0, N))))


def test_cumsum_widens_narrow_integers():
    """int8 sums accumulate in int32 (upstream): 100 * 64 does not wrap."""
    x = torch.full((64, ), 100, dtype=torch.int8)
    z = torch.empty(64, dtype=torch.int32)
    _cumsum_i8_kernel[(1, )](x, z, 64)
    assert torch.equal(z, torch.cumsum(x.to(torch.int32), 0).to(torch.int32))


@triton.jit
def _cummax(v0, i0, v1, i1):
    gt = v0 > v1
    return tl.where(gt, v0, v1), tl.where(gt, i0, i1)


@triton.jit
def _linrec(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def _first(a, b):
    return a


@triton.jit
def _tuple_scan_kernel(X, Y, ZI, ZR, ZF, N: tl.constexpr, REV: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(X + r)
    y = tl.load(Y + r)
    _, zi = tl.associative_scan((x, r), 0, _cummax, reverse=REV)
    _, zr = tl.associative_scan((x, y), 0, _linrec, reverse=REV)
    zf = tl.associative_scan(x, 0, _first, reverse=REV)
    tl.store(ZI + r, zi)
    tl.store(ZR + r, zr)
    tl.store(ZF + r, zf)


@pytest.mark.parametrize("rev", [False, True])
def test_associative_scan_tuples_non_commutative(rev):
    n = 64
    rs = np.random.RandomState(3)
    x = torch.tensor(rs.normal(size=n).astype(np.float32))
    y = torch.tensor(rs.normal(size=n).astype(np.float32))
    zi = torch.empty(n, dtype=torch.int32)
    zr = torch.empty(n)
    zf = torch.empty(n)
    _tuple_scan_kernel[(1, )](x, y, zi, zr, zf, n, rev)
    xs, ys = (torch.flip(x, [0]), torch.flip(y, [0])) if rev else (x, y)
    ci = torch.cummax(xs, 0).indices
    if rev:
        ci = n - 1 - torch.flip(ci, [0])
    # ties cannot happen with normal samples; the scan keeps the later index on equality
    assert torch.equal(zi.long(), ci)
    acc, ref = 0.0, []
    for a, b in zip(xs.tolist(), ys.tolist()):  # z_i = z_{i-1} * a_i + b_i
        acc = acc * a + b
        ref.append(acc)
    ref = torch.tensor(ref)
    if rev:
        ref = torch.flip(ref, [0])
    torch.testing.assert_close(zr, ref, rtol=1e-4, atol=1e-4)
    assert torch.equal(zf, torch.full((n, ), (x[-1] if rev else x[0]).item()))


@triton.jit
def _arg_kernel(X, AMAX, AMIN, VMAX, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(AMAX + tl.arange(0, M), tl.argmax(x, 1))
    tl.store(AMIN + tl.arange(0, M), tl.argmin(x, 1))
    v, i = tl.max(x, 1, return_indices=True)
    tl.store(VMAX + tl.arange(0, M), v)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16])
def test_argmax_argmin_first_index_on_ties(dtype):
    rs = np.random.RandomState(5)
    x = torch.tensor(rs.randint(-3, 3, (8, 32))).to(dtype)  # many ties
    amax = torch.empty(8, dtype=torch.int32)
    amin = torch.empty(8, dtype=torch.int32)
    vmax = torch.empty(8, dtype=dtype)
    _arg_kernel[(1, )](x, amax, amin, vmax, 8, 32)
    xn = x.float().numpy()
    np.testing.assert_array_equal(amax.numpy(), np.argmax(xn, 1))
    np.testing.assert_array_equal(amin.numpy(), np.argmin(xn, 1))
    np.testing.assert_array_equal(vmax.float().numpy(), xn.max(1))


@triton.jit
def _sum_and_count(a, ca, b, cb):
    return a + b, ca + cb


@triton.jit
def _tuple_reduce_kernel(X, S, C, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    s, c = tl.reduce((x, (x > 0).to(tl.int32)), 0, _sum_and_count)
    tl.store(S, s)
    tl.store(C, c)


def test_reduce_over_a_tuple():
    x = torch.randn(128)
    s = torch.empty(1)
    c = torch.empty(1, dtype=torch.int32)
    _tuple_reduce_kernel[(1, )](x, s, c, 128)
    torch.testing.assert_close(s[0], x.sum(), rtol=1e-5, atol=1e-5)
    assert c.item() == int((x > 0).sum())


@triton.jit
def _arg_nan_kernel(X, VMAX, IMAX, VMIN, IMIN, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m, other=-float("inf"))
    tl.store(VMAX, tl.max(x, 0))
    tl.store(IMAX, tl.argmax(x, 0))
    y = tl.load(X + offs, mask=m, other=float("inf"))
    tl.store(VMIN, tl.min(y, 0))
    tl.store(IMIN, tl.argmin(y, 0))


@pytest.mark.parametrize("vals", [[float("nan"), 6.0, 8.0], [3.0, 5.0, float("nan")], [4.0, float("nan"), 1.0]])
def test_argmax_argmin_skip_nan(vals):
    """argmax/argmin skip NaNs as tl.max/tl.min do (upstream's rule)."""
    x = torch.tensor(vals)
    out = [torch.empty((), dtype=d) for d in (torch.float32, torch.int32, torch.float32, torch.int32)]
    _arg_nan_kernel[(1, )](x, *out, 3, 4)
    finite = [v if v == v else None for v in vals]
    mx = max(v for v in finite if v is not None)
    mn = min(v for v in finite if v is not None)
    assert (out[0].item(), out[1].item()) == (mx, finite.index(mx))
    assert (out[2].item(), out[3].item()) == (mn, finite.index(mn))


@triton.jit
def _reduce_gathered_only(I, O, B: tl.constexpr):
    # a reduction whose input is computed only from a gathered load (no strided read
    # gives the generic its loop bounds: inductor's bounds assert reduces such a tile)
    idx = tl.load(I + tl.arange(0, B) // 2)
    tl.store(O, tl.min((idx < 50).to(tl.int32)))
    tl.store(O + 1, tl.sum(idx * 3))


def test_reduction_of_a_gathered_tile():
    i = torch.randint(0, 100, (32, ), dtype=torch.int32)
    o = torch.zeros(2, dtype=torch.int32)
    _reduce_gathered_only[(1, )](i, o, B=64)
    rep = i.repeat_interleave(2)
    assert o.tolist() == [int(bool((rep < 50).all())), int((rep * 3).sum())]


@triton.jit
def _outer_sum(X, Out, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.store(Out + tl.arange(0, N), tl.sum(x[:, None] * x[None, :], 1))
    tl.store(Out + N + tl.arange(0, N), tl.sum(x[:, None] * x[None, :], 0))


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32])
def test_reduction_of_an_outer_product_of_one_load(n):
    """One load read twice in a broadcast product, reduced per row: LLVM 19's
    VectorCombine folded two rows' one-lane fmas into one wrong vector fma (row 1 of
    8 got x1 * x1 where x1 * x0 belongs); compiled with it off."""
    x = torch.arange(n, dtype=torch.float32) + 1
    out = torch.zeros(2 * n)
    _outer_sum[(1, )](x, out, N=n)
    ref = x * x.sum()
    assert torch.equal(out[:n], ref) and torch.equal(out[n:], ref)
