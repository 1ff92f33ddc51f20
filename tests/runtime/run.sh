#!/usr/bin/env bash
# tests/runtime/run.sh — runtime checks beyond the cmocka binaries (scripts/run_tests.sh
# runs this after `make`):
#   1. the launcher tests again on LLVM's libomp (its GOMP_ compatibility entry points),
#   2. with torch imported, the launcher binds torch's libgomp (one OpenMP runtime),
#   3. the launch benchmark runs (a smoke test; numbers are not checked).
set -uo pipefail
cd "$(dirname "$0")/../.."
rc=0
log=$(mktemp /tmp/tritium-rt-run.XXXXXX)
trap 'rm -f "$log"' EXIT
step() { echo "--- runtime: $1"; }

LIBOMP=/usr/lib/llvm-19/lib/libomp.so.5
if [ -e "$LIBOMP" ]; then
  step "launcher on $LIBOMP"
  TRITIUM_OMP_LIB=$LIBOMP build/tests/test_runtime_launch >"$log" 2>&1 || { cat "$log"; rc=1; }
fi

PY=.venv/bin/python3
if [ -x "$PY" ] && "$PY" -c 'import torch' 2>/dev/null; then
  step "shares torch's OpenMP runtime"
  "$PY" - <<'PY' || rc=1
import ctypes, os, torch
torch.set_num_threads(2)
torch.add(torch.rand(1 << 20), 1)  # start torch's pool
rt = ctypes.CDLL(os.path.abspath("build/lib/libtritium_rt_bench.so"))
rt.rt_threads_runtime.restype = ctypes.c_char_p
name = rt.rt_threads_runtime().decode()
gomps = {l.split()[-1] for l in open("/proc/self/maps") if "gomp" in l}
torch_gomp = [g for g in gomps if "/torch/" in g]
assert torch_gomp and name == torch_gomp[0], (name, gomps)
assert len(gomps) == 1, gomps
print(f"bound {name}; OpenMP runtimes mapped: {len(gomps)}")
PY
fi

step "launch benchmark smoke run"
# capture on too (when Proton implements it), written to a throwaway file
PROTON_OUTPUT="$log.hatchet" build/bin/tritium-launch-bench 200 2 >"$log" 2>&1 || { cat "$log"; rc=1; }
rm -f "$log.hatchet"
exit $rc
