#!/bin/sh
# trig.sh — tecc's own sin, cos and tan (the runtime's sin cos tan piece)
# against glibc, on the host: builds tests/runtime/trig_test.cu with nvcc
# and runs it (TAP).  No GPU needed; skipped without nvcc.
. "${top_srcdir:-.}/tests/runtime/cu_test.sh"
run_cu trig_test -Xcompiler -Wall,-Wextra
