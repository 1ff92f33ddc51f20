"""triton.tools.tensor_descriptor.TensorDescriptor: upstream's host-side descriptor of a
tensor (base, shape, strides, block shape, padding). Passed to a kernel, the parameter
is a tensor descriptor inside it (desc.load / desc.store, tl.load_tensor_descriptor):
the launcher passes the base pointer, shape and strides and keys the specialisation on
the element dtype, rank, block shape, padding and the usual int facts of each shape
and stride entry (python/src/py_desc.c, triton/language/descriptor.py)."""
from dataclasses import dataclass
from typing import Any, List

from triton._C import tritium as _C


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"
    round_f32_to_tf32: bool = False  # upstream's flag for its TF32 MMA; a CPU dot computes in fp32

    def __post_init__(self):
        rank = len(self.shape)
        if not (len(self.strides) == rank and len(self.block_shape) == rank):
            raise ValueError(f"shape, strides and block_shape must have the same rank ({rank})")
        if not 1 <= rank <= 5:
            raise ValueError(f"the rank must be 1 to 5, got {rank}")
        for i, b in enumerate(self.block_shape):
            if not isinstance(b, int) or b < 1 or b & (b - 1):
                raise ValueError(f"block_shape[{i}] must be a power of 2, got {b!r}")
        for i, s in enumerate(self.shape):
            if s <= 0:
                raise ValueError(f"shape must be positive, got shape[{i}] = {s}")
        if self.strides[-1] != 1:
            raise ValueError(f"the last dimension must be contiguous (stride 1, got {self.strides[-1]})")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"padding must be 'zero' or 'nan', got {self.padding!r}")
        if self.padding == "nan" and not getattr(self.base.dtype, "is_floating_point", True):
            raise ValueError("padding 'nan' is only supported for floating point tensors")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding="zero", round_f32_to_tf32=False):
        return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()), list(block_shape), padding,
                                round_f32_to_tf32)


_C.set_descriptor_type(TensorDescriptor)
