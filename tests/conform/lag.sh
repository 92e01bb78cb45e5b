#!/bin/sh
# lag.sh — batch norms whose x is larger than L2, where the split plan runs
# as one persistent launch (GroupSchedule.lag), against a float64
# reference, each call three times the same bits (tests/conform/lag_main.cu).
# Skipped without a GPU or nvcc.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "1..0 # SKIP no GPU (nvidia-smi -L failed)"
  exit 0
fi
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-lag.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
"$TECC" "$top_srcdir/tests/conform/lag.te" -o "$dir/lag.cu" || { echo "Bail out! tecc failed"; exit 1; }
cp "$top_srcdir/tests/conform/lag_main.cu" "$dir/" &&
"$NVCC" -O2 -arch="${CONFORM_ARCH:-native}" -o "$dir/lag" "$dir/lag_main.cu" "$dir/lag.cu" ||
  { echo "Bail out! nvcc failed"; exit 1; }
"$dir/lag"
