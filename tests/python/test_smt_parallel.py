"""smt.parallel loops (reference/spine-triton.md §1.8): results against torch, and that the
iterations really run on several threads when the grid leaves threads idle.

`for s in smt.parallel(...)` with bind_sub_block=True (the default) is outlined by the
code generator and run through the runtime's rt_parallel_for: with fewer programs than
threads each program gets a team of the idle ones (docs/runtime.md §4.6); with as many
programs as threads, or bind_sub_block=False, the loop runs on the program's thread."""
import json
import os
import re
import sys

import pytest
import torch

import triton
import triton.language as tl
import triton.language.extra.smt as smt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proton_util as pu  # noqa: E402

THREADS = (1, 2, 3)


# ---- kernels --------------------------------------------------------------------------------------

@triton.jit
def rows_kernel(x_ptr, o_ptr, cnt_ptr, M, N: tl.constexpr, BM: tl.constexpr):
    """o[r, :] = 2 * x[r, :] + sum(x[r, :]) for the rows of this program's block, one
    row block per parallel iteration; counts the code around the loop per program."""
    pid = tl.program_id(0)
    tl.atomic_add(cnt_ptr + 2 * pid, 1)
    nblocks = tl.cdiv(M, BM)
    cols = tl.arange(0, N)
    for b in smt.parallel(0, nblocks):
        rows = pid * M + b * BM + tl.arange(0, BM)
        m = (b * BM + tl.arange(0, BM)) < M
        v = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=m[:, None], other=0.0)
        s = tl.sum(v, axis=1)
        tl.store(o_ptr + rows[:, None] * N + cols[None, :], 2.0 * v + s[:, None], mask=m[:, None])
    tl.atomic_add(cnt_ptr + 2 * pid + 1, 1)


def rows_ref(x):
    return 2 * x + x.sum(dim=-1, keepdim=True)


@pytest.mark.parametrize("programs", [1, 2, 5])
@pytest.mark.parametrize("threads", THREADS)
def test_rows_against_torch(programs, threads):
    M, N = 61, 32
    x = torch.randn(programs, M, N)
    o = torch.full_like(x, 7.0)
    cnt = torch.zeros(programs, 2, dtype=torch.int32)
    rows_kernel[(programs,)](x, o, cnt, M, N=N, BM=4, num_threads=threads)
    torch.testing.assert_close(o, rows_ref(x))
    assert cnt.tolist() == [[1, 1]] * programs  # code before and after the loop: once per program


@triton.jit
def strided_kernel(x_ptr, o_ptr, start, stop, step: tl.constexpr, BLOCK: tl.constexpr):
    for s in smt.parallel(start, stop, step):
        offs = s * BLOCK + tl.arange(0, BLOCK)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) + s)


@triton.jit
def runtime_step_kernel(x_ptr, o_ptr, start, stop, step, BLOCK: tl.constexpr):
    for s in smt.parallel(start, stop, step):
        offs = s * BLOCK + tl.arange(0, BLOCK)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) + s)


def strided_ref(x, o, rng, block):
    ref = o.clone()
    for s in rng:
        ref[s * block:(s + 1) * block] = x[s * block:(s + 1) * block] + s
    return ref


@pytest.mark.parametrize("start,stop,step", [(0, 40, 1), (1, 40, 3), (39, -1, -2), (5, 5, 1), (9, 3, 1),
                                             (7, 8, 4)])
@pytest.mark.parametrize("threads", THREADS)
def test_steps_and_runtime_bounds(start, stop, step, threads):
    """constant steps (also negative), bounds known only at run time, zero- and one-trip loops"""
    B = 16
    x = torch.randn(40 * B)
    o = torch.full_like(x, -1.0)
    strided_kernel[(1,)](x, o, start, stop, step=step, BLOCK=B, num_threads=threads)
    torch.testing.assert_close(o, strided_ref(x, torch.full_like(x, -1.0), range(start, stop, step), B))
    o2 = torch.full_like(x, -1.0)
    runtime_step_kernel[(1,)](x, o2, start, stop, step, BLOCK=B, num_threads=threads)
    torch.testing.assert_close(o2, o)


@triton.jit
def nested_kernel(x_ptr, o_ptr, K, NB, BLOCK: tl.constexpr):
    """a parallel loop inside a sequential one (and another inside the parallel body)"""
    for k in range(K):
        for s in smt.parallel(0, NB):
            for t in smt.parallel(0, 2):
                offs = ((k * NB + s) * 2 + t) * BLOCK + tl.arange(0, BLOCK)
                tl.store(o_ptr + offs, tl.load(x_ptr + offs) * (k + 1))


@pytest.mark.parametrize("threads", THREADS)
def test_nested_in_normal_loop(threads):
    K, NB, B = 3, 5, 32
    x = torch.randn(K * NB * 2 * B)
    o = torch.zeros_like(x)
    nested_kernel[(1,)](x, o, K, NB, BLOCK=B, num_threads=threads)
    torch.testing.assert_close(o, x * torch.arange(1, K + 1).repeat_interleave(NB * 2 * B).float())


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, rs_ptr, M, K: tl.constexpr, N: tl.constexpr, BM: tl.constexpr):
    """each iteration: a BM-row block of C = A @ B (a tl.dot with its accumulator), and
    the row sums of that block (a reduction), both with per-iteration temporaries"""
    rk = tl.arange(0, K)
    rn = tl.arange(0, N)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    for i in smt.parallel(0, M // BM):
        rm = i * BM + tl.arange(0, BM)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        c = tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)
        tl.store(rs_ptr + rm, tl.sum(c, axis=1))


@pytest.mark.parametrize("threads", THREADS)
def test_dot_and_reduction_in_body(threads):
    M, K, N, BM = 128, 32, 32, 16
    a, b = torch.randn(M, K), torch.randn(K, N)
    c, rs = torch.empty(M, N), torch.empty(M)
    dot_kernel[(1,)](a, b, c, rs, M, K=K, N=N, BM=BM, num_threads=threads)
    ref = a @ b
    torch.testing.assert_close(c, ref, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(rs, ref.sum(1), rtol=1e-4, atol=1e-3)


@triton.jit
def scratch_kernel(x_ptr, o_ptr, NB, B: tl.constexpr):
    """a program-local buffer allocated inside the body: one per iteration"""
    for s in smt.parallel(0, NB):
        buf = smt.alloc((B,), type=tl.float32)
        offs = s * B + tl.arange(0, B)
        tl.store(buf, tl.load(x_ptr + offs) + s)
        tl.store(o_ptr + offs, tl.load(buf) * 3.0)


def test_body_local_buffer_per_iteration():
    NB, B = 64, 256
    x = torch.randn(NB * B)
    o = torch.empty_like(x)
    for _ in range(5):
        scratch_kernel[(1,)](x, o, NB, B=B, num_threads=2)
        torch.testing.assert_close(o, (x + torch.arange(NB).repeat_interleave(B)) * 3.0)


@triton.jit
def plain_kernel(x_ptr, o_ptr, NB, BLOCK: tl.constexpr):
    for s in smt.parallel(0, NB, bind_sub_block=False):
        offs = s * BLOCK + tl.arange(0, BLOCK)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) - 1.0)


def test_bind_sub_block_false_is_a_plain_loop():
    x = torch.randn(8 * 64)
    o = torch.empty_like(x)
    plain_kernel[(1,)](x, o, 8, BLOCK=64, num_threads=2)
    torch.testing.assert_close(o, x - 1.0)
    k = triton.compile(triton.compiler.ASTSource(plain_kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32", "NB": "i32"},
                                                 {"BLOCK": 64}))
    assert "bind_sub_block" not in k.asm["ttir"] and not k.metadata.smt_parallel_inside
    assert "tritium_parallel_for" not in k.asm["llir"]


def test_stages_show_the_parallel_loop():
    k = triton.compile(triton.compiler.ASTSource(strided_kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32", "start": "i32",
                                                                  "stop": "i32"}, {"step": 1, "BLOCK": 16}))
    assert "} {bind_sub_block = true}" in k.asm["ttir"] and k.metadata.smt_parallel_inside
    assert "{tritium.parallel}" in k.asm["ttsharedir"]
    assert "tritium_parallel_for" in k.asm["llir"]


# ---- the iterations run on more than one thread ---------------------------------------------------

@triton.jit
def await_flag(flag_ptr, seen_ptr, LIMIT: tl.constexpr):
    """polls *flag_ptr until it is set or LIMIT polls went by; stores what it saw"""
    seen = tl.atomic_add(flag_ptr, 0)
    i = 0
    while (seen == 0) & (i < LIMIT):
        seen = tl.atomic_add(flag_ptr, 0)
        i += 1
    tl.store(seen_ptr, seen)


@triton.jit
def handshake_kernel(flag_ptr, seen_ptr, LIMIT: tl.constexpr):
    """iteration 0 waits (at most LIMIT polls) for iteration 1 to raise a flag: it can
    only see it while it is still running if iteration 1 ran on another thread"""
    for s in smt.parallel(0, 2):
        if s == 0:
            await_flag(flag_ptr, seen_ptr, LIMIT)
        else:
            tl.atomic_xchg(flag_ptr, 1)


def test_iterations_overlap_with_an_idle_thread():
    flag, seen = torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32)
    handshake_kernel[(1,)](flag, seen, LIMIT=1 << 28, num_threads=2)
    assert seen.item() == 1 and flag.item() == 1


def test_no_overlap_when_every_thread_has_a_program():
    """grid (2,) on 2 threads: each loop stays on its program's thread, so iteration 0
    never sees iteration 1's flag (it runs first and gives up after LIMIT polls)"""
    flag, seen = torch.zeros(2, dtype=torch.int32), torch.zeros(2, dtype=torch.int32)

    @triton.jit
    def two(flag_ptr, seen_ptr, LIMIT: tl.constexpr):
        pid = tl.program_id(0)
        for s in smt.parallel(0, 2):
            if s == 0:
                await_flag(flag_ptr + pid, seen_ptr + pid, LIMIT)
            else:
                tl.atomic_xchg(flag_ptr + pid, 1)

    two[(2,)](flag, seen, LIMIT=1 << 16, num_threads=2)
    assert seen.tolist() == [0, 0] and flag.tolist() == [1, 1]


_SCOPES = """
import json
import triton.language.extra.smt as smt
import triton.profiler.language as pl
from triton.profiler.flags import flags
from triton.backends.spine_triton.proton import profiler
pl.enable_semantic("triton")
flags.instrumentation_on = True

@triton.jit
def scoped(x_ptr, o_ptr, NB, BLOCK: tl.constexpr):
    pl.enter_scope("outside")
    for s in smt.parallel(0, NB):
        pl.enter_scope("body")
        offs = s * BLOCK + tl.arange(0, BLOCK)
        acc = tl.load(x_ptr + offs)
        for k in range(64):
            acc = tl.sin(acc) * 0.5 + 0.25
        tl.store(o_ptr + offs, acc)
        pl.exit_scope("body")
    pl.exit_scope("outside")

NB, B = 128, 1024
x = torch.randn(NB * B)
o = torch.empty_like(x)
ref = x.clone()
for k in range(64):
    ref = torch.sin(ref) * 0.5 + 0.25
for attempt in range(3):
    with profiler.profile(output_path="trace.json"):
        scoped[(1,)](x, o, NB, BLOCK=B)
    torch.testing.assert_close(o, ref)
    trace = json.load(open("trace.json"))
    if len({e["tid"] for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("name") == "body"}) > 1:
        break
print("ATTEMPTS=%d" % (attempt + 1))
"""


def test_scopes_in_the_body_record_each_thread(tmp_path):
    """grid (1,), OMP_NUM_THREADS=2: in-kernel scopes inside the body land on the thread
    that ran the iteration; the trace stays well formed"""
    p = pu.run_child(_SCOPES, tmp_path, env={"OMP_NUM_THREADS": "2"}, name="scopes.py", timeout=300)
    assert p.returncode == 0 and "ATTEMPTS=" in p.stdout, pu.describe(p)
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert pu.validate_trace(trace) == []
    body = pu.events(trace, ph="X", name="body")
    outside = pu.events(trace, ph="X", name="outside")
    assert len(body) == 128 and len(outside) == 1
    assert len({e["tid"] for e in body}) == 2, "every iteration ran on one thread (3 attempts)"
    assert all(e["args"]["program"] == [0, 0, 0] for e in body)


def test_riscv64_cross_compile():
    """the outlined loop and the exported pointer on riscv64 (run under qemu by tests/riscv)"""
    from triton.backends.compiler import GPUTarget
    src = triton.compiler.ASTSource(rows_kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32", "cnt_ptr": "*i32", "M": "i32"},
                                    {"N": 32, "BM": 4})
    k = triton.compile(src, target=GPUTarget("cpu", "riscv64", 0))
    assert "riscv64" in k.asm["llir"] and "@tritium_parallel_for = protected" in k.asm["llir"]
    assert "tritium.par.0.run" in k.asm["asm"] and re.search(r"\bvseti?vli\b", k.asm["asm"])  # RVV code
    so = k.asm["so"]
    assert so[:4] == b"\x7fELF" and int.from_bytes(so[18:20], "little") == 0xF3
