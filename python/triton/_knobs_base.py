"""The machinery of triton.knobs (upstream's names): env_* descriptors and base_knobs.

A knob is a class attribute `name: env_bool = env_bool("VAR", default)` of a
base_knobs subclass. Reading it returns the value set in code on that instance, else
the environment variable parsed, else the default. Setting None or `del` goes back to
the variable (so does setting triton.knobs.env). When triton.knobs.propagate_env is true (upstream's `fresh_knobs`
fixture sets it), setting a knob also writes its variable (None unsets it); it is
false by default here, so setting a knob in code never leaks into child processes.

base_knobs gives `knobs` (a dict of every knob's value), `knob_descriptors`,
`copy()`, `reset()` (drops what code set, returns self) and `scope()` (a context
manager that puts back on exit what was set on entry). Plain attributes of a knob
set (hooks) are listed in the class's `_plain` dict of defaults and are copied and
reset the same way.
"""
import contextlib
import copy as _copy
import os

_TRUE = ("1", "true", "on", "yes", "y")


class _Env:
    """triton.knobs.env: setting a knob to it goes back to the variable (as None does)."""

    def __repr__(self):
        return "triton.knobs.env"


env = _Env()


def _propagating():
    from triton import knobs
    return bool(getattr(knobs, "propagate_env", False))


class env_base:
    """One knob following environment variable `key`; `on_set(instance)` runs after
    a change made in code."""

    def __init__(self, key, default=None, on_set=None):
        self.key = key
        self.default = default
        self.on_set = on_set
        self.name = key

    def __set_name__(self, owner, name):
        self.name = name

    def parse(self, text):
        return text

    def to_env(self, value):
        return str(value)

    def env_value(self):
        text = os.environ.get(self.key)
        if text is None:
            return self.default() if callable(self.default) else self.default
        return self.parse(text)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        set_ = obj.__dict__.get("_knob_set", {})
        return set_[self.name] if self.name in set_ else self.env_value()

    def __set__(self, obj, value):
        set_ = obj.__dict__.setdefault("_knob_set", {})
        if value is None or value is env:
            set_.pop(self.name, None)
            if _propagating():
                os.environ.pop(self.key, None)
        else:
            set_[self.name] = value
            if _propagating():
                os.environ[self.key] = self.to_env(value)
        if self.on_set is not None:
            self.on_set(obj)

    def __delete__(self, obj):
        """Back to the environment variable, which is left as it is."""
        obj.__dict__.setdefault("_knob_set", {}).pop(self.name, None)
        if self.on_set is not None:
            self.on_set(obj)


class env_str(env_base):
    pass


class env_opt_str(env_base):
    pass


class env_bool(env_base):
    def __init__(self, key, default=False, on_set=None):
        super().__init__(key, default, on_set)

    def parse(self, text):
        return text.strip().lower() in _TRUE

    def to_env(self, value):
        return "1" if value else "0"


class env_opt_bool(env_bool):
    def __init__(self, key, default=None, on_set=None):
        super().__init__(key, default, on_set)


class env_int(env_base):
    def __init__(self, key, default=0, on_set=None):
        super().__init__(key, default, on_set)

    def parse(self, text):
        try:
            return int(text)
        except ValueError:
            return self.default


class env_opt_int(env_int):
    def __init__(self, key, default=None, on_set=None):
        super().__init__(key, default, on_set)


class base_knobs:
    _plain = {}

    def __init__(self):
        self.__dict__["_knob_set"] = {}
        for name, default in type(self)._plain.items():
            setattr(self, name, _copy.copy(default))

    @property
    def knob_descriptors(self):
        out = {}
        for klass in reversed(type(self).__mro__):
            for name, v in vars(klass).items():
                if isinstance(v, env_base):
                    out[name] = v
        return out

    @property
    def knobs(self):
        return {name: getattr(self, name) for name in self.knob_descriptors}

    def copy(self):
        new = _copy.copy(self)
        new.__dict__["_knob_set"] = dict(self.__dict__.get("_knob_set", {}))
        return new

    def reset(self):
        self.__dict__["_knob_set"] = {}
        for name, default in type(self)._plain.items():
            setattr(self, name, _copy.copy(default))
        self._after_reset()
        return self

    def _after_reset(self):
        pass

    @contextlib.contextmanager
    def scope(self):
        saved_set = dict(self.__dict__.get("_knob_set", {}))
        saved_plain = {name: getattr(self, name) for name in type(self)._plain}
        saved_env = {d.key: os.environ.get(d.key) for d in self.knob_descriptors.values()}
        try:
            yield self
        finally:
            self.__dict__["_knob_set"] = saved_set
            for name, v in saved_plain.items():
                setattr(self, name, v)
            if _propagating():
                for key, v in saved_env.items():
                    if v is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = v
            self._after_reset()
