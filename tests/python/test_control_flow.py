"""Control flow and tile shapes the front end supports: for loops over range / tl.range
(loop-carried tensors and scalars, pointer increments), tl.static_range, if/else on scalar
conditions, early return, while loops, nested @triton.jit helpers, reductions
(sum/max/min over axes, keep_dims), 2-D tiles with [:, None] broadcasting, tl.dot, and
tl.reduce with a custom combine function."""
import pytest
import torch

import triton
import triton.language as tl


# ---- for loops ----------------------------------------------------------------------------------

@triton.jit
def _row_sum_kernel(x_ptr, o_ptr, cnt_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)   # loop-carried tensor
    cnt = 0                                     # loop-carried scalar
    p = x_ptr + row * stride                    # loop-carried pointer, incremented
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(p + tl.arange(0, BLOCK), mask=offs < N, other=0.0)
        p += BLOCK
        cnt += 1
    tl.store(o_ptr + row, tl.sum(acc, axis=0))
    tl.store(cnt_ptr + row, cnt)


@pytest.mark.parametrize("N", [1, 64, 300, 1000])
def test_for_range_carried_tensor_scalar_pointer(N):
    M = 5
    x = torch.randn(M, N + 7)
    o = torch.zeros(M)
    cnt = torch.zeros(M, dtype=torch.int32)
    _row_sum_kernel[(M,)](x, o, cnt, N, x.stride(0), BLOCK=64)
    torch.testing.assert_close(o, x[:, :N].sum(1), rtol=1e-5, atol=1e-4)
    assert cnt.tolist() == [triton.cdiv(N, 64)] * M


@triton.jit
def _tl_range_kernel(x_ptr, o_ptr, N, STEP: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.range(0, N, STEP, num_stages=2):
        offs = i + tl.arange(0, BLOCK)
        acc = acc + tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(o_ptr + tl.arange(0, BLOCK), acc)


def test_tl_range():
    n, B = 1000, 128
    x = torch.randn(n)
    o = torch.zeros(B)
    _tl_range_kernel[(1,)](x, o, n, STEP=B, BLOCK=B)
    want = torch.nn.functional.pad(x, (0, 1024 - n)).view(8, B).sum(0)
    torch.testing.assert_close(o, want, rtol=1e-5, atol=1e-5)


@triton.jit
def _loop_bounds_kernel(o_ptr, lo, hi, step):
    total = 0
    for i in range(lo, hi, step):   # runtime bounds and step
        total += i
    tl.store(o_ptr, total)


@pytest.mark.parametrize("lo,hi,step", [(0, 10, 1), (3, 20, 4), (5, 5, 1), (7, 3, 1), (-10, 10, 3),
                                        # runtime steps whose sign the compiler does not know
                                        (10, 0, -1), (20, 3, -4), (5, 5, -1), (3, 7, -2), (10, -10, -3),
                                        (0, -1, -1), (7, 0, -7), (7, 0, -8), (-3, -20, -5)])
def test_loop_runtime_bounds(lo, hi, step):
    o = torch.zeros(1, dtype=torch.int32)
    _loop_bounds_kernel[(1,)](o, lo, hi, step)
    assert o.item() == sum(range(lo, hi, step))


@triton.jit
def _count_down(o_ptr, k, lo, hi, step):
    total = 0
    cnt = 0
    for i in range(lo, hi, step):
        cnt += 1
        total += i * cnt        # weighted: the order of the values counts
    tl.store(o_ptr + 2 * k, total)
    tl.store(o_ptr + 2 * k + 1, cnt)


@triton.jit
def _neg_step_kernel(o_ptr, N, STEP: tl.constexpr):
    _count_down(o_ptr, 0, 8, 0, -2)         # constant bounds and step: 8, 6, 4, 2
    _count_down(o_ptr, 1, N, 0, -STEP)      # runtime start, constexpr negative step
    total = 0
    cnt = 0
    for i in tl.range(N - 1, -1, -1, num_stages=2):   # tl.range counts down too
        cnt += 1
        total += i * cnt
    tl.store(o_ptr + 4, total)
    tl.store(o_ptr + 5, cnt)


def _weighted(r):
    return [sum(i * (k + 1) for k, i in enumerate(r)), len(r)]


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, -3])
def test_range_negative_step(n):
    """range/tl.range with a negative step counts down as Python's range does (upstream
    rewrites the loop into an increasing one); it used to run zero times."""
    o = torch.zeros(6, dtype=torch.int32)
    _neg_step_kernel[(1,)](o, n, STEP=3)
    assert o.tolist() == _weighted(range(8, 0, -2)) + _weighted(range(n, 0, -3)) + _weighted(range(n - 1, -1, -1))


@triton.jit
def _reverse_rows_kernel(x_ptr, o_ptr, R, step, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    j = 0
    for r in range(R - 1, -1, step):    # the induction variable addresses memory
        tl.store(o_ptr + j * BLOCK + offs, tl.load(x_ptr + r * BLOCK + offs) + r)
        j += 1


@pytest.mark.parametrize("step", [-1, -2])
def test_range_negative_runtime_step_addresses_memory(step):
    R, B = 9, 16
    x = torch.randn(R, B)
    o = torch.zeros(R, B)
    _reverse_rows_kernel[(1,)](x, o, R, step, BLOCK=B)
    rows = list(range(R - 1, -1, step))
    want = torch.zeros(R, B)
    want[:len(rows)] = x[rows] + torch.tensor(rows, dtype=torch.float32)[:, None]
    torch.testing.assert_close(o, want)


@triton.jit
def _loop_count_kernel(o_ptr, lo, hi, step):
    cnt = 0
    last = lo - lo - 1                  # the bounds' type (int64 here)
    for i in range(lo, hi, step):
        cnt += 1
        last = i
    tl.store(o_ptr, cnt)
    tl.store(o_ptr + 1, last)


@pytest.mark.parametrize("lo,hi,step", [(2 ** 40, 2 ** 40 - 10, -3), (2 ** 31 + 5, 0, -2 ** 31),
                                        (2 ** 40, 2 ** 40 + 10, 3), (-2 ** 40, -2 ** 40 - 1, -2 ** 33)])
def test_range_int64_bounds_either_direction(lo, hi, step):
    o = torch.zeros(2, dtype=torch.int64)
    _loop_count_kernel[(1,)](o, lo, hi, step)
    r = range(lo, hi, step)
    assert o.tolist() == [len(r), r[-1] if len(r) else lo - lo - 1]


@triton.jit
def _fib_kernel(o_ptr, n):
    a = 0
    b = 1
    for _ in range(n):
        a, b = b, a + b
    tl.store(o_ptr, a)


def test_for_loop_carried_python_ints_swap():
    o = torch.zeros(1, dtype=torch.int32)
    _fib_kernel[(1,)](o, 10)
    assert o.item() == 55


@triton.jit
def _static_range_kernel(x_ptr, o_ptr, BLOCK: tl.constexpr, R: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(R):
        acc += tl.load(x_ptr + i * BLOCK + offs) * (i + 1)   # i is a constexpr
    for j in tl.static_range(1, 4, 2):
        acc += j
    tl.store(o_ptr + offs, acc)


def test_static_range_unrolls():
    B, R = 32, 4
    x = torch.randn(R * B)
    o = torch.zeros(B)
    _static_range_kernel[(1,)](x, o, BLOCK=B, R=R)
    want = sum(x[i * B:(i + 1) * B] * (i + 1) for i in range(R)) + 1 + 3
    torch.testing.assert_close(o, want, rtol=1e-5, atol=1e-5)


# ---- if / else, early return ------------------------------------------------------------------

@triton.jit
def _if_else_kernel(x_ptr, o_ptr, k_ptr, thresh, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    s = tl.sum(x, axis=0)
    if s > thresh:          # a scalar tensor condition
        y = x * 2.0
        k = 1
    else:
        y = x - 1.0
        k = 2
    tl.store(o_ptr + offs, y + k)
    tl.store(k_ptr + pid, k)


def test_if_else_scalar_condition():
    B = 32
    x = torch.randn(4, B)
    x[0] += 10
    x[2] -= 10
    o = torch.zeros(4 * B)
    k = torch.zeros(4, dtype=torch.int32)
    _if_else_kernel[(4,)](x, o, k, 0.0, BLOCK=B)
    for r in range(4):
        big = x[r].sum() > 0
        want = x[r] * 2 + 1 if big else x[r] - 1 + 2
        torch.testing.assert_close(o[r * B:(r + 1) * B], want)
        assert k[r].item() == (1 if big else 2)


@triton.jit
def _if_no_else_kernel(x_ptr, o_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs)
    if flag != 0:
        y = y * 3.0
    tl.store(o_ptr + offs, y)


@pytest.mark.parametrize("flag", [0, 5])
def test_if_without_else(flag):
    x = torch.randn(16)
    o = torch.zeros(16)
    _if_no_else_kernel[(1,)](x, o, flag, BLOCK=16)
    torch.testing.assert_close(o, x * 3 if flag else x)


@triton.jit
def _constexpr_if_kernel(x_ptr, o_ptr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if MODE == "double":
        x = x * 2
    elif MODE == "neg":
        x = -x
    tl.store(o_ptr + offs, x)


@pytest.mark.parametrize("mode", ["double", "neg", "id"])
def test_constexpr_if(mode):
    x = torch.randn(16)
    o = torch.zeros(16)
    _constexpr_if_kernel[(1,)](x, o, MODE=mode, BLOCK=16)
    torch.testing.assert_close(o, {"double": x * 2, "neg": -x, "id": x}[mode])


@triton.jit
def _early_return_kernel(x_ptr, o_ptr, n_progs, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= n_progs:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs) + 1.0)


def test_early_return():
    B = 32
    x = torch.randn(4 * B)
    o = torch.zeros(4 * B)
    _early_return_kernel[(4,)](x, o, 2, BLOCK=B)
    torch.testing.assert_close(o[:2 * B], x[:2 * B] + 1)
    assert torch.all(o[2 * B:] == 0)


@triton.jit
def _return_in_both_branches_kernel(x_ptr, o_ptr, n_progs, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid >= n_progs:
        return
    else:
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) + 1.0)
        return


def test_return_in_both_branches():
    B = 32
    x = torch.randn(4 * B)
    o = torch.zeros(4 * B)
    _return_in_both_branches_kernel[(4,)](x, o, 2, BLOCK=B)
    torch.testing.assert_close(o[:2 * B], x[:2 * B] + 1)
    assert torch.all(o[2 * B:] == 0)


# ---- while loops ----------------------------------------------------------------------------------

@triton.jit
def _while_kernel(o_ptr, n):
    i = 0
    while i < n:
        i += 3
    tl.store(o_ptr, i)


@pytest.mark.parametrize("n", [0, 1, 10, 12])
def test_while_loop(n):
    o = torch.zeros(1, dtype=torch.int32)
    _while_kernel[(1,)](o, n)
    assert o.item() == (0 if n <= 0 else 3 * ((n + 2) // 3))


@triton.jit
def _while_two_carried_kernel(o_ptr, n):
    i = 0
    acc = 0
    while i < n:
        acc += i * i
        i += 1
    tl.store(o_ptr, acc)
    tl.store(o_ptr + 1, i)


def test_while_loop_two_carried_scalars():
    o = torch.zeros(2, dtype=torch.int32)
    _while_two_carried_kernel[(1,)](o, 10)
    assert o.tolist() == [sum(i * i for i in range(10)), 10]


@triton.jit
def _while_tensor_kernel(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    steps = 0
    while tl.max(x, axis=0) > 1.0:
        x = x * 0.5
        steps += 1
    tl.store(o_ptr + offs, x)
    tl.store(o_ptr + BLOCK, steps.to(tl.float32))


def test_while_loop_with_tensor_state():
    x = torch.rand(16) * 10 + 1
    o = torch.zeros(17)
    _while_tensor_kernel[(1,)](x, o, BLOCK=16)
    steps = 0
    ref = x.clone()
    while ref.max() > 1.0:
        ref = ref * 0.5
        steps += 1
    torch.testing.assert_close(o[:16], ref)
    assert o[16].item() == steps


# ---- nested @triton.jit helpers (inlined) --------------------------------------------------------

@triton.jit
def _square(x):
    return x * x


@triton.jit
def _axpy_sq(a, x, y):
    return a * _square(x) + y


@triton.jit
def _min_max(x, y):
    return tl.minimum(x, y), tl.maximum(x, y)


@triton.jit
def _nested_kernel(x_ptr, y_ptr, o_ptr, a, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, _axpy_sq(a, x, y))
    lo, hi = _min_max(x, y)
    tl.store(o_ptr + BLOCK + offs, hi - lo)


def test_nested_jit_helpers():
    B = 64
    x, y = torch.randn(B), torch.randn(B)
    o = torch.zeros(2 * B)
    _nested_kernel[(1,)](x, y, o, 1.5, BLOCK=B)
    torch.testing.assert_close(o[:B], 1.5 * x * x + y)
    torch.testing.assert_close(o[B:], (x - y).abs())


# ---- reductions ----------------------------------------------------------------------------------

@triton.jit
def _reduce_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr, AXIS: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    if OP == "sum":
        r = tl.sum(x, axis=AXIS)
    elif OP == "max":
        r = tl.max(x, axis=AXIS)
    else:
        r = tl.min(x, axis=AXIS)
    if AXIS == 0:
        tl.store(o_ptr + rn, r)
    else:
        tl.store(o_ptr + rm, r)


_TORCH_RED = {"sum": lambda x, a: x.sum(a), "max": lambda x, a: x.amax(a), "min": lambda x, a: x.amin(a)}


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_reduce_axis(op, axis):
    M, N = 8, 16
    x = torch.randn(M, N)
    o = torch.zeros(N if axis == 0 else M)
    _reduce_kernel[(1,)](x, o, M=M, N=N, OP=op, AXIS=axis)
    torch.testing.assert_close(o, _TORCH_RED[op](x, axis), rtol=1e-5, atol=1e-5)


@triton.jit
def _masked_var_kernel(x_ptr, o_ptr, n, R: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=cols[None, :] < n, other=0.0)
    mean = tl.sum(x, axis=1) / n
    xc = tl.where(cols[None, :] < n, x - mean[:, None], 0.0)   # the body reads the reduced index
    tl.store(o_ptr + rows, tl.sum(xc * xc, axis=1) / n)
    odd = tl.where(cols[None, :] % 3 == 1, x, 0.0)
    tl.store(o_ptr + 4 * R + rows, tl.sum(odd, axis=1))


@pytest.mark.parametrize("n", [100, 128, 37])
def test_row_reduction_reading_its_index(n):
    """A row reduction whose body depends on the column index (upstream's layer-norm
    variance): padded lanes are zeroed by the where, and every chunk sees its own
    columns."""
    R, BLOCK = 4, 128
    x = torch.randn(2 * R, n)
    o = torch.zeros(8 * R)
    _masked_var_kernel[(2,)](x, o, n, R=R, BLOCK=BLOCK)
    torch.testing.assert_close(o[:2 * R], x.var(1, unbiased=False), rtol=1e-5, atol=1e-5)
    sel = (torch.arange(n) % 3 == 1).float()
    torch.testing.assert_close(o[4 * R:6 * R], (x * sel).sum(1), rtol=1e-5, atol=1e-5)


@triton.jit
def _reduce_all_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(o_ptr + 0, tl.sum(x))
    tl.store(o_ptr + 1, tl.max(x))
    tl.store(o_ptr + 2, tl.min(x))
    tl.store(o_ptr + 3, tl.sum(tl.sum(x, axis=1), axis=0))
    tl.store(o_ptr + 4, x.sum())   # tensor-method form


def test_reduce_whole_tile():
    x = torch.randn(8, 16)
    o = torch.zeros(5)
    _reduce_all_kernel[(1,)](x, o, M=8, N=16)
    torch.testing.assert_close(o, torch.stack([x.sum(), x.max(), x.min(), x.sum(), x.sum()]), rtol=1e-5,
                               atol=1e-5)


@triton.jit
def _keep_dims_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    mx = tl.max(x, axis=1, keep_dims=True)                     # [M, 1]
    s = tl.sum(tl.exp(x - mx), axis=1, keep_dims=True)         # [M, 1]
    colmean = tl.sum(x, axis=0, keep_dims=True) / M            # [1, N]
    tl.static_assert(mx.shape[1] == 1)
    tl.static_assert(colmean.shape[0] == 1)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], tl.exp(x - mx) / s - colmean)


def test_reduce_keep_dims_broadcast():
    """keep_dims results broadcast back against the tile (a softmax minus column means)."""
    M, N = 8, 16
    x = torch.randn(M, N)
    o = torch.zeros(M, N)
    _keep_dims_kernel[(1,)](x, o, M=M, N=N)
    want = torch.softmax(x, dim=1) - x.mean(0, keepdim=True)
    torch.testing.assert_close(o, want, rtol=1e-5, atol=1e-5)


@triton.jit
def _column_tile_kernel(x_ptr, b_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    bias = tl.load(b_ptr + rm[:, None])                        # an [M, 1] pointer tile
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], x + bias)
    tl.store(o_ptr + M * N + rm[:, None], tl.sum(x, axis=1, keep_dims=True))


def test_column_pointer_tile_load_store():
    M, N = 8, 16
    x = torch.randn(M, N)
    b = torch.randn(M)
    o = torch.zeros(M * N + M)
    _column_tile_kernel[(1,)](x, b, o, M=M, N=N)
    torch.testing.assert_close(o[:M * N].view(M, N), x + b[:, None])
    torch.testing.assert_close(o[M * N:], x.sum(1), rtol=1e-5, atol=1e-5)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _custom_reduce_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(o_ptr + rm, tl.reduce(x, 1, _max_combine))
    tl.store(o_ptr + M, tl.reduce(tl.reshape(x, [M * N]), 0, _max_combine))


def test_reduce_custom_combine():
    M, N = 4, 32
    x = torch.randn(M, N)
    o = torch.zeros(M + 1)
    _custom_reduce_kernel[(1,)](x, o, M=M, N=N)
    torch.testing.assert_close(o[:M], x.amax(1))
    assert o[M].item() == x.max().item()


# ---- 2-D tiles and tl.dot ------------------------------------------------------------------------

@triton.jit
def _outer_kernel(x_ptr, y_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm)
    y = tl.load(y_ptr + rn)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], x[:, None] * y[None, :] + rn[None, :] - 2 * rm[:, None])


def test_2d_broadcasting_outer_product():
    M, N = 8, 16
    x, y = torch.randn(M), torch.randn(N)
    o = torch.zeros(M, N)
    _outer_kernel[(1,)](x, y, o, M=M, N=N)
    want = torch.outer(x, y) + torch.arange(N)[None, :] - 2 * torch.arange(M)[:, None]
    torch.testing.assert_close(o, want)


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b)
    c = tl.dot(a, b, c)   # with an accumulator: 2 * a @ b
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@pytest.mark.parametrize("M,N,K", [(16, 16, 16), (16, 32, 8), (32, 16, 64)])
def test_dot_fp32(M, N, K):
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.zeros(M, N)
    _dot_kernel[(1,)](a, b, c, M=M, N=N, K=K)
    torch.testing.assert_close(c, 2 * (a @ b), rtol=1e-4, atol=1e-4)


@triton.jit
def _dot_fp16_out_kernel(a_ptr, b_ptr, c_ptr, d_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                         BK: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, out_dtype=tl.float16)
    tl.static_assert(c.dtype == tl.float16)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)
    # an fp16 accumulator carried over K: every dot rounds once
    acc = tl.zeros([M, N], dtype=tl.float16)
    rb = tl.arange(0, BK)
    for k in range(0, K, BK):
        ak = tl.load(a_ptr + rm[:, None] * K + (k + rb)[None, :])
        bk = tl.load(b_ptr + (k + rb)[:, None] * N + rn[None, :])
        acc = tl.dot(ak, bk, acc, out_dtype=tl.float16)
    tl.store(d_ptr + rm[:, None] * N + rn[None, :], acc)


def test_dot_out_dtype_fp16_accumulates_in_fp32():
    """tl.dot(fp16, fp16, out_dtype=tl.float16) sums the products in fp32 and rounds once,
    as upstream's reference does (torch's fp32 matmul rounded to fp16). K = 1024 products
    in [0, 1) reach ~256, where an fp16 running sum (ulp 0.25) drifts by many ulps."""
    M, N, K, BK = 16, 16, 1024, 256
    g = torch.Generator().manual_seed(5)
    a = torch.rand(M, K, generator=g).half()
    b = torch.rand(K, N, generator=g).half()
    c = torch.zeros(M, N, dtype=torch.float16)
    d = torch.zeros(M, N, dtype=torch.float16)
    _dot_fp16_out_kernel[(1,)](a, b, c, d, M=M, N=N, K=K, BK=BK)
    ref = (a.float() @ b.float()).half()
    ref_acc = torch.zeros(M, N, dtype=torch.float16)
    for k in range(0, K, BK):
        ref_acc = (a[:, k:k + BK].float() @ b[k:k + BK].float() + ref_acc.float()).half()
    # fp16 accumulation, for scale: what a kernel summing in fp16 would be off by
    run = torch.zeros(M, N, dtype=torch.float16)
    for k in range(K):
        run = (run + (a[:, k:k + 1].float() * b[k:k + 1].float()).half())
    ulp = 2.0 ** -2  # fp16 spacing in [256, 512)
    assert (run.float() - ref.float()).abs().max() > 4 * ulp
    # one rounding of an fp32 sum: at most one fp16 ulp from torch (summation order)
    torch.testing.assert_close(c.float(), ref.float(), rtol=0, atol=ulp)
    torch.testing.assert_close(d.float(), ref_acc.float(), rtol=0, atol=ulp)
    assert (c == ref).float().mean() > 0.9 and (d == ref_acc).float().mean() > 0.9


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_tiled_matmul_with_k_loop_and_masks():
    M, N, K = 50, 40, 70
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.zeros(M, N)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                         c.stride(1), BM=16, BN=16, BK=16)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
