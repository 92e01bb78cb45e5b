#!/bin/sh
# GPU tests of the Python module python/tecc with PyTorch tensors (TAP),
# against hand-written entry points (tests/python/fixture.cu) and kernels
# tecc builds (tests/python/grad_ops.te, examples/torch).
: "${top_srcdir:=.}"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "1..0 # SKIP no GPU"; exit 0; fi
if [ -z "${NVCC:-}" ]; then echo "1..0 # SKIP no nvcc"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then echo "1..0 # SKIP python3 not found"; exit 0; fi
work=${TMPDIR:-/tmp}/tecc-python-gpu.$$
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work"
# tecc.build() caches in the work directory, not in ~/.cache/tecc.
TECC_CACHE_DIR=$work/cache; export TECC_CACHE_DIR
NVCC=$NVCC PYTHONDONTWRITEBYTECODE=1 python3 "$top_srcdir/tests/python/test_tecc_gpu.py" "$top_srcdir" "$work"
