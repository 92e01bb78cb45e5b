#!/bin/sh
# host.sh — builds tests/runtime/host_test.cu with nvcc and runs it on the
# host (TAP): the runtime's fitting of blocks and clusters to the sizes.
# Needs nvcc, not a GPU.
. "${top_srcdir:-.}/tests/runtime/cu_test.sh"
run_cu host_test -Xcompiler -Wall,-Wextra
