"""proton-cli and Proton's writer at scale (issue 14): a 1M-launch Chrome trace.

1. Generates the trace with kernel capture, as a user would: a fresh process launches
   a two-program kernel 1,000,000 times with PROTON_KERNEL_CAPTURE=1,
   PROTON_OUTPUT=big.json and the default counters (about 1 GB: one launch slice, six
   counter samples and, within PROTON_TRACE_LIMIT, program slices per launch). Prints
   the recording time and the time the exit-time write took.
2. Runs `proton-cli report`, `proton-cli html` and `proton-cli merge` (of the trace
   alone: reads it twice, writes it again) on it and prints each one's wall time and
   peak RSS (GNU time). Targets: report <= 500 MB and <= 20 s.

BENCH_LAUNCHES changes the number of launches; BENCH_KEEP=dir keeps the files there.
Numbers, not pass/fail.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.path.join(os.path.dirname(HERE), "build", "bin", "proton-cli")

_GEN = r'''
import sys, time, torch, triton, triton.language as tl
@triton.jit
def step(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 0.5, mask=m)
x = torch.ones(64)
n = int(sys.argv[1])
t0 = time.perf_counter()
for _ in range(n):
    step[(2,)](x, 64, BLOCK=32)
print("%.3f" % (time.perf_counter() - t0), flush=True)
'''


def _timed(cmd, **kw):
    """(wall s, peak RSS MB, CompletedProcess) of cmd under GNU time."""
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M"] + cmd, capture_output=True, text=True, **kw)
    line = [x for x in p.stderr.splitlines() if x.startswith("TIME ")][-1].split()
    return float(line[1]), int(line[2]) / 1024.0, p


def generate(d, n):
    """Writes d/big.json with n captured launches; returns (record s, write s, bytes)."""
    gen = os.path.join(d, "gen.py")
    with open(gen, "w") as f:
        f.write(_GEN)
    env = dict(os.environ, PROTON_KERNEL_CAPTURE="1", PROTON_OUTPUT=os.path.join(d, "big.json"))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, gen, str(n)], env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    rec = float(p.stdout.split()[-1])
    return rec, wall - rec, os.path.getsize(os.path.join(d, "big.json"))


def run(report):
    n = int(os.environ.get("BENCH_LAUNCHES", "1000000"))
    keep = os.environ.get("BENCH_KEEP")
    d = keep or tempfile.mkdtemp(prefix="pn-bench-")
    os.makedirs(d, exist_ok=True)
    try:
        rec, wr, size = generate(d, n)
        report(f"capture of {n} launches (2 programs, default counters): recording {rec:.1f} s, "
               f"exit write + interpreter exit {wr:.1f} s, {size / 1e9:.2f} GB")
        big = os.path.join(d, "big.json")
        t, mb, p = _timed([CLI, "report", "-m", "time/ms,count", big])
        report(f"proton-cli report big.json: {t:.1f} s, peak RSS {mb:.0f} MB "
               f"(exit {p.returncode}; target <= 20 s, <= 500 MB)")
        t, mb, p = _timed([CLI, "html", big, "-o", os.path.join(d, "big.html")])
        note = " ".join(x for x in p.stderr.splitlines() if not x.startswith("TIME "))
        report(f"proton-cli html big.json:   {t:.1f} s, peak RSS {mb:.0f} MB, "
               f"{os.path.getsize(os.path.join(d, 'big.html')) / 1e6:.1f} MB page (exit {p.returncode}) {note}")
        merged = os.path.join(d, "merged.json")
        t, mb, p = _timed([CLI, "merge", big, "-o", merged])
        report(f"proton-cli merge big.json:  {t:.1f} s, peak RSS {mb:.0f} MB, "
               f"{os.path.getsize(merged) / 1e9:.2f} GB written (exit {p.returncode})")
        os.unlink(merged)
    finally:
        if not keep:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    run(print)
