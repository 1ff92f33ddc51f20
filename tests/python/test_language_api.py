"""More of issue 10's language and API surface, each against torch: tl.range's
scheduling options, getattr on modules inside kernels, tl.str_to_ty, kernels defined
through exec with their source in linecache, JITFunction._unsafe_update_src."""
import linecache

import numpy as np

import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _range_opts(X, Y, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.range(0, n, BLOCK, num_stages=3, loop_unroll_factor=2, disallow_acc_multi_buffer=True,
                      flatten=True, warp_specialize=False):
        offs = i + tl.arange(0, BLOCK)
        acc += tl.load(X + offs, mask=offs < n, other=0.0)
    tl.store(Y + tl.arange(0, BLOCK), acc)


def test_range_options_accepted():
    x = torch.randn(1000)
    y = torch.empty(64)
    _range_opts[(1,)](x, y, 1000, BLOCK=64)
    ref = torch.nn.functional.pad(x, (0, 24)).reshape(-1, 64).sum(0)
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)


@triton.jit
def _getattr_fn(X, Y, N: tl.constexpr, FN: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.store(Y + tl.arange(0, N), getattr(tl, FN)(x))


@pytest.mark.parametrize("fn,ref", [("exp", torch.exp), ("abs", torch.abs)])
def test_getattr_on_module(fn, ref):
    x = torch.randn(64)
    y = torch.empty_like(x)
    _getattr_fn[(1,)](x, y, N=64, FN=fn)
    torch.testing.assert_close(y, ref(x), rtol=2e-6, atol=1e-6)


def test_str_to_ty():
    assert tl.str_to_ty("fp32") == tl.float32
    assert tl.str_to_ty("i64") == tl.int64
    assert tl.str_to_ty("bf16") == tl.bfloat16
    p = tl.str_to_ty("*fp16")
    assert p.is_ptr() and p.element_ty == tl.float16


_EXEC_SRC = '''
@triton.jit
def exec_kernel(X, Y, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(Y + offs, tl.load(X + offs) * 3.0)
'''


def test_kernel_defined_through_exec():
    name = "<tritium-exec-kernel>"
    linecache.cache[name] = (len(_EXEC_SRC), None, _EXEC_SRC.splitlines(True), name)
    scope = {"triton": triton, "tl": tl}
    exec(compile(_EXEC_SRC, name, "exec"), scope)
    x = torch.randn(16)
    y = torch.empty_like(x)
    scope["exec_kernel"][(1,)](x, y, N=16)
    assert torch.equal(y, x * 3.0)


def test_unsafe_update_src():
    """As upstream's test_core.patch_kernel: the source is replaced before the first
    launch and the launch compiles the new source."""
    def body(X, Y, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(Y + offs, tl.load(X + offs) + 1.0)
    k = triton.jit(body)
    k._unsafe_update_src(k.src.replace("+ 1.0", "- 5.0"))
    x = torch.randn(16)
    y = torch.empty_like(x)
    k[(1,)](x, y, N=16)
    assert torch.equal(y, x - 5.0)


@pytest.mark.parametrize("literal", ["1e50", "-1e50", "1e-40", "3.4e38", "3.5e38", "1.0", "0.0", "-0.0",
                                     "float('inf')", "float('nan')", "1.1754943508222875e-38", "1e-38"])
def test_float_literal_dtype(literal):
    """A float literal is fp32 when fp32 holds it as a normal number (or 0, inf, NaN),
    else fp64 (upstream's rule): 1e50 is stored as 1e50, not as fp32 inf."""
    v = eval(literal)
    a = abs(v)
    fp32 = a == 0 or a == float("inf") or v != v or np.finfo(np.float32).tiny <= a <= np.finfo(np.float32).max
    src = f"""
import triton
import triton.language as tl
@triton.jit
def k(out_ptr):
    val = {literal}
    tl.store(out_ptr.to(tl.pointer_type(val.dtype)), val)
"""
    ns = {}
    path = f"<literal {literal}>"
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    exec(compile(src, path, "exec"), ns)
    out = torch.zeros(1, dtype=torch.float64)
    ns["k"][(1,)](out)
    got = out.view(torch.float32)[0].item() if fp32 else out.item()
    want = float(np.float32(v)) if fp32 else v
    assert (got != got and want != want) or got == want, (literal, got, want)


@triton.jit
def _u32_literal_kernel(c_ptr, out_ptr, dt_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c = tl.load(c_ptr + offs)
    v = tl.where(c > 0, 3000000000, 1)  # uint32 and int32 literals promote to uint32
    tl.store(out_ptr + offs, (v * 2).to(tl.int64))  # uint32 arithmetic wraps
    tl.store(dt_ptr, tl.full([1], 1 if v.dtype == tl.uint32 else 0, tl.int32).sum())


def test_uint32_literal():
    """An int literal in [2**31, 2**32) is uint32 (upstream's rule), in the compiled code
    as in `.dtype`: a where() of it and an int32 literal is uint32 and `* 2` wraps
    modulo 2**32 (numpy's uint32 arithmetic is the reference)."""
    c = torch.tensor([1, 0, 5, -3, 0, 7, 2, 0], dtype=torch.int32)
    out = torch.zeros(8, dtype=torch.int64)
    dt = torch.zeros(1, dtype=torch.int32)
    _u32_literal_kernel[(1,)](c, out, dt, BLOCK=8)
    v = np.where(c.numpy() > 0, np.uint32(3000000000), np.uint32(1))
    want = (v * np.uint32(2)).astype(np.int64)
    assert dt.item() == 1
    assert out.tolist() == want.tolist()
