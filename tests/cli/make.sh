#!/bin/sh
# make.sh — a real make run over tecc -MD -MP: an edited import rebuilds the
# .cu that uses it, an untouched tree or an unrelated file rebuilds nothing,
# and an import that disappears (with the line that named it) breaks nothing.
. "$top_srcdir/tests/tap.sh"

# A make of its own: not silent or parallel because `make -s -j check` is.
unset MAKEFLAGS MFLAGS MAKELEVEL
command -v "${MAKE:-make}" > /dev/null 2>&1 || skip_all "no make"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-make.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
mkdir lib inc
printf 'fn sq(a) = a * a\n' > lib/act.te
printf 'fn cube(a) = a * a * a\n' > inc/more.te
printf 'fn unused(a) = a\n' > inc/unused.te
printf 'import "lib/act.te"\nimport "more.te"\nx: f32[N]\ny = sq(x) + cube(x)\n' > model.te
cat > Makefile << EOF
all: model.cu
%.cu: %.te
	'$TECC' -I inc -MD -MP -o \$@ \$<
-include model.d
EOF
mk() { "${MAKE:-make}" --no-print-directory "$@" > make.out 2>&1; }
# Sources at one old time, outputs at a later old time: nothing is newer
# than what was built from it, whatever the file system's clock resolution.
settle() {
  touch -t 202001010000 model.te lib/act.te inc/more.te inc/unused.te
  touch -t 202101010000 model.cu model.h model.d
}

ok "make builds model.cu" mk
ok "the .cu, the .h and the dependency file exist" test -s model.cu -a -s model.h -a -s model.d
settle
is_exit 0 "nothing changed: make -q says up to date" mk -q

touch inc/unused.te
is_exit 0 "an unrelated .te changed: still up to date" mk -q

printf 'fn sq(a) = a * a * 2.0\n' > lib/act.te
is_exit 1 "an import changed: make -q says out of date" mk -q
cp model.cu model.cu.before
ok "make rebuilds" mk
if grep -q "tecc.*model.te" make.out; then pass "make ran tecc again"; else fail "make ran tecc again"; diag "$(cat make.out)"; fi
if cmp -s model.cu model.cu.before; then fail "the new .cu has the edited function"; else pass "the new .cu has the edited function"; fi
settle
is_exit 0 "after the rebuild: up to date" mk -q

touch inc/more.te
is_exit 1 "an import found through -I changed: out of date" mk -q
ok "make rebuilds it" mk
settle

# -MP: model.te stops importing more.te and the file goes away; the old
# dependency file still names it, and its phony target keeps make going.
printf 'import "lib/act.te"\nx: f32[N]\ny = sq(x)\n' > model.te
rm inc/more.te
if mk; then pass "a removed import: make still builds (-MP)"; else fail "a removed import: make still builds (-MP)"; diag "$(cat make.out)"; fi
if grep -q more.te model.d; then fail "the new dependency file drops it"; else pass "the new dependency file drops it"; fi
settle
is_exit 0 "and then: up to date" mk -q

# An import touched but not changed: tecc runs again, finds the .cu and the
# .h as they were and leaves them alone, so what is built from them is not
# rebuilt.
cat >> Makefile << 'EOF'
model.o: model.cu model.h
	cat model.cu model.h > $@
EOF
ok "make builds an object from the .cu and .h" mk model.o
touch -t 202201010000 model.o
touch lib/act.te
ok "an import touched: make runs tecc again" mk model.o
if grep -q "cat model.cu" make.out; then fail "the unchanged .cu and .h rebuild nothing"; diag "$(cat make.out)"
else pass "the unchanged .cu and .h rebuild nothing"; fi

done_testing
