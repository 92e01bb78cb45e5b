#!/bin/sh
# suite.sh — tests/bench/*.te are the programs of bench/suite.py (each
# case's Case.te(dtype) for every dtype of suite.DTYPES), committed so that
# tests/nvcc/compile.sh builds and checks them (ptxas: no stack frame, no
# spill) on a machine without python3.  One test point a case and dtype,
# plus one for the set (no file without a case).  Skipped without python3.
#
#   sh tests/bench/suite.sh --write     rewrites tests/bench/ from suite.py
: "${top_srcdir:=.}"
. "$top_srcdir/tests/tap.sh"
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" > /dev/null 2>&1 || skip_all "python3 not found"
dir=$(mktemp -d "${TMPDIR:-/tmp}/tecc-bench.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
(cd "$top_srcdir/bench" && "$PYTHON" -c '
import sys, suite
for c in suite.cases():
    for d in suite.DTYPES:
        with open("%s/%s.te" % (sys.argv[1], c.kernel(d)), "w") as f:
            f.write(c.te(d))
' "$dir") || { echo "1..1"; echo "not ok 1 - bench/suite.py writes its programs"; exit 1; }
if [ "$1" = --write ]; then
  rm -f "$top_srcdir"/tests/bench/*.te && cp "$dir"/*.te "$top_srcdir/tests/bench/" && ls "$dir" | wc -l
  exit $?
fi
for te in "$dir"/*.te; do
  name=$(basename "$te")
  if cmp -s "$te" "$top_srcdir/tests/bench/$name"; then
    pass "tests/bench/$name is bench/suite.py's"
  else
    fail "tests/bench/$name is bench/suite.py's (sh tests/bench/suite.sh --write)"
  fi
done
extra=
for te in "$top_srcdir"/tests/bench/*.te; do
  [ -f "$dir/$(basename "$te")" ] || extra="$extra $(basename "$te")"
done
is "$extra" "" "no tests/bench/*.te without a case of bench/suite.py"
done_testing
