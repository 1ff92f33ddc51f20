"""`pip install .` works: the wheel pip builds from the repository (offline, with this
venv's setuptools: --no-build-isolation --no-index) installs into an empty directory,
and a Python whose path starts there imports that copy of triton, not the repository's
(.venv's tritium-dev.pth points at python/; PYTHONPATH entries come first), and runs a
kernel on numpy arrays. proton-cli and tritium-opt come with it as the wheel's data
scripts (bin/).

setup.py builds the C core with make in its own tree (build/pip-<python tag>), which is
incremental after the first run: about 15 s then, 30 s from a clean checkout.
"""
import os
import subprocess
import sys
import textwrap
import zipfile

from conftest import REPO, check_ok

_CHILD = textwrap.dedent('''
    import os, sys
    import numpy as np
    import triton
    import triton.language as tl

    site, repo = sys.argv[1], sys.argv[2]

    def under(path, root):
        return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)

    assert under(triton.__file__, site), triton.__file__
    assert under(triton._C.tritium.__file__, site), triton._C.tritium.__file__

    @triton.jit
    def axpy(x_ptr, y_ptr, o_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(o_ptr + offs, alpha * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.25, dtype=np.float32)
    o = np.zeros(n + 8, dtype=np.float32)
    axpy[(triton.cdiv(n, 256),)](x, y, o, n, 2.0, BLOCK=256)
    assert np.array_equal(o[:n], 2.0 * x + y), o[:8]
    assert not o[n:].any()
    # the extension and the code generator it loaded at the first compile are the installed ones
    maps = [ln.split()[-1] for ln in open("/proc/self/maps") if ln.rstrip().endswith(".so")]
    ours = [p for p in maps if os.path.basename(p).startswith(("tritium.", "libtritium_cg"))]
    assert any(os.path.basename(p).startswith("libtritium_cg") for p in ours), maps
    assert all(under(p, site) for p in ours), ours
    assert not [m for m in list(sys.modules.values())
                if under(getattr(m, "__file__", None) or "/", os.path.join(repo, "python"))]
    print("CHILD-OK")
''')


def _run(cmd, **kw):
    env = dict(os.environ, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    env.update(kw.pop("env", {}))
    return check_ok(subprocess.run(cmd, capture_output=True, text=True, env=env, **kw))


def test_pip_wheel_install_and_run(tmp_path):
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    pip = [sys.executable, "-m", "pip"]
    _run(pip + ["wheel", "--no-deps", "--no-build-isolation", "--no-index", ".", "-w", str(wheels)],
         cwd=REPO, timeout=240)
    (wheel,) = wheels.iterdir()
    # native code inside: tagged for this interpreter and platform, not py3-none-any
    assert "-none-any" not in wheel.name and "-cp" in wheel.name, wheel.name
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/")[0] for n in z.namelist()}
    assert tops == {"triton", "tritium_triton-0.1.0.dist-info", "tritium_triton-0.1.0.data"}, tops

    _run(pip + ["install", "--no-deps", "--no-index", "--target", str(site), str(wheel)], cwd=tmp_path,
         timeout=120)
    assert {"triton", "bin"} <= set(os.listdir(site))
    for tool in ("proton-cli", "tritium-opt"):
        path = site / "bin" / tool
        assert os.access(path, os.X_OK), f"{tool} is not installed in {site / 'bin'}"
        out = _run([str(path), "--help"], timeout=30).stdout
        assert "usage:" in out and tool in out

    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    proc = _run([sys.executable, str(script), str(site), REPO], cwd=tmp_path, timeout=120,
                env={"PYTHONPATH": str(site), "TRITON_CACHE_DIR": str(tmp_path / "cache")})
    assert "CHILD-OK" in proc.stdout
