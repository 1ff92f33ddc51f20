"""Upstream semantics of reference/proton.md §1 and §7 that the issue-3 audit found
missing: knobs (§1.1, §5), states (§1.5), a new thread's scope stack (§1.4), the data
API's phases and msgpack (§1.6, §3.1), hooks and launch metadata (§1.7), the `proton`
command (§5, §7 test_cmd.py).

In-process like test_proton_api.py: every test runs in its own temporary cwd and the
fixture finalizes whatever is left and puts the knobs back.
"""
import importlib
import os
import struct
import subprocess
import sys
import threading

import pytest

import proton_util as pu
import triton
import triton.knobs as knobs
import triton.language as tl
import triton.profiler as proton
from triton._C import tritium as _C
from triton.profiler.flags import flags
from triton.profiler.hooks import HookManager, InstrumentationHook, LaunchHook

_scope_mod = importlib.import_module("triton.profiler.scope")
_state_mod = importlib.import_module("triton.profiler.state")


@pytest.fixture(scope="module", autouse=True)
def _warm():
    pu.warm_up()


@pytest.fixture(autouse=True)
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # upstream keeps profiling_on set after finalize(session) of a single session
    # (other test modules leave it so): start every test from "no session"
    proton.finalize()
    saved = (knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook)
    yield tmp_path
    proton.finalize()
    st = _scope_mod._stack()
    while st:
        _, sid = st.pop()
        _C.pn_scope_exit(sid)
    _C.pn_state_exit()
    _state_mod._tls.state = None
    flags.profiling_on = False
    flags.instrumentation_on = False
    knobs.proton.reset()
    knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook = saved


@pytest.fixture
def bufs():
    return pu.Bufs()


def _paths(tree):
    return pu.tree_paths(tree)


# ---- 1. knobs (§1.1, §5) ---------------------------------------------------------------------

def test_knob_disable_makes_start_return_none(cwd, bufs):
    knobs.proton.disable = True
    assert proton.start("off") is None
    assert flags.profiling_on is False
    with proton.scope("s"):
        pu.launch_add(bufs)
    proton.finalize()
    assert not os.listdir(cwd)
    knobs.proton.disable = False
    s = proton.start("on")
    assert s is not None
    proton.finalize(s)
    assert os.listdir(cwd) == ["on.hatchet"]


def test_knob_disable_reads_the_environment_until_set(cwd, monkeypatch):
    monkeypatch.setenv("TRITON_PROTON_DISABLE", "1")
    assert knobs.proton.disable is True
    assert proton.start("env") is None
    monkeypatch.delenv("TRITON_PROTON_DISABLE")
    assert knobs.proton.disable is False
    knobs.proton.disable = True  # set in code: wins over the (unset) variable
    assert proton.start("code") is None
    knobs.proton.disable = None  # back to the variable
    assert knobs.proton.disable is False
    assert not os.listdir(cwd)


def test_other_proton_knobs_exist_with_upstream_defaults(monkeypatch):
    for var in ("TRITON_ENABLE_NVTX", "TRITON_PROFILE_BUFFER_SIZE", "TRITON_PROFILE_METRIC_BUFFER_SIZE",
                "TRITON_ENABLE_HW_TRACE"):
        monkeypatch.delenv(var, raising=False)
    assert knobs.proton.enable_nvtx is True
    assert knobs.proton.profile_buffer_size == 64 * 1024 * 1024
    assert knobs.proton.profile_metric_buffer_size == 64 * 1024 * 1024
    assert knobs.proton.enable_hw_trace is False
    monkeypatch.setenv("TRITON_PROFILE_BUFFER_SIZE", "4096")
    assert knobs.proton.profile_buffer_size == 4096
    knobs.proton.enable_nvtx = False
    assert knobs.proton.enable_nvtx is False
    with pytest.raises(AttributeError):
        knobs.proton.no_such_knob = 1


def test_instrumentation_hook_sets_the_compilation_knob(cwd):
    assert knobs.compilation.instrumentation_mode == ""
    s = proton.start("instr", backend="instrumentation")
    assert knobs.compilation.instrumentation_mode.startswith("default:metric_type=cycle")
    proton.finalize(s)
    assert knobs.compilation.instrumentation_mode == ""


# ---- 2. states (§1.5, §7 "state path test0/test1/state") ------------------------------------------

def test_state_path_as_upstream(cwd):
    s = proton.start("state")
    proton.enter_scope("test0")
    proton.enter_state("state")
    proton.enter_scope("test1", metrics={"a": 1.0})
    proton.exit_scope()
    proton.exit_state()
    proton.exit_scope()
    proton.finalize(s)
    paths = _paths(pu.load_json(cwd / "state.hatchet"))
    assert set(paths) == {("ROOT",), ("ROOT", "test0"), ("ROOT", "test0", "test1"),
                          ("ROOT", "test0", "test1", "state")}
    assert paths[("ROOT", "test0", "test1", "state")] == {"a": 1.0}
    assert paths[("ROOT", "test0", "test1")] == {}


def test_state_is_the_last_path_element_of_kernels(cwd, bufs):
    s = proton.start("kstate")
    with proton.scope("outer"):
        with proton.state("fwd"):
            pu.launch_add(bufs, 2)
            with proton.scope("inner"):
                pu.launch_scale(bufs)
        pu.launch_add(bufs)  # the state is gone again
    proton.finalize(s)
    assert pu.kernel_counts(pu.load_json(cwd / "kstate.hatchet")) == {
        ("ROOT", "outer", "fwd", "add_kernel"): 2,
        ("ROOT", "outer", "inner", "fwd", "scale_kernel"): 1,
        ("ROOT", "outer", "add_kernel"): 1}


def test_state_decorator_restores_and_off_is_a_noop(cwd, bufs):
    @proton.state("deco")
    def f():
        pu.launch_add(bufs)

    f()  # profiling off: nothing, no error
    s = proton.start("deco")
    proton.enter_state("a")
    f()  # inside: "deco"; afterwards "a" again
    pu.launch_scale(bufs)
    proton.exit_state()
    pu.launch_scale(bufs)
    proton.finalize(s)
    assert pu.kernel_counts(pu.load_json(cwd / "deco.hatchet")) == {
        ("ROOT", "deco", "add_kernel"): 1, ("ROOT", "a", "scale_kernel"): 1, ("ROOT", "scale_kernel"): 1}


def test_metadata_state_is_two_path_elements(cwd, bufs):
    from triton.profiler.state import COMPUTE_METADATA_SCOPE_NAME, metadata_state
    assert COMPUTE_METADATA_SCOPE_NAME == "__proton_launch_metadata"
    s = proton.start("md")
    with metadata_state("k"):
        pu.launch_add(bufs)
    proton.finalize(s)
    assert pu.kernel_counts(pu.load_json(cwd / "md.hatchet")) == {
        ("ROOT", "__proton_launch_metadata", "k", "add_kernel"): 1}


# ---- 3. a new thread starts from the main thread's stack (§1.4) -----------------------------------------

def test_new_thread_starts_from_main_thread_stack(cwd, bufs):
    s = proton.start("thr")
    errors, depths = [], []

    def work():
        try:
            b = pu.Bufs()
            depths.append(proton.context.depth(s))
            with proton.scope("in_thread"):
                pu.launch_add(b)
            pu.launch_scale(b)
        except BaseException as e:  # noqa: B902
            errors.append(repr(e))

    with proton.scope("main_outer"):
        t = threading.Thread(target=work)
        t.start()
        t.join()
        pu.launch_add(bufs)
    # a thread started after main_outer closed starts from an empty stack
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors
    assert depths == [1, 0]
    proton.finalize(s)
    assert pu.kernel_counts(pu.load_json(cwd / "thr.hatchet")) == {
        ("ROOT", "main_outer", "in_thread", "add_kernel"): 1,
        ("ROOT", "main_outer", "scale_kernel"): 1,
        ("ROOT", "main_outer", "add_kernel"): 1,
        ("ROOT", "in_thread", "add_kernel"): 1,
        ("ROOT", "scale_kernel"): 1}


def test_inherited_stack_is_the_main_threads_at_first_touch(cwd):
    """The copy is taken when the thread first records into the session, from the
    thread that started it (upstream: the session's main context stack)."""
    s = proton.start("touch")
    go, entered = threading.Event(), threading.Event()
    names = []

    def work():
        go.wait(10)
        with proton.scope("t"):
            names.append(proton.context.depth(s))
        entered.set()

    t = threading.Thread(target=work)
    t.start()
    with proton.scope("a"):
        with proton.scope("b"):
            go.set()
            entered.wait(10)
    t.join()
    proton.finalize(s)
    assert names == [3]
    assert ("ROOT", "a", "b", "t") in _paths(pu.load_json(cwd / "touch.hatchet"))


# ---- 4. data API: phases, clear, msgpack (§1.6, §7 "data API phase semantics") --------------------------

def _unpack(b):
    """A minimal MessagePack decoder (the formats the .hatchet structure needs)."""
    pos = [0]

    def take(n):
        v = b[pos[0]:pos[0] + n]
        assert len(v) == n, "truncated msgpack"
        pos[0] += n
        return v

    def uint(n):
        return int.from_bytes(take(n), "big")

    def sint(n):
        return int.from_bytes(take(n), "big", signed=True)

    def val():
        t = take(1)[0]
        if t <= 0x7f:
            return t
        if t >= 0xe0:
            return t - 0x100
        if 0x80 <= t <= 0x8f:
            return {val(): val() for _ in range(t & 0x0f)}
        if 0x90 <= t <= 0x9f:
            return [val() for _ in range(t & 0x0f)]
        if 0xa0 <= t <= 0xbf:
            return take(t & 0x1f).decode()
        simple = {0xc0: None, 0xc2: False, 0xc3: True}
        if t in simple:
            return simple[t]
        if t == 0xca:
            return struct.unpack(">f", take(4))[0]
        if t == 0xcb:
            return struct.unpack(">d", take(8))[0]
        if t in (0xcc, 0xcd, 0xce, 0xcf):
            return uint(1 << (t - 0xcc))
        if t in (0xd0, 0xd1, 0xd2, 0xd3):
            return sint(1 << (t - 0xd0))
        if t in (0xd9, 0xda, 0xdb):
            return take(uint(1 << (t - 0xd9))).decode()
        if t in (0xdc, 0xdd):
            return [val() for _ in range(uint(2 if t == 0xdc else 4))]
        if t in (0xde, 0xdf):
            return {val(): val() for _ in range(uint(2 if t == 0xde else 4))}
        raise AssertionError(f"unexpected msgpack tag {t:#x}")

    out = val()
    assert pos[0] == len(b), "trailing bytes after the msgpack value"
    return out


def test_unpack_helper_round_trips():
    assert _unpack(bytes([0x93, 0x01, 0xff, 0xcd, 0x01, 0x00])) == [1, -1, 256]


def test_phase_sequence_as_upstream(cwd, bufs):
    s = proton.start("ph")
    with proton.scope("phase0"):
        pu.launch_add(bufs)
    proton.deactivate(s)
    assert proton.data.is_phase_complete(s, 0) is False  # a plain deactivate does not flush
    assert proton.data.advance_phase(s) == 1
    proton.activate(s)
    with proton.scope("phase1"):
        pu.launch_add(bufs, 2)
    assert proton.data.advance_phase(s) == 2
    assert proton.data.is_phase_complete(s, 1) is False  # advancing is not flushing
    with proton.scope("phase2"):
        pu.launch_scale(bufs)
    proton.deactivate(s, flushing=True)
    assert proton.data.is_phase_complete(s, 0) is True
    assert proton.data.is_phase_complete(s, 1) is True
    assert proton.data.is_phase_complete(s, 2) is False  # the current phase
    assert pu.kernel_counts(proton.data.get(s, phase=0)) == {("ROOT", "phase0", "add_kernel"): 1}
    assert pu.kernel_counts(proton.data.get(s, phase=1)) == {("ROOT", "phase1", "add_kernel"): 2}
    assert pu.kernel_counts(proton.data.get(s, phase=2)) == {("ROOT", "phase2", "scale_kernel"): 1}
    for p in range(3):
        assert _unpack(proton.data.get_msgpack(s, p)) == proton.data.get(s, p)
    assert proton.data.get(None) is None and proton.data.get_msgpack(None) is None
    assert proton.data.advance_phase(None) is None and proton.data.is_phase_complete(None) is False
    proton.finalize(s)
    # every phase becomes a .part_<phase> file
    assert sorted(os.listdir(cwd)) == ["ph.part_0.hatchet", "ph.part_1.hatchet", "ph.part_2.hatchet"]
    assert pu.kernel_counts(pu.load_json(cwd / "ph.part_1.hatchet")) == {("ROOT", "phase1", "add_kernel"): 2}


def test_open_scopes_carry_into_the_next_phase(cwd, bufs):
    s = proton.start("carry")
    with proton.scope("step"):
        pu.launch_add(bufs)
        proton.data.advance_phase(s)
        pu.launch_scale(bufs)
        assert proton.context.depth(s) == 1
    assert proton.context.depth(s) == 0
    pu.launch_add(bufs)
    assert pu.kernel_counts(proton.data.get(s, 0)) == {("ROOT", "step", "add_kernel"): 1}
    assert pu.kernel_counts(proton.data.get(s, 1)) == {("ROOT", "step", "scale_kernel"): 1,
                                                       ("ROOT", "add_kernel"): 1}
    proton.finalize(s)


def test_clear(cwd, bufs):
    s = proton.start("clr")
    with proton.scope("a"):
        pu.launch_add(bufs)
        proton.data.clear(s)  # the current phase starts over; the open scope carries on
        pu.launch_scale(bufs)
    assert pu.kernel_counts(proton.data.get(s)) == {("ROOT", "a", "scale_kernel"): 1}
    proton.data.advance_phase(s)
    pu.launch_add(bufs)
    proton.data.advance_phase(s)
    pu.launch_add(bufs, 3)
    proton.data.clear(s, phase=1, clear_up_to_phase=True)  # phases 0 and 1
    assert pu.kernel_counts(proton.data.get(s, 0)) == {}
    assert pu.kernel_counts(proton.data.get(s, 1)) == {}
    assert pu.kernel_counts(proton.data.get(s, 2)) == {("ROOT", "add_kernel"): 3}
    proton.finalize(s)
    assert sorted(os.listdir(cwd)) == ["clr.part_2.hatchet"]  # cleared phases are not written


def test_finalize_hatchet_msgpack(cwd, bufs):
    s = proton.start("mp")
    with proton.scope("s", metrics={"bytes": 5, "v": [1.5, 2.0], "neg": -300}):
        pu.launch_add(bufs, 2)
    want = proton.data.get(s)
    proton.finalize(s, "hatchet_msgpack")
    assert os.listdir(cwd) == ["mp.hatchet_msgpack"]
    got = _unpack((cwd / "mp.hatchet_msgpack").read_bytes())
    assert got == want
    assert pu.tree_paths(got)[("ROOT", "s")] == {"bytes": 5, "neg": -300, "v": [1.5, 2.0]}


def test_output_format_errors_for_trace_sessions(cwd):
    t = proton.start("tr", data="trace")
    with pytest.raises(ValueError, match="^Output format not supported$"):
        proton.finalize(t, "hatchet_msgpack")
    with pytest.raises(RuntimeError, match="Only TreeData"):
        proton.data.get_msgpack(t)
    proton.finalize(t)
    assert os.listdir(cwd) == ["tr.chrome_trace"]


def test_trace_session_phases_write_part_files(cwd, bufs):
    t = proton.start("trp", data="trace")
    pu.launch_add(bufs)
    proton.data.advance_phase(t)
    pu.launch_scale(bufs, 2)
    proton.finalize(t)
    assert sorted(os.listdir(cwd)) == ["trp.part_0.chrome_trace", "trp.part_1.chrome_trace"]
    p0, p1 = (pu.load_json(cwd / f"trp.part_{i}.chrome_trace") for i in range(2))
    assert [e["name"] for e in pu.kernel_events(p0)] == ["add_kernel"]
    assert [e["name"] for e in pu.kernel_events(p1)] == ["scale_kernel"] * 2
    assert pu.validate_trace(p0) == [] and pu.validate_trace(p1) == []


def test_unknown_session_in_data_api(cwd):
    with pytest.raises(ValueError, match="Session has not been initialized: 77"):
        proton.data.advance_phase(77)
    with pytest.raises(ValueError, match="Session has not been initialized: 77"):
        proton.data.is_phase_complete(77, 0)


# ---- 5. hooks (§1.7, §7) -------------------------------------------------------------------------------

SEEN_METADATA = []


def _meta_that_launches(grid, metadata, args):
    SEEN_METADATA.append((grid, metadata))
    b = pu.Bufs()
    pu.add_kernel[pu.GRID_ADD](b.x, b.y, b.o, b.n, BLOCK=pu.BLOCK_ADD)  # device work in the metadata function
    return {"name": "outer_named", "flops32": 2.0 * args["n"]}


@triton.jit(launch_metadata=_meta_that_launches)
def outer_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


def test_kernels_launched_in_launch_metadata(cwd, bufs):
    SEEN_METADATA.clear()
    s = proton.start("meta", hook="triton")
    with proton.scope("s"):
        outer_kernel[pu.GRID_ADD](bufs.x, bufs.o, bufs.n, BLOCK=pu.BLOCK_ADD)
    proton.finalize(s)
    paths = _paths(pu.load_json(cwd / "meta.hatchet"))
    kernels = {p: m["count"] for p, m in paths.items() if m.get("device_type") == "CPU"}
    assert kernels == {("ROOT", "s", "__proton_launch_metadata", "outer_kernel", "add_kernel"): 1,
                       ("ROOT", "s", "outer_named"): 1}
    assert paths[("ROOT", "s", "outer_named")]["flops32"] == 2.0 * pu.N
    # the metadata function gets the grid and the compiled kernel's metadata, not None
    (grid, md), = SEEN_METADATA
    assert grid == (4, 1, 1)
    assert md is not None and md.num_warps >= 1 and md.num_ctas == 1 and md["name"] == "outer_kernel"


def test_third_party_launch_hook_coexists(cwd, bufs):
    calls = []

    def mine(metadata):
        calls.append(dict.get(metadata, "name"))

    knobs.runtime.launch_enter_hook = mine
    s = proton.start("tp", hook="triton")
    assert knobs.runtime.launch_enter_hook is not None
    pu.launch_meta(bufs)
    proton.deactivate(s)
    assert knobs.runtime.launch_enter_hook is mine  # no active hook: the user's alone again
    proton.activate(s)
    pu.launch_meta(bufs)
    proton.finalize(s)
    assert knobs.runtime.launch_enter_hook is mine  # restored, not reset to None
    pu.launch_add(bufs)
    assert calls == ["meta_kernel", "meta_kernel", "add_kernel"]
    assert pu.kernel_counts(pu.load_json(cwd / "tp.hatchet")) == {("ROOT", f"meta_add_{pu.BLOCK_ADD}"): 2}


def test_user_hook_chain_is_joined_not_replaced(cwd, bufs):
    calls = []
    chain = knobs.HookChain()
    chain.add(lambda md: calls.append("user"))
    knobs.runtime.launch_enter_hook = chain
    s = proton.start("chain", hook="triton")
    assert knobs.runtime.launch_enter_hook is chain and len(chain) == 2
    pu.launch_meta(bufs)
    proton.finalize(s)
    assert knobs.runtime.launch_enter_hook is chain and len(chain) == 1
    pu.launch_add(bufs)
    assert calls == ["user", "user"]
    assert pu.kernel_counts(pu.load_json(cwd / "chain.hatchet")) == {("ROOT", f"meta_add_{pu.BLOCK_ADD}"): 1}


def test_hook_manager_rules(cwd):
    assert LaunchHook() is LaunchHook()
    s = proton.start("hm", hook="triton")
    proton.activate(s)
    proton.activate(s)
    assert HookManager.active_hooks == [LaunchHook()]  # activating twice: one active hook
    proton.deactivate(s)
    assert HookManager.active_hooks == []  # deactivating empties it
    proton.activate(s)
    s2 = proton.start("hm2", hook="triton")  # two sessions, one LaunchHook
    assert HookManager.active_hooks == [LaunchHook()]
    proton.deactivate(s)
    assert HookManager.active_hooks == [LaunchHook()]  # still wanted by s2
    proton.deactivate(s2)
    assert HookManager.active_hooks == []
    proton.finalize()
    assert HookManager.active_hooks == [] and HookManager.session_hooks == {}
    # priority: LaunchHook (100) before InstrumentationHook (0), whatever the order of registration
    s3 = proton.start("hm3", backend="instrumentation", hook="triton")
    assert [type(h) for h in HookManager.active_hooks] == [LaunchHook, InstrumentationHook]
    assert [h.priority for h in HookManager.active_hooks] == [100, 0]
    proton.finalize(s3)
    assert HookManager.active_hooks == []


def test_hook_enter_order_and_exit_reversed(cwd, bufs):
    from triton.profiler.hooks import Hook
    order = []

    class H(Hook):
        def __init__(self, tag, priority):
            self.tag, self.priority = tag, priority

        def enter(self, metadata):
            order.append(("enter", self.tag))

        def exit(self, metadata):
            order.append(("exit", self.tag))

    lo, hi = H("lo", 1), H("hi", 50)
    s = proton.start("ord", hook=lo)
    s2 = proton.start("ord2", hook=hi)
    pu.launch_add(bufs)
    proton.finalize()
    assert order == [("enter", "hi"), ("enter", "lo"), ("exit", "lo"), ("exit", "hi")]
    assert {s, s2} and HookManager.active_hooks == []


# ---- 8. the `proton` command (§7 test_cmd.py) -------------------------------------------------------------

PROTON_BIN = os.path.join(os.path.dirname(sys.executable), "proton")

CMD_TARGET = """\
import sys
sys.path.insert(0, {here!r})
from proton_util import *  # noqa
import triton.profiler as proton

def test_main():
    b = Bufs()
    with proton.scope("test"):
        launch_add(b, 2)
    launch_scale(b)

if __name__ == "__main__":
    test_main()
"""


def _proton_cmd(tmp_path, *args):
    assert os.access(PROTON_BIN, os.X_OK), f"{PROTON_BIN} is missing: scripts/setup.sh links it into the venv"
    (tmp_path / "helper.py").write_text(CMD_TARGET.format(here=pu.HERE))
    return subprocess.run([PROTON_BIN, *args], cwd=str(tmp_path), env=pu.child_env(), capture_output=True,
                          text=True, timeout=300)


def test_proton_command_help(tmp_path):
    p = _proton_cmd(tmp_path, "-h")
    assert p.returncode == 0, pu.describe(p)
    assert p.stdout.startswith("usage: proton")


@pytest.mark.parametrize("how", ["script", "pytest", "-m pytest"])
def test_proton_command_profiles(tmp_path, how):
    args = {"script": ["-n", "cmd", "helper.py"],
            "pytest": ["-n", "cmd", "pytest", "-q", "-p", "no:cacheprovider", "-k", "test_main", "helper.py"],
            "-m pytest": ["-n", "cmd", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "test_main",
                          "helper.py"]}[how]
    p = _proton_cmd(tmp_path, *args)
    assert p.returncode == 0, pu.describe(p)
    db = pu.load_json(tmp_path / "cmd.hatchet")
    assert sorted(c["frame"]["name"] for c in db[0]["children"]) == ["scale_kernel", "test"]
    assert pu.kernel_counts(db) == {("ROOT", "test", "add_kernel"): 2, ("ROOT", "scale_kernel"): 1}


def test_pyproject_declares_the_proton_entry_point():
    text = open(os.path.join(pu.REPO, "pyproject.toml")).read()
    assert 'proton = "triton.profiler.proton:main"' in text
