"""Exports the vector add of examples/01_vector_add.py ahead of time (docs/aot.md):
python3 examples/aot/export_vadd.py OUT_DIR [riscv64|host] → OUT_DIR/add_kernel.{so,json,s},
which examples/aot/aot_vadd.c (or tritium-run) runs on the board."""
import sys

import triton
import triton.compiler
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.tools import aot


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "aot-out"
    arch = sys.argv[2] if len(sys.argv) > 2 else "riscv64"
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    k = triton.compile(triton.compiler.ASTSource(add_kernel, sig, {"BLOCK": 1024}), target=GPUTarget("cpu", arch, 0))
    print(aot.export(k, out))
