"""In-kernel scopes: what they cost and whether they measure what they name (issue 12).

One thread (OMP_NUM_THREADS=1, torch.set_num_threads(1)), CPU time of the calling
thread (time.thread_time: the launch runs inline), medians of interleaved rounds:

- an instrumented kernel while nothing records against the same kernel compiled
  plain (target: within 3%; it runs its plain twin then);
- an in-kernel scope pair while a session records: a kernel with 8 empty scope pairs
  per program against the same kernel without them (target <= 30 ns per pair);
- a load-only scope over a 256 MB array: the bytes it loads over its wall time,
  against the read bandwidth torch.sum measures on the same array in between
  (target: within 25%).
"""
import os
import subprocess
import sys
import tempfile

_CODE = r'''
import json, os, statistics, time, torch, triton, triton.language as tl
import triton.profiler as proton
import triton.profiler.language as pl
from triton.profiler.flags import flags
pl.enable_semantic("triton")
torch.set_num_threads(1)

def kernels():
    @triton.jit
    def axpb(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        pl.enter_scope("load")
        x = tl.load(x_ptr + offs, mask=m)
        pl.exit_scope("load")
        pl.enter_scope("compute")
        y = x * 2.0 + 1.0
        pl.exit_scope("compute")
        pl.enter_scope("store")
        tl.store(y_ptr + offs, y, mask=m)
        pl.exit_scope("store")

    @triton.jit
    def pairs(x_ptr, SCOPES: tl.constexpr):
        v = tl.load(x_ptr + tl.program_id(0))
        if SCOPES:
            for _ in tl.static_range(8):
                pl.enter_scope("s")
                pl.exit_scope("s")
        tl.store(x_ptr + tl.program_id(0), v + 1.0)

    @triton.jit
    def loadsum(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        pl.enter_scope("load")
        v = tl.load(x_ptr + offs)
        pl.exit_scope("load")
        tl.store(y_ptr + tl.program_id(0), tl.sum(v, 0))
    return axpb, pairs, loadsum

def cpu(f, reps=1):
    t0 = time.thread_time()
    for _ in range(reps):
        f()
    return (time.thread_time() - t0) / reps

out = {}
# 1. recording off: instrumented vs plain
n = 4 * 1024 * 1024
x, y = torch.randn(n), torch.empty(n)
g = (n // 1024,)
flags.instrumentation_on = False
plain = kernels()[0]
plain[g](x, y, n, BLOCK=1024)
flags.instrumentation_on = True
inst = kernels()[0]
inst[g](x, y, n, BLOCK=1024)
rp, ri = [], []
for r in range(40):
    flags.instrumentation_on = False
    rp.append(cpu(lambda: plain[g](x, y, n, BLOCK=1024)))
    flags.instrumentation_on = True
    ri.append(cpu(lambda: inst[g](x, y, n, BLOCK=1024)))
out["off_ratio"] = statistics.median(ri) / statistics.median(rp)

# 2. scope pairs while recording
flags.instrumentation_on = True
pairs = kernels()[1]
z = torch.zeros(4096)
P = 4096
sid = proton.start(os.path.join("{dir}", "pairs"), backend="cpu")
for s in (False, True):
    pairs[(P,)](z, SCOPES=s)
r0, r1 = [], []
for r in range(15):
    r0.append(cpu(lambda: pairs[(P,)](z, SCOPES=False), 5))
    r1.append(cpu(lambda: pairs[(P,)](z, SCOPES=True), 5))
proton.finalize(sid)
out["pair_ns"] = (statistics.median(r1) - statistics.median(r0)) / (P * 8) * 1e9

# 3. a load-only scope against the read bandwidth
n = 64 * 1024 * 1024
B = 4096
x, y = torch.randn(n), torch.empty(n // B)
loadsum = kernels()[2]
loadsum[(n // B,)](x, y, BLOCK=B)
sid = proton.start(os.path.join("{dir}", "bw"), backend="cpu")
proton.deactivate(sid)
bw, sc = [], []
for r in range(5):
    bw.append(n * 4 / cpu(lambda: x.sum()))
    proton.activate(sid)
    loadsum[(n // B,)](x, y, BLOCK=B)
    proton.deactivate(sid)
proton.finalize(sid)
t = json.load(open(os.path.join("{dir}", "bw.hatchet")))[0]
ld = [c for c in t["children"][0]["children"] if c["frame"]["name"] == "load"][0]["metrics"]
out["read_bw"] = statistics.median(bw) / 1e9
out["scope_bw"] = ld["scope_bytes"] / ld["scope_time (ns)"]
print(json.dumps(out))
'''


def run(report):
    from bench_proton import cpu_model
    report(f"CPU: {cpu_model()}, one thread, CPU time of the launching thread")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "b.py")
        with open(path, "w") as f:
            f.write(_CODE.replace("{dir}", d))
        env = dict(os.environ, OMP_NUM_THREADS="1", PROTON_EVENTS="none")
        p = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, check=True)
    import json
    r = json.loads(p.stdout.strip().splitlines()[-1])
    report(f"instrumented kernel, nothing recording / plain:   {r['off_ratio']:.3f}  (target <= 1.03)")
    report(f"in-kernel scope pair while recording:             {r['pair_ns']:.1f} ns  (target <= 30)")
    report(f"load-only scope: {r['scope_bw']:.2f} GB/s against torch.sum's read bandwidth "
           f"{r['read_bw']:.2f} GB/s: ratio {r['scope_bw'] / r['read_bw']:.2f}  (target 0.75-1.25)")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    run(print)
