"""Proton under faults and forks (issue 14): signals during the exit-time write, stale
temporary files, forked children and multiprocessing workers.

The exit write is held open with PROTON_TEST_WRITE_STALL_MS (a test hook in
proton/src/pn_output.c: every file stays at its temporary name that long before the
rename), so a signal can be sent while it is in progress: the test waits until the
temporary file exists.
"""
import errno
import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import proton_util as pu

A, S = 7, 3
WORK = "workload(a=%d, s=%d)\nprint('DONE', flush=True)\n" % (A, S)


@pytest.fixture(scope="module", autouse=True)
def _warm():
    pu.warm_up()


def _wait_for(pattern, proc, timeout=60):
    t0 = time.time()
    while time.time() - t0 < timeout:
        found = glob.glob(pattern)
        if found:
            return found
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"child ended before {pattern} appeared: rc={proc.returncode}\n{out}\n{err}")
        time.sleep(0.02)
    proc.kill()
    pytest.fail(f"{pattern} never appeared")


def _temp_files(d):
    return [f for f in os.listdir(d) if ".tmp." in f]


# ---- signals during the exit write --------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_during_exit_write(tmp_path, sig):
    """The signal lets the write finish: a valid file with every launch, no temporary
    file, one "wrote" line; SIGTERM still ends the process by SIGTERM."""
    code = ("import triton.profiler as proton\n"
            "proton.start('sess', backend='cpu')\n" + WORK)  # never finalized: written at exit too
    proc = pu.start_child(code, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json",
                                           "PROTON_TEST_WRITE_STALL_MS": "1500"})
    _wait_for(str(tmp_path / "*.tmp.*"), proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    if sig == signal.SIGTERM:
        assert proc.returncode == -signal.SIGTERM, err
    assert out == "DONE\n", err
    assert _temp_files(tmp_path) == [], err
    assert pu.child_files(tmp_path) == ["cap.json", "sess.hatchet"], err
    tr = pu.load_json(tmp_path / "cap.json")
    assert pu.validate_trace(tr) == []
    assert (len(pu.kernel_events(tr, "add_kernel")), len(pu.kernel_events(tr, "scale_kernel"))) == (A, S)
    assert pu.kernel_counts(pu.load_json(tmp_path / "sess.hatchet")) == {("ROOT", "add_kernel"): A,
                                                                        ("ROOT", "scale_kernel"): S}
    assert err.count("proton: wrote cap.json") == 1, err


def test_sigterm_while_another_thread_writes(tmp_path):
    """A signal that reaches a thread other than the writer waits for the write too."""
    code = ("import threading, time, signal, os\n"
            "import triton.profiler as proton\n"
            "proton.start('sess', backend='cpu')\n" + WORK +
            "t = threading.Thread(target=proton.finalize)\n"
            "t.start()\n"
            "while not [f for f in os.listdir('.') if '.tmp.' in f]:\n"
            "    time.sleep(0.01)\n"
            "os.kill(os.getpid(), signal.SIGTERM)\n"
            "time.sleep(30)\n")
    p = pu.run_child(code, tmp_path, {"PROTON_TEST_WRITE_STALL_MS": "3000"}, timeout=60)
    assert p.returncode == -signal.SIGTERM, pu.describe(p)
    assert _temp_files(tmp_path) == [], pu.describe(p)
    assert pu.kernel_counts(pu.load_json(tmp_path / "sess.hatchet")) == {("ROOT", "add_kernel"): A,
                                                                        ("ROOT", "scale_kernel"): S}


def test_stale_temp_files_of_dead_processes_are_removed(tmp_path):
    """A SIGKILL mid-write leaves <out>.tmp.<pid>.<n>; the next write to the same path
    removes it when that pid is gone, and leaves live processes' files alone."""
    proc = pu.start_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json",
                                           "PROTON_TEST_WRITE_STALL_MS": "5000"})
    stale = _wait_for(str(tmp_path / "cap.json.tmp.*"), proc)
    proc.kill()
    proc.wait()
    assert [os.path.basename(f) for f in stale] == _temp_files(tmp_path)  # left behind by SIGKILL
    alive = tmp_path / f"cap.json.tmp.{os.getpid()}.1"  # this pytest process is alive
    alive.write_text("{}")
    pu.check_ok(pu.run_child(WORK, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json"}))
    assert _temp_files(tmp_path) == [alive.name]
    assert pu.validate_trace(pu.load_json(tmp_path / "cap.json")) == []


def test_write_error_removes_the_temporary_file(tmp_path):
    """A write that fails half-way (file size limit: EFBIG) leaves no file and no
    temporary file: finalize() raises OSError with the path, the exit write of the
    capture store says so once, and the process exits normally."""
    code = ("import resource, signal\n"
            "import triton.profiler as proton\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "proton.start('sess', backend='cpu', data='trace')\n" + WORK +
            "resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))\n"
            "try:\n    proton.finalize()\nexcept OSError as e:\n"
            "    print('OSError', e.errno, e.filename, flush=True)\n")
    p = pu.run_child(code, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json",
                                      "PROTON_EVENTS": "none"})
    assert p.returncode == 0, pu.describe(p)
    assert p.stdout.splitlines()[-1] == "OSError %d sess.chrome_trace" % errno.EFBIG, pu.describe(p)
    assert [ln for ln in p.stderr.splitlines() if ln.startswith("proton:")] == \
        ["proton: cannot write cap.json: " + os.strerror(errno.EFBIG)], p.stderr
    assert pu.child_files(tmp_path) == [], pu.describe(p)  # no output, no .tmp.<pid>.<n>


# ---- fork and multiprocessing ---------------------------------------------------------------

def _launches(path):
    """Kernel launches in a trace, by kernel name."""
    tr = pu.load_json(path)
    assert pu.validate_trace(tr) == []
    out = {}
    for e in pu.kernel_events(tr):
        out[e["name"]] = out.get(e["name"], 0) + 1
    return out


def test_forked_child_writes_only_its_own_launches(tmp_path):
    code = ("import os, sys\n"
            "import triton.profiler as proton\n"
            "proton.start('sess', backend='cpu')\n"
            "b = Bufs()\n"
            "launch_add(b, 5)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    launch_scale(b, 2)\n"
            "    print('CHILD', os.getpid(), flush=True)\n"
            "    sys.exit(0)\n"
            "os.waitpid(pid, 0)\n"
            "launch_add(b, 1)\n")
    p = pu.check_ok(pu.run_child(code, tmp_path, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json"}))
    child = int(p.stdout.split()[1])
    assert pu.child_files(tmp_path) == sorted(["cap.json", f"cap.{child}.json", "sess.hatchet",
                                               f"sess.{child}.hatchet"]), pu.describe(p)
    assert _launches(tmp_path / "cap.json") == {"add_kernel": 6}  # the parent's only
    assert _launches(tmp_path / f"cap.{child}.json") == {"scale_kernel": 2}  # no pre-fork launches
    assert pu.kernel_counts(pu.load_json(tmp_path / "sess.hatchet")) == {("ROOT", "add_kernel"): 6}
    assert pu.kernel_counts(pu.load_json(tmp_path / f"sess.{child}.hatchet")) == {("ROOT", "scale_kernel"): 2}
    notices = [ln for ln in p.stderr.splitlines() if "was forked from" in ln]
    assert len(notices) == 1 and f"pid {child} was forked" in notices[0], p.stderr  # said once
    assert p.stderr.count("proton: wrote cap.json\n") == 1 and f"proton: wrote cap.{child}.json" in p.stderr


MP = """
import multiprocessing as mp, os, sys
def work(n):
    b = Bufs()
    launch_scale(b, n)
    return os.getpid()
if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    launch_add(Bufs(), 3)
    ps = [ctx.Process(target=work, args=(2,)) for _ in range(2)]
    [q.start() for q in ps]
    [q.join() for q in ps]
    assert [q.exitcode for q in ps] == [0, 0]
    with ctx.Pool(2) as pool:          # leaving the block terminates the workers (SIGTERM)
        pool.map(work, [1, 2, 3, 4])
    pool = ctx.Pool(2)                 # closed and joined: the workers leave normally
    pool.map(work, [1, 1])
    pool.close()
    pool.join()
    print("MADE", 3, 2 * 2 + 1 + 2 + 3 + 4 + 1 + 1, flush=True)
"""


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_workers_each_write_their_own_file(tmp_path, method):
    """Process and Pool workers (with and without `with`) each write one file of their
    own; merged, the files hold exactly the launches made."""
    script = tmp_path / "mpmain.py"
    script.write_text(pu.PRELUDE + MP)
    p = subprocess.run([sys.executable, str(script), method], cwd=str(tmp_path), capture_output=True, text=True,
                       timeout=300, env=pu.child_env({"PROTON_KERNEL_CAPTURE": "1", "PROTON_OUTPUT": "cap.json"}))
    assert p.returncode == 0, pu.describe(p)
    _, adds, scales = p.stdout.split()
    files = sorted(f for f in os.listdir(tmp_path) if f.startswith("cap.") and f.endswith(".json"))
    assert _temp_files(tmp_path) == [], files
    assert "cap.json" in files and len(files) >= 1 + 2 + 1, (files, p.stderr)  # parent, Processes, pools
    assert _launches(tmp_path / "cap.json") == {"add_kernel": int(adds)}  # the parent's own
    total = {}
    for f in files:
        for k, v in _launches(tmp_path / f).items():
            total[k] = total.get(k, 0) + v
    assert total == {"add_kernel": int(adds), "scale_kernel": int(scales)}, (files, p.stderr)
    m = subprocess.run([pu.PROTON_CLI, "merge"] + files + ["-o", "all.json"], cwd=str(tmp_path),
                       capture_output=True, text=True)
    assert m.returncode == 0, m.stderr
    assert _launches(tmp_path / "all.json") == total
    assert len({e["pid"] for e in pu.load_json(tmp_path / "all.json")["traceEvents"]}) == len(files)
