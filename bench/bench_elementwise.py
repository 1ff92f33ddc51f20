"""Element-wise kernels against torch eager: vector add and a GELU chain.

Prints time and GB/s for 1M, 4M, 16M and 64M float32 elements, Tritium vs torch on
the same inputs with preallocated outputs, and the ratio (>1: Tritium is faster).
Timings alternate the two implementations in one process and report medians.
"""
import statistics
import time

import torch
import triton
import triton.language as tl


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


def _median_ms(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def compare(name, ours, theirs, nbytes, reps):
    ours()
    theirs()
    a, b = [], []
    for _ in range(5):  # alternate to share noise between both sides
        a.append(_median_ms(ours, reps))
        b.append(_median_ms(theirs, reps))
    ta, tb = statistics.median(a), statistics.median(b)
    return ta, tb, nbytes / ta / 1e6, nbytes / tb / 1e6


def run(report):
    sizes = [1 << 20, 1 << 22, 1 << 24, 1 << 26]
    for n in sizes:
        x = torch.randn(n)
        y = torch.randn(n)
        out = torch.empty(n)
        ref = torch.empty(n)
        grid = (triton.cdiv(n, BLOCK),)
        reps = max(3, int(2e8 // (n * 12)))
        add = compare("add", lambda: add_kernel[grid](x, y, out, n, BLOCK=BLOCK),
                      lambda: torch.add(x, y, out=ref), 3 * 4 * n, reps)
        torch.testing.assert_close(out, x + y)
        gelu = compare("gelu", lambda: gelu_kernel[grid](x, out, n, BLOCK=BLOCK),
                       lambda: torch.ops.aten.gelu.out(x, out=ref), 2 * 4 * n, reps)
        torch.testing.assert_close(out, torch.nn.functional.gelu(x), atol=1e-5, rtol=1e-5)
        for name, (ta, tb, ga, gb) in (("vector add", add), ("GELU chain", gelu)):
            report(f"{name:<11} {n >> 20:>3}M  tritium {ta:8.3f} ms {ga:7.1f} GB/s   torch {tb:8.3f} ms {gb:7.1f} GB/s"
                   f"   ratio {tb / ta:5.2f}x")


if __name__ == "__main__":
    run(print)
