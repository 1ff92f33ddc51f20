"""triton.testing: do_bench and helpers (upstream semantics, CPU timing)."""
from __future__ import annotations

import statistics
import time


def _summarize(times, quantiles, return_mode):
    if quantiles is not None:
        ts = sorted(times)
        ret = [ts[min(len(ts) - 1, max(0, int(round(q * (len(ts) - 1)))))] for q in quantiles]
        return ret[0] if len(ret) == 1 else ret
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.mean, "median": statistics.median}[return_mode](times)


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Runs fn repeatedly; warmup and rep are milliseconds. Returns ms per call."""
    assert return_mode in ("min", "max", "mean", "median", "all")
    fn()
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    est = (time.perf_counter() - t0) / 5 * 1e3
    n_warm = max(1, int(warmup / max(est, 1e-6)))
    n_rep = max(1, int(rep / max(est, 1e-6)))
    for _ in range(n_warm):
        fn()
    times = []
    for _ in range(n_rep):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        s = time.perf_counter()
        fn()
        times.append((time.perf_counter() - s) * 1e3)
    return _summarize(times, quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    return do_bench(fn, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles, return_mode=return_mode)


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    import numpy as np
    import torch
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().float().numpy()
    if isinstance(y, torch.Tensor):
        y = y.detach().cpu().float().numpy()
    atol = 1e-2 if atol is None else atol
    rtol = 0 if rtol is None else rtol
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), atol=atol, rtol=rtol, err_msg=err_msg)


class Benchmark:
    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name, args, xlabel="", ylabel="",
                 x_log=False, y_log=False, styles=None):
        self.__dict__.update(locals())
        del self.__dict__["self"]


class Mark:
    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks

    def run(self, print_data=False, show_plots=False, save_path="", **kwargs):
        benches = self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]
        for b in benches:
            rows = []
            for x in b.x_vals:
                xs = x if isinstance(x, (list, tuple)) else [x] * len(b.x_names)
                kw = dict(zip(b.x_names, xs))
                row = list(xs)
                for lv in b.line_vals:
                    r = self.fn(**kw, **{b.line_arg: lv}, **b.args, **kwargs)
                    row.append(r[0] if isinstance(r, tuple) else r)
                rows.append(row)
            if print_data:
                print(b.plot_name + ":")
                print("\t".join(list(b.x_names) + list(b.line_names)))
                for r in rows:
                    print("\t".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in r))


def perf_report(benchmarks):
    return lambda fn: Mark(fn, benchmarks)


def get_dram_gbps(device=None):
    return 0.0


def get_max_tensorcore_tflops(dtype, clock_rate, device=None):
    return 0.0
