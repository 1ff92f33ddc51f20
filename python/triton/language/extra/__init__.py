"""triton.language.extra: libdevice (cpu; cuda and the backend-neutral
triton.language.extra.libdevice are aliases of it) and SpacemiT smt."""
from . import cpu  # noqa: F401
from . import smt  # noqa: F401
