"""triton.profiler.mode: profiling modes (upstream names; the CPU backend ignores them)."""
from dataclasses import dataclass, field
from typing import List


@dataclass(frozen=True)
class BaseMode:
    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class PCSampling(BaseMode):
    name: str = "pcsampling"
    interval: int = 1000

    def __post_init__(self):
        if self.interval <= 0:
            raise ValueError("Interval must be a positive integer.")

    def __str__(self):
        return f"{self.name}:interval={self.interval}"


@dataclass(frozen=True)
class InstrumentationMode(BaseMode):
    metric_type: str = "cycle"
    sampling_strategy: str = "none"
    sampling_options: str = ""
    granularity: str = "warp"
    buffer_strategy: str = "circular"
    buffer_type: str = "shared"
    buffer_size: int = 0
    optimizations: List[str] = field(default_factory=list)

    def __str__(self):
        return (f"{self.name}:metric_type={self.metric_type}:sampling_strategy={self.sampling_strategy}"
                f":sampling_options={self.sampling_options}:granularity={self.granularity}"
                f":buffer_strategy={self.buffer_strategy}:buffer_type={self.buffer_type}"
                f":buffer_size={self.buffer_size}:optimizations={','.join(self.optimizations)}")


@dataclass(frozen=True)
class Default(InstrumentationMode):
    name: str = "default"


@dataclass(frozen=True)
class MMA(InstrumentationMode):
    name: str = "mma"
