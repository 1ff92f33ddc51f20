"""triton.knobs' upstream structure (issue 10): base_knobs subclasses of env_*
descriptors, copy / reset / scope, propagate_env, `del` and triton.knobs.env going
back to the variable, and a knob set swapped for a copy (as upstream's fresh_knobs
fixture does) still driving the launcher's hooks."""
import os

import pytest
import torch

import triton
import triton.language as tl
from triton import knobs


class _demo(knobs.base_knobs):
    name: knobs.env_str = knobs.env_str("TRITIUM_TEST_KNOB_S", "dflt")
    flag: knobs.env_bool = knobs.env_bool("TRITIUM_TEST_KNOB_B", True)
    count: knobs.env_int = knobs.env_int("TRITIUM_TEST_KNOB_I", 3)
    opt: knobs.env_opt_bool = knobs.env_opt_bool("TRITIUM_TEST_KNOB_O")


@pytest.fixture
def clean_env(monkeypatch):
    for k in ("TRITIUM_TEST_KNOB_S", "TRITIUM_TEST_KNOB_B", "TRITIUM_TEST_KNOB_I", "TRITIUM_TEST_KNOB_O"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(knobs, "propagate_env", False)
    return monkeypatch


def test_defaults_env_and_code(clean_env):
    d = _demo()
    assert d.knobs == {"name": "dflt", "flag": True, "count": 3, "opt": None}
    clean_env.setenv("TRITIUM_TEST_KNOB_B", "off")
    clean_env.setenv("TRITIUM_TEST_KNOB_I", "17")
    assert d.flag is False and d.count == 17
    d.flag = True  # code wins over the variable
    assert d.flag is True
    del d.flag  # back to the variable
    assert d.flag is False
    d.count = 5
    d.count = knobs.env
    assert d.count == 17
    assert set(d.knob_descriptors) == {"name", "flag", "count", "opt"}
    assert d.knob_descriptors["count"].key == "TRITIUM_TEST_KNOB_I"


def test_copy_reset_scope(clean_env):
    a = _demo()
    a.name = "x"
    b = a.copy()
    b.name = "y"
    assert a.name == "x" and b.name == "y"
    assert b.reset() is b and b.name == "dflt" and a.name == "x"
    with a.scope():
        a.name = "inner"
        a.opt = True
        assert a.name == "inner" and a.opt is True
    assert a.name == "x" and a.opt is None


def test_propagate_env(clean_env):
    d = _demo()
    d.count = 9
    assert "TRITIUM_TEST_KNOB_I" not in os.environ  # off by default here
    clean_env.setattr(knobs, "propagate_env", True)
    d.count = 11
    d.flag = False
    assert os.environ["TRITIUM_TEST_KNOB_I"] == "11" and os.environ["TRITIUM_TEST_KNOB_B"] == "0"
    with d.scope():
        d.count = 12
        assert os.environ["TRITIUM_TEST_KNOB_I"] == "12"
    assert os.environ["TRITIUM_TEST_KNOB_I"] == "11"


def test_upstream_knob_sets_exist():
    for name in ("runtime", "compilation", "proton", "language", "cache", "amd", "nvidia", "build"):
        assert isinstance(getattr(knobs, name), knobs.base_knobs), name
    assert knobs.cache.dir.endswith(os.path.join(".triton", "cache")) or "TRITON_CACHE_DIR" in os.environ


@triton.jit
def _scale(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + o, tl.load(x + o, mask=o < n) * 2.0, mask=o < n)


def test_swapped_runtime_knobs_keep_hooks_working(monkeypatch):
    """fresh_knobs' pattern: the module's knob set replaced by a reset copy, a hook set
    on the copy, then the original put back. The hook must fire while the copy is in
    place and not after; the kernel's answer stays right throughout."""
    original = knobs.runtime
    seen = []
    x = torch.randn(100)
    y = torch.empty(100)
    try:
        knobs.runtime = original.copy().reset()
        knobs.runtime.launch_enter_hook = lambda meta: seen.append(meta["name"])
        _scale[(4,)](x, y, 100, BLOCK=32)
        assert torch.equal(y, x * 2)
        assert seen == ["_scale"]
    finally:
        knobs.runtime = original
    y.zero_()
    _scale[(4,)](x, y, 100, BLOCK=32)
    assert torch.equal(y, x * 2)
    assert seen == ["_scale"]


def test_runtime_debug_scope(monkeypatch):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    assert knobs.runtime.debug is False
    with knobs.runtime.scope():
        knobs.runtime.debug = True
        assert knobs.runtime.debug is True
    assert knobs.runtime.debug is False
