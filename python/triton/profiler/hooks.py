"""triton.profiler.hooks: Hook, HookManager, LaunchHook (upstream semantics,
reference/proton.md §1.7).

While any hook is active, HookManager puts its enter/exit on
triton.knobs.runtime.launch_enter_hook / launch_exit_hook (the C launcher then calls
them around each launch). It never replaces a hook the user set there: a HookChain
already on the knob gets HookManager added to it; a plain function is wrapped with
HookManager in a new HookChain, and put back when the last hook is deactivated.
"""
from __future__ import annotations

import contextvars
import re


class Hook:
    priority = 0

    def init_handle(self, module, function, name, metadata_group, hash):
        pass

    def destroy_handle(self, module, function):
        pass

    def activate(self):
        pass

    def deactivate(self):
        pass

    def enter(self, metadata):
        pass

    def exit(self, metadata):
        pass


class LazyDict(dict):
    """Launch metadata: {'name', 'function', 'stream'} plus the kernel's
    launch_metadata function's result, evaluated on first get()."""

    def __init__(self, data):
        super().__init__(data)
        self._fns = []

    def add(self, fn, args):
        self._fns.append((fn, args))

    def get(self, key=None, default=None):
        while self._fns:
            fn, args = self._fns.pop(0)
            r = fn(*args)
            if r:
                self.update(r)
        if key is None:
            return dict(self)
        return super().get(key, default)


class LaunchHook(Hook):
    """hook="triton": kernels are named and get flops*/bytes from launch_metadata.

    The metadata function runs under metadata_state(<kernel>), so kernels it launches
    are recorded below `__proton_launch_metadata/<kernel>`; a launch made while this
    hook is already handling one (on this thread or task: a ContextVar) is not treated
    as a new op."""

    priority = 100
    _instance = None
    include = None
    exclude = None
    in_hook = contextvars.ContextVar("proton_launch_hook_in_hook", default=False)

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def configure(self, include=None, exclude=None):
        self.include = re.compile(include) if include else None
        self.exclude = re.compile(exclude) if exclude else None

    def _wanted(self, name):
        if self.include is not None and not self.include.match(name):
            return False
        if self.exclude is not None and self.exclude.match(name):
            return False
        return True

    def enter(self, metadata):
        from triton._C import tritium as _C
        from .state import metadata_state
        if LaunchHook.in_hook.get():  # launched from inside a launch_metadata function
            return
        raw = dict.get(metadata, "name", "")
        if not self._wanted(raw):  # filter on the kernel's own name, before launch_metadata runs
            return
        token = LaunchHook.in_hook.set(True)
        try:
            with metadata_state(raw):
                data = metadata.get() if isinstance(metadata, LazyDict) else dict(metadata)
        finally:
            LaunchHook.in_hook.reset(token)
        kname = data.get("name", raw)
        if not isinstance(kname, str):
            kname = raw
        metrics = {}
        for k, v in data.items():
            if k in ("name", "function", "stream"):
                continue
            if isinstance(v, bool) or isinstance(v, (int, float)):
                metrics[k] = v
            elif hasattr(v, "item"):
                metrics[k] = v.item()
        _C.pn_next_launch(kname, metrics)

    def exit(self, metadata):
        pass


class InstrumentationHook(Hook):
    priority = 0
    _active = False

    def __init__(self, mode=None):
        self.mode = mode

    def activate(self):
        import triton.knobs as knobs
        from .flags import flags
        if InstrumentationHook._active:
            raise RuntimeError("Only one instance of the instrumentation hook can be active at a time.")
        InstrumentationHook._active = True
        flags.instrumentation_on = True
        from . import mode as _mode
        knobs.compilation.instrumentation_mode = str(self.mode) if self.mode else str(_mode.Default())

    def deactivate(self):
        import triton.knobs as knobs
        from .flags import flags
        InstrumentationHook._active = False
        flags.instrumentation_on = False
        knobs.compilation.instrumentation_mode = ""


class HookManager:
    active_hooks: list = []
    session_hooks: dict = {}

    @staticmethod
    def register(hook, session):
        HookManager.session_hooks.setdefault(session, {})[hook] = True
        if hook not in HookManager.active_hooks:
            hook.activate()
            HookManager.active_hooks.append(hook)
            HookManager.active_hooks.sort(key=lambda h: -h.priority)
        HookManager._install()

    @staticmethod
    def unregister(session=None):
        sessions = list(HookManager.session_hooks) if session is None else [session]
        for s in sessions:
            HookManager.session_hooks.pop(s, None)
        HookManager._refresh()

    @staticmethod
    def activate(session=None):
        sessions = list(HookManager.session_hooks) if session is None else [session]
        for s in sessions:
            for h in HookManager.session_hooks.get(s, {}):
                HookManager.session_hooks[s][h] = True
        HookManager._refresh()

    @staticmethod
    def deactivate(session=None):
        sessions = list(HookManager.session_hooks) if session is None else [session]
        for s in sessions:
            for h in HookManager.session_hooks.get(s, {}):
                HookManager.session_hooks[s][h] = False
        HookManager._refresh()

    @staticmethod
    def _refresh():
        wanted = []
        for hooks in HookManager.session_hooks.values():
            for h, on in hooks.items():
                if on and h not in wanted:
                    wanted.append(h)
        for h in list(HookManager.active_hooks):
            if h not in wanted:
                h.deactivate()
                HookManager.active_hooks.remove(h)
        for h in wanted:
            if h not in HookManager.active_hooks:
                h.activate()
                HookManager.active_hooks.append(h)
        HookManager.active_hooks.sort(key=lambda h: -h.priority)
        HookManager._install()

    @staticmethod
    def enter(metadata):
        for h in HookManager.active_hooks:
            h.enter(metadata)

    @staticmethod
    def exit(metadata):
        for h in reversed(HookManager.active_hooks):
            h.exit(metadata)

    # per knob: (the HookChain HookManager put there or joined, what was there before)
    _installed: dict = {}

    @staticmethod
    def _install():
        import triton.knobs as knobs
        for attr, fn, rev in (("launch_enter_hook", HookManager.enter, False),
                              ("launch_exit_hook", HookManager.exit, True)):
            cur = getattr(knobs.runtime, attr)
            mine = HookManager._installed.get(attr)
            if HookManager.active_hooks:
                if isinstance(cur, knobs.HookChain):
                    if fn not in cur:
                        cur.add(fn)
                    if mine is None or mine[0] is not cur:
                        HookManager._installed[attr] = (cur, cur)  # the user's chain: joined
                else:  # None or a user's own function: wrap it, keep it first
                    chain = knobs.HookChain(reversed=rev)
                    if cur is not None:
                        chain.add(cur)
                    chain.add(fn)
                    setattr(knobs.runtime, attr, chain)
                    HookManager._installed[attr] = (chain, cur)
            elif mine is not None:
                chain, before = HookManager._installed.pop(attr)
                if cur is chain and before is not chain:  # ours: put back what the user had
                    setattr(knobs.runtime, attr, before)
                elif isinstance(cur, knobs.HookChain):  # the user's chain: leave only theirs
                    cur.remove(fn)
