"""The driver surface scripts touch (spine-triton's CPUDriver, also importable from
triton-shared's path), triton.runtime.driver.set_active / .active, kernels launched
before set_active, and triton.testing.do_bench."""
import textwrap
import time

import pytest
import torch

import triton
import triton.language as tl
import triton.runtime.driver
import triton.testing
from triton.backends.spine_triton.driver import CPUDriver
from triton.backends.triton_shared.driver import CPUDriver as SharedCPUDriver

from conftest import check_ok

@pytest.fixture
def restore_driver():
    yield
    triton.runtime.driver.reset_active()


def test_triton_shared_path_is_the_same_driver():
    assert SharedCPUDriver is CPUDriver


def _check_device_interface(iface):
    """The torch.cuda-like interface scripts use: device queries and timing events, whose
    elapsed_time is in milliseconds (upstream's Event.elapsed_time)."""
    assert iface.current_device() == "cpu"
    assert iface.device_count() == 1
    assert iface.current_stream() == 0
    iface.set_device("cpu")
    iface.synchronize()
    ev0, ev1 = iface.Event(enable_timing=True), iface.Event(enable_timing=True)
    ev0.record()
    time.sleep(0.05)
    ev1.record()
    ev1.synchronize()
    ms = ev0.elapsed_time(ev1)
    assert isinstance(ms, float)
    assert 45.0 <= ms < 5000.0, f"a 50 ms sleep measured as {ms} ms"


@pytest.mark.parametrize("cls", [CPUDriver, SharedCPUDriver], ids=["spine_triton", "triton_shared"])
def test_driver_surface(cls):
    d = cls()
    assert d.get_current_device() == "cpu"
    assert d.get_active_torch_device() == torch.device("cpu")
    t = d.get_current_target()
    assert t.backend == "cpu"
    _check_device_interface(d.get_device_interface())
    bench = d.get_benchmarker()
    assert callable(bench)
    assert isinstance(d.current_arch_id, str) and d.current_arch_id.startswith("0x")
    assert d.get_current_stream() == 0


@pytest.mark.parametrize("cls", [CPUDriver, SharedCPUDriver], ids=["spine_triton", "triton_shared"])
def test_set_active_then_active(cls, restore_driver):
    drv = cls()
    triton.runtime.driver.set_active(drv)
    assert triton.runtime.driver.active is drv


def test_active_surface_through_runtime_driver(restore_driver):
    triton.runtime.driver.set_active(CPUDriver())
    active = triton.runtime.driver.active
    assert active.get_current_device() == "cpu"
    assert active.get_active_torch_device() == torch.device("cpu")
    assert active.get_current_target().backend == "cpu"
    iface = active.get_device_interface()
    assert iface is active.get_device_interface()  # one interface object per driver
    _check_device_interface(iface)
    assert callable(active.get_benchmarker())
    assert isinstance(active.current_arch_id, str)


def test_default_active_driver_before_set_active(restore_driver):
    triton.runtime.driver.reset_active()
    assert isinstance(triton.runtime.driver.active, CPUDriver)


@triton.jit
def _inc_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


def test_kernel_after_set_active(restore_driver):
    triton.runtime.driver.set_active(CPUDriver())
    x = torch.randn(300)
    o = torch.zeros(300)
    _inc_kernel[(3,)](x, o, 300, BLOCK=128)
    torch.testing.assert_close(o, x + 1)


def test_kernel_before_set_active_in_fresh_process(run_py, tmp_path, session_cache_dir):
    """A script that never mentions the driver still runs kernels."""
    script = tmp_path / "no_driver.py"
    script.write_text(textwrap.dedent('''
        import sys, torch, triton, triton.language as tl

        @triton.jit
        def inc(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)

        x = torch.randn(1000); o = torch.zeros(1000)
        inc[(8,)](x, o, 1000, BLOCK=128)
        torch.testing.assert_close(o, x + 1)
        # then the spine-triton prologue, after the first launch
        from triton.backends.spine_triton.driver import CPUDriver
        triton.runtime.driver.set_active(CPUDriver())
        inc[(8,)](x, o, 1000, BLOCK=128)
        torch.testing.assert_close(o, x + 1)
        print("RESULT-OK")
    '''))
    proc = check_ok(run_py(script, session_cache_dir))
    assert "RESULT-OK" in proc.stdout


def test_do_bench_returns_positive_float():
    x = torch.randn(4096)
    o = torch.zeros(4096)
    ms = triton.testing.do_bench(lambda: _inc_kernel[(4,)](x, o, 4096, BLOCK=1024), warmup=5, rep=20)
    assert isinstance(ms, float) and ms > 0.0
    q = triton.testing.do_bench(lambda: _inc_kernel[(4,)](x, o, 4096, BLOCK=1024), warmup=1, rep=5,
                                quantiles=[0.5, 0.2, 0.8])
    assert len(q) == 3 and all(v > 0 for v in q) and q[1] <= q[0] <= q[2]


def test_benchmarker_from_driver_times_a_kernel():
    bench = CPUDriver().get_benchmarker()
    x = torch.randn(1024)
    o = torch.zeros(1024)
    ms = bench(lambda: _inc_kernel[(1,)](x, o, 1024, BLOCK=1024), warmup=2, rep=10)
    assert isinstance(ms, float) and ms > 0.0
