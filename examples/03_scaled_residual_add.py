"""Scaled residual add, out = residual + alpha * x, over a 2-D [rows, hidden] activation with
a per-column gain: out[r, c] = residual[r, c] + alpha * gain[c] * x[r, c].

Run: python examples/03_scaled_residual_add.py
"""
import torch

import triton
import triton.language as tl
from triton.backends.spine_triton.driver import CPUDriver

triton.runtime.driver.set_active(CPUDriver())


@triton.jit
def scaled_residual_add_kernel(x_ptr, res_ptr, gain_ptr, out_ptr, rows, cols, stride_x, stride_r, stride_o, alpha,
                               BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pr = tl.program_id(0)
    pc = tl.program_id(1)
    r = pr * BLOCK_R + tl.arange(0, BLOCK_R)
    c = pc * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None] * stride_x + c[None, :], mask=mask, other=0.0).to(tl.float32)
    res = tl.load(res_ptr + r[:, None] * stride_r + c[None, :], mask=mask, other=0.0).to(tl.float32)
    gain = tl.load(gain_ptr + c, mask=c < cols, other=0.0).to(tl.float32)
    out = res + alpha * gain[None, :] * x
    tl.store(out_ptr + r[:, None] * stride_o + c[None, :], out.to(out_ptr.dtype.element_ty), mask=mask)


def scaled_residual_add(x, residual, gain, alpha):
    rows, cols = x.shape
    out = torch.empty_like(residual)
    grid = lambda meta: (triton.cdiv(rows, meta["BLOCK_R"]), triton.cdiv(cols, meta["BLOCK_C"]))  # noqa: E731
    scaled_residual_add_kernel[grid](x, residual, gain, out, rows, cols, x.stride(0), residual.stride(0),
                                     out.stride(0), alpha, BLOCK_R=8, BLOCK_C=256)
    return out


def main():
    torch.manual_seed(0)
    shapes = [(1, 1), (7, 1000), (128, 768), (513, 4096)]
    for dtype, tol in ((torch.float32, dict(rtol=1e-6, atol=1e-6)), (torch.bfloat16, dict(rtol=1.6e-2, atol=1e-2))):
        for rows, cols in shapes:
            x = torch.randn(rows, cols).to(dtype)
            residual = torch.randn(rows, cols).to(dtype)
            gain = torch.rand(cols).to(dtype)
            alpha = 0.7
            got = scaled_residual_add(x, residual, gain, alpha)
            want = (residual.float() + alpha * gain.float()[None, :] * x.float()).to(dtype)
            torch.testing.assert_close(got, want, **tol)
    print(f"PASS 03_scaled_residual_add: shapes {', '.join(f'{r}x{c}' for r, c in shapes)} (float32, bfloat16)")


if __name__ == "__main__":
    main()
