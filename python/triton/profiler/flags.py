"""triton.profiler.flags: process-local switches (upstream names)."""
from dataclasses import dataclass


@dataclass
class ProfilerFlags:
    profiling_on: bool = False
    instrumentation_on: bool = False
    command_line: bool = False


flags = ProfilerFlags()
