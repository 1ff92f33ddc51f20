"""triton.knobs: runtime hooks and switches read by the launcher and Proton."""
import os
import sys
import types

from ._knobs_base import (base_knobs, env, env_base, env_bool, env_int, env_opt_bool, env_opt_int,  # noqa: F401
                          env_opt_str, env_str)

# When true, setting a knob also writes its environment variable (upstream's switch;
# its fresh_knobs fixture turns it on). Off by default here: docs/python.md.
propagate_env = False


class HookChain:
    """Several launch hooks behind one knob (upstream's HookChain): `add(fn)`,
    `remove(fn)`, calling it calls every hook in order (in reverse order for the
    exit chain). Proton's HookManager puts itself on the launch knobs this way, next
    to a user's own hook, instead of replacing it."""

    def __init__(self, reversed=False):  # noqa: A002 (upstream name)
        self.calls = []
        self.reversed = reversed
        self._on_change = None

    def add(self, func):
        if func not in self.calls:
            self.calls.append(func)
            self._changed()

    def remove(self, func):
        if func in self.calls:
            self.calls.remove(func)
            self._changed()

    def _changed(self):
        if self._on_change is not None:
            self._on_change()

    def __bool__(self):
        return bool(self.calls)

    def __len__(self):
        return len(self.calls)

    def __contains__(self, func):
        return func in self.calls

    def __call__(self, *args, **kwargs):
        for call in (reversed(self.calls) if self.reversed else list(self.calls)):
            call(*args, **kwargs)


def _debug_changed(_obj):
    _sync_compile_variant()


class _RuntimeKnobs(base_knobs):
    """launch_enter_hook / launch_exit_hook are called around every kernel launch
    with the launch metadata (a LazyDict); a callable, a HookChain, or None. Setting
    either (or adding to a HookChain set here) turns the C launcher's hook path on.
    `debug` (TRITON_DEBUG): device_assert is compiled into every kernel."""

    debug: env_bool = env_bool("TRITON_DEBUG", on_set=_debug_changed)
    _plain = {"_enter": None, "_exit": None, "jit_cache_hook": None, "jit_post_compile_hook": None,
              "kernel_load_start_hook": None, "kernel_load_end_hook": None, "kernel_unload_hook": None,
              "interpret": False}

    def _sync(self):
        from triton._C import tritium as _C
        _C.set_launch_hooks(bool(self._enter is not None and (not isinstance(self._enter, HookChain) or self._enter))
                            or bool(self._exit is not None and (not isinstance(self._exit, HookChain) or self._exit)))

    def _after_reset(self):
        if self is runtime:
            self._sync()
            _sync_compile_variant()

    def _set(self, attr, f):
        setattr(self, attr, f)
        if isinstance(f, HookChain):
            f._on_change = self._sync
        self._sync()

    @property
    def launch_enter_hook(self):
        return self._enter

    @launch_enter_hook.setter
    def launch_enter_hook(self, f):
        self._set("_enter", f)

    @property
    def launch_exit_hook(self):
        return self._exit

    @launch_exit_hook.setter
    def launch_exit_hook(self, f):
        self._set("_exit", f)


class _env_disable(env_bool):
    """TRITON_PROTON_DISABLE, or its alias TRITON_DISABLE_PROTON."""

    def env_value(self):
        return any(os.environ.get(k, "").strip().lower() in ("1", "true", "on", "yes", "y")
                   for k in (self.key, "TRITON_DISABLE_PROTON"))


class _ProtonKnobs(base_knobs):
    """triton.knobs.proton. Each knob reads its environment variable until it is set
    in code (as upstream's knobs do); setting it to None goes back to the variable.

    `disable` (TRITON_PROTON_DISABLE, alias TRITON_DISABLE_PROTON): proton.start()
    returns None. The others are upstream's GPU knobs, accepted with their upstream
    defaults so code that sets them runs unchanged; the CPU profiler has no NVTX
    ranges, activity buffers, hardware traces or CUPTI, so they change nothing here."""

    disable: env_bool = _env_disable("TRITON_PROTON_DISABLE")
    enable_nvtx: env_bool = env_bool("TRITON_ENABLE_NVTX", True)
    profile_buffer_size: env_int = env_int("TRITON_PROFILE_BUFFER_SIZE", 64 * 1024 * 1024)
    profile_metric_buffer_size: env_int = env_int("TRITON_PROFILE_METRIC_BUFFER_SIZE", 64 * 1024 * 1024)
    enable_hw_trace: env_bool = env_bool("TRITON_ENABLE_HW_TRACE")
    cupti_lib_dir: env_opt_str = env_opt_str("TRITON_CUPTI_LIB_PATH")
    cupti_lib_blackwell_dir: env_opt_str = env_opt_str("TRITON_CUPTI_LIB_BLACKWELL_PATH")

    def __setattr__(self, name, value):
        if not name.startswith("_") and name not in self.knob_descriptors:
            raise AttributeError(f"triton.knobs.proton has no knob {name!r}")
        object.__setattr__(self, name, value)


class _CompilationKnobs(base_knobs):
    """`instrumentation_mode`: what Proton's instrumentation compiles in ("" = none);
    `always_compile` mirrors TRITON_ALWAYS_COMPILE, which the compiler reads itself
    (setting it in code takes effect only through propagate_env)."""

    instrumentation_mode: env_str = env_str("TRITON_INSTRUMENTATION_MODE", "")
    always_compile: env_bool = env_bool("TRITON_ALWAYS_COMPILE")


def _sync_compile_variant():
    """Tells the launcher which process-wide switches change what kernels compile to
    (bit 0: Proton instrumentation, bit 1: debug), so that its specialisation cache
    picks the matching variant."""
    try:
        from triton._C import tritium
        from triton.profiler.flags import flags
    except ImportError:
        return
    tritium.set_compile_variant((1 if flags.instrumentation_on else 0) | (2 if runtime.debug else 0))


def refresh_knobs():
    """Re-reads the knobs that follow environment variables (upstream's name)."""
    _sync_compile_variant()


class _LanguageKnobs(base_knobs):
    """`default_fp_fusion` (TRITON_DEFAULT_FP_FUSION): accepted; Tritium's kernels
    follow each kernel's own enable_fp_fusion option (docs/python.md)."""

    default_fp_fusion: env_bool = env_bool("TRITON_DEFAULT_FP_FUSION", True)


def _home():
    return cache.home_dir


class _CacheKnobs(base_knobs):
    """`home_dir` (TRITON_HOME), `dir` (TRITON_CACHE_DIR, default home/.triton/cache)
    as upstream names them. Tritium's caches read the variables themselves, so a value
    set in code reaches them only through propagate_env."""

    home_dir: env_str = env_str("TRITON_HOME", lambda: os.path.expanduser("~/"))
    dir: env_str = env_str("TRITON_CACHE_DIR", lambda: os.path.join(_home(), ".triton", "cache"))
    dump_dir: env_str = env_str("TRITON_DUMP_DIR", lambda: os.path.join(_home(), ".triton", "dump"))
    override_dir: env_str = env_str("TRITON_OVERRIDE_DIR", lambda: os.path.join(_home(), ".triton", "override"))
    manager_class: env_opt_str = env_opt_str("TRITON_CACHE_MANAGER")


class _GpuKnobs(base_knobs):
    """upstream's `amd`, `nvidia` and `build` knob sets: GPU toolchain switches that a
    CPU compiler has no use for; empty sets, so upstream's fixtures (which scope and
    copy them) run."""


class _AmdKnobs(_GpuKnobs):
    use_buffer_ops: env_bool = env_bool("AMDGCN_USE_BUFFER_OPS", True)
    use_buffer_atomics: env_bool = env_bool("AMDGCN_USE_BUFFER_ATOMICS", True)


class _KnobsModule(types.ModuleType):
    """Re-syncs the C launcher's hook switch and compile variant when a knob set is
    replaced (upstream's fresh_knobs swaps `triton.knobs.runtime` for a copy)."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "runtime" and isinstance(value, _RuntimeKnobs):
            value._sync()
            _sync_compile_variant()


runtime = _RuntimeKnobs()
proton = _ProtonKnobs()
compilation = _CompilationKnobs()
language = _LanguageKnobs()
cache = _CacheKnobs()
amd = _AmdKnobs()
nvidia = _GpuKnobs()
build = _GpuKnobs()
sys.modules[__name__].__class__ = _KnobsModule
_sync_compile_variant()
