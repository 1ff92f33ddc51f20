"""Scripts written for GPUs import triton.language.extra.cuda.libdevice; on CPUs it is
the CPU libdevice."""
from triton.language.extra.cpu import libdevice  # noqa: F401
