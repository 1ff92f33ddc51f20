"""triton.profiler (Proton) on the CPU: sessions, host scopes, kernel capture,
in-kernel scopes. `import triton.profiler as proton`."""
from . import context, data, flags, hooks, language, mode, specs  # noqa: F401  (flags is the module, as upstream)
from .profile import DEFAULT_PROFILE_NAME, activate, deactivate, finalize, profile, start  # noqa: F401
from .scope import cpu_timed_scope, enter_scope, exit_scope, scope  # noqa: F401
from .state import enter_state, exit_state, metadata_state, state  # noqa: F401
# triton.profiler.proton (the same API and the `proton` command line) is not imported
# here, so `python -m triton.profiler.proton` runs it fresh, without runpy's warning.

__all__ = ["start", "activate", "deactivate", "finalize", "profile", "scope", "cpu_timed_scope", "enter_scope",
           "exit_scope", "state", "enter_state", "exit_state", "context", "data", "language", "flags", "hooks",
           "mode", "DEFAULT_PROFILE_NAME"]
