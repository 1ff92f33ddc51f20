"""Shared set-up for the Tritium pytest suite (tests/python).

* A session-wide temporary TRITON_CACHE_DIR is put into os.environ *before* triton is
  imported, so the suite never reads or pollutes ~/.triton/cache and every session
  starts cold. Variables that change compiler behaviour (dumps, forced recompiles,
  debug logging) are cleared for the same reason.
* `run_py` runs a Python script in a subprocess with the same interpreter, a given
  cache directory and extra environment, and returns the CompletedProcess; children
  print `STATS=<json>` (see `child_stats`) so the parent can read their counters.
* `fresh_cache` points TRITON_CACHE_DIR at an empty per-test directory (the C cache
  reads the variable on every lookup), for in-process cache tests.
* `stats_delta` measures what a block of code did to triton._C.tritium.stats().
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

_SESSION_CACHE = tempfile.mkdtemp(prefix="tritium-pytest-cache-")
os.environ["TRITON_CACHE_DIR"] = _SESSION_CACHE
for _var in ("SPINE_TRITON_DUMP_PATH", "TRITON_ALWAYS_COMPILE", "TRITIUM_DEBUG", "PROTON_KERNEL_CAPTURE",
             "PROTON_OUTPUT"):
    os.environ.pop(_var, None)

import pytest  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402,F401
from triton._C import tritium as _C  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Printed by child scripts so that the parent can parse the child's counters.
CHILD_STATS_SNIPPET = "import json as _j, triton as _t; print('STATS=' + _j.dumps(_t._C.tritium.stats()))"


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _seed():
    """Every test starts from the same torch RNG state (deterministic inputs)."""
    torch.manual_seed(0)
    yield


@pytest.fixture(scope="session")
def session_cache_dir():
    return _SESSION_CACHE


def run_python(script, cache_dir, env=None, args=(), timeout=180, cwd=None):
    """Runs `script` (a path) with this interpreter; TRITON_CACHE_DIR=cache_dir plus `env`
    (a value of None removes the variable). Returns the CompletedProcess (text mode)."""
    e = dict(os.environ)
    e["TRITON_CACHE_DIR"] = str(cache_dir)
    e.setdefault("OPENBLAS_NUM_THREADS", "1")
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = str(v)
    return subprocess.run([sys.executable, str(script), *map(str, args)], env=e, capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or REPO)


def child_stats(proc):
    """The stats dict a child printed with CHILD_STATS_SNIPPET (last STATS= line)."""
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("STATS=")]
    assert lines, f"child printed no STATS line\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return json.loads(lines[-1][len("STATS="):])


def check_ok(proc):
    assert proc.returncode == 0, f"child failed (rc={proc.returncode})\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture
def run_py():
    return run_python


def run_function_in_child(test_file, func_name, *str_args, cache_dir=None, env=None):
    """Calls `func_name(*str_args)` from the test module `test_file` in a child process
    and fails (with the child's output) unless it returns normally. For cases that kill
    the interpreter (compiler crash, SIGFPE), which an in-process xfail cannot contain."""
    mod = os.path.splitext(os.path.basename(test_file))[0]
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import {mod} as m; "
            f"m.{func_name}(*{list(str_args)!r}); print('CHILD-OK')")
    e = dict(os.environ)
    e["TRITON_CACHE_DIR"] = str(cache_dir or _SESSION_CACHE)
    e.update(env or {})
    proc = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=300,
                          cwd=HERE)
    assert proc.returncode == 0 and "CHILD-OK" in proc.stdout, (
        f"child {func_name}{str_args} failed with rc={proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\n"
        f"stderr:\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture
def run_in_child():
    return run_function_in_child


@pytest.fixture
def fresh_cache(monkeypatch, tmp_path):
    """An empty TRITON_CACHE_DIR for this test only (in-process)."""
    d = tmp_path / "cache"
    d.mkdir()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(d))
    return d


class StatsDelta:
    def __init__(self):
        self.before = dict(_C.stats())
        self.delta = {}

    def __enter__(self):
        self.before = dict(_C.stats())
        return self

    def __exit__(self, *exc):
        after = _C.stats()
        self.delta = {k: after[k] - self.before.get(k, 0) for k in after}

    def __getitem__(self, k):
        return self.delta[k]


@pytest.fixture
def stats_delta():
    """`with stats_delta() as d: ...; d["compiles"]` — counter changes inside the block."""
    return StatsDelta


def cache_entries(cache_dir):
    """Entry directories (one per cache key) under a cache root."""
    if not os.path.isdir(cache_dir):
        return []
    return sorted(p for p in os.listdir(cache_dir)
                  if not p.startswith(".") and os.path.isdir(os.path.join(cache_dir, p)))
