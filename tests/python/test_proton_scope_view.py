"""In-kernel scopes seen as a user sees them (issue 12): the seed's default flow
(`with profiler.profile():`, no output path) prints each kernel's scope breakdown on
the console and get_results() returns it; scope nodes carry wall time (`scope_time
(ns)`: per launch the longest one thread spent in the scope) and time summed over
threads (`scope_cpu_time (ns)`), so nested wall times never exceed their parent;
`proton-cli report` shows scope rows for time/ms, avg_time/us, count, time/% under a
header naming each column and its unit."""
import json
import subprocess

import proton_util as pu

SEED = """
import json
import triton.profiler.language as pl
from triton.profiler.flags import flags
from triton.backends.spine_triton.proton import profiler
pl.enable_semantic("triton")
flags.instrumentation_on = True
b = Bufs()
launch_scoped(b, 1)  # compiled outside the profile
with profiler.profile():
    launch_scoped(b, 3)
print(json.dumps(profiler.get_results()))
with profiler.profile(output_path="k.hatchet"):
    launch_scoped(b, 3)
"""

PROGRAMS = pu.GRID_ADD[0]


def test_default_flow_shows_scopes(tmp_path):
    p = pu.check_ok(pu.run_child(SEED, tmp_path, {"OMP_NUM_THREADS": "2"}))
    table = pu.parse_console(p.stderr)
    key = f"scoped_kernel[{PROGRAMS},1,1]"
    assert table["rows"][key]["count"] == 3
    sc = table["scopes"][key]
    assert set(sc) == {"load", "compute", "compute/inner"}, p.stderr
    kernel_total = table["rows"][key]["times"][0]
    for name, r in sc.items():
        assert r["count"] == PROGRAMS * 3, name
        assert 0 < r["total"] <= kernel_total and 0 <= r["pct"] <= 100.0, (name, r)
        assert r["cpu"] >= r["total"], (name, r)  # a sum over threads is at least its longest
    assert sc["compute/inner"]["total"] <= sc["compute"]["total"]
    res = json.loads(p.stdout.splitlines()[-1])[key]
    assert res["count"] == 3
    assert set(res["scopes"]) == {"load", "compute", "compute/inner"}
    for name, r in res["scopes"].items():
        assert r["count"] == PROGRAMS * 3
        assert 0 < r["total_ns"] <= res["total_ns"]
        assert r["cpu_ns"] >= r["total_ns"]
        assert abs(r["avg_ns"] - r["cpu_ns"] / r["count"]) <= 1e-6 * r["cpu_ns"] + 1e-9
        assert abs(r["percent_of_kernel"] - 100.0 * r["total_ns"] / res["total_ns"]) < 1e-6
    assert res["scopes"]["compute/inner"]["total_ns"] <= res["scopes"]["compute"]["total_ns"]

    # the tree: wall times nest, sums over threads are kept beside them
    paths = pu.tree_paths(pu.load_json(tmp_path / "k.hatchet"))
    k = ("ROOT", "scoped_kernel")
    assert paths[k]["time_kind"] == "wall"
    for sc in (k + ("load",), k + ("compute",), k + ("compute", "inner")):
        m = paths[sc]
        assert m["time_kind"] == "wall"
        assert m["scope_count"] == PROGRAMS * 3
        assert 0 < m["scope_time (ns)"] <= m["scope_cpu_time (ns)"]
        parent = paths[sc[:-1]]
        assert m["scope_time (ns)"] <= parent.get("scope_time (ns)", parent.get("time (ns)"))
    assert paths[k + ("load",)]["scope_time (ns)"] + paths[k + ("compute",)]["scope_time (ns)"] <= \
        paths[k]["time (ns)"]
    # static cost per scope: the masked load of BLOCK floats (whole tiles: an upper
    # bound of the n valid ones), x * 2.0 + 1.0 in compute and in the nested inner
    launches = 3
    assert launches * pu.N * 4 <= paths[k + ("load",)]["scope_bytes"] <= launches * PROGRAMS * pu.BLOCK_ADD * 4
    assert "scope_flops32" not in paths[k + ("load",)]
    for sc in (k + ("compute",), k + ("compute", "inner")):
        assert paths[sc]["scope_flops32"] == launches * PROGRAMS * pu.BLOCK_ADD * 2
        assert "scope_bytes" not in paths[sc]
    # the kernel: the load and the store
    assert paths[k]["bytes"] == launches * PROGRAMS * pu.BLOCK_ADD * 4 * 2

    # proton-cli: scope rows in the time, avg, count and % columns, under a header
    out = subprocess.run([pu.PROTON_CLI, "report", "-m", "time/ms,avg_time/us,count,time/%",
                          str(tmp_path / "k.hatchet")], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0] == ("# time/ms [ms, wall] | avg_time/us [us per count, wall] | "
                        "count [launches; scopes: executions] | time/% [% of time] | name"), lines[0]
    rows = {ln.split()[-1]: ln for ln in lines[1:]}
    for name in ("load", "compute", "inner"):
        vals = rows[name].split()[-5:-1]  # after the tree connectors
        assert "-" not in vals, rows[name]
        assert float(vals[2]) == PROGRAMS * 3
    kern = [float(v) for v in rows["scoped_kernel"].split()[-5:-1]]
    for name in ("load", "compute", "inner"):
        assert float(rows[name].split()[-5]) <= kern[0]  # wall time under the kernel's


TWIN = """
import triton.profiler.language as pl
from triton.profiler.flags import flags
from triton.backends.spine_triton.proton import profiler
from triton.compiler.compiler import CompiledKernel
pl.enable_semantic("triton")
b = Bufs()
flags.instrumentation_on = True
k = scoped_kernel.warmup(b.x, b.o, b.n, BLOCK=BLOCK_ADD, grid=GRID_ADD)
plain = k._c.plain
assert plain is not None and plain.plain is None
asm_on, asm_off = k.asm["asm"], CompiledKernel(plain).asm["asm"]
print("on", asm_on.count("callq\\t*"), "memcpy" in asm_on or "malloc" in asm_on)
print("off", asm_off.count("callq"), "memcpy" in asm_off or "malloc" in asm_off)
launch_scoped(b, 2)  # nothing records: the plain twin runs (and is right)
with profiler.profile(output_path="k.hatchet"):
    launch_scoped(b, 1)  # recording: the instrumented kernel runs
flags.instrumentation_on = False
k2 = scoped_kernel.warmup(b.x, b.o, b.n, BLOCK=BLOCK_ADD, grid=GRID_ADD)
print("same", CompiledKernel(k2._c).asm["asm"] == asm_off)
"""


def test_instrumented_kernel_runs_its_plain_twin_when_not_recording(tmp_path):
    p = pu.check_ok(pu.run_child(TWIN, tmp_path))
    lines = p.stdout.splitlines()
    on, off, same = lines[0].split(), lines[1].split(), lines[2]
    assert int(on[1]) >= 6  # three scope pairs call the recorder
    assert off == ["off", "0", "False"]  # the twin: no record calls, no copies, no allocations
    assert same == "same True"  # it is the kernel compiled with instrumentation off
    paths = pu.tree_paths(pu.load_json(tmp_path / "k.hatchet"))
    assert paths[("ROOT", "scoped_kernel", "load")]["scope_count"] == PROGRAMS


SEED_LCS = """
import triton.profiler.language as pl
from triton.profiler.flags import flags
from triton.backends.spine_triton.proton import profiler
pl.enable_semantic("triton")
flags.instrumentation_on = True

@triton.jit
def lcs(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    pl.enter_scope("load")
    v = tl.load(x_ptr + offs, mask=offs < n)
    pl.exit_scope("load")
    pl.enter_scope("compute")
    y = v * 2.0 + 1.0
    pl.exit_scope("compute")
    pl.enter_scope("store")
    tl.store(out_ptr + offs, y, mask=offs < n)
    pl.exit_scope("store")

n = 5000
x, out = torch.rand(n), torch.zeros(n)
with profiler.profile():
    lcs[(5,)](x, out, n, BLOCK=1024)
assert torch.equal(out, x * 2.0 + 1.0)
"""


def test_seed_load_compute_store_rows_without_output_path(tmp_path):
    # issue 12 acceptance: the seed's in-kernel example prints its load / compute /
    # store rows on the console when the profile has no output path
    p = pu.check_ok(pu.run_child(SEED_LCS, tmp_path))
    table = pu.parse_console(p.stderr)
    assert table is not None, p.stderr
    sc = table["scopes"]["lcs[5,1,1]"]
    assert set(sc) == {"load", "compute", "store"}, p.stderr
    for name, r in sc.items():
        assert r["count"] == 5, (name, r)
        assert r["total"] > 0, (name, r)
    assert pu.child_files(tmp_path) == [], pu.child_files(tmp_path)  # no output path: no file
