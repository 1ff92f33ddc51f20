"""triton.profiler.flags: process-local switches (upstream names, plus kernel_capture).

Setting `flags.instrumentation_on` also tells the launcher: kernels compile
differently with in-kernel scopes on, so the launcher's specialisation cache
keys on it and the next launch picks (or compiles) the matching variant.
`flags.kernel_capture` (Tritium's) is true while the kernel-capture store records
(PROTON_KERNEL_CAPTURE=1, the spine-triton profiler.start()): host scopes are recorded
then too, not only between proton.start() and finalize() (`profiling_on`)."""
from dataclasses import dataclass


@dataclass
class ProfilerFlags:
    profiling_on: bool = False
    instrumentation_on: bool = False
    command_line: bool = False
    kernel_capture: bool = False

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name == "instrumentation_on":
            from triton.knobs import _sync_compile_variant
            _sync_compile_variant()
        elif name in ("profiling_on", "kernel_capture"):
            from triton._C import tritium
            # host scopes (proton.scope, a C type) record while either is on
            tritium.scope_set_recording(bool(getattr(self, "profiling_on", False) or
                                             getattr(self, "kernel_capture", False)))


flags = ProfilerFlags()


def _read_capture():
    from triton._C import tritium
    flags.kernel_capture = bool(tritium.pn_capture_active())


_read_capture()
