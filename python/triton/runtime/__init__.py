"""triton.runtime: jit, autotuner and the driver registry."""
from . import driver  # noqa: F401
from . import jit  # noqa: F401 (the module, as upstream: triton.runtime.jit.TensorWrapper)
from .jit import JITFunction, TensorWrapper, reinterpret  # noqa: F401
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: F401
from .errors import OutOfResources  # noqa: F401

__all__ = ["driver", "JITFunction", "TensorWrapper", "reinterpret", "Autotuner", "Config", "Heuristics", "autotune", "heuristics"]
