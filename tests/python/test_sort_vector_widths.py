"""tl.sort and tl.flip (bitonic exchange networks of reshape/permute/split/join/where) on
[M, N] tiles at every vector width (TRITIUM_VECTOR_BYTES 16, 32, 64; each width in a
child process, since the width is read per compile from the environment), against torch.

The regression: on x86 with AVX-512, LLVM 19's SLP vectorizer turned the unrolled
element-by-element shuffles of the network on a [1, 32] tile of fp32/int32 into masked
gathers and got lanes wrong (duplicated, lost) at 32/64-byte vectors; the compiler turns
the SLP vectorizer off (cg_llvm_targets_init, compiler/src/cg_target.c).
The sweep (TRITIUM_SORT_SWEEP=1) covers the siblings: N = 2..128, M = 1, 2, 4, five
dtypes; by default only a few shapes (a compile of the network takes seconds)."""
import os

import pytest
import torch

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def _net_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    """One network per kernel (OP 0: sort, 1: descending sort, 2: flip): the miscompile
    depended on what else the kernel held (sort and flip in one kernel came out right)."""
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    if OP == 0:
        y = tl.sort(x)
    elif OP == 1:
        y = tl.sort(x, descending=True)
    else:
        y = tl.flip(x, 1)
    tl.store(Z + offs, y)


DTYPES = {"fp32": torch.float32, "int32": torch.int32, "fp16": torch.float16, "int64": torch.int64,
          "int8": torch.int8}


def _cases():
    """By default the failing shape ([1, 32] fp32/int32) and a few neighbours: a compile of
    the network takes seconds on a loaded two-core machine. TRITIUM_SORT_SWEEP=1 sweeps
    N = 2..128, M = 1, 2, 4 for fp32/int32, and the other dtypes on N = 16..64, M = 1, 2."""
    if os.environ.get("TRITIUM_SORT_SWEEP") != "1":
        yield from (("fp32", 1, 32), ("int32", 1, 32), ("fp32", 2, 16))
        return
    for n in (2, 4, 8, 16, 32, 64, 128):
        for m in (1, 2, 4):
            for name in DTYPES:
                if name in ("fp32", "int32") or (m in (1, 2) and 16 <= n <= 64):
                    yield name, m, n


def check_widths(names=",".join(DTYPES)):
    """Runs every case of the listed dtypes in this process (the child); raises with the
    list of wrong cases."""
    wrong = []
    for name, m, n in _cases():
        if name not in names.split(","):
            continue
        dt = DTYPES[name]
        g = torch.Generator().manual_seed(m * 1000 + n)
        x = (torch.randn(m, n, generator=g) * 100).to(dt) if dt.is_floating_point else \
            torch.randint(-100, 100, (m, n), generator=g).to(dt)
        refs = (("sort", torch.sort(x, -1).values), ("sort desc", torch.sort(x, -1, descending=True).values),
                ("flip", torch.flip(x, [1])))
        for op, (what, ref) in enumerate(refs):
            z = torch.empty_like(x)
            _net_kernel[(1,)](x, z, m, n, op)
            if not torch.equal(z, ref):
                wrong.append(f"{what} {name} [{m}, {n}]")
    assert not wrong, "wrong results: " + "; ".join(wrong)


@pytest.mark.parametrize("vb", ["16", "32", "64"])
def test_sort_and_flip_at_every_vector_width(vb, run_in_child, tmp_path):
    run_in_child(__file__, "check_widths", cache_dir=tmp_path, env={"TRITIUM_VECTOR_BYTES": vb})


def test_one_row_of_32_has_no_gathers():
    """The shape that was wrong: the optimised LLVM IR of the network on [1, 32] fp32 at the
    host's default width carries no masked gather (what SLP built)."""
    sig = {"X": "*fp32", "Z": "*fp32"}
    k = triton.compile(ASTSource(fn=_net_kernel, signature=sig, constexprs={"M": 1, "N": 32, "OP": 0}),
                       target=GPUTarget("cpu", 0, 0))
    assert "llvm.masked.gather" not in k.asm["llir"]
