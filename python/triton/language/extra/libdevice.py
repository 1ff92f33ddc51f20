"""triton.language.extra.libdevice — upstream's backend-neutral path
(`from triton.language.extra import libdevice`).

Upstream dispatches each function to the libdevice of the backend being compiled for;
Tritium has one backend, so this is the CPU libdevice (triton.language.extra.cpu.libdevice)
under another name: the same functions, the same objects.
"""
from triton.language.extra.cpu.libdevice import *  # noqa: F401,F403
