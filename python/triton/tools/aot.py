"""Ahead-of-time kernels for a board: the kernel .so plus its metadata, run by libtritium.

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.tools import aot

    src = triton.compiler.ASTSource(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32",
                                                "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024})
    k = triton.compile(src, target=GPUTarget("cpu", "riscv64", 0))   # not loaded here
    aot.export(k, "out/", grid=(4,))      # out/add_kernel.so, out/add_kernel.json, out/add_kernel.s

On the board: `tritium-run out/add_kernel.json x_ptr=@x.bin y_ptr=@y.bin out_ptr=@o.bin n=4096`,
or the C API of runtime/include/tritium_aot.h. docs/aot.md describes the metadata
("tritium-aot/1"): every parameter with its type and argument slot, the constexpr values,
the grid when it is constant, the in-kernel scopes, the static cost per program.

Also a command line: python -m triton.tools.aot FILE.py:KERNEL -s name=type ... -c NAME=VALUE ...
[--target riscv64] [--grid X,Y,Z] -o DIR.
"""
import json
import os
import shutil

from triton.language import core as tl

FORMAT = "tritium-aot/1"

# tl dtype name → upstream's signature spelling
_SIG = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16",
        "uint32": "u32", "uint64": "u64", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64"}


def _params(fn, meta):
    """One entry per parameter: name, type (upstream spelling), slot kind, constexpr value."""
    out = []
    cx = meta.get("constexprs", {})
    for p, s in zip(fn.params, meta["spec"]):
        kind = s[0]
        e = {"name": p.name}
        if kind == "constexpr":
            e.update(type="constexpr", slot="constexpr", value=cx.get(p.name))
        elif kind == "ptr":
            e.update(type="*" + _SIG[tl._DTYPES[s[1]].name], slot="ptr")
        elif kind == "tensordesc":
            raise NotImplementedError(f"parameter {p.name}: AOT export of tensor descriptor arguments is not supported")
        else:
            slot = "i64" if kind == "u64" else kind
            e.update(type=kind, slot=slot)
        out.append(e)
    return out


def _grid(grid, constexprs):
    """The grid as three ints when it is constant: a tuple of ints, or a callable that
    computes it from the constexprs alone (upstream's lambda META: ...). None otherwise."""
    if grid is None:
        return None
    if callable(grid):
        try:
            grid = grid(dict(constexprs))
        except (KeyError, TypeError):
            return None  # depends on run-time arguments: the caller computes it
    g = [int(x) for x in grid]
    if not 1 <= len(g) <= 3 or min(g) < 0:
        raise ValueError(f"a grid has one to three non-negative sizes, got {grid!r}")
    return g + [1] * (3 - len(g))


def metadata(kernel, grid=None):
    """The tritium-aot/1 metadata of a CompiledKernel (triton.compile's result) as a dict."""
    info = kernel._c.info
    meta = info.metadata
    return {
        "format": FORMAT,
        "name": info.name,
        "kernel": info.name + ".so",
        "target": {k: v for k, v in meta.get("target", {}).items() if k != "loadable"},
        "params": _params(kernel.fn, meta),
        "constexprs": meta.get("constexprs", {}),
        "grid": _grid(grid, meta.get("constexprs", {})),
        "scopes": meta.get("scopes", []),
        "instrumented": bool(meta.get("instrumented", False)),
        "cost": meta.get("cost", {}),
        "stream_bytes": meta.get("stream_bytes", 0),
        "remarks": meta.get("remarks", []),
    }


def export(kernel, out_dir, grid=None):
    """Writes <name>.so, <name>.json and the assembly <name>.s of a CompiledKernel into
    out_dir (created if missing); returns the path of the .json. grid: a constant grid
    (tuple of ints, or a callable of the constexprs) recorded for tritium-run."""
    md = metadata(kernel, grid)
    os.makedirs(out_dir, exist_ok=True)
    name = md["name"]
    files = kernel._c.info.files
    shutil.copyfile(files[name + ".so"], os.path.join(out_dir, name + ".so"))
    if files.get(name + ".s"):
        shutil.copyfile(files[name + ".s"], os.path.join(out_dir, name + ".s"))
    path = os.path.join(out_dir, name + ".json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(md, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    return path


def _value(text):
    """A constexpr from the command line: JSON (1024, true, 0.5) or else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _main(argv=None):
    import argparse
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget
    ap = argparse.ArgumentParser(prog="python -m triton.tools.aot",
                                 description="Compile a @triton.jit kernel ahead of time and export it for tritium-run.")
    ap.add_argument("kernel", help="FILE.py:KERNEL")
    ap.add_argument("-s", "--signature", action="append", default=[], metavar="NAME=TYPE",
                    help="a parameter's type: *fp32, i32, fp32, ... (every non-constexpr parameter)")
    ap.add_argument("-c", "--constexpr", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--target", default=None, help="riscv64, x86_64 or host (default: SPINE_TRITON_TARGET_ARCH or host)")
    ap.add_argument("-g", "--grid", default=None, help="constant grid X[,Y[,Z]] recorded in the metadata")
    ap.add_argument("-o", "--out", required=True, help="output directory")
    a = ap.parse_args(argv)
    path, _, kname = a.kernel.rpartition(":")
    spec = importlib.util.spec_from_file_location("_aot_src", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, kname)
    sig = dict(x.split("=", 1) for x in a.signature)
    cx = {k: _value(v) for k, v in (x.split("=", 1) for x in a.constexpr)}
    src = triton.compiler.ASTSource(fn, sig, cx)
    k = triton.compile(src, target=GPUTarget("cpu", a.target or 0, 0))
    grid = [int(x) for x in a.grid.split(",")] if a.grid else None
    print(export(k, a.out, grid))


if __name__ == "__main__":
    _main()
