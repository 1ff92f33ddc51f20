#!/usr/bin/env bash
# scripts/demo.sh — `make demo`: compile and run the example kernels under Proton.
#
# Each example runs with PROTON_KERNEL_CAPTURE=1 (no change to the scripts) and
# writes a Chrome trace and a .hatchet tree into demo-out/; the examples check
# their results against torch. Then proton-cli prints the report and writes a
# self-contained HTML page.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PWD/build/bin:$PATH"
PY=.venv/bin/python3
OUT=demo-out
rm -rf "$OUT"
mkdir -p "$OUT"

examples=(examples/0*.py)
if [ ! -e "${examples[0]}" ]; then
  echo "demo: no examples found in examples/" >&2
  exit 1
fi
echo "== Tritium demo: ${#examples[@]} example scripts, compiled for $($PY -c 'from triton._C import tritium as t; i=t.target_info(); print(i["triple"], i["cpu"])')"
for ex in "${examples[@]}"; do
  name=$(basename "$ex" .py)
  echo "-- $ex"
  PROTON_KERNEL_CAPTURE=1 PROTON_OUTPUT="$OUT/$name.json" $PY "$ex"
  PROTON_KERNEL_CAPTURE=1 PROTON_OUTPUT="$OUT/$name.hatchet" $PY "$ex" > /dev/null
done

echo
echo "== proton-cli merge: one trace and one tree for all examples"
proton-cli merge "$OUT"/*.json -o "$OUT/demo.json"
proton-cli merge "$OUT"/*.hatchet -o "$OUT/demo.hatchet"
echo
echo "== proton-cli report -m time/us,count,avg_time/us $OUT/demo.hatchet"
echo "   (columns: total time in us, launches, average time per launch in us)"
proton-cli report -m time/us,count,avg_time/us "$OUT/demo.hatchet"
proton-cli html "$OUT/demo.json" -o "$OUT/demo.html"
echo
echo "Chrome trace (open in https://ui.perfetto.dev or chrome://tracing): $PWD/$OUT/demo.json"
echo "Call-path tree (proton-cli report, proton-viewer, hatchet):       $PWD/$OUT/demo.hatchet"
echo "HTML report (self-contained):                                      $PWD/$OUT/demo.html"
