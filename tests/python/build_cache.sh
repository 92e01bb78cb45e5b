#!/bin/sh
# tecc.build()'s cache: the key, hits without nvcc, the architecture,
# concurrent builds of one key (TAP; tests/python/test_build_cache.py).
: "${top_srcdir:=.}"
if ! command -v python3 >/dev/null 2>&1; then
  echo "1..0 # SKIP python3 not found"
  exit 0
fi
work=${TMPDIR:-/tmp}/tecc-build-cache.$$
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work"
PYTHONDONTWRITEBYTECODE=1 python3 "$top_srcdir/tests/python/test_build_cache.py" "$top_srcdir" "$work"
