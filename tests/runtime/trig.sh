#!/bin/sh
# trig.sh — tecc's own sin, cos and tan (the runtime's sin cos tan piece)
# against glibc, on the host: builds tests/runtime/trig_test.cu with nvcc
# and runs it (TAP).  No GPU needed; skipped without nvcc.
: "${top_srcdir:=.}"
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-trig.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if ! "$NVCC" -O2 -Werror all-warnings -Xcompiler -Wall,-Wextra -o "$dir/trig_test" \
     "$top_srcdir/tests/runtime/trig_test.cu" > "$dir/log" 2>&1; then
  echo "1..1"
  echo "not ok 1 - trig_test.cu compiles"
  sed 's/^/# /' "$dir/log"
  exit 0
fi
"$dir/trig_test"
