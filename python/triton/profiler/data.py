"""triton.profiler.data: a session's in-memory tree, per phase (reference/proton.md §1.6).

A session records into its current phase (0 at start). `advance_phase` starts the
next phase and returns its number; earlier phases keep their data until `clear`ed
or finalized, and `finalize` then writes one `<name>.part_<phase>.<format>` file per
phase. `is_phase_complete(phase)` is true once the phase was flushed
(`proton.deactivate(session, flushing=True)` completes every phase before the
current one). `get` gives a phase's tree as the hatchet JSON object, `get_msgpack`
the same structure as MessagePack bytes; both raise for data="trace" sessions. Every
function returns None (False for is_phase_complete) for session=None."""
import json
from typing import Optional

from triton._C import tritium as _C


def get(session: Optional[int] = 0, phase: int = 0):
    if session is None:
        return None
    return json.loads(_C.pn_session_phase_tree(session, phase, False))


def get_json(session: Optional[int] = 0, phase: int = 0) -> Optional[str]:
    """The hatchet JSON text of get() (as the .hatchet file holds it)."""
    if session is None:
        return None
    return _C.pn_session_phase_tree(session, phase, False)


def get_msgpack(session: Optional[int] = 0, phase: int = 0) -> Optional[bytes]:
    if session is None:
        return None
    return _C.pn_session_phase_tree(session, phase, True)


def advance_phase(session: Optional[int] = 0) -> Optional[int]:
    if session is None:
        return None
    return _C.pn_session_advance_phase(session)


def is_phase_complete(session: Optional[int] = 0, phase: int = 0) -> bool:
    if session is None:
        return False
    return _C.pn_session_phase_complete(session, phase)


def clear(session: Optional[int] = 0, phase: int = 0, clear_up_to_phase: bool = False) -> None:
    """Drops the data of `phase` (with clear_up_to_phase, of every phase up to it).
    The current phase starts over empty; scopes open in it carry on."""
    if session is None:
        return None
    _C.pn_session_clear(session, phase, bool(clear_up_to_phase))
    return None
