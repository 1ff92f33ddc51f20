"""Issue 10 "What to build" items the other files did not check, each against torch:
atomics through data-dependent pointers (with repeated indices), gathered and
wrapped pointers carried by loops and chosen by if/else, masked gathers,
triton.set_allocator / triton.runtime._allocation, and JITFunction's attributes."""
import pytest
import torch

import triton
import triton.language as tl
from triton.runtime import _allocation


# ---- atomics through gathered pointers --------------------------------------------------------

@triton.jit
def _scatter_kernel(Out, Idx, Val, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    i = tl.load(Idx + o, mask=m, other=0)
    if OP == "add":
        tl.atomic_add(Out + i, tl.load(Val + o, mask=m), mask=m)
    else:
        tl.atomic_max(Out + i, tl.load(Val + o, mask=m), mask=m)


def test_atomics_through_loaded_indices():
    g = torch.Generator().manual_seed(4)
    n, bins = 5000, 37
    idx = torch.randint(0, bins, (n,), generator=g)
    val = torch.randint(-100, 100, (n,), generator=g, dtype=torch.int32)
    out = torch.zeros(bins, dtype=torch.int32)
    _scatter_kernel[(triton.cdiv(n, 256),)](out, idx, val, n, OP="add", BLOCK=256)
    assert torch.equal(out, torch.zeros(bins, dtype=torch.int32).index_add_(0, idx, val))
    mx = torch.full((bins,), -1000, dtype=torch.int32)
    _scatter_kernel[(triton.cdiv(n, 256),)](mx, idx, val, n, OP="max", BLOCK=256)
    ref = torch.full((bins,), -1000, dtype=torch.int32).scatter_reduce_(0, idx, val, "amax")
    assert torch.equal(mx, ref)


# ---- pointers carried by loops and chosen by branches, in each form ----------------------------

@triton.jit
def _carried_forms_kernel(X, Idx, Out, M, FORM: tl.constexpr, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    if FORM == "gather":
        p = X + tl.load(Idx + o)
    elif FORM == "wrap":
        p = X + (o + 3) % M
    else:
        p = X + o
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(STEPS):
        acc += tl.load(p)
        p += M
    tl.store(Out + o, acc)


@pytest.mark.parametrize("form", ["affine", "wrap", "gather"])
def test_pointer_forms_carried_by_loops(form):
    g = torch.Generator().manual_seed(5)
    M, steps, B = 48, 5, 32
    x = torch.randn(M * steps, generator=g)
    idx = torch.randint(0, M, (B,), generator=g)
    out = torch.empty(B)
    _carried_forms_kernel[(1,)](x, idx, out, M, form, steps, B)
    cols = {"affine": torch.arange(B), "wrap": (torch.arange(B) + 3) % M, "gather": idx}[form]
    ref = x.view(steps, M)[:, cols].sum(0)
    torch.testing.assert_close(out, ref)


@triton.jit
def _branch_forms_kernel(X, Y, Idx, Out, flag, M, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    if flag > 0:
        p = X + tl.load(Idx + o)  # gathered
    else:
        p = Y + (o * 5) % M  # wrapped
    tl.store(Out + o, tl.load(p) * 2)


@pytest.mark.parametrize("flag", [1, 0])
def test_pointer_forms_chosen_by_if_else(flag):
    g = torch.Generator().manual_seed(6)
    M, B = 40, 64
    x, y = torch.randn(M, generator=g), torch.randn(M, generator=g)
    idx = torch.randint(0, M, (B,), generator=g)
    out = torch.empty(B)
    _branch_forms_kernel[(1,)](x, y, idx, out, flag, M, B)
    ref = x[idx] * 2 if flag else y[(torch.arange(B) * 5) % M] * 2
    torch.testing.assert_close(out, ref)


@triton.jit
def _masked_gather_kernel(X, Idx, Out, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    i = tl.load(Idx + o)
    m = (i >= 0) & (o < n)
    tl.store(Out + o, tl.load(X + i, mask=m, other=-7.0))


def test_masked_gather_reads_only_valid_lanes():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(100, generator=g)
    idx = torch.randint(-50, 100, (128,), generator=g)  # negative: masked off (would read before X)
    out = torch.empty(128)
    _masked_gather_kernel[(1,)](x, idx, out, 120, BLOCK=128)
    valid = (idx >= 0) & (torch.arange(128) < 120)
    ref = torch.where(valid, x[idx.clamp(min=0)], torch.tensor(-7.0))
    assert torch.equal(out, ref)


# ---- allocator and JITFunction surface ---------------------------------------------------------

def test_set_allocator():
    calls = []

    def alloc(size, alignment, stream):
        calls.append((size, alignment, stream))
        return torch.empty(size, dtype=torch.int8)

    saved = _allocation._allocator
    try:
        triton.set_allocator(alloc)
        assert _allocation._allocator is alloc
        buf = _allocation._allocator(64, 16, None)
        assert buf.data_ptr() != 0 and calls == [(64, 16, None)]
        x, y = torch.randn(16), torch.empty(16)
        _masked_gather_kernel[(1,)](x, torch.arange(16), y, 16, BLOCK=16)  # kernels run with it set
        assert torch.equal(x, y)
    finally:
        triton.set_allocator(saved)
    with pytest.raises(RuntimeError, match="set_allocator"):
        _allocation.NullAllocator()(8, 8, None)


@triton.jit
def _attrs_kernel(X, n, BLOCK: tl.constexpr, SCALE: tl.constexpr = 2):
    o = tl.arange(0, BLOCK)
    tl.store(X + o, tl.load(X + o, mask=o < n) * SCALE, mask=o < n)


def test_jit_function_attributes():
    k = _attrs_kernel
    assert isinstance(k, triton.runtime.jit.JITFunction)
    assert k.arg_names == ["X", "n", "BLOCK", "SCALE"]
    assert [p.name for p in k.params] == k.arg_names
    assert [p.is_constexpr for p in k.params] == [False, False, True, True]
    assert k.constexprs == [2, 3]
    assert k.params[3].default == 2 and k.__name__ == "_attrs_kernel"
    assert k.fn.__name__ == "_attrs_kernel" and k.src.startswith("def _attrs_kernel(")
    assert "_attrs_kernel" in repr(k)
    x = torch.arange(8, dtype=torch.float32)
    k[(1,)](x, 8, BLOCK=8)
    assert torch.equal(x, torch.arange(8, dtype=torch.float32) * 2)


@triton.jit
def _branch_scalar_ptr_kernel(X, Y, Out, flag, n, BLOCK: tl.constexpr):
    if flag > 0:
        p = X + 1
    else:
        p = Y
    o = tl.arange(0, BLOCK)
    tl.store(Out + o, tl.load(p + o, mask=o < n, other=0.0) + 1, mask=o < n)


@pytest.mark.parametrize("flag", [1, 0])
def test_scalar_pointer_chosen_by_if_else(flag):
    x, y = torch.randn(65), torch.randn(64)
    out = torch.empty(64)
    _branch_scalar_ptr_kernel[(1,)](x, y, out, flag, 60, BLOCK=64)
    src = x[1:] if flag else y
    torch.testing.assert_close(out[:60], src[:60] + 1)
