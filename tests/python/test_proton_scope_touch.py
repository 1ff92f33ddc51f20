"""A scope boundary reads the loads defined in its scope in place (issue 12 item 2,
compiler/src/lo_emit_touch.c): a view load is folded into an inline-asm sink at the
boundary instead of being copied, and its consumers after the boundary still read the
argument's memory. Results must not change: instrumented and plain kernels are checked
against torch for 1-D, masked (with `other`), 2-D strided and masked 2-D tiles, integer,
fp16 and int8 elements, a load in a scope inside a loop, and a load whose memory is
overwritten after the scope (the plan snapshots that one). The dumped assembly of a
load-only scope kernel has no memcpy and no allocation."""
import glob
import json
import os

import proton_util as pu

CHILD = """
import glob, json, os
import triton.profiler as proton
import triton.profiler.language as pl
from triton.profiler.flags import flags
pl.enable_semantic("triton")

@triton.jit
def k1(x_ptr, out_ptr, n, B: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    pl.enter_scope("load")
    x = tl.load(x_ptr + offs, mask=offs < n, other=2.5)
    pl.exit_scope("load")
    tl.store(out_ptr + offs, x * 3.0 + 1.0, mask=offs < n)

@triton.jit
def k2(x_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    pl.enter_scope("load")
    a = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=m, other=0.0)
    pl.exit_scope("load")
    tl.store(out_ptr + rm, tl.sum(a, axis=1), mask=rm < M)

@triton.jit
def kint(x_ptr, y_ptr, z_ptr, out_ptr, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    pl.enter_scope("load")
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.load(z_ptr + offs)
    pl.exit_scope("load")
    tl.store(out_ptr + offs, x + y.to(tl.int32) * 7 + z.to(tl.int32))

@triton.jit
def kloop(x_ptr, out_ptr, K, B: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((B,), dtype=tl.float32)
    for k in range(0, K):
        pl.enter_scope("load")
        x = tl.load(x_ptr + (pid * K + k) * B + tl.arange(0, B))
        pl.exit_scope("load")
        acc += x * (k + 1)
    tl.store(out_ptr + pid * B + tl.arange(0, B), acc)

@triton.jit
def kalias(x_ptr, out_ptr, B: tl.constexpr):
    pl.enter_scope("load")
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    pl.exit_scope("load")
    y = x + 1.0                                               # lazy: reads x's memory later
    tl.store(x_ptr + offs, tl.full((B,), -1.0, tl.float32))   # overwrites what x read
    tl.store(out_ptr + offs, y)

torch.manual_seed(0)
n = 1000
x1 = torch.rand(n)
want1 = x1 * 3.0 + 1.0
M, N, stride = 37, 24, 40
x2 = torch.rand(M * stride)
want2 = x2.view(M, stride)[:, :N].sum(1)
xi = torch.randint(-1000, 1000, (512,), dtype=torch.int32)
yi = torch.randn(512).to(torch.float16)
zi = torch.randint(-100, 100, (512,), dtype=torch.int8)
wanti = xi + yi.to(torch.int32) * 7 + zi.to(torch.int32)
K, B = 5, 64
xl = torch.rand(3 * K * B)
wantl = sum(xl.view(3, K, B)[:, k] * (k + 1) for k in range(K)).reshape(-1)
xa0 = torch.rand(256)
res = {}
for on in (False, True):
    flags.instrumentation_on = on
    proton.start("p%d" % on, backend="cpu")
    o1 = torch.zeros(n); k1[(triton.cdiv(n, 128),)](x1, o1, n, B=128)
    o2 = torch.zeros(M); k2[(triton.cdiv(M, 8),)](x2, o2, M, N, stride, BM=8, BN=32)
    oi = torch.zeros(512, dtype=torch.int32); kint[(4,)](xi, yi, zi, oi, B=128)
    ol = torch.zeros(3 * B); kloop[(3,)](xl, ol, K, B=B)
    xa = xa0.clone(); oa = torch.zeros(256); kalias[(2,)](xa, oa, B=128)
    proton.finalize()
    torch.testing.assert_close(o1, want1, rtol=1e-6, atol=0)
    torch.testing.assert_close(o2, want2, rtol=1e-5, atol=1e-5)
    assert torch.equal(oi, wanti), (on, oi, wanti)
    torch.testing.assert_close(ol, wantl, rtol=1e-5, atol=1e-5)
    assert torch.equal(oa, xa0 + 1.0) and torch.equal(xa, torch.full((256,), -1.0)), on
    res[on] = [t.clone() for t in (o1, o2, oi, ol, oa)]
assert all(torch.equal(a, b) for a, b in zip(res[False], res[True]))
paths = tree_paths(load_json("p1.hatchet"))
counts = {k: paths[("ROOT", k, "load")]["scope_count"] for k in ("k1", "k2", "kint", "kloop", "kalias")}
flags.instrumentation_on = True
os.environ["SPINE_TRITON_DUMP_PATH"] = os.path.abspath("dump")
x = torch.rand(8 * 4096); out = torch.empty(8)
load_only[(8,)](x, out, BLOCK=4096)
torch.testing.assert_close(out, x.view(8, 4096).sum(1), rtol=1e-5, atol=1e-3)
asm = open(glob.glob("dump/**/load_only*.s", recursive=True)[0]).read()
print(json.dumps({"counts": counts,
                  "calls": sorted(set(l.split()[1] for l in asm.splitlines() if l.strip().startswith("call")))}))
"""


def test_scope_loads_read_in_place(tmp_path):
    p = pu.check_ok(pu.run_child(CHILD, tmp_path, {"PROTON_EVENTS": "none", "TRITON_ALWAYS_COMPILE": "1"},
                                 timeout=600))
    res = json.loads(p.stdout.splitlines()[-1])
    assert res["counts"] == {"k1": 8, "k2": 5, "kint": 4, "kloop": 3 * 5, "kalias": 2}
    # the two proton.record calls through the context, nothing else (no memcpy, malloc)
    assert res["calls"] and all(c.startswith("*") for c in res["calls"]), res["calls"]
