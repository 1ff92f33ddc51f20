"""triton.language.extra.cpu: `from triton.language.extra.cpu import libdevice`."""
from . import libdevice  # noqa: F401
