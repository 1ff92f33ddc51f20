#!/usr/bin/env bash
# tests/viewers/run.sh — proton-cli tests; scripts/run_tests.sh runs it (target: < 90 s).
#
#   1. golden outputs of report/diff/merge/html/... (cases.sh; UPDATE_GOLDEN=1 rewrites them)
#   2. `report -m time/ms` against upstream proton-viewer on the upstream-style fixtures
#      (when ~/.cache/tritium/ref-venv exists; compare_upstream.py lists the intended
#      differences it ignores)
#   3. `proton-cli events`: the structure of its output for each option (machine-specific)
#   4. libFuzzer on the readers, diff and merge for FUZZ_SECONDS (default 20; needs
#      libclang-rt-19-dev), seeded with the fixtures and pairs of them
#   5. headless Chromium on the HTML pages; screenshots land in tests/out/*.png
#   6. peak RSS of report and html on a generated 64 MB trace (streamed: far below its size)
#   7. `proton-cli roofline` measuring this machine for real over a corrupt cache (bounds only)
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
# roofline/html: fixed roofs from a fixture (no measuring, no user cache in the goldens);
# step 7 measures for real
export XDG_CACHE_HOME=$ROOT/$O/cache TRITIUM_ROOFLINE_PEAKS=$F/peaks_zen4.json

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
# What `events` lists depends on the machine, so each option's output is checked for its
# structure: PMU headers, which rows appear, the OPENS column and the summary line.
E=$OUT/events
listed() { sed -n 's/^\([0-9]*\) events listed, \([0-9]*\) open.*/\1 \2/p' "$1"; }
rows() { awk '/^  / && $1 != "EVENT"' "$1"; }
ev_check() { # NAME CONDITION-RESULT(0/1)
  if [ "$2" -eq 0 ]; then ok; echo "events $1: ok"; else bad "events $1 (see $E-*.txt)"; fi
}
if "$CLI" events >"$E.txt" 2>&1; then
  set -- $(listed "$E.txt"); n_def=${1:-0}; n_open=${2:-0}
  grep -q "^PMU generic$" "$E.txt" && [ "$n_def" -gt 0 ] && grep -q "^Other PMUs" "$E.txt"
  ev_check "(default): $(tail -1 "$E.txt")" $?
  if [ "$n_open" -gt 0 ]; then   # software events open wherever perf_event_open is allowed
    grep -Eq "^  task-clock +sw +yes " "$E.txt"; ev_check "(default): task-clock opens" $?
  else
    echo "SKIP: events: nothing opens here (perf_event_open refused), task-clock not checked"
  fi
  "$CLI" events --all >"$E-all.txt" 2>&1; rc=$?
  set -- $(listed "$E-all.txt")
  [ $rc -eq 0 ] && grep -q "^PMU generic$" "$E-all.txt" && grep -q "^PMU perf$" "$E-all.txt" &&
    [ "$(grep -c '^PMU ' "$E-all.txt")" -ge 2 ] && ! grep -q "^Other PMUs" "$E-all.txt" &&
    [ "${1:-0}" -gt "$n_def" ] && [ "${1:-0}" -eq "$(rows "$E-all.txt" | wc -l)" ]
  ev_check "--all: $(grep -c '^PMU ' "$E-all.txt") PMUs, ${1:-0} events" $?
  "$CLI" events --pmu perf >"$E-pmu.txt" 2>&1; rc=$?
  set -- $(listed "$E-pmu.txt")
  [ $rc -eq 0 ] && [ "$(grep -c '^PMU ' "$E-pmu.txt")" -eq 1 ] && grep -q "^PMU perf$" "$E-pmu.txt" &&
    [ "${1:-0}" -gt 0 ] && [ "${1:-0}" -eq "$(rows "$E-pmu.txt" | wc -l)" ] &&
    ! grep -q "^Other PMUs" "$E-pmu.txt"
  ev_check "--pmu perf: ${1:-0} events, one PMU" $?
  "$CLI" events -p generic >"$E-p.txt" 2>&1; rc=$?
  [ $rc -eq 0 ] && [ "$(grep -c '^PMU ' "$E-p.txt")" -eq 1 ] && grep -q "^PMU generic$" "$E-p.txt" &&
    grep -Eq "^  task-clock +sw " "$E-p.txt"
  ev_check "-p generic" $?
  "$CLI" events --pmu no-such-pmu >"$E-bad.txt" 2>&1; rc=$?
  [ $rc -eq 1 ] && grep -q "^proton-cli: events: no PMU named 'no-such-pmu' here (PMUs: generic, " "$E-bad.txt"
  ev_check "--pmu no-such-pmu: exit $rc" $?
  "$CLI" events --available >"$E-avail.txt" 2>&1; rc=$?
  set -- $(listed "$E-avail.txt")
  [ $rc -eq 0 ] && [ "${1:-x}" = "$n_open" ] && [ "${2:-x}" = "$n_open" ] &&
    [ -z "$(rows "$E-avail.txt" | awk '$3 != "yes"')" ] &&
    { [ "$n_open" -eq 0 ] || grep -Eq "^  task-clock +sw +yes " "$E-avail.txt"; }
  ev_check "--available: ${1:-0} events, all open" $?
  "$CLI" events --all --available >"$E-all-avail.txt" 2>&1; rc=$?
  set -- $(listed "$E-all-avail.txt")
  [ $rc -eq 0 ] && [ "${1:-x}" = "${2:-y}" ] && [ -z "$(rows "$E-all-avail.txt" | awk '$3 != "yes"')" ]
  ev_check "--all --available: ${1:-0} events, all open" $?
elif grep -q "built without the profiler core" "$E.txt"; then
  echo "SKIP: events (proton-cli linked without libproton's events API)"
else
  bad "events failed: $(head -1 "$E.txt")"
fi

# ---- 4. fuzzing ----------------------------------------------------------------------------------
CLANG=${CLANG:-/usr/lib/llvm-19/bin/clang}
RT=$(ls "$(dirname "$CLANG")"/../lib/clang/*/lib/*/libclang_rt.fuzzer*.a 2>/dev/null | head -1)
if [ -x "$CLANG" ] && [ -n "$RT" ]; then
  t0=$(date +%s)
  mkdir -p build/fuzz "$OUT/corpus"
  # seed pairs for diff and merge: two minified fixtures joined by a NUL byte
  python3 - "$F" "$OUT/corpus" <<'PY'
import json, sys, os
f, out = sys.argv[1], sys.argv[2]
pairs = [("trace.json", "trace_rank1.json"), ("tritium.hatchet", "tritium_new.hatchet"),
         ("writer_trace.json", "trace.json"), ("upstream_triton.hatchet", "writer_trace.json"),
         ("upstream_cuda.hatchet", "upstream_full.hatchet"), ("trace_rank1.json", "counters.json")]
mini = lambda n: json.dumps(json.load(open(os.path.join(f, n))), separators=(",", ":")).encode()
for i, (a, b) in enumerate(pairs):
    with open(os.path.join(out, "pair%d" % i), "wb") as o:
        o.write(mini(a) + b"\0" + mini(b))
PY
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
              writer_trace.json:timeline roofline_crowded.hatchet:roofline remarks.hatchet:remarks; do
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

# ---- 6. memory --------------------------------------------------------------------------------------
# A 64 MB trace (100k launches, counter samples, in-kernel scopes): report and html
# stream it, so their peak RSS stays far below the file size (reading it whole took
# about 11x the file). `make bench` measures the same on a 1 GB capture.
t0=$(date +%s)
python3 - "$O/big.json" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"displayTimeUnit": "ns", "otherData": {"clock_source": "tsc"}, "traceEvents": [\n')
    for i in range(100000):
        t = i * 20
        f.write('{"name": "k%d", "cat": "kernel", "ph": "X", "pid": 9, "tid": 0, "ts": %d.125, "dur": 15.5, '
                '"args": {"grid": [2, 1, 1], "programs": 2, "threads": 2, "constexprs": {"BLOCK": 32}, '
                '"counters": {"task-clock (ns)": 2944, "page-faults": 6}, "bytes": 512, "flops32": 64.0, '
                '"call_stack": ["ROOT", "step", "k%d"]}},\n' % (i % 4, t, i % 4))
        for c in ("task-clock (ns)", "page-faults"):
            f.write('{"name": "%s", "cat": "counter", "ph": "C", "pid": 9, "tid": 0, "ts": %d.125, '
                    '"args": {"value": 6}},\n' % (c, t))
        f.write('{"name": "load", "cat": "scope", "ph": "X", "pid": 9, "tid": 1, "ts": %d.5, "dur": 3.0, '
                '"args": {"kernel": "k%d", "program": [1, 0, 0]}},\n' % (t, i % 4))
    f.write('{"name": "thread_name", "ph": "M", "pid": 9, "tid": 1, "args": {"name": "worker 1"}}\n]}\n')
PY
size_mb=$(( $(stat -c %s "$O/big.json") / 1048576 ))
for cmd in "report -m time/ms,count" "html -o $O/big.html"; do
  /usr/bin/time -f "%M" -o "$O/rss" "$CLI" $cmd "$O/big.json" >"$O/big.out" 2>"$O/big.err"
  rc=$?; rss_mb=$(( $(tail -1 "$O/rss") / 1024 ))
  if [ $rc -eq 0 ] && [ "$rss_mb" -lt $(( size_mb / 2 )) ]; then
    ok; echo "memory: ${cmd%% *} of a ${size_mb} MB trace: peak RSS ${rss_mb} MB"
  else
    bad "memory: ${cmd%% *} of a ${size_mb} MB trace: exit $rc, peak RSS ${rss_mb} MB (want < $(( size_mb / 2 )) MB)"
  fi
done
grep -q "the page's timeline shows 20000 of them" "$O/big.err" || bad "memory: html says nothing about the decimated timeline"
echo "memory: $(( $(date +%s) - t0 ))s"

# ---- 7. roofline, measured ---------------------------------------------------------------------
# A real measurement of this machine (bounds only: the figures are the machine's) over a
# corrupt cache, which must be reported and replaced; the second run reads the cache.
t0=$(date +%s)
RC=$ROOT/$OUT/roofcache
cache=$(XDG_CACHE_HOME=$RC "$CLI" roofline --cache-path)
mkdir -p "$(dirname "$cache")" && echo '{"format": "tritium-roofline-peaks", "version": 1, ' >"$cache"
for i in 1 2; do
  XDG_CACHE_HOME=$RC TRITIUM_ROOFLINE_PEAKS= "$CLI" roofline --format json >"$O/roof$i.json" 2>"$O/roof$i.err"
done
if python3 - "$O" "$cache" <<'PY'
import json, sys
o, cache = sys.argv[1:]
r1, r2 = (json.load(open(f"{o}/roof{i}.json"))["roofs"] for i in (1, 2))
e1, e2 = (open(f"{o}/roof{i}.err").read() for i in (1, 2))
c = json.load(open(cache))
f = r1["fma_gflops"]
ok = ("is not usable" in e1 and "measuring the roofs" in e1 and e2 == "" and r1 == r2
      and f["fp32"] > 0 and f["fp64"] > 0 and f["bf16"] >= 0 and r1["read_gbps"] > 0
      and c["fma_gflops"]["fp32"] == f["fp32"] and r1["source"] == cache)
print("roofline: measured fp32 %.1f, fp64 %.1f, bf16 %.1f GFLOP/s, read %.1f GB/s in %.2f s" % (
    f["fp32"], f["fp64"], f["bf16"], r1["read_gbps"], c["seconds"]))
sys.exit(0 if ok else 1)
PY
then ok; else bad "roofline measurement (see $O/roof1.err, $O/roof1.json, $O/roof2.*)"; fi
echo "roofline: $(( $(date +%s) - t0 ))s"

echo "proton-cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
