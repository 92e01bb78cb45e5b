#!/bin/sh
# runtime.sh — builds tests/runtime/runtime_test.cu with nvcc and runs it
# (TAP).  Skipped without nvcc or without a GPU.
. "${top_srcdir:-.}/tests/runtime/cu_test.sh"
need_gpu
run_cu runtime_test
