"""@triton.jit and JITFunction.

JITFunction extends the C type triton._C.tritium.Kernel, which binds launch
arguments, keys specialisations and launches without running Python code once a
specialisation is compiled. On a miss, the C launcher calls `_compile_spec` here.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import re
import textwrap

from triton._C import tritium as _C
from triton._utils import type_canonicalisation_dict  # noqa: F401 (upstream's name)
from triton.language import core as tl


def _float_annotation(ann):
    """The float dtype name ("fp16", "bf16", "fp32", "fp64") a parameter annotation
    names (`alpha: tl.float16`, or the string "tl.float16" / "fp16"), else None. Such
    a parameter is passed in that type, as upstream's signature type."""
    if isinstance(ann, str):
        ann = tl._BY_NAME.get(ann.split(".")[-1])
    return ann.name if isinstance(ann, tl.dtype) and ann.is_floating() else None


class KernelParam:
    def __init__(self, num, param: inspect.Parameter, do_not_specialize, dns_align):
        self.num = num
        self.name = param.name
        self._param = param
        ann = param.annotation
        self.annotation = ann
        self.is_constexpr = (ann is tl.constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr"))
        self.float_kind = _float_annotation(ann)
        self.do_not_specialize = do_not_specialize
        self.do_not_specialize_on_alignment = dns_align
        self.default = param.default
        self.has_default = param.default is not inspect.Parameter.empty


_torch_dtypes_registered = False
_ARRAY_NAMES = {"int1": "bool", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
                "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz",
                "fp8e5b16": "float8_e5m2fnuz"}


def _register_torch_dtypes():
    """Tells the C launcher which tensor dtype objects map to which dtype codes.

    torch's dtypes are registered only once torch is imported (by the script: a
    torch tensor cannot exist before), so `import triton` does not import torch
    (~1 s) for numpy-only scripts. The launcher calls _refresh_dtypes when it meets
    a dtype it does not know. Returns whether torch's dtypes are in the map."""
    global _torch_dtypes_registered
    import sys
    m = {}
    # torch's and numpy's name of each tl dtype; the codes are tl's (IrDtype)
    codes = {_ARRAY_NAMES.get(d.name, d.name): d.code for d in tl._DTYPES}
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "float32"):  # not a half-imported torch
        for name, code in codes.items():
            t = getattr(torch, name, None)
            if t is not None:
                m[t] = code
        _torch_dtypes_registered = True
    try:
        import numpy as np
        for name, code in codes.items():
            if name == "bfloat16" or name.startswith(("float8", "fp8")):
                continue
            m[np.dtype(name)] = code
            m[str(np.dtype(name))] = code
    except ImportError:
        pass
    for d in tl._DTYPES:
        m[d] = d.code
    _C.set_dtype_map(m)
    return _torch_dtypes_registered


def _refresh_dtypes():
    """Called by the launcher on an unknown dtype: registers torch's dtypes if torch
    has been imported since. True when the map changed (the launcher looks again)."""
    return not _torch_dtypes_registered and _register_torch_dtypes()


class KernelInterface:
    """Upstream's base of launchable kernels: `kernel[grid](*args)` calls
    `kernel.run(*args, grid=grid, warmup=False)`. JITFunction gets its `[grid]` from the
    C launcher; this class is here for code that checks for it or subclasses it
    (torch's inductor)."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)


class JITFunction(_C.Kernel, KernelInterface):
    """A kernel (or a helper called from kernels) decorated with @triton.jit."""

    def __init__(self, fn, version=None, do_not_specialize=None, do_not_specialize_on_alignment=None, debug=None,
                 noinline=None, repr=None, launch_metadata=None):
        self.fn = fn
        self.module = fn.__module__
        self.version = version
        sig = inspect.signature(fn)
        dns = set(do_not_specialize or ())
        dnsa = set(do_not_specialize_on_alignment or ())
        names = list(sig.parameters)
        dns = {names[d] if isinstance(d, int) else d for d in dns}
        dnsa = {names[d] if isinstance(d, int) else d for d in dnsa}
        self.params = [KernelParam(i, p, p.name in dns, p.name in dnsa) for i, p in enumerate(sig.parameters.values())]
        self.arg_names = [p.name for p in self.params]
        self.constexprs = [p.num for p in self.params if p.is_constexpr]
        self.debug = debug
        self.noinline = noinline
        self._repr = repr
        self.launch_metadata = launch_metadata
        self.repr = (lambda _: fn.__name__) if repr is None else repr  # upstream: repr(fn) -> str
        self.used_global_vals = {}
        super().__init__(fn.__name__, self.arg_names, [p.is_constexpr for p in self.params],
                         [p.do_not_specialize for p in self.params],
                         [p.default if p.has_default else ... for p in self.params],
                         [p.float_kind for p in self.params])
        # source, starting at the `def` line (decorators stripped), for AST and errors
        try:
            lines, start = inspect.getsourcelines(fn)
            src = textwrap.dedent("".join(lines))
            m = re.search(r"^def\s+\w+\s*\(", src, re.MULTILINE)
            off = src[:m.start()].count("\n") if m else 0
            self.src = src[m.start():] if m else src
            self.def_line = start + off
        except (OSError, TypeError):
            self.src, self.def_line = "", 1
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        self._tree = None
        self._hash = None
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__globals__ = fn.__globals__
        self.__wrapped__ = fn

    # ---- source and identity -------------------------------------------------------------

    def _unsafe_update_src(self, new_src):
        """Replaces the kernel's source (upstream's name; its tests patch kernels this
        way). Only for a function not launched yet: compiled specialisations are kept
        in memory by signature."""
        self.src = new_src
        self._tree = None
        self._hash = None

    def parse(self):
        if self._tree is None:
            if not self.src:
                raise RuntimeError(f"cannot read the source of {self.__name__}")
            self._tree = ast.parse(self.src)
        return self._tree

    @property
    def cache_key(self):
        """sha256 of the source, of every @jit function it calls and of the constexpr
        globals it reads."""
        if self._hash is None:
            h = hashlib.sha256(self.src.encode())
            h.update(str(self.def_line).encode())
            try:
                names = {n.id for n in ast.walk(self.parse()) if isinstance(n, ast.Name)}
                names |= {n.value.id for n in ast.walk(self.parse())
                          if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
            except SyntaxError:
                names = set()
            self._hash = "pending"
            from triton.compiler.code_generator import _closure_vars
            closure = _closure_vars(self.fn)
            for name in sorted(names):
                v = closure[name] if name in closure else self.fn.__globals__.get(name)
                if isinstance(v, JITFunction) and v is not self:
                    key = v.cache_key
                    h.update(f"{name}:{key}".encode())
                elif isinstance(v, (int, float, bool, str)) or isinstance(v, tl.constexpr):
                    h.update(f"{name}={tl._unwrap(v)!r}".encode())
            self._hash = h.hexdigest()
        return self._hash

    def __repr__(self):
        return f"JITFunction({self.module}:{self.__qualname__})"

    def __reduce__(self):
        """Pickles as a _JITStub: what a launcher needs (names, parameters, source),
        not the Python function (torch's inductor pickles its kernels between its
        compile workers and the main process, which keeps the real one)."""
        return (_JITStub, (self.__name__, [(p.name, p.is_constexpr) for p in self.params], self.src))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Cannot call @triton.jit'd outside of the scope of a kernel")

    # ---- launching --------------------------------------------------------------------------

    def _compile_spec(self, spec, bound, debug=None):
        from triton.compiler.compiler import compile_specialization
        return compile_specialization(self, spec, bound, debug=debug)

    def run(self, *args, grid, warmup=False, **kwargs):
        if warmup:
            return self.warmup(*args, grid=grid, **kwargs)
        return self._launch(grid, *args, **kwargs)

    def warmup(self, *args, grid=None, **kwargs):
        from triton.compiler.compiler import CompiledKernel
        return CompiledKernel(self._specialization(*args, **kwargs), self)

    def _launch_tuples(self, grid, values, nthreads, debug, only_compile):
        """The C launcher's path for a launch with tuple arguments (values: every
        parameter's, bound): the tuples are flattened into the parameters of a twin
        kernel, one per tuple structure and kept, whose code generator rebuilds them
        (code_generator.generate), and the twin is launched."""
        layout = tuple(_tuple_layout(v) if not p.is_constexpr and isinstance(v, tuple) else None
                       for p, v in zip(self.params, values))
        twins = getattr(self, "_tuple_twins", None)
        if twins is None:
            twins = self._tuple_twins = {}
        twin = twins.get(layout)
        if twin is None:
            twin = twins[layout] = _TupleTwin(self, layout)
        flat = []
        for v, lay in zip(values, layout):
            flat.extend(_tuple_leaves(v) if lay is not None else [v])
        opts = {"num_threads": nthreads} if nthreads else {}
        if debug:
            opts["debug"] = debug == 2
        if only_compile:
            return twin._specialization(*flat, **opts)
        if callable(grid):
            grid = grid(dict(zip(self.arg_names, values)))
        return twin._launch(grid, *flat, **opts)

    # ---- inlining (calls from other kernels) -----------------------------------------------

    def bind_for_inline(self, args, kwargs):
        scope = {}
        if len(args) > len(self.params):
            raise TypeError(f"{self.__name__}() takes {len(self.params)} arguments but {len(args)} were given")
        for p, a in zip(self.params, args):
            scope[p.name] = tl.constexpr(a) if p.is_constexpr and not isinstance(a, tl.tensor) else a
        for k, v in kwargs.items():
            if k not in self.arg_names:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{k}'")
            if k in scope:
                raise TypeError(f"{self.__name__}() got multiple values for argument '{k}'")
            p = self.params[self.arg_names.index(k)]
            scope[k] = tl.constexpr(v) if p.is_constexpr and not isinstance(v, tl.tensor) else v
        for p in self.params:
            if p.name not in scope:
                if not p.has_default:
                    raise TypeError(f"{self.__name__}() missing a required argument: '{p.name}'")
                scope[p.name] = tl.constexpr(p.default) if p.is_constexpr else p.default
        return scope


def _tuple_layout(v):
    """The nesting of a tuple argument: (its class if a NamedTuple else None, one entry
    per item: None for a leaf, the layout of a nested tuple)."""
    cls = type(v) if hasattr(type(v), "_fields") else None
    return cls, tuple(_tuple_layout(e) if isinstance(e, tuple) else None for e in v)


def _tuple_leaves(v):
    out = []
    for e in v:
        out.extend(_tuple_leaves(e) if isinstance(e, tuple) else [e])
    return out


class _LeafParam:
    """A parameter of a _TupleTwin: one leaf of a tuple parameter (its path of indices)."""

    def __init__(self, num, parent, path):
        self.num = num
        self.name = parent.name + "".join(f"[{i}]" for i in path)
        self.tuple_param, self.path = parent.name, path
        self.annotation, self.is_constexpr, self.float_kind = None, False, None
        self.do_not_specialize = parent.do_not_specialize
        self.do_not_specialize_on_alignment = parent.do_not_specialize_on_alignment
        self.default, self.has_default = inspect.Parameter.empty, False


# what a _TupleTwin takes from its kernel (JITFunction.__init__ sets them)
_TWIN_SHARED = ("fn", "module", "version", "debug", "noinline", "_repr", "launch_metadata", "repr",
                "used_global_vals", "src", "def_line", "file", "__doc__", "__name__", "__qualname__", "__module__",
                "__globals__", "__wrapped__")


class _TupleTwin(JITFunction):
    """A kernel with its tuple parameters flattened (layout: _tuple_layout of each
    parameter, None for the others); generate() puts the tuples back together, so the
    kernel's body sees the tuples it was given."""

    def __init__(self, parent, layout):
        params = []

        def leaves(p, lay, path):
            for i, sub in enumerate(lay[1]):
                if sub is None:
                    params.append(_LeafParam(len(params), p, path + (i,)))
                else:
                    leaves(p, sub, path + (i,))

        for p, lay in zip(parent.params, layout):
            if lay is None:
                params.append(KernelParam(len(params), p._param, p.do_not_specialize,
                                          p.do_not_specialize_on_alignment))
            else:
                leaves(p, lay, ())
        _C.Kernel.__init__(self, parent.__name__, [p.name for p in params], [p.is_constexpr for p in params],
                           [p.do_not_specialize for p in params],
                           [p.default if p.has_default else ... for p in params], [p.float_kind for p in params])
        for k in _TWIN_SHARED:
            setattr(self, k, getattr(parent, k))
        self.params = params
        self.arg_names = [p.name for p in params]
        self.constexprs = [p.num for p in params if p.is_constexpr]
        self._tuple_layout = tuple(zip([p.name for p in parent.params], layout))
        self._parent = parent
        self._tree = self._hash = None

    @property
    def cache_key(self):
        return self._parent.cache_key + repr(self._tuple_layout)


class _StubParam:
    def __init__(self, num, name, is_constexpr):
        self.num, self.name, self.is_constexpr = num, name, is_constexpr


class _JITStub:
    """An unpickled JITFunction: name, parameters and source only (not launchable
    by itself; CompiledKernels that refer to it launch from the kernel cache)."""

    fn = None
    launch_metadata = None

    def __init__(self, name, params, src):
        self.__name__ = name
        self.params = [_StubParam(i, n, c) for i, (n, c) in enumerate(params)]
        self.arg_names = [p.name for p in self.params]
        self.constexprs = [p.num for p in self.params if p.is_constexpr]
        self.src = src
        self.repr = lambda _: name

    def __reduce__(self):
        return (_JITStub, (self.__name__, [(p.name, p.is_constexpr) for p in self.params], self.src))


def _kernel_metadata(compiled):
    """The compiled kernel's metadata (CompiledKernel.metadata: num_warps, num_ctas,
    num_stages, shared, ... as attributes), built once per specialisation."""
    info = getattr(compiled, "info", None)
    if info is None:
        return None
    md = getattr(info, "_hook_metadata", None)
    if md is None:
        from triton.compiler.compiler import _Metadata
        md = _Metadata(info.metadata)
        md.setdefault("name", info.name)
        info._hook_metadata = md
    return md


def _launch_hook_enter(kernel, grid, args, compiled=None):
    """Called by the C launcher before a launch while launch hooks are set: builds the
    launch metadata (a LazyDict) and calls launch_enter_hook with it. The kernel's
    launch_metadata function, if any, is queued as fn(grid, metadata, args) with the
    compiled kernel's metadata, as upstream."""
    import triton.knobs as knobs
    from triton.profiler.hooks import LazyDict
    meta = LazyDict({"name": kernel.__name__, "function": compiled, "stream": 0})
    fn = getattr(kernel, "launch_metadata", None)
    if fn is not None:
        meta.add(fn, (grid, _kernel_metadata(compiled), args))
    if knobs.runtime.launch_enter_hook is not None:
        knobs.runtime.launch_enter_hook(meta)
    return meta


def _launch_hook_exit(meta):
    import triton.knobs as knobs
    if knobs.runtime.launch_exit_hook is not None:
        knobs.runtime.launch_exit_hook(meta)


def jit(fn=None, *, version=None, repr=None, launch_metadata=None, do_not_specialize=None,
        do_not_specialize_on_alignment=None, debug=None, noinline=None):
    """Decorator for Triton kernels: `@triton.jit` or `@triton.jit(...)`."""

    def decorator(f):
        return JITFunction(f, version=version, do_not_specialize=do_not_specialize,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment, debug=debug,
                           noinline=noinline, repr=repr, launch_metadata=launch_metadata)

    if fn is not None:
        return decorator(fn)
    return decorator


class TensorWrapper:
    """A tensor viewed with another dtype (triton.reinterpret)."""

    def __init__(self, base, dtype):
        self.dtype = dtype
        self.base = base
        self.data = base.data if hasattr(base, "data") else None
        self.device = getattr(base, "device", "cpu")
        self.shape = base.shape

    def data_ptr(self):
        return self.base.data_ptr()

    def stride(self, i=None):
        return self.base.stride(i) if i is not None else self.base.stride()

    def numel(self):
        return self.base.numel()

    def element_size(self):
        return self.dtype.primitive_bitwidth // 8

    def __str__(self):
        return f"TensorWrapper[{self.dtype}]({self.base})"

    def cpu(self):
        return self  # tensors live on the CPU already

    def to(self, device):
        return TensorWrapper(self.base.to(device), self.dtype)

    def copy_(self, other):
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)
        return self

    def clone(self):
        return TensorWrapper(self.base.clone(), self.dtype)

    def new_empty(self, sizes):
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)


def reinterpret(tensor, dtype):
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype:
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    if hasattr(tensor, "data_ptr"):
        return TensorWrapper(tensor, dtype)
    raise TypeError(f"Cannot reinterpret a {type(tensor)}.")
