#!/usr/bin/env bash
# tests/ir/stages.sh — tritium-opt emits every stage for the sample kernels in
# tests/ir/stages/*.ttir (TTIR as the front end dumps it: 1-D and 2-D tiles,
# masks, loops, reductions, dot, block pointers, fp16, in-kernel scopes).
#
# For each file and stage the output must exist and carry the stage's marker:
#   ttir   → tt.func          linalg → linalg. ops, func.func
#   llmlir → llvm.func        llir   → define ... @tritium_kernel
#   asm    → tritium_kernel:  so     → an ELF shared object exporting tritium_kernel
# and the TTIR output must parse back (round trip through --emit=ttir).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
opt=${TRITIUM_OPT:-$root/build/bin/tritium-opt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

check() { # file stage pattern
  local f=$1 st=$2 pat=$3 out="$tmp/out.$2"
  if ! "$opt" "$f" --emit="$st" -o "$out" 2> "$tmp/err"; then
    echo "FAIL $(basename "$f") --emit=$st:"; sed 's/^/    /' "$tmp/err" | head -20; fail=$((fail + 1)); return
  fi
  if [ "$st" = so ]; then
    if ! head -c 4 "$out" | grep -q 'ELF' || ! nm -D --defined-only "$out" | grep -qw tritium_kernel; then
      echo "FAIL $(basename "$f") --emit=so: not an ELF shared object exporting tritium_kernel"; fail=$((fail + 1)); return
    fi
  elif ! grep -qE "$pat" "$out"; then
    echo "FAIL $(basename "$f") --emit=$st: no match for /$pat/"; fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}

for f in "$here"/stages/*.ttir; do
  check "$f" ttir 'tt\.func'
  check "$f" linalg 'linalg\.(generic|matmul|fill|copy)'
  check "$f" llmlir 'llvm\.func'
  check "$f" llir 'define .*@tritium_kernel'
  check "$f" asm '^tritium_kernel:'
  check "$f" so ''
  # the emitted TTIR parses again to the same text
  "$opt" "$f" -o "$tmp/a.ttir" && "$opt" "$tmp/a.ttir" --no-passes -o "$tmp/b.ttir" && cmp -s "$tmp/a.ttir" "$tmp/b.ttir" \
    && pass=$((pass + 1)) || { echo "FAIL $(basename "$f"): TTIR round trip"; fail=$((fail + 1)); }
done
echo "stages: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
