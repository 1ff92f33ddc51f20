#!/usr/bin/env bash
# scripts/demo.sh — runs the example kernels under Proton and prints the report.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "demo: not yet available"
