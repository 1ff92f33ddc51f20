#!/usr/bin/env bash
# scripts/setup.sh — install everything Tritium needs on Debian 12 (x86-64) or
# Debian 13 (riscv64, a SpacemiT K1/K3 board), idempotently.
#
# 1. Debian packages (LLVM/MLIR 19, clang, lld, OpenMP, libpfm4, cJSON, SLEEF,
#    cmocka, Python headers, Chromium and qemu for tests) — skipped when present.
#    On riscv64 also python3-torch, python3-numpy and python3-pytest (no torch wheel
#    exists there), and neither qemu nor the cross compiler.
# 2. The project venv .venv with torch==2.13.0 (CPU build), numpy, pytest —
#    skipped when the recorded requirements have not changed. On riscv64 the venv
#    uses the system site packages (Debian's torch and numpy).
# 3. A second venv ($TRITIUM_REF_VENV, default ~/.cache/tritium/ref-venv) holding
#    upstream triton (for proton-viewer) and llnl-hatchet, used only by tests that
#    check our files with the upstream readers. Never mixed with .venv. Not on
#    riscv64 (no upstream triton wheel): those tests skip.
# 4. Not on riscv64: a Debian 13 riscv64 sysroot in build/riscv64/sysroot
#    (scripts/riscv_sysroot.sh: cJSON, libpfm4, ... for the cross-built launcher of
#    make test-riscv); when it cannot be fetched, one line says so and the RISC-V
#    suites skip.
#
# Runs in well under a second when nothing changed. Set TRITIUM_SETUP_VERBOSE=1
# to see every step.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

ARCH=$(uname -m)
APT_PKGS=(
  build-essential make git pkg-config libclang-rt-19-dev
  llvm-19-dev libmlir-19-dev mlir-19-tools clang-19 lld-19 libomp-19-dev
  libpfm4-dev libcjson-dev libsleef-dev libcmocka-dev
  python3-dev python3-venv
)
if [ "$ARCH" = riscv64 ]; then
  APT_PKGS+=(python3-torch python3-numpy python3-pytest)
else
  APT_PKGS+=(chromium qemu-user gcc-riscv64-linux-gnu libc6-dev-riscv64-cross)
fi

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
VENV_OPTS=()
if [ "$ARCH" = riscv64 ]; then
  REQS="system: python3-torch python3-numpy python3-pytest"  # Debian's, through the system site
  VENV_OPTS=(--system-site-packages)
fi
STAMP="$VENV/.tritium-reqs"
if [ ! -x "$VENV/bin/python3" ]; then
  say "creating $VENV"
  python3 -m venv "${VENV_OPTS[@]}" "$VENV"
fi
if [ "$ARCH" = riscv64 ]; then
  [ "$(cat "$STAMP" 2>/dev/null || true)" = "$REQS" ] || echo "$REQS" > "$STAMP"
elif [ "$(cat "$STAMP" 2>/dev/null || true)" != "$REQS" ]; then
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
if [ "$ARCH" = riscv64 ]; then
  :  # no upstream triton wheel for riscv64: the upstream-reader tests skip
elif [ "$(cat "$REF_STAMP" 2>/dev/null || true)" != "$REF_REQS" ]; then
  say "creating reference venv $REF_VENV (upstream triton wheel for proton-viewer, llnl-hatchet)"
  mkdir -p "$(dirname "$REF_VENV")"
  python3 -m venv "$REF_VENV"
  # --no-deps for triton: the viewer needs only its pure-Python parts, not a GPU torch.
  "$REF_VENV/bin/python3" -m pip install -q --disable-pip-version-check --no-deps triton \
    && "$REF_VENV/bin/python3" -m pip install -q --disable-pip-version-check llnl-hatchet \
    && echo "$REF_REQS" > "$REF_STAMP" \
    || say "warning: could not set up $REF_VENV; upstream-reader tests will fail until it exists"
fi

# ---- riscv64 sysroot for the cross-built launcher (make test-riscv) ----------------------
if [ "$ARCH" != riscv64 ]; then
  scripts/riscv_sysroot.sh launcher
fi
exit 0
