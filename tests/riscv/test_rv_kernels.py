"""Kernels compiled here from Python for riscv64 (spacemit-x60, RVV 1.0, VLEN 256), run
through libtritium's tritium-run under qemu-riscv64 -cpu rv64,v=true,vlen=256, and
compared with numpy and with the same kernel compiled for the host (rvutil.run):
masked elementwise, softmax, layer norm, tl.dot, reductions, block pointers, atomics,
control flow, in-kernel scopes whose trace proton-cli report reads, and an smt.parallel
loop spread over the launcher's threads."""
import json
import os
import subprocess

import numpy as np
import pytest

import triton
import triton.language as tl
import triton.language.extra.smt as smt
import triton.profiler.language as pl
from triton.profiler.flags import flags

import rvutil

RNG = np.random.default_rng(13)


def _close(res, name, ref, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(res.rv[name], ref, rtol=rtol, atol=atol, err_msg=f"riscv64 {name}")
    if res.host is not None:
        np.testing.assert_allclose(res.rv[name], res.host[name], rtol=rtol, atol=atol, err_msg=f"riscv64 vs host {name}")


# ---- masked elementwise -------------------------------------------------------------------

@triton.jit
def rv_axpy(x_ptr, y_ptr, o_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, alpha * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def test_masked_elementwise(tmp_path):
    n = 3000  # not a multiple of the block: the last program is masked
    x, y = RNG.standard_normal(n, dtype=np.float32), RNG.standard_normal(n, dtype=np.float32)
    o = np.full(n + 16, 7.0, np.float32)  # past n must stay untouched
    res = rvutil.run(tmp_path, rv_axpy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32",
                                         "alpha": "fp32"}, {"BLOCK": 1024}, (3,), {"x_ptr": x, "y_ptr": y, "o_ptr": o},
                     {"n": n, "alpha": 0.75})
    ref = o.copy()
    ref[:n] = 0.75 * x + y
    _close(res, "o_ptr", ref)
    asm = res.kernel.asm["asm"]
    for insn in ("vsetvli", "vle32.v", "vfmacc"):
        assert insn in asm, f"{insn} missing from the elementwise kernel's RISC-V assembly"


# ---- softmax and layer norm ---------------------------------------------------------------

@triton.jit
def rv_softmax(x_ptr, o_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(o_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=m)


def test_softmax(tmp_path):
    rows, cols = 37, 200
    x = RNG.standard_normal((rows, cols), dtype=np.float32) * 3
    o = np.zeros_like(x)
    res = rvutil.run(tmp_path, rv_softmax, {"x_ptr": "*fp32", "o_ptr": "*fp32", "n_cols": "i32", "stride": "i32"},
                     {"BLOCK": 256}, (rows,), {"x_ptr": x, "o_ptr": o}, {"n_cols": cols, "stride": cols})
    e = np.exp(x - x.max(axis=1, keepdims=True))
    _close(res, "o_ptr", e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@triton.jit
def rv_layer_norm(x_ptr, w_ptr, b_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / n
    var = tl.sum(x * x, axis=0) / n - mean * mean  # the padding (other=0) adds nothing
    y = (x - mean) * (1.0 / tl.sqrt(var + eps)) * tl.load(w_ptr + cols, mask=m) + tl.load(b_ptr + cols, mask=m)
    tl.store(y_ptr + row * n + cols, y, mask=m)


@triton.jit
def rv_layer_norm_where(x_ptr, w_ptr, b_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(m, x - mean, 0.0)  # the tutorial's form
    var = tl.sum(d * d, axis=0) / n
    y = d * (1.0 / tl.sqrt(var + eps)) * tl.load(w_ptr + cols, mask=m) + tl.load(b_ptr + cols, mask=m)
    tl.store(y_ptr + row * n + cols, y, mask=m)


def _layer_norm(tmp_path, kernel, rows=16, n=300):
    x = RNG.standard_normal((rows, n), dtype=np.float32) * 2 + 1
    w, b = RNG.standard_normal(n, dtype=np.float32), RNG.standard_normal(n, dtype=np.float32)
    y = np.zeros_like(x)
    res = rvutil.run(tmp_path, kernel, {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32",
                                        "n": "i32", "eps": "fp32"}, {"BLOCK": 512}, (rows,),
                     {"x_ptr": x, "w_ptr": w, "b_ptr": b, "y_ptr": y}, {"n": n, "eps": 1e-5})
    mu = x.mean(axis=1, keepdims=True)
    ref = (x - mu) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5) * w + b
    _close(res, "y_ptr", ref, rtol=1e-4, atol=1e-4)


def test_layer_norm(tmp_path):
    _layer_norm(tmp_path, rv_layer_norm)


def test_layer_norm_tutorial_where(tmp_path):
    _layer_norm(tmp_path, rv_layer_norm_where)


# ---- tl.dot ---------------------------------------------------------------------------------

@triton.jit
def rv_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_dot(tmp_path):
    M, N, K = 70, 50, 96
    a, b = RNG.standard_normal((M, K), dtype=np.float32), RNG.standard_normal((K, N), dtype=np.float32)
    c = np.zeros((M, N), np.float32)
    res = rvutil.run(tmp_path, rv_matmul, {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32",
                                           "K": "i32"}, {"BM": 32, "BN": 32, "BK": 32},
                     (triton.cdiv(M, 32), triton.cdiv(N, 32)), {"a_ptr": a, "b_ptr": b, "c_ptr": c},
                     {"M": M, "N": N, "K": K})
    _close(res, "c_ptr", a @ b, rtol=1e-4, atol=1e-4)
    asm = res.kernel.asm["asm"]
    for insn in ("vsetvli", "vle32.v", "vfmacc"):
        assert insn in asm, f"{insn} missing from the matmul kernel's RISC-V assembly"


def test_smt_matmul_hook(tmp_path):
    """The SMT matmul (smt.descriptor_load / view / dot, fp32 and fp16) once it exists:
    until triton.language.extra.smt provides dot this is skipped."""
    smt = pytest.importorskip("triton.language.extra.smt", reason="triton.language.extra.smt does not exist yet")
    if not hasattr(smt, "dot"):
        pytest.skip("smt.dot does not exist yet")
    pytest.skip("SMT matmul kernels: add them here when smt.dot lowers (issue 13 hook)")


# ---- reductions -------------------------------------------------------------------------------

@triton.jit
def rv_reduce(x_ptr, sum_ptr, max_ptr, min_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=m, other=0.0)
    tl.store(sum_ptr + row, tl.sum(x, axis=0))
    tl.store(max_ptr + row, tl.max(tl.load(x_ptr + row * n + cols, mask=m, other=-float("inf")), axis=0))
    tl.store(min_ptr + row, tl.min(tl.load(x_ptr + row * n + cols, mask=m, other=float("inf")), axis=0))


@triton.jit
def rv_colsum(x_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(o_ptr + c, tl.sum(x, axis=0))


def test_reductions(tmp_path):
    rows, n = 24, 100
    x = RNG.standard_normal((rows, n), dtype=np.float32)
    z = np.zeros(rows, np.float32)
    res = rvutil.run(tmp_path / "rows", rv_reduce, {"x_ptr": "*fp32", "sum_ptr": "*fp32", "max_ptr": "*fp32",
                                                    "min_ptr": "*fp32", "n": "i32"}, {"BLOCK": 128}, (rows,),
                     {"x_ptr": x, "sum_ptr": z, "max_ptr": z, "min_ptr": z}, {"n": n})
    _close(res, "sum_ptr", x.sum(axis=1), rtol=1e-4, atol=1e-4)
    _close(res, "max_ptr", x.max(axis=1))
    _close(res, "min_ptr", x.min(axis=1))
    y = RNG.standard_normal((16, 64), dtype=np.float32)
    res = rvutil.run(tmp_path / "cols", rv_colsum, {"x_ptr": "*fp32", "o_ptr": "*fp32"}, {"R": 16, "C": 64}, (1,),
                     {"x_ptr": y, "o_ptr": np.zeros(64, np.float32)})
    _close(res, "o_ptr", y.sum(axis=0), rtol=1e-4, atol=1e-4)


# ---- block pointers -----------------------------------------------------------------------------

@triton.jit
def rv_block_copy(x_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(N, 1), offsets=(pm * BM, 0), block_shape=(BM, BN),
                            order=(1, 0))
    dst = tl.make_block_ptr(o_ptr, shape=(M, N), strides=(N, 1), offsets=(pm * BM, 0), block_shape=(BM, BN),
                            order=(1, 0))
    for _ in range(0, tl.cdiv(N, BN)):
        v = tl.load(src, boundary_check=(0, 1), padding_option="zero")
        tl.store(dst, v * 2.0 + 1.0, boundary_check=(0, 1))
        src = tl.advance(src, (0, BN))
        dst = tl.advance(dst, (0, BN))


def test_block_pointers(tmp_path):
    M, N = 45, 70
    x = RNG.standard_normal((M, N), dtype=np.float32)
    res = rvutil.run(tmp_path, rv_block_copy, {"x_ptr": "*fp32", "o_ptr": "*fp32", "M": "i32", "N": "i32"},
                     {"BM": 16, "BN": 32}, (triton.cdiv(M, 16),), {"x_ptr": x, "o_ptr": np.zeros_like(x)},
                     {"M": M, "N": N})
    _close(res, "o_ptr", x * 2 + 1)


# ---- atomics -------------------------------------------------------------------------------------

@triton.jit
def rv_histogram(x_ptr, hist_ptr, total_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(hist_ptr + (v % BINS), 1, mask=m)
    tl.atomic_add(total_ptr, tl.sum(tl.where(m, v, 0), axis=0))


def test_atomics(tmp_path):
    n, bins = 5000, 16
    x = RNG.integers(0, 1000, n, dtype=np.int32)
    res = rvutil.run(tmp_path, rv_histogram, {"x_ptr": "*i32", "hist_ptr": "*i32", "total_ptr": "*i32", "n": "i32"},
                     {"BINS": bins, "BLOCK": 256}, (triton.cdiv(n, 256),),
                     {"x_ptr": x, "hist_ptr": np.zeros(bins, np.int32), "total_ptr": np.zeros(1, np.int32)}, {"n": n},
                     threads=4)
    np.testing.assert_array_equal(res.rv["hist_ptr"], np.bincount(x % bins, minlength=bins))
    np.testing.assert_array_equal(res.rv["total_ptr"], [x.sum()])


# ---- control flow --------------------------------------------------------------------------------

@triton.jit
def rv_control(x_ptr, o_ptr, steps_ptr, n, limit, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0)
    if pid % 2 == 0:  # a branch on a run-time scalar
        v = v * 2.0
    else:
        v = v - 1.0
    i = 0
    s = tl.sum(tl.abs(v), axis=0)
    while s > limit:  # data-dependent trip count
        s = s * 0.5
        i += 1
    for k in range(4, 0, -1):  # negative step: 4, 3, 2, 1
        v = v + k
    tl.store(o_ptr + offs, v, mask=m)
    tl.store(steps_ptr + pid, i)


def test_control_flow(tmp_path):
    n, block = 1000, 128
    x = RNG.standard_normal(n, dtype=np.float32)
    g = triton.cdiv(n, block)
    res = rvutil.run(tmp_path, rv_control, {"x_ptr": "*fp32", "o_ptr": "*fp32", "steps_ptr": "*i32", "n": "i32",
                                            "limit": "fp32"}, {"BLOCK": block}, (g,),
                     {"x_ptr": x, "o_ptr": np.zeros(n, np.float32), "steps_ptr": np.zeros(g, np.int32)},
                     {"n": n, "limit": 3.0})
    ref = x.copy()
    steps = np.zeros(g, np.int32)
    for p in range(g):
        sl = slice(p * block, min(n, (p + 1) * block))
        ref[sl] = ref[sl] * 2 if p % 2 == 0 else ref[sl] - 1
        s = np.float32(np.abs(ref[sl]).sum())
        while s > 3.0:
            s *= np.float32(0.5)
            steps[p] += 1
    _close(res, "o_ptr", ref + 10, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(res.rv["steps_ptr"], steps)


# ---- in-kernel scopes and the trace ----------------------------------------------------------

@triton.jit
def rv_scoped(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    pl.enter_scope("load")
    v = tl.load(x_ptr + offs, mask=m)
    pl.exit_scope("load")
    pl.enter_scope("compute")
    v = tl.exp(v) * 0.5
    pl.exit_scope("compute")
    tl.store(o_ptr + offs, v, mask=m)


def test_in_kernel_scopes_trace(tmp_path):
    pl.enable_semantic("triton")
    flags.instrumentation_on = True
    try:
        n = 4096
        x = RNG.standard_normal(n, dtype=np.float32)
        trace = tmp_path / "trace.json"
        res = rvutil.run(tmp_path, rv_scoped, {"x_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32"}, {"BLOCK": 512},
                         (8,), {"x_ptr": x, "o_ptr": np.zeros(n, np.float32)}, {"n": n}, trace=trace, host=False)
    finally:
        flags.instrumentation_on = False
        pl.disable_semantic("triton")
    _close(res, "o_ptr", np.exp(x) * 0.5, rtol=1e-5, atol=1e-6)
    md = json.load(open(tmp_path / "rv" / "rv_scoped.json"))
    assert md["scopes"] == ["load", "compute"] and md["instrumented"]
    ev = rvutil.trace_events(trace)
    slices = [e for e in ev if e.get("ph") == "X"]
    names = {e["name"] for e in slices}
    assert "rv_scoped" in names
    assert {"load", "compute"} <= names, names
    assert sum(e["name"] == "load" for e in slices) == 8  # one per program instance
    assert len({e["tid"] for e in slices}) == 2  # the launcher's two threads
    p = subprocess.run([os.path.join(rvutil.REPO, "build", "bin", "proton-cli"), "report", str(trace), "-m",
                        "count"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any("rv_scoped" in ln for ln in lines), p.stdout
    assert any("load" in ln for ln in lines) and any("compute" in ln for ln in lines), p.stdout
    print(p.stdout)


# ---- smt.parallel: iterations on the launcher's idle thread -------------------------------------

@triton.jit
def rv_par_rows(x_ptr, o_ptr, flag_ptr, seen_ptr, M, N: tl.constexpr, LIMIT: tl.constexpr):
    """one row per parallel iteration (o = 2x + row sum); iteration 0 also waits (at most
    LIMIT polls) for the last iteration's flag, which it sees only if another thread ran it"""
    cols = tl.arange(0, N)
    pl.enter_scope("outside")
    for r in smt.parallel(0, M):
        pl.enter_scope("row")
        if r == 0:
            seen = tl.atomic_add(flag_ptr, 0)
            i = 0
            while (seen == 0) & (i < LIMIT):
                seen = tl.atomic_add(flag_ptr, 0)
                i += 1
            tl.store(seen_ptr, seen)
        if r == M - 1:
            tl.atomic_xchg(flag_ptr, 1)
        v = tl.load(x_ptr + r * N + cols)
        tl.store(o_ptr + r * N + cols, 2.0 * v + tl.sum(v, axis=0))
        pl.exit_scope("row")
    pl.exit_scope("outside")


def test_smt_parallel_spreads_over_threads(tmp_path):
    """grid (1,) on 2 threads: the kernel's smt.parallel loop runs through the cross-built
    runtime's teams (rt_team.c) under qemu, iterations overlap, scopes land per thread"""
    pl.enable_semantic("triton")
    flags.instrumentation_on = True
    try:
        M, N = 32, 64
        x = RNG.standard_normal((M, N), dtype=np.float32)
        trace = tmp_path / "trace.json"
        res = rvutil.run(tmp_path, rv_par_rows, {"x_ptr": "*fp32", "o_ptr": "*fp32", "flag_ptr": "*i32",
                                                 "seen_ptr": "*i32", "M": "i32"}, {"N": N, "LIMIT": 1 << 24}, (1,),
                         {"x_ptr": x, "o_ptr": np.zeros_like(x), "flag_ptr": np.zeros(1, np.int32),
                          "seen_ptr": np.zeros(1, np.int32)}, {"M": M}, trace=trace)
    finally:
        flags.instrumentation_on = False
        pl.disable_semantic("triton")
    _close(res, "o_ptr", 2 * x + x.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    assert res.rv["seen_ptr"][0] == 1, "iteration 0 never saw the last one run meanwhile"
    assert "tritium_parallel_for" in res.kernel.asm["llir"]
    rows = [e for e in rvutil.trace_events(trace) if e.get("ph") == "X" and e["name"] == "row"]
    assert len(rows) == M and len({e["tid"] for e in rows}) == 2
