#!/bin/sh
# syntax.sh — golden tests of the lexical and syntax diagnostics and of the
# --emit=ast dump.  For each tests/syntax/NAME.te:
#   NAME.expected  the exact stderr of `tecc --emit=ast NAME.te` (run in the
#                  directory of the test, so positions read NAME.te:L:C);
#                  empty for a file that parses
#   NAME.ast       (optional) the exact stdout, the AST dump
#   NAME.plain     (optional) the exact stderr with --fdiagnostics-plain
# The exit status must be 1 when errors are expected and 0 otherwise.
# One TAP line per check, with a diff on failure.
: "${TECC:?TECC must name the tecc binary}"
: "${top_srcdir:=.}"
dir="$top_srcdir/tests/syntax"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tecc-syntax.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

cases=$(cd "$dir" && ls *.te | sed 's/\.te$//')
count=0
for name in $cases; do
  count=$((count + 1))
  [ -f "$dir/$name.ast" ] && count=$((count + 1))
  [ -f "$dir/$name.plain" ] && count=$((count + 1))
done
echo "1..$count"

n=0
report() { # report STATUS DESCRIPTION [DIFF-FILE]
  n=$((n + 1))
  if [ "$1" = 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    [ -n "$3" ] && sed 's/^/# /' "$3"
  fi
}

for name in $cases; do
  (cd "$dir" && "$TECC" --emit=ast "$name.te" >"$tmp/out" 2>"$tmp/err")
  status=$?
  want_status=0
  [ -s "$dir/$name.expected" ] && want_status=1
  diff -u "$dir/$name.expected" "$tmp/err" >"$tmp/diff" 2>&1
  ok=$?
  if [ $ok = 0 ] && [ $status != $want_status ]; then
    echo "exit status $status, expected $want_status" >"$tmp/diff"
    ok=1
  fi
  report $ok "$name: diagnostics" "$tmp/diff"
  if [ -f "$dir/$name.ast" ]; then
    diff -u "$dir/$name.ast" "$tmp/out" >"$tmp/diff" 2>&1
    report $? "$name: AST dump" "$tmp/diff"
  fi
  if [ -f "$dir/$name.plain" ]; then
    (cd "$dir" && "$TECC" --fdiagnostics-plain --emit=ast "$name.te" >/dev/null 2>"$tmp/err")
    diff -u "$dir/$name.plain" "$tmp/err" >"$tmp/diff" 2>&1
    report $? "$name: plain diagnostics" "$tmp/diff"
  fi
done
