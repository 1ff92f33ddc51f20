#!/usr/bin/env bash
# scripts/run_tests.sh — runs every test suite; called by `make test` after setup and build.
#
#   1. C unit tests (cmocka), one binary per module: build/tests/test_*
#   2. every tests/<area>/run.sh (IR file tests, viewer goldens, fuzzing, browser test)
#   3. pytest tests/python (front end, runtime, Proton, end to end, against torch)
#   4. the C unit tests again under ASan + UBSan (make SAN=1)
#
# Prints one line per suite and a summary; exits nonzero if any suite failed.
# TRITIUM_TEST_ONLY="c ir python asan viewers ..." restricts the suites.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PWD/build/bin:$PATH"
PY=.venv/bin/python3
only="${TRITIUM_TEST_ONLY:-}"
want() { [ -z "$only" ] || [[ " $only " == *" $1 "* ]]; }
failed=()
t_start=$(date +%s)

suite() { # name cmd...
  local name=$1; shift
  local t0=$(date +%s)
  echo "=== $name"
  if "$@"; then echo "--- $name: ok ($(( $(date +%s) - t0 ))s)"
  else echo "--- $name: FAILED ($(( $(date +%s) - t0 ))s)"; failed+=("$name"); fi
}

run_c_units() {
  local dir=$1 rc=0
  for t in "$dir"/tests/test_*; do
    [ -x "$t" ] || continue
    "$t" || { echo "FAILED: $t"; rc=1; }
  done
  return $rc
}

if want c; then suite "C unit tests" run_c_units build; fi
for r in tests/*/run.sh; do
  [ -x "$r" ] || continue
  area=$(basename "$(dirname "$r")")
  if want "$area"; then suite "tests/$area" "$r"; fi
done
if want python; then suite "pytest" $PY -m pytest -q -x tests/python -p no:cacheprovider; fi
run_asan() {
  make --no-print-directory -s SAN=1 test-c-bins >/dev/null || return 1
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 run_c_units build-san
}
if want asan; then suite "C unit tests (ASan+UBSan)" run_asan; fi

echo "=== total $(( $(date +%s) - t_start ))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED suites: ${failed[*]}"; exit 1
fi
echo "all suites passed"
