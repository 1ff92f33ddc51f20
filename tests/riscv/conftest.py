"""pytest set-up of the RISC-V suite: a private kernel cache (never ~/.triton), and the
suite's helpers importable as rvutil. Run by tests/riscv/run.sh, which cross-builds
tritium-run and says how to reach it (rvutil)."""
import os
import shutil
import sys
import tempfile

_CACHE = tempfile.mkdtemp(prefix="tritium-rv-cache-")
os.environ["TRITON_CACHE_DIR"] = _CACHE
for _v in ("SPINE_TRITON_DUMP_PATH", "TRITON_ALWAYS_COMPILE", "PROTON_KERNEL_CAPTURE", "PROTON_OUTPUT",
           "SPINE_TRITON_TARGET_ARCH"):
    os.environ.pop(_v, None)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE, ignore_errors=True)
