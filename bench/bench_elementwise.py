"""Element-wise kernels against torch eager: vector add and a GELU chain.

Prints time and GB/s for 1M, 4M, 16M and 64M float32 elements, Tritium vs torch on
the same inputs with preallocated outputs, and the ratio (>1: Tritium is faster).
Same method as bench_norms.py (its compare): rounds alternate ours and torch's, a
round is the fastest of `reps` calls, the median round is quoted; a 2-thread column
(wall clock) and a 1-thread column (time.thread_time, one thread on both sides).
"""
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_norms import compare  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=mask)


BLOCK = 4096


def _line(report, name, n, res):
    text = f"{name:<11} {n >> 20:>3}M"
    for (ta, tb, ga, gb), th in zip(res, ("2T", "1T")):
        text += (f" | {th} tritium {ta:8.3f} ms {ga:6.1f} GB/s torch {tb:8.3f} ms {gb:6.1f} GB/s"
                 f" ratio {tb / ta:5.2f}x")
    report(text)


def run(report):
    for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26):
        x = torch.randn(n)
        y = torch.randn(n)
        out = torch.empty(n)
        ref = torch.empty(n)
        grid = (triton.cdiv(n, BLOCK),)
        reps = max(3, int(2e8 // (n * 12)))
        add = compare(lambda **k: add_kernel[grid](x, y, out, n, BLOCK=BLOCK, **k),
                      lambda: torch.add(x, y, out=ref), 3 * 4 * n, reps)
        torch.testing.assert_close(out, x + y)
        gelu = compare(lambda **k: gelu_kernel[grid](x, out, n, BLOCK=BLOCK, **k),
                       lambda: torch.ops.aten.gelu.out(x, out=ref), 2 * 4 * n, reps)
        torch.testing.assert_close(out, torch.nn.functional.gelu(x), atol=1e-5, rtol=1e-5)
        _line(report, "vector add", n, add)
        _line(report, "GELU chain", n, gelu)


if __name__ == "__main__":
    run(print)
