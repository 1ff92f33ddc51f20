"""Host scopes: scope / cpu_timed_scope / enter_scope / exit_scope (upstream semantics).

Kernels launched inside a scope become children of that scope in the tree. Scopes
record while a session is on (flags.profiling_on, upstream) and also while the
kernel-capture store records (flags.kernel_capture: PROTON_KERNEL_CAPTURE=1 alone).
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
    """Scalars and lists (vector metrics, summed element-wise) go to the C tree, which
    applies the roofline coercions (flops* float, bytes int) to both."""
    if not metrics:
        return
    for k, v in metrics.items():
        if hasattr(v, "tolist"):  # CPU tensors (upstream: a one-element tensor is a scalar), arrays
            v = v.item() if hasattr(v, "numel") and v.numel() == 1 else v.tolist()
        elif not isinstance(v, (int, float, list, tuple)):
            base = k.replace("(exc)", "").replace("(pty)", "").strip()
            v = float(v) if base in _ROOFLINE_FLOAT or not hasattr(v, "__index__") else int(v)
        _C.pn_add_metric(k, v)


def enter_scope(name: str, *, triton_op: bool = False, metrics: Optional[dict] = None) -> Optional[int]:
    if not (flags.profiling_on or flags.kernel_capture):
        return None
    sid = _C.pn_scope_enter(name)
    _stack().append((name, sid))
    _add_metrics(metrics)
    return sid


def exit_scope(name: Optional[str] = None, *, metrics: Optional[dict] = None) -> Optional[int]:
    if not (flags.profiling_on or flags.kernel_capture):
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


def _decorate(sc, func):
    """`@scope(name)` / `@cpu_timed_scope(name)`: a new scope of the same kind per call."""
    kind, name, metrics = type(sc), sc.name, sc.metrics

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with kind(name, metrics):
            return func(*args, **kwargs)
    return wrapper


_C.scope_set_hooks(_add_metrics, _decorate)

# Context manager and decorator: `with proton.scope("step", metrics={...}):`. A C type
# (python/src/py_scope.c): entering and leaving are one Proton call each, recording while
# flags.profiling_on or flags.kernel_capture is set; the Python scope stack is only used
# by enter_scope/exit_scope, which check names. `name`, `metrics` and `_id` (the Proton
# scope id while entered, else None) read as upstream's attributes.
scope = _C.Scope


class cpu_timed_scope(scope):
    """A scope that also records `cpu_time (ns)` (exclusive) measured in Python."""

    __slots__ = ("_t0",)

    def __init__(self, name: str, metrics: Optional[dict] = None):
        if metrics and "cpu_time" in metrics:
            raise ValueError("The metric name 'cpu_time' is reserved.")
        super().__init__(name, metrics)

    def __enter__(self):
        self._t0 = time.perf_counter_ns()
        return super().__enter__()

    def __exit__(self, *exc):
        if self._id is not None and (flags.profiling_on or flags.kernel_capture):
            _add_metrics({"cpu_time (ns)(exc)": time.perf_counter_ns() - self._t0})
        super().__exit__(*exc)
