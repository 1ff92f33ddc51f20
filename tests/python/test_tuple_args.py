"""Tuple kernel arguments (issue 10): tuples of tensors and ints passed to a kernel,
nested, NamedTuples, item assignment in the kernel, grid callables, and specialisations
kept apart by the tuples' structure. The launcher hands such a launch to
JITFunction._launch_tuples (a twin kernel with the tuples flattened)."""
from typing import NamedTuple

import torch

import triton
import triton.language as tl


@triton.jit
def _bump(values):
    for i in tl.static_range(len(values)):
        values[i] = values[i] + 1
    return values


@triton.jit
def _store_each(ptrs, values):
    for i in tl.static_range(len(values)):
        tl.store(ptrs[i], values[i])


@triton.jit
def _tuple_index_kernel(_0, ptrs, _1: tl.constexpr, values, _2, _3: tl.constexpr, _4):
    values = _bump(values)
    _store_each(ptrs, values)


def test_tuples_of_tensors_and_numbers():
    outs = tuple(torch.zeros(1) for _ in range(3))
    _tuple_index_kernel[(1,)](0, outs, 1, (1, 2.5, 3), 4, 5, 6)
    assert [o.item() for o in outs] == [2.0, 3.5, 4.0]
    # another launch of the same structure runs the same twin, with new values
    _tuple_index_kernel[(1,)](0, outs, 1, (10, -2.0, 7), 4, 5, 6)
    assert [o.item() for o in outs] == [11.0, -1.0, 8.0]
    assert len(_tuple_index_kernel._tuple_twins) == 1


@triton.jit
def _nested_kernel(T, N, B: tl.constexpr):
    a, (b, c) = T
    o = tl.program_id(0) * B + tl.arange(0, B)
    m = o < N
    tl.store(c + o, tl.load(a + o, mask=m) * tl.load(b + o, mask=m) + T[1][0].dtype.element_ty.primitive_bitwidth, mask=m)


def test_nested_tuple_and_grid_callable():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(1000, generator=g), torch.randn(1000, generator=g)
    c = torch.empty(1000)
    _nested_kernel[lambda meta: (triton.cdiv(meta["N"], meta["B"]),)](T=(a, (b, c)), N=1000, B=128)
    torch.testing.assert_close(c, a * b + 32)  # an fma may round once
    c64 = torch.empty(1000, dtype=torch.float64)
    _nested_kernel[(8,)]((a.double(), (b.double(), c64)), 1000, 128)
    torch.testing.assert_close(c64, a.double() * b.double() + 64)  # an fma may round once


@triton.jit
def _layout_kernel(P, Q, Out):
    x = P[0]
    if isinstance(x, tuple):
        v = tl.load(x[0]) + 10 * tl.load(x[1]) + 100 * tl.load(Q)
    else:
        v = tl.load(x) + 10 * tl.load(Q[0]) + 100 * tl.load(Q[1])
    tl.store(Out, v)


def test_structures_are_separate_specialisations():
    """((a, b),) and (a,) with (b, c): the same leaves, another kernel each."""
    a, b, c = torch.tensor([1.0]), torch.tensor([2.0]), torch.tensor([3.0])
    out = torch.empty(1)
    _layout_kernel[(1,)](((a, b),), c, out)
    assert out.item() == 1 + 20 + 300
    _layout_kernel[(1,)]((a,), (b, c), out)
    assert out.item() == 1 + 20 + 300
    _layout_kernel[(1,)]((c,), (b, a), out)
    assert out.item() == 3 + 20 + 100


class _Pair(NamedTuple):
    src: torch.Tensor
    dst: torch.Tensor
    n: int


@triton.jit
def _named_kernel(p, scale, B: tl.constexpr):
    o = tl.arange(0, B)
    m = o < p.n
    tl.store(p.dst + o, tl.load(p.src + o, mask=m) * scale, mask=m)


def test_named_tuple():
    x = torch.randn(50)
    y = torch.zeros(64)
    _named_kernel[(1,)](_Pair(x, y, 50), 3.0, 64)
    torch.testing.assert_close(y[:50], x * 3.0)
    assert torch.equal(y[50:], torch.zeros(14))


def test_warmup_with_tuple():
    x, y = torch.randn(8), torch.zeros(8)
    k = _named_kernel.warmup(_Pair(x, y, 8), 2.0, 8, grid=(1,))
    assert "tt.func" in k.asm["ttir"]
