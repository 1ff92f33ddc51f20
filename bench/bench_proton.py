"""Proton's costs as seen from Python.

- launch overhead added by kernel capture (one-program kernel): capture off vs on,
  with the default counters and with PROTON_EVENTS=none (timing only), each in a
  fresh process because the capture switch is read at start-up;
- the launch cost inside a `proton.start()` session for kernels of 1, 2, 10 and 100
  programs: session off (deactivated) / on (PROTON_EVENTS=none) / on with the default
  counters. Off and on rounds alternate in one process (deactivate / activate), so
  the difference is a ratio against a baseline measured alongside it. Two tables:
  the mean over rounds of back-to-back launches, and the median of single timed
  launches (a few ms of preemption by other work then moves only a few samples);
  the added cost is the median over the 7 (off, on) round pairs of on - off, so load
  that comes and goes between pairs moves both sides of a pair alike, and the load
  average is printed with it;
- the cost of a host scope pair (`with proton.scope(...)`) inside a session.
One-program launches and scope pairs run on the calling thread and are timed in its
CPU time (time.thread_time), which a loaded machine's other processes do not inflate.
Targets (issues 3, 14): <= 0.3 us added per captured launch, <= 1 us added per launch
in a session, <= 0.5 us per scope pair.
"""
import os
import statistics
import subprocess
import sys
import tempfile

_LAUNCH = r'''
import statistics, time, torch, triton, triton.language as tl
@triton.jit
def tiny(x_ptr, n):
    pass
x = torch.empty(16)
tiny[(1,)](x, 16)
rounds = []
for _ in range(7):
    t0 = time.thread_time()  # a one-program launch runs inline: CPU time of this thread
    for _ in range(20000):
        tiny[(1,)](x, 16)
    rounds.append((time.thread_time() - t0) / 20000 * 1e6)
print(statistics.median(rounds))
'''

# One process: each grid size warmed up, then rounds alternating session off / on.
_SESSION = r'''
import statistics, time, torch, triton, triton.language as tl
import triton.profiler as proton
@triton.jit
def work(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)
x = torch.zeros(16 * 100)
ns = time.perf_counter_ns
sid = proton.start("{path}", backend="cpu")
out = []
for p in (1, 2, 10, 100):
    reps = 4000 if p < 100 else 2000
    for _ in range(200):                 # compile, open every worker's counters
        work[(p,)](x, 16 * p, BLOCK=16)
    proton.deactivate(sid)
    for _ in range(200):
        work[(p,)](x, 16 * p, BLOCK=16)
    rounds = {0: [], 1: []}
    each = {0: [], 1: []}
    each_round = {0: [], 1: []}              # median single launch of each round
    for r in range(14):
        on = r % 2
        (proton.activate if on else proton.deactivate)(sid)
        t0 = time.perf_counter()
        for _ in range(reps):
            work[(p,)](x, 16 * p, BLOCK=16)
        rounds[on].append((time.perf_counter() - t0) / reps * 1e6)
        mine = []
        for _ in range(reps // 4):           # single launches: preemption hits only a few
            t1 = ns()
            work[(p,)](x, 16 * p, BLOCK=16)
            mine.append(ns() - t1)
        each[on] += mine
        each_round[on].append(statistics.median(mine) / 1e3)
    # added cost as the median over the 7 (off, on) round pairs of on - off: load that
    # changes between pairs moves both sides of a pair alike
    pair_mean = statistics.median(b - a for a, b in zip(rounds[0], rounds[1]))
    pair_each = statistics.median(b - a for a, b in zip(each_round[0], each_round[1]))
    out.append("%d %.4f %.4f %.4f %.4f %.4f %.4f" % (p, statistics.median(rounds[0]), statistics.median(rounds[1]),
                                                     statistics.median(each[0]) / 1e3, statistics.median(each[1]) / 1e3,
                                                     pair_mean, pair_each))
proton.finalize()
print(";".join(out))
'''

_SCOPE = r'''
import statistics, time
import triton.profiler as proton
proton.start("{path}", backend="cpu")
rounds = []
for _ in range(7):
    t0 = time.thread_time()
    for _ in range(20000):
        with proton.scope("step"):
            pass
    rounds.append((time.thread_time() - t0) / 20000 * 1e6)
empty = []
for _ in range(7):
    t0 = time.thread_time()
    for _ in range(20000):
        pass
    empty.append((time.thread_time() - t0) / 20000 * 1e6)
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
        return out.stdout.strip().splitlines()[-1]


def _session_costs(env):
    """{programs: (off_us, on_us, off_each_us, on_each_us, added_mean_us, added_each_us)}:
    per run medians (of round means; of single launches; of the paired on - off
    differences), then the median over 3 runs."""
    runs = [_run(_SESSION, env) for _ in range(3)]
    res = {}
    for p in (1, 2, 10, 100):
        cols = [[], [], [], [], [], []]
        for r in runs:
            for row in r.split(";"):
                q, *vals = row.split()
                if int(q) == p:
                    for c, v in zip(cols, vals):
                        c.append(float(v))
        res[p] = tuple(statistics.median(c) for c in cols)
    return res


def _counter_read():
    """How the default counters are read here (docs/proton.md, Counters)."""
    mode = os.environ.get("PROTON_SW_COUNTERS", "").lower()
    if mode == "perf":
        return "software events, group read() twice per worker and launch"
    if mode == "rusage":
        return "software events through getrusage() twice per worker and launch"
    return ("software events through getrusage() once per worker and launch, the second"
            " read skipped when the fault/switch watcher saw nothing (where it opens)")


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def run(report):
    report(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs")
    off = statistics.median(float(_run(_LAUNCH, {"PROTON_KERNEL_CAPTURE": "0"})) for _ in range(3))
    on_none = statistics.median(float(_run(_LAUNCH, {"PROTON_KERNEL_CAPTURE": "1", "PROTON_EVENTS": "none"}))
                                for _ in range(3))
    on_def = statistics.median(float(_run(_LAUNCH, {"PROTON_KERNEL_CAPTURE": "1"})) for _ in range(3))
    report(f"launch, capture off:                         {off:.3f} us")
    report(f"launch, capture on, timing only (EVENTS=none): {on_none:.3f} us  (+{on_none - off:.3f} us; target <= 0.3)")
    report(f"launch, capture on, default counters:          {on_def:.3f} us  (+{on_def - off:.3f} us; "
           f"counters: {_counter_read()})")
    load0 = os.getloadavg()[0]
    plain = _session_costs({"PROTON_EVENTS": "none"})
    ctrs = _session_costs({})
    report(f"launch in a proton.start() session (median of 3 processes, off/on rounds interleaved; "
           f"target <= 1 us added; load average {load0:.1f} -> {os.getloadavg()[0]:.1f}, "
           f"{os.cpu_count()} CPUs: multi-program launches wait for a second CPU):")
    for title, i, d in (("mean per launch (rounds of back-to-back launches)", 0, 4),
                        ("median single launch (robust to preemption by other work)", 2, 5)):
        report(f" {title}; (+added: median of paired on - off rounds):")
        report("  programs   session off   session on (EVENTS=none)    on with default counters")
        for p in (1, 2, 10, 100):
            o, n = plain[p][i], plain[p][i + 1]
            c = ctrs[p][i + 1]
            report(f"  {p:8d}   {o:8.2f} us   {n:8.2f} us (+{plain[p][d]:5.2f})       {c:8.2f} us (+{ctrs[p][d]:5.2f})")
    sc = statistics.median(float(_run(_SCOPE, {})) for _ in range(3))
    report(f"host scope pair (with proton.scope):           {sc:.3f} us  (target <= 0.5)")


if __name__ == "__main__":
    run(print)
