"""Language surface that upstream's test_core.py exercises, each against torch/numpy:
tensor descriptors, gather, histogram, interleave, item / if on a one-element tensor,
tl.broadcast, shapes equal to lists, a Python number's .dtype, constexpr and/or,
early returns nested in ifs, atomic_poll, the TritonError hierarchy and the errors
upstream raises (atomic element types, program_id axis), expand_dims with tuples,
join/split of scalars, isinstance in kernels."""
import itertools
import math

import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _desc_permute(In, Out, a: tl.constexpr, b: tl.constexpr, c: tl.constexpr, d: tl.constexpr, p0: tl.constexpr,
                  p1: tl.constexpr, p2: tl.constexpr, p3: tl.constexpr):
    src = tl.make_tensor_descriptor(In, [a, b, c, d], [d * c * b, d * c, d, 1], [a, b, c, d])
    dst = tl.make_tensor_descriptor(Out, [a * b * c * d], [1], [a * b * c * d])
    val = src.load([0, 0, 0, 0]).permute((p0, p1, p2, p3))
    dst.store([0], val.reshape(dst.block_shape))


@pytest.mark.parametrize("perm", [(3, 1, 0, 2), (0, 1, 2, 3), (2, 3, 0, 1)])
def test_tensor_descriptor_whole_block(perm):
    shape = (2, 2, 8, 16)
    x = torch.arange(math.prod(shape), dtype=torch.int32).reshape(shape)
    ref = torch.permute(x, perm)
    out = torch.zeros(ref.shape, dtype=torch.int32)
    _desc_permute[(1, )](x, out, *shape, *perm)
    assert torch.equal(out, ref)


@triton.jit
def _desc_tiles(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(X, [M, N], [N, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(Y, [M, N], [N, 1], [BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    tl.store_tensor_descriptor(dst, [om, on], tl.load_tensor_descriptor(src, [om, on]) * 2 + 1)


def test_tensor_descriptor_ragged_edges():
    """Edge tiles are padded on load and clipped on store: nothing outside [M, N] moves."""
    x = torch.randn(37, 50)
    y = torch.full((37, 50), -7.0)
    _desc_tiles[(3, 4)](x, y, 37, 50, 16, 16)
    assert torch.equal(y, 2 * x + 1)


@triton.jit
def _gather_kernel(src, idx, out, AXIS: tl.constexpr, S0: tl.constexpr, S1: tl.constexpr, I0: tl.constexpr,
                   I1: tl.constexpr):
    s = tl.load(src + tl.arange(0, S0)[:, None] * S1 + tl.arange(0, S1)[None, :])
    i = tl.load(idx + tl.arange(0, I0)[:, None] * I1 + tl.arange(0, I1)[None, :])
    tl.store(out + tl.arange(0, I0)[:, None] * I1 + tl.arange(0, I1)[None, :], tl.gather(s, i, AXIS))


@pytest.mark.parametrize("src_shape, idx_shape, axis", [([4, 4], [8, 4], 0), ([16, 8], [16, 32], 1),
                                                        ([32, 4], [64, 4], 0)])
def test_gather(src_shape, idx_shape, axis):
    torch.manual_seed(0)
    src = torch.randn(src_shape)
    idx = torch.randint(0, src_shape[axis], idx_shape)
    out = torch.empty(idx_shape)
    _gather_kernel[(1, )](src, idx, out, axis, *src_shape, *idx_shape)
    assert torch.equal(out, torch.gather(src, axis, idx))


@triton.jit
def _hist_kernel(x_ptr, z_ptr, n_valid, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)
    z = tl.histogram(tl.load(x_ptr + offs), N, mask=offs < n_valid)
    tl.store(z_ptr + tl.arange(0, N), z)


def test_histogram_with_mask_and_out_of_range_values():
    torch.manual_seed(1)
    x = torch.randint(0, 20, (64, ), dtype=torch.int32)  # values >= 16 are not counted
    z = torch.empty(16, dtype=torch.int32)
    _hist_kernel[(1, )](x, z, 61, 64, 16)
    v = x[:61]
    assert torch.equal(z, torch.bincount(v[v < 16], minlength=16).to(torch.int32))


@triton.jit
def _interleave_kernel(Z, N: tl.constexpr, A, B, Z2):
    tl.store(Z + tl.arange(0, 2 * N), tl.interleave(tl.arange(0, N), tl.arange(N, 2 * N)))
    tl.store(Z2 + tl.arange(0, 2), tl.interleave(A, B))  # two scalars: a [2] tile


def test_interleave():
    z = torch.zeros(256, dtype=torch.int32)
    z2 = torch.zeros(2, dtype=torch.int32)
    _interleave_kernel[(1, )](z, 128, 10, 20, z2)
    ref = torch.stack([torch.arange(128), torch.arange(128, 256)], -1).reshape(256).to(torch.int32)
    assert torch.equal(z, ref)
    assert z2.tolist() == [10, 20]


@triton.jit
def _split_scalars(X, Z1, Z2):
    a, b = tl.split(tl.load(X + tl.arange(0, 2)))
    tl.static_assert(a.shape == [])
    tl.static_assert(isinstance(b, tl.tensor))
    tl.store(Z1, a)
    tl.store(Z2, b)


def test_split_to_scalars():
    z1, z2 = torch.zeros(1), torch.zeros(1)
    _split_scalars[(1, )](torch.tensor([3.0, 4.0]), z1, z2)
    assert (z1.item(), z2.item()) == (3.0, 4.0)


@triton.jit
def _unsplat_kernel(x, EXPLICIT: tl.constexpr):
    cond = tl.load(x + tl.arange(0, 1)) > 42
    if EXPLICIT:
        cond = cond.item()
    if cond:
        tl.store(x, 42)


@pytest.mark.parametrize("explicit", [False, True])
def test_if_on_one_element_tensor(explicit):
    for v, want in ((41, 41), (43, 42)):
        x = torch.full((1, ), v, dtype=torch.int32)
        _unsplat_kernel[(1, )](x, explicit)
        assert x.item() == want


@triton.jit
def _broadcast_kernel(x_ptr, y_ptr, out, M: tl.constexpr, N: tl.constexpr):
    om = tl.arange(0, M)
    on = tl.arange(0, N)
    x = tl.load(x_ptr + N * om[:, None] + on[None, :])
    y = tl.load(y_ptr + on)
    _, yb = tl.broadcast(x, y)
    tl.static_assert(yb.shape == [M, N])
    tl.static_assert(x.shape == (M, N))
    tl.store(out + N * om[:, None] + on[None, :], yb)


def test_broadcast_pair_and_shape_equal_to_list():
    x, y = torch.randn(4, 8), torch.randn(8)
    out = torch.empty(4, 8)
    _broadcast_kernel[(1, )](x, y, out, 4, 8)
    assert torch.equal(out, y.expand(4, 8))


@triton.jit
def _literal_dtype_kernel(out_i, out_f, out_b, BLOCK: tl.constexpr):
    i = 1
    f = 2.5
    t = True
    tl.static_assert(i.dtype == tl.int32)
    tl.static_assert(f.dtype == tl.float32)
    tl.store(out_i + tl.arange(0, BLOCK), tl.full([BLOCK], i, i.dtype))
    tl.store(out_f + tl.arange(0, BLOCK), tl.full([BLOCK], f, f.dtype))
    tl.store(out_b + tl.arange(0, BLOCK), tl.full([BLOCK], t, t.dtype))


def test_python_number_dtype():
    oi, of, ob = torch.zeros(8, dtype=torch.int32), torch.zeros(8), torch.zeros(8, dtype=torch.bool)
    _literal_dtype_kernel[(1, )](oi, of, ob, 8)
    assert oi.eq(1).all() and of.eq(2.5).all() and ob.all()


@triton.jit
def _boolop_kernel(Z, KEEP: tl.constexpr, AXIS: tl.constexpr):
    z_ptr = Z
    if KEEP and AXIS is None:  # both constexpr: decided while tracing
        z_ptr = z_ptr[None, None, :]
    if KEEP or AXIS == 1:
        tl.store(Z + 1, 1.0)
    tl.store(z_ptr, 5.0)


def test_constexpr_and_or_follow_python():
    z = torch.zeros(2)
    _boolop_kernel[(1, )](z, True, 0)
    assert z.tolist() == [5.0, 1.0]
    z = torch.zeros(2)
    _boolop_kernel[(1, )](z, False, 0)
    assert z.tolist() == [5.0, 0.0]


@triton.jit
def _nested_return(Cond1, Cond2, Cond3, Val1, Val2, Val3, Out):
    val = 0
    if tl.load(Cond1):
        if tl.load(Cond2):
            val = tl.load(Val1)
        else:
            return
    else:
        if tl.load(Cond3):
            val = tl.load(Val2)
        else:
            val = tl.load(Val3)
    tl.store(Out, val)


def test_early_return_nested_in_ifs():
    t = lambda v: torch.full((1, ), v, dtype=torch.int32)  # noqa: E731
    for c1, c2, c3 in itertools.product([True, False], repeat=3):
        out = t(-1)
        _nested_return[(1, )](t(c1), t(c2), t(c3), t(1), t(2), t(3), out)
        assert out.item() == ((1 if c2 else -1) if c1 else (2 if c3 else 3))


@triton.jit
def _poll_kernel(flag, out, expected, timeout_ns, TIMEOUT: tl.constexpr):
    if TIMEOUT:
        matched = tl.atomic_poll(flag, expected, timeout_ns=timeout_ns)
    else:
        matched = tl.atomic_poll(flag, expected, sem="acquire")
    tl.store(out, matched)


@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64])
def test_atomic_poll(dtype):
    flag = torch.ones(1, dtype=dtype)
    out = torch.zeros(1, dtype=torch.bool)
    _poll_kernel[(1, )](flag, out, 1, 0, False)
    assert out.item()
    flag.zero_()
    _poll_kernel[(1, )](flag, out, 1, 1000, True)  # never set: times out
    assert not out.item()
    assert flag.item() == 0  # polling does not write


@triton.jit
def _atomic_add_kernel(I, O):
    tl.atomic_add(O, tl.load(I))


@triton.jit
def _bad_pid_kernel(dst):
    tl.store(dst + tl.program_id(20), 1.0)


def test_errors_are_triton_errors():
    assert issubclass(triton.CompilationError, triton.TritonError)
    assert issubclass(triton.runtime.errors.OutOfResources, triton.TritonError)
    assert issubclass(triton.runtime.errors.InterpreterError, triton.TritonError)
    for dt in (torch.int8, torch.int16, torch.uint8):  # upstream: no 8/16-bit integer atomics
        with pytest.raises(triton.TritonError, match="does not support"):
            _atomic_add_kernel[(1, )](torch.zeros(1, dtype=dt), torch.zeros(1, dtype=dt))
    with pytest.raises(triton.TritonError) as e:
        _bad_pid_kernel[(1, )](torch.empty(4))
    assert "program_id axis must be 0, 1, or 2 but got 20" in str(e.value.__cause__)


@triton.jit
def _expand_kernel(dummy, N: tl.constexpr):
    x = tl.arange(0, N)
    tl.static_assert(tl.expand_dims(x, (0, -1)).shape == [1, N, 1])
    tl.static_assert(tl.expand_dims(x, (-4, 2, -1)).shape == [1, N, 1, 1])
    tl.static_assert(tl.expand_dims(x, (3, 1, 2)).shape == [N, 1, 1, 1])
    tl.static_assert(tl.expand_dims(tl.sum(x), -1).shape == [1])


def test_expand_dims_tuples_and_negative_axes():
    _expand_kernel[(1, )](torch.empty(1), 32)


@triton.jit
def _atomic_result_index(Index, Out, SIZE: tl.constexpr, OP: tl.constexpr):
    r = tl.arange(0, SIZE)[:, None]
    if OP == "add":
        w = tl.atomic_add(Index + r, val=r, sem="relaxed")
    else:
        w = tl.atomic_cas(Index + r, cmp=tl.zeros((SIZE, ), dtype=Index.dtype.element_ty)[:, None],
                          val=(r + 100).to(Index.dtype.element_ty), sem="relaxed")
    # a store through a pointer indexed by the atomic's result, broadcast along dim 1
    tl.store(Out + w.to(tl.int32) * SIZE + tl.arange(0, SIZE)[None, :], (r * 10 + tl.arange(0, SIZE)[None, :]))


@pytest.mark.parametrize("op", ["add", "cas"])
@pytest.mark.parametrize("size", [1, 4, 16])
def test_store_indexed_by_atomic_result(op, size):
    """upstream's test_tensor_atomic_use_result, with a permuted index and values that
    say which row wrote where (not a constant): row r writes out[old[r], :]."""
    perm = torch.randperm(size, generator=torch.Generator().manual_seed(size)).to(torch.int32)
    index = perm.clone()
    out = torch.full((size, size), -1, dtype=torch.int32)
    _atomic_result_index[(1, )](index, out, size, op)
    ref = torch.full((size, size), -1, dtype=torch.int32)
    for r in range(size):
        ref[perm[r]] = r * 10 + torch.arange(size, dtype=torch.int32)
    assert torch.equal(out, ref)
    want_index = perm + torch.arange(size, dtype=torch.int32) if op == "add" else torch.where(
        perm == 0, torch.arange(size, dtype=torch.int32) + 100, perm)
    assert torch.equal(index, want_index)


@triton.jit
def _gathered_reshaped(X, I, Out, M: tl.constexpr, N: tl.constexpr):
    rows = tl.load(I + tl.arange(0, M))          # gathered row indices
    p = X + rows * N                             # [M] gathered pointer
    a = tl.load(p[:, None] + tl.arange(0, N)[None, :])      # expand_dims + broadcast
    pt = tl.trans(p[:, None] + tl.arange(0, N)[None, :])     # a transposed gathered pointer
    b = tl.load(pt)
    tl.store(Out + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], a * 2)
    tl.store(Out + M * N + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], b)
    q = Out + 2 * M * N + rows[:, None] * N           # a scatter through a broadcast gathered pointer
    tl.store(q + tl.arange(0, N)[None, :], a + 1)


def test_gathered_pointer_broadcast_expand_dims_trans():
    M, N = 8, 16
    x = torch.randn(M, N)
    idx = torch.randperm(M).to(torch.int32)
    out = torch.zeros(3 * M * N)
    _gathered_reshaped[(1, )](x, idx, out, M, N)
    assert torch.equal(out[:M * N].view(M, N), x[idx.long()] * 2)
    assert torch.equal(out[M * N:2 * M * N].view(N, M), x[idx.long()].T)
    ref = torch.zeros(M, N)
    ref[idx.long()] = x[idx.long()] + 1
    assert torch.equal(out[2 * M * N:].view(M, N), ref)


@triton.jit
def _squeeze_kernel(X, Out, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    a = tl.unsqueeze(x, -1)                     # [N, 1]
    b = x.unsqueeze(0)                          # [1, N]
    tl.static_assert(a.shape == [N, 1])
    tl.static_assert(b.shape == [1, N])
    c = tl.squeeze(a * b, 1) if False else tl.squeeze(tl.sum(a * b, 1, keep_dims=True), -1)
    tl.static_assert(c.shape == [N])
    tl.store(Out + tl.arange(0, N), c)


def test_unsqueeze_squeeze():
    x = torch.arange(8, dtype=torch.float32)
    out = torch.zeros(8)
    _squeeze_kernel[(1, )](x, out, N=8)
    assert torch.equal(out, x * x.sum())


@pytest.mark.parametrize("axes, msg", [(-3, "invalid axis -3"), (2, "invalid axis 2"),
                                       ((0, 0), r"duplicate axes, normalized axes = \[0, 0\]"),
                                       ((0, -3), r"duplicate axes, normalized axes = \[0, 0\]")])
def test_expand_dims_errors_as_upstream(axes, msg):
    @triton.jit
    def k(X, A: tl.constexpr):
        tl.expand_dims(tl.arange(0, 4), A)

    with pytest.raises(triton.CompilationError, match=msg):
        k[(1, )](torch.zeros(1), axes)


@triton.jit
def _short_circuit(x):
    if (x is not None) and hasattr(x, "dtype") and isinstance(x.dtype, tl.pointer_type) and \
            (x.dtype.element_ty == tl.int32) and (tl.load(x) > 42):
        tl.store(x, 42)


def test_hasattr_and_pi32_t_in_kernels():
    assert tl.pi32_t == tl.pointer_type(tl.int32)
    _short_circuit[(1, )](None)
    _short_circuit[(1, )](2)
    for v, want in [(37, 37), (84, 42)]:
        x = torch.full((1, ), v, dtype=torch.int32)
        _short_circuit[(1, )](x)
        assert x.item() == want
    f = torch.full((1, ), 84.0)
    _short_circuit[(1, )](f)
    assert f.item() == 84.0


@triton.jit
def _void_ifexp_and_one_branch_return(Flag, Out, MODE: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(Out + pid, 1) if pid % 2 == 0 else tl.store(Out + pid, 2)   # a void conditional expression
    if MODE == "dynamic":
        if tl.load(Flag):          # a return in only one branch, inside a constexpr if
            tl.store(Out + 4 + pid, 10)
            return
    tl.store(Out + 4 + pid, 20)


@pytest.mark.parametrize("flag", [0, 1])
def test_void_conditional_expression_and_return_in_one_branch(flag):
    out = torch.zeros(8, dtype=torch.int32)
    _void_ifexp_and_one_branch_return[(4, )](torch.tensor([flag], dtype=torch.int32), out, "dynamic")
    assert out.tolist() == [1, 2, 1, 2] + [10 if flag else 20] * 4


@triton.jit
def _zero_strided_add(X, stride_a, stride_b):
    tl.atomic_add(X + tl.program_id(0) * stride_a + tl.program_id(1) * stride_b, 1)


def test_zero_strided_tensor_atomics():
    """upstream's test_zero_strided_tensors without its torch.cuda.device context: every
    program of the expanded dim adds to the one element they share."""
    x = torch.zeros((2, 2, 1)).expand((2, 2, 3))
    _zero_strided_add[x.shape](x, x.stride(0), x.stride(1))
    assert torch.equal(x, torch.full((2, 2, 3), 3.0))
