"""triton.knobs: runtime hooks and switches read by the launcher and Proton."""


class _RuntimeKnobs:
    """launch_enter_hook / launch_exit_hook are called around every kernel launch
    with the launch metadata (a LazyDict); setting either turns the C launcher's
    hook path on."""

    def __init__(self):
        self._enter = None
        self._exit = None
        self.jit_cache_hook = None
        self.jit_post_compile_hook = None
        self.kernel_load_start_hook = None
        self.kernel_load_end_hook = None
        self.interpret = False

    def _sync(self):
        from triton._C import tritium as _C
        _C.set_launch_hooks(self._enter is not None or self._exit is not None)

    @property
    def launch_enter_hook(self):
        return self._enter

    @launch_enter_hook.setter
    def launch_enter_hook(self, f):
        self._enter = f
        self._sync()

    @property
    def launch_exit_hook(self):
        return self._exit

    @launch_exit_hook.setter
    def launch_exit_hook(self, f):
        self._exit = f
        self._sync()


class _ProtonKnobs:
    def __init__(self):
        import os
        self.disable = os.environ.get("TRITON_PROTON_DISABLE", os.environ.get("TRITON_DISABLE_PROTON", "0")) in (
            "1", "true", "True", "on")


class _CompilationKnobs:
    def __init__(self):
        self.instrumentation_mode = ""
        self.always_compile = False


runtime = _RuntimeKnobs()
proton = _ProtonKnobs()
compilation = _CompilationKnobs()
