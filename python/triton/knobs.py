"""triton.knobs: runtime hooks and switches read by the launcher and Proton."""


class _RuntimeKnobs:
    def __init__(self):
        self.launch_enter_hook = None
        self.launch_exit_hook = None
        self.jit_cache_hook = None
        self.jit_post_compile_hook = None
        self.kernel_load_start_hook = None
        self.kernel_load_end_hook = None
        self.interpret = False


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
