"""Sessions and host scopes: `import triton.profiler as proton` (issue 3 item 2) with
the upstream semantics of reference/proton.md §1 and the upstream tests listed in §7.

These run in the pytest process (sessions are not configured by the environment).
Every test runs in its own temporary cwd and the fixture finalizes whatever is left,
so no session leaks into another test (or into a file in the repository at exit).
"""
import json
import os
import re
import threading
import time

import importlib

import pytest

import proton_util as pu
import triton
import triton.profiler as proton
from triton._C import tritium as _C
from triton.profiler.flags import flags

_scope_mod = importlib.import_module("triton.profiler.scope")


@pytest.fixture(scope="module", autouse=True)
def _warm():
    pu.warm_up()


@pytest.fixture(autouse=True)
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    proton.finalize()
    st = _scope_mod._stack()
    while st:  # scopes a test left open (type-mismatch, finalize-inside-scope cases)
        _, sid = st.pop()
        _C.pn_scope_exit(sid)
    flags.profiling_on = False
    flags.instrumentation_on = False


@pytest.fixture
def bufs():
    return pu.Bufs()


def _raises(exc, msg, fn, *a, **kw):
    with pytest.raises(exc) as ei:
        fn(*a, **kw)
    assert str(ei.value) == msg
    return ei


# ---- module layout ---------------------------------------------------------------------------

def test_public_names():
    for name in ("start", "activate", "deactivate", "finalize", "profile", "scope", "cpu_timed_scope", "enter_scope",
                 "exit_scope", "context", "data", "hooks", "language", "flags"):
        assert hasattr(proton, name), name
    assert proton.DEFAULT_PROFILE_NAME == "proton"
    from triton.profiler import proton as proton2
    for name in ("start", "activate", "deactivate", "finalize", "profile", "scope", "cpu_timed_scope", "enter_scope",
                 "exit_scope"):
        assert getattr(proton2, name) is getattr(proton, name), name
    assert triton.profiler is proton


# ---- start -----------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["cpu", None])
def test_start_accepts_cpu_and_none(cwd, backend):
    sid = proton.start("b", backend=backend)
    assert isinstance(sid, int) and sid >= 0
    assert flags.profiling_on is True
    proton.finalize()
    assert flags.profiling_on is False
    assert (cwd / "b.hatchet").exists()


@pytest.mark.parametrize("kw,value,msg", [
    ("backend", "x", "Unknown profiler: x"),
    ("context", "x", "Unknown context source: x"),
    ("data", "x", "Unknown data: x"),
    ("hook", "x", "Unsupported hook: 'x'"),
])
def test_start_unknown_values(cwd, kw, value, msg):
    _raises(ValueError, msg, proton.start, "u", **{kw: value})
    assert not os.listdir(cwd)


def test_start_context_and_data_case_insensitive(cwd):
    s = proton.start("ci", context="SHADOW", data="Tree")
    assert s is not None
    proton.finalize()
    assert (cwd / "ci.hatchet").exists()


def test_session_ids_increase_and_are_never_reused(cwd):
    s0 = proton.start("a")
    proton.finalize(s0)
    s1 = proton.start("b")
    assert s1 == s0 + 1
    s2 = proton.start("c")
    assert s2 == s1 + 1
    proton.finalize()
    s3 = proton.start("a")  # the path of a finalized session: a new session
    assert s3 == s2 + 1
    proton.finalize()


def test_same_path_same_session(cwd, bufs):
    s = proton.start("same")
    pu.launch_add(bufs, 2)
    proton.deactivate(s)
    assert proton.start("same") == s  # re-activates, data accumulates
    assert proton.start(str(cwd / "other")) == s + 1
    pu.launch_add(bufs, 3)
    proton.finalize()
    assert pu.kernel_counts(pu.load_json(cwd / "same.hatchet")) == {("ROOT", "add_kernel"): 5}
    assert pu.kernel_counts(pu.load_json(cwd / "other.hatchet")) == {("ROOT", "add_kernel"): 3}


def test_mode_mismatch(cwd):
    msg = "Cannot add a session with the same profiler but a different mode than existing sessions"
    s = proton.start("m1")
    _raises(ValueError, msg, proton.start, "m2", mode="pcsampling")
    proton.deactivate(s)  # a deactivated session still counts
    _raises(ValueError, msg, proton.start, "m2", mode="pcsampling")
    proton.finalize(s)  # only finalizing clears it
    assert proton.start("m2", mode="pcsampling") == s + 1


# ---- activate / deactivate / finalize --------------------------------------------------------

def test_activate_deactivate(cwd, bufs):
    s = proton.start("ad")
    with proton.scope("on"):
        pu.launch_add(bufs, 2)
    proton.deactivate(s)
    proton.deactivate(s)  # twice: a no-op
    with proton.scope("off", metrics={"m": 1.0}):
        pu.launch_add(bufs, 5)
        pu.launch_scale(bufs, 1)
    proton.activate(s)
    proton.activate(s)
    with proton.scope("on"):
        pu.launch_add(bufs, 1)
    proton.finalize(s)
    db = pu.load_json(cwd / "ad.hatchet")
    assert pu.kernel_counts(db) == {("ROOT", "on", "add_kernel"): 3}
    assert not pu.find_nodes(db, "off")
    assert not pu.find_nodes(db, "scale_kernel")
    assert "device_id" not in db[0]["metrics"]


def test_deactivating_one_session_keeps_the_others_balanced(cwd, bufs):
    s0, s1 = proton.start("bal0"), proton.start("bal1")
    proton.enter_scope("a")
    proton.deactivate(s0)
    proton.enter_scope("b")
    pu.launch_add(bufs)
    proton.exit_scope("b")
    proton.activate(s0)
    pu.launch_scale(bufs)
    proton.exit_scope("a")
    pu.launch_add(bufs)
    proton.finalize()
    assert pu.kernel_counts(pu.load_json(cwd / "bal0.hatchet")) == {("ROOT", "a", "scale_kernel"): 1,
                                                                    ("ROOT", "add_kernel"): 1}
    assert pu.kernel_counts(pu.load_json(cwd / "bal1.hatchet")) == {("ROOT", "a", "b", "add_kernel"): 1,
                                                                    ("ROOT", "a", "scale_kernel"): 1,
                                                                    ("ROOT", "add_kernel"): 1}


def test_deactivate_all_and_activate_all(cwd, bufs):
    a, b = proton.start("all_a"), proton.start("all_b")
    proton.deactivate()
    pu.launch_add(bufs, 4)
    proton.activate()
    pu.launch_add(bufs, 1)
    proton.finalize()
    for n in ("all_a", "all_b"):
        assert pu.kernel_counts(pu.load_json(cwd / f"{n}.hatchet")) == {("ROOT", "add_kernel"): 1}
    assert (a, b) == (a, a + 1)


def test_unknown_session_messages(cwd):
    proton.start("us")
    _raises(ValueError, "Session has not been initialized: 12345", proton.activate, 12345)
    _raises(ValueError, "Session has not been initialized: 12345", proton.deactivate, 12345)
    proton.finalize(12345)  # silently ignored


def test_finalize_writes_hatchet(cwd, bufs):
    s = proton.start(str(cwd / "named"))
    with proton.scope("s"):
        pu.launch_add(bufs)
    proton.finalize(s)
    assert sorted(os.listdir(cwd)) == ["named.hatchet"]
    db = pu.load_json(cwd / "named.hatchet")
    assert db[0]["frame"] == {"name": "ROOT", "type": "function"}
    assert pu.kernel_counts(db) == {("ROOT", "s", "add_kernel"): 1}
    assert db[1]["CPU"]["0"]["num_cores"] >= 1
    text = (cwd / "named.hatchet").read_text()
    assert text.startswith("\n[") or text.startswith("[")


def test_data_trace_writes_chrome_trace(cwd, bufs):
    s = proton.start("tr", data="trace")
    with proton.scope("outer"):
        pu.launch_add(bufs, 2)
        pu.launch_scale(bufs, 1)
    proton.finalize(s)
    assert sorted(os.listdir(cwd)) == ["tr.chrome_trace"]
    tr = pu.load_json(cwd / "tr.chrome_trace")
    assert pu.validate_trace(tr) == []
    assert len(pu.kernel_events(tr, "add_kernel")) == 2 and len(pu.kernel_events(tr, "scale_kernel")) == 1
    for e in pu.kernel_events(tr):
        assert e["args"]["call_stack"] == ["ROOT", "outer", e["name"]]
    hs = pu.events(tr, ph="X", cat="host_scope", name="outer")
    assert len(hs) == 1
    for e in pu.kernel_events(tr):  # kernels lie inside their scope on the same track
        assert e["tid"] == hs[0]["tid"]
        assert hs[0]["ts"] <= e["ts"] and e["ts"] + e["dur"] <= hs[0]["ts"] + hs[0]["dur"] + 1e-6


def test_output_format_errors(cwd):
    s = proton.start("of")
    _raises(ValueError, "Unknown output format: bogus", proton.finalize, s, "bogus")
    _raises(ValueError, "Output format not supported", proton.finalize, s, "chrome_trace")
    proton.finalize(s, "hatchet")
    assert (cwd / "of.hatchet").exists()
    t = proton.start("of_trace", data="trace")
    _raises(ValueError, "Output format not supported", proton.finalize, t, "hatchet")
    _raises(ValueError, "Output format not supported", proton.finalize, t, "hatchet_msgpack")
    proton.finalize(t, "chrome_trace")
    m = proton.start("of_mp")  # hatchet_msgpack is a tree format (reference §1.2)
    proton.finalize(m, "hatchet_msgpack")
    assert sorted(os.listdir(cwd)) == ["of.hatchet", "of_mp.hatchet_msgpack", "of_trace.chrome_trace"]


def test_default_name_writes_proton_hatchet(cwd, bufs):
    proton.start()
    pu.launch_add(bufs)
    proton.finalize()
    assert sorted(os.listdir(cwd)) == ["proton.hatchet"]
    assert pu.kernel_counts(pu.load_json(cwd / "proton.hatchet")) == {("ROOT", "add_kernel"): 1}


def test_two_sessions_record_independently(cwd, bufs):
    s0 = proton.start("s0")
    s1 = proton.start("s1")
    assert s1 == s0 + 1
    pu.launch_add(bufs, 2)
    proton.finalize(s0)
    assert sorted(os.listdir(cwd)) == ["s0.hatchet"]
    pu.launch_add(bufs, 1)
    proton.finalize(s1)
    assert pu.kernel_counts(pu.load_json(cwd / "s0.hatchet")) == {("ROOT", "add_kernel"): 2}
    assert pu.kernel_counts(pu.load_json(cwd / "s1.hatchet")) == {("ROOT", "add_kernel"): 3}


# ---- scopes -----------------------------------------------------------------------------

def test_scope_metrics(cwd):
    """Upstream test_scope_metrics: 4 root children; the re-entered test3 sums a."""
    s = proton.start("sm")
    with proton.scope("test0", {"a": 1.0}):
        pass

    @proton.scope("test1", {"a": 1.0})
    def f():
        pass

    f()
    proton.enter_scope("test2", metrics={"a": 1.0})
    proton.exit_scope()
    for _ in range(2):
        with proton.scope("test3", {"a": 1.0}):
            pass
    proton.enter_scope("test4")
    proton.exit_scope("test4", metrics={"b": 3})
    got = proton.data.get(s)
    proton.finalize()
    db = pu.load_json(cwd / "sm.hatchet")
    assert db == got
    kids = {c["frame"]["name"]: c["metrics"] for c in db[0]["children"]}
    assert kids == {"test0": {"a": 1.0}, "test1": {"a": 1.0}, "test2": {"a": 1.0}, "test3": {"a": 2.0},
                    "test4": {"b": 3}}
    assert isinstance(kids["test4"]["b"], int)


def test_scope_decorator_sums_metrics_and_kernels(cwd, bufs):
    s = proton.start("deco")

    @proton.scope("step", metrics={"n": 1, "flops": 10})
    def step():
        pu.launch_add(bufs)

    for _ in range(3):
        step()
    proton.finalize(s)
    paths = pu.tree_paths(pu.load_json(cwd / "deco.hatchet"))
    assert paths[("ROOT", "step")] == {"n": 3, "flops": 30.0}
    assert isinstance(paths[("ROOT", "step")]["flops"], float)  # roofline coercion
    assert paths[("ROOT", "step", "add_kernel")]["count"] == 3


def test_metric_type_mismatch_message(cwd):
    proton.start("mm")
    with proton.scope("t", {"a": 1.0}):
        pass
    with pytest.raises(ValueError) as ei:
        with proton.scope("t", {"a": 1}):
            pass
    assert str(ei.value) == "Metric value type mismatch for valueId 0 (a): current=double, new=int64_t"


def test_metric_suffixes_pty_and_exc(cwd):
    s = proton.start("sfx")
    for _ in range(2):
        with proton.scope("p", {"a (pty)": 1.0}):
            pass
    with proton.scope("e", {"b (exc)": 2.0}):
        pass
    with proton.scope("e", {"b (exc)": 2.0}):
        pass
    proton.finalize(s)
    db = pu.load_json(cwd / "sfx.hatchet")
    paths = pu.tree_paths(db)
    assert paths[("ROOT", "p")] == {"a": 1.0}  # property: overwritten, not summed; suffix stripped
    assert paths[("ROOT", "e")] == {"b": 4.0}  # exclusive: summed; suffix stripped
    assert db[0]["metrics"] == {}  # no root hints for exclusive-only metrics, no kernels


def test_enter_exit_scope_with_and_without_name(cwd, bufs):
    s = proton.start("ee")
    i1 = proton.enter_scope("a")
    i2 = proton.enter_scope("b")
    assert isinstance(i1, int) and i2 == i1 + 1  # process-wide scope ids, consecutive
    pu.launch_add(bufs)
    assert proton.exit_scope("b") == i2
    assert proton.exit_scope() == i1
    proton.enter_scope("b")
    _raises(ValueError, "Scope name mismatch: a != b", proton.exit_scope, "a")
    proton.exit_scope("b")
    proton.finalize(s)
    assert pu.kernel_counts(pu.load_json(cwd / "ee.hatchet")) == {("ROOT", "a", "b", "add_kernel"): 1}


def test_kernels_nest_under_scopes(cwd, bufs):
    s = proton.start("nest")
    with proton.scope("a"):
        pu.launch_add(bufs, 2)
        with proton.scope("b"):
            pu.launch_scale(bufs, 3)
            with proton.scope("c"):
                pu.launch_add(bufs, 1)
        pu.launch_scale(bufs, 4)
    pu.launch_scale(bufs, 1)
    proton.finalize(s)
    db = pu.load_json(cwd / "nest.hatchet")
    assert pu.kernel_counts(db) == {
        ("ROOT", "a", "add_kernel"): 2,
        ("ROOT", "a", "b", "scale_kernel"): 3,
        ("ROOT", "a", "b", "c", "add_kernel"): 1,
        ("ROOT", "a", "scale_kernel"): 4,
        ("ROOT", "scale_kernel"): 1,
    }
    paths = pu.tree_paths(db)
    assert paths[("ROOT", "a", "b", "scale_kernel")]["programs"] == 3 * 8
    assert set(pu.tree_paths(db)) == set(pu.kernel_counts(db)) | {("ROOT",), ("ROOT", "a"), ("ROOT", "a", "b"),
                                                                  ("ROOT", "a", "b", "c")}


def test_profile_decorator_bare(cwd, bufs):
    @proton.profile
    def f():
        pu.launch_add(bufs, 2)

    f()
    pu.launch_add(bufs, 5)  # the wrapper deactivated the session: not recorded
    f()  # same path: the same session again
    assert not os.listdir(cwd)  # profile() does not finalize
    proton.finalize()
    assert sorted(os.listdir(cwd)) == ["proton.hatchet"]
    assert pu.kernel_counts(pu.load_json(cwd / "proton.hatchet")) == {("ROOT", "add_kernel"): 4}


def test_profile_decorator_with_name(cwd, bufs):
    @proton.profile(name=str(cwd / "dec"), backend="cpu")
    def g(k):
        with proton.scope("inside"):
            pu.launch_scale(bufs, k)
        return k * 2

    assert g(3) == 6
    proton.finalize()
    assert sorted(os.listdir(cwd)) == ["dec.hatchet"]
    assert pu.kernel_counts(pu.load_json(cwd / "dec.hatchet")) == {("ROOT", "inside", "scale_kernel"): 3}


def test_cpu_timed_scope(cwd):
    s = proton.start("cts")
    with proton.cpu_timed_scope("outer"):
        time.sleep(0.003)
        with proton.cpu_timed_scope("inner", metrics={"x": 1.0}):
            time.sleep(0.002)

    @proton.cpu_timed_scope("deco")
    def f():
        time.sleep(0.001)

    f()
    proton.finalize(s)
    paths = pu.tree_paths(pu.load_json(cwd / "cts.hatchet"))
    outer, inner, deco = paths[("ROOT", "outer")], paths[("ROOT", "outer", "inner")], paths[("ROOT", "deco")]
    assert set(outer) == {"cpu_time (ns)"} and set(inner) == {"cpu_time (ns)", "x"}
    assert outer["cpu_time (ns)"] >= 5_000_000 and inner["cpu_time (ns)"] >= 2_000_000
    assert deco["cpu_time (ns)"] >= 1_000_000
    assert isinstance(outer["cpu_time (ns)"], int)
    _raises(ValueError, "The metric name 'cpu_time' is reserved.", proton.cpu_timed_scope, "r",
            metrics={"cpu_time": 1})


def test_context_depth(cwd):
    s = proton.start("depth")
    depths = [proton.context.depth(s)]
    proton.enter_scope("a")
    depths.append(proton.context.depth(s))
    proton.enter_scope("b")
    depths.append(proton.context.depth(s))
    proton.exit_scope()
    depths.append(proton.context.depth(s))
    proton.exit_scope()
    depths.append(proton.context.depth(s))
    assert depths == [0, 1, 2, 1, 0]
    proton.finalize()
    assert proton.context.depth(s) is None  # profiling is off


def test_data_get_returns_tree(cwd, bufs):
    s = proton.start("dg")
    with proton.scope("s", metrics={"bytes": 5.0}):
        pu.launch_add(bufs, 2)
    d = proton.data.get(s)
    assert isinstance(d, list) and len(d) == 2
    assert d[0]["frame"]["name"] == "ROOT"
    assert pu.kernel_counts(d) == {("ROOT", "s", "add_kernel"): 2}
    assert pu.tree_paths(d)[("ROOT", "s")] == {"bytes": 5}  # bytes coerced to int
    assert proton.data.get(None) is None
    proton.finalize()
    assert pu.load_json(cwd / "dg.hatchet") == d


def test_data_get_trace_session_raises(cwd):
    s = proton.start("dgt", data="trace")
    _raises(RuntimeError, "Only TreeData is supported for getData() for now", proton.data.get, s)


def test_hook_triton_uses_launch_metadata(cwd, bufs):
    s = proton.start("hook", hook="triton")
    with proton.scope("s"):
        pu.launch_meta(bufs, 2)
        pu.launch_add(bufs, 1)  # no launch_metadata: keeps its own name
    proton.finalize(s)
    paths = pu.tree_paths(pu.load_json(cwd / "hook.hatchet"))
    m = paths[("ROOT", "s", f"meta_add_{pu.BLOCK_ADD}")]
    assert m["count"] == 2
    assert m["flops32"] == 2.0 * pu.N and isinstance(m["flops32"], float)
    assert m["bytes"] == 2 * 12 * pu.N and isinstance(m["bytes"], int)
    assert m["extra_metric"] == 14
    assert ("ROOT", "s", "meta_kernel") not in paths
    assert paths[("ROOT", "s", "add_kernel")]["count"] == 1
    # without the hook the kernel keeps its compiled name
    s = proton.start("nohook")
    pu.launch_meta(bufs, 1)
    proton.finalize(s)
    assert pu.kernel_counts(pu.load_json(cwd / "nohook.hatchet")) == {("ROOT", "meta_kernel"): 1}


def test_launch_hook_filter_skips_metadata(cwd, bufs):
    from triton.profiler.hooks import LaunchHook
    s = proton.start("filt", hook="triton")
    try:
        LaunchHook().configure(exclude="meta_kernel")
        before = pu.META_CALLS[0]
        pu.launch_meta(bufs, 2)
        excluded_calls = pu.META_CALLS[0] - before
        LaunchHook().configure(include="meta_kernel")
        pu.launch_meta(bufs, 1)
        included_calls = pu.META_CALLS[0] - before - excluded_calls
    finally:
        LaunchHook().configure()
    proton.finalize(s)
    assert included_calls == 1
    counts = pu.kernel_counts(pu.load_json(cwd / "filt.hatchet"))
    assert excluded_calls == 0, counts  # a filtered-out kernel's metadata function is never called
    assert counts == {("ROOT", "meta_kernel"): 2, ("ROOT", f"meta_add_{pu.BLOCK_ADD}"): 1}


def test_dash_name_writes_stdout(cwd, bufs, capfd):
    capfd.readouterr()
    proton.start("-")
    pu.launch_add(bufs, 2)
    proton.finalize()
    out = capfd.readouterr().out
    assert not os.listdir(cwd)
    assert pu.kernel_counts(json.loads(out)) == {("ROOT", "add_kernel"): 2}


def test_launch_hook_singleton():
    from triton.profiler.hooks import LaunchHook
    assert LaunchHook() is LaunchHook()
    assert LaunchHook.priority == 100


def test_annotating_while_off_is_legal(cwd, bufs):
    assert flags.profiling_on is False
    assert proton.enter_scope("x") is None
    assert proton.exit_scope("x") is None
    with proton.scope("y", metrics={"a": 1.0}):
        pu.launch_add(bufs)
    with proton.cpu_timed_scope("z"):
        pass

    @proton.scope("w")
    def f():
        return 5

    assert f() == 5
    assert proton.context.depth() is None
    assert not os.listdir(cwd)
    # a session started afterwards starts clean
    s = proton.start("after")
    assert proton.context.depth(s) == 0
    pu.launch_add(bufs)
    proton.finalize()
    assert pu.kernel_counts(pu.load_json(cwd / "after.hatchet")) == {("ROOT", "add_kernel"): 1}


def test_scope_entered_while_off_is_not_exited(cwd, bufs):
    with proton.scope("pre"):  # profiling off: this scope never entered
        s = proton.start("late")
        with proton.scope("in"):
            pu.launch_add(bufs)
        pu.launch_scale(bufs)
    proton.finalize(s)
    assert pu.kernel_counts(pu.load_json(cwd / "late.hatchet")) == {("ROOT", "in", "add_kernel"): 1,
                                                                   ("ROOT", "scale_kernel"): 1}


def test_finalize_inside_open_scope(cwd, bufs):
    proton.start("fin")
    with proton.scope("outer"):
        pu.launch_add(bufs)
        proton.finalize()  # the scope's exit becomes a no-op
    assert flags.profiling_on is False
    assert pu.kernel_counts(pu.load_json(cwd / "fin.hatchet")) == {("ROOT", "outer", "add_kernel"): 1}
    s = proton.start("fin2")
    assert proton.context.depth(s) == 0
    pu.launch_add(bufs)
    proton.finalize()
    assert pu.kernel_counts(pu.load_json(cwd / "fin2.hatchet")) == {("ROOT", "add_kernel"): 1}


def test_trace_written_inside_open_scope(cwd, bufs):
    proton.start("open", data="trace")
    with proton.scope("outer"):
        pu.launch_add(bufs, 1)
        proton.finalize()
    tr = pu.load_json(cwd / "open.chrome_trace")
    assert pu.validate_trace(tr) == []
    assert [e["args"]["call_stack"] for e in pu.kernel_events(tr)] == [["ROOT", "outer", "add_kernel"]]
    assert [e["name"] for e in pu.events(tr, ph="X", cat="host_scope")] == ["outer"]


def test_threads_have_their_own_scope_stacks(cwd, bufs):
    """Upstream: 2 threads x 50 uniquely named scopes -> 100 root children; here each
    thread also launches inside its scopes."""
    s = proton.start("thr")
    errors = []

    def work(t):
        try:
            b = pu.Bufs()
            for i in range(50):
                with proton.scope(f"t{t}_{i}"):
                    if i % 10 == 0:
                        with proton.scope("k"):
                            pu.launch_add(b)
        except BaseException as e:  # noqa: B902
            errors.append(repr(e))

    ts = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not errors
    proton.finalize(s)
    db = pu.load_json(cwd / "thr.hatchet")
    assert sorted(c["frame"]["name"] for c in db[0]["children"]) == sorted(f"t{t}_{i}" for t in range(2)
                                                                           for i in range(50))
    assert pu.kernel_counts(db) == {("ROOT", f"t{t}_{i}", "k", "add_kernel"): 1 for t in range(2)
                                    for i in range(0, 50, 10)}


def test_python_context_accepted(cwd, bufs):
    s = proton.start("py", context="python")
    pu.launch_add(bufs)
    proton.finalize(s)
    assert sum(pu.kernel_counts(pu.load_json(cwd / "py.hatchet")).values()) == 1


def test_python_context_records_frames(cwd, bufs):
    s = proton.start("pyf", context="python")

    def caller():
        pu.launch_add(bufs)

    caller()
    proton.finalize(s)
    (path, _), = pu.kernel_counts(pu.load_json(cwd / "pyf.hatchet")).items()
    assert len(path) > 2 and re.fullmatch(r".+:\d+@.+", path[-2]), path


def test_vector_metrics_round_trip(cwd):
    s = proton.start("vec")
    for _ in range(2):
        with proton.scope("v", metrics={"vi": [1, 2, 3], "vf": [0.5, 1.5]}):
            pass
    proton.finalize(s)
    assert pu.tree_paths(pu.load_json(cwd / "vec.hatchet"))[("ROOT", "v")] == {"vi": [2, 4, 6], "vf": [1.0, 3.0]}


def test_vector_metric_types_and_coercions(cwd):
    import torch
    s = proton.start("vec")
    for _ in range(2):
        proton.enter_scope("v", metrics={"vi": (1, 2), "vm": [1, 2.5], "e": [], "flops32": [5, 6], "bytes": [9.0, 10.9],
                                         "t": torch.tensor([1.5, 2.5]), "one": torch.tensor([3]), "p (pty)": [1, 1],
                                         "x (exc)": [1.0]})
        proton.exit_scope(metrics={"vi": [10, 20]})
    proton.finalize(s)
    tree = pu.load_json(cwd / "vec.hatchet")
    m = pu.tree_paths(tree)[("ROOT", "v")]
    assert m == {"vi": [22, 44], "vm": [2.0, 5.0], "e": [], "flops32": [10.0, 12.0], "bytes": [18, 20],
                 "t": [3.0, 5.0], "one": 6, "p": [1, 1], "x": [2.0]}
    assert all(type(v) is int for v in m["vi"] + m["bytes"]) and all(type(v) is float for v in m["flops32"])
    assert tree[0]["metrics"] == {}  # vectors get no root hints (not summable columns)


@pytest.mark.parametrize("first,second,msg", [
    ([1, 2, 3], [1, 2], "Vector metric size mismatch for valueId 0 (v): current=3, new=2"),
    ([1, 2], [1.0, 2.0], "Metric value type mismatch for valueId 0 (v): current=std::vector<int64_t>, "
                         "new=std::vector<double>"),
    ([1.0], 1.0, "Metric value type mismatch for valueId 0 (v): current=std::vector<double>, new=double"),
    (2, [2], "Metric value type mismatch for valueId 0 (v): current=int64_t, new=std::vector<int64_t>"),
])
def test_vector_metric_mismatch(cwd, first, second, msg):
    s = proton.start("vecbad")
    with proton.scope("a", metrics={"v": first}):
        pass
    with pytest.raises(ValueError) as ei:
        with proton.scope("a", metrics={"v": second}):
            pass
    assert str(ei.value) == msg
    proton.finalize(s)
    assert pu.tree_paths(pu.load_json(cwd / "vecbad.hatchet"))[("ROOT", "a")] == {"v": first}  # nothing added


def _frames(path):
    """the Python frames of a python-context kernel path (between ROOT and the kernel)"""
    assert path[0] == "ROOT"
    for f in path[1:-1]:
        assert re.fullmatch(r"(/.+|<.+>):\d+@\S+", f) and "/python/triton/" not in f, f
    return path[1:-1]


def test_python_context_path_and_shadow_together(cwd, bufs):
    py = proton.start("py", context="python")
    sh = proton.start("sh")
    here = os.path.abspath(__file__)

    def caller():
        pu.launch_add(bufs)

    with proton.scope("step", metrics={"a": 1, "v": [1, 2]}):
        for _ in range(2):  # one call site: one path
            caller()
    assert proton.context.depth(sh) == 0 and proton.context.depth(py) >= 2
    proton.finalize()
    # the python session: the Python stack, innermost frame first is the launch in proton_util,
    # then caller, then this test; no scope names; the scope's metrics on the frame of its `with`
    tree = pu.load_json(cwd / "py.hatchet")
    (path, count), = pu.kernel_counts(tree).items()
    frames = _frames(path)
    assert count == 2 and path[-1] == "add_kernel"
    assert re.fullmatch(re.escape(pu.__file__.replace(".pyc", ".py")) + r":\d+@launch_add", frames[-1])
    assert re.fullmatch(re.escape(here) + r":\d+@caller", frames[-2])
    assert frames[-3].startswith(here + ":") and frames[-3].endswith("@test_python_context_path_and_shadow_together")
    assert not any("step" in p for p in pu.tree_paths(tree))
    (mpath, m), = [(p, m) for p, m in pu.tree_paths(tree).items() if "a" in m]
    assert m == {"a": 1, "v": [1, 2]} and mpath[-1].endswith("@test_python_context_path_and_shadow_together")
    assert mpath[1:-1] == frames[:-3] and mpath[-1] != frames[-3]  # the `with` line, not the call line
    # the shadow session at the same time: scope paths as usual
    assert pu.kernel_counts(pu.load_json(cwd / "sh.hatchet")) == {("ROOT", "step", "add_kernel"): 2}


def test_proton_cli_reads_vectors_and_python_frames(cwd, bufs):
    import subprocess
    py = proton.start("py", context="python")
    sh = proton.start("sh")
    with proton.scope("step", metrics={"vi": [1, 2, 3], "vf": [0.5]}):
        pu.launch_add(bufs, 2)
    proton.finalize()
    for f in ("py.hatchet", "sh.hatchet"):
        r = subprocess.run([pu.PROTON_CLI, "report", str(cwd / f)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "add_kernel" in r.stdout, r.stderr
        r = subprocess.run([pu.PROTON_CLI, "report", "-m", "vi,count", "--format", "json", str(cwd / f)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        tree = json.loads(r.stdout)[0]["tree"]
        nodes, todo = [], [tree]
        while todo:
            n = todo.pop()
            nodes.append(n)
            todo += n["children"]
        assert [n["values"][0] for n in nodes if n["values"][0] is not None] == [6]  # shown as the sum
        assert any(n["name"] == "add_kernel" and n["values"][1] == 2 for n in nodes)
        assert any(n["name"] == "step" for n in nodes) == (f == "sh.hatchet")
    assert py is not None and sh is not None


PY_TRACE = """
import triton.profiler as proton
import triton.profiler.language as pl
from triton.profiler.flags import flags
pl.enable_semantic("triton")
flags.instrumentation_on = True
b = Bufs()
py = proton.start("py", context="python")
tr = proton.start("tr", context="python", data="trace")
sh = proton.start("sh", data="trace")
def run():
    with proton.scope("host"):
        launch_scoped(b, 2)
run()
proton.finalize()
print("DONE")
"""


def test_python_context_trace_and_in_kernel_scopes(tmp_path):
    p = pu.check_ok(pu.run_child(PY_TRACE, tmp_path))
    assert p.stdout == "DONE\n"
    child = str(tmp_path / "child.py")
    # tree: in-kernel scopes still nest under the kernel, the kernel under the Python stack
    paths = pu.tree_paths(pu.load_json(tmp_path / "py.hatchet"))
    (k, count), = pu.kernel_counts(pu.load_json(tmp_path / "py.hatchet")).items()
    frames = _frames(k)
    assert count == 2 and k[-1] == "scoped_kernel" and len(frames) == 3
    assert re.fullmatch(re.escape(child) + r":\d+@<module>", frames[0])
    assert re.fullmatch(re.escape(child) + r":\d+@run", frames[1]) and frames[2].endswith("@launch_scoped")
    assert paths[k + ("compute", "inner")]["scope_count"] == 8 and paths[k + ("load",)]["scope_count"] == 8
    # trace: the kernel's call_stack is the frame path; no host-scope events
    tr = pu.load_json(tmp_path / "tr.chrome_trace")
    assert pu.validate_trace(tr) == []
    kev = pu.kernel_events(tr, "scoped_kernel")
    assert len(kev) == 2 and all(e["args"]["call_stack"] == list(k) for e in kev)
    assert pu.events(tr, cat="host_scope") == []
    assert len(pu.events(tr, ph="X", cat="scope", name="inner")) == 8
    # a shadow trace session at the same time keeps its scope call_stack
    sh = pu.load_json(tmp_path / "sh.chrome_trace")
    assert [e["args"]["call_stack"] for e in pu.kernel_events(sh)] == [["ROOT", "host", "scoped_kernel"]] * 2


# ---- the `proton` command line (python -m triton.profiler.proton) ------------------------------

CLI_TARGET = """
import sys
sys.path.insert(0, {here!r})
from proton_util import *
import triton.profiler as proton
print("START", proton.start("ignored"))  # in-script sessions are ignored under the CLI
b = Bufs()
with proton.scope("test"):
    launch_add(b, 2)
launch_scale(b, 1)
print("ARGV", sys.argv[1:])
"""


def _run_cli(tmp_path):
    import subprocess
    import sys
    (tmp_path / "helper.py").write_text(CLI_TARGET.format(here=pu.HERE))
    return subprocess.run([sys.executable, "-m", "triton.profiler.proton", "-n", "cli", "helper.py", "test", "x"],
                          cwd=str(tmp_path), env=pu.child_env(), capture_output=True, text=True, timeout=120)


def test_proton_command_line(tmp_path):
    p = _run_cli(tmp_path)
    assert p.returncode == 0, pu.describe(p)
    assert p.stdout.splitlines() == ["START None", "ARGV ['test', 'x']"]
    assert sorted(os.listdir(tmp_path)) == ["cli.hatchet", "helper.py"]
    db = pu.load_json(tmp_path / "cli.hatchet")
    assert [c["frame"]["name"] for c in db[0]["children"]] == ["test", "scale_kernel"]  # 2 root children
    assert pu.kernel_counts(db) == {("ROOT", "test", "add_kernel"): 2, ("ROOT", "scale_kernel"): 1}


def test_proton_command_line_no_warning(tmp_path):
    p = _run_cli(tmp_path)
    assert p.returncode == 0, pu.describe(p)
    assert "RuntimeWarning" not in p.stderr, p.stderr
