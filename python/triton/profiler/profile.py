"""Sessions: start / activate / deactivate / finalize / profile (upstream semantics,
reference/proton.md §1.1-1.3). The CPU backend is Proton's C core (proton/)."""
from __future__ import annotations

import functools
from typing import Optional

from triton._C import tritium as _C

from .flags import flags
from .hooks import HookManager, InstrumentationHook, LaunchHook, Hook
from . import mode as _mode

DEFAULT_PROFILE_NAME = "proton"
_BACKENDS = ("cpu", "cupti", "rocprofiler", "roctracer", "instrumentation")
_CONTEXTS = {"shadow": 0, "python": 1}
_DATA = {"tree": 0, "trace": 1}
_session_modes: dict = {}
_python_sessions: set = set()  # ids of context="python" sessions (context.depth)


def _disabled():
    """triton.knobs.proton.disable (which reads TRITON_PROTON_DISABLE, alias
    TRITON_DISABLE_PROTON, until it is set in code)."""
    import triton.knobs as knobs
    return bool(knobs.proton.disable)


def _mode_str(mode):
    if mode is None:
        return ""
    if isinstance(mode, _mode.BaseMode):
        return str(mode)
    if isinstance(mode, str):
        name = mode.split(":")[0]
        if name not in ("", "pcsampling", "periodic_flushing", "default", "mma"):
            raise ValueError(f"Unknown mode: {mode}")
        for opt in mode.split(":")[1:]:
            if "=" not in opt:
                raise ValueError(f"Malformed instrumentation option: '{opt}'")
        return mode
    raise ValueError(f"Unknown mode: {mode}")


def start(name: Optional[str] = None, *, context: Optional[str] = "shadow", data: Optional[str] = "tree",
          backend: Optional[str] = None, mode=None, hook=None) -> Optional[int]:
    """Starts (and activates) a profiling session; returns its id, or None when
    profiling is disabled (triton.knobs.proton.disable, TRITON_PROTON_DISABLE) or run
    under the proton CLI."""
    if flags.command_line or _disabled():
        return None
    ctx = (context or "shadow").lower()
    if ctx not in _CONTEXTS:
        raise ValueError(f"Unknown context source: {context}")
    dat = (data or "tree").lower()
    if dat not in _DATA:
        raise ValueError(f"Unknown data: {data}")
    if backend is not None and backend not in _BACKENDS:
        raise ValueError(f"Unknown profiler: {backend}")
    mstr = _mode_str(mode)
    for sid, m in _session_modes.items():
        if m != mstr:
            raise ValueError("Cannot add a session with the same profiler but a different mode than existing "
                             "sessions")
    if hook is not None and hook != "triton" and not isinstance(hook, Hook):
        raise ValueError(f"Unsupported hook: {hook!r}")
    sid = _C.pn_session_start(name if name is not None else DEFAULT_PROFILE_NAME, _CONTEXTS[ctx], _DATA[dat])
    if sid is None:
        return None
    flags.profiling_on = True
    _session_modes[sid] = mstr
    if ctx == "python":
        _python_sessions.add(sid)
    if hook == "triton":
        HookManager.register(LaunchHook(), sid)
    elif isinstance(hook, Hook):
        HookManager.register(hook, sid)
    if backend == "instrumentation":
        HookManager.register(InstrumentationHook(mode), sid)
    return sid


def activate(session: Optional[int] = None) -> None:
    if flags.command_line and session not in (None, 0):
        raise ValueError("Only one session can be activated when running from the command line.")
    _C.pn_session_activate(-1 if session is None else session)
    HookManager.activate(session)


def deactivate(session: Optional[int] = None, flushing: bool = False) -> None:
    """Stops recording (the data stays). flushing=True also completes every phase
    before the current one (data.is_phase_complete); on the CPU nothing is buffered
    elsewhere, so that is all a flush has to do."""
    if flags.command_line and session not in (None, 0):
        raise ValueError("Only one session can be deactivated when running from the command line.")
    sid = -1 if session is None else session
    if flushing:
        _C.pn_session_flush(sid)
    _C.pn_session_deactivate(sid)
    HookManager.deactivate(session)


def finalize(session: Optional[int] = None, output_format: Optional[str] = "") -> None:
    if flags.command_line and session not in (None, 0):
        raise ValueError("Only one session can be finalized when running from the command line.")
    fmt = output_format or ""
    if fmt not in ("", "hatchet", "chrome_trace", "hatchet_msgpack"):
        raise ValueError(f"Unknown output format: {fmt}")
    _C.pn_session_finalize(-1 if session is None else session, fmt)
    if session is None:
        _session_modes.clear()
        _python_sessions.clear()
        flags.profiling_on = False
        HookManager.unregister()
    else:
        _session_modes.pop(session, None)
        _python_sessions.discard(session)
        HookManager.unregister(session)


def profile(func=None, *, name: Optional[str] = None, context: Optional[str] = "shadow",
            data: Optional[str] = "tree", backend: Optional[str] = None, mode=None, hook=None):
    """Decorator: starts a session around the function and deactivates it after
    (call finalize() to write the file)."""

    def decorator(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            sid = start(name=name, context=context, data=data, backend=backend, mode=mode, hook=hook)
            try:
                return f(*args, **kwargs)
            finally:
                if sid is not None:
                    deactivate(sid)
        return wrapper

    if func is None:
        return decorator
    return decorator(func)
