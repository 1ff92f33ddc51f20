"""Helpers for the Proton tests (tests/python/test_proton_*.py, issue 3).

* A small fixed set of kernels (element-wise add / scale, a kernel with in-kernel
  scopes, a kernel with a launch_metadata function, eight tiny per-thread kernels).
  They live in this file so that the pytest process and every child process compile
  them from the same source: the first compile lands in the session-wide
  TRITON_CACHE_DIR (set by conftest.py) and every later process hits the disk cache.
* `run_child` / `start_child`: run a Python snippet in a subprocess (same
  interpreter, same TRITON_CACHE_DIR, every Proton variable cleared unless given),
  for everything that depends on variables read at import time.
* Readers for the outputs: hatchet trees (`tree_paths`, `find_nodes`), Chrome traces
  (`validate_trace` = tests/proton/validate_trace.py, `kernel_events`), the console
  table (`parse_console`).
* The reference venv (upstream proton-viewer + llnl-hatchet, scripts/setup.sh).

Child snippets start with `from proton_util import *` (this directory is put on
sys.path), which gives them torch, triton, the kernels and `workload()`.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap

import torch
import triton
import triton.language as tl
import triton.profiler.language as pl

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
REF_VENV = os.environ.get("TRITIUM_REF_VENV", os.path.expanduser("~/.cache/tritium/ref-venv"))
PROTON_CLI = os.path.join(REPO, "build", "bin", "proton-cli")

# Variables that change what Proton does; cleared in every child unless a test sets them.
PROTON_VARS = ("PROTON_KERNEL_CAPTURE", "PROTON_OUTPUT", "PROTON_VERBOSE", "PROTON_EVENTS", "PROTON_TRACE_LIMIT",
               "PROTON_CLOCK", "TRITON_DISABLE_PROTON", "TRITON_PROTON_DISABLE", "RANK", "OMPI_COMM_WORLD_RANK",
               "PMI_RANK", "TRITON_ALWAYS_COMPILE", "SPINE_TRITON_DUMP_PATH", "TRITIUM_DEBUG", "PROTON_OUTPUT_TAKEN",
               "PROTON_TEST_WRITE_STALL_MS")

N = 1000          # elements per tensor
BLOCK_ADD = 256   # add_kernel: grid (4,)  -> 4 programs
BLOCK_SCALE = 128  # scale_kernel: grid (8,) -> 8 programs
GRID_ADD = (4,)
GRID_SCALE = (8,)
NUM_THREADS = 2   # OMP_NUM_THREADS of every child


# ---- kernels ------------------------------------------------------------------------------

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


@triton.jit
def scoped_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """In-kernel scopes: load, compute/inner (nested)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    pl.enter_scope("load")
    x = tl.load(x_ptr + offs, mask=m)
    pl.exit_scope("load")
    pl.enter_scope("compute")
    pl.enter_scope("inner")
    y = x * 2.0 + 1.0
    pl.exit_scope("inner")
    pl.exit_scope("compute")
    tl.store(out_ptr + offs, y, mask=m)


@triton.jit
def load_only(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """A load-only scope: each program's tile read in "load", summed after it."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    pl.enter_scope("load")
    x = tl.load(x_ptr + offs)
    pl.exit_scope("load")
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


META_CALLS = [0]  # how often meta_kernel's launch_metadata function ran


def _meta(grid, metadata, args):
    META_CALLS[0] += 1
    n = args["n"]
    return {"name": f"meta_add_{args['BLOCK']}", "flops32": 1.0 * n, "bytes": 12 * n, "extra_metric": 7}


@triton.jit(launch_metadata=_meta)
def meta_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


# Eight kernels for the "each thread its own kernel" test.
@triton.jit
def tk0(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 0.0, mask=offs < n)


@triton.jit
def tk1(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@triton.jit
def tk2(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 2.0, mask=offs < n)


@triton.jit
def tk3(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 3.0, mask=offs < n)


@triton.jit
def tk4(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 4.0, mask=offs < n)


@triton.jit
def tk5(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 5.0, mask=offs < n)


@triton.jit
def tk6(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 6.0, mask=offs < n)


@triton.jit
def tk7(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 7.0, mask=offs < n)


THREAD_KERNELS = [tk0, tk1, tk2, tk3, tk4, tk5, tk6, tk7]


# ---- launching ----------------------------------------------------------------------------

class Bufs:
    """Input/output tensors for the kernels above (deterministic values)."""

    def __init__(self, n=N):
        g = torch.Generator().manual_seed(1)
        self.n = n
        self.x = torch.randn(n, generator=g)
        self.y = torch.randn(n, generator=g)
        self.o = torch.empty(n)


def launch_add(b, times=1):
    for _ in range(times):
        add_kernel[GRID_ADD](b.x, b.y, b.o, b.n, BLOCK=BLOCK_ADD)
    assert torch.allclose(b.o, b.x + b.y)


def launch_scale(b, times=1, s=2.0):
    for _ in range(times):
        scale_kernel[GRID_SCALE](b.x, b.o, b.n, s, BLOCK=BLOCK_SCALE)
    assert torch.allclose(b.o, b.x * s)


def launch_scoped(b, times=1):
    for _ in range(times):
        scoped_kernel[GRID_ADD](b.x, b.o, b.n, BLOCK=BLOCK_ADD)
    assert torch.allclose(b.o, b.x * 2.0 + 1.0)


def launch_meta(b, times=1):
    for _ in range(times):
        meta_kernel[GRID_ADD](b.x, b.y, b.o, b.n, BLOCK=BLOCK_ADD)
    assert torch.allclose(b.o, b.x + b.y)


def workload(b=None, a=7, s=3):
    """The standard capture workload: `a` launches of add_kernel (grid 4), then `s`
    launches of scale_kernel (grid 8)."""
    b = b or Bufs()
    launch_add(b, a)
    launch_scale(b, s)
    return b


def warm_up():
    """Compiles every kernel once into the session cache (children then hit the disk)."""
    b = Bufs()
    launch_add(b)
    launch_scale(b)
    launch_meta(b)
    for i, k in enumerate(THREAD_KERNELS):
        k[GRID_ADD](b.x, b.o, b.n, BLOCK=BLOCK_ADD)
        assert torch.allclose(b.o, b.x + float(i))


# ---- child processes --------------------------------------------------------------------

PRELUDE = f"import sys\nsys.path.insert(0, {HERE!r})\nfrom proton_util import *  # noqa\n"


def child_env(env=None):
    e = dict(os.environ)
    for k in PROTON_VARS:
        e.pop(k, None)
    e["TRITON_CACHE_DIR"] = os.environ["TRITON_CACHE_DIR"]
    e["OMP_NUM_THREADS"] = str(NUM_THREADS)
    e.setdefault("OPENBLAS_NUM_THREADS", "1")
    e["PYTHONUNBUFFERED"] = "1"
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = str(v)
    return e


def _script(code, cwd, name):
    path = os.path.join(str(cwd), name)
    with open(path, "w") as f:
        f.write(PRELUDE + textwrap.dedent(code))
    return path


def run_child(code, cwd, env=None, timeout=120, name="child.py"):
    """Runs `code` (dedented, after PRELUDE) as a script in `cwd`; returns the
    CompletedProcess (text)."""
    path = _script(code, cwd, name)
    return subprocess.run([sys.executable, path], cwd=str(cwd), env=child_env(env), capture_output=True, text=True,
                          timeout=timeout)


def start_child(code, cwd, env=None, name="child.py"):
    """Like run_child but returns the Popen (stdout/stderr pipes, text)."""
    path = _script(code, cwd, name)
    return subprocess.Popen([sys.executable, path], cwd=str(cwd), env=child_env(env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def describe(proc):
    return f"rc={proc.returncode}\n--- stdout:\n{proc.stdout}\n--- stderr:\n{proc.stderr}"


def check_ok(proc):
    assert proc.returncode == 0, describe(proc)
    return proc


def child_files(cwd, ignore=("child.py",)):
    return sorted(f for f in os.listdir(str(cwd)) if f not in ignore and not f.startswith("__pycache__"))


# ---- reading outputs ----------------------------------------------------------------------

def load_json(path):
    with open(str(path), encoding="utf-8") as f:
        return json.load(f)


def tree_paths(node, prefix=()):
    """{("ROOT", "a", "add_kernel"): metrics, ...} for every node of a hatchet tree
    (a node dict, or the [tree, device_info] list)."""
    if isinstance(node, list):
        node = node[0]
    path = prefix + (node["frame"]["name"],)
    out = {path: node["metrics"]}
    for c in node["children"]:
        sub = tree_paths(c, path)
        dup = set(sub) & set(out)
        assert not dup, f"duplicate sibling paths {dup}"
        out.update(sub)
    return out


def kernel_counts(tree):
    """{path: count} for the kernel nodes (device_type CPU) of a hatchet tree."""
    return {p: m["count"] for p, m in tree_paths(tree).items() if m.get("device_type") == "CPU"}


def find_nodes(tree, name):
    return [(p, m) for p, m in tree_paths(tree).items() if p[-1] == name]


def all_keys(obj):
    """Every dict key anywhere in a JSON value."""
    out = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(k)
            out |= all_keys(v)
    elif isinstance(obj, list):
        for v in obj:
            out |= all_keys(v)
    return out


_validator = None


def validate_trace(obj):
    """tests/proton/validate_trace.py's validate(obj) -> list of problems."""
    global _validator
    if _validator is None:
        spec = importlib.util.spec_from_file_location("validate_trace",
                                                      os.path.join(REPO, "tests", "proton", "validate_trace.py"))
        _validator = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_validator)
    return _validator.validate(obj)


def kernel_events(trace, name=None):
    return [e for e in trace["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") == "kernel" and (name is None or e["name"] == name)]


def events(trace, ph=None, cat=None, name=None):
    return [e for e in trace["traceEvents"] if (ph is None or e.get("ph") == ph) and
            (cat is None or e.get("cat") == cat) and (name is None or e.get("name") == name)]


_TIME = r"[\d.]+ (?:ns|us|ms|s)"
_ROW = re.compile(rf"^(?P<name>\S+)\s+(?P<count>\d+)\s+(?P<times>(?:{_TIME}\s+){{3}}{_TIME})(?P<rest>.*)$")
_TITLE = re.compile(r"^== Proton: (\d+) kernels?, (\d+) launch(?:es)?, .* total \(clock: .*, counters: (\w+)\) ==$")
_SCOPE_ROW = re.compile(rf"^(?P<name>\S+)\s+(?P<count>\d+)\s+(?P<times>(?:{_TIME}\s+){{2}}{_TIME})\s+(?P<pct>[\d.]+)%$")


_UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def to_ns(text):
    """'25.1 us' -> 25100.0"""
    v, u = text.split()
    return float(v) * _UNITS[u]


def parse_console(text):
    """Parses the console table (docs/formats.md §3) out of `text` (stderr).
    Returns {"title": (kernels, launches, counter_source), "header": [...],
    "rows": {name[grid]: {"count": int, "times": [total, min, max, avg] in ns, "rest": [tokens]}},
    "launches": [[tokens]...]} or None when there is no table."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = _TITLE.match(ln)
        if m:
            break
    else:
        return None
    res = {"title": (int(m.group(1)), int(m.group(2)), m.group(3)), "rows": {}, "launches": []}
    header = lines[i + 1].split()
    assert header[:6] == ["Kernel", "Count", "Total", "Min", "Max", "Avg"], lines[i + 1]
    res["header"] = header
    j = i + 2
    while j < len(lines) and lines[j].strip() and not lines[j].startswith(("--", "Dropped timeline events", "proton:")):
        r = _ROW.match(lines[j])
        assert r, f"unparsable console row: {lines[j]!r}"
        times = [to_ns(t) for t in re.findall(_TIME, r.group("times"))]
        res["rows"][r.group("name")] = {"count": int(r.group("count")), "times": times,
                                        "rest": r.group("rest").split()}
        j += 1
    if j < len(lines) and lines[j].startswith("-- launches --"):
        j += 2  # the section header line
        while j < len(lines) and lines[j].strip() and not lines[j].startswith(("==", "--", "Dropped", "proton:")):
            res["launches"].append(lines[j].split())
            j += 1
    res["scopes"] = {}
    if j < len(lines) and lines[j].startswith("-- in-kernel scopes"):
        assert lines[j + 1].split() == ["Kernel", "/", "scope", "Count", "Total", "Avg", "CPU", "%", "of",
                                        "kernel"], lines[j + 1]
        j += 2
        kernel, stack = None, []
        while j < len(lines) and lines[j].strip() and not lines[j].startswith(("==", "--", "Dropped", "proton:")):
            ln = lines[j]
            if not ln.startswith(" "):
                kernel, stack = ln.strip(), []
                res["scopes"][kernel] = {}
            else:
                depth = (len(ln) - len(ln.lstrip(" "))) // 2
                r = _SCOPE_ROW.match(ln.strip())
                assert r, f"unparsable scope row: {ln!r}"
                del stack[depth - 1:]
                stack.append(r.group("name"))
                t = [to_ns(x) for x in re.findall(_TIME, r.group("times"))]
                res["scopes"][kernel]["/".join(stack)] = {"count": int(r.group("count")), "total": t[0],
                                                          "avg": t[1], "cpu": t[2],
                                                          "pct": float(r.group("pct"))}
            j += 1
    return res


def ref_venv_python():
    """The reference venv's interpreter; fails (not skips) when it is missing: it is
    part of set-up (scripts/setup.sh)."""
    py = os.path.join(REF_VENV, "bin", "python3")
    viewer = os.path.join(REF_VENV, "bin", "proton-viewer")
    if not (os.access(py, os.X_OK) and os.access(viewer, os.X_OK)):
        import pytest
        pytest.fail(f"reference venv {REF_VENV} (upstream proton-viewer + llnl-hatchet) is missing: run "
                    f"scripts/setup.sh (it is part of set-up, not optional)", pytrace=False)
    return py, viewer
