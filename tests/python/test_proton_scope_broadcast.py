"""A zero-stride (broadcast) tile load inside an in-kernel scope: `tl.load(x_ptr + 0*r)`
reads one element into every lane. The scope boundary snapshots the load, and its
view used to be a memref with a zero stride ("strides must not be zero" at parse);
the view now has a size-1 dim read at index 0. Checked against torch, plain and
instrumented, 1-D, 2-D (a broadcast row and a broadcast column) and masked."""
import json

import proton_util as pu

CHILD = """
import json
import triton.profiler as proton
import triton.profiler.language as pl
from triton.profiler.flags import flags
pl.enable_semantic("triton")
flags.instrumentation_on = True

@triton.jit
def bcast1(x_ptr, out_ptr, n, N: tl.constexpr):
    r = tl.arange(0, N)
    pl.enter_scope("load")
    v = tl.load(x_ptr + 3 + 0 * r)
    w = tl.load(x_ptr + 0 * r, mask=r < n, other=-1.0)
    pl.exit_scope("load")
    tl.store(out_ptr + r, v * r + w)

@triton.jit
def bcast2(x_ptr, out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    pl.enter_scope("load")
    a = tl.load(x_ptr + 0 * r[:, None] + r[None, :])   # every row is x[0:N]
    b = tl.load(x_ptr + r[:, None] + 0 * r[None, :])   # every column is x[0:N]
    pl.exit_scope("load")
    tl.store(out_ptr + r[:, None] * N + r[None, :], a * 2.0 + b)

N = 16
x = torch.rand(N) + 1.0
ar = torch.arange(N, dtype=torch.float32)
want1 = x[3] * ar + torch.where(ar < 11, x[0], torch.tensor(-1.0))
want2 = x[None, :] * 2.0 + x[:, None]
res = {}
for on in (False, True):
    flags.instrumentation_on = on
    proton.start("p%d" % on, backend="cpu")
    o1, o2 = torch.zeros(N), torch.zeros(N * N)
    bcast1[(1,)](x, o1, 11, N=N)
    bcast2[(1,)](x, o2, N=N)
    proton.finalize()
    res[on] = (o1.clone(), o2.view(N, N).clone())
    # v * r + w may contract to one fma in the kernel: within an ulp of torch's
    torch.testing.assert_close(res[on][0], want1, rtol=1e-6, atol=0)
    assert torch.equal(res[on][1], want2), (on, res[on][1], want2)
assert torch.equal(res[False][0], res[True][0]) and torch.equal(res[False][1], res[True][1])
paths = tree_paths(load_json("p1.hatchet"))
print(json.dumps({"count1": paths[("ROOT", "bcast1", "load")]["scope_count"],
                  "count2": paths[("ROOT", "bcast2", "load")]["scope_count"]}))
"""


def test_broadcast_load_in_a_scope(tmp_path):
    p = pu.check_ok(pu.run_child(CHILD, tmp_path, {"PROTON_EVENTS": "none"}, timeout=300))
    res = json.loads(p.stdout.splitlines()[-1])
    assert res == {"count1": 1, "count2": 1}
