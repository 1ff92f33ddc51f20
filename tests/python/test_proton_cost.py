"""Static bytes and flops that count loops (issue 12): a kernel's cost per launch
is the compiler's per-loop cost times the trip counts the launch really ran,
evaluated by the runtime from the arguments (runtime/src/rt_cost.c). The totals
are compared with counts worked out by hand from the kernel's shapes; results are
checked against torch. Also: an in-kernel scope around an inner loop nested in an
outer loop compiles and counts programs x trips x launches."""
import json

import pytest
import torch
import triton
import triton.language as tl
import triton.profiler as proton

import proton_util as pu


@triton.jit
def rowsum_kernel(x, y, N, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c in range(0, N, BLOCK):
        offs = c + tl.arange(0, BLOCK)
        acc += tl.load(x + r * N + offs, mask=offs < N, other=0.0)
    tl.store(y + r, tl.sum(acc, 0))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK * sak
        b += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc)


@triton.jit
def layernorm_kernel(X, Y, W, B, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    _mean = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        _mean += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


def _kernel_metrics(tmp_path, name, run):
    """Runs run() in a session; returns {kernel name: metrics} from its .hatchet."""
    path = str(tmp_path / name)
    s = proton.start(path, backend="cpu")
    try:
        run()
    finally:
        proton.finalize()  # every session: also clears flags.profiling_on for later tests
    assert s is not None
    tree = json.load(open(path + ".hatchet"))[0]
    return {n["frame"]["name"]: n["metrics"] for n in tree["children"]}


@pytest.mark.parametrize("n", [1024, 1000], ids=["unmasked", "masked"])
def test_rowsum_chunk_loop(tmp_path, n):
    R, BLOCK, launches = 64, 256, 2
    x = torch.randn(R, n)
    y = torch.empty(R)

    def run():
        for _ in range(launches):
            rowsum_kernel[(R,)](x, y, n, BLOCK=BLOCK)

    m = _kernel_metrics(tmp_path, "rowsum", run)["rowsum_kernel"]
    torch.testing.assert_close(y, x.sum(1), rtol=1e-4, atol=1e-3)
    chunks = -(-n // BLOCK)
    programs = R * launches
    full = programs * (chunks * BLOCK * 4 + 4)   # whole tiles read, one float stored
    valid = programs * (n * 4 + 4)               # the elements inside the mask
    if n % BLOCK == 0:
        assert m["bytes"] == full == valid
    else:
        assert valid <= m["bytes"] <= full, (m["bytes"], valid, full)
    # the accumulator tile is only summed after the loop, so ir_accum carries a scalar:
    # per chunk BLOCK - 1 adds to reduce it and one into the carried sum
    assert m["flops32"] == programs * chunks * BLOCK
    assert "cost_per_iteration_launches" not in m


def test_matmul_k_loop(tmp_path):
    M, N, K, BM, BN, BK = 128, 96, 160, 32, 32, 16
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.empty(M, N)

    def run():
        matmul_kernel[(M // BM, N // BN)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                          c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK)

    m = _kernel_metrics(tmp_path, "mm", run)["matmul_kernel"]
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)
    programs = (M // BM) * (N // BN)
    assert m["flops32"] == 2 * M * N * K
    # each program reads its BM x K strip of A and K x BN strip of B, writes BM x BN
    assert m["bytes"] == programs * 4 * (BM * K + K * BN + BM * BN)


def test_layer_norm(tmp_path):
    R, C, BLOCK = 32, 512, 128
    x, w, b = torch.randn(R, C), torch.randn(C), torch.randn(C)
    y = torch.empty(R, C)

    def run():
        layernorm_kernel[(R,)](x, y, w, b, x.stride(0), C, 1e-5, BLOCK=BLOCK)

    m = _kernel_metrics(tmp_path, "ln", run)["layernorm_kernel"]
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (C,), w, b), rtol=1e-4, atol=1e-4)
    # reads: x three times, w and b once; writes y
    assert m["bytes"] == R * 4 * (5 * C + C)
    # per row: C adds (mean), 3C (sub, mul, add: variance), 4C (sub, mul, mul, add: output),
    # and 5 scalar ops (/N twice, +eps, sqrt, 1/); the accumulators are only summed after
    # their loops, so ir_accum reduces each chunk (BLOCK - 1 adds) into a carried scalar (1)
    assert m["flops32"] == R * (8 * C + 5)


NESTED = """
import triton.profiler.language as pl
from triton.profiler.flags import flags
from triton.backends.spine_triton.proton import profiler
pl.enable_semantic("triton")

@triton.jit
def nested(x, y, M, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, M):
        pl.enter_scope("inner")
        for j in range(0, N):
            acc += tl.load(x + (i * N + j) * BLOCK + tl.arange(0, BLOCK))
        pl.exit_scope("inner")
    tl.store(y + pid * BLOCK + tl.arange(0, BLOCK), acc)

M, N, BLOCK, P, L = 3, 4, 16, 5, 2
x = torch.randn(M * N * BLOCK)
ref = x.view(M * N, BLOCK).sum(0)
outs = []
for on in (False, True):
    flags.instrumentation_on = on
    y = torch.zeros(P * BLOCK)
    with profiler.profile(output_path=f"n{int(on)}.hatchet"):
        for _ in range(L):
            nested[(P,)](x, y, M, N, BLOCK=BLOCK)
    outs.append(y.clone())
    torch.testing.assert_close(y.view(P, BLOCK)[0], ref, rtol=1e-5, atol=1e-5)
assert torch.equal(outs[0], outs[1])  # identical with and without instrumentation
print("DONE")
"""


def test_scope_around_inner_loop_in_outer_loop(tmp_path):
    p = pu.check_ok(pu.run_child(NESTED, tmp_path))
    assert p.stdout == "DONE\n"
    on = pu.tree_paths(pu.load_json(tmp_path / "n1.hatchet"))
    k = ("ROOT", "nested")
    assert on[k]["count"] == 2
    assert on[k + ("inner",)]["scope_count"] == 5 * 3 * 2  # programs x outer trips x launches
    # the scope's static cost: every trip of the inner loop it holds, on every trip outside
    assert on[k + ("inner",)]["scope_bytes"] == 5 * 2 * 3 * 4 * 16 * 4
    assert on[k + ("inner",)]["scope_flops32"] == 5 * 2 * 3 * 4 * 16
    assert on[k]["bytes"] == 5 * 2 * (3 * 4 * 16 * 4 + 16 * 4)
    off = pu.tree_paths(pu.load_json(tmp_path / "n0.hatchet"))
    assert set(off) == {("ROOT",), k}
    assert off[k]["bytes"] == on[k]["bytes"] and off[k]["flops32"] == on[k]["flops32"]
