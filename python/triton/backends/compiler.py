"""triton.backends.compiler: GPUTarget / AICPUTarget and the backend base class."""
from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class GPUTarget:
    backend: str
    arch: Union[int, str]
    warp_size: int


@dataclass(frozen=True)
class AICPUTarget(GPUTarget):
    core: int = 0
    ai_core: int = 0
    arch_id: str = ""
    num_threads: int = 0
    force_vector_interleave: int = 2


class BaseBackend:
    def __init__(self, target):
        self.target = target

    @staticmethod
    def supports_target(target):
        return target.backend == "cpu"
