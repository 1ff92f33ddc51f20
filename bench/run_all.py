"""`make bench`: every benchmark in one run, printing ratios against torch.

Benchmarks report numbers; they never fail on a target (timings on shared VMs are
noisy — quote medians and ratios, see docs/benchmarks.md).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import bench_elementwise  # noqa: E402
import bench_launch  # noqa: E402
import bench_matmul  # noqa: E402
import bench_norms  # noqa: E402
import bench_parallel  # noqa: E402


def main():
    import torch
    print(f"== Tritium benchmarks ({time.strftime('%Y-%m-%d %H:%M')}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} torch threads, {os.cpu_count()} CPUs) ==")
    for mod in (bench_elementwise, bench_norms, bench_launch, bench_matmul, bench_parallel):
        print(f"-- {mod.__name__}")
        mod.run(lambda s: print(s, flush=True))
    import bench_proton  # noqa: E402
    import bench_proton_cli  # noqa: E402
    for mod in (bench_proton, bench_proton_cli):
        print(f"-- {mod.__name__}")
        mod.run(lambda s: print(s, flush=True))


if __name__ == "__main__":
    main()
