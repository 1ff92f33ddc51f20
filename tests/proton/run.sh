#!/usr/bin/env bash
# tests/proton/run.sh — Proton's output files checked by outside readers.
#
#   1. the Chrome-trace validator checks itself against broken traces
#   2. the Proton C tests write their files into one directory (PN_TEST_OUT):
#      sessions, capture dumps, a run killed by SIGTERM, a run ended by exit()
#   3. every Chrome trace there passes validate_trace.py
#   4. every .hatchet there is read by upstream proton-viewer and by
#      llnl-hatchet's GraphFrame.from_literal (reference venv; skipped with a
#      message when ~/.cache/tritium/ref-venv is missing)
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
REF=${TRITIUM_REF_VENV:-$HOME/.cache/tritium/ref-venv}
out=$(mktemp -d /tmp/proton-files.XXXXXX)
trap 'rm -rf "$out"' EXIT
rc=0

python3 tests/proton/validate_trace.py --self-test || rc=1

for t in test_proton test_proton_writers test_proton_threads; do
  if [ ! -x "$B/tests/$t" ]; then echo "missing $B/tests/$t (build it first)"; exit 1; fi
  PN_TEST_OUT="$out" "$B/tests/$t" >"$out/$t.log" 2>&1 || { echo "FAILED: $t"; cat "$out/$t.log"; rc=1; }
done

traces=$(ls "$out"/*.json "$out"/*.chrome_trace 2>/dev/null)
hatchets=$(ls "$out"/*.hatchet 2>/dev/null)
[ -n "$traces" ] || { echo "no traces were written"; rc=1; }
[ -n "$hatchets" ] || { echo "no .hatchet files were written"; rc=1; }
python3 tests/proton/validate_trace.py $traces || rc=1

if [ ! -x "$REF/bin/python3" ] || [ ! -x "$REF/bin/proton-viewer" ]; then
  echo "SKIP: reference venv $REF (upstream proton-viewer + llnl-hatchet) is missing;" \
       ".hatchet files were not checked with the upstream readers"
  exit $rc
fi
"$REF/bin/python3" tests/proton/check_hatchet.py $hatchets || rc=1
# proton-viewer needs a time metric for -m time/ns (files with kernels) and drops an
# empty ROOT entirely (upstream does the same with an empty upstream profile), so:
# kernels → -m time/ns,count; scope metrics only → -l; no metrics at all → hatchet
# check only.
for h in $hatchets; do
  kind=$(python3 - "$h" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def any_metrics(n):
    return bool(n["metrics"]) or any(any_metrics(c) for c in n["children"])
print("kernels" if d[1] else "scopes" if any_metrics(d[0]) else "empty")
PY
)
  case $kind in
    kernels) args=(-m time/ns,count) ;;
    scopes) args=(-l) ;;
    *) continue ;;
  esac
  if ! "$REF/bin/proton-viewer" "${args[@]}" "$h" >"$out/viewer.txt" 2>&1; then
    echo "proton-viewer ${args[*]} failed on $h:"; cat "$out/viewer.txt"; rc=1
  elif [ "$kind" = kernels ] && ! grep -q "ROOT" "$out/viewer.txt"; then
    echo "proton-viewer printed no tree for $h:"; cat "$out/viewer.txt"; rc=1
  fi
done
# one file in full, as a user would see it
"$REF/bin/proton-viewer" -m time/us,count "$out/writer_tree.hatchet" || rc=1
exit $rc
