"""Every dtype through memory and conversions: loads/stores with mask and `other`,
tl.full / tl.zeros, torch tensors and numpy arrays as pointer arguments, `.to()`
between every pair of dtypes, bitcasts, fp_downcast_rounding, and how Python scalar
arguments are typed (int -> i32 or i64, float -> fp32, bool -> i1).

One kernel per source dtype writes every conversion into its own output, and the
results are memoised, so the 169 (src, dst) cases cost 13 compiles.
"""
import functools

import numpy as np
import pytest
import torch

import triton
import triton.language as tl

from tritium_testutil import (SIGNED_OF, TL, bits_equal as _bits_equal, dt_name as _name, gen as _gen,
                              unsigned_values)

ALL = list(TL)  # bool, int8..int64, uint8..uint64, fp16, bf16, fp32, fp64
BLOCK = 64
N = 37  # < BLOCK: one partial program


def _is_unsigned(dt):
    return dt in (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def _values(dt, n, g):
    """Small values of either sign (floats with fractions, exactly representable in fp32);
    unsigned types over their whole range, the upper half included (unsigned_values)."""
    if dt == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dt.is_floating_point:
        return (torch.rand(n, generator=g, dtype=torch.float32) * 200 - 100).to(dt)
    if _is_unsigned(dt):
        return unsigned_values(dt, n, g)
    return torch.randint(-100, 100, (n,), generator=g, dtype=torch.int64).to(dt)


# ---- load / store with mask and other, full and zeros ----------------------------------------

OTHER = {torch.bool: True}
FILL = {torch.bool: True}
for _dt in ALL:
    if _dt != torch.bool:
        OTHER[_dt] = -2.5 if _dt.is_floating_point else (5 if _is_unsigned(_dt) else -5)
        FILL[_dt] = 1.5 if _dt.is_floating_point else 7


@triton.jit
def _io_kernel(x_ptr, o_ptr, f_ptr, z_ptr, n, OTHER: tl.constexpr, FILL: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    # lanes >= n take `other`; the whole tile is stored
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m, other=OTHER))
    # masked store: lanes >= n of the second half stay untouched
    tl.store(o_ptr + BLOCK + offs, tl.load(x_ptr + offs, mask=m), mask=m)
    tl.store(f_ptr + offs, tl.full([BLOCK], FILL, dtype=f_ptr.dtype.element_ty))
    tl.store(z_ptr + offs, tl.zeros([BLOCK], dtype=z_ptr.dtype.element_ty))


def _sentinel(dt, n):
    if dt == torch.bool:
        return torch.ones(n, dtype=torch.bool)
    return torch.full((n,), 99, dtype=torch.int64).to(dt)


def check_load_store(dt_name):
    """Runs _io_kernel for one dtype and checks every region (callable from a child process)."""
    dt = getattr(torch, dt_name)
    x = _values(dt, N, _gen(1))
    o = torch.zeros(2 * BLOCK, dtype=torch.bool) if dt == torch.bool else _sentinel(dt, 2 * BLOCK)
    f = torch.zeros(BLOCK, dtype=dt)
    z = _sentinel(dt, BLOCK)
    sentinel = o.clone()
    _io_kernel[(1,)](x, o, f, z, N, OTHER=OTHER[dt], FILL=FILL[dt], BLOCK=BLOCK)
    other = torch.tensor([OTHER[dt]] * (BLOCK - N)).to(dt)
    assert _bits_equal(o[:N], x)
    assert _bits_equal(o[N:BLOCK], other)
    assert _bits_equal(o[BLOCK:BLOCK + N], x)
    assert _bits_equal(o[BLOCK + N:], sentinel[BLOCK + N:])
    assert _bits_equal(f, torch.tensor([FILL[dt]] * BLOCK).to(dt))
    assert _bits_equal(z, torch.zeros(BLOCK, dtype=dt))


@pytest.mark.parametrize("dt", ALL, ids=_name)
def test_load_store_mask_other_full_zeros(dt):
    check_load_store(_name(dt))


@triton.jit
def _tensor_other_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=offs.to(tl.float32) * 2))


def check_tensor_other():
    x = torch.randn(N)
    o = torch.zeros(BLOCK)
    _tensor_other_kernel[(1,)](x, o, N, BLOCK=BLOCK)
    assert torch.equal(o[:N], x)
    assert torch.equal(o[N:], torch.arange(N, BLOCK, dtype=torch.float32) * 2)


def test_load_with_tensor_other(run_in_child):
    run_in_child(__file__, "check_tensor_other")


@triton.jit
def _copy_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


NUMPY_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                np.float16, np.float32, np.float64]


@pytest.mark.parametrize("npdt", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_arrays_as_pointers(npdt):
    """A numpy array's dtype gives the pointer element type (bf16 has no numpy dtype)."""
    n = 300
    rng = np.random.default_rng(3)
    if npdt is np.bool_:
        x = rng.random(n) > 0.5
    elif np.issubdtype(npdt, np.floating):
        x = (rng.standard_normal(n) * 100).astype(npdt)
    else:
        info = np.iinfo(npdt)
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(npdt)
    o = np.zeros(n + 16, dtype=npdt)
    o[n:] = 1
    _copy_kernel[(triton.cdiv(n, 128),)](x, o, n, BLOCK=128)
    np.testing.assert_array_equal(o[:n], x)
    assert (o[n:] == 1).all()


@pytest.mark.parametrize("dt", [torch.float32, torch.int16, torch.float64])
def test_numpy_and_torch_mixed(dt):
    """A numpy input and a torch output in the same launch (same element type)."""
    x = _values(dt, 100, _gen(4))
    o = torch.zeros(100, dtype=dt)
    _copy_kernel[(1,)](x.numpy(), o, 100, BLOCK=128)
    assert torch.equal(o, x)


# ---- .to(dtype): every (src, dst) pair --------------------------------------------------------

@triton.jit
def _cast_all_kernel(x_ptr, o_b, o_i8, o_i16, o_i32, o_i64, o_u8, o_u16, o_u32, o_u64, o_f16, o_bf16, o_f32, o_f64,
                     n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(o_b + offs, x.to(tl.int1), mask=m)
    tl.store(o_i8 + offs, x.to(tl.int8), mask=m)
    tl.store(o_i16 + offs, x.to(tl.int16), mask=m)
    tl.store(o_i32 + offs, x.to(tl.int32), mask=m)
    tl.store(o_i64 + offs, x.to(tl.int64), mask=m)
    tl.store(o_u8 + offs, x.to(tl.uint8), mask=m)
    tl.store(o_u16 + offs, x.to(tl.uint16), mask=m)
    tl.store(o_u32 + offs, x.to(tl.uint32), mask=m)
    tl.store(o_u64 + offs, x.to(tl.uint64), mask=m)
    tl.store(o_f16 + offs, x.to(tl.float16), mask=m)
    tl.store(o_bf16 + offs, x.to(tl.bfloat16), mask=m)
    tl.store(o_f32 + offs, x.to(tl.float32), mask=m)
    tl.store(o_f64 + offs, x.to(tl.float64), mask=m)


CAST_N = 300


@functools.lru_cache(maxsize=None)
def _cast_results(src):
    x = _values(src, CAST_N, _gen(20 + ALL.index(src)))
    outs = [torch.zeros(CAST_N, dtype=d) for d in ALL]
    _cast_all_kernel[(triton.cdiv(CAST_N, 128),)](x, *outs, CAST_N, BLOCK=128)
    return x, dict(zip(ALL, outs))


def _cast_ref(x, dst):
    """Triton's conversion rules in torch terms. Returns (reference, lanes to compare)."""
    src = x.dtype
    every = torch.ones(x.numel(), dtype=torch.bool)
    if dst == torch.bool:
        return x != 0, every
    if src.is_floating_point and not dst.is_floating_point:
        # fp -> int truncates toward zero; negative -> unsigned is undefined (fptoui), skip it
        valid = x >= 0 if _is_unsigned(dst) else every
        t = torch.trunc(x.double()).to(torch.int64)
        return t, valid
    if not src.is_floating_point and not dst.is_floating_point:
        return x.to(torch.int64), every  # sign- or zero-extended by source signedness, wrapped by dst
    if not src.is_floating_point:
        # sitofp or uitofp by source signedness; torch converts uint64 as unsigned too
        return x.to(dst), every
    if src == torch.float64 and dst == torch.float16:
        # numpy rounds float64 -> float16 in one step (torch goes through float32)
        return torch.from_numpy(x.numpy().astype(np.float16)), every
    return x.to(dst), every


CAST_CASES = [pytest.param(s, d, id=f"{_name(s)}-to-{_name(d)}") for s in ALL for d in ALL]


@pytest.mark.parametrize("src,dst", CAST_CASES)
def test_cast(src, dst):
    x, outs = _cast_results(src)
    got = outs[dst]
    ref, valid = _cast_ref(x, dst)
    if dst.is_floating_point or dst == torch.bool:
        assert _bits_equal(got[valid], ref[valid].to(dst))
    else:
        sd = SIGNED_OF[dst]
        assert torch.equal(got.view(sd)[valid], ref.to(sd)[valid])


# ---- bitcast ---------------------------------------------------------------------------------

BITCAST_GROUPS = {  # source -> same-width destinations
    torch.uint8: [torch.int8],
    torch.float16: [torch.int16, torch.uint16, torch.bfloat16],
    torch.bfloat16: [torch.int16, torch.float16],
    torch.int32: [torch.float32, torch.uint32],
    torch.float32: [torch.int32, torch.uint32],
    torch.float64: [torch.int64, torch.uint64],
    torch.uint64: [torch.float64, torch.int64],
}


@triton.jit
def _bitcast_kernel(x_ptr, o0, o1, o2, n, D0: tl.constexpr, D1: tl.constexpr, D2: tl.constexpr,
                    BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(o0 + offs, x.to(D0, bitcast=True), mask=m)
    if D1 is not None:
        tl.store(o1 + offs, x.to(D1, bitcast=True), mask=m)
    if D2 is not None:
        tl.store(o2 + offs, x.to(D2, bitcast=True), mask=m)


@functools.lru_cache(maxsize=None)
def _bitcast_results(src):
    dsts = BITCAST_GROUPS[src]
    g = _gen(40 + ALL.index(src))
    if src.is_floating_point:
        x = (torch.randn(BLOCK, generator=g) * 1000).to(src)
        x[:4] = torch.tensor([float("inf"), float("-inf"), -0.0, float("nan")]).to(src)
    else:
        x = _values(src, BLOCK, g)
    outs = [torch.zeros(BLOCK, dtype=d) for d in dsts]
    ptrs = outs + [outs[0]] * (3 - len(outs))
    tl_d = [TL[d] for d in dsts] + [None] * (3 - len(dsts))
    _bitcast_kernel[(1,)](x, *ptrs, BLOCK, D0=tl_d[0], D1=tl_d[1], D2=tl_d[2], BLOCK=BLOCK)
    return x, dict(zip(dsts, outs))


BITCAST_CASES = [(s, d) for s, ds in BITCAST_GROUPS.items() for d in ds]


@pytest.mark.parametrize("src,dst", BITCAST_CASES, ids=[f"{_name(s)}-as-{_name(d)}" for s, d in BITCAST_CASES])
def test_bitcast(src, dst):
    x, outs = _bitcast_results(src)
    assert _bits_equal(outs[dst], x.view(dst))


def test_bitcast_size_mismatch_is_an_error():
    x = torch.zeros(BLOCK)
    with pytest.raises(triton.CompilationError, match="Cannot bitcast data-type of size 32 to data-type of size 16"):
        _bitcast_kernel[(1,)](x, x, x, x, BLOCK, D0=tl.int16, D1=None, D2=None, BLOCK=BLOCK)


# ---- fp_downcast_rounding ------------------------------------------------------------------------

@triton.jit
def _round_kernel(x32_ptr, x64_ptr, h_ptr, b_ptr, f_ptr, n, RND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x32 = tl.load(x32_ptr + offs, mask=m)
    x64 = tl.load(x64_ptr + offs, mask=m)
    tl.store(h_ptr + offs, x32.to(tl.float16, fp_downcast_rounding=RND), mask=m)
    tl.store(b_ptr + offs, x32.to(tl.bfloat16, fp_downcast_rounding=RND), mask=m)
    tl.store(f_ptr + offs, x64.to(tl.float32, fp_downcast_rounding=RND), mask=m)


_INT_OF = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32}


def _round_toward_zero(x, dt):
    """Round-to-nearest-even, then one ulp toward zero where that overshot |x| (also maps an
    overflow to inf back to the largest finite value, as RTZ does)."""
    r = x.to(dt)
    over = r.double().abs() > x.double().abs()
    bits = r.view(_INT_OF[dt])
    return torch.where(over, bits - 1, bits).view(dt)


@functools.lru_cache(maxsize=None)
def _round_results(rnd):
    g = _gen(77)
    x32 = torch.randn(BLOCK, generator=g, dtype=torch.float32) * 100
    x32[:3] = torch.tensor([70000.0, -70000.0, 1.0 + 2 ** -11 + 2 ** -13])  # fp16 overflow, a near-tie
    x64 = torch.randn(BLOCK, generator=g, dtype=torch.float64) * 100
    h, b, f = torch.zeros(BLOCK, dtype=torch.float16), torch.zeros(BLOCK, dtype=torch.bfloat16), torch.zeros(BLOCK)
    _round_kernel[(1,)](x32, x64, h, b, f, BLOCK, RND=rnd, BLOCK=BLOCK)
    return x32, x64, {torch.float16: h, torch.bfloat16: b, torch.float32: f}


@pytest.mark.parametrize("dst", [torch.float16, torch.bfloat16, torch.float32], ids=_name)
def test_downcast_rtne(dst):
    x32, x64, outs = _round_results("rtne")
    src = x64 if dst == torch.float32 else x32
    assert _bits_equal(outs[dst], src.to(dst))


@pytest.mark.parametrize("dst", [torch.float16, torch.bfloat16, torch.float32], ids=_name)
def test_downcast_rtz(dst):
    x32, x64, outs = _round_results("rtz")
    src = x64 if dst == torch.float32 else x32
    want = _round_toward_zero(src, dst)
    assert _bits_equal(outs[dst], want), (outs[dst][:4], want[:4])


def test_downcast_rounding_on_upcast_is_an_error():
    x = torch.zeros(BLOCK)
    with pytest.raises(triton.CompilationError, match="fp_downcast_rounding should be set only for truncating"):
        _upcast_rnd_kernel[(1,)](x, x, BLOCK=BLOCK)


@triton.jit
def _upcast_rnd_kernel(x_ptr, o_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(o_ptr + tl.arange(0, BLOCK), x.to(tl.float64, fp_downcast_rounding="rtz"))


# ---- scalar arguments ---------------------------------------------------------------------------

@triton.jit
def _scalar_kernel(o_ptr, i, f, b, big, neg_big, huge, one):
    tl.static_assert(i.dtype == tl.int32)         # int that fits in 32 bits
    tl.static_assert(f.dtype == tl.float32)       # Python float
    tl.static_assert(b.dtype == tl.int1)          # Python bool
    tl.static_assert(big.dtype == tl.int64)       # int >= 2**31
    tl.static_assert(neg_big.dtype == tl.int64)   # int < -2**31
    tl.static_assert(huge.dtype == tl.uint64)     # int >= 2**63
    tl.store(o_ptr + 0, i.to(tl.float64))
    tl.store(o_ptr + 1, f.to(tl.float64))
    tl.store(o_ptr + 2, b.to(tl.float64))
    tl.store(o_ptr + 3, big.to(tl.float64))
    tl.store(o_ptr + 4, neg_big.to(tl.float64))
    tl.store(o_ptr + 5, (huge - 18446744073709551000).to(tl.float64))
    tl.store(o_ptr + 6, one + 0.5)                # 1 is specialised (constexpr) like upstream


def test_scalar_argument_types():
    o = torch.zeros(7, dtype=torch.float64)
    _scalar_kernel[(1,)](o, -7, 2.5, True, 2 ** 40, -2 ** 40 - 3, 2 ** 64 - 1, 1)
    assert o.tolist() == [-7.0, 2.5, 1.0, float(2 ** 40), float(-2 ** 40 - 3), 615.0, 1.5]


@triton.jit
def _annotated_kernel(o_ptr, h: tl.float16, b: "tl.bfloat16", d: tl.float64, f: "fp32", plain):
    tl.static_assert(h.dtype == tl.float16)
    tl.static_assert(b.dtype == tl.bfloat16)
    tl.static_assert(d.dtype == tl.float64)
    tl.static_assert(f.dtype == tl.float32)
    tl.static_assert(plain.dtype == tl.float32)
    tl.store(o_ptr + 0, h.to(tl.float64))
    tl.store(o_ptr + 1, b.to(tl.float64))
    tl.store(o_ptr + 2, d)
    tl.store(o_ptr + 3, f.to(tl.float64))
    tl.store(o_ptr + 4, plain.to(tl.float64))


def test_float_annotated_scalar_arguments():
    """A float parameter annotated with a float dtype is passed in that type (upstream's
    signature from annotations); ints are accepted and converted; others stay fp32."""
    o = torch.zeros(5, dtype=torch.float64)
    h, b = 1 + 2 ** -11 + 2 ** -30, 1 + 2 ** -8 + 2 ** -40  # round once: to 1 + 2**-10, 1 + 2**-7
    _annotated_kernel[(1,)](o, h, b, 0.1, 0.1, 0.1)
    f32 = torch.tensor(0.1, dtype=torch.float64).float().item()
    assert o.tolist() == [1 + 2 ** -10, 1 + 2 ** -7, 0.1, f32, f32]
    _annotated_kernel[(1,)](o, 3, 5, 7, 9, 0.5)  # ints are numbers: same specialisation kinds
    assert o.tolist() == [3.0, 5.0, 7.0, 9.0, 0.5]
    with pytest.raises(TypeError, match="argument 'h' of _annotated_kernel\\(\\) is annotated fp16 and needs a number"):
        _annotated_kernel[(1,)](o, o, 1.0, 1.0, 1.0, 1.0)


@triton.jit
def _every_dtype_kernel(p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, o_ptr, E: tl.constexpr):
    ps = (p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12)
    for i in tl.static_range(13):
        tl.static_assert(ps[i].dtype.element_ty == E[i], "the pointer's element type is the tensor's")
        tl.store(o_ptr + i, tl.load(ps[i]).to(tl.float64))


def test_launcher_tables_agree_with_the_compiler():
    """The dtype codes and slot kinds Python uses come from the extension (one table in C):
    tl's dtypes are _C.DTYPES, every torch dtype reaches the kernel as its tl pointer type,
    and every spec kind has a slot kind."""
    from triton._C import tritium as _C
    from triton.language import core
    assert [(d.name, d.primitive_bitwidth) for d in core._DTYPES] == list(_C.DTYPES)
    assert all(d.code == i for i, d in enumerate(core._DTYPES))
    assert {"constexpr", "ptr", "i1", "i32", "i64", "u64", "fp16", "bf16", "fp32", "fp64", "tensordesc"} == set(_C.SLOT_KINDS)
    ts = [torch.full((1,), 3).to(dt) for dt in ALL]
    o = torch.zeros(len(ALL), dtype=torch.float64)
    _every_dtype_kernel[(1,)](*ts, o, E=tuple(TL[dt] for dt in ALL))
    assert o.tolist() == [1.0] + [3.0] * 12  # bool(3) is True


@triton.jit
def _scale_kernel(x_ptr, o_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=_name)
def test_float_scalar_argument_with_each_float_dtype(dt):
    """A float argument is fp32 and promotes with the tensor like any fp32 value."""
    x = torch.randn(200).to(dt)
    o = torch.zeros(200, dtype=dt)
    _scale_kernel[(2,)](x, o, 200, 0.3, BLOCK=128)
    cd = torch.float64 if dt == torch.float64 else torch.float32
    torch.testing.assert_close(o, (x.to(cd) * torch.tensor(0.3, dtype=torch.float32).to(cd)).to(dt))


_NUMPY_FIRST = """
import sys
import numpy as np
import triton, triton.language as tl
assert "torch" not in sys.modules, "import triton imported torch"
@triton.jit
def inc(x_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.load(x_ptr + o) + 1)
x = np.zeros(16, np.float32)
inc[(1,)](x, BLOCK=16)
assert (x == 1).all()
assert "torch" not in sys.modules, "a numpy launch imported torch"
import torch  # after triton: its dtypes are registered on first sight
for dt in (torch.float32, torch.bfloat16, torch.int16, torch.uint8):
    y = torch.zeros(16, dtype=dt)
    inc[(1,)](y, BLOCK=16)
    assert (y == 1).all(), dt
print("OK")
"""


def test_import_triton_leaves_torch_alone(run_py, tmp_path):
    """numpy-only scripts do not pay for importing torch; torch imported later still works."""
    script = tmp_path / "numpy_first.py"
    script.write_text(_NUMPY_FIRST)
    p = run_py(script, tmp_path / "cache")
    assert p.returncode == 0 and p.stdout.strip().endswith("OK"), p.stderr
