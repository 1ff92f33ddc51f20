#!/usr/bin/env bash
# tests/viewers/run.sh — proton-cli tests; scripts/run_tests.sh runs it (target: < 90 s).
#
#   1. golden outputs of report/diff/merge/html/... (cases.sh; UPDATE_GOLDEN=1 rewrites them)
#   2. `report -m time/ms` against upstream proton-viewer on the upstream-style fixtures
#      (when ~/.cache/tritium/ref-venv exists; compare_upstream.py lists the intended
#      differences it ignores)
#   3. `proton-cli events` smoke test
#   4. libFuzzer on the readers for FUZZ_SECONDS (default 20; needs libclang-rt-19-dev)
#   5. headless Chromium on the HTML pages; screenshots land in tests/out/*.png
#
# Prints one line per step and "N passed, M failed" at the end; exits 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
CLI=$ROOT/build/bin/proton-cli
F=tests/viewers/fixtures
M=tests/viewers/malformed
OUT=tests/out/viewers
O=$OUT/scratch
G=tests/viewers/golden
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

[ -x "$CLI" ] || { echo "FAIL: $CLI not built (make)"; echo "0 passed, 1 failed"; exit 1; }
rm -rf "$OUT"
mkdir -p "$O"
export CLI F M O
export NO_COLOR=   # colour only where a case asks for it (outputs are not terminals anyway)

# ---- 1. goldens ----------------------------------------------------------------------------
t() { # NAME SNIPPET
  local name=$1 snippet=$2 got="$OUT/$1.out"
  { bash -c "$snippet" >"$got.stdout" 2>"$got.stderr"; echo "--- exit $?" >"$got.rc"; }
  { cat "$got.stdout"; echo "--- stderr"; cat "$got.stderr"; cat "$got.rc"; } >"$got"
  rm -f "$got.stdout" "$got.stderr" "$got.rc"
  if [ -n "${UPDATE_GOLDEN:-}" ]; then
    cp "$got" "$G/$name.out"
    ok
  elif cmp -s "$got" "$G/$name.out"; then
    ok
  else
    bad "golden $name (diff -u $G/$name.out $got)"
    diff -u "$G/$name.out" "$got" | head -20
  fi
}
t0=$(date +%s)
# shellcheck source=cases.sh
. tests/viewers/cases.sh
echo "goldens: $pass passed, $fail failed ($(( $(date +%s) - t0 ))s)"

# ---- 2. upstream proton-viewer ---------------------------------------------------------------
PV=${PROTON_VIEWER:-$HOME/.cache/tritium/ref-venv/bin/proton-viewer}
if [ -x "$PV" ]; then
  for f in upstream_cuda upstream_triton upstream_full; do
    "$PV" -m time/ms "$F/$f.hatchet" >"$OUT/$f.upstream.txt" 2>"$OUT/$f.upstream.err"
    "$CLI" report -m time/ms "$F/$f.hatchet" >"$OUT/$f.ours.txt" 2>&1
    if python3 tests/viewers/compare_upstream.py "$OUT/$f.upstream.txt" "$OUT/$f.ours.txt"; then
      ok; echo "upstream proton-viewer -m time/ms $f: same tree and values"
    else
      bad "upstream comparison $f"
    fi
  done
else
  echo "SKIP: upstream proton-viewer not found at $PV (comparison not run)"
fi

# ---- 3. events ---------------------------------------------------------------------------------
if "$CLI" events >"$OUT/events.txt" 2>&1; then
  if grep -q "^PMU generic" "$OUT/events.txt" && grep -q "open on this machine now" "$OUT/events.txt"; then
    ok; echo "events: $(tail -1 "$OUT/events.txt")"
  else
    bad "events output unexpected ($OUT/events.txt)"
  fi
elif grep -q "built without the profiler core" "$OUT/events.txt"; then
  echo "SKIP: events (proton-cli linked without libproton's events API)"
else
  bad "events failed: $(head -1 "$OUT/events.txt")"
fi

# ---- 4. fuzzing ----------------------------------------------------------------------------------
CLANG=${CLANG:-/usr/lib/llvm-19/bin/clang}
RT=$(ls "$(dirname "$CLANG")"/../lib/clang/*/lib/*/libclang_rt.fuzzer*.a 2>/dev/null | head -1)
if [ -x "$CLANG" ] && [ -n "$RT" ]; then
  t0=$(date +%s)
  mkdir -p build/fuzz "$OUT/corpus"
  # the generated HTML assets header comes from the normal build
  if $CLANG -std=gnu17 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
       -fno-sanitize-recover=undefined -Iviewers/include -Iproton/include -Ibuild/viewers/gen \
       $(ls viewers/src/cli_*.c | grep -v -e cli_main.c -e cli_events.c) \
       tests/viewers/fuzz_readers.c -lcjson -lm -o build/fuzz/fuzz_readers 2>"$OUT/fuzz-build.log"; then
    if build/fuzz/fuzz_readers -max_total_time="${FUZZ_SECONDS:-20}" -max_len=16384 -timeout=5 \
         -rss_limit_mb=2048 -artifact_prefix="$OUT/" -print_final_stats=1 \
         "$OUT/corpus" "$F" "$M" >"$OUT/fuzz.log" 2>&1; then
      ok; echo "fuzz: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$OUT/fuzz.log"), no crash ($(( $(date +%s) - t0 ))s)"
    else
      bad "fuzzer found a problem: $(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$OUT/fuzz.log"); input in $OUT/crash-*"
    fi
  else
    bad "fuzz harness does not build ($OUT/fuzz-build.log)"
  fi
else
  echo "SKIP: fuzzing (clang-19 libFuzzer runtime missing: apt-get install libclang-rt-19-dev)"
fi

# ---- 5. browser ------------------------------------------------------------------------------------
if command -v chromium >/dev/null 2>&1; then
  t0=$(date +%s)
  pages=()
  for spec in trace.json:timeline:roofline tritium.hatchet:roofline upstream_full.hatchet:roofline \
              writer_trace.json:timeline; do
    in=${spec%%:*}; rest=${spec#*:}; [ "$rest" = "$spec" ] && rest=
    name=${in%.*}
    "$CLI" html "$F/$in" -o "tests/out/report-$name.html" || bad "html $in"
    pages+=("tests/out/report-$name.html${rest:+:$rest}")
  done
  if timeout 60 python3 tests/viewers/browser_test.py tests/out "${pages[@]}" >"$OUT/browser.log" 2>&1; then
    ok
  else
    bad "browser test (see below)"
  fi
  sed 's/^/browser: /' "$OUT/browser.log"
  echo "browser: $(( $(date +%s) - t0 ))s"
else
  echo "SKIP: browser test (chromium not installed)"
fi

echo "proton-cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
