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


@dataclass(frozen=True)
class CPUOptions:
    """The compile options upstream's backends parse from triton.compile(options=...).
    The CPU grid has no warps, stages or CTAs: those are accepted and recorded only."""
    num_warps: int = 1
    num_stages: int = 1
    num_ctas: int = 1
    debug: bool = False
    sanitize_overflow: bool = False
    enable_fp_fusion: bool = True
    supported_fp8_dtypes: tuple = ()
    allow_fp8e4nv: bool = False
    max_num_imprecise_acc_default: int = 0
    backend_name: str = "cpu"


class CPUBackend(BaseBackend):
    """The "cpu" entry of triton.backends.backends; make_backend(target) returns one."""

    binary_ext = "so"

    def parse_options(self, options):
        known = CPUOptions.__dataclass_fields__
        return CPUOptions(**{k: v for k, v in dict(options or {}).items() if k in known})

    def hash(self):
        return f"cpu-{self.target.arch}"
