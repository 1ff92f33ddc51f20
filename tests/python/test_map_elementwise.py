"""tl.map_elementwise: scalar @triton.jit functions applied element by element, with
if/elif/else, conditional expressions and while loops on the elements, tuples of
results, broadcasting, mixed dtypes and pack=2/4, against torch/numpy."""
import numpy as np
import pytest
import torch

import triton
import triton.language as tl


def data(n, dtype, lo=-50, hi=50, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return (torch.rand(n, generator=g) * (hi - lo) + lo).to(dtype)
    return torch.randint(lo, hi, (n, ), generator=g, dtype=dtype)


@triton.jit
def _compare(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@triton.jit
def _k_compare(X, Y, Z, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(Z + i, tl.map_elementwise(_compare, tl.load(X + i), tl.load(Y + i)))


def test_if_elif_else():
    x, y = data(128, torch.int32, -5, 5, 1), data(128, torch.int32, -5, 5, 2)
    z = torch.full((128, ), 7, dtype=torch.int32)
    _k_compare[(1, )](x, y, z, 128)
    assert torch.equal(z, torch.sign(x - y).to(torch.int32))


@triton.jit
def _divmod(a, b):
    return a // b, a % b


@triton.jit
def _k_divmod(A, B, C, D, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    c, d = tl.map_elementwise(_divmod, tl.load(A + i), tl.load(B + i))
    tl.store(C + i, c)
    tl.store(D + i, d)


def test_tuple_results():
    a = data(512, torch.int32, 0, 1 << 20, 3)
    b = data(512, torch.int32, 1, 1000, 4)
    c, d = torch.empty_like(a), torch.empty_like(a)
    _k_divmod[(1, )](a, b, c, d, 512)
    assert torch.equal(c, a // b) and torch.equal(d, a % b)


@triton.jit
def _divmod2(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@triton.jit
def _swap2(a0, a1):
    return a1, a0  # results depend on the other element of the pack


@triton.jit
def _k_pack(A, B, C, D, E, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    a = tl.load(A + i)
    c, d = tl.map_elementwise(_divmod2, a, tl.load(B + i), pack=2)
    tl.store(C + i, c)
    tl.store(D + i, d)
    (e, ) = tl.map_elementwise(_swap2, a, pack=2)
    tl.store(E + i, e)


def test_pack2():
    a = data(256, torch.int32, 0, 1 << 20, 5)
    b = data(256, torch.int32, 1, 1000, 6)
    c, d, e = torch.empty_like(a), torch.empty_like(a), torch.empty_like(a)
    _k_pack[(1, )](a, b, c, d, e, 256)
    assert torch.equal(c, a // b) and torch.equal(d, a % b)
    assert torch.equal(e, a.view(-1, 2).flip(1).reshape(-1))  # consecutive pairs


@triton.jit
def _sum4(a0, a1, a2, a3):
    s = a0 + a1 + a2 + a3
    return s, s - a1, s - a2, a3 * 1.0


@triton.jit
def _k_pack4(A, C, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    (c, ) = tl.map_elementwise(_sum4, tl.load(A + i), pack=4)  # a tuple: the function returns one
    tl.store(C + i, c)


def test_pack4_2d():
    a = data(8 * 16, torch.float32, seed=7).reshape(8, 16)
    c = torch.empty_like(a)
    _k_pack4[(1, )](a, c, 8, 16)
    g = a.view(8, 4, 4)
    s = g.sum(-1)
    ref = torch.stack([s, s - g[..., 1], s - g[..., 2], g[..., 3]], -1).reshape(8, 16)
    torch.testing.assert_close(c, ref)


@triton.jit
def _selu(x, alpha):
    if x > 0:
        return x
    else:
        return (alpha * (tl.exp(x.to(tl.float32)) - 1)).to(x.dtype)  # exp takes fp32 (upstream); keep x's type


@triton.jit
def _k_selu(X, Y, alpha, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(Y + i, tl.map_elementwise(_selu, tl.load(X + i), alpha))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_selu_scalar_broadcast(dtype):
    x = data(64, dtype, -3, 3, 8)
    y = torch.empty_like(x)
    _k_selu[(1, )](x, y, 1.5, 64)
    ref = torch.where(x.float() > 0, x.float(), 1.5 * (torch.exp(x.float()) - 1))
    torch.testing.assert_close(y.float(), ref, rtol=2e-3 if dtype == torch.float16 else 1e-6, atol=1e-3)


@triton.jit
def _mixed(i, f):
    """An int and a float argument; variables assigned in branches; an if without else."""
    r = f * 2.0
    if i % 3 == 0:
        r = r + i
        q = i // 3
    else:
        q = -i
    if f < 0.0:
        r = -r
    return r, q


@triton.jit
def _k_mixed(I, F, R, Q, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    r, q = tl.map_elementwise(_mixed, tl.load(I + rows), tl.load(F + cols))  # [M, 1] x [1, N]
    tl.store(R + rows * N + cols, r)
    tl.store(Q + rows * N + cols, q)


def test_mixed_dtypes_and_broadcast():
    i = data(16, torch.int32, -20, 20, 9)
    f = data(32, torch.float32, -4, 4, 10)
    r, q = torch.empty(16, 32), torch.empty(16, 32, dtype=torch.int32)
    _k_mixed[(1, )](i, f, r, q, 16, 32)
    ii, ff = i[:, None].numpy(), f[None, :].numpy()
    rr = np.where(ii % 3 == 0, ff * 2 + ii, ff * 2)  # C remainder: Python's % agrees on the zero test
    rr = np.where(ff < 0, -rr, rr)
    qq = np.where(np.fmod(ii, 3) == 0, np.trunc(ii / 3), -ii) + 0 * ff
    np.testing.assert_allclose(r.numpy(), rr, rtol=1e-6)
    np.testing.assert_array_equal(q.numpy(), qq.astype(np.int32))


@triton.jit
def _safe_div(a, b):
    if b != 0:
        return a // b
    return a * 0 - 1


@triton.jit
def _k_safe_div(A, B, C, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(C + i, tl.map_elementwise(_safe_div, tl.load(A + i), tl.load(B + i)))


def test_untaken_division_by_zero_does_not_trap():
    a = data(64, torch.int32, -100, 100, 11)
    b = data(64, torch.int32, -3, 3, 12)
    assert (b == 0).any()
    c = torch.empty_like(a)
    _k_safe_div[(1, )](a, b, c, 64)
    ref = torch.where(b != 0, torch.div(a, torch.where(b == 0, 1, b), rounding_mode="trunc"), -1)
    assert torch.equal(c, ref)


@triton.jit
def _collatz(n):
    steps = n * 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@triton.jit
def _k_collatz(N, S, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(S + i, tl.map_elementwise(_collatz, tl.load(N + i)))


def _collatz_ref(n):
    s = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        s += 1
    return s


def test_while_per_element():
    n = data(64, torch.int32, 1, 200, 13)
    s = torch.empty_like(n)
    _k_collatz[(1, )](n, s, 64)
    assert s.tolist() == [_collatz_ref(v) for v in n.tolist()]


@triton.jit
def _clamp_inner(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


@triton.jit
def _poly(x):
    acc = x * 0.0
    for k in range(4):  # a constant trip count: fine
        acc = acc * x + (k + 1)
    return _clamp_inner(acc, -10.0, 10.0)


@triton.jit
def _k_poly(X, Y, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(Y + i, tl.map_elementwise(_poly, tl.load(X + i)))


def test_nested_jit_call_ifexp_and_loop():
    x = data(128, torch.float32, -2, 2, 14)
    y = torch.empty_like(x)
    _k_poly[(1, )](x, y, 128)
    ref = torch.clamp(((x + 2) * x + 3) * x + 4, -10, 10)
    torch.testing.assert_close(y, ref, rtol=1e-6, atol=1e-6)


@triton.jit
def _per_element_for(n):
    acc = n * 0
    for k in range(n):
        acc += k
    return acc


@triton.jit
def _k_bad_for(N, S, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(S + i, tl.map_elementwise(_per_element_for, tl.load(N + i)))


def test_per_element_for_is_a_located_error():
    with pytest.raises(triton.CompilationError, match="trip count depends on the element") as e:
        _k_bad_for[(1, )](torch.ones(16, dtype=torch.int32), torch.ones(16, dtype=torch.int32), 16)
    assert "for k in range(n)" in str(e.value)


@triton.jit
def _mismatch(x):
    if x > 0:
        return x
    return 1.5


@triton.jit
def _k_mismatch(X, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, tl.map_elementwise(_mismatch, tl.load(X + i)))


def test_mismatched_branch_types():
    with pytest.raises(triton.CompilationError, match="Mismatched type"):
        _k_mismatch[(1, )](torch.ones(16, dtype=torch.int32), 16)


def _make_kernel(scalar_fn, offset):
    @triton.jit
    def kernel(X, Y, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        tl.store(Y + i, tl.map_elementwise(scalar_fn, tl.load(X + i)) + offset)

    return kernel


def test_closure_functions_and_cache_keys():
    """A kernel defined in a function sees the names it closes over (upstream's tests
    define their scalar functions that way); kernels of the same source closing over
    different functions or values compile separately (their cache keys differ)."""

    @triton.jit
    def neg(x):
        return -x

    @triton.jit
    def sq(x):
        if x > 2:
            return x * x
        return x

    x = data(32, torch.int32, -5, 5, 15)
    for fn, off, ref in [(neg, 0, -x), (sq, 0, torch.where(x > 2, x * x, x)), (sq, 7, torch.where(x > 2, x * x, x) + 7)]:
        y = torch.empty_like(x)
        _make_kernel(fn, off)[(1, )](x, y, 32)
        assert torch.equal(y, ref), (fn, off)
