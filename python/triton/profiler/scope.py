"""Host scopes: scope / cpu_timed_scope / enter_scope / exit_scope (upstream semantics).

Kernels launched inside a scope become children of that scope in the tree.
"""
from __future__ import annotations

import functools
import threading
import time
from typing import Optional

from triton._C import tritium as _C

from .flags import flags

_tls = threading.local()
_ROOFLINE_FLOAT = ("flops", "flops8", "flops16", "flops32", "flops64")


def _stack():
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
    return s


def _add_metrics(metrics):
    if not metrics:
        return
    for k, v in metrics.items():
        base = k.replace("(exc)", "").replace("(pty)", "").strip()
        if hasattr(v, "tolist"):
            v = v.tolist()
        if isinstance(v, (list, tuple)):
            for i, x in enumerate(v):  # vector metrics: one entry per element
                _C.pn_add_metric(f"{k}[{i}]", float(x) if base in _ROOFLINE_FLOAT else x)
            continue
        if base in _ROOFLINE_FLOAT:
            v = float(v)
        elif base == "bytes":
            v = int(v)
        _C.pn_add_metric(k, v)


def enter_scope(name: str, *, triton_op: bool = False, metrics: Optional[dict] = None) -> Optional[int]:
    if not flags.profiling_on:
        return None
    sid = _C.pn_scope_enter(name)
    _stack().append((name, sid))
    _add_metrics(metrics)
    return sid


def exit_scope(name: Optional[str] = None, *, metrics: Optional[dict] = None) -> Optional[int]:
    if not flags.profiling_on:
        return None
    st = _stack()
    if not st:
        raise ValueError("Scope stack is empty")
    top, sid = st[-1]
    if name is not None and name != top:
        raise ValueError(f"Scope name mismatch: {name} != {top}")
    _add_metrics(metrics)
    st.pop()
    _C.pn_scope_exit(sid)
    return sid


class scope:
    """Context manager and decorator: `with proton.scope("step", metrics={...}):`."""

    def __init__(self, name: str, metrics: Optional[dict] = None):
        self.name = name
        self.metrics = metrics
        self._entered = False

    def _enter(self, metrics=None):
        self._entered = flags.profiling_on
        if self._entered:
            enter_scope(self.name, metrics=self.metrics)

    def _exit(self, metrics=None):
        if self._entered and flags.profiling_on:
            exit_scope(self.name, metrics=metrics)
        self._entered = False

    def __enter__(self):
        self._enter()
        return self

    def __exit__(self, *exc):
        self._exit()

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with scope(self.name, self.metrics):
                return func(*args, **kwargs)
        return wrapper


class cpu_timed_scope(scope):
    """A scope that also records `cpu_time (ns)` (exclusive) measured in Python."""

    def __init__(self, name: str, metrics: Optional[dict] = None):
        if metrics and "cpu_time" in metrics:
            raise ValueError("The metric name 'cpu_time' is reserved.")
        super().__init__(name, metrics)

    def __enter__(self):
        self._t0 = time.perf_counter_ns()
        return super().__enter__()

    def __exit__(self, *exc):
        if self._entered and flags.profiling_on:
            exit_scope(self.name, metrics={"cpu_time (ns)(exc)": time.perf_counter_ns() - self._t0})
            self._entered = False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with cpu_timed_scope(self.name, self.metrics):
                return func(*args, **kwargs)
        return wrapper
