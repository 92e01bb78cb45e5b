#!/bin/sh
# malformed.sh — no grad statement crashes tecc (TAP).  Each token of the
# grad statements below is in turn deleted, doubled, swapped with the next
# and replaced by each token of a list, and each line is cut at every
# character; every variant must compile (exit 0) or be reported (exit 1,
# with an error), never an internal error or a signal.
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-grad-malformed.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

forward='kernel k(x: f32[N], w: f32[N], i: i32[N]) -> (y, z) {
    y = x * w
    z = i + 1
}'
statements='kernel g = grad(k, x, w)
kernel h = grad(g)'
replacements='kernel grad detach k g h x w i y dy dx N ( ) , = ; { } -> 1 2.5 "a.te" import fn : f32 @ +'

# variants LINE: one variant a line
variants() {
  set -f
  # shellcheck disable=SC2086 # the tokens are words
  set -- $(printf '%s\n' "$1" | sed 's/\([(),=]\)/ \1 /g')
  n=$#
  i=1
  while [ $i -le $n ]; do
    j=1 del= dup= swp=
    for t in "$@"; do
      [ $j -ne $i ] && del="$del $t"
      dup="$dup $t"; [ $j -eq $i ] && dup="$dup $t"
      j=$((j + 1))
    done
    echo "$del"; echo "$dup"
    for r in $replacements; do
      j=1 rep=
      for t in "$@"; do
        if [ $j -eq $i ]; then rep="$rep $r"; else rep="$rep $t"; fi
        j=$((j + 1))
      done
      echo "$rep"
    done
    i=$((i + 1))
  done
  set +f
}

: > "$work/list"
printf '%s\n' "$statements" | while IFS= read -r line; do
  variants "$line" >> "$work/list"
  k=1
  while [ $k -lt ${#line} ]; do
    printf '%s\n' "$line" | cut -c1-$k >> "$work/list"
    k=$((k + 1))
  done
done
sort -u "$work/list" > "$work/variants"
plan "$(wc -l < "$work/variants" | tr -d ' ')"
n=0
while IFS= read -r variant; do
  n=$((n + 1))
  { printf '%s\n' "$forward"; printf '%s\n' "$statements" | head -n 1
    printf '%s\n' "$variant"; } > "$work/v$n.te"
  "$TECC" -w "$work/v$n.te" -o "$work/v$n.cu" > "$work/err" 2>&1
  rc=$?
  if { [ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -q 'error: ' "$work/err"; }; } &&
     ! grep -q 'internal compiler error' "$work/err"; then
    pass "exit $rc: $variant"
  else
    fail "exit $rc: $variant"
    diag "$(head -n 5 "$work/err")"
  fi
done < "$work/variants"
done_testing
