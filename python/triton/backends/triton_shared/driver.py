"""triton-shared scripts import CPUDriver from here."""
from triton.backends.spine_triton.driver import CPUDriver, CPUDeviceInterface, CPUUtils  # noqa: F401
