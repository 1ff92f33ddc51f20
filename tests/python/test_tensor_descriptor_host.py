"""Host tensor descriptors (triton.tools.tensor_descriptor.TensorDescriptor) as kernel
arguments: loads pad what lies outside the tensor ("zero" or "nan"), stores drop it,
with references built by torch slicing. Also the specialisation key (block shape,
padding, shape/stride facts), descriptors beside ordinary arguments, views with
non-contiguous outer strides, a matmul, triton.compile with a tensordesc signature."""
import pytest
import torch

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


def ref_block(t, offs, block, pad):
    """The block of t at offs, what lies outside t set to pad."""
    out = torch.full(block, pad, dtype=t.dtype)
    part = overlap(offs, block, t.shape)
    if part:
        out[part[1]] = t[part[0]]
    return out


def ref_store(t, offs, block_vals):
    """t after storing block_vals at offs, dropping what lies outside t."""
    t = t.clone()
    part = overlap(offs, block_vals.shape, t.shape)
    if part:
        t[part[0]] = block_vals[part[1]]
    return t


def overlap(offs, block, shape):
    """(slices of the tensor, slices of the block) where a block at offs meets a tensor
    of shape, or None when they do not meet."""
    in_t, in_b = [], []
    for o, b, n in zip(offs, block, shape):
        lo, hi = max(o, 0), min(o + b, n)
        if lo >= hi:
            return None
        in_t.append(slice(lo, hi))
        in_b.append(slice(lo - o, hi - o))
    return tuple(in_t), tuple(in_b)


def data(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    return torch.randint(-1000, 1000, shape, generator=g, dtype=dtype)


@triton.jit
def _load1(desc, out, o0, B0: tl.constexpr):
    tl.store(out + tl.arange(0, B0), desc.load([o0]))


@triton.jit
def _load2(desc, out, o0, o1, B0: tl.constexpr, B1: tl.constexpr):
    x = desc.load([o0, o1])
    tl.store(out + tl.arange(0, B0)[:, None] * B1 + tl.arange(0, B1)[None, :], x)


@triton.jit
def _load3(desc, out, o0, o1, o2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    x = tl.load_tensor_descriptor(desc, [o0, o1, o2])
    i = tl.arange(0, B0)[:, None, None] * (B1 * B2) + tl.arange(0, B1)[None, :, None] * B2 + \
        tl.arange(0, B2)[None, None, :]
    tl.store(out + i, x)


@triton.jit
def _store1(desc, inp, o0, B0: tl.constexpr):
    desc.store([o0], tl.load(inp + tl.arange(0, B0)))


@triton.jit
def _store2(desc, inp, o0, o1, B0: tl.constexpr, B1: tl.constexpr):
    x = tl.load(inp + tl.arange(0, B0)[:, None] * B1 + tl.arange(0, B1)[None, :])
    desc.store([o0, o1], x)


@triton.jit
def _store3(desc, inp, o0, o1, o2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    i = tl.arange(0, B0)[:, None, None] * (B1 * B2) + tl.arange(0, B1)[None, :, None] * B2 + \
        tl.arange(0, B2)[None, None, :]
    tl.store_tensor_descriptor(desc, [o0, o1, o2], tl.load(inp + i))


_LOAD = {1: _load1, 2: _load2, 3: _load3}
_STORE = {1: _store1, 2: _store2, 3: _store3}

# shape, block, offsets: blocks inside, straddling the far edges, and past them
CASES = [
    ((37, ), (16, ), [(0, ), (32, ), (30, ), (48, )]),
    ((37, 45), (8, 16), [(0, 0), (32, 40), (36, 0), (0, 44), (40, 48)]),
    ((5, 7, 9), (2, 4, 8), [(0, 0, 0), (4, 6, 8), (3, 4, 2), (5, 0, 0)]),
    ((1, 33), (1, 32), [(0, 0), (0, 16), (0, 32)]),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
@pytest.mark.parametrize("padding", ["zero", "nan"])
@pytest.mark.parametrize("shape, block, offsets", CASES)
def test_load(dtype, padding, shape, block, offsets):
    if padding == "nan" and not dtype.is_floating_point:
        pytest.skip("nan padding is for floats")
    t = data(shape, dtype)
    desc = TensorDescriptor(t, list(t.shape), list(t.stride()), list(block), padding=padding)
    for offs in offsets:
        out = torch.full(block, 123, dtype=dtype)
        _LOAD[len(shape)][(1, )](desc, out, *offs, *block)
        ref = ref_block(t, offs, block, float("nan") if padding == "nan" else 0)
        assert torch.equal(out.isnan(), ref.isnan()), (offs, out, ref)
        assert torch.equal(out.nan_to_num(), ref.nan_to_num()), offs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
@pytest.mark.parametrize("shape, block, offsets", CASES)
def test_store(dtype, shape, block, offsets):
    """Stores into a view of a bigger buffer: nothing outside the view changes."""
    big = data([s + 6 for s in shape], dtype, seed=1)
    view = big[tuple(slice(2, 2 + s) for s in shape)]  # outer strides are not the shape's
    for offs in offsets:
        before = big.clone()
        vals = data(block, dtype, seed=2)
        desc = TensorDescriptor(view, list(view.shape), list(view.stride()), list(block))
        _STORE[len(shape)][(1, )](desc, vals, *offs, *block)
        ref = before.clone()
        ref[tuple(slice(2, 2 + s) for s in shape)] = ref_store(before[tuple(slice(2, 2 + s) for s in shape)], offs, vals)
        assert torch.equal(big, ref), offs


def test_negative_offsets():
    """Parts of a block before the tensor's start are padded too (and stores drop them)."""
    t = data((20, 24), torch.float32)
    desc = TensorDescriptor.from_tensor(t, [8, 16])
    out = torch.empty(8, 16)
    _load2[(1, )](desc, out, -3, -5, 8, 16)
    assert torch.equal(out, ref_block(t, (-3, -5), (8, 16), 0))
    vals = data((8, 16), torch.float32, seed=3)
    before = t.clone()
    _store2[(1, )](desc, vals, -3, 20, 8, 16)
    assert torch.equal(t, ref_store(before, (-3, 20), vals))


@triton.jit
def _tiles(x_desc, y_desc, scale, bias_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    bias = tl.load(bias_ptr + on + tl.arange(0, BN))  # padded to whole blocks by the caller
    y_desc.store([om, on], x_desc.load([om, on]) * scale + bias[None, :])


@pytest.mark.parametrize("M, N", [(37, 50), (64, 64), (1, 50), (40, 1)])
def test_tiles_with_ordinary_args(M, N):
    x = data((M, N), torch.float32)
    y = torch.full((M, N), -7.0)
    BM, BN = 16, 16
    bias = data((triton.cdiv(N, BN) * BN, ), torch.float32, seed=4)
    _tiles[(triton.cdiv(M, BM), triton.cdiv(N, BN))](TensorDescriptor.from_tensor(x, [BM, BN]),
                                                     TensorDescriptor.from_tensor(y, [BM, BN]), 2.5, bias, N, BM, BN)
    torch.testing.assert_close(y, x * 2.5 + bias[None, :N], rtol=1e-6, atol=1e-6)


@triton.jit
def _tiles_masked_bias(x_desc, y_desc, bias_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    cols = on + tl.arange(0, BN)
    bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0)
    y_desc.store([om, on], x_desc.load([om, on]) + bias[None, :])


def test_tiles_masked_bias():
    x = data((37, 50), torch.float32)
    y = torch.zeros(37, 50)
    bias = data((50, ), torch.float32, seed=4)
    _tiles_masked_bias[(3, 4)](TensorDescriptor.from_tensor(x, [16, 16]), TensorDescriptor.from_tensor(y, [16, 16]),
                               bias, 50, 16, 16)
    torch.testing.assert_close(y, x + bias[None, :])


def test_specialisations_are_distinct():
    """One kernel launched with descriptors that differ in block shape, padding, shape
    facts (1, multiples of 16, other) and dtype: each gets its own right result."""
    for shape, block, pad, dtype in [((37, 45), (8, 16), "zero", torch.float32), ((37, 45), (4, 32), "zero", torch.float32),
                                     ((37, 45), (8, 16), "nan", torch.float32), ((32, 48), (8, 16), "zero", torch.float32),
                                     ((1, 45), (8, 16), "zero", torch.float32), ((37, 1), (8, 16), "nan", torch.float32),
                                     ((37, 45), (8, 16), "zero", torch.float16), ((37, 45), (8, 16), "zero", torch.int32)]:
        t = data(shape, dtype)
        desc = TensorDescriptor(t, list(t.shape), list(t.stride()), list(block), padding=pad)
        for offs in [(0, 0), (32, 40), (5, -3)]:
            out = torch.empty(block, dtype=dtype)
            _load2[(1, )](desc, out, *offs, *block)
            ref = ref_block(t, offs, block, float("nan") if pad == "nan" else 0)
            assert torch.equal(out.nan_to_num(), ref.nan_to_num()) and torch.equal(out.isnan(), ref.isnan()), \
                (shape, block, pad, dtype, offs)


@triton.jit
def _two_views(a_desc, b_desc, out, BM: tl.constexpr, BN: tl.constexpr):
    """a_desc and b_desc describe the same tensor with different blocks."""
    x = a_desc.load([0, 0])                           # [BM, BN]
    y = b_desc.load([BM, 0])                          # [BM, 2 * BN]
    s = x + tl.reshape(y, [BM, 2, BN]).sum(axis=1)
    tl.store(out + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], s)


def test_two_descriptors_of_one_tensor():
    t = data((20, 40), torch.float32)
    out = torch.empty(8, 8)
    _two_views[(1, )](TensorDescriptor.from_tensor(t, [8, 8]), TensorDescriptor.from_tensor(t, [8, 16]), out, 8, 8)
    y = ref_block(t, (8, 0), (8, 16), 0)
    torch.testing.assert_close(out, t[:8, :8] + y[:, :8] + y[:, 8:])


@triton.jit
def _attrs(desc, out, BM: tl.constexpr):
    tl.static_assert(desc.block_shape[0] == BM)
    tl.static_assert(desc.dtype == tl.float16)
    rows = tl.arange(0, desc.block_shape[0])
    tl.store(out + rows * 3, desc.shape[0] + rows * 0)
    tl.store(out + rows * 3 + 1, desc.shape[1] + rows * 0)
    tl.store(out + rows * 3 + 2, desc.strides[0] + rows * 0)


def test_attributes():
    big = torch.zeros(30, 64, dtype=torch.float16)
    view = big[:, 3:40]
    out = torch.zeros(8, 3, dtype=torch.int64)
    _attrs[(1, )](TensorDescriptor.from_tensor(view, [8, 16]), out, 8)
    assert out.tolist() == [[30, 37, 64]] * 8


@triton.jit
def _helper_load(d, om, on):
    return d.load([om, on])


@triton.jit
def _via_helper(x_desc, y_desc, BM: tl.constexpr, BN: tl.constexpr):
    om = tl.program_id(0) * BM
    tl.store_tensor_descriptor(y_desc, [om, 0], _helper_load(x_desc, om, 0) - 1)


def test_descriptor_passed_to_jit_function():
    x = data((20, 16), torch.float32)
    y = torch.zeros(20, 16)
    _via_helper[(3, )](TensorDescriptor.from_tensor(x, [8, 16]), TensorDescriptor.from_tensor(y, [8, 16]), 8, 16)
    assert torch.equal(y, x - 1)


@triton.jit
def _matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(a_desc.load([om, k]), b_desc.load([k, on]))
    c_desc.store([om, on], acc)


@pytest.mark.parametrize("M, N, K", [(64, 64, 64), (50, 37, 70), (33, 100, 17)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_matmul(M, N, K, dtype):
    a, b = data((M, K), dtype, 5), data((K, N), dtype, 6)
    c = torch.empty(M, N, dtype=dtype)
    BM, BN, BK = 16, 32, 16
    _matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](TensorDescriptor.from_tensor(a, [BM, BK]),
                                                      TensorDescriptor.from_tensor(b, [BK, BN]),
                                                      TensorDescriptor.from_tensor(c, [BM, BN]), K, BM, BN, BK)
    ref = (a.float() @ b.float()).to(dtype)
    tol = 1e-4 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(c, ref, rtol=tol, atol=tol * K ** 0.5)


def test_triton_compile_signature():
    """triton.compile with upstream's tensordesc<dtype[block]> signature spelling."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    src = ASTSource(_load2, {"desc": "tensordesc<fp32[8, 16]>", "out": "*fp32", "o0": "i32", "o1": "i32"},
                    constexprs={"B0": 8, "B1": 16})
    k = triton.compile(src, target=GPUTarget("cpu", 0, 0))
    t = data((20, 30), torch.float32)
    out = torch.empty(8, 16)
    k[(1, 1, 1)](TensorDescriptor.from_tensor(t, [8, 16]), out, 16, 24, 8, 16)
    assert torch.equal(out, ref_block(t, (16, 24), (8, 16), 0))


def test_errors():
    t = torch.zeros(8, 8, dtype=torch.int32)
    with pytest.raises(ValueError, match="nan"):
        TensorDescriptor.from_tensor(t, [8, 8], padding="nan")
    with pytest.raises(ValueError, match="power of 2"):
        TensorDescriptor.from_tensor(t, [8, 6])
    with pytest.raises(ValueError, match="contiguous"):
        TensorDescriptor(t, [8, 8], [1, 8], [8, 8])
    d = TensorDescriptor.from_tensor(torch.zeros(8, 16), [8, 16])
    with pytest.raises(Exception, match="rank 2 indexed with 3"):
        _load3[(1, )](d, torch.zeros(8, 16), 0, 0, 0, 8, 16, 1)


@triton.jit
def _reduce(desc, vals, KIND: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    om = tl.program_id(0) * BM - 3  # blocks straddle the top and bottom edges
    on = tl.program_id(1) * BN
    v = tl.load(vals + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :])
    if KIND == "add":
        desc.atomic_add([om, on], v)
    elif KIND == "max":
        desc.atomic_max([om, on], v)
    else:
        desc.atomic_xor([om, on], v)


@pytest.mark.parametrize("kind", ["add", "max", "xor"])
def test_atomics(kind):
    """Every program adds the same block at its offsets: the elements inside get one
    contribution per covering block, the rest is dropped."""
    out = data((13, 40), torch.int32, seed=7)
    vals = data((8, 16), torch.int32, seed=8)
    ref = out.clone()
    op = {"add": torch.add, "max": torch.maximum, "xor": torch.bitwise_xor}[kind]
    for pm in range(3):
        for pn in range(3):
            blk = ref_block(ref, (pm * 8 - 3, pn * 16), (8, 16), 0)
            ref = ref_store(ref, (pm * 8 - 3, pn * 16), op(blk, vals))
    _reduce[(3, 3)](TensorDescriptor.from_tensor(out, [8, 16]), vals, kind, 8, 16)
    assert torch.equal(out, ref)


def test_atomic_dtype_error():
    """Descriptor atomics take upstream's element types: a float max is an error."""
    with pytest.raises(triton.CompilationError, match="atomic_max"):
        _reduce[(1, 1)](TensorDescriptor.from_tensor(torch.zeros(8, 16), [8, 16]), torch.zeros(8, 16), "max", 8, 16)


_load2_nospec = triton.jit(_load2.fn, do_not_specialize=["desc"])


def test_do_not_specialize_and_error_names():
    """do_not_specialize on a descriptor passes every shape/stride entry (a 1 too); a
    bad descriptor names its argument."""
    for shape in [(1, 45), (37, 1), (32, 48)]:
        t = data(shape, torch.float32)
        out = torch.empty(8, 16)
        _load2_nospec[(1, )](TensorDescriptor.from_tensor(t, [8, 16]), out, 0, 0, 8, 16)
        assert torch.equal(out, ref_block(t, (0, 0), (8, 16), 0)), shape
    d = TensorDescriptor.from_tensor(torch.zeros(8, 16), [8, 16])
    d.padding = "inf"  # past __post_init__'s check: the launcher checks again
    with pytest.raises(ValueError, match="argument 'desc' of _load2.*padding"):
        _load2[(1, )](d, torch.zeros(8, 16), 0, 0, 8, 16)
