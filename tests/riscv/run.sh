#!/usr/bin/env bash
# tests/riscv/run.sh — the RISC-V suite (make test-riscv; run by make test):
#
#   1. cross-builds libtritium, tritium-run, the aot-vadd example and the counter test
#      for riscv64 (make riscv64: Debian's riscv64-linux-gnu-gcc against the trixie
#      sysroot of scripts/riscv_sysroot.sh),
#   2. test_rv_counters (rdtime, raw events, perf_event fallback, mmap-page reads),
#   3. pytest tests/riscv: kernels compiled here from Python for riscv64, run by
#      tritium-run and compared with numpy and the host build (test_rv_kernels.py),
#   4. the C example examples/aot/aot_vadd.c on a kernel exported for riscv64.
#
# Everything RISC-V runs under qemu-riscv64 -cpu rv64,v=true,vlen=256 with the sysroot
# as its -L prefix; on a riscv64 machine it runs natively from build/. Skips with one
# line (exit 0) when the sysroot could not be fetched or qemu/the cross compiler is
# missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
RV=build/riscv64
SYSROOT=$PWD/$RV/sysroot
PY=${PY:-.venv/bin/python3}

if [ "$(uname -m)" = riscv64 ]; then
  BIN=build/bin
  PREFIX=""
  make --no-print-directory -s "$BIN/tritium-run" "$BIN/aot-vadd" build/tests/test_rv_counters >/dev/null
  COUNTERS=build/tests/test_rv_counters
else
  if [ -f "$RV/sysroot.unavailable" ] && [ ! -f "$SYSROOT/.tritium-launcher" ] && [ ! -f "$SYSROOT/.tritium-python" ]; then
    echo "tests/riscv: skipped: no riscv64 sysroot ($(cat "$RV/sysroot.unavailable"))"
    exit 0
  fi
  if ! command -v qemu-riscv64 >/dev/null || ! command -v riscv64-linux-gnu-gcc >/dev/null; then
    echo "tests/riscv: skipped: qemu-riscv64 or riscv64-linux-gnu-gcc not installed (scripts/setup.sh)"
    exit 0
  fi
  [ -f "$SYSROOT/.tritium-launcher" ] || [ -f "$SYSROOT/.tritium-python" ] || scripts/riscv_sysroot.sh launcher
  make --no-print-directory -s riscv64 >/dev/null
  BIN=$RV/bin
  PREFIX="qemu-riscv64 -cpu rv64,v=true,vlen=256,vext_spec=v1.0 -L $SYSROOT"
  COUNTERS=$RV/tests/test_rv_counters
fi

echo "--- riscv: counters and clock (test_rv_counters)"
$PREFIX "$COUNTERS"

echo "--- riscv: Python kernels compiled for riscv64, run by tritium-run"
TRITIUM_RV_RUN="$PWD/$BIN/tritium-run" TRITIUM_RV_PREFIX="$PREFIX" \
  $PY -m pytest -q tests/riscv -p no:cacheprovider

echo "--- riscv: examples/aot/aot_vadd.c"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
TRITON_CACHE_DIR=$out/cache $PY examples/aot/export_vadd.py "$out" riscv64 >/dev/null
$PREFIX "$BIN/aot-vadd" "$out/add_kernel.json" 2 "$out/trace.json"
build/bin/proton-cli report "$out/trace.json" -m count | grep -q add_kernel
echo "tests/riscv: ok"
