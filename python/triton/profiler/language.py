"""triton.profiler.language (pl): in-kernel scopes.

`pl.enter_scope("load")` / `pl.exit_scope("load")` inside a @triton.jit kernel emit
`proton.record` when `flags.instrumentation_on` is set and the "triton" semantic is
enabled (`pl.enable_semantic("triton")`); otherwise they are silent no-ops, as
upstream. Each program instance records its own scope boundaries (time, and
counter deltas where the CPU allows user-space counter reads).
"""
from triton.language.core import _builder, _unwrap, builtin

from .flags import flags

_semantics = {"gluon"}


def enable_semantic(name: str):
    _semantics.add(name)


def disable_semantic(name: str):
    _semantics.discard(name)


def _record(is_start, name):
    if not flags.instrumentation_on:
        return
    if "triton" not in _semantics:
        raise TypeError("Unsupported semantic type: triton (call pl.enable_semantic('triton'))")
    name = _unwrap(name)
    if not isinstance(name, str):
        raise TypeError("scope names must be constexpr strings")
    _builder().c.proton_record(bool(is_start), name)


@builtin
def record(is_start, scope_name, semantic=None):
    _record(_unwrap(is_start), scope_name)


@builtin
def enter_scope(name):
    _record(True, name)


@builtin
def exit_scope(name):
    _record(False, name)


class scope:
    """`with pl.scope("load"):` inside a kernel."""

    def __init__(self, name):
        self.name = _unwrap(name)

    def __enter__(self):
        _record(True, self.name)
        return self

    def __exit__(self, *exc):
        _record(False, self.name)


class Event:
    def __init__(self, name):
        self.name = name


@builtin
def allocate_event(name):
    return Event(_unwrap(name))


@builtin
def start_event(ev):
    if not isinstance(ev, Event):
        raise TypeError("expected an event returned by allocate_event")
    _record(True, ev.name)


@builtin
def end_event(ev):
    if not isinstance(ev, Event):
        raise TypeError("expected an event returned by allocate_event")
    _record(False, ev.name)
