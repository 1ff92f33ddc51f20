"""torch.compile on the CPU: eager vs inductor's C++ backend vs inductor's Triton
backend running on Tritium (cpu_backend="triton"), same process, same inputs.

Models: a small MLP (Linear -> GELU -> Linear) and a transformer block
(nn.TransformerEncoderLayer, eval mode, the MHA fast path off so inductor sees the
graph). Each variant is compiled once (warm-up calls included), then the three are
timed in alternation; medians of wall time per call under torch.no_grad(). Ratios
>1 mean the Triton-on-Tritium variant is faster than the one it is compared with.
Inductor's cache goes to a temporary directory.
"""
import atexit
import copy
import os
import shutil
import statistics
import tempfile
import time

_CACHE = tempfile.mkdtemp(prefix="tritium-bench-inductor-")
atexit.register(shutil.rmtree, _CACHE, True)
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", _CACHE)

import torch  # noqa: E402


def _models():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).eval()
    block = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True).eval()
    return [("mlp 64x256-1024-256", mlp, (torch.randn(64, 256),)),
            ("transformer block b4 s64 d256", block, (torch.randn(4, 64, 256),))]


def _compile(model, backend, args):
    """torch.compile of a copy of model (a new module: dynamo compiles it again under
    this backend), warmed up: compiled and autotuned by the time it returns."""
    import torch._inductor.config as cfg
    m = copy.deepcopy(model)
    with cfg.patch(cpu_backend=backend):
        g = torch.compile(m)
        for _ in range(3):
            g(*args)
    return g


def _median_ms(fn, args, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def run(report, reps=10, rounds=5):
    old = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        report(f"{'model':<32} {'eager ms':>9} {'cpp ms':>9} {'triton ms':>10} {'triton/cpp':>11} "
               f"{'triton/eager':>13}")
        with torch.no_grad():
            for name, model, args in _models():
                cpp, tri = _compile(model, "cpp", args), _compile(model, "triton", args)
                torch.testing.assert_close(tri(*args), model(*args), atol=1e-4, rtol=1e-4)
                t = {"eager": [], "cpp": [], "triton": []}
                for _ in range(rounds):  # alternate so that the three share the machine's noise
                    t["eager"].append(_median_ms(model, args, reps))
                    t["cpp"].append(_median_ms(cpp, args, reps))
                    t["triton"].append(_median_ms(tri, args, reps))
                e, c, r = (statistics.median(t[k]) for k in ("eager", "cpp", "triton"))
                report(f"{name:<32} {e:9.3f} {c:9.3f} {r:10.3f} {c / r:10.2f}x {e / r:12.2f}x")
    finally:
        torch.backends.mha.set_fastpath_enabled(old)


if __name__ == "__main__":
    run(print)
