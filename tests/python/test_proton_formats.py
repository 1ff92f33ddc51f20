"""Output files read back by outside readers (issue 3 acceptance):

* Chrome traces checked by tests/proton/validate_trace.py (known ph, numeric ts,
  dur >= 0, balanced per-thread nesting, names on every M event) plus the kernel
  slices' args (grid, programs, threads, constexprs);
* .hatchet files loaded by llnl-hatchet (GraphFrame.from_literal on element 0) and
  displayed by upstream proton-viewer, both from the reference venv
  (~/.cache/tritium/ref-venv, made by scripts/setup.sh; a missing venv fails).

One child process writes every file: the kernel-capture store dumped through the
spine-triton profiler (cap.json, cap.hatchet), a tree session (sess.hatchet) and a trace session
(tr.chrome_trace), with host scopes, scope metrics, in-kernel scopes and 2 OpenMP
threads.
"""
import copy
import json
import math
import re
import subprocess

import pytest

import proton_util as pu

PRODUCER = """
import triton.profiler as proton
import triton.profiler.language as pl
from triton.profiler.flags import flags
from triton.backends.spine_triton.proton import profiler
pl.enable_semantic("triton")
flags.instrumentation_on = True
b = Bufs()
s = proton.start("sess", backend="cpu")
t = proton.start("tr", data="trace")
with proton.scope("step", metrics={"flops": 100.0, "bytes": 10}):
    launch_add(b, 2)
    launch_scoped(b, 2)
    with proton.cpu_timed_scope("inner"):
        launch_scale(b, 3)
launch_add(b, 1)
proton.finalize()
profiler.dump("cap.hatchet")
profiler.dump("cap.json")
print("DONE")
"""

# kernel nodes of the tree files: path -> count
TREE = {("ROOT", "step", "add_kernel"): 2, ("ROOT", "step", "scoped_kernel"): 2,
        ("ROOT", "step", "inner", "scale_kernel"): 3, ("ROOT", "add_kernel"): 1}
LAUNCHES = {"add_kernel": 3, "scoped_kernel": 2, "scale_kernel": 3}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    pu.warm_up()
    d = tmp_path_factory.mktemp("proton_formats")
    p = pu.check_ok(pu.run_child(PRODUCER, d, {"PROTON_KERNEL_CAPTURE": "1"}))
    assert p.stdout == "DONE\n"
    assert pu.child_files(d) == ["cap.hatchet", "cap.json", "sess.hatchet", "tr.chrome_trace"]
    return d


TRACES = ["cap.json", "tr.chrome_trace"]
HATCHETS = ["cap.hatchet", "sess.hatchet"]


# ---- Chrome trace ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", TRACES)
def test_trace_passes_validator(files, name):
    tr = pu.load_json(files / name)
    assert pu.validate_trace(tr) == []
    assert tr["displayTimeUnit"] in ("ns", "us", "ms")
    assert isinstance(tr["baseTimeNanoseconds"], int) and tr["baseTimeNanoseconds"] > 1_000_000_000 * 10 ** 9
    phs = {e["ph"] for e in tr["traceEvents"]}
    assert phs <= {"M", "X", "C"} and {"M", "X", "C"} <= phs
    ms = pu.events(tr, ph="M")
    assert all(isinstance(e["name"], str) and e["name"] for e in ms)
    assert len([e for e in ms if e["name"] == "process_name"]) == 1
    named = {e["tid"] for e in ms if e["name"] == "thread_name"}
    used = {e["tid"] for e in tr["traceEvents"] if e["ph"] != "M"}
    assert used <= named  # every track is named
    for e in tr["traceEvents"]:
        if e["ph"] == "M":
            assert "ts" not in e
            continue
        assert isinstance(e["ts"], (int, float)) and math.isfinite(e["ts"]) and e["ts"] >= 0
        if e["ph"] == "X":
            assert e["dur"] >= 0
    assert tr["otherData"]["dropped_events"] == 0


@pytest.mark.parametrize("name", TRACES)
def test_trace_kernel_events(files, name):
    tr = pu.load_json(files / name)
    ks = pu.kernel_events(tr)
    assert {n: len(pu.kernel_events(tr, n)) for n in LAUNCHES} == LAUNCHES and len(ks) == sum(LAUNCHES.values())
    for e in ks:
        a = e["args"]
        assert len(a["grid"]) == 3 and all(isinstance(g, int) for g in a["grid"])
        assert a["programs"] == a["grid"][0] * a["grid"][1] * a["grid"][2]
        assert 1 <= a["threads"] <= pu.NUM_THREADS
        assert a["constexprs"] == {"BLOCK": pu.BLOCK_SCALE if e["name"] == "scale_kernel" else pu.BLOCK_ADD}
        assert set(a["counters"]) == set(tr["otherData"]["events"])
        assert a["call_stack"][0] == "ROOT" and a["call_stack"][-1] == e["name"]
    stacks = sorted(tuple(e["args"]["call_stack"]) for e in ks)
    assert stacks == sorted([("ROOT", "step", "add_kernel")] * 2 + [("ROOT", "step", "scoped_kernel")] * 2 +
                            [("ROOT", "step", "inner", "scale_kernel")] * 3 + [("ROOT", "add_kernel")])
    # in-kernel scopes: one slice per program and launch, on the worker tracks
    for sc in ("load", "compute", "inner"):
        assert len(pu.events(tr, ph="X", cat="scope", name=sc)) == 2 * 4, sc
    # host scopes on the launching thread
    hs = pu.events(tr, ph="X", cat="host_scope")
    assert sorted(e["name"] for e in hs) == ["inner", "step"]


def test_validator_rejects_broken_traces(files):
    """The validator the suite relies on does catch what it claims to."""
    good = pu.load_json(files / "cap.json")
    assert pu.validate_trace(good) == []
    x = next(i for i, e in enumerate(good["traceEvents"]) if e["ph"] == "X" and e.get("cat") == "kernel")
    m = next(i for i, e in enumerate(good["traceEvents"]) if e["ph"] == "M")
    breakers = [
        lambda t: t["traceEvents"][x].update(ph="Q"),
        lambda t: t["traceEvents"][x].update(ts="12"),
        lambda t: t["traceEvents"][x].update(dur=-1.0),
        lambda t: t["traceEvents"][m].pop("name"),
        # a slice that starts inside the kernel slice and ends after it on the same track
        lambda t: t["traceEvents"].append(dict(t["traceEvents"][x], name="bad", ts=t["traceEvents"][x]["ts"] + 0.001,
                                               dur=t["traceEvents"][x]["dur"] + 5.0)),
    ]
    for i, brk in enumerate(breakers):
        bad = copy.deepcopy(good)
        brk(bad)
        assert pu.validate_trace(bad), f"breaker {i} not detected"


# ---- .hatchet -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", HATCHETS)
def test_hatchet_layout(files, name):
    text = (files / name).read_text()
    db = json.loads(text)
    assert isinstance(db, list) and len(db) == 2
    assert db[0]["frame"] == {"name": "ROOT", "type": "function"}
    assert pu.kernel_counts(db) == TREE
    paths = pu.tree_paths(db)
    k = ("ROOT", "step", "scoped_kernel")
    assert paths[k + ("compute", "inner")]["scope_count"] == 2 * 4
    assert paths[("ROOT", "step", "inner")]["cpu_time (ns)"] > 0
    assert paths[("ROOT", "step")] == {"flops": 100.0, "bytes": 10}
    for m in paths.values():
        assert not [key for key in m if "cycles" in key]
    # root hints (docs/formats.md §1): zeros that make hatchet aggregate these columns up the tree
    kernel_metrics = set().union(*(m for m in paths.values() if m.get("device_type") == "CPU"))
    counters = kernel_metrics - {"count", "time (ns)", "device_id", "device_type", "time_kind", "programs", "threads", "bytes",
                                 "flops16", "flops32", "flops64", "remarks"}  # remarks: a string, never hinted
    hinted = {"count", "time (ns)", "bytes", "flops", "flops32"} | counters
    assert set(db[0]["metrics"]) == hinted and set(db[0]["metrics"].values()) == {0}
    dev = db[1]["CPU"]["0"]
    assert {"arch", "model", "num_cores", "num_sms", "clock_rate", "counter_source", "clock_source"} <= set(dev)
    # the upstream layout: 4-space indent, sorted keys, leading/trailing newline (numbers compared by value)
    assert text.startswith("\n[\n    {\n") and text.endswith("\n]\n")
    assert _norm_numbers(text.strip()) == _norm_numbers(json.dumps(db, indent=4, sort_keys=True))


_NUM = re.compile(r'(?<=[:\[ ])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[,\n\]])')


def _norm_numbers(text):
    return _NUM.sub(lambda m: repr(float(m.group())) if re.search(r"[.eE]", m.group()) else m.group(), text)


@pytest.mark.parametrize("name", HATCHETS)
def test_hatchet_floats_like_nlohmann(files, name):
    text = (files / name).read_text()
    db = json.loads(text)
    assert text.strip() == json.dumps(db, indent=4, sort_keys=True)


HATCHET_READER = r"""
import json, sys
import hatchet as ht
out = {}
for path in sys.argv[1:]:
    with open(path) as f:
        db = json.load(f)
    gf = ht.GraphFrame.from_literal([db[0]])
    gf.update_inclusive_columns()
    df = gf.dataframe
    rows = []
    for node, row in df.iterrows():
        n = node[0] if isinstance(node, tuple) else node
        depth = 0
        p = n
        while p.parents:
            p = p.parents[0]
            depth += 1
        rows.append({"name": row["name"], "depth": depth, "count": None if row["count"] != row["count"] else
                     int(row["count"]), "time_inc": float(row["time (ns) (inc)"])})
    out[path] = rows
print(json.dumps(out))
"""


def test_llnl_hatchet_reads_files(files):
    py, _ = pu.ref_venv_python()
    r = subprocess.run([py, "-c", HATCHET_READER, *(str(files / h) for h in HATCHETS)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for h in HATCHETS:
        rows = out[str(files / h)]
        db = pu.load_json(files / h)
        paths = pu.tree_paths(db)
        assert len(rows) == len(paths)
        assert sorted((r_["name"], r_["depth"]) for r_ in rows) == sorted((p[-1], len(p) - 1) for p in paths)
        kernels = {p: m for p, m in paths.items() if m.get("device_type") == "CPU"}
        got = sorted((r_["name"], r_["count"]) for r_ in rows if r_["name"] in LAUNCHES)
        assert got == sorted((p[-1], c) for p, c in TREE.items())
        root = next(r_ for r_ in rows if r_["name"] == "ROOT")
        assert root["time_inc"] == sum(m["time (ns)"] for m in kernels.values())


@pytest.mark.parametrize("name", HATCHETS)
def test_proton_viewer_displays_files(files, name):
    _, viewer = pu.ref_venv_python()
    r = subprocess.run([viewer, "-m", "time/ns", str(files / name)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    names = [ln.split()[-1] for ln in lines if ln.strip()]
    for want in ("ROOT", "step", "inner", "add_kernel", "scale_kernel", "scoped_kernel", "load", "compute"):
        assert want in names, r.stdout
    root = next(ln for ln in lines if ln.endswith(" ROOT"))
    total = sum(m["time (ns)"] for m in pu.tree_paths(pu.load_json(files / name)).values() if "time (ns)" in m)
    assert float(root.split()[0]) == pytest.approx(total)
    r = subprocess.run([viewer, "-m", "count", str(files / name)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert any(ln.split()[0] == "8.000" and ln.endswith("ROOT") for ln in r.stdout.splitlines()), r.stdout
