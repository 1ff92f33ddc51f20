"""triton.language.extra.smt (SpacemiT's SMT extension) on the CPU, against torch.

The seed's matmul (../shared/seed, "SMT 扩展") runs unchanged; the packed layout
matches spine-triton's test reference `x.view(R/p0, p0, C/p1, p1).permute(0, 2, 1, 3)`
(zero tails, reference/spine-triton.md §1.2); every API of the module is exercised,
with the errors it must give."""
import pytest
import torch

import triton
import triton.language as tl
import triton.language.extra.smt as smt
from triton.backends.spine_triton.driver import CPUDriver

triton.runtime.driver.set_active(CPUDriver())


def packed_ref(x, p0, p1):
    """torch reference of a pack with zero tails."""
    r, c = x.shape
    R, C = -(-r // p0) * p0, -(-c // p1) * p1
    xp = torch.zeros(R, C, dtype=x.dtype)
    xp[:r, :c] = x
    return xp.view(R // p0, p0, C // p1, p1).permute(0, 2, 1, 3).contiguous()


# ---- the seed's matmul, unchanged ------------------------------------------------------------

@triton.jit
def mm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    MICRO_M: tl.constexpr,
    MICRO_K: tl.constexpr,
    MICRO_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    a_block_ptr = tl.make_block_ptr(
        base=a_ptr,
        shape=[M, K],
        strides=[stride_am, stride_ak],
        offsets=[pid_m * BLOCK_SIZE_M, 0],
        block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K],
        order=[1, 0],
    )
    b_block_ptr = tl.make_block_ptr(
        base=b_ptr,
        shape=[K, N],
        strides=[stride_bk, stride_bn],
        offsets=[0, pid_n * BLOCK_SIZE_N],
        block_shape=[BLOCK_SIZE_K, BLOCK_SIZE_N],
        order=[1, 0],
    )

    a = smt.view(
        smt.descriptor_load(a_block_ptr, (0, 0)),
        (0, 0),
        (BLOCK_SIZE_M, BLOCK_SIZE_K),
        (MICRO_M, MICRO_K),
    )
    b = smt.view(
        smt.descriptor_load(b_block_ptr, (0, 0)),
        (0, 0),
        (BLOCK_SIZE_K, BLOCK_SIZE_N),
        (MICRO_K, MICRO_N),
    )

    acc = smt.dot(a, b)
    acc = smt.view(acc, (0, 0), (BLOCK_SIZE_M, BLOCK_SIZE_N), (1, 1))
    c = acc.to(c_ptr.dtype.element_ty)

    c_block_ptr = tl.make_block_ptr(
        base=c_ptr,
        shape=[M, N],
        strides=[stride_cm, stride_cn],
        offsets=[pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N],
        block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N],
        order=[1, 0],
    )
    tl.store(c_block_ptr, c, boundary_check=(0, 1))


def _run_seed(M, N, K, dtype, micro, blocks=(64, 64, 64)):
    BM, BN, BK = blocks
    a = torch.randn(M, K).to(dtype)
    b = torch.randn(K, N).to(dtype)
    c = torch.empty(M, N, dtype=dtype)
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                    BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, MICRO_M=micro[0], MICRO_K=micro[1],
                    MICRO_N=micro[2])
    return a, b, c


@pytest.mark.parametrize("M,N,K", [(64, 64, 64), (128, 192, 64), (100, 77, 50), (1, 130, 33)])
def test_seed_matmul_fp32(M, N, K):
    a, b, c = _run_seed(M, N, K, torch.float32, (8, 8, 16))
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("M,N,K", [(64, 64, 64), (96, 160, 64), (100, 77, 50)])
def test_seed_matmul_fp16(M, N, K):
    a, b, c = _run_seed(M, N, K, torch.float16, (16, 8, 32))
    ref = (a.float() @ b.float()).half()
    torch.testing.assert_close(c, ref, rtol=2e-3, atol=2e-3)


# ---- a K loop with acc += smt.dot, and Proton scopes around its phases -------------------------

@triton.jit
def mm_kloop(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             MM: tl.constexpr, MK: tl.constexpr, MN: tl.constexpr, SCOPES: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, [M, K], [sam, 1], [pm * BM, 0], [BM, BK], [1, 0])
    b_bp = tl.make_block_ptr(b_ptr, [K, N], [sbk, 1], [0, pn * BN], [BK, BN], [1, 0])
    acc = smt.view(tl.zeros((BM, BN), dtype=tl.float32), (0, 0), (BM, BN), (MM, MN))
    for k in range(0, K, BK):
        if SCOPES:
            pl.enter_scope("load")
        a = smt.view(smt.descriptor_load(a_bp, (0, k)), (0, 0), (BM, BK), (MM, MK))
        b = smt.view(smt.descriptor_load(b_bp, (k, 0)), (0, 0), (BK, BN), (MK, MN))
        if SCOPES:
            pl.exit_scope("load")
            pl.enter_scope("dot")
        acc += smt.dot(a, b)
        if SCOPES:
            pl.exit_scope("dot")
    if SCOPES:
        pl.enter_scope("store")
    c = smt.view(acc, (0, 0), (BM, BN), (1, 1))
    tl.store(tl.make_block_ptr(c_ptr, [M, N], [scm, 1], [pm * BM, pn * BN], [BM, BN], [1, 0]), c,
             boundary_check=(0, 1))
    if SCOPES:
        pl.exit_scope("store")


import triton.profiler.language as pl  # noqa: E402


@pytest.mark.parametrize("M,N,K", [(128, 128, 256), (100, 70, 200)])
def test_kloop_accumulates(M, N, K):
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.empty(M, N)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    mm_kloop[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BM=64, BN=64, BK=32, MM=8, MK=8, MN=16,
                   SCOPES=False)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("M,N,K", [(128, 128, 256), (100, 70, 200)])
def test_kloop_accumulates_bf16_rounded_each_step(M, N, K):
    """bf16 a: smt.dot's result is bf16, so every K step's partial product is rounded
    to bf16 before `acc +=` adds it (on AVX512-BF16 hosts the rounding and the add are
    fused into the pair-dot micro-kernel's write-back)."""
    a, b = torch.randn(M, K).bfloat16(), torch.randn(K, N).bfloat16()
    c = torch.empty(M, N)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    mm_kloop[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BM=64, BN=64, BK=32, MM=16, MK=8, MN=32,
                   SCOPES=False)
    ref = torch.zeros(M, N)
    for k in range(0, K, 32):
        ref += (a[:, k:k + 32].float() @ b[k:k + 32].float()).bfloat16().float()
    torch.testing.assert_close(c, ref, rtol=1e-2, atol=0.1)
    unrounded = a.float() @ b.float()
    assert (c - ref).abs().max() < (unrounded - ref).abs().max()  # the rounding is there


def test_kloop_accumulator_is_carried_unpacked():
    """The packed accumulator of the K loop travels as a 2-D tile (ir_layout.c) and the
    add folds into the dot's accumulator: no pack or unpack copies remain in the loop."""
    M = N = K = 128
    a, b, c = torch.randn(M, K), torch.randn(K, N), torch.empty(M, N)
    k = mm_kloop.warmup(a, b, c, M, N, K, K, N, N, BM=64, BN=64, BK=32, MM=8, MK=8, MN=16, SCOPES=False,
                        grid=(2, 2))
    ttir = k.asm["ttir"]
    loop = ttir[ttir.index("scf.for"):]
    loop = loop[:loop.index("scf.yield")]
    assert "tt.dot" in loop and "tensor<64x64xf32>" in loop
    assert "tt.trans" not in loop and "tensor<8x4x8x16xf32>" not in loop, loop


def test_kloop_with_proton_scopes(tmp_path):
    from triton.backends.spine_triton.proton import profiler
    from triton.profiler.flags import flags
    pl.enable_semantic("triton")
    flags.instrumentation_on = True
    try:
        M = N = K = 128
        a, b, c = torch.randn(M, K), torch.randn(K, N), torch.empty(M, N)
        out = tmp_path / "smt.hatchet"
        with profiler.profile(output_path=str(out)):
            mm_kloop[(2, 2)](a, b, c, M, N, K, K, N, N, BM=64, BN=64, BK=32, MM=8, MK=8, MN=16, SCOPES=True)
        torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)
        import json
        tree = json.loads(out.read_text())[0]
        names = set()

        def walk(n):
            names.add(n["frame"]["name"])
            for ch in n.get("children", []):
                walk(ch)
        walk(tree)
        assert {"load", "dot", "store"} <= names, names
    finally:
        flags.instrumentation_on = False
        pl.disable_semantic("triton")


# ---- view: pack, unpack, repack, no-op -------------------------------------------------------------

@triton.jit
def view_kernel(x_ptr, p_ptr, u_ptr, r_ptr, R: tl.constexpr, C: tl.constexpr, O0: tl.constexpr, O1: tl.constexpr,
                S0: tl.constexpr, S1: tl.constexpr, P0: tl.constexpr, P1: tl.constexpr, Q0: tl.constexpr,
                Q1: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + r * C + c)
    p = smt.view(x, (O0, O1), (S0, S1), (P0, P1))
    n0: tl.constexpr = (S0 + P0 - 1) // P0
    n1: tl.constexpr = (S1 + P1 - 1) // P1
    i0 = tl.arange(0, n0)[:, None, None, None]
    i1 = tl.arange(0, n1)[None, :, None, None]
    i2 = tl.arange(0, P0)[None, None, :, None]
    i3 = tl.arange(0, P1)[None, None, None, :]
    tl.store(p_ptr + ((i0 * n1 + i1) * P0 + i2) * P1 + i3, p)
    u = smt.view(p, (0, 0), (S0, S1), (1, 1))
    su0 = tl.arange(0, S0)[:, None]
    su1 = tl.arange(0, S1)[None, :]
    tl.store(u_ptr + su0 * S1 + su1, u)
    q = smt.view(p, (0, 0), (S0, S1), (Q0, Q1))
    m0: tl.constexpr = (S0 + Q0 - 1) // Q0
    m1: tl.constexpr = (S1 + Q1 - 1) // Q1
    j0 = tl.arange(0, m0)[:, None, None, None]
    j1 = tl.arange(0, m1)[None, :, None, None]
    j2 = tl.arange(0, Q0)[None, None, :, None]
    j3 = tl.arange(0, Q1)[None, None, None, :]
    tl.store(r_ptr + ((j0 * m1 + j1) * Q0 + j2) * Q1 + j3, q)


@pytest.mark.parametrize("R,C,O,S,P,Q", [
    (16, 32, (0, 0), (16, 32), (8, 16), (4, 8)),     # exact: reshape + permute
    (16, 32, (0, 0), (16, 32), (4, 32), (16, 8)),
    (16, 32, (4, 8), (8, 16), (4, 8), (8, 16)),      # a window at an offset
    (16, 16, (8, 0), (16, 16), (8, 8), (16, 4)),     # the window leaves the tile: zero rows
])
def test_view_pack_unpack_repack(R, C, O, S, P, Q):
    x = torch.randn(R, C)
    win = torch.zeros(*S)
    part = x[O[0]:O[0] + S[0], O[1]:O[1] + S[1]]
    win[:part.shape[0], :part.shape[1]] = part
    pref = packed_ref(win, *P)
    qref = packed_ref(win, *Q)
    p = torch.empty(pref.numel())
    u = torch.empty(S[0] * S[1])
    r = torch.empty(qref.numel())
    view_kernel[(1,)](x, p, u, r, R=R, C=C, O0=O[0], O1=O[1], S0=S[0], S1=S[1], P0=P[0], P1=P[1], Q0=Q[0], Q1=Q[1])
    assert torch.equal(p.view(pref.shape), pref)
    assert torch.equal(u.view(*S), win)
    assert torch.equal(r.view(qref.shape), qref)


@triton.jit
def same_tile_kernel(x_ptr, o_ptr, B: tl.constexpr):
    r = tl.arange(0, B)[:, None]
    c = tl.arange(0, B)[None, :]
    p = smt.view(tl.load(x_ptr + r * B + c), (0, 0), (B, B), (8, 8))
    q = smt.view(p, (0, 0), (B, B), (8, 8))          # the same tile at zero offsets: p itself
    u = smt.view(q * 2.0, (0, 0), (B, B), (1, 1))
    tl.store(o_ptr + r * B + c, u)


def test_view_same_tile_is_a_no_op():
    x = torch.randn(32, 32)
    o = torch.empty(32, 32)
    k = same_tile_kernel.warmup(x, o, B=32, grid=(1,))
    same_tile_kernel[(1,)](x, o, B=32)
    assert torch.equal(o, 2 * x)
    assert "tt.trans" not in k.asm["ttir"]  # pack, no-op and unpack fold away


# ---- packed tiles are ordinary tiles ----------------------------------------------------------------

@triton.jit
def packed_ops_kernel(x_ptr, o_ptr, s_ptr, h_ptr, B: tl.constexpr):
    r = tl.arange(0, B)[:, None]
    c = tl.arange(0, B)[None, :]
    p = smt.view(tl.load(x_ptr + r * B + c), (0, 0), (B, B), (8, 4))
    e = tl.where(p > 0, tl.exp(p), p * 0.5).to(tl.float16).to(tl.float32)
    u = smt.view(e, (0, 0), (B, B), (1, 1))
    tl.store(o_ptr + r * B + c, u)
    s = tl.sum(tl.sum(tl.reshape(p, (B // 8 * B // 4, 32)), axis=1), axis=0)
    tl.store(s_ptr, s)
    t = tl.permute(p, (1, 0, 3, 2))                    # the packed transpose
    tl.store(h_ptr + r * B + c, smt.view(t, (0, 0), (B, B), (1, 1)))


def test_packed_tiles_are_ordinary_tiles():
    B = 32
    x = torch.randn(B, B)
    o, s, h = torch.empty(B, B), torch.empty(1), torch.empty(B, B)
    packed_ops_kernel[(1,)](x, o, s, h, B=B)
    torch.testing.assert_close(o, torch.where(x > 0, torch.exp(x), x * 0.5).half().float())
    torch.testing.assert_close(s, x.sum().reshape(1), rtol=1e-5, atol=1e-4)
    assert torch.equal(h, x.t())


@triton.jit
def packed_bp_kernel(w_ptr, o_ptr, KB: tl.constexpr, NB: tl.constexpr, kb: tl.constexpr, nb: tl.constexpr):
    """4-D block pointers over a prepacked buffer: load, scale, store."""
    src = tl.make_block_ptr(w_ptr, [KB, NB, kb, nb], [NB * kb * nb, kb * nb, nb, 1], [0, 0, 0, 0],
                            [KB, NB, kb, nb], [3, 2, 1, 0])
    dst = tl.make_block_ptr(o_ptr, [KB, NB, kb, nb], [NB * kb * nb, kb * nb, nb, 1], [0, 0, 0, 0],
                            [KB, NB, kb, nb], [3, 2, 1, 0])
    tl.store(dst, tl.load(src, boundary_check=(0, 1, 2, 3)) * 3.0, boundary_check=(0, 1, 2, 3))


def test_four_d_block_pointers():
    w = torch.randn(4, 2, 8, 16)
    o = torch.empty_like(w)
    packed_bp_kernel[(1,)](w, o, KB=4, NB=2, kb=8, nb=16)
    assert torch.equal(o, 3 * w)


# ---- views of block pointers -----------------------------------------------------------------------

@triton.jit
def bp_view_kernel(x_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, P0: tl.constexpr, P1: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, [M, N], [N, 1], [0, 0], [BM, BN], [1, 0])
    dst = tl.make_block_ptr(o_ptr, [M, N], [N, 1], [0, 0], [BM, BN], [1, 0])
    pv = smt.view(src, (BM // 2, 0), (BM // 2, BN), (P0, P1))   # a packed view of the lower half
    p = tl.load(pv)
    ov = smt.view(dst, (0, 0), (BM // 2, BN), (P0, P1))
    tl.store(ov, p + 1.0)


def test_packed_view_of_a_block_pointer():
    M, N = 16, 32
    x = torch.randn(M, N)
    o = torch.zeros(M, N)
    bp_view_kernel[(1,)](x, o, M, N, BM=16, BN=32, P0=4, P1=8)
    ref = torch.zeros(M, N)
    ref[:8] = x[8:] + 1.0
    assert torch.equal(o, ref)


# ---- dot: both B layouts, in-place accumulation, dtypes -----------------------------------------------

@triton.jit
def dot_layouts_kernel(a_ptr, b_ptr, o1_ptr, o2_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                       mb: tl.constexpr, kb: tl.constexpr, nb: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rk = tl.arange(0, K)
    rn = tl.arange(0, N)[None, :]
    a = smt.view(tl.load(a_ptr + rm * K + rk[None, :]), (0, 0), (M, K), (mb, kb))
    bkn = tl.load(b_ptr + rk[:, None] * N + rn)
    b1 = smt.view(bkn, (0, 0), (K, N), (kb, nb))                      # [KB, NB, kb, nb]
    b2 = smt.view(tl.trans(bkn), (0, 0), (N, K), (nb, kb))            # [NB, KB, nb, kb]
    tl.store(o1_ptr + rm * N + rn, smt.view(smt.dot(a, b1), (0, 0), (M, N), (1, 1)))
    tl.store(o2_ptr + rm * N + rn, smt.view(smt.dot(a, b2), (0, 0), (M, N), (1, 1)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_dot_both_b_layouts(dtype):
    # kb != nb, so that the layouts cannot be mistaken for each other (with a square
    # tiling both shape tests hold and spine-triton takes [KB, NB, kb, nb])
    M, N, K = 32, 32, 64
    a, b = torch.randn(M, K).to(dtype), torch.randn(K, N).to(dtype)
    o1, o2 = torch.empty(M, N, dtype=dtype), torch.empty(M, N, dtype=dtype)
    dot_layouts_kernel[(1,)](a, b, o1, o2, M=M, N=N, K=K, mb=8, kb=16, nb=8)
    ref = (a.float() @ b.float()).to(dtype)
    tol = 1e-4 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(o1, ref, rtol=tol, atol=tol)
    torch.testing.assert_close(o2, ref, rtol=tol, atol=tol)


@triton.jit
def dot_int8_kernel(a_ptr, b_ptr, o_ptr, B: tl.constexpr):
    r = tl.arange(0, B)[:, None]
    c = tl.arange(0, B)[None, :]
    a = smt.view(tl.load(a_ptr + r * B + c), (0, 0), (B, B), (8, 8))
    b = smt.view(tl.load(b_ptr + r * B + c), (0, 0), (B, B), (8, 8))
    tl.store(o_ptr + r * B + c, smt.view(smt.dot(a, b), (0, 0), (B, B), (1, 1)))


def test_dot_int8_keeps_a_dtype():
    """spine-triton: the result has a's dtype (int8 products wrap)."""
    a = torch.randint(-3, 4, (16, 16), dtype=torch.int8)
    b = torch.randint(-3, 4, (16, 16), dtype=torch.int8)
    o = torch.empty(16, 16, dtype=torch.int8)
    dot_int8_kernel[(1,)](a, b, o, B=16)
    assert torch.equal(o, (a.int() @ b.int()).to(torch.int8))


# ---- parallel, alloc, alloc_copies --------------------------------------------------------------------

@triton.jit
def parallel_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    for s in smt.parallel(0, n // BLOCK):
        offs = s * BLOCK + tl.arange(0, BLOCK)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) * 2.0)


def test_parallel_loop():
    x = torch.randn(1024)
    o = torch.empty(1024)
    parallel_kernel[(1,)](x, o, 1024, BLOCK=128)
    assert torch.equal(o, 2 * x)


def test_parallel_loop_rejects_carried_values():
    @triton.jit
    def carried(x_ptr, o_ptr, n):
        acc = 0.0
        for s in smt.parallel(0, n):
            acc += tl.load(x_ptr + s)
        tl.store(o_ptr, acc)

    with pytest.raises(triton.CompilationError, match="smt.parallel: iterations must be independent.*acc"):
        carried[(1,)](torch.randn(4), torch.empty(1), 4)


@triton.jit
def alloc_kernel(x_ptr, o_ptr, B: tl.constexpr):
    r = tl.arange(0, B)[:, None]
    c = tl.arange(0, B)[None, :]
    buf = smt.alloc((B, B), type=tl.float32)
    tl.store(buf, tl.load(x_ptr + r * B + c) + 1.0)
    copies = smt.alloc_copies((B, B), dtype=tl.float32, copies=2)
    tl.store(copies[1], tl.load(buf) * 2.0)
    tl.store(copies[0], tl.load(buf))
    pv = smt.view(copies[1], (0, 0), (B, B), (8, 8))
    tl.store(o_ptr + r * B + c, smt.view(tl.load(pv), (0, 0), (B, B), (1, 1)) - tl.load(copies[0]))


def test_alloc_and_alloc_copies():
    x = torch.randn(16, 16)
    o = torch.empty(16, 16)
    alloc_kernel[(2,)](x, o, B=16)
    torch.testing.assert_close(o, x + 1.0)


@triton.jit
def descriptor_dest_kernel(x_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, [M, N], [N, 1], [0, 0], [BM, BN], [1, 0])
    buf = smt.alloc((BM, BN), type=tl.float32)
    r = smt.descriptor_load(src, (BM, 0), destination=buf)    # rows BM..2BM-1, zero past M
    dst = tl.make_block_ptr(o_ptr, [BM, BN], [BN, 1], [0, 0], [BM, BN], [1, 0])
    tl.store(dst, tl.load(buf))



def test_descriptor_load_with_destination():
    x = torch.randn(24, 16)
    o = torch.empty(16, 16)
    descriptor_dest_kernel[(1,)](x, o, 24, 16, BM=16, BN=16)
    ref = torch.zeros(16, 16)
    ref[:8] = x[16:]
    assert torch.equal(o, ref)


# ---- hints, barriers and errors ------------------------------------------------------------------------

@triton.jit
def hints_kernel(x_ptr, o_ptr):
    v = tl.load(x_ptr + tl.arange(0, 16))
    smt.compile_hint(v, "vectorize", 4)
    bar = smt.mbarrier(0, 1)
    smt.barrier_arrive(bar)
    smt.barrier_wait(bar, 1)
    tl.store(o_ptr + tl.arange(0, 16), v)


def test_hints_and_barriers_are_accepted():
    x = torch.randn(16)
    o = torch.empty(16)
    hints_kernel[(1,)](x, o)
    assert torch.equal(o, x)


def _compile_error(body_fn, *args):
    with pytest.raises(triton.CompilationError) as e:
        body_fn[(1,)](*args)
    return str(e.value)


def test_errors():
    @triton.jit
    def bad_dot(x_ptr):
        r = tl.arange(0, 16)[:, None]
        c = tl.arange(0, 16)[None, :]
        a = smt.view(tl.load(x_ptr + r * 16 + c), (0, 0), (16, 16), (8, 8))
        b = smt.view(tl.load(x_ptr + r * 16 + c), (0, 0), (16, 16), (4, 16))
        smt.dot(a, b)

    assert "Unsupported packing shapes for smt.dot" in _compile_error(bad_dot, torch.randn(256))

    @triton.jit
    def bad_view(x_ptr):
        smt.view(tl.load(x_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]), (0, 0), (16, 16),
                 (8,))

    assert "must have the same length" in _compile_error(bad_view, torch.randn(256))

    @triton.jit
    def bad_load(x_ptr):
        smt.descriptor_load(x_ptr, (0,))

    assert "base must be a block pointer" in _compile_error(bad_load, torch.randn(4))

    @triton.jit
    def bad_barrier(x_ptr):
        smt.global_mbarrier(0)

    assert "global_mbarrier is not implemented" in _compile_error(bad_barrier, torch.randn(4))


def test_arch_id():
    d = CPUDriver()
    assert d.current_arch_id.startswith("0x")
    assert d.cpu_arch.startswith("spacemit-")


def test_arch_id_from_cpuinfo(monkeypatch):
    from triton.backends.spine_triton import driver as drv
    # the lines a K1 and a K3 kernel print, and a host that is not SpacemiT
    assert drv._cpuinfo_arch_id("processor\t: 0\nisa\t\t: rv64imafdcv\nuarch\t\t: spacemit,x60\n") == "0xA03C"
    assert drv._cpuinfo_arch_id("model name\t: Spacemit(R) X100\n") == "0xA064"
    assert drv._cpuinfo_arch_id("model name\t: AMD EPYC 9654 96-Core Processor\n") is None
    assert drv._cpuinfo_arch_id("uarch\t: thead,c910\n") is None
    monkeypatch.setenv("SPACEMIT_EP_QEMU_SET_CORE_ARCH", "0xA064")
    d = CPUDriver()
    assert d.current_arch_id == "0xA064" and d.cpu_arch == "spacemit-a100"
