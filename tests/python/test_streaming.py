"""Streaming (non-temporal) stores: the tritium_kernel_nt entry and when launches use it.

A kernel whose per-program stores the compiler can size gets a second entry with
non-temporal stores; the launcher takes it when a launch stores at least
TRITIUM_STREAM_STORES bytes (default half the last-level cache). Results must be
identical either way; the `streaming_launches` counter tells which entry ran.
"""
import json
import os
import platform
import re
import textwrap

import pytest
import torch

import triton
import triton.language as tl
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget


@triton.jit
def _add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def _atomic_sum(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(o_ptr, tl.sum(tl.load(x_ptr + offs, mask=m, other=0.0), axis=0))
    tl.store(x_ptr + offs, tl.zeros([BLOCK], tl.float32), mask=m)


@triton.jit
def _rows(x_ptr, o_ptr, n_rows, N: tl.constexpr):
    cols = tl.arange(0, N)
    for r in range(n_rows):  # trip count known only at run time
        tl.store(o_ptr + r * N + cols, tl.load(x_ptr + r * N + cols) * 2.0)


def _compile(fn, sig, consts):
    return triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts), target=GPUTarget("cpu", 0, 0))


def test_elementwise_kernel_has_streaming_entry():
    k = _compile(_add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024})
    assert k.metadata.stream_bytes == 1024 * 4  # one fp32 tile stored per program
    asm = k.asm["asm"]
    assert re.search(r"\.globl\s+tritium_kernel_nt\b", asm)
    nt_body = asm[asm.index("tritium_kernel_nt:"):]
    if platform.machine() == "x86_64" and not os.environ.get("SPINE_TRITON_TARGET_ARCH"):
        assert re.search(r"\bv?movntps\b", nt_body), "no vector non-temporal store in the streaming entry"
        # under-aligned vector stores are guarded by an alignment test, never split
        # into 8-byte movntsd/movnti pieces (a third of a compute-bound kernel's speed)
        assert not re.search(r"\b(movntsd|movntss|movnti)\b", nt_body)
        assert "sfence" in nt_body
        plain = asm[asm.index("tritium_kernel:"):asm.index("tritium_kernel_nt:")]
        assert not re.search(r"\bv?movnt", plain), "the plain entry must keep cached stores"


@pytest.mark.parametrize("fn,sig,consts", [
    (_atomic_sum, {"x_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256}),
    (_rows, {"x_ptr": "*fp32", "o_ptr": "*fp32", "n_rows": "i32"}, {"N": 64}),
], ids=["atomics", "runtime-loop"])
def test_no_streaming_entry_when_stores_cannot_be_sized(fn, sig, consts):
    k = _compile(fn, sig, consts)
    assert k.metadata.stream_bytes == 0
    assert "tritium_kernel_nt" not in k.asm["asm"]


_CHILD = textwrap.dedent("""
    import json, sys, torch, triton, triton.language as tl
    from triton._C import tritium as _C
    sys.path.insert(0, {here!r})
    from test_streaming import _add
    BLOCK = 1024
    out = {{}}
    for n in (1000, 4096, 300001):
        x = torch.randn(n); y = torch.randn(n); o = torch.full((n + 7,), -1.0)
        before = _C.stats()["streaming_launches"]
        _add[(triton.cdiv(n, BLOCK),)](x, y, o, n, BLOCK=BLOCK)
        assert torch.equal(o[:n], x + y), n
        assert torch.all(o[n:] == -1.0), "wrote past the end"
        out[n] = _C.stats()["streaming_launches"] - before
        # an output 4 bytes off any vector alignment takes the cached path of each store
        base = torch.full((n + 9,), -1.0)
        _add[(triton.cdiv(n, BLOCK),)](x, y, base[1:], n, BLOCK=BLOCK)
        assert torch.equal(base[1:n + 1], x + y), n
        assert base[0] == -1.0 and torch.all(base[n + 1:] == -1.0), "misaligned store wrote outside"
    print("RESULT=" + json.dumps(out))
""")


def _streamed(run_py, tmp_path, setting):
    script = tmp_path / "child.py"
    script.write_text(_CHILD.format(here=os.path.dirname(os.path.abspath(__file__))))
    env = {"TRITIUM_STREAM_STORES": setting}
    p = run_py(script, tmp_path / "cache", env=env)
    assert p.returncode == 0, p.stderr
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT=")][-1]
    return {int(k): v for k, v in json.loads(line[7:]).items()}


@pytest.mark.parametrize("setting,expect", [
    ("on", {1000: 1, 4096: 1, 300001: 1}),
    ("off", {1000: 0, 4096: 0, 300001: 0}),
    # 1000 and 4096 floats store 4 KiB and 16 KiB per launch (whole tiles); 300001 about 1.2 MB
    ("64K", {1000: 0, 4096: 0, 300001: 1}),
], ids=["on", "off", "threshold"])
def test_launch_picks_entry_and_results_match(run_py, tmp_path, setting, expect):
    assert _streamed(run_py, tmp_path, setting) == expect


def test_default_threshold_streams_only_large_launches(run_py, tmp_path):
    got = _streamed(run_py, tmp_path, None)
    # the default is half the last-level cache: at least 256 KiB on any machine we target
    assert got[1000] == 0 and got[4096] == 0


def test_bad_setting_warns_and_falls_back(run_py, tmp_path):
    script = tmp_path / "bad.py"
    script.write_text(textwrap.dedent("""
        import torch, triton, triton.language as tl
        @triton.jit
        def k(o_ptr, BLOCK: tl.constexpr):
            tl.store(o_ptr + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32) + 1.0)
        o = torch.zeros(64)
        k[(1,)](o, BLOCK=64)
        k[(2,)](o, BLOCK=32)
        assert torch.all(o == 1.0)
        print("OK")
    """))
    p = run_py(script, tmp_path / "cache", env={"TRITIUM_STREAM_STORES": "lots"})
    assert p.returncode == 0 and "OK" in p.stdout, p.stderr
    assert "TRITIUM_STREAM_STORES=lots" in p.stderr
