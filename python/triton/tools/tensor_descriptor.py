"""triton.tools.tensor_descriptor.TensorDescriptor: upstream's host-side descriptor of a
tensor (base, shape, strides, block shape, padding). Tritium accepts the class so scripts
import; passing one to a kernel is not supported yet (a clear error at launch)."""
from dataclasses import dataclass
from typing import Any, List


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self):
        rank = len(self.shape)
        if not (len(self.strides) == rank and len(self.block_shape) == rank):
            raise ValueError(f"shape, strides and block_shape must have the same rank ({rank})")
        if self.strides[-1] != 1:
            raise ValueError(f"the last dimension must be contiguous (stride 1, got {self.strides[-1]})")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"padding must be 'zero' or 'nan', got {self.padding!r}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding="zero"):
        return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()), list(block_shape), padding)
