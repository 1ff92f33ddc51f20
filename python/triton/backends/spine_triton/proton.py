"""spine-triton's CPU Proton API: `from triton.backends.spine_triton.proton import profiler`.

    with profiler.profile():          # reset, record, dump (PROTON_OUTPUT or console)
        kernel[grid](...)

Records kernel launches and in-kernel scopes (pl.enter_scope/exit_scope with
flags.instrumentation_on) into Proton's capture store. Unlike spine-triton it
uses calibrated time (not a fixed 24 MHz), per-thread buffers instead of a global
mutex, and does not dump twice at exit.
"""
from __future__ import annotations

import contextlib
import json
import sys

from triton._C import tritium as _C
from triton.profiler.flags import flags

# profiler.dump() chooses the format when it is called, so the capture store keeps its
# timeline from the moment this module is imported (docs/proton.md §1).
_C.pn_capture_keep_timeline()


class CpuProtonProfiler:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def is_available(self) -> bool:
        return True

    def reset(self) -> bool:
        _C.pn_capture_reset()
        return True

    def start(self) -> bool:
        _C.pn_capture_enable(True)
        flags.kernel_capture = bool(_C.pn_capture_active())
        return True

    def stop(self) -> bool:
        _C.pn_capture_enable(False)
        flags.kernel_capture = False
        return True

    def dump(self, output_path=None) -> bool:
        try:
            _C.pn_capture_dump(output_path)
            return True
        except OSError as e:
            print(f"Warning: Proton dump failed: {e}", file=sys.stderr)
            return False

    def get_results(self) -> dict:
        return json.loads(_C.pn_capture_results() or "{}")

    @contextlib.contextmanager
    def profile(self, output_path=None, auto_dump=True):
        self.reset()
        self.start()
        try:
            yield self
        finally:
            self.stop()
            if auto_dump:
                self.dump(output_path)


profiler = CpuProtonProfiler()
reset = profiler.reset
dump = profiler.dump
profile = profiler.profile
is_available = profiler.is_available
start = profiler.start
stop = profiler.stop
get_results = profiler.get_results
