"""A boundary-checked block-pointer tile combined with a masked 1-D load broadcast
into it (a bias row or column): the generic runs over the in-bounds region and reads
the padded bias through a broadcast. MLIR 19 folded the pad into that read and then
rejected it ("requires broadcast dimensions to be in-bounds"); checked against torch at
every vector width, on shapes with partial tiles along one, both or neither dim."""
import os
import subprocess
import sys

import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def _bias_kernel(X, Y, B, C, M, N, BM: tl.constexpr, BN: tl.constexpr, ROW: tl.constexpr):
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    xp = tl.make_block_ptr(X, [M, N], [N, 1], [om, on], [BM, BN], [1, 0])
    yp = tl.make_block_ptr(Y, [M, N], [N, 1], [om, on], [BM, BN], [1, 0])
    cols = on + tl.arange(0, BN)
    rows = om + tl.arange(0, BM)
    x = tl.load(xp, boundary_check=(0, 1))
    if ROW:
        bias = tl.load(B + cols, mask=cols < N, other=0.)
        v = x * bias[None, :]
    else:
        bias = tl.load(C + rows, mask=rows < M, other=0.)
        v = x - bias[:, None]
    tl.store(yp, v, boundary_check=(0, 1))


SHAPES = [(37, 50, 16, 16), (5, 70, 8, 32), (64, 64, 16, 16), (33, 1, 16, 16), (1, 33, 16, 16)]


def check_all():
    for (M, N, BM, BN) in SHAPES:
        for row in (True, False):
            x, b, c = torch.randn(M, N), torch.randn(N), torch.randn(M)
            y = torch.full((M, N), float("nan"))
            _bias_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, y, b, c, M, N, BM, BN, row)
            torch.testing.assert_close(y, x * b[None, :] if row else x - c[:, None], rtol=0, atol=0)


def test_bias_row_and_column():
    check_all()


@pytest.mark.parametrize("vector_bytes", ["16", "32", "64"])
def test_bias_every_vector_width(tmp_path, vector_bytes):
    env = dict(os.environ, TRITIUM_VECTOR_BYTES=vector_bytes, TRITON_CACHE_DIR=str(tmp_path))
    code = "import sys; sys.path.insert(0, %r); import test_masked_broadcast as t; t.check_all(); print('ok')" % \
        os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stderr[-3000:]
