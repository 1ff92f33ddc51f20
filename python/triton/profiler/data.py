"""triton.profiler.data: the in-memory tree of a session as hatchet JSON."""
import json
from typing import Optional

from triton._C import tritium as _C


def get(session: Optional[int] = 0, phase: int = 0):
    if session is None:
        return None
    return json.loads(_C.pn_session_tree_json(session))


def get_json(session: Optional[int] = 0, phase: int = 0):
    if session is None:
        return None
    return _C.pn_session_tree_json(session)


_phases: dict = {}


def advance_phase(session: Optional[int] = 0):
    if session is None:
        return None
    _phases[session] = _phases.get(session, 0) + 1
    return _phases[session]


def is_phase_complete(session: Optional[int] = 0, phase: int = 0) -> bool:
    if session is None:
        return False
    return phase < _phases.get(session, 0)


def clear(session: Optional[int] = 0, phase: int = 0, clear_up_to_phase: bool = False):
    return None
