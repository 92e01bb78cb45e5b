#!/bin/sh
# f8.sh — builds tests/runtime/f8_test.cu with nvcc and runs it (TAP): the
# runtime's 8-bit conversions against their reference, every float.
# Built for the GPU at hand (-arch=native, where nvcc has it), so that on
# sm_89 and newer the hardware path is the one tested.  Skipped without
# nvcc or without a GPU.
. "${top_srcdir:-.}/tests/runtime/gpu_test.sh"
# -arch=native where this nvcc takes it (a probe, so that an error in the
# test itself is not retried for the default architecture)
arch=
printf '__global__ void k(void) {}\n' > "$dir/probe.cu"
if "$NVCC" -arch=native -c -o "$dir/probe.o" "$dir/probe.cu" > /dev/null 2>&1; then
  arch=-arch=native
fi
if ! "$NVCC" -O2 -Werror all-warnings $arch -o "$dir/f8_test" "$top_srcdir/tests/runtime/f8_test.cu" > "$dir/log" 2>&1; then
  echo "1..1"
  echo "not ok 1 - f8_test.cu compiles${arch:+ ($arch)}"
  sed 's/^/# /' "$dir/log"
  exit 0
fi
"$dir/f8_test"
