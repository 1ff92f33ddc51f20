"""Integers cast to pointers and back (tt.int_to_ptr, tt.ptr_to_int): kernels that
receive tables of torch `data_ptr()` addresses, load one and cast it with
`.to(tl.pointer_type(T))`, then use it as any pointer argument — affine tiles, masks,
block pointers, pointers carried through a K loop, tl.dot — against torch. A cast
pointer may point into any argument: loads and stores through one are ordered with
those through arguments (docs/compiler.md §2.3)."""
import pytest
import torch

import triton
import triton.language as tl
import triton.language.extra.smt as smt

# ---- grouped GEMM: one launch, groups of different sizes, pointers from a table ----------


@triton.jit
def _grouped_gemm(a_tab, b_tab, c_tab, sizes, lds, ngroups, NPROG: tl.constexpr, DT: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tile = tl.program_id(0)
    start = 0  # first tile of the current group
    for g in range(ngroups):
        M = tl.load(sizes + 3 * g)
        N = tl.load(sizes + 3 * g + 1)
        K = tl.load(sizes + 3 * g + 2)
        tiles_n = tl.cdiv(N, BN)
        ntiles = tl.cdiv(M, BM) * tiles_n
        while tile >= start and tile < start + ntiles:
            lda = tl.load(lds + 3 * g)
            ldb = tl.load(lds + 3 * g + 1)
            ldc = tl.load(lds + 3 * g + 2)
            a = tl.load(a_tab + g).to(tl.pointer_type(DT))
            b = tl.load(b_tab + g).to(tl.pointer_type(DT))
            c = tl.load(c_tab + g).to(tl.pointer_type(DT))
            t = tile - start
            rm = (t // tiles_n) * BM + tl.arange(0, BM)
            rn = (t % tiles_n) * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            pa = a + rm[:, None] * lda + rk[None, :]
            pb = b + rk[:, None] * ldb + rn[None, :]
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for kk in range(0, tl.cdiv(K, BK)):
                left = K - kk * BK
                x = tl.load(pa, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
                y = tl.load(pb, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
                acc += tl.dot(x, y)
                pa += BK
                pb += BK * ldb
            pc = c + rm[:, None] * ldc + rn[None, :]
            tl.store(pc, acc.to(DT), mask=(rm[:, None] < M) & (rn[None, :] < N))
            tile += NPROG
        start = start + ntiles


def _tables(mats):
    return torch.tensor([m.data_ptr() for m in mats], dtype=torch.int64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_grouped_gemm(dtype):
    torch.manual_seed(0)
    shapes = [(37, 45, 29), (64, 64, 64), (5, 70, 100), (96, 17, 33)]  # M, N, K
    A = [torch.randn(m, k, dtype=dtype) for m, n, k in shapes]
    B = [torch.randn(k, n, dtype=dtype) for m, n, k in shapes]
    C = [torch.full((m, n), float("nan"), dtype=dtype) for m, n, k in shapes]
    sizes = torch.tensor([v for s in shapes for v in s], dtype=torch.int32)
    lds = torch.tensor([v for a, b, c in zip(A, B, C) for v in (a.stride(0), b.stride(0), c.stride(0))],
                       dtype=torch.int32)
    nprog = 5
    dt = tl.float32 if dtype == torch.float32 else tl.float16
    _grouped_gemm[(nprog,)](_tables(A), _tables(B), _tables(C), sizes, lds, len(shapes), NPROG=nprog, DT=dt,
                            BM=32, BN=32, BK=16)
    for a, b, c in zip(A, B, C):
        ref = (a.float() @ b.float()).to(dtype)
        tol = 1e-4 if dtype == torch.float32 else 1e-2
        torch.testing.assert_close(c, ref, rtol=tol, atol=tol)


@triton.jit
def _grouped_gemm_bptr(a_tab, b_tab, c_tab, sizes, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    g = tl.program_id(1)
    M = tl.load(sizes + 3 * g)
    N = tl.load(sizes + 3 * g + 1)
    K = tl.load(sizes + 3 * g + 2)
    tiles_n = tl.cdiv(N, BN)
    t = tl.program_id(0)
    if t < tl.cdiv(M, BM) * tiles_n:
        a = tl.load(a_tab + g).to(tl.pointer_type(tl.float32))
        b = tl.load(b_tab + g).to(tl.pointer_type(tl.float32))
        c = tl.load(c_tab + g).to(tl.pointer_type(tl.float32))
        om = (t // tiles_n) * BM
        on = (t % tiles_n) * BN
        pa = tl.make_block_ptr(a, (M, K), (K, 1), (om, 0), (BM, BK), (1, 0))
        pb = tl.make_block_ptr(b, (K, N), (N, 1), (0, on), (BK, BN), (1, 0))
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kk in range(0, tl.cdiv(K, BK)):
            acc += tl.dot(tl.load(pa, boundary_check=(0, 1)), tl.load(pb, boundary_check=(0, 1)))
            pa = tl.advance(pa, (0, BK))
            pb = tl.advance(pb, (BK, 0))
        pc = tl.make_block_ptr(c, (M, N), (N, 1), (om, on), (BM, BN), (1, 0))
        tl.store(pc, acc, boundary_check=(0, 1))


def test_grouped_gemm_block_pointers():
    torch.manual_seed(1)
    shapes = [(40, 50, 70), (16, 16, 16), (65, 33, 9)]
    A = [torch.randn(m, k) for m, n, k in shapes]
    B = [torch.randn(k, n) for m, n, k in shapes]
    C = [torch.zeros(m, n) for m, n, k in shapes]
    sizes = torch.tensor([v for s in shapes for v in s], dtype=torch.int32)
    most = max(triton.cdiv(m, 32) * triton.cdiv(n, 32) for m, n, k in shapes)
    _grouped_gemm_bptr[(most, len(shapes))](_tables(A), _tables(B), _tables(C), sizes, BM=32, BN=32, BK=16)
    for a, b, c in zip(A, B, C):
        torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


# ---- row gathers through a table of row pointers ---------------------------------------------


@triton.jit
def _gather_rows(tab, out, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in range(ROWS):
        row = tl.load(tab + r).to(tl.pointer_type(tl.float32))
        x = tl.load(row + cols, mask=cols < N, other=0.0)
        tl.store(out + r * N + cols, x * 2.0 + 1.0, mask=cols < N)


def test_row_gather_scalar_pointers():
    src = torch.randn(50, 77)
    pick = [3, 49, 0, 3, 17, 22]
    tab = torch.tensor([src[i].data_ptr() for i in pick], dtype=torch.int64)
    out = torch.zeros(len(pick), 77)
    _gather_rows[(1,)](tab, out, 77, ROWS=len(pick), BLOCK=128)
    torch.testing.assert_close(out, src[pick] * 2.0 + 1.0)


@triton.jit
def _gather_rows_tile(tab, out, nrows, N, BR: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BLOCK)
    ptrs = tl.load(tab + rows, mask=rows < nrows, other=0).to(tl.pointer_type(tl.float32))
    m = (rows[:, None] < nrows) & (cols[None, :] < N)
    x = tl.load(ptrs[:, None] + cols[None, :], mask=m, other=0.0)
    tl.store(out + rows[:, None] * N + cols[None, :], x - 3.0, mask=m)


def test_row_gather_tile_of_pointers():
    src = torch.randn(40, 21)
    pick = torch.randint(0, 40, (13,))
    tab = torch.tensor([src[int(i)].data_ptr() for i in pick], dtype=torch.int64)
    out = torch.zeros(13, 21)
    _gather_rows_tile[(triton.cdiv(13, 8),)](tab, out, 13, 21, BR=8, BLOCK=32)
    torch.testing.assert_close(out, src[pick] - 3.0)


@triton.jit
def _scatter_rows_tile(tab, src, N, BR: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.arange(0, BR)
    cols = tl.arange(0, BLOCK)
    ptrs = tl.load(tab + rows).to(tl.pointer_type(tl.float32))
    x = tl.load(src + rows[:, None] * N + cols[None, :], mask=cols[None, :] < N)
    tl.store(ptrs[:, None] + cols[None, :], x, mask=cols[None, :] < N)


def test_row_scatter_tile_of_pointers():
    dst = torch.zeros(10, 19)
    src = torch.randn(4, 19)
    where = [7, 1, 4, 9]
    tab = torch.tensor([dst[i].data_ptr() for i in where], dtype=torch.int64)
    _scatter_rows_tile[(1,)](tab, src, 19, BR=4, BLOCK=32)
    ref = torch.zeros(10, 19)
    ref[where] = src
    torch.testing.assert_close(dst, ref)


# ---- pointer -> integer -> pointer, stores and masked loads through cast pointers -----------


@triton.jit
def _round_trip(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ax = x.to(tl.int64)
    ay = (y + 1).to(tl.int64)  # one element in: 4 bytes further
    px = ax.to(tl.pointer_type(tl.float32))
    py = (ay - 4).to(tl.pointer_type(tl.float32), bitcast=True)
    m = offs < n
    tl.store(out + offs, tl.load(px + offs, mask=m) * tl.load(py + offs, mask=m), mask=m)
    tl.store(out + n + tl.program_id(0), (ay - ax).to(tl.float32))


def test_ptr_int_ptr_round_trip():
    n = 300
    x, y = torch.randn(n), torch.randn(n)
    out = torch.zeros(n + 3)
    _round_trip[(3,)](x, y, out, n, BLOCK=128)
    torch.testing.assert_close(out[:n], x * y)
    assert torch.all(out[n:] == float(y.data_ptr() + 4 - x.data_ptr()))


@triton.jit
def _addresses(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, (x + 2 * offs).to(tl.int64))
    tl.store(out + BLOCK + offs, (x + offs).to(tl.int64).to(tl.pointer_type(tl.float16)).to(tl.int64))
    # a tile of addresses cast to f32 pointers, one element on, and back
    back = (tl.load(out + offs).to(tl.pointer_type(tl.float32)) + 1).to(tl.int64)
    tl.store(out + 2 * BLOCK + offs, back)


def test_tile_of_pointers_to_integers():
    x = torch.zeros(64, dtype=torch.float16)
    out = torch.zeros(96, dtype=torch.int64)
    _addresses[(1,)](x, out, BLOCK=32)
    base = x.data_ptr()
    assert out[:32].tolist() == [base + 4 * i for i in range(32)]
    assert out[32:64].tolist() == [base + 2 * i for i in range(32)]
    assert out[64:].tolist() == [base + 4 * i + 4 for i in range(32)]


@triton.jit
def _type_checks(x, tab, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.load(tab).to(tl.pointer_type(tl.float32))
    q = p.to(tl.pointer_type(tl.int32))
    r = 0
    if p.dtype == tl.pointer_type(tl.float32):
        r += 1
    if p.dtype != x.dtype:  # *fp32 against *fp16
        r += 10
    if p.dtype.element_ty == tl.float32:
        r += 100
    if q.dtype == tl.pointer_type(tl.int32) and q.dtype != p.dtype:
        r += 1000
    if p.dtype.is_ptr() and not tl.float32.is_ptr():
        r += 10000
    tl.store(out + offs, tl.load(q + offs) + r)


def test_pointer_type_comparisons():
    assert tl.pointer_type(tl.float16) == tl.pointer_type(tl.float16)
    assert tl.pointer_type(tl.float16) != tl.pointer_type(tl.float32)
    assert hash(tl.pointer_type(tl.int8)) == hash(tl.pointer_type(tl.int8))
    x = torch.arange(16, dtype=torch.int32)
    out = torch.zeros(16, dtype=torch.int32)
    _type_checks[(1,)](torch.zeros(4, dtype=torch.float16), torch.tensor([x.data_ptr()]), out, BLOCK=16)
    assert torch.equal(out, x + 11111)


@triton.jit
def _store_through(tab, src, n, BLOCK: tl.constexpr):
    g = tl.program_id(1)
    dst = tl.load(tab + g).to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(src + offs, mask=m)
    tl.store(dst + offs, v * (g + 1).to(tl.float32), mask=m)
    tl.store(dst + n, -1.0)  # a scalar store through the cast pointer


def test_masked_stores_through_cast_pointers():
    n = 1000
    src = torch.randn(n)
    outs = [torch.zeros(n + 1) for _ in range(3)]
    _store_through[(triton.cdiv(n, 256), 3)](_tables(outs), src, n, BLOCK=256)
    for g, o in enumerate(outs):
        torch.testing.assert_close(o[:n], src * (g + 1))
        assert o[n] == -1.0


@triton.jit
def _pointer_casts(x, out16, out8, out32, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    # a tile of f32 pointers seen as f16 pointers: the low halves
    tl.store(out16 + offs, tl.load((x + offs).to(tl.pointer_type(tl.float16))))
    # a scalar pointer three floats in, seen as bytes
    b = (x + 3).to(tl.pointer_type(tl.uint8))
    tl.store(out8 + offs, tl.load(b + offs))
    # f32 seen as i32 (same size) and stored back through the cast
    q = x.to(tl.pointer_type(tl.int32))
    tl.store(out32 + offs, tl.load(q + offs) ^ 1)
    tl.store(q + BLOCK + offs, tl.load(q + offs))


def test_pointer_bitcasts_to_other_element_types():
    x = torch.randn(64)
    x0 = x.clone()
    out16 = torch.zeros(32, dtype=torch.float16)
    out8 = torch.zeros(32, dtype=torch.uint8)
    out32 = torch.zeros(32, dtype=torch.int32)
    _pointer_casts[(1,)](x, out16, out8, out32, BLOCK=32)
    assert torch.equal(out16, x0.view(torch.float16)[0:64:2])
    assert torch.equal(out8, x0.view(torch.uint8)[12:44])
    assert torch.equal(out32, x0[:32].view(torch.int32) ^ 1)
    assert torch.equal(x[32:], x0[:32])


@triton.jit
def _widen_tile(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load((x + offs).to(tl.pointer_type(tl.float32))))


def test_tile_of_pointers_cast_wider_is_an_error():
    with pytest.raises(Exception, match=r"test_int_to_ptr\.py:\d+.*wider element type"):
        _widen_tile[(1,)](torch.zeros(32, dtype=torch.float16), torch.zeros(32), BLOCK=16)


@triton.jit
def _atomics_through(tab, vals, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(vals + offs, mask=m)
    base = tl.load(tab).to(tl.pointer_type(tl.float32))
    tl.atomic_add(base + offs % 4, v, mask=m)  # a tile through one cast pointer
    ptrs = tl.load(tab + 1 + offs % 3).to(tl.pointer_type(tl.float32))
    tl.atomic_add(ptrs, v, mask=m)  # a tile of cast addresses
    tl.atomic_max(tl.load(tab + 4).to(tl.pointer_type(tl.float32)), tl.max(tl.where(m, v, -1e30), 0))


def test_atomics_through_cast_pointers():
    n = 50
    vals = torch.randn(n)
    acc = torch.zeros(4)
    cells = [torch.zeros(1) for _ in range(3)]
    top = torch.full((1,), -1e30)
    tab = torch.tensor([acc.data_ptr()] + [c.data_ptr() for c in cells] + [top.data_ptr()], dtype=torch.int64)
    _atomics_through[(1,)](tab, vals, n, BLOCK=64)
    idx = torch.arange(n)
    torch.testing.assert_close(acc, torch.zeros(4).index_add_(0, idx % 4, vals), rtol=1e-5, atol=1e-5)
    for j, c in enumerate(cells):
        torch.testing.assert_close(c[0], vals[idx % 3 == j].sum(), rtol=1e-5, atol=1e-5)
    assert top[0] == vals.max()


@triton.jit
def _parallel_rows(tab, out, N: tl.constexpr, ROWS: tl.constexpr):
    # one cast outside the outlined loop, one in each iteration
    first = tl.load(tab).to(tl.pointer_type(tl.float32))
    cols = tl.arange(0, N)
    for r in smt.parallel(0, ROWS):
        row = tl.load(tab + r).to(tl.pointer_type(tl.float32))
        tl.store(out + r * N + cols, tl.load(row + cols) + tl.load(first + cols))


def test_cast_pointers_in_a_parallel_loop():
    src = [torch.randn(16) for _ in range(6)]
    out = torch.zeros(6, 16)
    _parallel_rows[(1,)](_tables(src), out, N=16, ROWS=6, num_threads=2)
    torch.testing.assert_close(out, torch.stack(src) + src[0][None, :])


# ---- aliasing: an argument and a cast pointer to the same memory -----------------------------


@triton.jit
def _alias_shift(x, tab, n, BLOCK: tl.constexpr):
    # y is x seen through an address one element lower: y[i] = x[i - 1], and
    # x[i] = x[i - 1] + x[i]: fused into one loop, the store would write elements
    # later lanes still read through y
    offs = tl.arange(0, BLOCK)
    y = tl.load(tab).to(tl.pointer_type(tl.float32))
    m = offs < n
    v = tl.load(y + offs, mask=m) + tl.load(x + offs, mask=m)
    tl.store(x + offs, v, mask=m)


def test_load_through_cast_pointer_store_through_argument():
    n = 100
    buf = torch.randn(n + 1)
    ref = buf[1:] + buf[:-1]
    tab = torch.tensor([buf.data_ptr()], dtype=torch.int64)
    _alias_shift[(1,)](buf[1:], tab, n, BLOCK=128)
    torch.testing.assert_close(buf[1:], ref)


@triton.jit
def _alias_store_then_load(x, tab, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    p = tl.load(tab).to(tl.pointer_type(tl.float32))
    old = tl.load(x + offs, mask=m)          # read through the argument
    tl.store(p + offs, old * 10.0, mask=m)   # overwrite it through the cast pointer
    new = tl.load(x + offs, mask=m)          # read it back through the argument
    tl.store(out + offs, old + new, mask=m)


def test_store_through_cast_pointer_then_load_through_argument():
    n = 77
    x = torch.randn(n)
    ref = x + 10.0 * x
    tab = torch.tensor([x.data_ptr()], dtype=torch.int64)
    out = torch.zeros(n)
    _alias_store_then_load[(1,)](x, tab, out, n, BLOCK=128)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(x, 10.0 * (ref / 11.0), rtol=1e-5, atol=1e-5)


@triton.jit
def _alias_reverse(x, tab, BLOCK: tl.constexpr):
    # the store through the cast pointer writes elements the load has yet to read
    offs = tl.arange(0, BLOCK)
    p = tl.load(tab).to(tl.pointer_type(tl.float32))
    tl.store(p + offs, tl.load(x + BLOCK - 1 - offs))


def test_reverse_in_place_through_cast_pointer():
    x = torch.randn(64)
    ref = x.flip(0)
    _alias_reverse[(1,)](x, torch.tensor([x.data_ptr()], dtype=torch.int64), BLOCK=64)
    torch.testing.assert_close(x, ref)


# ---- what is not supported says so, at the kernel's line ----------------------------------------


@triton.jit
def _carried_from_table(tab, out, n):
    p = tl.load(tab).to(tl.pointer_type(tl.float32))
    for i in range(n):
        tl.store(out + i, tl.load(p))
        p = tl.load(tab + i + 1).to(tl.pointer_type(tl.float32))


def test_loop_carried_pointer_from_a_new_address_is_an_error():
    tab = torch.zeros(4, dtype=torch.int64)
    with pytest.raises(Exception, match=r"test_int_to_ptr\.py:\d+.*loop-carried pointer"):
        _carried_from_table[(1,)](tab, torch.zeros(4), 3)


@triton.jit
def _float_to_pointer(x, out):
    p = tl.load(x).to(tl.pointer_type(tl.float32), bitcast=True)
    tl.store(out, tl.load(p))


def test_float_to_pointer_is_an_error():
    # as upstream: only integers become pointers, bitcast or not
    with pytest.raises(Exception, match=r"test_int_to_ptr\.py:\d+.*cannot cast fp32 to pointer<fp32>"):
        _float_to_pointer[(1,)](torch.zeros(2), torch.zeros(2))
