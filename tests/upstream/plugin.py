"""pytest plugin for upstream's extracted tests (loaded with -p plugin by run.py).

- Makes the extracted python/triton/_internal_testing.py importable as
  `triton._internal_testing` without copying it into Tritium's package.
- Records every test's outcome as one JSON line in $TRITIUM_UPSTREAM_RESULTS: a "start"
  line before the test runs (so a crash names its node), then the outcome with the first
  line of the failure and its exception type.
- A per-test timeout ($TRITIUM_UPSTREAM_TIMEOUT seconds): a watchdog thread writes a
  "hang" line and ends the process with status 70; run.py restarts after that node.
"""
import importlib.util
import json
import os
import sys
import threading
import time

_out = None
_lock = threading.Lock()
_current = {"node": None, "deadline": None}


def _write(rec):
    with _lock:
        _out.write(json.dumps(rec) + "\n")
        _out.flush()


def _watchdog():
    while True:
        time.sleep(1.0)
        d = _current["deadline"]
        if d is not None and time.monotonic() > d:
            _write({"node": _current["node"], "outcome": "hang",
                    "msg": f"no result within {os.environ.get('TRITIUM_UPSTREAM_TIMEOUT')} s"})
            os._exit(70)


def pytest_configure(config):
    global _out
    root = os.environ["TRITIUM_UPSTREAM_ROOT"]
    import triton
    spec = importlib.util.spec_from_file_location(
        "triton._internal_testing", os.path.join(root, "python/triton/_internal_testing.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["triton._internal_testing"] = mod
    spec.loader.exec_module(mod)
    triton._internal_testing = mod
    _out = open(os.environ["TRITIUM_UPSTREAM_RESULTS"], "a")
    threading.Thread(target=_watchdog, daemon=True).start()


def pytest_runtest_logstart(nodeid, location):
    _current["node"] = nodeid
    _current["deadline"] = time.monotonic() + float(os.environ.get("TRITIUM_UPSTREAM_TIMEOUT", "120"))
    _write({"node": nodeid, "outcome": "start"})


def _summary(report):
    exc = ""
    msg = ""
    lr = report.longrepr
    if lr is None:
        return exc, msg
    crash = getattr(getattr(lr, "reprcrash", None), "message", None)
    if crash is None and isinstance(lr, tuple):  # skip: (file, line, reason)
        crash = str(lr[2])
    if crash is None:
        crash = str(lr)
    first = crash.strip().splitlines()[0] if crash.strip() else ""
    if ": " in first and first.split(": ", 1)[0].replace(".", "").replace("_", "").isalnum():
        exc, msg = first.split(": ", 1)
    else:
        msg = first
    return exc, msg[:300]


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        if report.when != "call" and report.outcome == "passed":
            return
        outcome = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xfail" if report.skipped else "xpass"
        elif report.failed and report.when != "call":
            outcome = "error"
        exc, msg = _summary(report)
        _write({"node": report.nodeid, "outcome": outcome, "when": report.when, "exc": exc, "msg": msg})


def pytest_runtest_logfinish(nodeid, location):
    _current["deadline"] = None
