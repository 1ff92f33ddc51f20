"""Mistakes in kernels raise triton.CompilationError pointing at the user's code: the
file name, the right line number, the offending source line and a description. Launch
mistakes (wrong number or kinds of arguments) raise TypeError naming the parameter.

Each kernel below contains exactly one mistake; the test finds the line by a marker
string so the expected line number follows edits of this file."""
import inspect
import os
import platform
import re

import pytest
import torch

import triton
import triton.compiler.errors
import triton.language as tl

THIS_FILE = os.path.abspath(__file__)


def helper_not_jitted(x):
    return x + 1


@triton.jit
def k_undefined_name(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, undefined_thing + 1)  # noqa: F821


@triton.jit
def k_arange_not_constexpr(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, n)
    tl.store(x_ptr + offs, 1.0)


@triton.jit
def k_arange_not_pow2(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, 10)
    tl.store(x_ptr + offs, 1.0)


@triton.jit
def k_add_pointers(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = x_ptr + y_ptr
    tl.store(p + offs, 1.0)


@triton.jit
def k_other_without_mask(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, other=0.0)
    tl.store(x_ptr + offs, x)


@triton.jit
def k_shape_mismatch(x_ptr, BLOCK: tl.constexpr):
    a = tl.arange(0, BLOCK)
    b = tl.arange(0, 2 * BLOCK)
    tl.store(x_ptr + a, a + b)


@triton.jit
def k_loop_type_change(x_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for i in range(n):
        acc = acc + 1.5
    tl.store(x_ptr + tl.arange(0, BLOCK), acc)


@triton.jit
def k_python_function(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, helper_not_jitted(x))


@triton.jit
def k_break(x_ptr, n, BLOCK: tl.constexpr):
    for i in range(n):
        break
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@triton.jit
def k_continue(x_ptr, n, BLOCK: tl.constexpr):
    for i in range(n):
        continue
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@triton.jit
def k_dot_shapes(a_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(a_ptr + tl.arange(0, 32)[:, None] * 16 + r[None, :])
    c = tl.dot(a, b)
    tl.store(a_ptr + r[:, None] * 16 + r[None, :], c)


@triton.jit
def k_static_assert(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 3 == 0, "BLOCK must be a multiple of 3")
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@triton.jit
def k_tensor_condition(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if x > 0:
        x = x + 1
    tl.store(x_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def k_branch_type_mismatch(x_ptr, n, BLOCK: tl.constexpr):
    if n > 0:
        v = tl.zeros([BLOCK], dtype=tl.float32)
    else:
        v = tl.zeros([BLOCK], dtype=tl.int32)
    tl.store(x_ptr + tl.arange(0, BLOCK), v)


@triton.jit
def k_mixed_signedness_division(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(x_ptr + offs, x // y)


@triton.jit
def k_store_to_non_pointer(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(offs, 1.0)


@triton.jit
def _helper_with_mistake(x):
    return x + undefined_in_helper  # noqa: F821


@triton.jit
def k_error_in_helper(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, _helper_with_mistake(tl.load(x_ptr + offs)))


f32 = lambda: torch.zeros(64)  # noqa: E731
i32 = lambda: torch.zeros(64, dtype=torch.int32)  # noqa: E731
u32 = lambda: torch.zeros(64, dtype=torch.uint32)  # noqa: E731

# (kernel, args, marker on the offending line, regex the description must match)
CASES = [
    (k_undefined_name, lambda: (f32(),), "undefined_thing + 1", r"name 'undefined_thing' is not defined"),
    (k_arange_not_constexpr, lambda: (f32(), 16), "tl.arange(0, n)", r"arange.*constexpr"),
    (k_arange_not_pow2, lambda: (f32(),), "tl.arange(0, 10)", r"power of 2"),
    (k_add_pointers, lambda: (f32(), f32()), "x_ptr + y_ptr", r"cannot add pointers together"),
    (k_other_without_mask, lambda: (f32(),), "other=0.0", r"`other` cannot be provided without `mask`"),
    (k_shape_mismatch, lambda: (f32(),), "a + b)", r"incompatible dimensions at index 0: 16 and 32"),
    (k_loop_type_change, lambda: (i32(), 4), "for i in range(n):",
     r"Loop-carried variable acc has initial type .*int32.* re-assigned to .*fp32"),
    (k_python_function, lambda: (f32(),), "helper_not_jitted(x)",
     r"Unsupported function referenced: helper_not_jitted"),
    (k_break, lambda: (f32(), 4), "        break", r"`break` is not supported"),
    (k_continue, lambda: (f32(), 4), "        continue", r"`continue` is not supported"),
    (k_dot_shapes, lambda: (f32(),), "c = tl.dot(a, b)", r"not compatible for matmul.*16.*32"),
    (k_static_assert, lambda: (f32(),), "tl.static_assert(BLOCK % 3",
     r"Static assert failed: BLOCK must be a multiple of 3"),
    (k_tensor_condition, lambda: (f32(),), "if x > 0:", r"if condition must be a scalar"),
    (k_branch_type_mismatch, lambda: (f32(), 3), "if n > 0:", r"Mismatched type for v .*fp32.*int32"),
    (k_mixed_signedness_division, lambda: (i32(), u32()), "x // y", r"different signedness"),
    (k_store_to_non_pointer, lambda: (f32(),), "tl.store(offs, 1.0)", r"Unsupported ptr type .*in `tl.store`"),
]


def _line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    hits = [i for i, ln in enumerate(lines) if marker in ln]
    assert len(hits) == 1, f"marker {marker!r} must occur once in {fn.__name__}"
    return start + hits[0], lines[hits[0]].strip()


def _check_message(exc, fn, marker, description):
    msg = str(exc)
    lineno, src_line = _line_of(fn, marker)
    assert THIS_FILE in msg, msg
    assert re.search(rf"{re.escape(os.path.basename(THIS_FILE))}:{lineno}:\d+:", msg), f"want line {lineno}:\n{msg}"
    assert src_line.split("  #")[0].strip() in msg, msg
    assert re.search(description, msg), msg


@pytest.mark.parametrize("kernel,args,marker,description", CASES, ids=[c[0].__name__ for c in CASES])
def test_compilation_error(kernel, args, marker, description):
    with pytest.raises(triton.CompilationError) as ei:
        kernel[(1,)](*args(), BLOCK=16)
    _check_message(ei.value, kernel.fn, marker, description)


def test_error_inside_helper_points_at_helper():
    with pytest.raises(triton.CompilationError) as ei:
        k_error_in_helper[(1,)](f32(), BLOCK=16)
    _check_message(ei.value, _helper_with_mistake.fn, "undefined_in_helper", r"'undefined_in_helper' is not defined")


def test_compilation_error_class_is_shared():
    assert triton.CompilationError is triton.compiler.errors.CompilationError
    assert triton.compiler.CompilationError is triton.CompilationError
    assert issubclass(triton.CompilationError, Exception)


def test_error_message_has_caret_under_column():
    with pytest.raises(triton.CompilationError) as ei:
        k_add_pointers[(1,)](f32(), f32(), BLOCK=16)
    lines = str(ei.value).splitlines()
    src = [i for i, ln in enumerate(lines) if "x_ptr + y_ptr" in ln][0]
    caret = lines[src + 1]
    assert caret.strip() == "^"
    assert caret.index("^") == lines[src].index("x_ptr + y_ptr")


def test_failed_compile_does_not_poison_later_launches():
    """After an error, a correct kernel with the same parameter types still compiles and runs."""
    with pytest.raises(triton.CompilationError):
        k_undefined_name[(1,)](f32(), BLOCK=16)
    x = torch.randn(64)
    o = torch.zeros(64)
    _ok_kernel[(4,)](x, o, 64, BLOCK=16)
    torch.testing.assert_close(o, x + 1)


# ---- launch-time argument errors: TypeError naming the parameter -----------------------------

@triton.jit
def _ok_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


@triton.jit
def _scale_kernel(x_ptr, o_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


_X, _O = torch.randn(100), torch.empty(100)

ARG_ERRORS = [
    ("missing", lambda: _scale_kernel[(1,)](_X, _O, 100, BLOCK=64), r"missing.*'alpha'"),
    ("missing-constexpr", lambda: _scale_kernel[(1,)](_X, _O, 100, 2.0), r"missing.*'BLOCK'"),
    ("too-many", lambda: _scale_kernel[(1,)](_X, _O, 100, 2.0, 64, 5), r"_scale_kernel.*(positional|takes)"),
    ("duplicate", lambda: _scale_kernel[(1,)](_X, _O, 100, 2.0, 64, BLOCK=64), r"multiple values.*'BLOCK'"),
    ("unknown-keyword", lambda: _scale_kernel[(1,)](_X, _O, 100, 2.0, BLOCK=64, bogus=3), r"bogus"),
    ("string-for-int", lambda: _scale_kernel[(1,)](_X, _O, "abc", 2.0, BLOCK=64), r"'n'"),
    ("list-for-pointer", lambda: _scale_kernel[(1,)]([1, 2], _O, 100, 2.0, BLOCK=64), r"'x_ptr'"),
    ("unsupported-dtype", lambda: _scale_kernel[(1,)](torch.zeros(4, dtype=torch.complex64), _O, 100, 2.0,
                                                      BLOCK=64), r"'x_ptr'"),
]


@pytest.mark.parametrize("case,launch,pattern", ARG_ERRORS, ids=[c[0] for c in ARG_ERRORS])
def test_launch_argument_errors_name_the_parameter(case, launch, pattern):
    with pytest.raises(TypeError) as ei:
        launch()
    assert "%U" not in str(ei.value), str(ei.value)
    assert re.search(pattern, str(ei.value)), str(ei.value)


def test_calling_a_kernel_like_a_function_is_an_error():
    with pytest.raises(RuntimeError, match="outside of the scope of a kernel"):
        _ok_kernel(_X, _O, 100, 64)


_FOREIGN = """
import torch, triton, triton.language as tl
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.load(x_ptr + o) + 1)
k[(1,)](torch.zeros(16), BLOCK=16)
"""


@pytest.mark.skipif(platform.machine() != "x86_64", reason="needs a host that is not RISC-V")
def test_launching_cross_compiled_code_names_the_architectures(run_py, tmp_path):
    script = tmp_path / "foreign.py"
    script.write_text(_FOREIGN)
    p = run_py(script, tmp_path / "cache", env={"SPINE_TRITON_TARGET_ARCH": "riscv64"})
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert "it is RISC-V code and this process runs on x86-64" in last, p.stderr
    assert last.count("cannot load kernel") == 1, last
