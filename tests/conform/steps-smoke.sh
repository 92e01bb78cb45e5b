#!/bin/sh
# steps-smoke.sh — no GPU needed: a step function of a computed value
# within its tolerance of the step (interp.h, "Steps") may land on either
# side, so the runner counts such elements without a bound instead of
# comparing them: every element of step_ties.te's outputs (computed values
# on .5 ties), some of quant_ties.te's q (bench/quant's quant_i8), and
# --perturb still finds its moved middle elements, uncertain ones included.
: "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/tap.sh"
conform="$top_builddir/tests/conform/tecc-conform"
ties="$top_srcdir/tests/programs/step_ties.te"
quant="$top_srcdir/tests/programs/quant_ties.te"
plan 6

# "E elements evaluated (U without a bound)" of the summary: "E U"
counts() {
  "$conform" --no-device --quick "$1" | sed -n 's/.* \([0-9][0-9]*\) elements evaluated (\([0-9][0-9]*\) without a bound).*/\1 \2/p'
}

set -- $(counts "$ties")
if [ "${1:-0}" -gt 0 ] && [ "$1" = "$2" ]; then
  pass "step_ties.te: all $1 elements without a bound"
else
  fail "step_ties.te: all elements without a bound (got: ${1:-?} elements, ${2:-?} without)"
fi
set -- $(counts "$quant")
if [ "${2:-0}" -gt 0 ] && [ "$2" -lt "$1" ]; then
  pass "quant_ties.te: $2 of $1 elements (quotients on ties) without a bound, the rest compared"
else
  fail "quant_ties.te: some but not all elements without a bound (got: ${1:-?} elements, ${2:-?} without)"
fi
# --unbounded names each output with elements without a bound
named() { "$conform" --no-device --quick --unbounded "$1" | grep -c "^#   unbounded .*: output $2: [1-9][0-9]* of"; }
n=$(named "$quant" q)
if [ "$n" -gt 0 ]; then pass "--unbounded names quant_ties.te's q ($n bindings)"; else fail "--unbounded names quant_ties.te's q"; fi
n=$(named "$quant" s)
if [ "$n" -eq 0 ]; then pass "--unbounded names not its s, whose elements all have a bound"; else fail "--unbounded named s ($n)"; fi
perturbed() { "$conform" --no-device --perturb --quick "$1" > /dev/null; }
ok "step_ties.te --perturb: exactly the moved elements mismatch" perturbed "$ties"
ok "quant_ties.te --perturb: exactly the moved elements mismatch" perturbed "$quant"
done_testing
