#!/usr/bin/env bash
# tests/upstream/run.sh — the fast sample of upstream Triton's test_core.py (part of
# `make test`): every node id in tests/upstream/sample_passing.txt must pass.
#
# The tests are read from an upstream Triton git directory (UPSTREAM_TRITON_GIT, default
# the local mirror; commit UPSTREAM_TRITON_COMMIT); without one the suite says so and
# passes. `make test-upstream` runs the whole interpreter-marked set (README
# "Upstream's test suite"). Regenerate the list after fixing failures with
#   tests/upstream/run.py --every 40 --write-passing tests/upstream/sample_passing.txt
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
exec "$root/.venv/bin/python3" "$here/run.py" --nodes "$here/sample_passing.txt" \
  --expect "$here/sample_passing.txt" --out "$root/build/upstream/sample" --quiet
