#!/bin/sh
# host.sh — builds tests/runtime/host_test.cu with nvcc and runs it on the
# host (TAP): the runtime's fitting of blocks and clusters to the sizes.
# Needs nvcc, not a GPU.
: "${top_srcdir:=.}"
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-host.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if ! "$NVCC" -O2 -Werror all-warnings -o "$dir/host_test" "$top_srcdir/tests/runtime/host_test.cu" > "$dir/log" 2>&1; then
  echo "1..1"
  echo "not ok 1 - host_test.cu compiles"
  sed 's/^/# /' "$dir/log"
  exit 0
fi
"$dir/host_test"
