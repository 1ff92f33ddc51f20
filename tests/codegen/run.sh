#!/usr/bin/env bash
# tests/codegen/run.sh — cross-target check of the code generator: every Linalg
# sample of tests/codegen is compiled for riscv64 (SPINE_TRITON_TARGET_ARCH=riscv64,
# spacemit-x60 with RVV) by the host driver cgc, and the kernels run under
# qemu-riscv64 (VLEN 256) through a cross-compiled harness that compares them with
# a scalar C reference (samples.h). The host-side runs are in build/tests/test_codegen.
# Skips (exit 0 with a note) when qemu-riscv64 or riscv64-linux-gnu-gcc is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build/tests/codegen
mkdir -p "$out"
CG_LIB=python/triton/_C/libtritium_cg.so
IR_LIB=build/lib/libtritium_ir.a
for f in "$CG_LIB" "$IR_LIB"; do
  [ -f "$f" ] || { echo "tests/codegen: $f missing (run make first)"; exit 1; }
done
if ! command -v qemu-riscv64 >/dev/null || ! command -v riscv64-linux-gnu-gcc >/dev/null; then
  echo "tests/codegen: qemu-riscv64 or riscv64-linux-gnu-gcc not installed; skipped"
  exit 0
fi
CFLAGS="-std=gnu17 -O2 -Wall -Wextra -Werror -Wno-unused-parameter"
gcc $CFLAGS -Icompiler/include -Icompiler/src tests/codegen/cgc.c "$IR_LIB" "$CG_LIB" \
  -Wl,-rpath,"$PWD/python/triton/_C" -lm -o "$out/cgc"
riscv64-linux-gnu-gcc $CFLAGS tests/codegen/rv_harness.c -ldl -lm -o "$out/rv_harness"
args=()
for m in tests/codegen/*.mlir; do
  s=$(basename "$m" .mlir)
  SPINE_TRITON_TARGET_ARCH=riscv64 "$out/cgc" -o "$out/rv_$s.so" "$m" >/dev/null
  [ "$(od -An -tx1 -j18 -N2 "$out/rv_$s.so" | tr -d " ")" = f300 ] || { echo "rv_$s.so is not a RISC-V ELF"; exit 1; }
  args+=("$s=$out/rv_$s.so")
done
qemu-riscv64 -cpu rv64,v=true,vlen=256,vext_spec=v1.0 -L /usr/riscv64-linux-gnu "$out/rv_harness" "${args[@]}"
