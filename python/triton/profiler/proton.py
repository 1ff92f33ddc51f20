"""`triton.profiler.proton`: the profiler API under this name too, and the `proton`
command line (`proton [options] script.py [args]`, `proton [options] pytest [args]`,
or `python -m triton.profiler.proton ...`), which profiles a whole script in one
session (upstream semantics, reference/proton.md §5). `proton -m pytest ...` is taken
as `proton pytest ...` (pytest is not a mode)."""
from __future__ import annotations

import argparse
import os
import runpy
import sys

from .flags import flags
from .profile import DEFAULT_PROFILE_NAME, activate, deactivate, finalize, profile, start  # noqa: F401
from .scope import cpu_timed_scope, enter_scope, exit_scope, scope  # noqa: F401
from .state import enter_state, exit_state, state  # noqa: F401


_VALUE_OPTS = ("-n", "--name", "-b", "--backend", "-c", "--context", "-m", "--mode", "-d", "--data", "-k", "--hook")


def _pytest_as_module(argv):
    """`-m pytest` among the options (before the target) becomes the target `pytest`."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-m", "--mode") and i + 1 < len(argv) and argv[i + 1] == "pytest":
            return argv[:i] + ["pytest"] + argv[i + 2:]
        if a in _VALUE_OPTS:
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            break
    return argv


def main(argv=None):
    argv = _pytest_as_module(list(sys.argv[1:] if argv is None else argv))
    p = argparse.ArgumentParser(prog="proton", description="Profile a Python script (or pytest) with Proton.")
    p.add_argument("-n", "--name", default=DEFAULT_PROFILE_NAME, help="output path without suffix")
    p.add_argument("-b", "--backend", default=None, choices=["cpu", "instrumentation"])
    p.add_argument("-c", "--context", default="shadow", choices=["shadow", "python"])
    p.add_argument("-m", "--mode", default=None)
    p.add_argument("-d", "--data", default="tree", choices=["tree", "trace"])
    p.add_argument("-k", "--hook", default=None, choices=["triton"])
    p.add_argument("target")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    start(a.name, context=a.context, data=a.data, backend=a.backend, mode=a.mode, hook=a.hook)
    flags.command_line = True
    code = 0
    try:
        if os.path.basename(a.target) == "pytest":
            import pytest
            code = pytest.main(a.args)
        else:
            sys.argv = [a.target] + a.args
            sys.path.insert(0, os.path.dirname(os.path.abspath(a.target)))
            runpy.run_path(a.target, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        flags.command_line = False
        finalize()
    return code


if __name__ == "__main__":
    sys.exit(main())
