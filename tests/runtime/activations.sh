#!/bin/sh
# activations.sh — builds tests/runtime/activations_test.cu with nvcc and
# runs it (TAP): the runtime's f32 activations against float64, every
# float.  Skipped without nvcc or without a GPU.
. "${top_srcdir:-.}/tests/runtime/cu_test.sh"
need_gpu
run_cu activations_test $(native_arch)
