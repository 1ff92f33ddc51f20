"""triton.autotune / triton.Config / triton.heuristics (upstream semantics).

The autotuner benchmarks every config with the driver's benchmarker on the first
launch of each tuning key (values of `key` arguments plus argument dtypes) and
remembers the best config in-process.
"""
from __future__ import annotations

import builtins
import inspect
import os
import time

from .errors import OutOfResources, PTXASError  # noqa: F401 (upstream imports them from here)


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None,
                 num_cpu_threads=None, **extra):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.num_cpu_threads = num_cpu_threads
        self.extra = extra

    def all_kwargs(self):
        kw = dict(self.kwargs)
        if self.num_cpu_threads:
            kw["num_threads"] = self.num_cpu_threads
        return kw

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_stages: {self.num_stages}", f"num_ctas: {self.num_ctas}"]
        if self.num_cpu_threads:
            parts.append(f"num_cpu_threads: {self.num_cpu_threads}")
        return ", ".join(parts)

    __repr__ = __str__


class Autotuner:
    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None, pre_hook=None,
                 post_hook=None, prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        self.fn = fn
        self.arg_names = arg_names
        self.configs = configs or [Config({})]
        self.keys = key
        self.cache = {}
        self.reset_to_zero = [arg_names.index(k) for k in (reset_to_zero or [])]
        self.restore_value = [arg_names.index(k) for k in (restore_value or [])]
        self.pre_hook, self.post_hook = pre_hook, post_hook
        prune = prune_configs_by or {}
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.top_k = prune.get("top_k", 1.0)
        self.warmup, self.rep = warmup or 5, rep or 20
        self.do_bench = do_bench
        self.best_config = None
        self.__name__ = getattr(fn, "__name__", "kernel")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def _bench(self, args, kwargs, grid, config):
        import triton
        bench = self.do_bench or triton.runtime.driver.active.get_benchmarker()
        full = {**kwargs, **config.all_kwargs()}
        conflicts = set(kwargs) & set(config.kwargs)
        if conflicts:
            raise ValueError(f"Conflicting meta-parameters: {', '.join(sorted(conflicts))}. "
                             "Make sure that you don't re-define auto-tuned symbols.")

        def call():
            for i in self.reset_to_zero:
                args[i].zero_()
            if config.pre_hook:
                config.pre_hook({**dict(zip(self.arg_names, args)), **full})
            self.fn.run(*args, grid=grid, **full)

        try:
            return bench(call, warmup=self.warmup, rep=self.rep, quantiles=(0.5, 0.2, 0.8))
        except Exception as e:  # noqa: BLE001 — a config that fails to compile scores inf
            if "CompilationError" in type(e).__name__ or isinstance(e, (ValueError, AssertionError)):
                return [float("inf")] * 3
            raise

    def prune_configs(self, kwargs, nargs):
        configs = self.configs
        if self.early_config_prune:
            configs = self.early_config_prune(configs, nargs, **kwargs)
        if self.perf_model:
            top_k = self.top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(configs) * top_k)
            if len(configs) > top_k:
                est = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(est, key=est.get)[:top_k]
        return configs

    def run(self, *args, grid, **kwargs):
        nargs = dict(zip(self.arg_names, args))
        key = tuple(nargs.get(k, kwargs.get(k)) for k in self.keys)
        key += tuple(str(a.dtype) for a in args if hasattr(a, "dtype"))
        if key not in self.cache:
            configs = self.prune_configs(kwargs, nargs)
            saved = {i: args[i].clone() for i in self.restore_value}
            if len(configs) > 1:
                t0 = time.time()
                timings = {c: self._bench(list(args), kwargs, grid, c) for c in configs}
                for i, v in saved.items():
                    args[i].copy_(v)
                best = builtins.min(timings, key=lambda c: timings[c][0] if isinstance(timings[c], list) else timings[c])
                if os.environ.get("TRITON_PRINT_AUTOTUNING") == "1":
                    print(f"Triton autotuning for function {self.__name__} finished after {time.time() - t0:.2f}s; "
                          f"best config selected: {best};")
            else:
                best = configs[0]
            self.cache[key] = best
        config = self.cache[key]
        self.best_config = config
        full = {**kwargs, **config.all_kwargs()}
        if config.pre_hook:
            config.pre_hook({**nargs, **full})
        return self.fn.run(*args, grid=grid, **full)

    def warmup(self, *args, **kwargs):
        return [self.fn.warmup(*args, **{**kwargs, **c.all_kwargs()}) for c in self.configs]


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    def decorator(fn):
        return Autotuner(fn, _arg_names(fn), configs, key, reset_to_zero, restore_value, pre_hook, post_hook,
                         prune_configs_by, warmup, rep, use_cuda_graph, do_bench, cache_results)
    return decorator


class Heuristics:
    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.arg_names = arg_names
        self.values = values
        self.__name__ = getattr(fn, "__name__", "kernel")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def run(self, *args, grid, **kwargs):
        for v, heur in self.values.items():
            kwargs[v] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, grid=grid, **kwargs)

    def warmup(self, *args, **kwargs):
        for v, heur in self.values.items():
            kwargs[v] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.warmup(*args, **kwargs)


def heuristics(values):
    def decorator(fn):
        return Heuristics(fn, _arg_names(fn), values)
    return decorator


def _arg_names(fn):
    if hasattr(fn, "arg_names"):
        return fn.arg_names
    return list(inspect.signature(fn.fn if hasattr(fn, "fn") else fn).parameters)
