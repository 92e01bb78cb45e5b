#!/bin/sh
# types.sh — data-driven tests of dtype promotion (every dtype pair and weak
# literal, per operator class, unary builtins and reductions) and of
# broadcasting (literal 1s, size variables that never stretch), from the
# tables in tests/types/ (written by tests/types/gen-tables.py from a model
# of language.md §6-§10, not from tecc).  One TAP line per table row.
: "${TECC:?TECC must name the tecc binary}"
: "${top_srcdir:=.}"
dir="$top_srcdir/tests/types"
tab=$(printf '\t')
rows=$(($(wc -l <"$dir/promotion.tsv") + $(wc -l <"$dir/broadcast.tsv")))
echo "1..$rows"
n=0

# operand NAME TYPE: sets `decl` (a declaration or empty) and `use`.
operand() {
  case $2 in
  int) decl= use=3 ;;
  float) decl= use=2.5 ;;
  *) decl="$1: $2[N]" use=$1 ;;
  esac
}

program() { # program OP A B: the .te text computing y
  operand a "$2"; da=$decl ua=$use
  operand b "$3"; db=$decl ub=$use
  [ "$3" = - ] && db= 
  [ -n "$da" ] && echo "$da"
  [ -n "$db" ] && echo "$db"
  case $1 in
  maximum | atan2) echo "y = $1($ua, $ub)" ;;
  where) echo "c: bool[N]"; echo "y = where(c, $ua, $ub)" ;;
  neg) echo "y = -$ua" ;;
  not) echo "y = not $ua" ;;
  exp | abs | floor | isnan | sum | prod | max | mean | var | any | argmax)
    echo "y = $1($ua)" ;;
  *) echo "y = $ua $1 $ub" ;;
  esac
}

# The dtype, or the shape, of output y in the IR dump; "error" on failure.
result() { # result WHAT PROGRAM
  out=$(printf '%s\n' "$2" | "$TECC" --emit=ir -w - 2>/dev/null)
  status=$?
  case $status in
  0) ;;
  1) echo error; return ;;
  *) echo "crash (exit $status)"; return ;;
  esac
  sig=$(printf '%s\n' "$out" | sed -n '1s/.*-> (y: \(.*\))$/\1/p')
  case $1 in
  dtype) echo "${sig%%\[*}" ;;
  shape) echo "[${sig#*\[}" | tr -d ' ' ;;
  esac
}

check() { # check DESCRIPTION GOT WANT PROGRAM
  n=$((n + 1))
  if [ "$2" = "$3" ]; then
    echo "ok $n - $1"
  else
    echo "not ok $n - $1: got $2, expected $3"
    printf '%s\n' "$4" | sed 's/^/#   /'
  fi
}

while IFS=$tab read -r op a b want; do
  p=$(program "$op" "$a" "$b")
  check "$op $a $b -> $want" "$(result dtype "$p")" "$want" "$p"
done <"$dir/promotion.tsv"

while IFS=$tab read -r x y want; do
  p=$(printf 'a: f32%s\nb: f32%s\ny = a + b\n' "$x" "$y")
  check "$x with $y -> $want" "$(result shape "$p")" "$want" "$p"
done <"$dir/broadcast.tsv"
