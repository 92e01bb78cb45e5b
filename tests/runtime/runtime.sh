#!/bin/sh
# runtime.sh — builds tests/runtime/runtime_test.cu with nvcc and runs it
# (TAP).  Skipped without nvcc or without a GPU.
. "${top_srcdir:-.}/tests/runtime/gpu_test.sh"
if ! "$NVCC" -O2 -Werror all-warnings -o "$dir/runtime_test" "$top_srcdir/tests/runtime/runtime_test.cu" > "$dir/log" 2>&1; then
  echo "1..1"
  echo "not ok 1 - runtime_test.cu compiles"
  sed 's/^/# /' "$dir/log"
  exit 0
fi
"$dir/runtime_test"
