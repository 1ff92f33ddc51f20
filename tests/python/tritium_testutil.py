"""Small helpers shared by the test files (dtype tables, deterministic data, comparisons).

Fixtures and subprocess helpers live in conftest.py.
"""
import numpy as np
import torch

import triton.language as tl

TL = {torch.bool: tl.int1, torch.int8: tl.int8, torch.int16: tl.int16, torch.int32: tl.int32, torch.int64: tl.int64,
      torch.uint8: tl.uint8, torch.uint16: tl.uint16, torch.uint32: tl.uint32, torch.uint64: tl.uint64,
      torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32, torch.float64: tl.float64}
SIGNED_OF = {torch.int8: torch.int8, torch.uint8: torch.int8, torch.int16: torch.int16, torch.uint16: torch.int16,
             torch.int32: torch.int32, torch.uint32: torch.int32, torch.int64: torch.int64, torch.uint64: torch.int64}
INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16, torch.uint32, torch.uint64]
NP = {torch.bool: np.bool_, torch.int8: np.int8, torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
      torch.uint8: np.uint8, torch.uint16: np.uint16, torch.uint32: np.uint32, torch.uint64: np.uint64,
      torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64}
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def dt_name(dt):
    return str(dt).replace("torch.", "")


def gen(seed):
    """A private torch RNG: memoised results do not depend on test order."""
    return torch.Generator().manual_seed(seed)


def rand_values(dt, n, g, nonzero=False, lo=None, hi=None):
    """Deterministic test data: small ints (negative ones for signed types), floats of
    either sign; `nonzero` keeps |v| >= 0.5 (floats) or v != 0 (ints). Unsigned types
    without an explicit range also get values in the upper half of their range (see
    unsigned_values)."""
    if dt == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dt.is_floating_point:
        v = torch.randn(n, generator=g, dtype=torch.float32) * 4
        if nonzero:
            v = torch.where(v.abs() < 0.5, torch.full_like(v, 0.75), v)
        return v.to(dt)
    if not dt.is_signed and lo is None and hi is None:
        return unsigned_values(dt, n, g, nonzero)
    signed = dt.is_signed
    lo = lo if lo is not None else (-100 if signed else 0)
    hi = hi if hi is not None else 100 if signed else 200
    v = torch.randint(lo, hi, (n,), generator=g, dtype=torch.int64)
    if nonzero:
        v = torch.where(v == 0, torch.ones_like(v), v)
    return v.to(dt)


def unsigned_values(dt, n, g, nonzero=False):
    """Values of an unsigned dtype over its whole range, a quarter each: small (0..199),
    the upper half (>= 2**(bits-1), where a signed reading is negative), anywhere, and
    the edges 2**(bits-1) - 1, 2**(bits-1), 2**bits - 2, 2**bits - 1. A signed operation
    used for an unsigned one (slt for ult, sdiv for udiv, ashr for lshr, sitofp for
    uitofp, smax for umax) gets a different answer on most of them."""
    bits = dt.itemsize * 8
    top, half = 2 ** bits, 2 ** (bits - 1)
    rng = np.random.default_rng(int(torch.randint(0, 2 ** 31, (1,), generator=g)))
    edges = np.array([half - 1, half, top - 2, top - 1], dtype=np.uint64)
    pools = np.stack([rng.integers(0, 200, n, dtype=np.uint64), rng.integers(half, top, n, dtype=np.uint64),
                      rng.integers(0, top, n, dtype=np.uint64), edges[rng.integers(0, 4, n)]])
    v = pools[rng.integers(0, 4, n), np.arange(n)]
    if nonzero:
        v[v == 0] = 1
    return torch.from_numpy(v.astype(NP[dt]))


def assert_int_equal(out, ref, dt):
    """Integer results compare as bit patterns: ref (an int64 tensor, or a numpy array of
    any integer dtype) wraps to dt's width."""
    got = out.numpy()
    want = (ref.numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)).astype(NP[dt])
    if not np.array_equal(got, want):
        bad = np.flatnonzero(got != want)[:5].tolist()
        raise AssertionError(f"{dt_name(dt)} mismatch at {bad}: got {got[bad].tolist()} want {want[bad].tolist()}")


def bits_equal(a, b):
    """Equality of raw bytes (every dtype incl. uint32/uint64/bf16; NaN payloads too)."""
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def asm_loops(asm, branch_re=r"^(j|b)"):
    """(label, instructions) of every innermost loop of an assembly listing: a label's
    instructions up to the branch back to it."""
    import re
    out, cur, body = [], None, []
    for line in asm.split("\n"):
        m = re.match(r"^(\.LBB\d+_\d+):", line)
        if m:
            cur, body = m.group(1), []
            continue
        if cur and line.startswith("\t") and not line.startswith("\t."):
            body.append(line.strip())
            f = line.split()
            if re.match(branch_re, f[0]) and f[-1] == cur:
                out.append((cur, body))
                cur = None
    return out
