"""Debugging ops (issue 10, "What to build" 5): tl.device_print / print in kernels in
upstream's compiled-backend format ("pid (x, y, z) idx (i, j)<prefix><value>", the
contract of upstream's test_subprocess.py), each program's lines together, on several
threads too; tl.device_assert (and `assert` in kernels) compiled in only with
TRITON_DEBUG=1, @triton.jit(debug=True), the launch option debug=True or
knobs.runtime.debug, raising RuntimeError with kernel, program, file:line and message
and never killing the process; tl.static_print and tl.static_assert."""
import inspect
import re

import pytest
import torch

import triton
import triton.language as tl
from triton.compiler.errors import CompileTimeAssertionFailure


def _lines(capfd):
    return [ln for ln in capfd.readouterr().out.splitlines() if ln]


@triton.jit
def _print_1d(X, BLOCK: tl.constexpr, HEX: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.device_print("x: ", x, hex=HEX)


def _c_format(v, dtype, hex_):
    if dtype.is_floating_point:
        return float(v).hex() if hex_ else f"{float(v):f}"
    if hex_:
        bits = torch.iinfo(dtype).bits
        return f"0x{int(v) & ((1 << bits) - 1):0{bits // 4}x}"
    return str(int(v))


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.float16,
                                   torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("hex_", [False, True])
def test_device_print_values(dtype, hex_, capfd):
    n = 32
    if dtype.is_floating_point:
        x = (torch.arange(n, dtype=torch.float32) * 0.75 - 9).to(dtype)
        x[3] = float("inf")
        x[4] = -0.0
    else:
        info = torch.iinfo(dtype)
        x = torch.arange(n, dtype=torch.int64) * 7 - 100
        x[0], x[1] = info.min, info.max
        x = x.clamp(info.min, info.max).to(dtype)
    capfd.readouterr()
    _print_1d[(1, )](x, BLOCK=n, HEX=hex_)
    out = _lines(capfd)
    assert len(out) == n
    for i, line in enumerate(out):
        head = f"pid (0, 0, 0) idx ({i:2}) x: "
        assert line.startswith(head), line
        got, want = line[len(head):], _c_format(x[i].item(), dtype, hex_)
        if dtype.is_floating_point and hex_:  # C's %a and Python's float.hex spell alike values differently
            assert float.fromhex(got) == float.fromhex(want), (line, want)
        else:
            assert got == want, (line, want)


@triton.jit
def _print_2d(X, BX: tl.constexpr, BY: tl.constexpr):
    x = tl.load(X + tl.arange(0, BX)[:, None] * BY + tl.arange(0, BY)[None, :])
    tl.device_print("", x)


def test_device_print_2d_index_widths(capfd):
    x = torch.arange(4 * 32, dtype=torch.int32).reshape(4, 32)
    capfd.readouterr()
    _print_2d[(1, )](x, BX=4, BY=32)
    want = [f"pid (0, 0, 0) idx ({i}, {j:2}): {i * 32 + j}" for i in range(4) for j in range(32)]
    assert _lines(capfd) == want


@triton.jit
def _print_forms(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.full((BLOCK, ), 1, tl.int32)
    print("", x, y)  # several operands: "(operand n)"
    print("no arg")  # no operand: the prefix only
    print("", tl.program_id(0))  # a scalar: idx ()
    tl.device_print("b ", x > 1)  # bools print as 0/1, "b " becomes " b: "
    print("s", tl.load(X + 1))


def test_print_forms_as_upstream(capfd):
    x = torch.arange(4, dtype=torch.int32)
    capfd.readouterr()
    _print_forms[(1, )](x, BLOCK=4)
    want = ([f"pid (0, 0, 0) idx ({i}): (operand 0) {i}" for i in range(4)] +
            [f"pid (0, 0, 0) idx ({i}): (operand 1) 1" for i in range(4)] +
            ["pid (0, 0, 0) no arg", "pid (0, 0, 0) idx (): 0"] +
            [f"pid (0, 0, 0) idx ({i}) b: {int(i > 1)}" for i in range(4)] + ["pid (0, 0, 0) idx () s: 1"])
    assert _lines(capfd) == want


@triton.jit
def _print_grid(X, BLOCK: tl.constexpr):
    pid = tl.program_id(0) + 10 * tl.program_id(1)
    x = tl.load(X + pid * BLOCK + tl.arange(0, BLOCK))
    tl.device_print("a ", x)
    tl.device_print("b ", x * 2)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_device_print_lines_grouped_per_program(threads, capfd):
    """Every program's lines (both prints) come out together and in order, whatever
    thread ran it; with one thread the programs come in program-id order."""
    block, gx, gy = 16, 5, 3
    x = torch.arange(gx * gy * 10 * block, dtype=torch.int32)
    capfd.readouterr()
    _print_grid[(gx, gy)](x, BLOCK=block, num_threads=threads)
    out = _lines(capfd)
    assert len(out) == gx * gy * 2 * block
    blocks = [out[i:i + 2 * block] for i in range(0, len(out), 2 * block)]
    seen = []
    for blk in blocks:
        m = re.match(r"pid \((\d+), (\d+), 0\)", blk[0])
        px, py = int(m.group(1)), int(m.group(2))
        seen.append((py, px))
        base = (px + 10 * py) * block
        want = ([f"pid ({px}, {py}, 0) idx ({i:2}) a: {base + i}" for i in range(block)] +
                [f"pid ({px}, {py}, 0) idx ({i:2}) b: {2 * (base + i)}" for i in range(block)])
        assert blk == want
    assert sorted(seen) == [(py, px) for py in range(gy) for px in range(gx)]
    if threads == 1:
        assert seen == sorted(seen)


@triton.jit
def _print_in_loop(X, N, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK, ), tl.float32)
    for i in range(N):
        acc += tl.load(X + tl.arange(0, BLOCK))
        if i == N - 1:
            tl.device_print("acc ", tl.sum(acc))


def test_device_print_in_a_long_loop_and_fp8(capfd):
    """A print inside a loop runs many times without growing the stack (each one's
    buffers are released); fp8 values print widened."""
    x = torch.ones(4096)
    capfd.readouterr()
    _print_in_loop[(1, )](x, 3000, BLOCK=4096)
    assert _lines(capfd) == [f"pid (0, 0, 0) idx () acc: {3000.0 * 4096:f}"]
    v = torch.tensor([0.5, -2.0, 448.0, 0.0]).to(torch.float8_e4m3fn)
    _print_1d[(1, )](v, BLOCK=4, HEX=False)
    assert _lines(capfd) == [f"pid (0, 0, 0) idx ({i}) x: {f:f}" for i, f in enumerate([0.5, -2.0, 448.0, 0.0])]


@triton.jit
def _print_pointer(X, BLOCK: tl.constexpr):
    tl.device_print("p ", X + tl.arange(0, BLOCK))


def test_device_print_of_pointers_refused_clearly():
    with pytest.raises(triton.CompilationError, match="device_print of pointers"):
        _print_pointer[(1, )](torch.zeros(4), BLOCK=4)


# ---- device_assert ------------------------------------------------------------------------

@triton.jit(debug=True)
def _checked_copy(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N, other=0)
    tl.device_assert(x < 100, "x too big")
    tl.store(Y + offs, x, mask=offs < N)


def _assert_line():
    lines, start = inspect.getsourcelines(_checked_copy.fn)
    return start + next(i for i, ln in enumerate(lines) if "tl.device_assert" in ln)


@pytest.mark.parametrize("threads", [1, 3])
def test_device_assert_failure_raises_with_report(threads):
    x = torch.arange(64, dtype=torch.int32)
    y = torch.zeros_like(x)
    _checked_copy[(4, )](x, y, 64, BLOCK=16, num_threads=threads)
    assert torch.equal(x, y)
    x[40] = 1000
    y.zero_()
    with pytest.raises(RuntimeError) as e:
        _checked_copy[(4, )](x, y, 64, BLOCK=16, num_threads=threads)
    msg = str(e.value)
    assert f"test_debug_ops.py:{_assert_line()}: _checked_copy: program (2, 0, 0): Assertion `x too big` failed" in msg
    assert torch.all(y[32:48] == 0)  # the failing program stopped at the assert
    if threads == 1:
        assert torch.all(y[48:] == 0)  # and no program started after it
        assert torch.equal(y[:32], x[:32])
    # the process goes on: the same kernel launches again
    x[40] = 1
    _checked_copy[(4, )](x, y, 64, BLOCK=16, num_threads=threads)
    assert torch.equal(x, y)


@triton.jit
def _assert_kernel(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))
    assert tl.sum(x) == 0, "sum is not zero"


@triton.jit
def _assert_masked(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    tl.device_assert(x == 0, "masked", mask=offs < 8)


def test_device_assert_switches():
    x = torch.ones(32)
    x[16:] = 0  # only program 0 fails, so the message names it whichever thread runs first
    _assert_kernel[(2, )](x, BLOCK=16)  # debug off: compiled out
    with pytest.raises(RuntimeError, match=r"_assert_kernel: program \(0, 0, 0\): Assertion `sum is not zero`"):
        _assert_kernel[(2, )](x, BLOCK=16, debug=True)
    _assert_kernel[(2, )](x, BLOCK=16, debug=False)
    _checked_copy[(1, )](torch.full((16, ), 500, dtype=torch.int32), torch.zeros(16, dtype=torch.int32), 16,
                         BLOCK=16, debug=False)  # the launch option wins over @jit(debug=True)
    triton.knobs.runtime.debug = True
    try:
        with pytest.raises(RuntimeError, match="sum is not zero"):
            _assert_kernel[(2, )](x, BLOCK=16)
        with pytest.raises(RuntimeError, match="sum is not zero"):
            _assert_kernel[(2, )](x, BLOCK=16, debug=False)  # TRITON_DEBUG wins, as upstream
    finally:
        triton.knobs.runtime.debug = None
    _assert_kernel[(2, )](x, BLOCK=16)
    m = torch.zeros(16)
    m[8:] = 5.0  # failing lanes, all masked off
    _assert_masked[(1, )](m, BLOCK=16, debug=True)
    m[7] = 1.0
    with pytest.raises(RuntimeError, match="masked"):
        _assert_masked[(1, )](m, BLOCK=16, debug=True)


def test_device_assert_compiled_out_without_debug():
    x = torch.ones(16)
    plain = _assert_kernel.warmup(x, BLOCK=16, grid=(1, ))
    assert "tt.assert" not in plain.asm["ttir"]


_ENV_SCRIPT = """
import torch, triton, triton.language as tl

@triton.jit
def k(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.device_assert(x == 0, "env")

try:
    k[(3, )](torch.ones(16), BLOCK=16)
    print("NO-RAISE")
except RuntimeError as e:
    print("RAISED", e)
"""


@pytest.mark.parametrize("env", ["0", "1"])
def test_triton_debug_environment(env, tmp_path, run_py):
    script = tmp_path / "env_assert.py"
    script.write_text(_ENV_SCRIPT)
    proc = run_py(script, tmp_path / "cache", env={"TRITON_DEBUG": env})
    assert proc.returncode == 0, proc.stderr
    if env == "1":
        assert "RAISED device-side assertion failed:" in proc.stdout and "Assertion `env` failed" in proc.stdout
    else:
        assert "NO-RAISE" in proc.stdout


# ---- compile-time ---------------------------------------------------------------------------

@triton.jit
def _static(X, C: tl.constexpr, TAG: tl.constexpr):
    tl.static_print("static", TAG, C)
    tl.static_assert(C > 0, "C must be positive")
    tl.store(X, C)


def test_static_print_and_assert(capfd):
    x = torch.zeros(1, dtype=torch.int32)
    capfd.readouterr()
    _static[(1, )](x, 3, "once")
    _static[(1, )](x, 3, "once")  # cached: not traced again
    assert capfd.readouterr().out.count("static once 3") == 1
    assert x.item() == 3
    with pytest.raises(CompileTimeAssertionFailure, match="C must be positive"):
        _static[(1, )](x, 0, "zero")

