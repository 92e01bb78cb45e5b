#!/bin/sh
# layering.sh — the architecture of lib/ stays as doc/internals.md draws
# it.  A module is a header X.h with the files that implement it: X.c and
# any X_<part>.c for which no X_<part>.h exists (sema.c and sema_expr.c
# are module sema; emit_cu.c, with emit_cu.h, is a module of its own); the
# parser's module is parse (grammar/parser.y).  A module uses another by
# including its header, and
#   1. the "uses" graph has no cycle (tsort finds none);
#   2. every function a header declares is defined in its own module
#      (so that the includes show every call between modules; tecc.h, the
#      public API that api.c implements, aside);
#   3. sema does not use lower: sema finishes before lowering starts.
. "$top_srcdir/tests/tap.sh"
lib="$top_srcdir/lib"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-layering.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# The module of a lib/ file: the longest name X, at '_' boundaries, with
# a header lib/X.h; else the file's own stem.
module() {
  stem=$(basename "$1" | sed 's/\.[ch]$//')
  try=$stem
  while :; do
    [ -f "$lib/$try.h" ] && { echo "$try"; return; }
    case $try in *_*) try=${try%_*} ;; *) echo "$stem"; return ;; esac
  done
}

sources() { ls "$lib"/*.c "$lib"/*.h | grep -v '_embed\.c$'; }

for f in $(sources); do
  from=$(module "$f")
  sed -n 's/^#include "\([a-z_0-9]*\)\.h".*/\1/p' "$f" | while read -r to; do
    [ "$to" = "$from" ] || echo "$from $to"
  done
done | sort -u > "$work/edges"

plan 3
tsort "$work/edges" > /dev/null 2> "$work/loops"
if [ -s "$work/loops" ]; then
  ok "lib/ modules use each other without a cycle" false
  sed 's/^/# /' "$work/loops"
else
  ok "lib/ modules use each other without a cycle ($(wc -l < "$work/edges") uses)" true
fi

# The files that implement module $1.
implementation() {
  [ "$1" = parse ] && echo "$top_srcdir/grammar/parser.y"
  for f in "$lib"/*.c; do
    [ "$(module "$f")" = "$1" ] && echo "$f"
  done
}

# Function names a header declares: a line that starts a declaration at
# column 0 and names a function before its '('.
declared() {
  grep -E '^[A-Za-z][A-Za-z0-9_ ]*[ *]+[a-z_][a-z0-9_]*\(' "$1" |
    grep -vE '^(typedef|static|extern|#)' |
    sed -E 's/^[A-Za-z][A-Za-z0-9_ ]*[ *]+([a-z_][a-z0-9_]*)\(.*/\1/'
}

: > "$work/misplaced"
for h in "$lib"/*.h; do
  m=$(basename "$h" .h)
  [ "$m" = tecc ] && continue
  files=$(implementation "$m")
  for name in $(declared "$h"); do
    # shellcheck disable=SC2086
    [ -n "$files" ] && grep -qE "^[A-Za-z].*[ *]$name\(.*[^;]\$" $files ||
      echo "$m.h declares $name, defined outside module $m" >> "$work/misplaced"
  done
done
if [ -s "$work/misplaced" ]; then
  ok "every header declares only its own module's functions" false
  sed 's/^/# /' "$work/misplaced"
else
  ok "every header declares only its own module's functions" true
fi

ok "sema does not use lower" sh -c "! grep -q '^sema lower\$' '$work/edges'"
