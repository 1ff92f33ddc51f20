"""triton.runtime.driver: the active driver (`set_active`, `active`).

Tritium runs on the CPU only; the active driver defaults to the CPUDriver, so calling
a kernel before `set_active(CPUDriver())` also works.
"""


class _DriverProxy:
    def __init__(self):
        self._active = None
        self._default = None

    def _get(self):
        if self._active is not None:
            return self._active
        if self._default is None:
            from triton.backends.spine_triton.driver import CPUDriver
            self._default = CPUDriver()
        return self._default

    @property
    def active(self):
        return self._get()

    def set_active(self, d):
        self._active = d

    def reset_active(self):
        self._active = None

    @property
    def default(self):
        if self._default is None:
            from triton.backends.spine_triton.driver import CPUDriver
            self._default = CPUDriver()
        return self._default


driver = _DriverProxy()


def __getattr__(name):
    if name == "active":
        return driver.active
    if name == "default":
        return driver.default
    raise AttributeError(name)


def set_active(d):
    driver.set_active(d)


def reset_active():
    driver.reset_active()
