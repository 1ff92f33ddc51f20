#!/usr/bin/env python3
"""omp_runtimes.py — one OpenMP runtime or two? The experiment behind docs/runtime.md §4.2.

Alternates torch.add (torch.set_num_threads(2)) with our launcher running a memory-bound
vector add (build/bench/rt_add_kernel.so, 2 threads) in one process, and compares the
per-op medians with each op run alone. Each configuration is a fresh process, because
libgomp reads OMP_WAIT_POLICY / GOMP_SPINCOUNT when it is loaded:

  shared         our launcher binds torch's libgomp (the runtime's default choice)
  two            our launcher uses a second libgomp (TRITIUM_OMP_LIB=<system libgomp>),
                 what linking libgomp into our extension gives with a renamed torch copy
  ... + OMP_WAIT_POLICY / GOMP_SPINCOUNT variants of both.

Needs `make` (build/lib/libtritium_rt_bench.so, build/bench/rt_add_kernel.so) and the
project venv's torch. Prints a table; asserts nothing.

  .venv/bin/python3 bench/omp_runtimes.py [--iters N] [--sizes 1048576,32768]
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RT_SO = os.path.join(ROOT, "build/lib/libtritium_rt_bench.so")
KERNEL_SO = os.path.join(ROOT, "build/bench/rt_add_kernel.so")
SYSTEM_GOMP = "/usr/lib/x86_64-linux-gnu/libgomp.so.1"

CONFIGS = [
    ("shared", {}),
    ("shared, OMP_WAIT_POLICY=passive", {"OMP_WAIT_POLICY": "passive"}),
    ("two", {"TRITIUM_OMP_LIB": SYSTEM_GOMP}),
    ("two, OMP_WAIT_POLICY=passive", {"TRITIUM_OMP_LIB": SYSTEM_GOMP, "OMP_WAIT_POLICY": "passive"}),
    ("two, GOMP_SPINCOUNT=10000", {"TRITIUM_OMP_LIB": SYSTEM_GOMP, "GOMP_SPINCOUNT": "10000"}),
    ("two, OMP_WAIT_POLICY=active", {"TRITIUM_OMP_LIB": SYSTEM_GOMP, "OMP_WAIT_POLICY": "active"}),
]


def child(iters, n):
    import torch  # first, as user scripts do: torch's libgomp is mapped before ours binds

    torch.set_num_threads(2)
    rt = ctypes.CDLL(RT_SO)
    rt.rt_kernel_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    rt.rt_kernel_fn.argtypes = [ctypes.c_void_p]
    rt.rt_kernel_fn.restype = ctypes.c_void_p
    rt.rt_launch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                             ctypes.POINTER(ctypes.c_int32), ctypes.c_int, ctypes.c_uint32]
    rt.rt_threads_runtime.restype = ctypes.c_char_p
    k = ctypes.c_void_p()
    assert rt.rt_kernel_load(KERNEL_SO.encode(), ctypes.byref(k)) == 0
    fn = rt.rt_kernel_fn(k)

    a, b, c = (torch.rand(n) for _ in range(3))
    x, y, z = (torch.rand(n) for _ in range(3))
    block = 16384 if n >= 16384 * 8 else max(1024, n // 8)
    args = (ctypes.c_uint64 * 5)(z.data_ptr(), x.data_ptr(), y.data_ptr(), n, block)
    grid = (ctypes.c_int32 * 3)((n + block - 1) // block, 1, 1)

    def ours():
        rt.rt_launch(fn, args, grid, 2, 0)

    def theirs():
        torch.add(a, b, out=c)

    ns = time.perf_counter_ns

    def alone(op):
        for _ in range(iters // 10):
            op()
        t = []
        for _ in range(iters):
            t0 = ns()
            op()
            t.append(ns() - t0)
        return statistics.median(t) / 1e3

    def alternating():
        for _ in range(iters // 10):
            theirs()
            ours()
        tt, to = [], []
        for _ in range(iters):
            t0 = ns()
            theirs()
            t1 = ns()
            ours()
            t2 = ns()
            tt.append(t1 - t0)
            to.append(t2 - t1)
        return statistics.median(tt) / 1e3, statistics.median(to) / 1e3

    ours()
    assert torch.allclose(z, x + y)
    torch_alone, ours_alone = alone(theirs), alone(ours)
    torch_alt, ours_alt = alternating()
    gomps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "gomp" in l})
    print(json.dumps({
        "runtime": rt.rt_threads_runtime().decode(), "gomps": gomps,
        "torch_alone": torch_alone, "ours_alone": ours_alone,
        "torch_alt": torch_alt, "ours_alt": ours_alt,
        "cpu_s": time.process_time(),
    }))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--sizes", default="1048576,32768")
    ap.add_argument("--child", type=int, default=0)
    o = ap.parse_args()
    if o.child:
        child(o.iters, o.child)
        return
    for path in (RT_SO, KERNEL_SO):
        if not os.path.exists(path):
            sys.exit(f"{path} missing: run make first")
    for n in map(int, o.sizes.split(",")):
        print(f"\nfloat32 add of {n} elements, 2 threads each; medians in microseconds")
        print(f"{'configuration':36} {'libgomp copies':>14} {'torch':>8} {'ours':>8} "
              f"{'torch|alt':>10} {'ours|alt':>9} {'cpu s':>6}")
        for name, env in CONFIGS:
            e = dict(os.environ)
            for v in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "TRITIUM_OMP_LIB"):
                e.pop(v, None)
            e.update(env)
            out = subprocess.run([sys.executable, __file__, "--child", str(n), "--iters",
                                  str(o.iters)], env=e, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{name:36} failed: {out.stderr.strip()[-300:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{name:36} {len(r['gomps']):>14} {r['torch_alone']:8.1f} {r['ours_alone']:8.1f} "
                  f"{r['torch_alt']:10.1f} {r['ours_alt']:9.1f} {r['cpu_s']:6.1f}")


if __name__ == "__main__":
    main()
