"""Kernel capture (issue 3 item 1, acceptance: capture on/off, exit paths, threads,
counters, proton-cli report).

Everything here depends on variables Proton reads once at import (PROTON_KERNEL_CAPTURE,
PROTON_OUTPUT, PROTON_VERBOSE, PROTON_EVENTS, TRITON_DISABLE_PROTON, RANK...), so each
case runs a child process (proton_util.run_child) in its own temporary directory.
The standard workload is 7 launches of add_kernel (grid 4) and 3 of scale_kernel
(grid 8).
"""
import os
import re
import signal
import textwrap
import subprocess
import threading
import time

import pytest

import proton_util as pu

A, S = 7, 3
ADD_ROW, SCALE_ROW = "add_kernel[4,1,1]", "scale_kernel[8,1,1]"
NOTICE = "proton: no hardware performance counters"


@pytest.fixture(scope="module", autouse=True)
def _warm():
    pu.warm_up()


def _software_counters():
    from triton._C import tritium as _C
    return _C.pn_counters()[1] == "software"


WORK = "workload(a=%d, s=%d)\nprint('DONE')\n" % (A, S)


# ---- capture on: the three output kinds ------------------------------------------------

def test_capture_json_counts(tmp_path):
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json"}))
    assert p.stdout == "DONE\n"
    assert pu.child_files(tmp_path) == ["cap.json"]  # no temporary file left behind
    tr = pu.load_json(tmp_path / "cap.json")
    assert pu.validate_trace(tr) == []
    adds, scales = pu.kernel_events(tr, "add_kernel"), pu.kernel_events(tr, "scale_kernel")
    assert (len(adds), len(scales)) == (A, S)
    assert len(pu.kernel_events(tr)) == A + S
    for e in adds:
        assert e["args"]["grid"] == [4, 1, 1] and e["args"]["programs"] == 4
        assert e["args"]["constexprs"] == {"BLOCK": pu.BLOCK_ADD}
    for e in scales:
        assert e["args"]["grid"] == [8, 1, 1] and e["args"]["programs"] == 8
        assert e["args"]["constexprs"] == {"BLOCK": pu.BLOCK_SCALE}
    # one program-instance slice per program of every launch
    progs = pu.events(tr, ph="X", cat="program")
    assert sum(e["name"].startswith("add_kernel[") for e in progs) == A * 4
    assert sum(e["name"].startswith("scale_kernel[") for e in progs) == S * 8
    assert tr["otherData"]["dropped_events"] == 0
    assert "proton: wrote cap.json" in p.stderr


def test_capture_hatchet_counts(tmp_path):
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.hatchet"}))
    assert pu.child_files(tmp_path) == ["cap.hatchet"]
    db = pu.load_json(tmp_path / "cap.hatchet")
    assert isinstance(db, list) and len(db) == 2
    assert db[0]["frame"] == {"name": "ROOT", "type": "function"}
    assert pu.kernel_counts(db) == {("ROOT", "add_kernel"): A, ("ROOT", "scale_kernel"): S}
    paths = pu.tree_paths(db)
    assert paths[("ROOT", "add_kernel")]["programs"] == A * 4
    assert paths[("ROOT", "scale_kernel")]["programs"] == S * 8
    assert paths[("ROOT", "add_kernel")]["time (ns)"] > 0
    dev = db[1]["CPU"]["0"]
    assert dev["num_cores"] >= 1 and dev["model"] and dev["arch"]
    assert "proton: wrote cap.hatchet" in p.stderr


def test_capture_console_table(tmp_path):
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1"}))
    assert p.stdout == "DONE\n"
    assert pu.child_files(tmp_path) == []
    t = pu.parse_console(p.stderr)
    assert t is not None, pu.describe(p)
    assert t["title"][:2] == (2, A + S)
    assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: A, SCALE_ROW: S}
    assert t["launches"] == []  # not verbose
    assert p.stderr.count("== Proton:") == 1
    for row in t["rows"].values():
        total, tmin, tmax, avg = row["times"]
        # printed with 3-4 significant digits: compare with a relative tolerance
        assert tmin <= avg * 1.01 and avg <= tmax * 1.01 and tmax <= total * 1.01
        assert avg * row["count"] == pytest.approx(total, rel=0.05)  # avg has 2-4 significant digits
    # longest total first
    totals = [r["times"][0] for r in t["rows"].values()]
    assert totals == sorted(totals, reverse=True)


def test_capture_verbose_rows(tmp_path):
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_VERBOSE": "1"}))
    t = pu.parse_console(p.stderr)
    assert t is not None, pu.describe(p)
    assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: A, SCALE_ROW: S}
    assert "-- launches --" in p.stderr
    names = [r[0] for r in t["launches"]]
    assert names == ["add_kernel"] * A + ["scale_kernel"] * S, t["launches"]
    assert all("[4,1,1]" in r for r in t["launches"][:A]) and all("[8,1,1]" in r for r in t["launches"][A:])


# ---- capture off / disabled --------------------------------------------------------------

@pytest.mark.parametrize("env", [{}, {"PROTON_KERNEL_CAPTURE": "0", "PROTON_OUTPUT": "cap.json"},
                                 {"PROTON_OUTPUT": "cap.hatchet"}], ids=["unset", "zero", "output-only"])
def test_capture_off_writes_nothing(tmp_path, env):
    p = pu.check_ok(pu.run_child(WORK, tmp_path, env))
    assert p.stdout == "DONE\n"
    assert p.stderr == ""
    assert pu.child_files(tmp_path) == []


@pytest.mark.parametrize("var", ["TRITON_DISABLE_PROTON", "TRITON_PROTON_DISABLE"])
def test_disable_turns_everything_off(tmp_path, var):
    p = pu.check_ok(pu.run_child("""
        import triton.profiler as proton
        b = Bufs()
        sid = proton.start("sess", backend="cpu")
        print("SID", sid)
        with proton.scope("s", metrics={"a": 1.0}):
            launch_add(b, 2)
        proton.finalize()
        workload(b)
        print('DONE')
        """, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json", var: "1"}))
    assert p.stdout == "SID None\nDONE\n"
    assert p.stderr == ""
    assert pu.child_files(tmp_path) == []


def test_disable_turns_spine_profiler_off(tmp_path):
    p = pu.check_ok(pu.run_child("""
        from triton.backends.spine_triton.proton import profiler
        b = Bufs()
        with profiler.profile(output_path="sp.json"):
            launch_add(b, 2)
        with profiler.profile():
            launch_add(b, 2)
        print("RESULTS", profiler.get_results())
        """, tmp_path, {"TRITON_DISABLE_PROTON": "1"}))
    assert p.stdout == "RESULTS {}\n"
    assert pu.child_files(tmp_path) == []
    assert p.stderr == ""


def test_trace_limit_drops_are_exact(tmp_path):
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "lim.json",
                                                   "PROTON_TRACE_LIMIT": "5"}))
    tr = pu.load_json(tmp_path / "lim.json")
    assert pu.validate_trace(tr) == []
    kept = len(pu.kernel_events(tr)) + len(pu.events(tr, ph="X", cat="program"))
    recorded = (A + S) + (A * 4 + S * 8)  # launches + program instances
    assert len(pu.kernel_events(tr)) <= 5 and len(pu.events(tr, ph="X", cat="program")) <= 5
    assert kept + tr["otherData"]["dropped_events"] == recorded
    dropped = tr["otherData"]["dropped_events"]
    assert f"proton: {dropped} timeline events dropped (PROTON_TRACE_LIMIT=5)" in p.stderr


def test_trace_limit_keeps_tree_exact(tmp_path):
    # the table needs no timeline: nothing is kept, so nothing is dropped or reported
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_TRACE_LIMIT": "3"}))
    t = pu.parse_console(p.stderr)
    assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: A, SCALE_ROW: S}
    assert "ropped" not in p.stderr
    # PROTON_VERBOSE lists launches from the timeline: then the limit applies and says so
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_TRACE_LIMIT": "3",
                                                   "PROTON_VERBOSE": "1"}))
    m = re.search(r"^Dropped timeline events: (\d+) \(PROTON_TRACE_LIMIT=3; the table is exact\)$", p.stderr, re.M)
    assert m, p.stderr
    recorded = (A + S) + (A * 4 + S * 8)
    assert recorded - 2 * 3 <= int(m.group(1)) <= recorded  # at most 3 kept in each of the two pools


def test_timeline_only_when_the_output_needs_it(tmp_path):
    """A .hatchet needs no timeline: no drop line whatever the limit (issue 14); at
    PROTON_TRACE_LIMIT=0 a trace has no events and no drop line either."""
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "t.hatchet",
                                                   "PROTON_TRACE_LIMIT": "2"}))
    assert "dropped" not in p.stderr
    assert pu.kernel_counts(pu.load_json(tmp_path / "t.hatchet")) == {("ROOT", "add_kernel"): A,
                                                                     ("ROOT", "scale_kernel"): S}
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "t0.json",
                                                   "PROTON_TRACE_LIMIT": "0"}))
    assert "dropped" not in p.stderr
    tr = pu.load_json(tmp_path / "t0.json")
    assert pu.validate_trace(tr) == []
    assert pu.kernel_events(tr) == [] and tr["otherData"]["dropped_events"] == 0
    # PROTON_VERBOSE asks for launch rows: at 0 the table says why there are none
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_VERBOSE": "1",
                                                   "PROTON_TRACE_LIMIT": "0"}))
    assert "ropped" not in p.stderr
    assert "-- launches: none listed (PROTON_TRACE_LIMIT=0 keeps no timeline) --" in p.stderr.splitlines(), p.stderr
    assert {k: v["count"] for k, v in pu.parse_console(p.stderr)["rows"].items()} == {ADD_ROW: A, SCALE_ROW: S}


def test_timeline_started_late_is_reported(tmp_path):
    """With no trace output the store keeps no timeline until the spine-triton profiler
    module is imported; a Chrome trace dumped then lacks the earlier launches (the tree
    has them all), and one line says so. Imported first: every launch, no such line."""
    late = ("b = Bufs()\nlaunch_add(b, %d)\n"
            "from triton.backends.spine_triton.proton import profiler\n"
            "launch_scale(b, %d)\n"
            "profiler.dump('late.json')\nprofiler.dump('late2.json')\nprofiler.dump('late.hatchet')\n" % (A, S))
    p = pu.check_ok(pu.run_child(late, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "none"}))
    tr = pu.load_json(tmp_path / "late.json")
    assert pu.validate_trace(tr) == []
    assert [e["name"] for e in pu.kernel_events(tr)] == ["scale_kernel"] * S  # after the import only
    assert pu.kernel_counts(pu.load_json(tmp_path / "late.hatchet")) == {("ROOT", "add_kernel"): A,
                                                                        ("ROOT", "scale_kernel"): S}
    lines = [ln for ln in p.stderr.splitlines() if "not in this trace" in ln]
    assert len(lines) == 1 and lines[0].startswith("proton: late.json: the capture store kept no timeline until"), \
        p.stderr
    first = ("from triton.backends.spine_triton.proton import profiler\n"
             "b = Bufs()\nlaunch_add(b, %d)\nlaunch_scale(b, %d)\nprofiler.dump('first.json')\n" % (A, S))
    p = pu.check_ok(pu.run_child(first, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "none"}))
    assert "not in this trace" not in p.stderr and "no timeline" not in p.stderr, p.stderr
    tr = pu.load_json(tmp_path / "first.json")
    assert sorted(e["name"] for e in pu.kernel_events(tr)) == ["add_kernel"] * A + ["scale_kernel"] * S


# ---- output names ---------------------------------------------------------------------------

def test_output_pid_expansion(tmp_path):
    p = pu.check_ok(pu.run_child("import os\nprint(os.getpid())\n" + WORK, tmp_path,
                                 {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.%p.json"}))
    pid = int(p.stdout.split()[0])
    assert pu.child_files(tmp_path) == [f"cap.{pid}.json"]
    tr = pu.load_json(tmp_path / f"cap.{pid}.json")
    assert pu.validate_trace(tr) == []
    assert len(pu.kernel_events(tr)) == A + S


@pytest.mark.parametrize("var,val,out,expect", [
    ("RANK", "3", "cap.hatchet", "cap.rank3.hatchet"),
    (None, None, "a%%b.json", "a%b.json"),
    ("OMPI_COMM_WORLD_RANK", "5", "out", "out.rank5"),
    ("PMI_RANK", "2", "r%r.json", "r2.json"),
])
def test_output_rank_names(tmp_path, var, val, out, expect):
    env = {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": out}
    if var:
        env[var] = val
    pu.check_ok(pu.run_child(WORK, tmp_path, env))
    assert pu.child_files(tmp_path) == [expect]
    if expect.endswith(".hatchet"):
        assert pu.kernel_counts(pu.load_json(tmp_path / expect)) == {("ROOT", "add_kernel"): A,
                                                                     ("ROOT", "scale_kernel"): S}
    elif expect.endswith(".json"):
        assert len(pu.kernel_events(pu.load_json(tmp_path / expect))) == A + S
    else:  # any other suffix: the console table, written into that file
        t = pu.parse_console((tmp_path / expect).read_text())
        assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: A, SCALE_ROW: S}


# ---- exit paths ---------------------------------------------------------------------------

LOOP = """
import time
b = Bufs()
i = 0
while True:
    launch_add(b)
    i += 1
    print("LAUNCHED", i, flush=True)
    time.sleep(0.002)
"""


def _run_until(proc, launches, timeout=60):
    """Reads the child's stdout until it reports `launches` launches; returns the lines."""
    lines = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        ln = proc.stdout.readline()
        if not ln:
            break
        lines.append(ln)
        if ln.startswith("LAUNCHED") and int(ln.split()[1]) >= launches:
            return lines
    proc.kill()
    out, err = proc.communicate()
    pytest.fail(f"child did not launch {launches} times: {''.join(lines)}{out}\n{err}")


def _finish(proc, lines):
    # read through proc.stdout (not communicate(), which reads the pipe's fd directly and
    # would miss lines _run_until's readline already buffered while the child ran ahead)
    errs = []
    t = threading.Thread(target=lambda: errs.append(proc.stderr.read()), daemon=True)
    t.start()
    out = proc.stdout.read()
    proc.wait(timeout=60)
    t.join(60)
    err = errs[0] if errs else ""
    lines = lines + out.splitlines(keepends=True)
    n = max(int(ln.split()[1]) for ln in lines if ln.startswith("LAUNCHED"))
    return n, err


LOOP_IN_SESSION = """
import triton.profiler as proton
proton.start("sess")  # never finalized: written by the signal handler too
with proton.scope("loop"):
""" + textwrap.indent(LOOP, "    ")


def test_sigterm_leaves_valid_files(tmp_path):
    proc = pu.start_child(LOOP_IN_SESSION, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "term.json"})
    lines = _run_until(proc, 5)
    proc.send_signal(signal.SIGTERM)
    n, err = _finish(proc, lines)
    assert proc.returncode == -signal.SIGTERM, err  # death by SIGTERM, as without Proton
    assert pu.child_files(tmp_path) == ["sess.hatchet", "term.json"], err
    tr = pu.load_json(tmp_path / "term.json")
    assert pu.validate_trace(tr) == []
    ks = pu.kernel_events(tr, "add_kernel")
    # every launch reported before the signal is there (one more may have run after the print)
    assert n <= len(ks) <= n + 1, (n, len(ks))
    counts = pu.kernel_counts(pu.load_json(tmp_path / "sess.hatchet"))
    assert list(counts) == [("ROOT", "loop", "add_kernel")]
    assert n <= counts[("ROOT", "loop", "add_kernel")] <= n + 1


def test_sigint_leaves_valid_trace(tmp_path):
    proc = pu.start_child(LOOP, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "int.json"})
    lines = _run_until(proc, 5)
    proc.send_signal(signal.SIGINT)
    n, err = _finish(proc, lines)
    assert "KeyboardInterrupt" in err
    assert proc.returncode in (1, -signal.SIGINT), err
    assert pu.child_files(tmp_path) == ["int.json"], err
    tr = pu.load_json(tmp_path / "int.json")
    assert pu.validate_trace(tr) == []
    assert n <= len(pu.kernel_events(tr, "add_kernel")) <= n + 1


@pytest.mark.parametrize("out", ["exc.hatchet", "exc.json", None])
def test_uncaught_exception_leaves_valid_file(tmp_path, out):
    p = pu.run_child("import triton.profiler as proton\nproton.start('sess')\n" + WORK +
                     "raise RuntimeError('proton-test-boom')\n", tmp_path,
                     {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": out})
    assert p.returncode == 1, pu.describe(p)
    assert "Traceback (most recent call last)" in p.stderr
    assert "RuntimeError: proton-test-boom" in p.stderr
    assert pu.child_files(tmp_path) == sorted({out, "sess.hatchet"} - {None})
    assert pu.kernel_counts(pu.load_json(tmp_path / "sess.hatchet")) == {("ROOT", "add_kernel"): A,
                                                                        ("ROOT", "scale_kernel"): S}
    if out is None:  # the console table, after the traceback
        assert p.stderr.index("RuntimeError: proton-test-boom") < p.stderr.index("== Proton:")
        t = pu.parse_console(p.stderr)
        assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: A, SCALE_ROW: S}
    elif out.endswith(".hatchet"):
        assert pu.kernel_counts(pu.load_json(tmp_path / out)) == {("ROOT", "add_kernel"): A,
                                                                  ("ROOT", "scale_kernel"): S}
    else:
        tr = pu.load_json(tmp_path / out)
        assert pu.validate_trace(tr) == []
        assert (len(pu.kernel_events(tr, "add_kernel")), len(pu.kernel_events(tr, "scale_kernel"))) == (A, S)


# ---- errors and host scopes under capture (issue 14) --------------------------------------

def test_unwritable_output_is_reported_once(tmp_path):
    p = pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "no/such/dir/cap.json"})
    assert p.returncode == 0, pu.describe(p)
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("proton:") and "cap.json" in ln]
    assert lines == ["proton: cannot write no/such/dir/cap.json: No such file or directory"], p.stderr
    assert pu.child_files(tmp_path) == []


def test_finalize_raises_oserror_with_the_path(tmp_path):
    p = pu.check_ok(pu.run_child(
        "import triton.profiler as proton\n"
        "proton.start('no/such/dir/sess', backend='cpu')\n" + WORK +
        "try:\n    proton.finalize()\nexcept OSError as e:\n"
        "    print(type(e).__name__, e.errno, e.filename)\n", tmp_path, {}))
    assert p.stdout.splitlines()[-1] == "FileNotFoundError 2 no/such/dir/sess.hatchet", pu.describe(p)
    assert "cannot write" not in p.stderr  # the exception is the one message
    assert pu.child_files(tmp_path) == []


def test_host_scopes_recorded_under_capture_alone(tmp_path):
    code = ("import triton.profiler as proton\n"
            "with proton.scope('outer'):\n"
            "    with proton.cpu_timed_scope('inner'):\n"
            "        workload(a=%d, s=%d)\n"
            "proton.enter_scope('manual')\nlaunch_add(Bufs(), 1)\nproton.exit_scope('manual')\n" % (A, S))
    pu.check_ok(pu.run_child(code, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "sc.hatchet"}))
    db = pu.load_json(tmp_path / "sc.hatchet")
    assert pu.kernel_counts(db) == {("ROOT", "outer", "inner", "add_kernel"): A,
                                    ("ROOT", "outer", "inner", "scale_kernel"): S,
                                    ("ROOT", "manual", "add_kernel"): 1}
    assert pu.tree_paths(db)[("ROOT", "outer", "inner")]["cpu_time (ns)"] > 0
    # the spine-triton profiler.stop() stops them too
    code = ("import triton.profiler as proton\n"
            "from triton.backends.spine_triton.proton import profiler\n"
            "profiler.stop()\n"
            "with proton.scope('off'):\n    launch_add(Bufs(), 1)\n"
            "profiler.start()\n"
            "with proton.scope('on'):\n    launch_add(Bufs(), 1)\n")
    pu.check_ok(pu.run_child(code, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "sc2.hatchet"}))
    assert pu.kernel_counts(pu.load_json(tmp_path / "sc2.hatchet")) == {("ROOT", "on", "add_kernel"): 1}


# ---- 8 threads ------------------------------------------------------------------------------

THREADS = """
import threading
import triton.profiler as proton
PER = {per}
OWN = {own}
sid = proton.start("sess", backend="cpu")
barrier = threading.Barrier(8)
errors = []
def work(t):
    try:
        b = Bufs()
        k = THREAD_KERNELS[t] if OWN else add_kernel
        barrier.wait()
        with proton.scope("thread%d" % t):
            for _ in range(PER):
                if OWN:
                    k[GRID_ADD](b.x, b.o, b.n, BLOCK=BLOCK_ADD)
                else:
                    k[GRID_ADD](b.x, b.y, b.o, b.n, BLOCK=BLOCK_ADD)
        assert torch.allclose(b.o, b.x + float(t)) if OWN else torch.allclose(b.o, b.x + b.y)
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work, args=(t,)) for t in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
proton.finalize()
assert not errors, errors
print("DONE")
"""


@pytest.mark.parametrize("own", [False, True], ids=["same-kernel", "own-kernel"])
def test_eight_threads_lose_nothing(tmp_path, own):
    per = 150
    p = pu.check_ok(pu.run_child(THREADS.format(per=per, own=own), tmp_path,
                                 {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "threads.json"}))
    assert p.stdout == "DONE\n"
    tr = pu.load_json(tmp_path / "threads.json")
    assert pu.validate_trace(tr) == []
    assert tr["otherData"]["dropped_events"] == 0
    ks = pu.kernel_events(tr)
    assert len(ks) == 8 * per
    by_tid = {}
    for e in ks:
        by_tid.setdefault(e["tid"], []).append(e["name"])
    assert len(by_tid) == 8 and all(len(v) == per for v in by_tid.values()), {t: len(v) for t, v in by_tid.items()}
    if own:
        assert sorted(v[0] for v in by_tid.values()) == [f"tk{i}" for i in range(8)]
        assert all(len(set(v)) == 1 for v in by_tid.values())
    # each thread's launches sit under that thread's own host scope
    stacks = {}
    for e in ks:
        stacks.setdefault(e["tid"], set()).add(tuple(e["args"]["call_stack"][:2]))
    assert sorted(v.pop() for v in stacks.values() if len(v) == 1) == sorted(("ROOT", f"thread{t}") for t in range(8))
    assert len(pu.events(tr, ph="X", cat="program")) == 8 * per * 4
    assert len(pu.events(tr, ph="X", cat="host_scope")) == 8
    # the session recorded the same launches into its tree
    db = pu.load_json(tmp_path / "sess.hatchet")
    want = ({("ROOT", f"thread{i}", f"tk{i}"): per for i in range(8)} if own else
            {("ROOT", f"thread{i}", "add_kernel"): per for i in range(8)})
    assert pu.kernel_counts(db) == want
    assert sum(m["programs"] for p_, m in pu.tree_paths(db).items() if m.get("device_type")) == 8 * per * 4


# ---- counters -------------------------------------------------------------------------------

def test_default_counters_without_pmu(tmp_path):
    if not _software_counters():
        pytest.skip("this machine has a hardware PMU: the software-event fallback is not used")
    # profiler.start(): the dump format is chosen later, so the store keeps its timeline
    p = pu.check_ok(pu.run_child("from triton.backends.spine_triton.proton import profiler\n"
                                 "profiler.start()\n" + WORK +
                                 "profiler.dump('cap.hatchet')\nprofiler.dump('cap.json')\nworkload()\n",
                                 tmp_path, {"PROTON_KERNEL_CAPTURE": "1"}))
    notices = [ln for ln in p.stderr.splitlines() if ln.startswith("proton:") and "counting" in ln]
    assert len(notices) == 1, p.stderr  # said once
    assert notices[0].startswith(NOTICE)
    assert notices[0].endswith("counting task-clock, page-faults, context-switches instead")
    t = pu.parse_console(p.stderr)
    assert t["header"][6:] == ["task-clock", "page-faults", "context-switches"]
    assert t["title"][2] == "software"
    assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: 2 * A, SCALE_ROW: 2 * S}
    db = pu.load_json(tmp_path / "cap.hatchet")
    tr = pu.load_json(tmp_path / "cap.json")
    for m in (pu.tree_paths(db)[("ROOT", "add_kernel")], pu.kernel_events(tr, "add_kernel")[0]["args"]["counters"]):
        assert {"task-clock (ns)", "page-faults", "context-switches"} <= set(m)
    assert db[1]["CPU"]["0"]["counter_source"] == "software"
    assert tr["otherData"]["events"] == ["task-clock (ns)", "page-faults", "context-switches"]
    # no metric, argument or counter track is ever called "cycles"
    for obj in (db, tr):
        assert not [k for k in pu.all_keys(obj) if "cycles" in k.lower()]
    assert not [e for e in tr["traceEvents"] if "cycles" in e.get("name", "").lower()]
    assert "cycles" not in " ".join(t["header"]).lower()


def test_events_page_faults_only(tmp_path):
    p = pu.check_ok(pu.run_child(WORK + "from triton.backends.spine_triton.proton import profiler\n"
                                 "profiler.dump('cap.hatchet')\n", tmp_path,
                                 {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "page-faults"}))
    assert "counting" not in p.stderr  # nothing was unavailable: no notice
    assert pu.parse_console(p.stderr) is None  # dumped by the script: nothing left for exit
    m = pu.tree_paths(pu.load_json(tmp_path / "cap.hatchet"))[("ROOT", "add_kernel")]
    assert "page-faults" in m and isinstance(m["page-faults"], int)
    assert not {"task-clock (ns)", "context-switches", "cycles", "instructions"} & set(m)


def test_events_page_faults_console(tmp_path):
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "page-faults"}))
    t = pu.parse_console(p.stderr)
    assert t["header"][6:] == ["page-faults"]
    assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: A, SCALE_ROW: S}


PAGE_FAULT_CHILD = """
import ctypes
ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE: 4 KiB pages, one fault per page written

@triton.jit
def fill_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), tl.float32) + 1.0, mask=offs < n)

BLOCK = 16384                      # 64 KiB of float32 per program: 16 fresh pages each
small = torch.empty(BLOCK)
fill_kernel[(1,)](small, BLOCK, BLOCK=BLOCK)  # compiled (and recorded) before the measured launch
n = 64 * 1024 * 1024 // 4          # 64 MiB, allocated by mmap and never touched before the launch
out = torch.empty(n)
fill_kernel[(n // BLOCK,)](out, n, BLOCK=BLOCK)
assert bool((out[::1024] == 1.0).all())
print(os.sysconf("SC_PAGE_SIZE"), n * 4)
"""


def test_worker_thread_page_faults_are_counted(tmp_path):
    """Counter values of a launch include every OpenMP worker's work (issue 3 item 4):
    a grid of 1024 programs, run by 2 threads, writes 64 MiB of fresh pages; the
    launch's page-faults are at least ~the number of pages written (each thread
    faults in its own half), not only the launching thread's share."""
    p = pu.check_ok(pu.run_child("import os\n" + PAGE_FAULT_CHILD, tmp_path, {
        "PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "page-faults", "PROTON_OUTPUT": "cap.json",
        "OMP_NUM_THREADS": "2"}))
    page, nbytes = map(int, p.stdout.split())
    pages = nbytes // page
    tr = pu.load_json(tmp_path / "cap.json")
    big = [e for e in pu.kernel_events(tr, "fill_kernel") if e["args"]["grid"] == [1024, 1, 1]]
    assert len(big) == 1, pu.kernel_events(tr)
    args = big[0]["args"]
    assert args["threads"] == 2, args  # both OpenMP threads ran programs
    faults = args["counters"]["page-faults"]
    # one thread alone sees about half; the sum of both is about all pages (a few
    # more for the runtime's own first touches)
    assert faults >= 0.9 * pages, (faults, pages)
    assert faults <= 1.5 * pages + 2000, (faults, pages)


@pytest.mark.parametrize("events", [
    "no-such-event-xyz,page-faults",
    "no-such-event-xyz",
])
def test_unknown_event_gives_notice(tmp_path, events):
    p = pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": events})
    assert p.returncode == 0, pu.describe(p)
    notices = [ln for ln in p.stderr.splitlines() if "no-such-event-xyz" in ln]
    assert len(notices) == 1, p.stderr
    assert notices[0].startswith("proton: ") and "unknown event" in notices[0]
    t = pu.parse_console(p.stderr)
    assert {k: v["count"] for k, v in t["rows"].items()} == {ADD_ROW: A, SCALE_ROW: S}
    if "page-faults" in events:
        assert notices[0].endswith("counting page-faults instead")
        assert t["header"][6:] == ["page-faults"]
    else:
        assert t["header"][6:] == []


def test_unavailable_hardware_event_gives_notice(tmp_path):
    if not _software_counters():
        pytest.skip("this machine has a hardware PMU")
    p = pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "cycles"}))
    assert any(ln.startswith("proton: ") and "cycles" in ln for ln in p.stderr.splitlines()), p.stderr


# ---- proton-cli ---------------------------------------------------------------------------

def test_html_header_counts_kernels_as_the_console_does(tmp_path):
    """One kernel on two grids and under two host scopes, another under one: the console
    table says 2 kernels on 3 rows, and proton-cli html's header says 2 for the .hatchet
    and the Chrome trace of the same run, not one per kernel node (3) or row (3)."""
    code = ("import triton.profiler as proton\n"
            "from triton.backends.spine_triton.proton import profiler\n"
            "b = Bufs()\n"
            "with proton.scope('s1'):\n"
            "    launch_add(b, 2)\n"
            "    add_kernel[(2,)](b.x, b.y, b.o, 500, BLOCK=BLOCK_ADD)\n"
            "with proton.scope('s2'):\n"
            "    launch_add(b, 1)\n"
            "    launch_scale(b, 1)\n"
            "profiler.dump('k.hatchet')\nprofiler.dump('k.json')\nprofiler.dump()\n")
    p = pu.check_ok(pu.run_child(code, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "none"}))
    t = pu.parse_console(p.stderr)
    assert t["title"][:2] == (2, 5) and sorted(t["rows"]) == ["add_kernel[2,1,1]", "add_kernel[4,1,1]",
                                                              "scale_kernel[8,1,1]"], p.stderr
    assert len(pu.kernel_counts(pu.load_json(tmp_path / "k.hatchet"))) == 3  # kernel nodes: s1/add, s2/add, s2/scale
    for f in ("k.hatchet", "k.json"):
        r = subprocess.run([pu.PROTON_CLI, "html", f, "-o", f + ".html"], cwd=str(tmp_path), capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        page = (tmp_path / (f + ".html")).read_text()
        cards = dict(re.findall(r'<div class="k">([^<]*)</div><div class="v"[^>]*>([^<]*)<', page))
        assert (cards["Kernels"], cards["Launches"]) == (str(t["title"][0]), str(t["title"][1])), (f, cards)


def test_proton_cli_report_of_capture(tmp_path):
    assert os.access(pu.PROTON_CLI, os.X_OK), f"{pu.PROTON_CLI} is not built (make build/bin/proton-cli)"
    pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.hatchet"}))
    r = subprocess.run([pu.PROTON_CLI, "report", str(tmp_path / "cap.hatchet")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(re.search(r"\bROOT\b", ln) for ln in lines), r.stdout
    assert any(re.search(r"\badd_kernel\b", ln) for ln in lines), r.stdout
    assert any(re.search(r"\bscale_kernel\b", ln) for ln in lines), r.stdout
    r = subprocess.run([pu.PROTON_CLI, "report", "-m", "count", "--format", "json", str(tmp_path / "cap.hatchet")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert '"add_kernel"' in r.stdout and '"scale_kernel"' in r.stdout
