"""The kernel cache: constexpr specialisation gives distinct binaries, a second process
hits the disk cache without compiling, a corrupt entry is rebuilt with a RuntimeWarning.

In-process tests use `fresh_cache` (an empty TRITON_CACHE_DIR; the C cache reads the
variable on every lookup) and new JITFunction objects made with triton.jit(<function>)
so that the per-kernel in-memory specialisation table does not hide the disk cache."""
import json
import os
import textwrap
import warnings

import pytest
import torch

import triton
import triton.language as tl
from triton._C import tritium as _C

from conftest import CHILD_STATS_SNIPPET, cache_entries, check_ok, child_stats


def vadd(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def _launch(kernel, block=64, n=1000):
    x, y = torch.randn(n), torch.randn(n)
    o = torch.zeros(n)
    kernel[(triton.cdiv(n, block),)](x, y, o, n, BLOCK=block)
    torch.testing.assert_close(o, x + y)


def _entry_dirs_with(cache_dir, filename):
    return [e for e in cache_entries(cache_dir) if os.path.exists(os.path.join(cache_dir, e, filename))]


# ---- constexpr specialisation ------------------------------------------------------------------

def test_constexpr_values_give_distinct_binaries(fresh_cache, stats_delta):
    k = triton.jit(vadd)
    with stats_delta() as d:
        _launch(k, block=64)
        _launch(k, block=128)
    assert d["compiles"] == 2
    entries = _entry_dirs_with(fresh_cache, "vadd.so")
    assert len(entries) == 2
    blocks, sos = set(), set()
    for e in entries:
        with open(os.path.join(fresh_cache, e, "vadd.json")) as f:
            blocks.add(json.load(f)["constexprs"]["BLOCK"])
        with open(os.path.join(fresh_cache, e, "vadd.so"), "rb") as f:
            sos.add(f.read())
    assert blocks == {64, 128}
    assert len(sos) == 2  # the machine code differs, not just the metadata
    ttirs = [open(os.path.join(fresh_cache, e, "vadd.ttir")).read() for e in entries]
    assert any("end = 64" in t for t in ttirs) and any("end = 128" in t for t in ttirs)
    # launching again with either value compiles nothing
    with stats_delta() as d:
        _launch(k, block=64)
        _launch(k, block=128)
    assert d["compiles"] == 0 and d["disk_hits"] == 0


def test_argument_specialisation_keys(fresh_cache, stats_delta):
    """Upstream's specialisation: dtype of pointers, n == 1, n % 16 == 0 give separate binaries;
    other values of n reuse one."""
    k = triton.jit(vadd)
    with stats_delta() as d:
        for n in (100, 200, 300):       # same key: not 1, not a multiple of 16
            _launch(k, n=n)
    assert d["compiles"] == 1
    with stats_delta() as d:
        _launch(k, n=1)                 # n == 1 is specialised
        _launch(k, n=160)               # divisible by 16
    assert d["compiles"] == 2
    with stats_delta() as d:
        x = torch.randn(50, dtype=torch.float64)
        o = torch.zeros(50, dtype=torch.float64)
        k[(1,)](x, x, o, 50, BLOCK=64)  # another pointer dtype
        torch.testing.assert_close(o, 2 * x)
    assert d["compiles"] == 1


def test_same_source_second_jit_object_hits_disk(fresh_cache, stats_delta):
    with stats_delta() as d:
        _launch(triton.jit(vadd))
    assert d["compiles"] == 1 and d["disk_hits"] == 0
    with stats_delta() as d:
        _launch(triton.jit(vadd))
    assert d["compiles"] == 0 and d["disk_hits"] == 1


# ---- a second process ---------------------------------------------------------------------------

_CHILD = textwrap.dedent('''
    import torch, triton, triton.language as tl

    @triton.jit
    def child_add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    n = 1000
    x, y = torch.randn(n), torch.randn(n)
    o = torch.zeros(n)
    child_add[(triton.cdiv(n, 128),)](x, y, o, n, BLOCK=128)
    torch.testing.assert_close(o, x + y)
    print("RESULT-OK")
''') + CHILD_STATS_SNIPPET + "\n"


@pytest.fixture
def child_script(tmp_path):
    p = tmp_path / "child.py"
    p.write_text(_CHILD)
    return p


def test_second_process_hits_disk_cache(child_script, run_py, tmp_path):
    cache = tmp_path / "cache"
    first = check_ok(run_py(child_script, cache))
    assert "RESULT-OK" in first.stdout
    s1 = child_stats(first)
    assert s1["compiles"] == 1 and s1["disk_hits"] == 0

    second = check_ok(run_py(child_script, cache, env={"TRITIUM_DEBUG": "1"}))
    assert "RESULT-OK" in second.stdout
    s2 = child_stats(second)
    assert s2["compiles"] == 0
    assert s2["disk_hits"] >= 1
    assert "[tritium] disk cache hit" in second.stderr
    assert "[tritium] compiled" not in second.stderr


def test_always_compile_in_second_process(child_script, run_py, tmp_path):
    cache = tmp_path / "cache"
    check_ok(run_py(child_script, cache))
    proc = check_ok(run_py(child_script, cache, env={"TRITON_ALWAYS_COMPILE": "1", "TRITIUM_DEBUG": "1"}))
    s = child_stats(proc)
    assert s["compiles"] == 1 and s["disk_hits"] == 0
    assert "[tritium] compiled child_add" in proc.stderr
    # the replaced entry is still valid for the next process
    s3 = child_stats(check_ok(run_py(child_script, cache)))
    assert s3["compiles"] == 0 and s3["disk_hits"] == 1


# ---- corrupt entries ----------------------------------------------------------------------------

def _truncate(path):
    with open(path, "r+b") as f:
        f.truncate(max(1, os.path.getsize(path) // 3))


def _flip_byte(path):
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        data[len(data) // 2] ^= 0xFF
        f.seek(0)
        f.write(data)


def _garbage(path):
    with open(path, "w") as f:
        f.write("{ this is not json")


CORRUPTIONS = [
    ("so-truncated", "vadd.so", _truncate),
    ("so-byte-flipped", "vadd.so", _flip_byte),
    ("so-deleted", "vadd.so", os.remove),
    ("manifest-garbage", "manifest.json", _garbage),
    ("manifest-deleted", "manifest.json", os.remove),
    ("metadata-byte-flipped", "vadd.json", _flip_byte),
]


@pytest.mark.parametrize("what,filename,corrupt", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corrupt_entry_is_rebuilt(what, filename, corrupt, fresh_cache, stats_delta):
    _launch(triton.jit(vadd))
    [entry] = _entry_dirs_with(fresh_cache, "vadd.so")
    edir = os.path.join(fresh_cache, entry)
    corrupt(os.path.join(edir, filename))

    with stats_delta() as d, pytest.warns(RuntimeWarning, match="corrupt") as rec:
        _launch(triton.jit(vadd))          # correct results despite the corrupt entry
    assert d["corrupt_rebuilds"] == 1 and d["compiles"] == 1
    assert any("vadd" in str(w.message) for w in rec)

    # the entry is valid again: a new JIT object loads it from disk, silently
    with stats_delta() as d, warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _launch(triton.jit(vadd))
    assert d["disk_hits"] == 1 and d["compiles"] == 0 and d["corrupt_rebuilds"] == 0
    with open(os.path.join(edir, "manifest.json")) as f:
        manifest = json.load(f)
    names = {e["name"] for e in manifest["files"]}
    assert {"vadd.so", "vadd.json"} <= names
    for e in manifest["files"]:
        assert os.path.getsize(os.path.join(edir, e["name"])) == e["size"]


def test_corrupt_so_in_second_process(child_script, run_py, tmp_path):
    """The same through a fresh process: warning on stderr, right answer, entry repaired."""
    cache = tmp_path / "cache"
    check_ok(run_py(child_script, cache))
    [entry] = _entry_dirs_with(cache, "child_add.so")
    _truncate(os.path.join(cache, entry, "child_add.so"))
    proc = check_ok(run_py(child_script, cache, env={"PYTHONWARNINGS": "always"}))
    assert "RESULT-OK" in proc.stdout
    assert "RuntimeWarning" in proc.stderr and "corrupt" in proc.stderr
    s = child_stats(proc)
    assert s["corrupt_rebuilds"] == 1 and s["compiles"] == 1
    again = check_ok(run_py(child_script, cache, env={"PYTHONWARNINGS": "always"}))
    assert "corrupt" not in again.stderr
    s = child_stats(again)
    assert s["compiles"] == 0 and s["disk_hits"] == 1


def test_no_temporary_files_left_behind(fresh_cache):
    _launch(triton.jit(vadd))
    _launch(triton.jit(vadd), block=32)
    leftovers = [p for p in os.listdir(fresh_cache) if p.startswith(".")]
    assert leftovers == []


def test_memory_hits_counter(stats_delta):
    k = triton.jit(vadd)
    _launch(k)
    with stats_delta() as d:
        _launch(k)
        _launch(k)
    assert d["compiles"] == 0 and d["disk_hits"] == 0
    assert d["memory_hits"] == 2


def test_stats_counters_exist():
    s = _C.stats()
    for k in ("compiles", "disk_hits", "corrupt_rebuilds"):
        assert isinstance(s[k], int) and s[k] >= 0


def test_front_end_change_changes_the_cache_key(tmp_path):
    """An upgraded Python front end (its files' size or mtime) is a new compiler: kernels
    cached before it are not served (a warm cache once hid a new compile-time check)."""
    import subprocess
    import sys
    probe = "from triton.compiler.compiler import _compiler_fingerprint as f; print(f())"
    src = os.path.join(os.path.dirname(tl.__file__), "semantic.py")
    if not os.path.exists(src):
        src = tl.__file__
    st = os.stat(src)
    before = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    try:
        os.utime(src, (st.st_atime, st.st_mtime + 7))
        after = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    finally:
        os.utime(src, (st.st_atime, st.st_mtime))
    again = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert before.strip() and before != after and again == before
