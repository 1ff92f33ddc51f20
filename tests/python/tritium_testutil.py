"""Small helpers shared by the test files (dtype tables, deterministic data, comparisons).

Fixtures and subprocess helpers live in conftest.py.
"""
import torch

import triton.language as tl

TL = {torch.bool: tl.int1, torch.int8: tl.int8, torch.int16: tl.int16, torch.int32: tl.int32, torch.int64: tl.int64,
      torch.uint8: tl.uint8, torch.uint16: tl.uint16, torch.uint32: tl.uint32, torch.uint64: tl.uint64,
      torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32, torch.float64: tl.float64}
SIGNED_OF = {torch.int8: torch.int8, torch.uint8: torch.int8, torch.int16: torch.int16, torch.uint16: torch.int16,
             torch.int32: torch.int32, torch.uint32: torch.int32, torch.int64: torch.int64, torch.uint64: torch.int64}
INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16, torch.uint32, torch.uint64]
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def dt_name(dt):
    return str(dt).replace("torch.", "")


def gen(seed):
    """A private torch RNG: memoised results do not depend on test order."""
    return torch.Generator().manual_seed(seed)


def rand_values(dt, n, g, nonzero=False, lo=None, hi=None):
    """Deterministic test data: small ints (negative ones for signed types), floats of
    either sign; `nonzero` keeps |v| >= 0.5 (floats) or v != 0 (ints)."""
    if dt == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dt.is_floating_point:
        v = torch.randn(n, generator=g, dtype=torch.float32) * 4
        if nonzero:
            v = torch.where(v.abs() < 0.5, torch.full_like(v, 0.75), v)
        return v.to(dt)
    signed = dt.is_signed
    lo = lo if lo is not None else (-100 if signed else 0)
    hi = hi if hi is not None else 100 if signed else 200
    v = torch.randint(lo, hi, (n,), generator=g, dtype=torch.int64)
    if nonzero:
        v = torch.where(v == 0, torch.ones_like(v), v)
    return v.to(dt)


def assert_int_equal(out, ref_int64, dt):
    """Integer results compare as bit patterns: ref (int64) wraps to dt's width."""
    sd = SIGNED_OF[dt]
    got = out.view(sd)
    want = ref_int64.to(sd)
    if not torch.equal(got, want):
        bad = (got != want).nonzero().flatten()[:5].tolist()
        raise AssertionError(f"{dt_name(dt)} mismatch at {bad}: got {got[bad].tolist()} want {want[bad].tolist()}")


def bits_equal(a, b):
    """Equality of raw bytes (every dtype incl. uint32/uint64/bf16; NaN payloads too)."""
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))
