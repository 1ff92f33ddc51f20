"""Compiles run in a forked compile server (compiler/src/drv_server.c, through the driver).

A crash inside MLIR/LLVM fails that one compile with an error and the process goes
on; the server is forked once and reused (forking a torch-sized process costs
20-40 ms per compile otherwise); a dead server is replaced; the server holds none
of the user's descriptors; forked children and concurrent threads compile correctly.
"""
import textwrap

import pytest

from conftest import run_python

_PRELUDE = """
import os, sys, select, threading, json
import torch, triton, triton.language as tl
from triton._C import tritium as _C

def make(name):
    src = f'''
def {name}(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0 + 1.0, mask=m)
'''
    path = os.path.join(os.environ["KDIR"], name + ".py")
    with open(path, "w") as f:
        f.write("import triton.language as tl\\n" + src)
    ns = {}
    exec(compile(open(path).read(), path, "exec"), ns)
    return triton.jit(ns[name])

def run(k):
    x = torch.randn(1000); o = torch.empty(1000)
    k[(4,)](x, o, 1000, BLOCK=256)
    assert torch.allclose(o, x * 2 + 1), "wrong result"

def stats():
    s = _C.stats()
    return s["compile_servers"], s["compile_forks"]
"""


def _child(tmp_path, body, env=None):
    script = tmp_path / "child.py"
    script.write_text(_PRELUDE + textwrap.dedent(body))
    kdir = tmp_path / "k"
    kdir.mkdir(exist_ok=True)
    e = {"KDIR": str(kdir), "TRITON_ALWAYS_COMPILE": "1", "TRITIUM_COMPILE_FORK": None}
    e.update(env or {})
    p = run_python(script, tmp_path / "cache", env=e, timeout=120)
    assert p.returncode == 0, f"child failed\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


def test_one_server_serves_every_compile(tmp_path):
    p = _child(tmp_path, """
        for i in range(4):
            run(make(f"k{i}"))
        pid = _C.compile_server_pid()
        assert pid > 0 and pid != os.getpid()
        print("STATS", *stats())
    """)
    assert "STATS 1 0" in p.stdout


def test_a_crash_fails_one_compile_and_the_next_gets_a_new_server(tmp_path):
    p = _child(tmp_path, """
        run(make("before"))
        first = _C.compile_server_pid()
        try:
            run(make("crashme"))
        except RuntimeError as e:
            msg = str(e)
        else:
            raise SystemExit("no error for the crashing compile")
        assert "internal compiler error" in msg and "signal 11" in msg and "unaffected" in msg, msg
        run(make("after"))
        second = _C.compile_server_pid()
        assert second > 0 and second != first
        run(make("again"))
        assert _C.compile_server_pid() == second
        print("STATS", *stats())
    """, env={"TRITIUM_CG_CRASH_FOR_TESTING": "crashme"})
    assert "STATS 2 0" in p.stdout


def test_a_killed_idle_server_is_replaced(tmp_path):
    p = _child(tmp_path, """
        import signal, time
        run(make("k0"))
        pid = _C.compile_server_pid()
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
        run(make("k1"))
        assert _C.compile_server_pid() not in (0, pid)
        print("STATS", *stats())
    """)
    assert "STATS 2 0" in p.stdout


def test_the_server_holds_none_of_the_users_descriptors(tmp_path):
    # a pipe the script opened before the first compile: once the script closes the
    # write end, the reader must see end of file (a forked server holding a copy
    # would keep it open for ever)
    p = _child(tmp_path, """
        r, w = os.pipe()
        run(make("k0"))
        assert _C.compile_server_pid() > 0
        os.close(w)
        ready, _, _ = select.select([r], [], [], 5.0)
        assert ready and os.read(r, 1) == b"", "the pipe stayed open"
        print("EOF OK")
    """)
    assert "EOF OK" in p.stdout


def test_forked_children_and_threads_compile_correctly(tmp_path):
    p = _child(tmp_path, """
        run(make("parent0"))
        parent_server = _C.compile_server_pid()
        pid = os.fork()
        if pid == 0:
            try:
                assert _C.compile_server_pid() == 0   # the parent's server is not the child's
                run(make("child0"))
                assert _C.compile_server_pid() not in (0, parent_server)
                os._exit(0)
            except BaseException as e:
                print("CHILD FAILED", e, flush=True)
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert status == 0, "forked child failed"
        run(make("parent1"))
        assert _C.compile_server_pid() == parent_server
        errors = []
        def worker(i):
            try:
                for j in range(3):
                    run(make(f"t{i}_{j}"))
            except BaseException as e:
                errors.append(repr(e))
        ts = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert not errors, errors
        servers, forks = stats()
        assert servers == 1, servers
        print("THREADS OK", forks)
    """)
    assert "THREADS OK" in p.stdout


def test_compile_fork_off_compiles_in_process(tmp_path):
    p = _child(tmp_path, """
        run(make("k0"))
        assert _C.compile_server_pid() == 0
        print("STATS", *stats())
    """, env={"TRITIUM_COMPILE_FORK": "0"})
    assert "STATS 0 0" in p.stdout
