"""Helpers of the RISC-V suite (tests/riscv): compile a kernel here for riscv64 and for
the host, export both (triton.tools.aot), run the riscv64 one through tritium-run under
qemu-riscv64 (VLEN 256) and the host one through the host's tritium-run, and return
every buffer as both left it. On a riscv64 machine the "riscv64" run is native.

Paths come from tests/riscv/run.sh: TRITIUM_RV_RUN (the riscv64 tritium-run),
TRITIUM_RV_PREFIX (the qemu command in front of it, empty on a board)."""
import json
import os
import platform
import shlex
import subprocess

import numpy as np

import triton
import triton.compiler
from triton.backends.compiler import GPUTarget
from triton.tools import aot

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_RUN = os.path.join(REPO, "build", "bin", "tritium-run")
RV_RUN = os.environ.get("TRITIUM_RV_RUN", os.path.join(REPO, "build", "riscv64", "bin", "tritium-run"))
RV_PREFIX = shlex.split(os.environ.get("TRITIUM_RV_PREFIX", ""))
NATIVE = platform.machine() == "riscv64"


def compile_for(fn, signature, constexprs, arch):
    return triton.compile(triton.compiler.ASTSource(fn, signature, constexprs), target=GPUTarget("cpu", arch, 0))


def run_tritium(cmd, path, grid, args, threads=2, trace=None, timeout=120):
    """Runs one exported kernel; returns the CompletedProcess (checked)."""
    argv = [*cmd, "-g", ",".join(map(str, grid)), "-t", str(threads)]
    if trace:
        argv += ["-o", str(trace)]
    p = subprocess.run(argv + [str(path)] + args, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{' '.join(argv)} failed:\n{p.stdout}\n{p.stderr}"
    return p


class Result:
    def __init__(self, rv, host, rv_kernel, proc):
        self.rv, self.host, self.kernel, self.proc = rv, host, rv_kernel, proc


def run(tmp_path, fn, signature, constexprs, grid, buffers, scalars=None, threads=2, trace=None, host=True):
    """Compiles fn for riscv64 (and the host), runs both on copies of `buffers` (name →
    numpy array, the pointer parameters) with `scalars` (name → number), and returns a
    Result: .rv and .host map each buffer name to the array after the run."""
    scalars = scalars or {}
    out = {}
    targets = [("rv", "riscv64", RV_PREFIX + [RV_RUN])]
    if host and not NATIVE:
        targets.append(("host", "host", [HOST_RUN]))
    kernel = proc = None
    for tag, arch, cmd in targets:
        k = compile_for(fn, signature, constexprs, arch)
        d = tmp_path / tag
        path = aot.export(k, d)
        args = []
        for name, a in buffers.items():
            f = d / f"{name}.bin"
            np.ascontiguousarray(a).tofile(f)
            args.append(f"{name}=@{f}")
        args += [f"{n}={v}" for n, v in scalars.items()]
        p = run_tritium(cmd, path, grid, args, threads, trace if tag == "rv" else None)
        out[tag] = {n: np.fromfile(d / f"{n}.bin", dtype=a.dtype).reshape(a.shape) for n, a in buffers.items()}
        if tag == "rv":
            kernel, proc = k, p
    return Result(out["rv"], out.get("host"), kernel, proc)


def trace_events(path):
    with open(path) as f:
        return json.load(f)["traceEvents"]
