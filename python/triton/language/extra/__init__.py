"""triton.language.extra: libdevice (cpu, cuda alias) and SpacemiT smt."""
from . import cpu  # noqa: F401
