#!/usr/bin/env bash
# scripts/riscv_sysroot.sh — a Debian 13 (trixie) riscv64 sysroot in the build tree,
# fetched from Debian's archive without touching the host's own package set.
#
#   scripts/riscv_sysroot.sh [launcher|python]     (default: launcher)
#
# launcher: libc, cJSON, libpfm4, libgomp, cmocka — what libtritium (runtime + Proton) and
#           tritium-run are cross-built against and run with under qemu-riscv64 (make
#           test-riscv). Called by scripts/setup.sh.
# python:   also python3, numpy, torch, the Python headers, LLVM/MLIR 19 and lld-19 —
#           the whole stack cross-built and run under qemu (make test-riscv-python).
#
# apt-get runs with its own lists, cache and an empty dpkg status under
# build/riscv64/apt (APT::Architecture=riscv64), resolves the dependency closure and
# downloads it; every .deb is unpacked with dpkg -x into build/riscv64/sysroot. A stamp
# per set makes a second run return at once. When the packages cannot be fetched
# (no network, archive unreachable) it says so in one line, writes
# build/riscv64/sysroot.unavailable (the RISC-V suites skip with that message; no retry
# for a day) and exits 0.
# Set TRITIUM_SETUP_VERBOSE=1 to see apt's output.
set -euo pipefail
cd "$(dirname "$0")/.."

SET=${1:-launcher}
RV=${TRITIUM_RISCV_DIR:-$PWD/build/riscv64}
SYSROOT=$RV/sysroot
APT=$RV/apt
SUITE=trixie
MIRROR=${TRITIUM_DEBIAN_MIRROR:-http://deb.debian.org/debian}

LAUNCHER_PKGS="libc6-dev libcjson-dev libpfm4-dev libgomp1 libgcc-s1 libcmocka-dev"
PYTHON_PKGS="$LAUNCHER_PKGS python3 python3-numpy python3-torch python3-pytest libpython3-dev
  llvm-19-dev libmlir-19-dev lld-19 libstdc++-14-dev libclang-rt-19-dev"
case "$SET" in
  launcher) PKGS=$LAUNCHER_PKGS ;;
  python) PKGS=$PYTHON_PKGS ;;
  *) echo "usage: $0 [launcher|python]" >&2; exit 2 ;;
esac
PKGS=$(echo $PKGS)

say() { printf '[setup] %s\n' "$*"; }
stamp_ok() { [ "$(cat "$SYSROOT/.tritium-$1" 2>/dev/null || true)" = "$SUITE riscv64: ${2}" ]; }

# A python sysroot contains the launcher set.
if stamp_ok "$SET" "$PKGS" || { [ "$SET" = launcher ] && stamp_ok python "$(echo $PYTHON_PKGS)"; }; then
  rm -f "$RV/sysroot.unavailable"
  exit 0
fi

# A failed fetch is said once: for a day, later runs return quietly (the suites print
# their skip line); delete build/riscv64/sysroot.unavailable to retry sooner.
if [ -n "$(find "$RV/sysroot.unavailable" -mmin -1440 2>/dev/null)" ]; then
  exit 0
fi

unavailable() {
  mkdir -p "$RV"
  echo "$1" > "$RV/sysroot.unavailable"
  say "riscv64 sysroot ($SET): $1; the RISC-V suites will be skipped"
  exit 0
}

command -v apt-get >/dev/null && command -v dpkg >/dev/null || unavailable "apt-get/dpkg not found"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$KEYRING" ] || unavailable "$KEYRING missing (apt-get install debian-archive-keyring)"

mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/etc"
echo "deb [arch=riscv64 signed-by=$KEYRING] $MIRROR $SUITE main" > "$APT/etc/sources.list"
: > "$APT/status"
APT_OPTS=(-o APT::Architecture=riscv64 -o APT::Architectures::=riscv64
  -o Dir::State::Lists="$APT/lists" -o Dir::State::status="$APT/status"
  -o Dir::Etc::SourceList="$APT/etc/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o Dir::Etc::Preferences=/nonexistent -o Dir::Etc::PreferencesParts=/nonexistent
  -o Dir::Cache="$APT/cache" -o Debug::NoLocking=1 -o APT::Install-Recommends=0
  -o APT::Sandbox::User=root -o Acquire::Retries=2)
quiet() { if [ "${TRITIUM_SETUP_VERBOSE:-0}" = 1 ]; then "$@"; else "$@" >"$APT/log" 2>&1; fi; }

say "fetching Debian $SUITE riscv64 packages into $SYSROOT ($SET set)"
# The lists are refreshed when missing or older than a week.
if [ -z "$(find "$APT/lists" -name '*_Packages' -mtime -7 2>/dev/null | head -1)" ]; then
  quiet apt-get "${APT_OPTS[@]}" update || unavailable "apt-get update of $MIRROR $SUITE (riscv64) failed (see $APT/log)"
fi
# shellcheck disable=SC2086
quiet apt-get "${APT_OPTS[@]}" install -y -d $PKGS \
  || unavailable "downloading $PKGS failed (see $APT/log)"

# Unpack every downloaded package (the closure of the set; a re-run unpacks again,
# which is idempotent). Merged /usr: /lib, /bin, /sbin are links into /usr, as on trixie.
mkdir -p "$SYSROOT/usr/lib" "$SYSROOT/usr/bin" "$SYSROOT/usr/sbin"
for d in lib bin sbin; do
  [ -L "$SYSROOT/$d" ] || { rm -rf "${SYSROOT:?}/$d"; ln -s "usr/$d" "$SYSROOT/$d"; }
done
n=0
for deb in "$APT"/cache/archives/*.deb; do
  dpkg-deb -x "$deb" "$SYSROOT"
  n=$((n + 1))
done
# Absolute symlinks point into the host; make them relative to the sysroot.
find "$SYSROOT" -type l -lname '/*' -print0 | while IFS= read -r -d '' l; do
  t=$(readlink "$l")
  rel=$(realpath -m --relative-to="$(dirname "$l")" "$SYSROOT$t")
  ln -sfn "$rel" "$l"
done
# dpkg -x runs no maintainer scripts: make the update-alternatives links numpy needs
# (libblas.so.3, liblapack.so.3 from OpenBLAS when unpacked, else the reference ones).
MULTI=$SYSROOT/usr/lib/riscv64-linux-gnu
for lib in libblas.so.3 liblapack.so.3; do
  [ -e "$MULTI/$lib" ] && continue
  for d in openblas-pthread openblas-openmp openblas-serial blas lapack; do
    if [ -e "$MULTI/$d/$lib" ]; then ln -sfn "$d/$lib" "$MULTI/$lib"; break; fi
  done
done
rm -f "$RV/sysroot.unavailable"
echo "$SUITE riscv64: $PKGS" > "$SYSROOT/.tritium-$SET"
say "riscv64 sysroot: $n packages unpacked ($(du -sh "$SYSROOT" | cut -f1))"
