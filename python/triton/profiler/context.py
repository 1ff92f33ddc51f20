"""triton.profiler.context: depth of the current context stack.

Shadow sessions: the number of open scopes on this thread. Python-context sessions:
the number of frames of this thread's Python stack that a kernel launched here would
get as its call path (frames of the triton package itself are left out, as in the
recorded paths)."""
import os
import sys
from typing import Optional

from triton._C import tritium as _C

from .flags import flags

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _python_depth() -> int:
    n, f = 0, sys._getframe(1)
    while f is not None:
        n += not f.f_code.co_filename.startswith(_PKG)
        f = f.f_back
    return n


def depth(session: Optional[int] = 0) -> Optional[int]:
    if not flags.profiling_on:
        return None
    d = _C.pn_session_depth(session)
    if d is not None:
        from .profile import _python_sessions
        if session in _python_sessions:
            return _python_depth()
    return d
