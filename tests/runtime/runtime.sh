#!/bin/sh
# runtime.sh — builds tests/runtime/runtime_test.cu with nvcc and runs it
# (TAP).  Skipped without nvcc or without a GPU.
: "${top_srcdir:=.}"
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "1..0 # SKIP no GPU"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-rt.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if ! "$NVCC" -O2 -Werror all-warnings -o "$dir/runtime_test" "$top_srcdir/tests/runtime/runtime_test.cu" > "$dir/log" 2>&1; then
  echo "1..1"
  echo "not ok 1 - runtime_test.cu compiles"
  sed 's/^/# /' "$dir/log"
  exit 0
fi
"$dir/runtime_test"
