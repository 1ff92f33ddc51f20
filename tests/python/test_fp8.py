"""fp8 dtypes (tl.float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16) and tl.dot_scaled.

References: torch's float8 conversions (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
float8_e5m2fnuz) and, for fp8e4b15 (which torch lacks) and round-toward-zero, an exact
search over every code of the format written from its definition here. dot_scaled is
checked against a torch matmul of operands decoded and scaled in the test.
"""
import math

import pytest
import torch

import triton
import triton.language as tl

# tl dtype, torch dtype (None: no torch type), exponent bits, bias, special-value convention
FORMATS = [
    (tl.float8e4nv, torch.float8_e4m3fn, 4, 7, "fn"),
    (tl.float8e5, torch.float8_e5m2, 5, 15, "ieee"),
    (tl.float8e4b15, None, 4, 15, "fn"),
    (tl.float8e4b8, torch.float8_e4m3fnuz, 4, 8, "fnuz"),
    (tl.float8e5b16, torch.float8_e5m2fnuz, 5, 16, "fnuz"),
]
IDS = [f[0].name for f in FORMATS]


def ref_decode(code, ebits, bias, conv):
    """The value of an 8-bit code, from the format's definition."""
    mbits = 7 - ebits
    s, e, m = code >> 7, (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if conv == "fnuz" and code == 0x80:
        return math.nan
    if conv == "fn" and (code & 0x7F) == 0x7F:
        return math.nan
    if conv == "ieee" and e == (1 << ebits) - 1:
        return math.nan if m else (-math.inf if s else math.inf)
    v = math.ldexp(m, 1 - bias - mbits) if e == 0 else math.ldexp((1 << mbits) | m, e - bias - mbits)
    return -v if s else v


def ref_encode(x, ebits, bias, conv, rtz=False):
    """Nearest code to x (ties to the even code), or the one toward zero; out of range
    and specials as documented (docs/compiler.md, fp8)."""
    finite = [c for c in range(128) if math.isfinite(ref_decode(c, ebits, bias, conv))]
    top = max(finite)
    nan = 0x80 if conv == "fnuz" else 0x7F
    if math.isnan(x):
        return nan | (0x80 if math.copysign(1, x) < 0 and conv != "fnuz" else 0)
    sign = 0x80 if math.copysign(1, x) < 0 else 0
    a = abs(x)
    vmax = ref_decode(top, ebits, bias, conv)
    if math.isinf(a):
        if conv == "ieee":
            return sign | (((1 << ebits) - 1) << (7 - ebits))
        return 0x80 if conv == "fnuz" else sign | top
    if rtz:
        c = max(c for c in finite if ref_decode(c, ebits, bias, conv) <= a)
    else:
        c = min(finite, key=lambda c: (abs(ref_decode(c, ebits, bias, conv) - a), c & 1))
        if a > vmax:
            step = vmax - ref_decode(top - 1, ebits, bias, conv)
            if a >= vmax + step / 2 and not (a == vmax + step / 2 and (top & 1) == 0):
                c = None  # rounds past the largest finite value
    if c is None:
        if conv == "ieee":
            return sign | (((1 << ebits) - 1) << (7 - ebits))
        return 0x80 if conv == "fnuz" else sign | top
    if c == 0 and conv == "fnuz":
        return 0
    return sign | c


@triton.jit
def _convert(X, Y, N: tl.constexpr, RTZ: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    if RTZ:
        y = x.to(Y.dtype.element_ty, fp_downcast_rounding="rtz")
    else:
        y = x.to(Y.dtype.element_ty)
    tl.store(Y + o, y)


def _as(t, fmt):
    """t viewed as fp8 format fmt for a kernel (torch dtype, or reinterpret)."""
    return t.view(fmt[1]) if fmt[1] is not None else triton.reinterpret(t, fmt[0])


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
@pytest.mark.parametrize("to", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_decode_every_code(fmt, to):
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    out = torch.empty(256, dtype=to)
    _convert[(1,)](_as(codes, fmt), out, 256, False)
    want = torch.tensor([ref_decode(c, fmt[2], fmt[3], fmt[4]) for c in range(256)], dtype=torch.float64)
    if fmt[1] is not None:  # the definition agrees with torch
        tv = codes.view(fmt[1]).to(torch.float64)
        assert torch.equal(tv.isnan(), want.isnan()) and torch.equal(tv.nan_to_num(), want.nan_to_num())
    got = out.to(torch.float64)
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(got.nan_to_num(), want.nan_to_num())
    assert torch.equal(torch.signbit(got[~got.isnan()]), torch.signbit(want[~want.isnan()]))


def _encode_inputs(fmt):
    """Every code's value, the midpoints between neighbours (ties), just above and below
    them, values past the range, subnormals, zeros, NaN and infinities, random values."""
    vals = sorted({ref_decode(c, fmt[2], fmt[3], fmt[4]) for c in range(128)} - {math.nan}, key=float)
    vals = [v for v in vals if math.isfinite(v)]
    mids = [(a + b) / 2 for a, b in zip(vals, vals[1:])]
    top, tiny = vals[-1], vals[1]
    step = top - vals[-2]
    extra = [top + step / 2, top + step / 4, top + step, 2 * top, 1e30, tiny / 2, tiny / 4, tiny * 0.75, 1e-30,
             0.0, -0.0, math.inf, -math.inf, math.nan]
    near = [math.nextafter(m, math.inf) for m in mids] + [math.nextafter(m, -math.inf) for m in mids]
    g = torch.Generator().manual_seed(1)
    rnd = (torch.randn(512, generator=g, dtype=torch.float64) * top / 3).tolist()
    xs = vals + mids + near + extra + rnd
    xs = xs + [-v for v in xs]
    n = triton.next_power_of_2(len(xs))
    return torch.tensor(xs + [0.0] * (n - len(xs)), dtype=torch.float64)


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
@pytest.mark.parametrize("src", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_encode_round_to_nearest_even(fmt, src):
    """torch is the reference from fp32/fp16/bf16. From fp64 torch rounds twice (to fp32
    first: a value just above a tie becomes the tie and goes to even); Tritium rounds
    once, checked against the definition-based search, which agrees with torch on
    every input that fp32 holds exactly."""
    x = _encode_inputs(fmt).to(src)
    out = torch.empty(x.numel(), dtype=torch.uint8)
    _convert[(1,)](x, _as(out, fmt), x.numel(), False)
    mine = torch.tensor([ref_encode(v, fmt[2], fmt[3], fmt[4]) for v in x.tolist()], dtype=torch.uint8)
    if fmt[1] is not None and src != torch.float64:
        want = x.to(fmt[1]).view(torch.uint8)
    else:
        want = mine
    bad = (out != want).nonzero().flatten()
    assert bad.numel() == 0, [(x[i].item(), hex(out[i].item()), hex(want[i].item())) for i in bad[:8]]
    if fmt[1] is not None:
        exact = x.to(torch.float32).to(src) == x
        tw = x.to(fmt[1]).view(torch.uint8)
        nan = tw.view(fmt[1]).to(torch.float32).isnan()
        assert torch.equal(mine[exact & ~nan], tw[exact & ~nan])
        assert mine[nan].view(fmt[1]).to(torch.float32).isnan().all()


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_encode_round_toward_zero(fmt):
    x = _encode_inputs(fmt).to(torch.float32)
    out = torch.empty(x.numel(), dtype=torch.uint8)
    _convert[(1,)](x, _as(out, fmt), x.numel(), True)
    want = torch.tensor([ref_encode(v, fmt[2], fmt[3], fmt[4], rtz=True) for v in x.tolist()], dtype=torch.uint8)
    bad = (out != want).nonzero().flatten()
    assert bad.numel() == 0, [(x[i].item(), hex(out[i].item()), hex(want[i].item())) for i in bad[:8]]


@triton.jit
def _copy_and_check(X, Y, N: tl.constexpr, DT: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    tl.static_assert(x.dtype == DT)
    tl.store(Y + o, tl.where(o % 2 == 0, x, -x))


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_fp8_kernel_arguments(fmt):
    """fp8 tensors (torch's dtypes, reinterpreted uint8) as arguments: loaded with their
    dtype, negated (exactly, a fnuz zero stays +0), stored bit for bit."""
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    out = torch.empty(256, dtype=torch.uint8)
    _copy_and_check[(1,)](_as(codes, fmt), _as(out, fmt), 256, fmt[0])
    for c in range(256):
        v = ref_decode(c, fmt[2], fmt[3], fmt[4])
        if c % 2 == 0 or math.isnan(v):
            want = c if c % 2 == 0 else None
        else:
            want = ref_encode(-v, fmt[2], fmt[3], fmt[4])
        if want is None:
            assert math.isnan(ref_decode(out[c].item(), fmt[2], fmt[3], fmt[4]))
        else:
            assert out[c].item() == want, (c, hex(out[c].item()), hex(want))


@triton.jit
def _arith(X, Y, Z, C, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    s = x + y
    tl.static_assert(s.dtype == X.dtype.element_ty)
    tl.store(Z + o, s * 2)
    tl.store(C + o, (x < y).to(tl.int8) + (x.to(tl.int32) == 3).to(tl.int8) * 2)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f[1] is not None], ids=[f[0].name for f in FORMATS if f[1]])
def test_fp8_arithmetic_and_int_casts(fmt):
    g = torch.Generator().manual_seed(2)
    x = (torch.randn(128, generator=g) * 4).to(fmt[1])
    y = (torch.randn(128, generator=g) * 4).to(fmt[1])
    x[:4] = torch.tensor([3.0, 3.5, -3.0, 0.0]).to(fmt[1])
    z = torch.empty(128, dtype=fmt[1])
    c = torch.empty(128, dtype=torch.int8)
    _arith[(1,)](x, y, z, c, 128)
    s = (x.float() + y.float()).to(fmt[1])
    assert torch.equal(z.view(torch.uint8), (s.float() * 2).to(fmt[1]).view(torch.uint8))
    want = (x.float() < y.float()).to(torch.int8) + (x.float().to(torch.int32) == 3).to(torch.int8) * 2
    assert torch.equal(c, want)


@triton.jit
def _dot(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, OUT: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(B + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    c = tl.dot(a, b, out_dtype=OUT)
    tl.store(C + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


@pytest.mark.parametrize("ta, tb", [(torch.float8_e5m2, torch.float8_e5m2), (torch.float8_e4m3fn, torch.float8_e4m3fn),
                                    (torch.float8_e4m3fn, torch.float8_e5m2),
                                    (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)])
@pytest.mark.parametrize("out", [tl.float32, tl.float16])
def test_dot_fp8(ta, tb, out):
    M, N, K = 32, 16, 64
    g = torch.Generator().manual_seed(3)
    a = torch.randn(M, K, generator=g).to(ta)
    b = torch.randn(K, N, generator=g).to(tb)
    c = torch.empty(M, N, dtype=torch.float32 if out == tl.float32 else torch.float16)
    _dot[(1,)](a, b, c, M, N, K, out)
    ref = a.double() @ b.double()  # fp8 products are exact; fp32 sums round a little
    if out == tl.float32:
        torch.testing.assert_close(c.double(), ref, rtol=1e-6, atol=1e-5)
    else:  # accumulated in fp32, rounded once
        torch.testing.assert_close(c, ref.float().half(), rtol=1e-3, atol=1e-3)


def test_fp8_errors():
    @triton.jit
    def atomic(X):
        tl.atomic_add(X, tl.load(X))

    with pytest.raises(triton.TritonError, match="does not support fp8e4nv"):
        atomic[(1,)](torch.zeros(1, dtype=torch.float8_e4m3fn))

    @triton.jit
    def bits(X):
        tl.store(X, tl.load(X) & 1)

    with pytest.raises(triton.TritonError, match="invalid operands"):
        bits[(1,)](torch.zeros(1, dtype=torch.float8_e5m2))


# ---- dot_scaled ------------------------------------------------------------------------------

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def ref_operand(x, fmt, k_pack, is_rhs):
    """fp64 values of a dot_scaled operand ([M, K] for lhs, [K, N] for rhs)."""
    if fmt == "e2m1":
        lut = torch.tensor(E2M1 + [-v for v in E2M1], dtype=torch.float64)
        lo, hi = lut[(x & 15).long()], lut[(x >> 4).long()]
        axis = (0 if is_rhs else 1) if k_pack else (1 if is_rhs else 0)
        v = torch.stack([lo, hi], dim=axis + 1)
        shape = list(x.shape)
        shape[axis] *= 2
        return v.reshape(shape)
    t = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "bf16": torch.bfloat16, "fp16": torch.float16}[fmt]
    return x.view(t).to(torch.float64)


def ref_scale(s):
    v = torch.pow(2.0, s.to(torch.float64) - 127)
    return torch.where(s == 255, torch.nan, v).repeat_interleave(32, dim=1)


@triton.jit
def _dot_scaled(A, SA, B, SB, C, ACC, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, FA: tl.constexpr,
                FB: tl.constexpr, AM: tl.constexpr, AK: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr,
                KPA: tl.constexpr, KPB: tl.constexpr, HAS_ACC: tl.constexpr):
    a = tl.load(A + tl.arange(0, AM)[:, None] * AK + tl.arange(0, AK)[None, :])
    b = tl.load(B + tl.arange(0, BK)[:, None] * BN + tl.arange(0, BN)[None, :])
    sa = SA
    sb = SB
    if SA is not None:
        sa = tl.load(SA + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    if SB is not None:
        sb = tl.load(SB + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    acc = None
    if HAS_ACC:
        acc = tl.load(ACC + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    c = tl.dot_scaled(a, sa, FA, b, sb, FB, acc=acc, lhs_k_pack=KPA, rhs_k_pack=KPB)
    tl.store(C + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


def _make(fmt, shape, g):
    if fmt in ("bf16", "fp16"):
        dt = torch.bfloat16 if fmt == "bf16" else torch.float16
        return torch.randn(shape, generator=g).to(dt)
    x = torch.randint(0, 256, shape, generator=g, dtype=torch.int32).to(torch.uint8)
    if fmt == "e4m3":
        x = torch.where((x & 0x7F) == 0x7F, x & 0xF0, x)  # no NaN inputs
    if fmt == "e5m2":
        x = torch.where((x & 0x7C) == 0x7C, x & 0x83, x)  # no inf/NaN inputs
    return x


FMTS = ["e2m1", "e4m3", "e5m2", "bf16", "fp16"]


@pytest.mark.parametrize("fa", FMTS)
@pytest.mark.parametrize("fb", FMTS)
def test_dot_scaled_format_pairs(fa, fb):
    _check_dot_scaled(fa, fb, 32, 16, 64, True, True, True, True, False, seed=FMTS.index(fa) * 5 + FMTS.index(fb))


@pytest.mark.parametrize("M, N, K, scale_a, scale_b, kpa, kpb, acc", [
    (16, 32, 32, True, False, True, True, False),
    (64, 16, 128, False, True, True, True, True),
    (32, 32, 64, False, False, False, True, False),
    (16, 64, 64, True, True, True, False, True),
    (32, 16, 64, True, True, False, False, False),
])
@pytest.mark.parametrize("fa, fb", [("e2m1", "e2m1"), ("e2m1", "e4m3"), ("e5m2", "e2m1")])
def test_dot_scaled_shapes_scales_packing(M, N, K, scale_a, scale_b, kpa, kpb, acc, fa, fb):
    if (not kpa and fa != "e2m1") or (not kpb and fb != "e2m1"):
        pytest.skip("only e2m1 packs along M/N")
    _check_dot_scaled(fa, fb, M, N, K, scale_a, scale_b, kpa, kpb, acc, seed=M + N + K)


def _check_dot_scaled(fa, fb, M, N, K, scale_a, scale_b, kpa, kpb, has_acc, seed):
    g = torch.Generator().manual_seed(seed)
    pa, pb = 2 if fa == "e2m1" else 1, 2 if fb == "e2m1" else 1
    ashape = (M, K // pa) if kpa else (M // pa, K)
    bshape = (K // pb, N) if kpb else (K, N // pb)
    a, b = _make(fa, ashape, g), _make(fb, bshape, g)
    sa = torch.randint(118, 136, (M, K // 32), generator=g, dtype=torch.int32).to(torch.uint8) if scale_a else None
    sb = torch.randint(118, 136, (N, K // 32), generator=g, dtype=torch.int32).to(torch.uint8) if scale_b else None
    acc = torch.randn(M, N, generator=g) if has_acc else torch.empty(1)
    c = torch.empty(M, N)
    _dot_scaled[(1,)](a, sa, b, sb, c, acc, M, N, K, fa, fb, ashape[0], ashape[1], bshape[0], bshape[1], kpa, kpb,
                      has_acc)
    ra, rb = ref_operand(a, fa, kpa, False), ref_operand(b, fb, kpb, True)
    if sa is not None:
        ra = ra * ref_scale(sa)
    if sb is not None:
        rb = rb * ref_scale(sb).T
    ref = ra @ rb + (acc.double() if has_acc else 0)
    torch.testing.assert_close(c.double(), ref, rtol=1e-5, atol=1e-5 * ref.abs().max().item())


def test_dot_scaled_nan_scale_and_errors():
    M, N, K = 16, 16, 64
    a = torch.full((M, K), 0x38, dtype=torch.uint8)  # e4m3 1.0
    b = torch.full((K, N), 0x3C, dtype=torch.uint8)  # e5m2 1.0
    sa = torch.full((M, K // 32), 127, dtype=torch.uint8)
    sa[3, 1] = 255  # NaN scale: row 3 is NaN
    sa[5, :] = 0  # 2^-127 (e8m0's smallest value, not zero)
    c = torch.empty(M, N)
    _dot_scaled[(1,)](a, sa, b, None, c, torch.empty(1), M, N, K, "e4m3", "e5m2", M, K, K, N, True, True, False)
    assert c[3].isnan().all() and not c[torch.arange(M) != 3].isnan().any()
    assert torch.equal(c[0], torch.full((N,), 64.0))
    assert torch.equal(c[5], torch.full((N,), 64 * 2.0**-127))

    with pytest.raises(triton.TritonError, match="format must be one of"):
        _dot_scaled[(1,)](a, None, b, None, c, c, M, N, K, "e3m4", "e5m2", M, K, K, N, True, True, False)
    with pytest.raises(triton.TritonError, match="only mxfp4"):
        _dot_scaled[(1,)](a, None, b, None, c, c, M, N, K, "e4m3", "e5m2", M, K, K, N, False, True, False)
    with pytest.raises(triton.TritonError, match="lhs_scale must be a tensor of shape"):
        _dot_scaled[(1,)](a, sa, b, None, c, c, M, N, 32, "e4m3", "e5m2", M, K, K, N, True, True, False)
