#!/bin/sh
# valgrind.sh — tecc under valgrind (memcheck, leaks) over every test
# program: tests/programs, examples, tests/regress, tests/hardening at -O2
# (the whole pipeline to .cu + .h), and one random multi-kernel file at
# -O0, -O1 and -O2.  Runs in parallel, one TAP line per run.  Skipped when
# valgrind is missing or the build uses ASan.
. "$top_srcdir/tests/tap.sh"

command -v valgrind > /dev/null 2>&1 || skip_all "valgrind is not installed"
case "${CFLAGS-} $(grep -s '^SAN_CFLAGS' "$top_builddir/Makefile")" in
  *fsanitize=address*) skip_all "a sanitizer build (valgrind cannot run ASan binaries)" ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-valgrind.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)

gen="$top_builddir/tests/gen/gen"
[ -x "$gen" ] && "$gen" --seed 4242 --kernels 8 > "$work/random.te"

# one line per run: LEVEL FILE
{
  for f in "$top_srcdir"/tests/programs/*.te "$top_srcdir"/examples/*.te \
           "$top_srcdir"/tests/regress/*.te "$top_srcdir"/tests/hardening/*.te; do
    [ -f "$f" ] && echo "2 $f"
  done
  if [ -f "$work/random.te" ]; then
    for level in 0 1 2; do echo "$level $work/random.te"; done
  fi
} > "$work/runs"

n=0
while read -r level f; do
  n=$((n + 1))
  echo "$n $level $f"
done < "$work/runs" | xargs -P "$jobs" -L 1 sh -c '
  n=$0 level=$1 f=$2 w='"'$work'"'
  valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,possible \
    "$TECC" -w -O$level "$f" -o "$w/out$n.cu" > "$w/vg$n.log" 2>&1
  echo $? > "$w/rc$n"'

n=0
while read -r level f; do
  n=$((n + 1))
  rc=$(cat "$work/rc$n" 2>/dev/null)
  name="valgrind tecc -O$level $(basename "$f")"
  if [ "$rc" = 0 ]; then
    pass "$name"
  else
    fail "$name (exit ${rc:-none})"
    diag "$(head -n 30 "$work/vg$n.log")"
  fi
done < "$work/runs"
done_testing
