"""tritium-opt reproduces a Python compile (one compile driver, compiler/include/driver.h).

Kernels compiled through Python with SPINE_TRITON_DUMP_PATH leave `<k>_tt.mlir`;
`tritium-opt <k>_tt.mlir --emit=STAGE` must print the dumped text of every later stage
exactly, and `--emit=so -o x.so` must write the dumped `.so` byte for byte: both paths
run the same driver with the same defaults (instrumentation on, streaming-store entry
when the stores can be sized, vector width per kernel, the host target). Also: lowering
errors and remarks found by the driver still point into the kernel's source, and
`tritium-opt --isolate` turns a compiler crash into an error.
"""
import os
import subprocess

import pytest
import torch

import triton
import triton.language as tl
import triton.profiler.language as pl
from triton.profiler.flags import flags

from conftest import REPO

OPT = os.path.join(REPO, "build", "bin", "tritium-opt")


def vec_add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def row_sum(x_ptr, o_ptr, rows, cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.arange(0, BLOCK_C)
    m = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None] * cols + c[None, :], mask=m, other=0.0)
    tl.store(o_ptr + r, tl.sum(x, axis=1), mask=r < rows)


def small_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(a_ptr + i[:, None] * N + i[None, :])
    b = tl.load(b_ptr + i[:, None] * N + i[None, :])
    tl.store(c_ptr + i[:, None] * N + i[None, :], tl.dot(a, b))


def scoped(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    pl.enter_scope("load")
    x = tl.load(x_ptr + offs, mask=m)
    pl.exit_scope("load")
    pl.enter_scope("compute")
    y = x * 2.0 + 1.0
    pl.exit_scope("compute")
    tl.store(o_ptr + offs, y, mask=m)


def _launch(name):
    if name == "vec_add":
        n = 3000
        x, y, o = torch.randn(n), torch.randn(n), torch.empty(n)
        triton.jit(vec_add)[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024)
        torch.testing.assert_close(o, x + y)
    elif name == "row_sum":
        x, o = torch.randn(37, 50), torch.empty(37)
        triton.jit(row_sum)[(triton.cdiv(37, 8),)](x, o, 37, 50, BLOCK_R=8, BLOCK_C=64)
        torch.testing.assert_close(o, x.sum(1), rtol=1e-5, atol=1e-5)
    elif name == "small_dot":
        a, b, c = torch.randn(16, 16), torch.randn(16, 16), torch.empty(16, 16)
        triton.jit(small_dot)[(1,)](a, b, c, N=16)
        torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    else:
        n = 1000
        x, o = torch.randn(n), torch.empty(n)
        triton.jit(scoped)[(4,)](x, o, n, BLOCK=256)
        torch.testing.assert_close(o, x * 2 + 1)


@pytest.fixture
def instrumented(monkeypatch):
    """In-kernel scopes on (they are silent no-ops otherwise), restored afterwards."""
    was = flags.instrumentation_on
    pl.enable_semantic("triton")
    flags.instrumentation_on = True
    yield
    flags.instrumentation_on = was
    pl.disable_semantic("triton")


def _opt(*args, env=None):
    assert os.access(OPT, os.X_OK), f"{OPT} is not built (make build/bin/tritium-opt)"
    return subprocess.run([OPT, *map(str, args)], capture_output=True, env=env, timeout=120)


# stage of tritium-opt --emit -> dump file suffix (python/triton/compiler/compiler.py)
TEXT_STAGES = [("ttir", "_tt.mlir"), ("linalg", "_linalg.mlir"), ("llmlir", "_ll.mlir"), ("llir", ".ll"), ("asm", ".s")]


@pytest.mark.parametrize("name", ["vec_add", "row_sum", "small_dot", "scoped"])
def test_tritium_opt_reproduces_the_python_compile(name, tmp_path, monkeypatch, fresh_cache, instrumented):
    dump = tmp_path / "dump"
    monkeypatch.setenv("SPINE_TRITON_DUMP_PATH", str(dump))
    _launch(name)
    tt = dump / f"{name}_tt.mlir"
    assert tt.is_file(), os.listdir(dump)
    if name == "scoped":
        assert "proton.record" in tt.read_text()
        assert "llvm.call" in (dump / f"{name}_linalg.mlir").read_text()  # lowered, not dropped
    for stage, suffix in TEXT_STAGES:
        p = _opt(tt, f"--emit={stage}")
        assert p.returncode == 0, p.stderr.decode()
        want = (dump / f"{name}{suffix}").read_bytes()
        assert p.stdout == want, f"--emit={stage} differs from {name}{suffix}"
    so = tmp_path / "x.so"
    p = _opt(tt, "--emit=so", "-o", so)
    assert p.returncode == 0, p.stderr.decode()
    assert so.read_bytes() == (dump / f"{name}.so").read_bytes(), "the .so differs from the dumped one"


def test_the_options_change_what_tritium_opt_emits(tmp_path, monkeypatch, fresh_cache, instrumented):
    """--no-instrument, --no-stream and --vector-bytes reach the driver (and the defaults
    compared above are therefore not the only thing tritium-opt can do)."""
    dump = tmp_path / "dump"
    monkeypatch.setenv("SPINE_TRITON_DUMP_PATH", str(dump))
    _launch("scoped")
    _launch("vec_add")
    plain = _opt(dump / "scoped_tt.mlir", "--emit=linalg", "--no-instrument")
    assert plain.returncode == 0 and b"llvm.call" not in plain.stdout
    tt = dump / "vec_add_tt.mlir"
    llir = _opt(tt, "--emit=llir").stdout
    assert b"@tritium_kernel_nt" in llir
    assert b"@tritium_kernel_nt" not in _opt(tt, "--emit=llir", "--no-stream").stdout
    narrow = _opt(tt, "--emit=llir", "--vector-bytes=16", "--no-stream").stdout
    assert b"<4 x float>" in narrow and b"<16 x float>" not in narrow
    bad = _opt(tt, "--emit=linalg", "--vector-bytes=24")
    assert bad.returncode == 1 and b"16, 32 or 64" in bad.stderr


def test_lowering_errors_and_remarks_point_into_the_kernel(tmp_path, fresh_cache):
    """The driver lowers TTIR printed with locations: its errors are CompilationErrors
    at the kernel's line, its remarks name the line of the load and the store."""
    src = tmp_path / "lowering_kernels.py"
    src.write_text(
        "import triton.language as tl\n"
        "def ifptr(x_ptr, o_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    if n > 0:\n"
        "        p = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (BLOCK,), (0,))\n"
        "    else:\n"
        "        p = tl.make_block_ptr(x_ptr, (64,), (1,), (16,), (BLOCK,), (0,))\n"
        "    tl.store(o_ptr + offs, tl.load(p))\n"
        "def gather(x_ptr, i_ptr, o_ptr, BLOCK: tl.constexpr):\n"
        "    idx = tl.load(i_ptr + tl.arange(0, BLOCK))\n"
        "    v = tl.load(x_ptr + idx * idx, mask=idx < 8)\n"
        "    tl.store(o_ptr + idx, v, mask=idx < 8)\n")
    ns = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    with pytest.raises(triton.CompilationError) as ei:
        triton.jit(ns["ifptr"])[(1,)](torch.randn(64), torch.empty(64), 3, BLOCK=16)
    msg = str(ei.value)
    assert f"{src}:4:" in msg and "pointers produced by an if/else" in msg and "if n > 0:" in msg, msg
    k = triton.jit(ns["gather"])
    x, i, o = torch.randn(64), torch.randint(0, 16, (16,), dtype=torch.int32), torch.zeros(64)
    k[(1,)](x, i, o, BLOCK=16)
    m = i < 8
    assert torch.equal(o[i[m].long()], x[(i[m] * i[m]).long()])
    remarks = k.warmup(x, i, o, BLOCK=16, grid=(1,)).metadata["remarks"]
    lines = {(os.path.basename(f), ln) for f, ln, _, _ in remarks}
    assert {(src.name, 11), (src.name, 12)} <= lines, remarks


def test_tritium_opt_isolate_reports_a_crash(tmp_path):
    tt = os.path.join(REPO, "tests", "ir", "stages", "add2d.ttir")
    env = dict(os.environ, TRITIUM_CG_CRASH_FOR_TESTING="func.func")
    env.pop("TRITIUM_COMPILE_FORK", None)
    p = _opt(tt, "--emit=obj", "-o", tmp_path / "x.o", "--isolate", env=env)
    err = p.stderr.decode()
    assert p.returncode == 1, (p.returncode, err)
    assert "internal compiler error: code generation crashed (signal 11" in err and "unaffected" in err, err
    env["TRITIUM_COMPILE_FORK"] = "1"
    p = _opt(tt, "--emit=obj", "-o", tmp_path / "x.o", env=env)
    assert p.returncode == 1 and "signal 11" in p.stderr.decode()
    # in process the hook does nothing (it lives in the forked child only)
    p = _opt(tt, "--emit=obj", "-o", tmp_path / "x.o", env=dict(env, TRITIUM_COMPILE_FORK="0"))
    assert p.returncode == 0, p.stderr.decode()
