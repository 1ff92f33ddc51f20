"""triton.knobs: runtime hooks and switches read by the launcher and Proton."""
import os


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


class _RuntimeKnobs:
    """launch_enter_hook / launch_exit_hook are called around every kernel launch
    with the launch metadata (a LazyDict); a callable, a HookChain, or None. Setting
    either (or adding to a HookChain set here) turns the C launcher's hook path on."""

    def __init__(self):
        self._enter = None
        self._exit = None
        self.jit_cache_hook = None
        self.jit_post_compile_hook = None
        self.kernel_load_start_hook = None
        self.kernel_load_end_hook = None
        self.kernel_unload_hook = None
        self.interpret = False
        self._debug = None

    @property
    def debug(self):
        """TRITON_DEBUG: device_assert is compiled into every kernel. Read from the
        environment until set in code (None goes back to it); refresh_knobs() re-reads."""
        return _env_bool("TRITON_DEBUG") if self._debug is None else bool(self._debug)

    @debug.setter
    def debug(self, value):
        self._debug = value
        _sync_compile_variant()

    def _sync(self):
        from triton._C import tritium as _C
        _C.set_launch_hooks(bool(self._enter is not None and (not isinstance(self._enter, HookChain) or self._enter))
                            or bool(self._exit is not None and (not isinstance(self._exit, HookChain) or self._exit)))

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


def _env_bool(name, default=False):
    v = os.environ.get(name)
    if v is None:
        return default
    return v.strip().lower() in ("1", "true", "on", "yes")


def _env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


class _ProtonKnobs:
    """triton.knobs.proton. Each knob reads its environment variable until it is set
    in code (as upstream's knobs do); setting it to None goes back to the variable.

    `disable` (TRITON_PROTON_DISABLE, alias TRITON_DISABLE_PROTON): proton.start()
    returns None. The others are upstream's GPU knobs, accepted with their upstream
    defaults so code that sets them runs unchanged; the CPU profiler has no NVTX
    ranges, activity buffers, hardware traces or CUPTI, so they change nothing here."""

    _ENV = {
        "disable": (lambda: _env_bool("TRITON_PROTON_DISABLE") or _env_bool("TRITON_DISABLE_PROTON")),
        "enable_nvtx": (lambda: _env_bool("TRITON_ENABLE_NVTX", True)),
        "profile_buffer_size": (lambda: _env_int("TRITON_PROFILE_BUFFER_SIZE", 64 * 1024 * 1024)),
        "profile_metric_buffer_size": (lambda: _env_int("TRITON_PROFILE_METRIC_BUFFER_SIZE", 64 * 1024 * 1024)),
        "enable_hw_trace": (lambda: _env_bool("TRITON_ENABLE_HW_TRACE")),
        "cupti_lib_dir": (lambda: os.environ.get("TRITON_CUPTI_LIB_PATH")),
        "cupti_lib_blackwell_dir": (lambda: os.environ.get("TRITON_CUPTI_LIB_BLACKWELL_PATH")),
    }

    def __init__(self):
        object.__setattr__(self, "_set", {})

    def __getattr__(self, name):
        env = type(self)._ENV.get(name)
        if env is None:
            raise AttributeError(name)
        if name in self._set:
            return self._set[name]
        return env()

    def __setattr__(self, name, value):
        if name not in type(self)._ENV:
            raise AttributeError(f"triton.knobs.proton has no knob {name!r}")
        if value is None:
            self._set.pop(name, None)
        else:
            self._set[name] = value

    def reset(self):
        self._set.clear()
        return self


class _CompilationKnobs:
    def __init__(self):
        self.instrumentation_mode = ""
        self.always_compile = False


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


runtime = _RuntimeKnobs()
proton = _ProtonKnobs()
compilation = _CompilationKnobs()
_sync_compile_variant()
