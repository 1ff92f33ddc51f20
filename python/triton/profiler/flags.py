"""triton.profiler.flags: process-local switches (upstream names).

Setting `flags.instrumentation_on` also tells the launcher: kernels compile
differently with in-kernel scopes on, so the launcher's specialisation cache
keys on it and the next launch picks (or compiles) the matching variant."""
from dataclasses import dataclass


@dataclass
class ProfilerFlags:
    profiling_on: bool = False
    instrumentation_on: bool = False
    command_line: bool = False

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name == "instrumentation_on":
            from triton._C import tritium
            tritium.set_compile_variant(1 if value else 0)


flags = ProfilerFlags()
