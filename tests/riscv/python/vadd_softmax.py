"""The Python front end on riscv64 (run by scripts/riscv_python.sh test under qemu-riscv64,
python3 + numpy + torch from Debian 13's riscv64 packages): vector add on torch tensors
and softmax on numpy arrays compile here, on riscv64, for the X60 (RVV), run through the
OpenMP launcher and match numpy; an in-kernel scope is profiled into a trace that the
host's proton-cli reads afterwards. argv[1]: a scratch directory."""
import os
import platform
import sys
import time

T0 = time.time()


def say(what):
    print(f"[{time.time() - T0:6.1f}s] {what}", flush=True)


import numpy as np  # noqa: E402
import torch  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import triton.profiler.language as pl  # noqa: E402
from triton._C import tritium as _C  # noqa: E402
from triton.backends.spine_triton.proton import profiler  # noqa: E402
from triton.profiler.flags import flags  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
assert platform.machine() == "riscv64", platform.machine()
info = _C.target_info()
say(f"python {sys.version.split()[0]} on {platform.machine()}, numpy {np.__version__}, torch {torch.__version__}; "
    f"kernels for {info['triple']} {info['cpu']} ({info['vector_bytes'] * 8}-bit vectors)")
assert info["loadable"] and info["vector_bytes"] == 32


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(x_ptr, o_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(o_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def scoped_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    pl.enter_scope("load")
    v = tl.load(x_ptr + offs, mask=m)
    pl.exit_scope("load")
    tl.store(o_ptr + offs, v * 3.0, mask=m)


n = 100_000
x, y = torch.rand(n), torch.rand(n)
out = torch.empty(n)
add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
np.testing.assert_allclose(out.numpy(), x.numpy() + y.numpy(), rtol=1e-6)
say(f"vector add, {n} floats on torch tensors: matches numpy")

rows, cols = 64, 781
a = np.random.default_rng(0).standard_normal((rows, cols), dtype=np.float32)
o = np.zeros_like(a)
softmax_kernel[(rows,)](a, o, cols, cols, BLOCK=1024)
e = np.exp(a - a.max(axis=1, keepdims=True))
np.testing.assert_allclose(o, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
say(f"softmax, {rows}x{cols} on numpy arrays: matches numpy")

asm = triton.compile(triton.compiler.ASTSource(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                                            "n": "i32"}, {"BLOCK": 1024})).asm["asm"]
assert "vsetvli" in asm and "vle32.v" in asm
stats = _C.stats()
assert stats["compile_servers"] >= 1, stats  # the compile ran in the forked compile server
say(f"RVV assembly (vsetvli, vle32.v); {stats['compiles']} compiles in {stats['compile_servers']} compile server")

pl.enable_semantic("triton")
flags.instrumentation_on = True
trace = os.path.join(OUT, "scoped.json")
z = torch.zeros(4096)
with profiler.profile(output_path=trace):
    scoped_kernel[(4,)](x, z, 4096, BLOCK=1024)
flags.instrumentation_on = False
np.testing.assert_allclose(z.numpy(), x.numpy()[:4096] * 3, rtol=1e-6)
assert os.path.getsize(trace) > 0
say(f"in-kernel scope profiled: {trace}")
print("vadd_softmax: ok")
