#!/usr/bin/env bash
# scripts/riscv_python.sh — the whole stack on riscv64, Python front end included, under
# qemu-user: Debian 13's python3, numpy and torch from the riscv64 sysroot, Tritium's
# compiler (libtritium_cg.so on the sysroot's LLVM/MLIR 19) and extension cross-built
# for it (make riscv64-python).
#
#   scripts/riscv_python.sh run script.py [args]   run a script with the riscv64 python3
#   scripts/riscv_python.sh test                   make test-riscv-python: vector add,
#                                                  softmax, ... (tests/riscv/python/)
#
# What runs where: python3 and everything it loads run under
# qemu-riscv64 -cpu rv64,v=true,vlen=256 -L <sysroot>. The compile server is a fork of
# that process (no exec). ld.lld is a child process: binfmt_misc is not mounted here, so
# a riscv64 process cannot exec a riscv64 program directly; build/riscv64/qemu-bin/ld.lld-19,
# first on the guest's PATH, runs the sysroot's riscv64 ld.lld through qemu. On a board
# none of this is needed: make test runs natively.
set -euo pipefail
cd "$(dirname "$0")/.."
RV=$PWD/build/riscv64
S=$RV/sysroot
cmd=${1:-test}
shift || true

if [ "$(uname -m)" = riscv64 ]; then
  echo "riscv_python.sh: this machine is riscv64; run make test natively" >&2
  exit 2
fi
for t in qemu-riscv64 riscv64-linux-gnu-gcc; do
  command -v "$t" >/dev/null || { echo "riscv_python: skipped: $t not installed (scripts/setup.sh)"; exit 0; }
done
scripts/riscv_sysroot.sh python
if [ ! -f "$S/.tritium-python" ]; then
  echo "riscv_python: skipped: the riscv64 python sysroot is unavailable ($(cat "$RV/sysroot.unavailable" 2>/dev/null))"
  exit 0
fi
make --no-print-directory -s riscv64-python >/dev/null

# The package the riscv64 python imports: python/triton's sources around the cross-built _C.
PKG=$RV/python/triton
for f in python/triton/*; do
  name=$(basename "$f")
  [ "$name" = _C ] || [ "$name" = __pycache__ ] || ln -sfn "$PWD/$f" "$PKG/$name"
done
WRAP=$RV/qemu-bin
mkdir -p "$WRAP"
cat > "$WRAP/ld.lld-19.tmp" <<EOF
#!/bin/sh
# ld.lld for riscv64 processes under qemu-user (written by scripts/riscv_python.sh)
[ -z "\${TRITIUM_LD_LOG:-}" ] || echo "riscv64 ld.lld under qemu: \$*" >> "\$TRITIUM_LD_LOG"
exec qemu-riscv64 -L "$S" "$S/usr/lib/llvm-19/bin/ld.lld" "\$@"
EOF
chmod +x "$WRAP/ld.lld-19.tmp"
mv "$WRAP/ld.lld-19.tmp" "$WRAP/ld.lld-19"

QEMU=(qemu-riscv64 -cpu rv64,v=true,vlen=256,vext_spec=v1.0 -L "$S")
rvpython() {
  env PATH="$WRAP:$PATH" PYTHONPATH="$RV/python" PYTHONPYCACHEPREFIX="$RV/pycache" \
    SPINE_TRITON_TARGET_ARCH="${SPINE_TRITON_TARGET_ARCH-riscv64}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" \
    "${QEMU[@]}" "$S/usr/bin/python3" "$@"
}

case "$cmd" in
  run) rvpython "$@" ;;
  test)
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    fails=0
    for t in tests/riscv/python/*.py; do
      t0=$(date +%s)
      if TRITON_CACHE_DIR=$out/cache TRITIUM_LD_LOG=$out/ld.log rvpython "$t" "$out"; then
        echo "--- $t: ok ($(( $(date +%s) - t0 ))s)"
      else
        echo "--- $t: FAILED ($(( $(date +%s) - t0 ))s)"
        fails=$((fails + 1))
      fi
    done
    # the trace the riscv64 process wrote, read by this machine's proton-cli
    if [ -f "$out/scoped.json" ]; then
      report=$(build/bin/proton-cli report "$out/scoped.json" -m count 2>&1) || true
      echo "$report"
      grep -q scoped_kernel <<<"$report" && grep -q load <<<"$report" \
        || { echo "riscv_python: proton-cli report does not show the kernel and its scope"; fails=$((fails + 1)); }
    fi
    links=$(wc -l < "$out/ld.log" 2>/dev/null || echo 0)
    echo "riscv_python: $links kernel links ran the riscv64 ld.lld under qemu"
    [ "$links" -gt 0 ] || { echo "riscv_python: no link went through the riscv64 ld.lld"; fails=$((fails + 1)); }
    [ "$fails" = 0 ] && echo "riscv_python: ok" || { echo "riscv_python: $fails FAILED"; exit 1; }
    ;;
  *) echo "usage: $0 [test | run script.py args...]" >&2; exit 2 ;;
esac
