"""Row reductions and activation chains against torch eager, in one process.

Softmax, log-softmax, layer norm (the three-pass tutorial form), RMS norm and
cross-entropy (forward, one loss per row) at (4096, 1024), (1024, 4096), (8192, 512)
and (32, 32768) in float32 and bfloat16 (bf16 in memory, fp32 inside the kernel);
the SiLU chain (GELU and vector add are bench_elementwise.py); and the masked
softmax / layer norm against the same kernel without the mask at a row length that
is a multiple of the vector width. GB/s counts each array read or written once.
Two columns per line: both threads (torch.get_num_threads(), OMP_NUM_THREADS; wall
clock) and one thread (time.thread_time, torch.set_num_threads(1), num_threads=1).
Rounds alternate ours and torch's; a round is the fastest of `reps` calls (on a
shared VM a 2-thread call that loses a core to another process waits a scheduler
tick, 4 ms, which a median of single calls would report), the median round is
quoted; ratio = torch time / ours.

`python bench/bench_norms.py [softmax|log_softmax|layer_norm|rms_norm|cross_entropy|
silu|mask ...]` runs a subset.
"""
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

SHAPES = [(4096, 1024), (1024, 4096), (8192, 512), (32, 32768)]
DTYPES = [torch.float32, torch.bfloat16]


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if MASKED:
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    else:
        x = tl.load(x_ptr + row * stride + cols)
    x = x.to(tl.float32)
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    y = e / tl.sum(e, axis=0)
    if MASKED:
        tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)
    else:
        tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty))


@triton.jit
def log_softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    y = z - tl.log(tl.sum(tl.exp(z), axis=0))
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, N, eps, BLOCK: tl.constexpr,
                      MASKED: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        if MASKED:
            a = tl.load(x_ptr + cols, mask=cols < N, other=0.).to(tl.float32)
        else:
            a = tl.load(x_ptr + cols).to(tl.float32)
        acc += a
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        if MASKED:
            a = tl.load(x_ptr + cols, mask=cols < N, other=0.).to(tl.float32)
            a = tl.where(cols < N, a - mean, 0.)
        else:
            a = tl.load(x_ptr + cols).to(tl.float32) - mean
        acc += a * a
    var = tl.sum(acc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        if MASKED:
            mask = cols < N
            w = tl.load(w_ptr + cols, mask=mask)
            b = tl.load(b_ptr + cols, mask=mask)
            x = tl.load(x_ptr + cols, mask=mask, other=0.).to(tl.float32)
            y = (x - mean) * rstd * w + b
            tl.store(y_ptr + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        else:
            w = tl.load(w_ptr + cols)
            b = tl.load(b_ptr + cols)
            x = tl.load(x_ptr + cols).to(tl.float32)
            y = (x - mean) * rstd * w + b
            tl.store(y_ptr + cols, y.to(y_ptr.dtype.element_ty))


@triton.jit
def rms_norm_kernel(x_ptr, y_ptr, w_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    t = tl.load(t_ptr + row)
    xt = tl.load(x_ptr + row * stride + t).to(tl.float32)
    tl.store(loss_ptr + row, lse - xt)


@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(x), mask=mask)


def _best_ms(fn, reps, clock):
    best = float("inf")
    for _ in range(reps):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best * 1e3


def _rounds(ours, theirs, reps, clock, rounds=5):
    ours()
    theirs()
    a, b = [], []
    for _ in range(rounds):
        a.append(_best_ms(ours, reps, clock))
        b.append(_best_ms(theirs, reps, clock))
    return statistics.median(a), statistics.median(b)


def compare(ours, theirs, nbytes, reps, one_thread=True):
    """[(ms ours, ms torch, GB/s ours, GB/s torch)] on both threads, then on one thread.
    `ours(**launch_options)` launches our kernel, `theirs()` torch's."""
    ta, tb = _rounds(ours, theirs, reps, time.perf_counter)
    res = [(ta, tb, nbytes / ta / 1e6, nbytes / tb / 1e6)]
    if one_thread:
        nt = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            ta, tb = _rounds(lambda: ours(num_threads=1), theirs, reps, time.thread_time)
        finally:
            torch.set_num_threads(nt)
        res.append((ta, tb, nbytes / ta / 1e6, nbytes / tb / 1e6))
    return res


def _reps(nbytes):
    return max(3, int(2e8 // nbytes))


def _dt(dt):
    return "fp32" if dt == torch.float32 else "bf16"


def _line(report, name, shape, dt, res):
    text = f"{name:<13} {str(shape):<13} {_dt(dt)}"
    for (ta, tb, ga, gb), th in zip(res, ("2T", "1T")):
        text += f" | {th} ours {ta:7.3f} ms {ga:5.1f} GB/s torch {tb:7.3f} ms {gb:5.1f} GB/s {tb / ta:5.2f}x"
    report(text)


def _tol(dt):
    return dict(atol=2e-2, rtol=2e-2) if dt == torch.bfloat16 else dict(atol=1e-5, rtol=1e-4)


def bench_softmax(report):
    for (m, n) in SHAPES:
        for dt in DTYPES:
            x = torch.randn(m, n).to(dt)
            y, ref = torch.empty_like(x), torch.empty_like(x)
            blk = triton.next_power_of_2(n)
            nb = 2 * x.numel() * x.element_size()
            res = compare(lambda **k: softmax_kernel[(m,)](x, y, n, n, BLOCK=blk, MASKED=True, **k),
                          lambda: torch.ops.aten._softmax.out(x, 1, False, out=ref), nb, _reps(nb))
            torch.testing.assert_close(y, torch.softmax(x.float(), 1).to(dt), **_tol(dt))
            _line(report, "softmax", (m, n), dt, res)


def bench_log_softmax(report):
    for (m, n) in SHAPES:
        for dt in DTYPES:
            x = torch.randn(m, n).to(dt)
            y, ref = torch.empty_like(x), torch.empty_like(x)
            blk = triton.next_power_of_2(n)
            nb = 2 * x.numel() * x.element_size()
            res = compare(lambda **k: log_softmax_kernel[(m,)](x, y, n, n, BLOCK=blk, **k),
                          lambda: torch.ops.aten._log_softmax.out(x, 1, False, out=ref), nb, _reps(nb))
            torch.testing.assert_close(y, torch.log_softmax(x.float(), 1).to(dt), **_tol(dt))
            _line(report, "log-softmax", (m, n), dt, res)


def _ln_args(m, n, dt):
    x = torch.randn(m, n).to(dt)
    w = torch.rand(n).to(dt)
    b = torch.randn(n).to(dt)
    return x, w, b, torch.empty_like(x), torch.empty_like(x)


def bench_layer_norm(report, block=1024):
    for (m, n) in SHAPES:
        for dt in DTYPES:
            x, w, b, y, ref = _ln_args(m, n, dt)
            blk = min(block, triton.next_power_of_2(n))
            nb = 2 * x.numel() * x.element_size()
            res = compare(lambda **k: layer_norm_kernel[(m,)](x, y, w, b, n, n, 1e-5, BLOCK=blk, MASKED=True, **k),
                          lambda: torch.native_layer_norm(x, (n,), w, b, 1e-5), nb, _reps(nb))
            want = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
            torch.testing.assert_close(y, want.to(dt), **_tol(dt))
            _line(report, "layer norm", (m, n), dt, res)


def bench_rms_norm(report):
    for (m, n) in SHAPES:
        for dt in DTYPES:
            x = torch.randn(m, n).to(dt)
            w = torch.rand(n).to(dt)
            y = torch.empty_like(x)
            blk = triton.next_power_of_2(n)
            nb = 2 * x.numel() * x.element_size()
            res = compare(lambda **k: rms_norm_kernel[(m,)](x, y, w, n, n, 1e-6, BLOCK=blk, **k),
                          lambda: torch.rms_norm(x, (n,), w, 1e-6), nb, _reps(nb))
            want = torch.rms_norm(x.float(), (n,), w.float(), 1e-6)
            torch.testing.assert_close(y, want.to(dt), **_tol(dt))
            _line(report, "RMS norm", (m, n), dt, res)


def bench_cross_entropy(report):
    for (m, n) in SHAPES:
        for dt in DTYPES:
            x = torch.randn(m, n).to(dt)
            t = torch.randint(0, n, (m,))
            loss = torch.empty(m)
            blk = triton.next_power_of_2(n)
            nb = x.numel() * x.element_size() + m * 12
            res = compare(lambda **k: cross_entropy_kernel[(m,)](x, t, loss, n, n, BLOCK=blk, **k),
                          lambda: torch.nn.functional.cross_entropy(x, t, reduction="none"),
                          nb, _reps(nb))
            want = torch.nn.functional.cross_entropy(x.float(), t, reduction="none")
            torch.testing.assert_close(loss, want, atol=1e-4, rtol=1e-4)
            _line(report, "cross-entropy", (m, n), dt, res)


def bench_silu(report, block=4096):
    for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26):
        x = torch.randn(n)
        out, ref = torch.empty(n), torch.empty(n)
        grid = (triton.cdiv(n, block),)
        res = compare(lambda **k: silu_kernel[grid](x, out, n, BLOCK=block, **k),
                      lambda: torch.ops.aten.silu.out(x, out=ref), 8 * n, _reps(8 * n))
        torch.testing.assert_close(out, torch.nn.functional.silu(x), atol=1e-5, rtol=1e-5)
        _line(report, "SiLU chain", f"{n >> 20}M", torch.float32, res)


def _mask_pair(report, name, masked, unmasked, reps):
    text = name
    for th, clock in (("2T", time.perf_counter), ("1T", time.thread_time)):
        kw = {} if th == "2T" else {"num_threads": 1}
        a, b = _rounds(lambda: masked(**kw), lambda: unmasked(**kw), reps, clock)
        text += f" | {th} masked {a:7.3f} ms unmasked {b:7.3f} ms masked/unmasked {a / b:5.3f}"
    report(text)


def bench_mask(report):
    """The same kernel with and without `mask=cols < n`, row length a multiple of VL."""
    m, n = 4096, 1024
    x = torch.randn(m, n)
    y = torch.empty_like(x)
    reps = _reps(2 * x.numel() * 4)
    _mask_pair(report, f"softmax {m}x{n}",
               lambda **k: softmax_kernel[(m,)](x, y, n, n, BLOCK=n, MASKED=True, **k),
               lambda **k: softmax_kernel[(m,)](x, y, n, n, BLOCK=n, MASKED=False, **k), reps)
    x, w, b, y, _ = _ln_args(m, n, torch.float32)
    _mask_pair(report, f"layer norm {m}x{n} BLOCK {n}",
               lambda **k: layer_norm_kernel[(m,)](x, y, w, b, n, n, 1e-5, BLOCK=n, MASKED=True, **k),
               lambda **k: layer_norm_kernel[(m,)](x, y, w, b, n, n, 1e-5, BLOCK=n, MASKED=False, **k),
               reps)


SUITES = {"softmax": bench_softmax, "log_softmax": bench_log_softmax,
          "layer_norm": bench_layer_norm, "rms_norm": bench_rms_norm,
          "cross_entropy": bench_cross_entropy, "silu": bench_silu, "mask": bench_mask}


def run(report, names=None):
    for name in names or SUITES:
        SUITES[name](report)


if __name__ == "__main__":
    run(print, sys.argv[1:] or None)
