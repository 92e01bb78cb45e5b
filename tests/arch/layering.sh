#!/bin/sh
# layering.sh — the architecture of lib/ stays as doc/internals.md draws
# it: a module is X.c with its X.h; a module uses another by including its
# header, and
#   1. the "uses" graph has no cycle (tsort finds none);
#   2. every function a header declares is defined in its own module's .c
#      (so that an include shows every call: no header declares another
#      module's functions), tecc.h (api.c) aside;
#   3. sema does not use lower (sema finishes before lowering starts).
. "$top_srcdir/tests/tap.sh"
lib="$top_srcdir/lib"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-layering.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

module() { basename "$1" | sed 's/\.[ch]$//'; }

# "from to" for every #include "x.h" of a lib/ file (itself aside).
for f in "$lib"/*.c "$lib"/*.h; do
  case $f in *_embed.c) continue ;; esac
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
  ok "lib/ modules use each other without a cycle" true
fi

# Function names a header declares: a line that starts a declaration at
# column 0 and names a function before its '('.
declared() {
  grep -E '^[A-Za-z][A-Za-z0-9_ ]*[ *]+[a-z_][a-z0-9_]*\(' "$1" |
    grep -vE '^(typedef|static|extern|struct [A-Za-z_]+ \{)' |
    sed -E 's/^[A-Za-z][A-Za-z0-9_ ]*[ *]+([a-z_][a-z0-9_]*)\(.*/\1/'
}
: > "$work/misplaced"
for h in "$lib"/*.h; do
  m=$(module "$h")
  [ "$m" = tecc ] && continue
  for name in $(declared "$h"); do
    grep -qE "^[A-Za-z].*[ *]$name\(.*[^;]\$" "$lib/$m.c" 2> /dev/null ||
      echo "$m.h declares $name, not defined in $m.c" >> "$work/misplaced"
  done
done
if [ -s "$work/misplaced" ]; then
  ok "every header declares only its own module's functions" false
  sed 's/^/# /' "$work/misplaced"
else
  ok "every header declares only its own module's functions" true
fi

ok "sema does not use lower" sh -c "! grep -q '^sema lower\$' '$work/edges'"
