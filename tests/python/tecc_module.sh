#!/bin/sh
# CPU-side tests of the Python module python/tecc (TAP).
: "${top_srcdir:=.}"
if ! command -v python3 >/dev/null 2>&1; then
  echo "1..0 # SKIP python3 not found"
  exit 0
fi
work=${TMPDIR:-/tmp}/tecc-python-test.$$
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work"
# tecc.build() caches in the work directory, not in ~/.cache/tecc.
TECC_CACHE_DIR=$work/cache; export TECC_CACHE_DIR
PYTHONDONTWRITEBYTECODE=1 python3 "$top_srcdir/tests/python/test_tecc_module.py" "$top_srcdir" "$work"
