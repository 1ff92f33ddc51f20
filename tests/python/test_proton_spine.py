"""spine-triton compatibility (issue 3 item 3): the CPU profiler object of
`triton.backends.spine_triton.proton`, `triton.profiler.language` and
`triton.profiler.flags`, and in-kernel scopes recorded through them.

The profiler-object tests run in the pytest process (the store is reset and stopped
after each test, so nothing is left for the exit handler); the in-kernel scope tests
run in child processes, because whether a kernel is instrumented is decided when it is
first compiled in a process.
"""
import importlib
import os

import pytest

import proton_util as pu
import triton.profiler.language as pl
from triton.profiler.flags import flags

sp = importlib.import_module("triton.backends.spine_triton.proton")
profiler = sp.profiler

ADD_ROW, SCALE_ROW = "add_kernel[4,1,1]", "scale_kernel[8,1,1]"


@pytest.fixture(scope="module", autouse=True)
def _warm():
    pu.warm_up()


@pytest.fixture(autouse=True)
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    profiler.stop()
    profiler.reset()
    yield tmp_path
    profiler.stop()
    profiler.reset()
    flags.instrumentation_on = False


@pytest.fixture
def bufs():
    return pu.Bufs()


def _counts(results):
    return {k: v["count"] for k, v in results.items()}


# ---- names ------------------------------------------------------------------------------------

def test_import_and_shortcuts():
    from triton.backends.spine_triton.proton import profiler as p2
    assert p2 is profiler
    assert type(profiler)() is profiler  # a singleton
    for name in ("reset", "dump", "profile", "is_available", "start", "stop", "get_results"):
        f = getattr(sp, name)
        assert callable(f)
        assert f == getattr(profiler, name), name  # the module-level shortcut is the profiler's method
    assert sp.is_available() is True and profiler.is_available() is True


def test_language_and_flags_names():
    for name in ("enter_scope", "exit_scope", "enable_semantic", "disable_semantic", "record"):
        assert callable(getattr(pl, name)), name
    flags_mod = importlib.import_module("triton.profiler.flags")
    assert flags_mod.flags is flags
    assert flags.instrumentation_on is False and flags.profiling_on is False
    assert flags.command_line is False
    flags.instrumentation_on = True
    assert flags_mod.flags.instrumentation_on is True
    flags.instrumentation_on = False
    pl.enable_semantic("triton")
    pl.disable_semantic("triton")


def test_flags_module_attribute_is_the_module():
    import triton.profiler.flags as m
    assert m.flags is flags


# ---- the profiler object ------------------------------------------------------------------------

def test_profile_output_path_json(cwd, bufs):
    profiler.start()
    pu.launch_add(bufs, 4)  # before profile(): dropped by its reset
    with profiler.profile(output_path="sp.json") as p:
        assert p is profiler
        pu.workload(bufs)
    assert sorted(os.listdir(cwd)) == ["sp.json"]
    tr = pu.load_json(cwd / "sp.json")
    assert pu.validate_trace(tr) == []
    assert (len(pu.kernel_events(tr, "add_kernel")), len(pu.kernel_events(tr, "scale_kernel"))) == (7, 3)
    pu.launch_add(bufs, 2)  # after profile(): not recorded (it stopped)
    assert _counts(profiler.get_results()) == {ADD_ROW: 7, SCALE_ROW: 3}


def test_profile_output_path_hatchet(cwd, bufs):
    with profiler.profile(output_path=str(cwd / "sp.hatchet")):
        pu.workload(bufs, a=2, s=5)
    db = pu.load_json(cwd / "sp.hatchet")
    assert pu.kernel_counts(db) == {("ROOT", "add_kernel"): 2, ("ROOT", "scale_kernel"): 5}


def test_profile_auto_dump_false(cwd, bufs):
    with profiler.profile(output_path="never.json", auto_dump=False):
        pu.workload(bufs, a=1, s=1)
    assert os.listdir(cwd) == []
    assert _counts(profiler.get_results()) == {ADD_ROW: 1, SCALE_ROW: 1}


def test_start_stop_get_results(cwd, bufs):
    assert profiler.get_results() == {}
    assert profiler.start() is True
    pu.launch_add(bufs, 2)
    assert profiler.stop() is True
    pu.launch_add(bufs, 5)  # between stop and start: not recorded
    pu.launch_scale(bufs, 5)
    profiler.start()
    pu.launch_add(bufs, 1)
    pu.launch_scale(bufs, 2)
    profiler.stop()
    r = profiler.get_results()
    assert isinstance(r, dict)
    assert _counts(r) == {ADD_ROW: 3, SCALE_ROW: 2}
    for row in r.values():
        assert set(row) == {"count", "total_ns", "min_ns", "max_ns", "avg_ns"}
        assert 0 < row["min_ns"] <= row["avg_ns"] <= row["max_ns"] <= row["total_ns"]
        assert abs(row["avg_ns"] * row["count"] - row["total_ns"]) <= row["count"]
    assert os.listdir(cwd) == []


def test_reset(cwd, bufs):
    profiler.start()
    pu.launch_add(bufs, 3)
    assert profiler.reset() is True
    assert profiler.get_results() == {}
    pu.launch_add(bufs, 1)  # still started: recording goes on after a reset
    assert _counts(profiler.get_results()) == {ADD_ROW: 1}


def test_dump_paths(cwd, bufs):
    profiler.start()
    pu.workload(bufs, a=3, s=2)
    profiler.stop()
    assert profiler.dump("d.hatchet") is True
    assert profiler.dump("d.json") is True
    assert profiler.dump(str(cwd / "d.txt")) is True
    assert sorted(os.listdir(cwd)) == ["d.hatchet", "d.json", "d.txt"]
    assert pu.kernel_counts(pu.load_json(cwd / "d.hatchet")) == {("ROOT", "add_kernel"): 3,
                                                                 ("ROOT", "scale_kernel"): 2}
    tr = pu.load_json(cwd / "d.json")
    assert pu.validate_trace(tr) == [] and len(pu.kernel_events(tr)) == 5
    t = pu.parse_console((cwd / "d.txt").read_text())
    assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: 3, SCALE_ROW: 2}


def test_dump_failure_returns_false(cwd, bufs):
    profiler.start()
    pu.launch_add(bufs)
    assert profiler.dump(str(cwd / "no" / "such" / "dir" / "x.json")) is False


def test_host_scopes_in_capture_store(cwd, bufs):
    import triton.profiler as proton
    with profiler.profile(output_path="hs.hatchet"):
        s = proton.start("sess")
        with proton.scope("step"):
            pu.launch_add(bufs, 2)
        proton.finalize(s)
        pu.launch_add(bufs, 1)
    assert pu.kernel_counts(pu.load_json(cwd / "hs.hatchet")) == {("ROOT", "step", "add_kernel"): 2,
                                                                  ("ROOT", "add_kernel"): 1}
    assert pu.kernel_counts(pu.load_json(cwd / "sess.hatchet")) == {("ROOT", "step", "add_kernel"): 2}


# ---- in child processes: console output, PROTON_OUTPUT, exit -----------------------------------

def test_profile_console_printed_once(tmp_path):
    p = pu.check_ok(pu.run_child("""
        from triton.backends.spine_triton.proton import profiler
        with profiler.profile():
            workload()
        print("DONE")
        """, tmp_path))
    assert p.stdout == "DONE\n"
    assert p.stderr.count("== Proton:") == 1, p.stderr  # not again at exit (spine-triton prints twice)
    t = pu.parse_console(p.stderr)
    assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: 7, SCALE_ROW: 3}
    assert pu.child_files(tmp_path) == []


def test_profile_uses_proton_output(tmp_path):
    p = pu.check_ok(pu.run_child("""
        from triton.backends.spine_triton.proton import profiler
        with profiler.profile():
            workload(a=2, s=1)
        import json
        print(json.dumps(load_json("env.hatchet")[0]["children"][0]["metrics"]["count"]))
        profiler.start()
        launch_add(Bufs(), 4)  # undumped data: the store is written again at exit (dump does not clear it)
        """, tmp_path, {"PROTON_OUTPUT": "env.hatchet"}))
    assert p.stdout == "2\n"  # profile() dumped to PROTON_OUTPUT
    assert "== Proton:" not in p.stderr
    assert pu.child_files(tmp_path) == ["env.hatchet"]
    assert pu.kernel_counts(pu.load_json(tmp_path / "env.hatchet")) == {("ROOT", "add_kernel"): 6,
                                                                     ("ROOT", "scale_kernel"): 1}


# ---- in-kernel scopes ----------------------------------------------------------------------------

SCOPES_ON = """
import triton.profiler as proton
import triton.profiler.language as pl
from triton.profiler.flags import flags
from triton.backends.spine_triton.proton import profiler
pl.enable_semantic("triton")
flags.instrumentation_on = True
b = Bufs()
with profiler.profile(output_path="k.hatchet"):
    launch_scoped(b, 3)
with profiler.profile(output_path="k.json"):
    launch_scoped(b, 2)
s = proton.start("sess")
with proton.scope("host"):
    launch_scoped(b, 1)
    with proton.scope("inner_host"):
        launch_scoped(b, 2)
proton.finalize(s)
print("DONE")
"""


def test_in_kernel_scopes(tmp_path):
    p = pu.check_ok(pu.run_child(SCOPES_ON, tmp_path))
    assert p.stdout == "DONE\n"
    programs = 4
    db = pu.load_json(tmp_path / "k.hatchet")
    paths = pu.tree_paths(db)
    k = ("ROOT", "scoped_kernel")
    assert set(paths) == {("ROOT",), k, k + ("load",), k + ("compute",), k + ("compute", "inner")}
    assert paths[k]["count"] == 3 and paths[k]["programs"] == 3 * programs
    for sc in (k + ("load",), k + ("compute",), k + ("compute", "inner")):
        m = paths[sc]
        assert m["scope_count"] == programs * 3, (sc, m)  # programs x launches
        assert m["scope_time (ns)"] >= 0 and m["normalized_time (ns)"] >= 0
        assert "count" not in m and "time (ns)" not in m
    # the trace: one scope slice per program and launch, inside its program slice
    tr = pu.load_json(tmp_path / "k.json")
    assert pu.validate_trace(tr) == []
    assert len(pu.kernel_events(tr, "scoped_kernel")) == 2
    for name in ("load", "compute", "inner"):
        ev = pu.events(tr, ph="X", cat="scope", name=name)
        assert len(ev) == 2 * programs, name
        assert all(e["args"]["kernel"] == "scoped_kernel" for e in ev)
        assert sorted(tuple(e["args"]["program"]) for e in ev) == sorted([(i, 0, 0) for i in range(programs)] * 2)
    # a session: in-kernel scopes under their kernel, under the host scopes
    sess = pu.tree_paths(pu.load_json(tmp_path / "sess.hatchet"))
    k1, k2 = ("ROOT", "host", "scoped_kernel"), ("ROOT", "host", "inner_host", "scoped_kernel")
    assert sess[k1]["count"] == 1 and sess[k2]["count"] == 2
    assert sess[k1 + ("compute", "inner")]["scope_count"] == programs
    assert sess[k2 + ("compute", "inner")]["scope_count"] == 2 * programs


def test_instrumentation_off_is_a_noop_with_its_own_cache_entry(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    off = tmp_path / "off"
    on = tmp_path / "on"
    off.mkdir()
    on.mkdir()
    code = """
        import triton.profiler.language as pl
        from triton.profiler.flags import flags
        from triton.backends.spine_triton.proton import profiler
        pl.enable_semantic("triton")
        flags.instrumentation_on = {on}
        with profiler.profile(output_path="k.hatchet"):
            launch_scoped(Bufs(), 2)  # asserts the result
        print("DONE")
        """
    pu.check_ok(pu.run_child(code.format(on=False), off, {"TRITON_CACHE_DIR": str(cache)}))
    entries_off = set(os.listdir(cache))
    paths = pu.tree_paths(pu.load_json(off / "k.hatchet"))
    assert set(paths) == {("ROOT",), ("ROOT", "scoped_kernel")}  # the pl calls compiled to nothing
    assert paths[("ROOT", "scoped_kernel")]["count"] == 2
    pu.check_ok(pu.run_child(code.format(on=True), on, {"TRITON_CACHE_DIR": str(cache)}))
    entries_on = set(os.listdir(cache))
    assert len(entries_on - entries_off) >= 1  # instrumented: another cache entry
    paths = pu.tree_paths(pu.load_json(on / "k.hatchet"))
    assert paths[("ROOT", "scoped_kernel", "load")]["scope_count"] == 2 * 4
    # and the plain one is still used (not recompiled) when instrumentation is off again
    pu.check_ok(pu.run_child(code.format(on=False), off, {"TRITON_CACHE_DIR": str(cache)}))
    assert set(os.listdir(cache)) == entries_on


@pytest.mark.parametrize("first", [False, True], ids=["off-then-on", "on-then-off"])
def test_instrumentation_toggle_in_one_process(tmp_path, first):
    p = pu.check_ok(pu.run_child(f"""
        import triton.profiler.language as pl
        from triton.profiler.flags import flags
        from triton.backends.spine_triton.proton import profiler
        pl.enable_semantic("triton")
        b = Bufs()
        flags.instrumentation_on = {first}
        with profiler.profile(output_path="first.hatchet"):
            launch_scoped(b, 1)
        flags.instrumentation_on = {not first}
        with profiler.profile(output_path="second.hatchet"):
            launch_scoped(b, 1)
        """, tmp_path))
    on, off = ("second", "first") if not first else ("first", "second")
    on_paths = pu.tree_paths(pu.load_json(tmp_path / f"{on}.hatchet"))
    off_paths = pu.tree_paths(pu.load_json(tmp_path / f"{off}.hatchet"))
    assert ("ROOT", "scoped_kernel", "load") in on_paths, p.stderr
    assert set(off_paths) == {("ROOT",), ("ROOT", "scoped_kernel")}
