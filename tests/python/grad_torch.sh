#!/bin/sh
# Every gradient against torch.autograd in float64, on the GPU (TAP): one
# line per builtin of lib/ops.h and fn of lib/prelude.te, and for where,
# clamp, casts, broadcasts and detach (tests/python/test_grad_torch.py).
: "${top_srcdir:=.}"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "1..0 # SKIP no GPU"; exit 0; fi
if [ -z "${NVCC:-}" ]; then echo "1..0 # SKIP no nvcc"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then echo "1..0 # SKIP python3 not found"; exit 0; fi
if [ -z "${TECC:-}" ] && [ -x "${top_builddir:-.}/src/tecc" ]; then
  TECC=$(cd "${top_builddir:-.}" && pwd)/src/tecc; export TECC
fi
work=${TMPDIR:-/tmp}/tecc-grad-torch.$$
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work"
# tecc.build() caches in the work directory, not in ~/.cache/tecc.
TECC_CACHE_DIR=$work/cache; export TECC_CACHE_DIR
NVCC=$NVCC PYTHONDONTWRITEBYTECODE=1 python3 "$top_srcdir/tests/python/test_grad_torch.py" "$top_srcdir" "$work"
