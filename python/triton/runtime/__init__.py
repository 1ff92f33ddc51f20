"""triton.runtime: jit, autotuner and the driver registry."""
from . import driver  # noqa: F401
from .jit import JITFunction, jit  # noqa: F401
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: F401
from .errors import OutOfResources  # noqa: F401

__all__ = ["driver", "JITFunction", "jit", "Autotuner", "Config", "Heuristics", "autotune", "heuristics"]
