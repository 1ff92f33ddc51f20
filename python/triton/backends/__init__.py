"""triton.backends: the CPU backend (names compatible with spine-triton and triton-shared).

`backends` maps a backend name to its Backend(compiler, driver) classes, as upstream's
entry-point discovery does; Tritium has one, "cpu" (torch's inductor looks it up there
to run its CPU Triton kernels).
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    compiler: type
    driver: type


def _discover():
    from .compiler import CPUBackend
    from .spine_triton.driver import CPUDriver
    return {"cpu": Backend(compiler=CPUBackend, driver=CPUDriver)}


backends = _discover()
