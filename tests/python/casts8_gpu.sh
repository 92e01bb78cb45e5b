#!/bin/sh
# The 8-bit casts against PyTorch's on the GPU (TAP): every f16 and bf16
# pattern, 10^8 random f32 patterns, the special values
# (tests/python/test_casts8_gpu.py).
: "${top_srcdir:=.}"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "1..0 # SKIP no GPU"; exit 0; fi
if [ -z "${NVCC:-}" ]; then echo "1..0 # SKIP no nvcc"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then echo "1..0 # SKIP python3 not found"; exit 0; fi
work=${TMPDIR:-/tmp}/tecc-casts8.$$
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work"
TECC_CACHE_DIR=$work/cache; export TECC_CACHE_DIR
NVCC=$NVCC PYTHONDONTWRITEBYTECODE=1 python3 "$top_srcdir/tests/python/test_casts8_gpu.py" "$top_srcdir" "$work"
