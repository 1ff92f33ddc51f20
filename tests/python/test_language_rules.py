"""Issue 10: the last language rules upstream's suite checks, each against torch/numpy.

* `tl.where` of pointer tiles made from addresses (`.to(tl.pi32_t)`), stored back as
  int64 (ptr_to_int of a select of int_to_ptr folds to a select of the integers);
* tensors of more than 8 dims (reshape to 9-D and back, a reduction over one of them);
* upstream's dtype rules of math functions (exp & co. take fp32/fp64 only: an fp16
  tile is a CompilationError naming the rule, as upstream's `_check_dtype` raises);
* upstream's block-shape rule for device tensor descriptors (>= 16 bytes in the last
  dim), for load and store;
* atomics through zero-strided (expanded) tensors from a 3-D grid;
* atomic_xor and atomic_cas on tiles too big for the stack (> 64 KiB: heap buffers).
"""
import numpy as np
import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _where_ptr_kernel(cond_ptr, a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr, SCALAR_COND: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    if SCALAR_COND:
        p = tl.where(tl.load(cond_ptr), a_ptr, b_ptr)
        tl.store(out_ptr + offs, tl.load(p + offs, mask=m), mask=m)
    else:
        c = tl.load(cond_ptr + offs, mask=m)
        a = tl.load(a_ptr + offs, mask=m).to(tl.pi32_t)
        b = tl.load(b_ptr + offs, mask=m).to(tl.pi32_t)
        tl.store(out_ptr + offs, tl.where(c, a, b), mask=m)


@pytest.mark.parametrize("scalar_cond", [False, True])
def test_where_of_pointer_tiles(scalar_cond):
    g = torch.Generator().manual_seed(3)
    n = 1000
    cond = torch.rand(n, generator=g) > 0.5
    a = torch.randint(-2**40, 2**40, (n,), generator=g)
    b = torch.randint(-2**40, 2**40, (n,), generator=g)
    out = torch.empty(n, dtype=torch.int64)
    _where_ptr_kernel[(triton.cdiv(n, 256),)](cond, a, b, out, n, BLOCK=256, SCALAR_COND=scalar_cond)
    ref = (a if cond[0] else b) if scalar_cond else torch.where(cond, a, b)
    assert torch.equal(out, ref)


@triton.jit
def _rank9_kernel(Z, S, X):
    x = tl.load(X + tl.arange(0, 512))
    z = tl.reshape(x, (2, 2, 2, 2, 2, 2, 2, 2, 2))
    tl.store(Z + tl.arange(0, 512), tl.reshape(z * 3, (512,)))
    s = tl.sum(z, axis=4)
    tl.store(S + tl.arange(0, 256), tl.reshape(s, (256,)))


def test_rank9_tensors():
    x = np.random.default_rng(5).integers(-1000, 1000, 512).astype(np.int32)
    z = np.empty(512, np.int32)
    s = np.empty(256, np.int32)
    _rank9_kernel[(1,)](z, s, x)
    np.testing.assert_array_equal(z, x * 3)
    np.testing.assert_array_equal(s, x.reshape((2,) * 9).sum(axis=4).reshape(256))


@triton.jit
def _exp_kernel(X, Y, MEMBER: tl.constexpr, UPCAST: tl.constexpr):
    x = tl.load(X + tl.arange(0, 16))
    if UPCAST:
        x = x.to(tl.float32)
    if MEMBER:
        y = x.exp()
    else:
        y = tl.exp(x)
    tl.store(Y + tl.arange(0, 16), y)


@pytest.mark.parametrize("member", [False, True])
def test_math_rejects_fp16_like_upstream(member):
    x = torch.linspace(-2, 2, 16, dtype=torch.float16)
    y = torch.empty(16)
    with pytest.raises(triton.CompilationError, match=r"Expected dtype \['fp32', 'fp64'\] but got fp16"):
        _exp_kernel[(1,)](x, y, member, False)
    _exp_kernel[(1,)](x, y, member, True)  # the explicit upcast upstream asks for
    torch.testing.assert_close(y, torch.exp(x.float()))


@triton.jit
def _sqrt_int_kernel(X, Y):
    tl.store(Y + tl.arange(0, 4), tl.sqrt(tl.load(X + tl.arange(0, 4))))


def test_math_rejects_int():
    with pytest.raises(triton.CompilationError, match="Expected dtype"):
        _sqrt_int_kernel[(1,)](torch.arange(4, dtype=torch.int32), torch.empty(4))


@triton.jit
def _desc_load_kernel(ptr, BN: tl.constexpr):
    desc = tl.make_tensor_descriptor(ptr, [128, 128], [128, 1], [1, BN])
    desc.load([0, 0])


@triton.jit
def _desc_store_kernel(ptr):
    desc = tl.make_tensor_descriptor(ptr, [128, 128], [128, 1], [8, 4])
    desc.store([0, 0], tl.zeros([8, 4], dtype=tl.int16))


def test_descriptor_block_shape_rule():
    x = torch.zeros((128, 128), dtype=torch.int32)
    with pytest.raises(triton.CompilationError) as e:
        _desc_load_kernel[(1,)](x, 2)
    assert "Descriptor block shape must have at least 16 bytes" in str(e.value.__cause__)
    with pytest.raises(triton.CompilationError) as e:
        _desc_store_kernel[(1,)](torch.zeros((128, 128), dtype=torch.int16))
    assert "Descriptor block shape must have at least 16 bytes" in str(e.value.__cause__)
    _desc_load_kernel[(1,)](x, 4)  # 16 bytes: accepted


@triton.jit
def _zero_stride_kernel(X, sa, sb):
    tl.atomic_add(X + tl.program_id(0) * sa + tl.program_id(1) * sb, 1)


def test_atomic_through_zero_strided_tensor():
    base = torch.zeros((2, 2, 1))
    x = base.expand((2, 2, 3))
    _zero_stride_kernel[(2, 2, 3)](x, x.stride(0), x.stride(1))
    torch.testing.assert_close(x, torch.full((2, 2, 3), 3.0))


@triton.jit
def _xor_kernel(X, V, O, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(O + offs, tl.atomic_xor(X + offs, tl.load(V + offs)))


@triton.jit
def _cas_kernel(X, C, V, O, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(O + offs, tl.atomic_cas(X + offs, tl.load(C + offs), tl.load(V + offs)))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("B", [256, 32768])  # 32768 x 4 or 8 bytes: heap tiles
def test_xor_cas_tiles(dtype, B):
    g = torch.Generator().manual_seed(B)
    x = torch.randint(0, 1 << 20, (B,), generator=g, dtype=dtype)
    v = torch.randint(0, 1 << 20, (B,), generator=g, dtype=dtype)
    x0, out = x.clone(), torch.empty_like(x)
    _xor_kernel[(1,)](x, v, out, B=B)
    assert torch.equal(out, x0) and torch.equal(x, x0 ^ v)
    x = torch.randint(0, 3, (B,), generator=g, dtype=dtype)
    c = torch.randint(0, 3, (B,), generator=g, dtype=dtype)
    x0 = x.clone()
    _cas_kernel[(1,)](x, c, v, out, B=B)
    assert torch.equal(out, x0) and torch.equal(x, torch.where(x0 == c, v, x0))


@triton.jit
def _math_any_kernel(X, Y, FN: tl.constexpr):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(Y + tl.arange(0, 16), getattr(tl, FN)(x))


@pytest.mark.parametrize("fn", ["exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "rsqrt", "erf", "floor", "ceil",
                                "sqrt_rn"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int32])
def test_math_dtype_rule_every_function(fn, dtype):
    """Upstream's `_check_dtype` lists, function by function; fp32 passes and matches torch."""
    with pytest.raises(triton.CompilationError, match="Expected dtype"):
        _math_any_kernel[(1,)](torch.ones(16, dtype=dtype), torch.empty(16), fn)
    x = torch.rand(16) + 0.5
    y = torch.empty(16)
    _math_any_kernel[(1,)](x, y, fn)
    ref = {"rsqrt": torch.rsqrt(x), "sqrt_rn": torch.sqrt(x)}.get(fn)
    torch.testing.assert_close(y, getattr(torch, fn)(x) if ref is None else ref)
