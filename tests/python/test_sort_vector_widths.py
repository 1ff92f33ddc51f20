"""tl.sort and tl.flip (bitonic exchange networks of reshape/permute/split/join/where) on
[M, N] tiles at every vector width (TRITIUM_VECTOR_BYTES 16, 32, 64; each width in a
child process, since the width is read per compile from the environment), against torch.

The regression: on x86 with AVX-512, LLVM 19's SLP vectorizer turned the unrolled
element-by-element shuffles of the network on a [1, 32] tile of fp32/int32 into masked
gathers and got lanes wrong (duplicated, lost) at 32/64-byte vectors; the compiler now
tells LLVM to prefer no gathers there (cg_target_llvm_features, compiler/src/cg_target.c).
The sweep covers the siblings: N = 2..128, M = 1, 2, 4, five dtypes."""
import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _net_kernel(X, S, D, F, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(S + offs, tl.sort(x))
    tl.store(D + offs, tl.sort(x, descending=True))
    tl.store(F + offs, tl.flip(x, 1))


DTYPES = {"fp32": torch.float32, "int32": torch.int32, "fp16": torch.float16, "int64": torch.int64,
          "int8": torch.int8}


def _cases():
    """fp32/int32 on every shape (the failing pair); the other dtypes on the sizes
    around the failing one, to keep the sweep under a minute."""
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
        s, d, f = (torch.empty_like(x) for _ in range(3))
        _net_kernel[(1,)](x, s, d, f, m, n)
        for what, got, ref in (("sort", s, torch.sort(x, -1).values),
                               ("sort desc", d, torch.sort(x, -1, descending=True).values),
                               ("flip", f, torch.flip(x, [1]))):
            if not torch.equal(got, ref):
                wrong.append(f"{what} {name} [{m}, {n}]")
    assert not wrong, "wrong results: " + "; ".join(wrong)


@pytest.mark.parametrize("vb", ["16", "32", "64"])
def test_sort_and_flip_at_every_vector_width(vb, run_in_child, tmp_path):
    run_in_child(__file__, "check_widths", cache_dir=tmp_path, env={"TRITIUM_VECTOR_BYTES": vb})


def test_one_row_of_32_has_no_gathers():
    """The shape that was wrong: the LLVM IR of the network on [1, 32] fp32 carries no
    masked gather (what SLP built) at the host's default width."""
    x = torch.randn(1, 32)
    s, d, f = (torch.empty_like(x) for _ in range(3))
    k = _net_kernel[(1,)](x, s, d, f, 1, 32)
    assert torch.equal(s, torch.sort(x, -1).values)
    assert "llvm.masked.gather" not in k.asm["llir"]
