"""Launch geometry: 1/2/3-D grids (tuple or callable on the meta dict), program_id and
num_programs on every axis, sizes that are not multiples of the block (masks, n < BLOCK,
n = 0 with an empty grid, one element), grids smaller than the thread count, the
num_threads launch option and OMP_NUM_THREADS (in child processes), and ordinary
arguments passed by keyword."""
import textwrap

import pytest
import torch

import triton
import triton.language as tl

from conftest import check_ok


@triton.jit
def _grid_id_kernel(o_ptr, BLOCK: tl.constexpr):
    px = tl.program_id(0)
    py = tl.program_id(1)
    pz = tl.program_id(2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    nz = tl.num_programs(2)
    lin = (pz * ny + py) * nx + px
    offs = tl.arange(0, BLOCK)
    code = px + py * 100 + pz * 10000 + nx * 1000000 + ny * 10000000 + nz * 100000000
    tl.store(o_ptr + lin * BLOCK + offs, code + offs * 0)


def _expected_codes(grid, block):
    gx, gy, gz = tuple(grid) + (1,) * (3 - len(grid))
    codes = [x + y * 100 + z * 10000 + gx * 1000000 + gy * 10000000 + gz * 100000000
             for z in range(gz) for y in range(gy) for x in range(gx)]
    return torch.tensor(codes, dtype=torch.int32).repeat_interleave(block)


GRIDS = [(1,), (7,), (3, 2), (2, 3, 4), (1, 1, 1), (5, 1, 2), (1, 4), (2, 1, 9)]


@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: "x".join(map(str, g)))
def test_program_ids_tuple_grid(grid):
    B = 16
    total = 1
    for g in grid:
        total *= g
    o = torch.full((total * B,), -1, dtype=torch.int32)
    _grid_id_kernel[grid](o, BLOCK=B)
    assert torch.equal(o, _expected_codes(grid, B))


@pytest.mark.parametrize("grid", [(4,), (3, 2), (2, 2, 3)], ids=lambda g: "x".join(map(str, g)))
def test_program_ids_callable_grid(grid):
    B = 16
    total = 1
    for g in grid:
        total *= g
    seen = {}

    def grid_fn(meta):
        seen.update(meta)
        assert meta["BLOCK"] == B
        return grid

    o = torch.full((total * B,), -1, dtype=torch.int32)
    _grid_id_kernel[grid_fn](o, BLOCK=B)
    assert torch.equal(o, _expected_codes(grid, B))
    assert set(seen) >= {"o_ptr", "BLOCK"}  # the meta dict carries every argument


@triton.jit
def _add_kernel(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(o_ptr + offs, x + y, mask=mask)


SIZES = [0, 1, 2, 5, 63, 64, 65, 127, 128, 129, 1000, 4097]


@pytest.mark.parametrize("n", SIZES)
def test_sizes_and_masks(n):
    """BLOCK=64; the output has guard elements after n that must stay untouched."""
    B = 64
    x, y = torch.randn(n), torch.randn(n)
    buf = torch.full((n + 80,), 123.0)
    out = buf[:n]
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731  (n = 0: an empty grid)
    _add_kernel[grid](x, y, out, n, BLOCK=B)
    torch.testing.assert_close(out, x + y)
    assert torch.all(buf[n:] == 123.0)


def test_empty_grid_dimensions_run_nothing():
    o = torch.full((64,), -1, dtype=torch.int32)
    _grid_id_kernel[(0,)](o, BLOCK=16)
    _grid_id_kernel[(3, 0)](o, BLOCK=16)
    _grid_id_kernel[(2, 2, 0)](o, BLOCK=16)
    assert torch.all(o == -1)


def test_large_1d_grid():
    n = 10000 * 16 + 3
    x, y = torch.randn(n), torch.randn(n)
    out = torch.empty(n)
    _add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
    torch.testing.assert_close(out, x + y)


@triton.jit
def _add2d_kernel(x_ptr, y_ptr, o_ptr, M, N, sxm, sym, som, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :], mask=mask, other=0.0)
    y = tl.load(y_ptr + rm[:, None] * sym + rn[None, :], mask=mask, other=0.0)
    tl.store(o_ptr + rm[:, None] * som + rn[None, :], x + y, mask=mask)


@pytest.mark.parametrize("M,N", [(37, 70), (16, 32), (1, 1), (5, 100)])
def test_2d_grid_with_masks_and_strides(M, N):
    x = torch.randn(M, N)
    y = torch.randn(M, N + 13)[:, :N]  # row stride != N
    buf = torch.full((M, N + 3), 9.0)
    o = buf[:, :N]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))  # noqa: E731
    _add2d_kernel[grid](x, y, o, M, N, x.stride(0), y.stride(0), o.stride(0), BM=16, BN=32)
    torch.testing.assert_close(o, x + y)
    assert torch.all(buf[:, N:] == 9.0)  # padding columns untouched


@triton.jit
def _grid_stride_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for start in range(pid * BLOCK, n, nprog * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2 + 1, mask=m)


@pytest.mark.parametrize("programs", [1, 2, 3, 16])
def test_grid_stride_loop_with_num_programs(programs):
    n = 5000
    x = torch.randn(n)
    o = torch.zeros(n)
    _grid_stride_kernel[(programs,)](x, o, n, BLOCK=128)
    torch.testing.assert_close(o, x * 2 + 1)


@pytest.mark.parametrize("grid,threads", [((1,), 8), ((2,), 8), ((3,), 64), ((64,), 1), ((64,), 3), ((5,), 0)])
def test_num_threads_launch_option(grid, threads):
    """Grids smaller than the thread count, one thread, and 0 (= the default)."""
    n = grid[0] * 100 - 7
    x, y = torch.randn(n), torch.randn(n)
    out = torch.zeros(n)
    _add_kernel[grid](x, y, out, n, BLOCK=128, num_threads=threads)
    torch.testing.assert_close(out, x + y)


def test_upstream_launch_options_are_accepted():
    n = 300
    x, y = torch.randn(n), torch.randn(n)
    out = torch.zeros(n)
    _add_kernel[(3,)](x, y, out, n, BLOCK=128, num_warps=4, num_stages=2)
    torch.testing.assert_close(out, x + y)


@pytest.mark.parametrize("grid", [(1, 2, 3, 4), (-1,), ()])
def test_invalid_grid(grid):
    o = torch.zeros(16, dtype=torch.int32)
    with pytest.raises((ValueError, TypeError), match="grid"):
        _grid_id_kernel[grid](o, BLOCK=16)


# ---- ordinary (non-constexpr) arguments by keyword --------------------------------------------

@triton.jit
def _axpy_kernel(x_ptr, y_ptr, o_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha + tl.load(y_ptr + offs, mask=m), mask=m)


def _axpy_data(n=300):
    return torch.randn(n), torch.randn(n), torch.zeros(n)


def test_keyword_arguments_in_any_order():
    x, y, o = _axpy_data()
    _axpy_kernel[(3,)](o_ptr=o, alpha=0.5, n=300, y_ptr=y, x_ptr=x, BLOCK=128)
    torch.testing.assert_close(o, x * 0.5 + y)


@pytest.mark.parametrize("npos", [1, 2, 3, 4])
def test_positional_then_keyword_arguments(npos):
    x, y, o = _axpy_data()
    values = {"x_ptr": x, "y_ptr": y, "o_ptr": o, "n": 300, "alpha": -2.0}
    names = list(values)
    _axpy_kernel[(3,)](*[values[k] for k in names[:npos]], **{k: values[k] for k in names[npos:]}, BLOCK=128)
    torch.testing.assert_close(o, x * -2.0 + y)


def test_keyword_arguments_reach_the_grid_callable_and_share_the_binary(stats_delta):
    """The meta dict of a callable grid holds keyword-passed arguments too, and a launch by
    keyword reuses the binary of the same launch by position (same specialization)."""
    n = 1000
    x, y, o = _axpy_data(n)
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    _axpy_kernel[grid](x, y, o, n, 3.0, BLOCK=256)
    torch.testing.assert_close(o, x * 3.0 + y)
    o.zero_()
    with stats_delta() as d:
        _axpy_kernel[grid](x, y, o, alpha=3.0, n=n, BLOCK=256)
    assert d["compiles"] == 0
    torch.testing.assert_close(o, x * 3.0 + y)


def test_keyword_scalar_changes_the_result():
    """A keyword value is used, not a stale one from an earlier positional launch."""
    x, y, o = _axpy_data()
    _axpy_kernel[(3,)](x, y, o, 300, 1.0, BLOCK=128)
    _axpy_kernel[(3,)](x, y, o, 300, alpha=4.0, BLOCK=128)
    torch.testing.assert_close(o, x * 4.0 + y)
    o.zero_()
    _axpy_kernel[(3,)](x, y, o, n=100, alpha=4.0, BLOCK=128)  # only the first 100 change
    torch.testing.assert_close(o[:100], x[:100] * 4.0 + y[:100])
    assert torch.equal(o[100:], torch.zeros(200))


@pytest.mark.parametrize("name", ["x_ptr", "n", "alpha"])
def test_argument_given_by_position_and_keyword_is_an_error(name):
    x, y, o = _axpy_data()
    values = {"x_ptr": x, "n": 300, "alpha": 2.0}
    with pytest.raises(TypeError, match=f"multiple values for argument '{name}'"):
        _axpy_kernel[(3,)](x, y, o, 300, 2.0, **{name: values[name]}, BLOCK=128)
    assert torch.equal(o, torch.zeros(300))  # nothing ran


# ---- OMP_NUM_THREADS (child processes: the thread count is read once per process) -------------

_OMP_CHILD = textwrap.dedent('''
    import os, sys
    import numpy as np
    import triton
    import triton.language as tl

    @triton.jit
    def scale(x_ptr, o_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)

    def threads():
        return len(os.listdir("/proc/self/task"))

    n = 1 << 16
    x = np.arange(n, dtype=np.float32)
    o = np.zeros_like(x)
    base = threads()
    scale[(1,)](x, o, n, 2.0, BLOCK=n)                    # one program: runs inline
    d_single = threads() - base
    scale[(64,)](x, o, n, 2.0, BLOCK=1024, num_threads=1)  # per-launch override
    d_one = threads() - base
    ok_small = True
    scale[(2,)](x, o, n, 3.0, BLOCK=n // 2)               # grid smaller than the thread count
    ok_small = bool((o == 3.0 * x).all())
    scale[(64,)](x, o, n, 2.0, BLOCK=1024)                # default thread count
    d_full = threads() - base
    ok = bool((o == 2.0 * x).all())
    print("RESULT", triton._C.tritium.threads_default(), d_single, d_one, d_full, ok, ok_small)
''')


@pytest.mark.parametrize("nthreads", [1, 3])
def test_omp_num_threads_respected(nthreads, run_py, tmp_path, session_cache_dir):
    """threads_default() follows OMP_NUM_THREADS; a one-program grid and num_threads=1 run on
    the calling thread; a full launch uses exactly OMP_NUM_THREADS threads (the OpenMP pool
    adds OMP_NUM_THREADS - 1 workers to the process)."""
    script = tmp_path / "omp_child.py"
    script.write_text(_OMP_CHILD)
    proc = check_ok(run_py(script, session_cache_dir, env={"OMP_NUM_THREADS": nthreads,
                                                           "OPENBLAS_NUM_THREADS": 1}))
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")][-1].split()
    default, d_single, d_one, d_full, ok, ok_small = int(line[1]), int(line[2]), int(line[3]), int(line[4]), \
        line[5], line[6]
    assert ok == "True" and ok_small == "True"
    assert default == nthreads
    assert d_single == 0
    assert d_one == 0
    assert d_full == nthreads - 1


def test_default_thread_count_without_omp_env(run_py, tmp_path, session_cache_dir):
    script = tmp_path / "omp_default.py"
    script.write_text("import os, triton\n"
                      "print('RESULT', triton._C.tritium.threads_default(), len(os.sched_getaffinity(0)))\n")
    proc = check_ok(run_py(script, session_cache_dir, env={"OMP_NUM_THREADS": None}))
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")][-1].split()
    assert int(line[1]) == int(line[2])

