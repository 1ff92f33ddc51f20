#!/usr/bin/env bash
# tests/codegen/measure.sh — the code generator's numbers (not a test): cold compile
# time of the vadd and gelu samples (median of 5 fresh processes, per phase), warm
# in-process compile time (median of 9), and vadd throughput against a gcc -O3
# -march=native C loop (64M floats, memory bound; 32K floats, cache resident).
# Needs `make` and tests/codegen/run.sh to have built build/tests/codegen/cgc.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build/tests/codegen
cgc=$out/cgc
[ -x "$cgc" ] || { echo "run tests/codegen/run.sh first (builds $cgc)"; exit 1; }
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
for s in vadd gelu; do
  for i in 1 2 3 4 5; do "$cgc" -o "$out/m_$s.so" "tests/codegen/$s.mlir"; done > "$out/m_$s.txt"
  printf '%-5s cold (median of 5 processes): mlir %s ms, llvm %s ms, link %s ms, total %s ms\n' "$s" \
    "$(awk '{print $4}' "$out/m_$s.txt" | median)" "$(awk '{print $7}' "$out/m_$s.txt" | median)" \
    "$(awk '{print $10}' "$out/m_$s.txt" | median)" "$(awk '{print $13}' "$out/m_$s.txt" | median)"
  printf '%-5s warm: %s\n' "$s" "$("$cgc" -r 9 -o "$out/m_$s.so" "tests/codegen/$s.mlir" | tail -1)"
done
gcc -O3 -march=native tests/codegen/vadd_bench.c -ldl -o "$out/vadd_bench"
"$out/vadd_bench" "$out/m_vadd.so"
"$out/vadd_bench" "$out/m_vadd.so" 32768
