#!/bin/sh
# ir.sh — golden tests of `tecc --emit=ir` (sema, lowering and opt.c).
# For each tests/ir/NAME.te, run in tests/ir:
#   NAME.ir    the exact stdout of `tecc --emit=ir [ARGS] NAME.te`
#   NAME.args  (optional) extra command-line arguments, one line
# stderr must be empty and the exit status 0.  IR_SOURCE_DIR and
# IR_GOLDEN_DIR point it at other .te files and their .ir (ir-examples.sh).
: "${TECC:?TECC must name the tecc binary}"
: "${top_srcdir:=.}"
src=${IR_SOURCE_DIR:-$top_srcdir/tests/ir}
dir=${IR_GOLDEN_DIR:-$src}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tecc-ir.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

cases=$(cd "$src" && ls *.te | sed 's/\.te$//')
echo "1..$(echo "$cases" | wc -l | tr -d ' ')"
n=0
for name in $cases; do
  n=$((n + 1))
  args=
  [ -f "$dir/$name.args" ] && args=$(cat "$dir/$name.args")
  # shellcheck disable=SC2086
  (cd "$src" && "$TECC" --emit=ir $args "$name.te" >"$tmp/out" 2>"$tmp/err")
  status=$?
  if diff -u "$dir/$name.ir" "$tmp/out" >"$tmp/diff" 2>&1 &&
     [ "$status" = 0 ] && [ ! -s "$tmp/err" ]; then
    echo "ok $n - $name"
  else
    echo "not ok $n - $name (exit status $status)"
    sed 's/^/# /' "$tmp/err" "$tmp/diff"
  fi
done
