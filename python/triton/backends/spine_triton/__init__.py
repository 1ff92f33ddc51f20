"""triton.backends.spine_triton: SpacemiT Triton's backend package names."""
from .driver import CPUDriver  # noqa: F401
