"""triton.set_allocator and the allocator protocol (upstream's names).

Upstream kernels that need global scratch memory (tensor descriptors built on the device,
profiling buffers) ask the allocator set here for it. Tritium's kernels do not need
scratch from the caller; the allocator is kept so scripts that set one run unchanged."""
from typing import Optional, Protocol


class Buffer(Protocol):
    def data_ptr(self) -> int: ...


class Allocator(Protocol):
    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Buffer: ...


class NullAllocator:
    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Buffer:
        raise RuntimeError("Kernels that require additional memory must set an allocator with triton.set_allocator")


_allocator: Allocator = NullAllocator()


def set_allocator(allocator: Allocator):
    """Sets the allocator kernels use for scratch memory (kept; see the module note)."""
    global _allocator
    _allocator = allocator
