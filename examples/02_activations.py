"""Activation chains: GELU (erf and tanh forms), SiLU, and a fused GELU -> scale/shift -> SiLU
chain, checked against torch.nn.functional.

Run: python examples/02_activations.py
"""
import torch
import torch.nn.functional as F

import triton
import triton.language as tl
from triton.backends.spine_triton.driver import CPUDriver
from triton.language.extra.cpu import libdevice

triton.runtime.driver.set_active(CPUDriver())


@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def _gelu_tanh(x):
    return 0.5 * x * (1.0 + libdevice.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@triton.jit
def _silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def activation_kernel(x_ptr, out_ptr, n, scale, shift, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)  # compute in fp32, store in the input dtype
    if ACT == "gelu":
        y = _gelu(x)
    elif ACT == "gelu_tanh":
        y = _gelu_tanh(x)
    elif ACT == "silu":
        y = _silu(x)
    else:  # "chain": silu(gelu(x) * scale + shift)
        y = _silu(_gelu(x) * scale + shift)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def activation(x, act, scale=1.0, shift=0.0):
    out = torch.empty_like(x)
    n = x.numel()
    activation_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, scale, shift, ACT=act, BLOCK=2048)
    return out


REFERENCES = {
    "gelu": lambda x, s, b: F.gelu(x),
    "gelu_tanh": lambda x, s, b: F.gelu(x, approximate="tanh"),
    "silu": lambda x, s, b: F.silu(x),
    "chain": lambda x, s, b: F.silu(F.gelu(x) * s + b),
}


def main():
    torch.manual_seed(0)
    sizes = [1000, (1 << 16) + 3, 1 << 20]
    for dtype, tol in ((torch.float32, dict(rtol=1e-5, atol=1e-5)), (torch.float16, dict(rtol=2e-3, atol=2e-3))):
        for n in sizes:
            x = (torch.randn(n) * 3).to(dtype)
            for act, ref in REFERENCES.items():
                got = activation(x, act, 1.5, 0.25)
                want = ref(x.float(), 1.5, 0.25).to(dtype)
                torch.testing.assert_close(got, want, **tol, msg=lambda m: f"{act} {dtype} n={n}: {m}")
    print(f"PASS 02_activations: gelu, gelu_tanh, silu, silu(gelu*1.5+0.25) for sizes "
          f"{', '.join(map(str, sizes))} (float32, float16)")


if __name__ == "__main__":
    main()
