#!/bin/sh
# sema.sh — golden tests of the semantic diagnostics (language.md §3-§11).
# For each tests/sema/NAME.te:
#   NAME.expected  the exact stderr of `tecc --emit=ir [ARGS] NAME.te`, run in
#                  tests/sema so that positions read NAME.te:L:C
#   NAME.args      (optional) extra command-line arguments, one line
# The exit status must be 1 when the expected text has an error, else 0.
: "${TECC:?TECC must name the tecc binary}"
: "${top_srcdir:=.}"
dir="$top_srcdir/tests/sema"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tecc-sema.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

cases=$(cd "$dir" && ls *.te | sed 's/\.te$//')
echo "1..$(echo "$cases" | wc -l | tr -d ' ')"
n=0
for name in $cases; do
  n=$((n + 1))
  args=
  [ -f "$dir/$name.args" ] && args=$(cat "$dir/$name.args")
  # shellcheck disable=SC2086
  (cd "$dir" && "$TECC" --emit=ir $args "$name.te" >/dev/null 2>"$tmp/err")
  status=$?
  want=0
  grep -q 'error: ' "$dir/$name.expected" && want=1
  if diff -u "$dir/$name.expected" "$tmp/err" >"$tmp/diff" 2>&1 &&
     [ "$status" = "$want" ]; then
    echo "ok $n - $name"
  else
    echo "not ok $n - $name (exit status $status, expected $want)"
    sed 's/^/# /' "$tmp/diff"
  fi
done
