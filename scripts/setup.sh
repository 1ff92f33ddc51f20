#!/usr/bin/env bash
# scripts/setup.sh — install everything Tritium needs on Debian 12, idempotently.
#
# 1. Debian packages (LLVM/MLIR 19, clang, lld, OpenMP, libpfm4, cJSON, SLEEF,
#    cmocka, Python headers, Chromium and qemu for tests) — skipped when present.
# 2. The project venv .venv with torch==2.13.0 (CPU build), numpy, pytest —
#    skipped when the recorded requirements have not changed.
# 3. A second venv ($TRITIUM_REF_VENV, default ~/.cache/tritium/ref-venv) holding
#    upstream triton (for proton-viewer) and llnl-hatchet, used only by tests that
#    check our files with the upstream readers. Never mixed with .venv.
#
# Runs in well under a second when nothing changed. Set TRITIUM_SETUP_VERBOSE=1
# to see every step.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

APT_PKGS=(
  build-essential make git pkg-config libclang-rt-19-dev
  llvm-19-dev libmlir-19-dev mlir-19-tools clang-19 lld-19 libomp-19-dev
  libpfm4-dev libcjson-dev libsleef-dev libcmocka-dev
  python3-dev python3-venv
  chromium qemu-user gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
)

missing=()
installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${APT_PKGS[@]}" 2>/dev/null \
            | awk '$2 == "installed" {print $1}' || true)
for p in "${APT_PKGS[@]}"; do
  grep -qx "$p" <<<"$installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- project venv --------------------------------------------------------------
VENV=.venv
REQS="torch==2.13.0 numpy pytest"
STAMP="$VENV/.tritium-reqs"
if [ ! -x "$VENV/bin/python3" ]; then
  say "creating $VENV"
  python3 -m venv "$VENV"
fi
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$REQS" ]; then
  say "installing into $VENV: $REQS (torch is the CPU build from the local index)"
  "$VENV/bin/python3" -m pip install -q --disable-pip-version-check $REQS
  echo "$REQS" > "$STAMP"
fi
# Make the in-tree package importable from the venv (python/triton), and put the
# tools on the venv's PATH.
SITE=$("$VENV/bin/python3" -c 'import sysconfig;print(sysconfig.get_paths()["purelib"])')
PTH="$SITE/tritium-dev.pth"
want="$(pwd)/python"
[ "$(cat "$PTH" 2>/dev/null || true)" = "$want" ] || echo "$want" > "$PTH"
for tool in proton-cli tritium-opt; do
  ln -sfn "$(pwd)/build/bin/$tool" "$VENV/bin/$tool"
done
# `proton` (upstream's command, the [project.scripts] entry point of pyproject.toml):
# scripts/proton runs `python -m triton.profiler.proton` with the python3 beside it.
ln -sfn "$(pwd)/scripts/proton" "$VENV/bin/proton"

# ---- reference venv (upstream proton-viewer + llnl-hatchet) ----------------------
REF_VENV="${TRITIUM_REF_VENV:-$HOME/.cache/tritium/ref-venv}"
REF_REQS="triton llnl-hatchet"
REF_STAMP="$REF_VENV/.tritium-reqs"
if [ "$(cat "$REF_STAMP" 2>/dev/null || true)" != "$REF_REQS" ]; then
  say "creating reference venv $REF_VENV (upstream triton wheel for proton-viewer, llnl-hatchet)"
  mkdir -p "$(dirname "$REF_VENV")"
  python3 -m venv "$REF_VENV"
  # --no-deps for triton: the viewer needs only its pure-Python parts, not a GPU torch.
  "$REF_VENV/bin/python3" -m pip install -q --disable-pip-version-check --no-deps triton \
    && "$REF_VENV/bin/python3" -m pip install -q --disable-pip-version-check llnl-hatchet \
    && echo "$REF_REQS" > "$REF_STAMP" \
    || say "warning: could not set up $REF_VENV; upstream-reader tests will fail until it exists"
fi
exit 0
