"""pip install . / pip install -e . : builds the native libraries with make.

The C core (compiler, runtime, Proton, viewers) is built by the project's Makefile
for the interpreter running pip; the Debian packages listed in scripts/setup.sh
(LLVM/MLIR 19, lld-19, libpfm4, cJSON) must be installed. proton-cli and
tritium-opt are installed next to the interpreter's scripts.
"""
import os
import subprocess
import sys
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def _make():
    tag = sysconfig.get_config_var("EXT_SUFFIX").strip(".").replace(".so", "")
    build = os.path.join("build", "pip-" + tag)
    ext = f"python/triton/_C/tritium{sysconfig.get_config_var('EXT_SUFFIX')}"
    cmd = ["make", "-j", str(os.cpu_count() or 2), f"BUILD={build}", f"PYTHON={sys.executable}", ext,
           "python/triton/_C/libtritium_cg.so", f"{build}/bin/proton-cli", f"{build}/bin/tritium-opt"]
    subprocess.check_call(cmd, cwd=ROOT)
    return build


class BuildWithMake(build_py):
    def run(self):
        build = _make()
        self.distribution.data_files = [("bin", [os.path.join(build, "bin", "proton-cli"),
                                                 os.path.join(build, "bin", "tritium-opt")])]
        super().run()


class BinaryDistribution(Distribution):
    """The wheel carries a CPython extension, native libraries and programs: tag it for
    this interpreter and platform, not py3-none-any."""

    def has_ext_modules(self):
        return True


# setuptools' default build/lib is the Makefile's archive directory (libtritium_ir.a, ...),
# which would end up at the top of the wheel: stage the wheel's files elsewhere.
setup(cmdclass={"build_py": BuildWithMake}, distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join("build", "setuptools")}})
