"""Vector add: the "hello world" of Triton, on the CPU.

Run: python examples/01_vector_add.py
Checks the kernel against torch for sizes that are and are not multiples of the block.
"""
import torch

import triton
import triton.language as tl
from triton.backends.spine_triton.driver import CPUDriver

triton.runtime.driver.set_active(CPUDriver())


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    return out


def main():
    torch.manual_seed(0)
    sizes = [1, 1000, 98432, 1 << 20, 3_000_017]
    for n in sizes:
        x = torch.rand(n)
        y = torch.rand(n)
        torch.testing.assert_close(add(x, y), x + y)
    print(f"PASS 01_vector_add: sizes {', '.join(map(str, sizes))} (float32, BLOCK_SIZE=1024)")


if __name__ == "__main__":
    main()
