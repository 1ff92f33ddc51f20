"""States (upstream `proton.state`, reference/proton.md §1.5).

A state names the last element of the call path of everything recorded on this
thread while it is set: with `enter_scope("test0")`, `enter_state("state")`,
`enter_scope("test1", metrics={"a": 1.0})` the scope keeps its node
`ROOT/test0/test1` (kernels and inner scopes go below it) and its metrics land on the
leaf `ROOT/test0/test1/state`; a kernel launched meanwhile is recorded at
`ROOT/test0/test1/state/<kernel>`. At most one state per thread: entering one
replaces the current one, `exit_state()` clears it, and leaving a `with state(...)`
block puts back the state that was set when it was entered.
`metadata_state(kernel)` is the state `__proton_launch_metadata:<kernel>` under which
the launch hook evaluates a kernel's launch_metadata function: it is two path
elements, `__proton_launch_metadata/<kernel>` (the viewer hides that subtree).
Like scopes, states are no-ops while profiling is off."""
from __future__ import annotations

import functools
import threading
from typing import Optional

from triton._C import tritium as _C

from .flags import flags

COMPUTE_METADATA_SCOPE_NAME = "__proton_launch_metadata"
_METADATA_PREFIX = COMPUTE_METADATA_SCOPE_NAME + ":"

_tls = threading.local()


def _current() -> Optional[str]:
    return getattr(_tls, "state", None)


def _set(name: Optional[str]) -> None:
    _tls.state = name
    if name is None:
        _C.pn_state_exit()
    else:
        _C.pn_state_enter(name)


def enter_state(name: str) -> None:
    if not flags.profiling_on:
        return
    _set(name)


def exit_state() -> None:
    if not flags.profiling_on:
        return
    _set(None)


class state:
    """Context manager and decorator: `with proton.state("backward"): ...`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._entered = False
        self._prev = None

    def __enter__(self):
        if flags.profiling_on:
            self._prev = _current()
            self._entered = True
            _set(self.name)
        return self

    def __exit__(self, *exc) -> None:
        if self._entered:
            self._entered = False
            if flags.profiling_on:
                _set(self._prev)

    def __call__(self, func):
        name = self.name

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with state(name):
                return func(*args, **kwargs)
        return wrapper


class metadata_state(state):
    """The state a kernel's launch_metadata function runs under (internal)."""

    def __init__(self, kernel_name: Optional[str] = None) -> None:
        super().__init__(COMPUTE_METADATA_SCOPE_NAME if kernel_name is None else _METADATA_PREFIX + kernel_name)
