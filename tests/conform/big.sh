#!/bin/sh
# big.sh — tensors of more than 2^31 elements on the GPU (needs ~4.5 GB of
# device memory).  Skipped without a GPU or nvcc, or when TECC_SKIP_BIG is set.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "1..0 # SKIP no GPU (nvidia-smi -L failed)"
  exit 0
fi
if [ -z "$NVCC" ] || [ -n "$TECC_SKIP_BIG" ]; then
  echo "1..0 # SKIP nvcc not found, or TECC_SKIP_BIG set"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-big.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
"$TECC" "$top_srcdir/tests/conform/big.te" -o "$dir/big.cu" || { echo "Bail out! tecc failed"; exit 1; }
cp "$top_srcdir/tests/conform/big_main.cu" "$dir/" &&
"$NVCC" -O2 -arch="${CONFORM_ARCH:-native}" -o "$dir/big" "$dir/big_main.cu" "$dir/big.cu" ||
  { echo "Bail out! nvcc failed"; exit 1; }
"$dir/big"
