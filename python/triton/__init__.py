"""Tritium: Triton for CPUs, profiler-first.

Source-compatible with SpacemiT Triton (spine-triton) scripts: @triton.jit kernels,
triton.language, triton.language.extra.smt, the CPUDriver and Proton.
"""
__version__ = "3.6.0+tritium.0.1.0"

from .errors import TritonError  # noqa: F401
from . import language  # noqa: F401
from .runtime.jit import JITFunction, jit, reinterpret, TensorWrapper  # noqa: F401
from .runtime.autotuner import Config, autotune, heuristics  # noqa: F401
from .runtime import driver  # noqa: F401
from .runtime._allocation import set_allocator  # noqa: F401
from .compiler import compile, CompilationError, ASTSource  # noqa: F401
from . import runtime, testing, knobs  # noqa: F401
from .runtime.jit import _register_torch_dtypes as _reg

_reg()
del _reg


class _MpAnchor:
    """Kept alive for multiprocessing.util.register_after_fork (a weak reference)."""


_mp_anchor = _MpAnchor()


def _register_proton_exit():
    # An uncaught KeyboardInterrupt ends Python by re-raising SIGINT after
    # finalisation, which skips C atexit handlers: write Proton's pending output
    # (captured kernels, open sessions) from the Python exit hooks instead.
    # multiprocessing children (fork, forkserver) leave through os._exit, which runs
    # no exit hook at all: their output is written by multiprocessing's own exit
    # function (util._exit_function, run when the child's target returns), through a
    # finalizer. A child clears the finalizers it inherits or registered while its
    # target was unpickled, then runs the after-fork hooks: the finalizer is registered
    # from one of those.
    import atexit
    import os
    import sys
    from ._C import tritium
    atexit.register(tritium.pn_flush_at_exit)

    def finalizer(_anchor=None):
        util = sys.modules.get("multiprocessing.util")
        if util is not None:
            util.Finalize(None, tritium.pn_flush_at_exit, exitpriority=-100)

    def hook():
        util = sys.modules.get("multiprocessing.util")
        if util is not None and not getattr(_mp_anchor, "pid", None) == os.getpid():
            _mp_anchor.pid = os.getpid()
            util.register_after_fork(_mp_anchor, finalizer)
            finalizer()

    hook()
    os.register_at_fork(after_in_child=hook)
    # descendants must not write this process's capture output: keep the name C put in
    # the environment also in os.environ (a child started with env=os.environ.copy())
    taken = tritium.pn_output_taken()
    if taken:
        os.environ["PROTON_OUTPUT_TAKEN"] = taken


_register_proton_exit()
del _register_proton_exit


def cdiv(x: int, y: int) -> int:
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    n = int(n)
    if n <= 1:
        return 1
    return 1 << (n - 1).bit_length()


from .runtime.errors import OutOfResources  # noqa: F401,E402


__all__ = ["jit", "JITFunction", "Config", "autotune", "heuristics", "cdiv", "next_power_of_2", "compile",
           "CompilationError", "TritonError", "OutOfResources", "set_allocator", "language", "driver", "runtime", "testing", "knobs", "reinterpret"]
