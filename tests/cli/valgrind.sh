#!/bin/sh
# valgrind.sh — "any byte string as input: exit 0, 1 or 2, never a signal,
# never a leak": tecc under valgrind on valid, invalid and random inputs.
# (The sanitizer build, configure --enable-sanitizers, covers the rest of
# the suite.)
. "$top_srcdir/tests/tap.sh"

command -v valgrind > /dev/null 2>&1 || skip_all "valgrind is not installed"
case "${CFLAGS-} $(grep -s '^SAN_CFLAGS' "$top_builddir/Makefile")" in
  *fsanitize=address*) skip_all "a sanitizer build (valgrind cannot run ASan binaries)" ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-vg.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

printf 'x: f32[N, D]\ny = sum(exp(x - max(x, -1)), -1)\n' > good.te
printf 'fn rms(x, eps) = x * rsqrt(mean(x * x, -1) + eps)\nkernel k(x: bf16[N, D], w: bf16[D]) -> (y: bf16[N, D]) {\n  y = rms(f32(x), 1e-6) * w\n}\n' > kernels.te
printf 'x: f32[N]\ny = (x +\nz = foo(\nw = 1 < 2 < 3\n' > syntax.te
printf 'x: f32[N]\ny = q + x\ny = x\nx = 1\n' > sema.te
printf 'import "nowhere.te"\nx: f32[N]\ny = x\n' > import.te
awk 'BEGIN { srand(11); for (i = 0; i < 300; i++) printf "%c", int(rand() * 256) }' > noise.te
awk 'BEGIN { srand(12); for (i = 0; i < 300; i++) printf "%c", 32 + int(rand() * 95) }' > ascii.te

vg() {
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible \
    "$TECC" "$@" > /dev/null 2> vg.err
}

for f in good.te kernels.te syntax.te sema.te import.te noise.te ascii.te; do
  for emit in ast ir cu; do
    vg --emit=$emit "$f" -o /dev/null
    rc=$?
    if [ $rc -le 2 ]; then pass "valgrind: $f --emit=$emit (exit $rc)"; else
      fail "valgrind: $f --emit=$emit (exit $rc)"; diag "$(head -n 40 vg.err)"; fi
  done
done
vg --emit=ir -MD -MF deps.d -o out.ir good.te
is "$?" 0 "valgrind: a run writing files and a dependency file"
vg --bogus-option
is "$?" 2 "valgrind: a usage error"
vg nonexistent.te
is "$?" 2 "valgrind: an unreadable input"

done_testing
