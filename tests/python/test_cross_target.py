"""Cross compilation: triton.compile(..., target=GPUTarget("cpu", "riscv64", 0)) and
SPINE_TRITON_TARGET_ARCH=riscv64 return the compiled kernel (RVV assembly, the .so
bytes) without loading it, launching it here keeps the loader's error naming both
ISAs, and an unsupported architecture (aarch64 included) is an error naming the
supported ones (docs/aot.md §1)."""
import os
import platform
import subprocess

import numpy as np
import pytest
import torch

import triton
import triton.compiler
import triton.language as tl
from triton.backends.compiler import GPUTarget

from conftest import REPO, check_ok

ON_X86 = platform.machine() == "x86_64"


@triton.jit
def axpy(x_ptr, y_ptr, o_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, alpha * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32", "alpha": "fp32"}


def _src(block=256):
    return triton.compiler.ASTSource(axpy, SIG, {"BLOCK": block})


@pytest.fixture(scope="module")
def rv_kernel():
    return triton.compile(_src(), target=GPUTarget("cpu", "riscv64", 0))


def test_riscv_compile_returns_the_kernel_with_rvv_assembly(rv_kernel):
    asm = rv_kernel.asm
    for key in ("ttir", "ttsharedir", "llir", "asm", "obj", "so"):
        assert key in asm
    for insn in ("vsetvli", "vle32.v", "vfmacc"):  # RVV 1.0: the fused multiply-add of alpha*x + y
        assert insn in asm["asm"], insn
    so = asm["so"]
    assert so[:4] == b"\x7fELF" and int.from_bytes(so[18:20], "little") == 0xF3  # EM_RISCV
    assert rv_kernel.metadata["target"]["triple"].startswith("riscv64")


@pytest.mark.skipif(not ON_X86, reason="needs a host that is not RISC-V")
def test_launching_a_riscv_kernel_here_names_both_architectures(rv_kernel):
    x = torch.zeros(16)
    with pytest.raises(RuntimeError, match="it is RISC-V code and this process runs on x86-64"):
        rv_kernel[(1,)](x, x, x, 16, 1.0, 256)


def test_spine_names_and_host_targets():
    k = triton.compile(_src(128), target=GPUTarget("cpu", "spacemit-a60", 0))  # spine-triton's CPU names
    assert k.metadata["target"]["cpu"] == "spacemit-x60"
    host = triton.compile(_src(128), target=GPUTarget("cpu", platform.machine(), 0))
    assert host.metadata["target"]["arch"] == platform.machine()
    x, y, o = torch.ones(100), torch.ones(100), torch.zeros(100)
    host[(1,)](x, y, o, 100, 2.0, 128)
    torch.testing.assert_close(o, torch.full((100,), 3.0))


def test_unsupported_target_arch_names_the_supported_ones():
    with pytest.raises(ValueError, match=r"unsupported target architecture 'aarch64'.*supported are riscv64"):
        triton.compile(_src(), target=GPUTarget("cpu", "aarch64", 0))


_ENV_SCRIPT = """
import sys, numpy as np, triton, triton.compiler, triton.language as tl
from triton.backends.compiler import GPUTarget
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.load(x_ptr + o) * 2.0)
c = triton.compile(triton.compiler.ASTSource(k, {"x_ptr": "*fp32"}, {"BLOCK": 64}), target=GPUTarget("cpu", 0, 0))
print("ARCH", c.metadata["target"]["arch"], "vle32.v" in c.asm["asm"])
if sys.argv[1:] == ["launch"]:
    k[(1,)](np.zeros(64, np.float32), BLOCK=64)
"""


def test_env_target_arch(run_py, tmp_path):
    script = tmp_path / "env_target.py"
    script.write_text(_ENV_SCRIPT)
    p = run_py(script, tmp_path / "cache", env={"SPINE_TRITON_TARGET_ARCH": "riscv64"})
    check_ok(p)
    assert "ARCH riscv64 True" in p.stdout
    p = run_py(script, tmp_path / "cache", env={"SPINE_TRITON_TARGET_ARCH": "aarch64"}, args=["launch"])
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert "unsupported target architecture 'aarch64'" in last and "riscv64" in last, p.stderr
    p = run_py(script, tmp_path / "cache", env={"SPINE_TRITON_TARGET_ARCH": "sparc"})
    assert p.returncode != 0 and "supported are riscv64" in p.stderr


def test_tritium_opt_rejects_an_unknown_target(tmp_path):
    ttir = os.path.join(REPO, "tests", "ir", "vadd1.ttir")
    env = dict(os.environ, SPINE_TRITON_TARGET_ARCH="aarch64")
    p = subprocess.run([os.path.join(REPO, "build", "bin", "tritium-opt"), ttir, "--emit=asm"], env=env,
                       capture_output=True, text=True)
    assert p.returncode != 0
    assert "unsupported target architecture 'aarch64'" in p.stderr, p.stderr
