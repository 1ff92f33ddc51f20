"""triton.profiler.context: depth of the current context stack."""
from typing import Optional

from triton._C import tritium as _C

from .flags import flags


def depth(session: Optional[int] = 0) -> Optional[int]:
    if not flags.profiling_on:
        return None
    return _C.pn_session_depth(session)
