"""Compiling one kernel specialisation: cache lookup, code generation, dumps, loading.

The disk cache (TRITON_CACHE_DIR, default ~/.triton/cache) holds one directory per
key: the kernel .so, its metadata and every stage's text. The key covers the kernel
source and the @jit functions it calls, the specialisation (argument types,
alignment, constexpr values), the instrumentation flag, the target CPU and the
compiler build, so no cache clearing is ever needed.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings

from triton._C import tritium as _C
from triton.language import core as tl

# stage name → (cache file suffix, asm key in CompiledKernel.asm, dump file suffix)
_STAGES = [
    ("ttir", ".ttir", "ttir", "_tt.mlir"),
    ("linalg", ".linalg.mlir", "ttsharedir", "_linalg.mlir"),
    ("ll_mlir", ".ll.mlir", "llmlir", "_ll.mlir"),
    ("llir", ".ll", "llir", ".ll"),
    ("asm", ".s", "asm", ".s"),
]

_ROLE_DATA, _ROLE_KERNEL, _ROLE_META = 0, 1, 2


def _compiler_fingerprint():
    """Identity of the compiler build: version plus the size/mtime of the native
    libraries and of the Python front end that builds the IR (triton/language,
    triton/compiler): an upgrade of either never serves kernels compiled before it."""
    global _FINGERPRINT
    try:
        return _FINGERPRINT
    except NameError:
        pass
    d = os.path.dirname(_C.__file__)
    parts = [_C.version()]
    for name in sorted(os.listdir(d)):
        if name.endswith(".so"):
            st = os.stat(os.path.join(d, name))
            parts.append(f"{name}:{st.st_size}:{int(st.st_mtime)}")
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for sub in ("language", "compiler"):
        for root, dirs, files in os.walk(os.path.join(pkg, sub)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(root, name))
                    parts.append(f"{os.path.relpath(os.path.join(root, name), pkg)}:{st.st_size}:{int(st.st_mtime)}")
    _FINGERPRINT = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
    return _FINGERPRINT


def _target(arch=None):
    """The target CPU: arch None follows SPINE_TRITON_TARGET_ARCH (the host when unset);
    an unsupported architecture raises ValueError naming the supported ones."""
    return _C.target_info(arch)


def target_arch(target):
    """The architecture a GPUTarget names for the compiler: None (SPINE_TRITON_TARGET_ARCH,
    else the host) for upstream's GPUTarget("cpu", 0, 0), else its arch string
    ("riscv64", "x86_64", a spine-triton CPU name such as "spacemit-a60")."""
    a = getattr(target, "arch", None) if target is not None else None
    if a is None or isinstance(a, int) or a == "":
        return None
    return str(a)


def _instrumentation_on():
    try:
        from triton.profiler.flags import flags
        return bool(flags.instrumentation_on)
    except ImportError:
        return False


def _debug_on(jitfn, debug=None):
    """Whether device_assert is compiled in: TRITON_DEBUG (knobs.runtime.debug), else the
    launch option debug=, else @triton.jit(debug=...), as upstream."""
    import triton.knobs as knobs
    if knobs.runtime.debug:
        return True
    if debug is None:
        debug = getattr(jitfn, "debug", None)
    return bool(debug)


def cache_key(jitfn, spec, arch=None, debug=False):
    t = _target(arch)
    h = hashlib.sha256()
    h.update(jitfn.cache_key.encode())
    h.update(repr(spec).encode())
    if debug:
        h.update(b"debug")
    h.update(f"instrument={_instrumentation_on()}".encode())
    h.update(f"{t['triple']}|{t['cpu']}|{t['features']}|{t['vector_bytes']}".encode())
    h.update(_compiler_fingerprint().encode())
    return h.hexdigest()[:40]


def _always_compile():
    return os.environ.get("TRITON_ALWAYS_COMPILE", "0").lower() in ("1", "true", "yes", "on")


def _debug(msg):
    if os.environ.get("TRITIUM_DEBUG", "0").lower() in ("1", "true", "yes", "on"):
        print(f"[tritium] {msg}", file=sys.stderr)


def _dump(name, files):
    """Copies the stages to SPINE_TRITON_DUMP_PATH (created if missing)."""
    d = os.environ.get("SPINE_TRITON_DUMP_PATH")
    if not d:
        return
    os.makedirs(d, exist_ok=True)
    for stage, cache_suffix, _, dump_suffix in _STAGES:
        src = files.get(name + cache_suffix)
        if src:
            shutil.copyfile(src, os.path.join(d, name + dump_suffix))
    so = files.get(name + ".so")
    if so:
        shutil.copyfile(so, os.path.join(d, name + ".so"))


def _constexprs_json(jitfn, spec):
    out = {}
    for p, s in zip(jitfn.params, spec):
        if s[0] == "constexpr":
            v = s[1]
            out[p.name] = v if isinstance(v, (int, float, bool, str)) or v is None else str(v)
    return json.dumps(out)


def _build(jitfn, spec, arch=None, debug=False):
    """Traces the kernel and compiles it to a temporary .so; returns (stages, plan, tmpdir)."""
    from triton.compiler.code_generator import generate
    b = tl._Builder()
    b.debug = debug
    plan = generate(jitfn, b, spec)
    root = _C.cache_root()
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".build-", dir=root)
    so = os.path.join(tmp, jitfn.__name__ + ".so")
    try:
        stages = _C.compile(b.c, so, instrument=True, want_stages=True, arch=arch)
    except _C.BuilderError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _located(jitfn, str(e)) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return stages, plan, tmp, so


def _located(jitfn, text):
    """CompilationError for the first 'file:line:col: error: msg' diagnostic."""
    import re
    from triton.compiler.errors import CompilationError
    for line in text.splitlines():
        m = re.match(r"^(.*):(\d+):(\d+): error: (.*)$", line)
        if m:
            return CompilationError.at(jitfn, int(m.group(2)), int(m.group(3)), m.group(4))
    return CompilationError.at(jitfn, jitfn.def_line, 1, text)


def _store(key, jitfn, spec, stages, plan, so, replace, arch=None):
    name = jitfn.__name__
    meta = {
        "name": name,
        "plan": plan,
        "constexprs": json.loads(_constexprs_json(jitfn, spec)),
        "spec": [list(s) if s[0] != "constexpr" else ["constexpr", repr(s[1])] for s in spec],
        "cost": stages["cost"],
        "scopes": stages["scopes"],
        "remarks": [list(r) for r in stages["remarks"]],
        "times_ms": stages["times_ms"],
        "stream_bytes": stages.get("stream_bytes", 0),
        # spine-triton's flag: the kernel has smt.parallel loops bound to sub-blocks
        "smt_parallel_inside": "bind_sub_block = true" in (stages.get("ttir") or ""),
        "instrumented": _instrumentation_on(),
        "target": _target(arch),
    }
    files = [(name + ".so", _ROLE_KERNEL, None, so), (name + ".json", _ROLE_META, json.dumps(meta, indent=1), None),
             (name + ".o", _ROLE_DATA, stages["obj"], None)]
    for stage, suffix, _, _ in _STAGES:
        if stages.get(stage):
            files.append((name + suffix, _ROLE_DATA, stages[stage], None))
    return _C.cache_store(key, files, replace)


class KernelInfo:
    """Python-side description of a compiled specialisation (kept by the C object)."""

    def __init__(self, name, meta, files, key):
        self.name = name
        self.metadata = meta
        self.files = files
        self.key = key

    def stage(self, suffix):
        p = self.files.get(self.name + suffix)
        if not p:
            return None
        mode = "rb" if suffix in (".o", ".so") else "r"
        with open(p, mode) as f:
            return f.read()


def compile_specialization(jitfn, spec, bound, arch=None, dump=True, debug=None):
    """Called by the C launcher on an in-memory miss: returns a tritium.Compiled. With a
    target whose code cannot run in this process (arch, or SPINE_TRITON_TARGET_ARCH, naming
    another ISA), triton.compile() gets an UnloadedKernel instead (see below); the C
    launcher's path loads it and so raises the loader's error naming both ISAs."""
    dbg = _debug_on(jitfn, debug)
    key = cache_key(jitfn, spec, arch, dbg)
    name = jitfn.__name__
    hit = None
    corrupt = False
    if not _always_compile():
        r = _C.cache_lookup(key)
        if r[0] == "hit":
            hit = r
            _C.stats_add("disk_hits")
            _debug(f"disk cache hit {key} {name}")
        elif r[0] == "corrupt":
            warnings.warn(f"triton: the cached kernel {name} ({key}) is corrupt ({r[1]}); recompiling",
                          RuntimeWarning, stacklevel=3)
            _C.stats_add("corrupt_rebuilds")
            corrupt = True
    if hit is None:
        stages, plan, tmp, so = _build(jitfn, spec, arch, dbg)
        try:
            hit = _store(key, jitfn, spec, stages, plan, so, replace=_always_compile() or corrupt, arch=arch)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _C.stats_add("compiles")
        _debug(f"compiled {name} → {key} ({sum(stages['times_ms'].values()):.1f} ms)")
        for f, line, col, msg in stages["remarks"]:
            _debug(f"remark: {f}:{line}:{col}: {msg}")
    _, entry_dir, kernel_path, meta_text, files = hit
    meta = json.loads(meta_text)
    if dump:
        _dump(name, files)
    info = KernelInfo(name, meta, files, key)
    if bound is _NO_LOAD and not _target(arch)["loadable"]:
        return UnloadedKernel(kernel_path, meta, name, info)
    compiled = _load(kernel_path, meta, name, info)
    if meta.get("scopes") and meta.get("instrumented"):
        compiled.set_plain(_plain_twin(jitfn, spec, bound, arch, debug))
    return compiled


def _plain_twin(jitfn, spec, bound, arch, debug=None):
    """The kernel compiled without instrumentation (its own cache entry): an
    instrumented kernel runs it while nothing records, so its scopes' materialised
    values and record calls cost nothing then (docs/proton.md, in-kernel scopes)."""
    from triton.profiler.flags import flags
    saved = flags.instrumentation_on
    flags.instrumentation_on = False
    try:
        return compile_specialization(jitfn, spec, bound, arch, dump=False, debug=debug)  # the dump shows the instrumented one
    finally:
        flags.instrumentation_on = saved


_NO_LOAD = object()  # compile_specialization(bound=_NO_LOAD): triton.compile() may skip loading


def _load(kernel_path, meta, name, info):
    cost = meta.get("cost", {})
    return _C.Compiled(kernel_path, meta["plan"], name, json.dumps(meta.get("constexprs", {})),
                       int(cost.get("bytes_loaded", 0) + cost.get("bytes_stored", 0)), float(cost.get("flops16", 0)),
                       float(cost.get("flops32", 0)), float(cost.get("flops64", 0)), meta.get("scopes", []), info,
                       stream_bytes=int(meta.get("stream_bytes", 0)), trips=cost.get("trips") or None,
                       remarks=remarks_text(meta.get("remarks")))


def remarks_text(remarks):
    """The kernel's compiler remarks as Proton carries them (the .hatchet kernel node's
    "remarks" metric): one "file:line:col: message" per line, None when there are none."""
    return "\n".join(f"{f}:{line}:{col}: {msg}" for f, line, col, msg in remarks) if remarks else None


class UnloadedKernel:
    """A kernel compiled for another ISA (riscv64 on an x86-64 machine): its stages and
    .so are in the cache entry (CompiledKernel.asm, triton.tools.aot.export), and a
    launch tries to load it, which fails with the loader's error naming both ISAs."""

    def __init__(self, kernel_path, meta, name, info):
        self.kernel_path, self.meta, self.name, self.info = kernel_path, meta, name, info

    def launch(self, grid, args, nthreads=0):
        return _load(self.kernel_path, self.meta, self.name, self.info).launch(grid, args, nthreads)


# ---- ahead-of-time API (upstream triton.compile) -------------------------------------------

def make_backend(target):
    """The backend compiling for `target` (upstream name): the CPU backend."""
    from triton.backends import backends
    for b in backends.values():
        if b.compiler.supports_target(target):
            return b.compiler(target)
    raise RuntimeError(f"no backend compiles for target {target!r}; Tritium has the \"cpu\" backend only")


def triton_key():
    from triton.runtime.cache import triton_key as key
    return key()


class ASTSource:
    """ASTSource(fn, signature, constexprs=None, attrs=None) as in upstream Triton."""

    def __init__(self, fn, signature, constexprs=None, attrs=None, constants=None):
        self.fn = fn
        self.signature = dict(signature)
        cx = dict(constexprs or constants or {})
        self.constexprs = {}
        for k, v in cx.items():
            if isinstance(k, tuple):
                k = k[0]
            if isinstance(k, int):
                k = fn.arg_names[k]
            self.constexprs[k] = v
        self.attrs = attrs or {}
        self.name = fn.__name__

    def spec(self):
        out = []
        for p in self.fn.params:
            if p.name in self.constexprs or p.is_constexpr:
                if p.name not in self.constexprs and not p.has_default:
                    raise ValueError(f"missing constexpr value for {p.name}")
                out.append(("constexpr", self.constexprs.get(p.name, p.default)))
                continue
            ty = self.signature.get(p.name, self.signature.get(p.num))
            if ty is None or ty == "constexpr":
                raise ValueError(f"no signature entry for parameter {p.name}")
            if isinstance(ty, str) and ty.startswith("tensordesc"):
                from triton.language.descriptor import spec_of_signature
                out.append(spec_of_signature(ty))
                continue
            t = tl.str_to_ty(ty)
            if t.is_ptr():
                out.append(("ptr", t.element_ty.code, 1))
            elif t == tl.int1:
                out.append(("i1",))
            elif t.is_floating():  # the kernel's parameter keeps the signature's float type
                out.append((t.name,))
            elif t == tl.int64:
                out.append(("i64", 0))
            elif t == tl.uint64:
                out.append(("u64", 0))
            else:
                out.append(("i32", 0))
        return tuple(out)


_LOADED = {}  # CompiledKernel.hash -> the loaded kernel (tritium.Compiled), kept out of pickles


def _reload(key):
    """The loaded kernel of cache entry `key` (a CompiledKernel unpickled in another
    process: torch's inductor compiles in worker processes and pickles the result)."""
    c = _LOADED.get(key)
    if c is None:
        r = _C.cache_lookup(key)
        if r[0] != "hit":
            raise RuntimeError(f"triton: the compiled kernel {key} is no longer in the cache ({r[0]})")
        _, _, kernel_path, meta_text, files = r
        meta = json.loads(meta_text)
        c = _load(kernel_path, meta, meta["name"], KernelInfo(meta["name"], meta, files, key))
        _LOADED[key] = c
    return c


class CompiledKernel:
    """Result of triton.compile() / JITFunction.warmup(): stages in .asm, metadata,
    and launchable with kernel[grid](*args).

    It also carries upstream's launcher surface, which torch's inductor drives:
    `hash` (the cache key), `src` (the ASTSource), `function`, `packed_metadata`,
    `launch_metadata(grid, stream, *args)`, `_init_handles()` and
    `run(gx, gy, gz, stream, function, packed_metadata, launch_metadata,
    launch_enter_hook, launch_exit_hook, *args)`, with every kernel argument
    (constexprs included) after the hooks. Its __dict__ pickles (inductor copies it
    between processes, replacing function/run/module by None): the loaded kernel is
    looked up by `hash`, and _init_handles() restores function and run."""

    launch_enter_hook = None
    launch_exit_hook = None

    def __init__(self, compiled, jitfn=None, src=None):
        info = compiled.info
        self.hash = info.key
        _LOADED[self.hash] = compiled
        self.name = info.name
        self.metadata = _Metadata(info.metadata)
        self.asm = _AsmDict(info)
        self.fn = jitfn
        self.src = src
        self.n_regs = 32
        self.n_spills = 0
        self.n_max_threads = 1
        self.module = None
        self.packed_metadata = self.metadata
        self._init_handles()

    @property
    def _c(self):
        return _reload(self.hash)

    def _init_handles(self):
        self.function = self._c
        self.run = self._run

    def __getitem__(self, grid):
        def runner(*args, **kwargs):
            g = grid(kwargs) if callable(grid) else grid
            return self._c.launch(tuple(g), args, int(kwargs.get("num_threads", 0) or 0))
        return runner

    def _run(self, *args):
        """Upstream's launcher call when given the nine leading launcher arguments;
        run(grid, *args) otherwise (Tritium's older form)."""
        if len(args) >= 9 and isinstance(args[0], int) and not isinstance(args[0], bool):
            gx, gy, gz, _stream, function, _packed, meta, enter, leave = args[:9]
            if enter is not None and meta is not None:
                enter(meta)
            (function or self._c).launch((gx, gy, gz), args[9:])
            if leave is not None and meta is not None:
                leave(meta)
            return None
        return self._c.launch(tuple(args[0]), args[1:])

    def launch_metadata(self, grid, stream, *args):
        """The LazyDict launch hooks receive (None when no enter hook is set, as upstream)."""
        import triton.knobs as knobs
        if knobs.runtime.launch_enter_hook is None:
            return None
        from triton.profiler.hooks import LazyDict
        meta = LazyDict({"name": self.name, "function": self.function, "stream": stream})
        fn = getattr(self.fn, "launch_metadata", None) if self.fn is not None else None
        if fn is not None:
            meta.add(fn, (grid, self.metadata, dict(zip(self.fn.arg_names, args))))
        return meta


class _Metadata(dict):
    """The kernel's metadata, keys also as attributes, with upstream's launch fields
    (num_warps, num_ctas, num_stages, shared, cluster_dims) present as keys: code
    that turns the dict into a namedtuple (torch's inductor, after pickling) finds them."""

    _DEFAULTS = {"num_warps": 1, "num_ctas": 1, "num_stages": 1, "shared": 0, "cluster_dims": (1, 1, 1)}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for k, v in self._DEFAULTS.items():
            self.setdefault(k, v)

    def __getattr__(self, k):
        if k in self:
            return self[k]
        raise AttributeError(k)


class _AsmDict(dict):
    """Lazily reads stage files from the cache entry."""

    _KEYS = {"ttir": ".ttir", "ttsharedir": ".linalg.mlir", "linalgdir": ".linalg.mlir", "llmlir": ".ll.mlir",
             "llir": ".ll", "asm": ".s", "obj": ".o", "so": ".so"}

    def __init__(self, info):
        super().__init__()
        self._info = info

    def __missing__(self, k):
        suffix = self._KEYS.get(k)
        v = self._info.stage(suffix) if suffix else None
        if v is None:
            raise KeyError(k)
        self[k] = v
        return v

    def keys(self):
        return [k for k, s in self._KEYS.items() if self._info.files.get(self._info.name + s)]

    def __contains__(self, k):
        return k in self.keys()


def compile(src, target=None, options=None):  # noqa: A001 (upstream name)
    """Ahead-of-time compile: triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cpu", 0, 0)).

    GPUTarget("cpu", "riscv64", 0) (or SPINE_TRITON_TARGET_ARCH=riscv64) cross-compiles:
    the result holds every stage in .asm ("asm" is RISC-V assembly, "so" the .so bytes)
    and is not loaded; launching it here raises the loader's error. An unsupported
    architecture raises ValueError naming the supported ones."""
    if target is not None and getattr(target, "backend", "cpu") != "cpu":
        raise ValueError(f"Tritium compiles for the CPU backend only (got target backend {target.backend!r})")
    if isinstance(src, str):
        raise NotImplementedError("compiling from IR files is done with the tritium-opt tool")
    spec = src.spec()
    debug = (options or {}).get("debug")  # upstream's option: device_assert compiled in
    return CompiledKernel(compile_specialization(src.fn, spec, _NO_LOAD, target_arch(target), debug=debug),
                          src.fn, src)
