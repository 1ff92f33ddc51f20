"""smt.parallel loops: a one-program grid whose parallel loop has a heavy body, run on 1
and on 2 threads (the second thread helps the program, docs/runtime.md §4.6), and the
cost of a launch whose parallel loop does almost nothing (the fork/join of the team).

Interleaved rounds, medians; ratios, not pass/fail (shared VMs are noisy).
"""
import statistics
import time

import torch
import triton
import triton.language as tl
import triton.language.extra.smt as smt
from bench_elementwise import _median_ms


@triton.jit
def heavy(x_ptr, o_ptr, NB, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    for s in smt.parallel(0, NB):
        offs = s * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + offs)
        acc = v
        for _ in range(ITERS):
            acc = tl.sin(acc) * 0.5 + v
        tl.store(o_ptr + offs, acc)


@triton.jit
def light(x_ptr, NB, BIND: tl.constexpr):
    for s in smt.parallel(0, NB, bind_sub_block=BIND):
        tl.store(x_ptr + s, s * 1.0)


def heavy_ms(threads, rounds=5, reps=9):
    x = torch.randn(64 * 1024)
    o = torch.empty_like(x)
    heavy[(1,)](x, o, 64, BLOCK=1024, ITERS=200, num_threads=1)
    res = {t: [] for t in threads}
    for _ in range(rounds):
        for t in threads:
            res[t].append(_median_ms(lambda: heavy[(1,)](x, o, 64, BLOCK=1024, ITERS=200, num_threads=t), reps))
    return {t: statistics.median(v) for t, v in res.items()}


def light_us(reps=20000):
    x = torch.empty(2)
    out = {}
    for name, bind, t in (("plain loop, 1 thread", False, 1), ("parallel, 1 thread", True, 1),
                          ("parallel, 2 threads", True, 2)):
        light[(1,)](x, 2, BIND=bind, num_threads=t)
        rounds = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(reps // 5):
                light[(1,)](x, 2, BIND=bind, num_threads=t)
            rounds.append((time.perf_counter() - t0) / (reps // 5) * 1e6)
        out[name] = statistics.median(rounds)
    return out


def run(report):
    ms = heavy_ms((1, 2))
    report(f"grid (1,), 64 heavy parallel iterations: 1 thread {ms[1]:.2f} ms, 2 threads {ms[2]:.2f} ms, "
           f"speed-up {ms[1] / ms[2]:.2f}x")
    for name, us in light_us().items():
        report(f"grid (1,), 2 empty parallel iterations, {name:<22}: {us:.2f} us per launch")


if __name__ == "__main__":
    run(print)
