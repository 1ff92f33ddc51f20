"""triton.backends.triton_shared: triton-shared's module path, same CPU driver."""
from .driver import CPUDriver  # noqa: F401
