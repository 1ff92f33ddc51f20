"""Proton's costs as seen from Python.

- launch overhead added by kernel capture (one-program kernel): capture off vs on,
  with the default counters and with PROTON_EVENTS=none (timing only), each in a
  fresh process because the capture switch is read at start-up;
- the cost of a host scope pair (`with proton.scope(...)`) inside a session.
Targets (issue 3): <= 0.3 us added per launch, <= 0.5 us per scope pair.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

_LAUNCH = r'''
import statistics, time, torch, triton, triton.language as tl
@triton.jit
def tiny(x_ptr, n):
    pass
x = torch.empty(16)
tiny[(1,)](x, 16)
rounds = []
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(20000):
        tiny[(1,)](x, 16)
    rounds.append((time.perf_counter() - t0) / 20000 * 1e6)
print(statistics.median(rounds))
'''

_SCOPE = r'''
import statistics, time
import triton.profiler as proton
proton.start("{path}", backend="cpu")
rounds = []
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(20000):
        with proton.scope("step"):
            pass
    rounds.append((time.perf_counter() - t0) / 20000 * 1e6)
empty = []
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(20000):
        pass
    empty.append((time.perf_counter() - t0) / 20000 * 1e6)
proton.finalize()
print(statistics.median(rounds) - statistics.median(empty))
'''


def _run(code, env_extra):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "b.py")
        with open(path, "w") as f:
            f.write(code.replace("{path}", os.path.join(d, "p")))
        env = dict(os.environ, **env_extra)
        env.setdefault("PROTON_OUTPUT", os.path.join(d, "out.hatchet"))
        out = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])


def run(report):
    off = statistics.median(_run(_LAUNCH, {"PROTON_KERNEL_CAPTURE": "0"}) for _ in range(3))
    on_none = statistics.median(_run(_LAUNCH, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "none"})
                                for _ in range(3))
    on_def = statistics.median(_run(_LAUNCH, {"PROTON_KERNEL_CAPTURE": "1"}) for _ in range(3))
    report(f"launch, capture off:                         {off:.3f} us")
    report(f"launch, capture on, timing only (EVENTS=none): {on_none:.3f} us  (+{on_none - off:.3f} us; target <= 0.3)")
    report(f"launch, capture on, default counters:          {on_def:.3f} us  (+{on_def - off:.3f} us; "
           f"software counters cost a read() syscall per launch here)")
    sc = statistics.median(_run(_SCOPE, {}) for _ in range(3))
    report(f"host scope pair (with proton.scope):           {sc:.3f} us  (target <= 0.5)")


if __name__ == "__main__":
    run(print)
