"""Ahead-of-time export (docs/aot.md): triton.tools.aot writes the kernel .so and its
tritium-aot/1 metadata, and build/bin/tritium-run (libtritium's CLI) runs it — here a
host kernel; tests/riscv runs RISC-V kernels the same way under qemu."""
import json
import os
import platform
import subprocess

import numpy as np
import pytest

import triton
import triton.compiler
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.tools import aot

from conftest import REPO
from test_cross_target import _src

RUN = os.path.join(REPO, "build", "bin", "tritium-run")


@pytest.fixture(scope="module")
def rv_kernel():
    return triton.compile(_src(), target=GPUTarget("cpu", "riscv64", 0))


def test_export_metadata(rv_kernel, tmp_path):
    path = aot.export(rv_kernel, tmp_path / "out", grid=lambda meta: (triton.cdiv(1000, meta["BLOCK"]),))
    md = json.load(open(path))
    assert md["format"] == "tritium-aot/1" and md["name"] == "axpy" and md["kernel"] == "axpy.so"
    assert [(p["name"], p["type"], p["slot"]) for p in md["params"]] == [
        ("x_ptr", "*fp32", "ptr"), ("y_ptr", "*fp32", "ptr"), ("o_ptr", "*fp32", "ptr"), ("n", "i32", "i32"),
        ("alpha", "fp32", "fp32"), ("BLOCK", "constexpr", "constexpr")]
    assert md["params"][-1]["value"] == 256 and md["constexprs"] == {"BLOCK": 256}
    assert md["grid"] == [4, 1, 1]
    assert md["target"]["arch"] == "riscv64" and "loadable" not in md["target"]
    assert md["cost"]["bytes_loaded"] == 2 * 256 * 4 and md["cost"]["flops32"] == 2 * 256
    assert (tmp_path / "out" / "axpy.so").read_bytes()[:4] == b"\x7fELF"
    assert "vsetvli" in (tmp_path / "out" / "axpy.s").read_text()
    # a grid that needs run-time arguments is not recorded
    assert aot.metadata(rv_kernel, grid=lambda meta: (meta["n"],))["grid"] is None


@pytest.fixture(scope="module")
def host_export(tmp_path_factory):
    d = tmp_path_factory.mktemp("host_aot")
    k = triton.compile(_src(), target=GPUTarget("cpu", platform.machine(), 0))
    return aot.export(k, d), d


def _run(*args):
    return subprocess.run([RUN, *map(str, args)], capture_output=True, text=True, timeout=60)


def test_tritium_run_host_kernel(host_export):
    path, d = host_export
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1000, dtype=np.float32), rng.standard_normal(1000, dtype=np.float32)
    x.tofile(d / "x.bin")
    y.tofile(d / "y.bin")
    np.zeros(1000, np.float32).tofile(d / "o.bin")
    p = _run("-g", "4", "-t", "2", "-o", d / "t.json", path, f"x_ptr=@{d}/x.bin", f"y_ptr=@{d}/y.bin",
             f"o_ptr=@{d}/o.bin", "n=1000", "alpha=0.5")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("axpy: grid 4x1x1, 2 threads")
    np.testing.assert_allclose(np.fromfile(d / "o.bin", np.float32), 0.5 * x + y, rtol=1e-6)
    trace = json.load(open(d / "t.json"))
    names = [e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert "axpy" in names and "axpy[3,0,0]" in names


@pytest.mark.parametrize("args, message", [
    (["n=10"], "parameter x_ptr (*fp32) of axpy is not bound"),
    (["BLOCK=3"], "parameter BLOCK of axpy is a constexpr"),
    (["nope=1"], "kernel axpy has no parameter 'nope'"),
    (["n=x"], "'x' is not an integer (parameter n, i32)"),
    (["n=@/nonexistent"], "/nonexistent"),
    (["n=99999999999"], "does not fit parameter n (i32)"),
])
def test_tritium_run_errors(host_export, args, message):
    path, _ = host_export
    p = _run("-g", "1", path, *args)
    assert p.returncode == 1 and message in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_tritium_run_needs_a_grid(host_export):
    path, d = host_export
    p = _run(path, "x_ptr=zeros:4", "y_ptr=zeros:4", "o_ptr=zeros:4", "n=1", "alpha=1")
    assert p.returncode == 1 and "exported without a grid; give one with -g" in p.stderr


def test_aot_command_line(tmp_path):
    """python -m triton.tools.aot FILE.py:KERNEL -s ... -c ... --target riscv64 --grid ... -o DIR"""
    import sys
    src = os.path.join(REPO, "examples", "aot", "export_vadd.py")
    p = subprocess.run([sys.executable, "-m", "triton.tools.aot", f"{src}:add_kernel", "-s", "x_ptr=*fp32", "-s",
                        "y_ptr=*fp32", "-s", "out_ptr=*fp32", "-s", "n=i32", "-c", "BLOCK=512", "--target", "riscv64",
                        "--grid", "8", "-o", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    md = json.load(open(tmp_path / "add_kernel.json"))
    assert md["grid"] == [8, 1, 1] and md["constexprs"] == {"BLOCK": 512} and md["target"]["arch"] == "riscv64"


@triton.jit
def aot_scalars(o_ptr, h, b, f, d, big, flag):
    tl.store(o_ptr + 0, h.to(tl.float64))
    tl.store(o_ptr + 1, b.to(tl.float64))
    tl.store(o_ptr + 2, f.to(tl.float64))
    tl.store(o_ptr + 3, d)
    tl.store(o_ptr + 4, big.to(tl.float64))
    tl.store(o_ptr + 5, flag.to(tl.float64))


def test_tritium_run_scalar_slots(tmp_path):
    """Every scalar slot kind is packed as the kernel ABI says: fp16/bf16 rounded once from
    the text, fp32, fp64, i64, i1."""
    sig = {"o_ptr": "*fp64", "h": "fp16", "b": "bf16", "f": "fp32", "d": "fp64", "big": "i64", "flag": "i1"}
    k = triton.compile(triton.compiler.ASTSource(aot_scalars, sig, {}), target=GPUTarget("cpu", platform.machine(), 0))
    path = aot.export(k, tmp_path)
    np.zeros(6, np.float64).tofile(tmp_path / "o.bin")
    p = _run("-g", "1", path, f"o_ptr=@{tmp_path}/o.bin", "h=0.1", "b=0.1", "f=0.1", "d=0.1", "big=-5000000000",
             "flag=true")
    assert p.returncode == 0, p.stderr
    o = np.fromfile(tmp_path / "o.bin", np.float64)
    assert o[0] == float(np.float16(0.1))
    assert o[1] == 0.10009765625  # bfloat16(0.1)
    assert o[2] == float(np.float32(0.1)) and o[3] == 0.1
    assert o[4] == -5000000000 and o[5] == 1


@triton.jit
def aot_gather(x_ptr, i_ptr, o_ptr, BLOCK: tl.constexpr):
    idx = tl.load(i_ptr + tl.arange(0, BLOCK))
    tl.store(o_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + idx))  # a gather: a compiler remark


def test_tritium_run_hatchet_carries_the_remarks(tmp_path):
    """The exported metadata's remarks reach the .hatchet kernel node tritium-run writes
    (docs/formats.md §1, "remarks"), as the JIT's launches do."""
    src = triton.compiler.ASTSource(aot_gather, {"x_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"}, {"BLOCK": 16})
    k = triton.compile(src, target=GPUTarget("cpu", platform.machine(), 0))
    assert k.metadata["remarks"], k.metadata
    path = aot.export(k, tmp_path)
    x, i = np.arange(64, dtype=np.float32), (np.arange(16, dtype=np.int32) * 3) % 64
    x.tofile(tmp_path / "x.bin")
    i.tofile(tmp_path / "i.bin")
    p = _run("-g", "1", "-o", tmp_path / "run.hatchet", path, f"x_ptr=@{tmp_path}/x.bin", f"i_ptr=@{tmp_path}/i.bin",
             "o_ptr=zeros:64")
    assert p.returncode == 0, p.stderr
    db = json.load(open(tmp_path / "run.hatchet"))
    node = next(c for c in db[0]["children"] if c["frame"]["name"] == "aot_gather")
    f, line, col, msg = k.metadata["remarks"][0]
    assert node["metrics"]["remarks"].split("\n")[0] == f"{f}:{line}:{col}: {msg}"
    assert "guarded loads" in msg and os.path.basename(f) == "test_aot.py"
