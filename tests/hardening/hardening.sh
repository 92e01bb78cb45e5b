#!/bin/sh
# hardening.sh — entry-point hardening on a GPU (TAP from hardening_main.cu):
# every status code of abi.md §3, argument errors write nothing, in-place
# and aliasing, several host threads on several streams, CUDA graph capture
# and replay, bitwise-repeatable runs, a library built with -DTECC_INDEX64=0.
# Skipped without a GPU or nvcc.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "1..0 # SKIP no GPU (nvidia-smi -L failed)"
  exit 0
fi
if [ -z "${NVCC:-}" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-hardening.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
src="$top_srcdir/tests/hardening"
arch=${CONFORM_ARCH:-native}
if ! "$TECC" "$src/hardening.te" -o "$dir/hardening.cu" > "$dir/log" 2>&1 ||
   ! "$TECC" -O0 "$src/hardening_ws.te" -o "$dir/hardening_ws.cu" >> "$dir/log" 2>&1 ||
   ! "$TECC" "$src/hardening_i32.te" -o "$dir/hardening_i32.cu" >> "$dir/log" 2>&1 ||
   ! "$NVCC" -O2 -arch="$arch" -DTECC_INDEX64=0 -c -o "$dir/hardening_i32.o" \
       "$dir/hardening_i32.cu" >> "$dir/log" 2>&1 ||
   ! "$NVCC" -O2 -std=c++17 -arch="$arch" -I"$dir" -o "$dir/hardening" \
       "$src/hardening_main.cu" "$dir/hardening.cu" "$dir/hardening_ws.cu" \
       "$dir/hardening_i32.o" >> "$dir/log" 2>&1; then
  echo "1..1"
  echo "not ok 1 - building the hardening test"
  sed 's/^/# /' "$dir/log" | head -n 40
  exit 0
fi
exec "$dir/hardening"
