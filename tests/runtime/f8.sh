#!/bin/sh
# f8.sh — builds tests/runtime/f8_test.cu with nvcc and runs it (TAP): the
# runtime's 8-bit conversions against their reference, every float.
# Built for the GPU at hand (-arch=native, where nvcc has it), so that on
# sm_89 and newer the hardware path is the one tested.  Skipped without
# nvcc or without a GPU.
. "${top_srcdir:-.}/tests/runtime/cu_test.sh"
need_gpu
run_cu f8_test $(native_arch)
