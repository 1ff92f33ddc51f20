#!/usr/bin/env bash
# tests/lowering/run.sh — golden tests of the lowering (TTIR -> Linalg MLIR).
#
#   tests/lowering/run.sh [-u] [file.ttir ...]
#
# Each tests/lowering/*.ttir is run through tritium-opt with the options of its
# "// RUN:" line (--emit=linalg with a pinned vector width, --remarks so the
# fallbacks' compiler remarks are part of the output) and the output is diffed
# against its "// >>> expect" block, exactly as tests/ir/run.sh does (which this
# script runs on these files). -u rewrites the blocks from the actual output:
# review the diff before committing it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
u=()
if [ "${1:-}" = "-u" ]; then u=(-u); shift; fi
files=("$@")
[ ${#files[@]} -eq 0 ] && files=("$here"/*.ttir)
TRITIUM_TEST_LABEL=tests/lowering exec "$here/../ir/run.sh" "${u[@]}" "${files[@]}"
