"""Matrix multiply against torch.matmul and numpy (OpenBLAS), and the machine's FMA peak.

Prints, for 512^3, 1024^3, 2048^3 and 1000^3: GFLOP/s of the SMT matmul (the seed's form
with a K loop and `acc += smt.dot`; fp32, fp16, bf16), tl.dot with block pointers and
boundary_check, and tl.dot with masked tensors of pointers (upstream's tutorial form);
the ratio to torch.matmul and to numpy on the same inputs (>1: Tritium is faster), the
fraction of the measured FMA peak for the element type, and each kernel's compile time.
Timings alternate the implementations in one process and report medians; all threads
are used (torch's and the launch's). With --one-thread (for a shared or loaded machine):
one thread each (torch.set_num_threads(1), num_threads=1) timed by the CPU time of the
calling thread (time.thread_time), against the one-thread FMA peak; numpy is timed only
when OPENBLAS_NUM_THREADS=1 (its threads' time would not be counted). --sizes=1024,2048
picks the sizes. The FMA peak comes from bench/fma_peak.c (around viewers/src/cli_peak.c,
the code `proton-cli roofline` measures with), built here. Then the RISC-V SMT matmul's inner loop: the share of
vfmacc/vfmadd among its instructions (SPINE_TRITON_TARGET_ARCH=riscv64, compiled only).
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import triton
import triton.language as tl
import triton.language.extra.smt as smt

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


@triton.jit
def smt_mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           MM: tl.constexpr, MK: tl.constexpr, MN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, [M, K], [sam, 1], [pm * BM, 0], [BM, BK], [1, 0])
    b_bp = tl.make_block_ptr(b_ptr, [K, N], [sbk, 1], [0, pn * BN], [BK, BN], [1, 0])
    acc = smt.view(tl.zeros((BM, BN), dtype=tl.float32), (0, 0), (BM, BN), (MM, MN))
    for k in range(0, K, BK):
        a = smt.view(smt.descriptor_load(a_bp, (0, k)), (0, 0), (BM, BK), (MM, MK))
        b = smt.view(smt.descriptor_load(b_bp, (k, 0)), (0, 0), (BK, BN), (MK, MN))
        acc += smt.dot(a, b).to(tl.float32)
    c = smt.view(acc, (0, 0), (BM, BN), (1, 1)).to(c_ptr.dtype.element_ty)
    tl.store(tl.make_block_ptr(c_ptr, [M, N], [scm, 1], [pm * BM, pn * BN], [BM, BN], [1, 0]), c,
             boundary_check=(0, 1))


@triton.jit
def dot_bp(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    a = tl.make_block_ptr(a_ptr, (M, K), (sam, 1), (pm * BM, 0), (BM, BK), (1, 0))
    b = tl.make_block_ptr(b_ptr, (K, N), (sbk, 1), (0, pn * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a, boundary_check=(0, 1)), tl.load(b, boundary_check=(0, 1)))
        a = tl.advance(a, (0, BK))
        b = tl.advance(b, (BK, 0))
    c = tl.make_block_ptr(c_ptr, (M, N), (scm, 1), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(c, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def dot_masked(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :]
    b = b_ptr + rk[:, None] * sbk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0),
                      tl.load(b, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0))
        a += BK
        b += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


MICRO = {torch.float32: (8, 8, 16), torch.float16: (16, 8, 32), torch.bfloat16: (16, 8, 32)}
# one program's tile for every kernel: large enough that packing A and B costs little
# beside the micro-kernel (1024^3 fp32 on one Zen 4 thread: 64x64x64 0.85x torch,
# 128x256x64 1.2x), small enough for 2048 / 256 = 8 column blocks
TILE = (128, 256, 64)


def fma_peak():
    """{(dtype, threads): GFLOP/s} from fma_peak.c; the widest vector's figure."""
    out_dir = os.path.join(ROOT, "build", "bench")
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, "fma_peak")
    srcs = [os.path.join(HERE, "fma_peak.c"), os.path.join(ROOT, "viewers", "src", "cli_peak.c")]
    if not os.path.exists(exe) or any(os.path.getmtime(exe) < os.path.getmtime(s) for s in srcs):
        subprocess.run(["gcc", "-O2", "-I" + os.path.join(ROOT, "viewers", "src"), *srcs, "-o", exe,
                        "-lpthread", "-lm"], check=True)
    peak = {}
    for line in subprocess.run([exe, str(os.cpu_count() or 1)], capture_output=True, text=True,
                               check=True).stdout.split("\n"):
        f = line.split()
        if len(f) == 4:
            key = (f[0], int(f[2]))
            peak[key] = max(peak.get(key, 0.0), float(f[3]))
    return peak


def _median_s(fn, reps, clock=time.perf_counter):
    ts = []
    for _ in range(reps):
        t0 = clock()
        fn()
        ts.append(clock() - t0)
    return statistics.median(ts)


def launcher(kind, a, b, c, dtype, **kw):
    M, K = a.shape
    N = b.shape[1]
    BM, BN, BK = TILE
    if kind == "smt":
        mm, mk, mn = MICRO[dtype]
        g = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        return lambda: smt_mm[g](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BM=BM, BN=BN, BK=BK,
                                 MM=mm, MK=mk, MN=mn, **kw)
    g = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    k = dot_bp if kind == "tl.dot bp" else dot_masked
    return lambda: k[g](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BM=BM, BN=BN, BK=BK, **kw)


def run(report, one_thread=False, sizes=(512, 1024, 2048, 1000)):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    ncpu = os.cpu_count() or 1
    peak = fma_peak()
    report(f"CPU: {cpu}, {ncpu} threads; FMA peak fp32 {peak.get(('fp32', ncpu), 0):.0f} GFLOP/s "
           f"({peak.get(('fp32', 1), 0):.0f} on one thread), fp64 {peak.get(('fp64', ncpu), 0):.0f}, "
           f"bf16 pair-dot {peak.get(('bf16', ncpu), 0):.0f}")
    nt = 1 if one_thread else ncpu
    torch.set_num_threads(nt)
    clock = time.thread_time if one_thread else time.perf_counter
    kw = {"num_threads": 1} if one_thread else {}
    with_numpy = not one_thread or os.environ.get("OPENBLAS_NUM_THREADS") == "1"
    if one_thread:
        report("one thread each, CPU time of the calling thread (time.thread_time)")
    cases = [("smt", torch.float32), ("smt", torch.float16), ("smt", torch.bfloat16),
             ("tl.dot bp", torch.float32), ("tl.dot bp", torch.bfloat16), ("tl.dot masked", torch.float32)]
    for S in sizes:
        reps = 9 if S <= 1024 else 3
        for kind, dtype in cases:
            a = torch.randn(S, S).to(dtype)
            b = torch.randn(S, S).to(dtype)
            c = torch.empty(S, S, dtype=dtype)
            f = launcher(kind, a, b, c, dtype, **kw)
            os.environ["TRITON_ALWAYS_COMPILE"] = "1"
            t0 = time.perf_counter()
            f()
            compile_s = time.perf_counter() - t0
            os.environ.pop("TRITON_ALWAYS_COMPILE")
            ref = a.float() @ b.float()
            tol = 1e-2 if dtype == torch.float32 else 0.5
            if not torch.allclose(c.float(), ref, rtol=1e-2, atol=tol):
                report(f"{kind} {dtype} {S}: WRONG RESULT (max error {(c.float() - ref).abs().max():.3g})")
                continue
            an, bn = a.float().numpy(), b.float().numpy()
            theirs = lambda: torch.matmul(a, b, out=c)  # noqa: E731
            ours, tt, tn = [], [], []
            f()
            theirs()
            for _ in range(3):
                ours.append(_median_s(f, reps, clock))
                tt.append(_median_s(theirs, reps, clock))
                if dtype == torch.float32 and with_numpy:
                    tn.append(_median_s(lambda: an @ bn, reps, clock))
            to, tr = statistics.median(ours), statistics.median(tt)
            fl = 2.0 * S ** 3
            gf = fl / to / 1e9
            np_s = f"numpy {fl / statistics.median(tn) / 1e9:6.1f} GF/s ratio {statistics.median(tn) / to:5.2f}x" \
                if tn else "numpy    -"
            pk = peak.get(("fp32", nt), 0)
            report(f"{kind:14s} {str(dtype).replace('torch.', ''):8s} {S:4d}^3  tritium {gf:6.1f} GF/s "
                   f"({100 * gf / pk if pk else 0:4.0f}% of fp32 peak)  torch {fl / tr / 1e9:6.1f} GF/s "
                   f"ratio {tr / to:5.2f}x  {np_s}  compile {compile_s:5.2f} s")
    rv = riscv_fma_share()
    if rv:
        report(rv)


def riscv_fma_share():
    """The RISC-V SMT matmul's innermost loop: vfmacc/vfmadd share of its instructions."""
    code = (
        "import os, torch, triton\n"
        "from triton.compiler import ASTSource\n"
        "from triton.backends.compiler import GPUTarget\n"
        "import sys; sys.path.insert(0, %r)\n"
        "from bench_matmul import smt_mm\n"
        "src = ASTSource(smt_mm, {'a_ptr': '*fp32', 'b_ptr': '*fp32', 'c_ptr': '*fp32', 'M': 'i32', 'N': 'i32',"
        " 'K': 'i32', 'sam': 'i32', 'sbk': 'i32', 'scm': 'i32'},"
        " {'BM': 64, 'BN': 64, 'BK': 64, 'MM': 8, 'MK': 8, 'MN': 16})\n"
        "k = triton.compile(src, target=GPUTarget('cpu', 0, 0))\n"
        "print(k.asm['asm'])\n" % HERE)
    env = dict(os.environ, SPINE_TRITON_TARGET_ARCH="riscv64", TRITON_ALWAYS_COMPILE="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if p.returncode:
        return f"riscv64 SMT matmul: could not compile ({p.stderr.strip().splitlines()[-1:]})"
    # the innermost loops: a label's instructions up to the branch back to it
    loops, cur, body = [], None, []
    for line in p.stdout.split("\n"):
        m = re.match(r"^(\.LBB\d+_\d+):", line)
        if m:
            cur, body = m.group(1), []
        elif cur and line.startswith("\t") and not line.startswith("\t."):
            f = line.split()
            body.append(f[0] + ("@sp" if "(sp)" in line else ""))
            if f[0].startswith("b") and f[-1] == cur:
                loops.append(body)
                cur = None
    fma = lambda ins: sum(i.startswith(("vfmacc", "vfmadd")) for i in ins)  # noqa: E731
    best = max(loops, key=fma, default=[])
    n = fma(best)
    spills = sum(i.startswith(("vs1r", "vs2r", "vs4r", "vs8r", "vl1r", "vl2r", "vl4r", "vl8r")) or i.endswith("@sp")
                 for i in best)
    return (f"riscv64 SMT matmul inner loop: {n} of {len(best)} instructions are vfmacc/vfmadd "
            f"({100 * n / max(len(best), 1):.0f}%), {spills} spills")


if __name__ == "__main__":
    sizes = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--sizes=")), "512,1024,2048,1000")
    run(print, one_thread="--one-thread" in sys.argv, sizes=tuple(int(x) for x in sizes.split(",")))
