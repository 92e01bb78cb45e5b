#!/bin/sh
# run.sh — GPU conformance (TAP): every test program and example, compiled
# with tecc and nvcc, run on random inputs for many size bindings and
# compared element by element with the reference interpreter.
# CONFORM_OPT picks the optimization level (default -O2); run-O0.sh sets -O0.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "1..0 # SKIP no GPU (nvidia-smi -L failed)"
  exit 0
fi
if [ -z "$NVCC" ]; then
  echo "1..0 # SKIP nvcc not found by configure"
  exit 0
fi
exec "$top_builddir/tests/conform/tecc-conform" --tap ${CONFORM_OPT:--O2} \
  --nvcc="$NVCC" --arch="${CONFORM_ARCH:-native}" ${CONFORM_FLAGS} \
  "$top_srcdir"/tests/programs/*.te "$top_srcdir"/examples/*.te
