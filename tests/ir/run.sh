#!/usr/bin/env bash
# tests/ir/run.sh — runs the TTIR file tests (docs/ttir.md §3).
#
#   tests/ir/run.sh [-u] [file.ttir ...]
#
# Each tests/ir/*.ttir file is run through tritium-opt with the options of its
# "// RUN:" line; the output (stdout and stderr) is diffed against the
# "// >>> expect" (exit status 0) or "// >>> error" (exit status 1) block.
# Every input that parses is also round-tripped: print -> parse -> print must be
# identical, and so must a re-print of the pipeline's TTIR output.
# Files starting with "_" are slow and run only when named or with
# TRITIUM_IR_SLOW=1; "// skip riscv" skips a file on riscv64 targets.
# -u rewrites the expect/error block of each file with the actual output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
opt=${TRITIUM_OPT:-$root/build/bin/tritium-opt}
update=0
if [ "${1:-}" = "-u" ]; then update=1; shift; fi
[ -x "$opt" ] || { echo "run.sh: $opt not built (make build/bin/tritium-opt)"; exit 1; }

arch=$(uname -m)
[ "${SPINE_TRITON_TARGET_ARCH:-}" = riscv64 ] && arch=riscv64

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  for f in "$here"/*.ttir; do
    b=$(basename "$f")
    [[ $b == _* && "${TRITIUM_IR_SLOW:-0}" != 1 ]] && continue
    files+=("$f")
  done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0

# expected_block FILE -> prints the block body (the "// " prefix removed) and
# sets $kind to expect|error (empty when the file has no block)
expected_block() {
  awk '
    /^\/\/ >>> (expect|error)$/ { inb = 1; print "#KIND " $3; next }
    /^\/\/ <<<$/ { inb = 0; next }
    inb { sub(/^\/\/ ?/, ""); print }
  ' "$1"
}

# rewrite_block FILE ACTUAL KIND: replaces the block (or appends one)
rewrite_block() {
  awk -v actual="$2" -v kind="$3" '
    BEGIN { n = split(actual, L, "\n") }
    function emit() { print "// >>> " kind; for (i = 1; i <= n; i++) print (L[i] == "" ? "//" : "// " L[i]); print "// <<<" }
    /^\/\/ >>> (expect|error)$/ { skipping = 1; emit(); done = 1; next }
    skipping && /^\/\/ <<<$/ { skipping = 0; next }
    skipping { next }
    { print }
    END { if (!done) emit() }
  ' "$1" > "$1.new" && mv "$1.new" "$1"
}

for f in "${files[@]}"; do
  b=$(basename "$f")
  if [ "$arch" = riscv64 ] && grep -q '^// skip riscv' "$f"; then skip=$((skip + 1)); continue; fi
  args=$(sed -n 's|^// RUN: *||p' "$f" | head -1)
  want=$(expected_block "$f")
  kind=$(printf '%s\n' "$want" | sed -n 's/^#KIND //p' | head -1)
  want=$(printf '%s\n' "$want" | grep -v '^#KIND ')
  ok=1
  # the test itself: run from tests/ir so messages name the bare file
  # shellcheck disable=SC2086
  got=$(cd "$(dirname "$f")" && "$opt" "$b" $args 2>&1)
  rc=$?
  if [ $update = 1 ]; then
    k=expect; [ $rc -ne 0 ] && k=error
    rewrite_block "$f" "$got" "$k"
    kind=$k want=$got
  fi
  if [ -z "$kind" ]; then
    echo "FAIL $b: no '// >>> expect' or '// >>> error' block"; ok=0
  elif [ "$kind" = expect ] && [ $rc -ne 0 ]; then
    echo "FAIL $b: exit status $rc, expected 0"; ok=0
  elif [ "$kind" = error ] && [ $rc -ne 1 ]; then
    echo "FAIL $b: exit status $rc, expected 1"; ok=0
  fi
  if [ $ok = 1 ] && [ "$got" != "$want" ]; then
    echo "FAIL $b: output differs (-expected +actual)"
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/    /' | head -40
    ok=0
  fi
  # round trips: the input as parsed, and the pipeline's TTIR output
  if (cd "$(dirname "$f")" && "$opt" "$b" --no-passes > "$tmp/p1" 2>/dev/null); then
    if ! "$opt" - --no-passes < "$tmp/p1" > "$tmp/p2" 2> "$tmp/e2" || ! cmp -s "$tmp/p1" "$tmp/p2"; then
      echo "FAIL $b: print -> parse -> print is not identical"
      diff "$tmp/p1" "$tmp/p2" | head -20 | sed 's/^/    /'; head -5 "$tmp/e2" | sed 's/^/    /'
      ok=0
    fi
    if [ "$kind" = expect ] && [[ " $args " != *" --emit="* || " $args " == *" --emit=ttir "* ]] &&
       [[ " $args " != *" --dump"* ]]; then
      printf '%s\n' "$got" > "$tmp/q1"
      locs=; [[ " $args " == *" --print-locs "* ]] && locs=--print-locs
      if ! "$opt" - --no-passes $locs < "$tmp/q1" > "$tmp/q2" 2>&1 || ! cmp -s "$tmp/q1" "$tmp/q2"; then
        echo "FAIL $b: the pipeline's output does not round-trip"
        diff "$tmp/q1" "$tmp/q2" | head -20 | sed 's/^/    /'
        ok=0
      fi
    fi
  fi
  if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "${TRITIUM_TEST_LABEL:-tests/ir}: $pass passed, $fail failed, $skip skipped"
# every stage of the sample kernels in tests/ir/stages/ is checked by the C unit test
# tests/unit/test_opt_stages.c
[ $fail -eq 0 ]
