#!/bin/sh
# perturb-smoke.sh — no GPU needed: the conformance runner's own comparison
# (abi.md §6 bounds, magnitude bounds included) must flag exactly the one
# reference element per output that --perturb moves, when the "result" is
# the unmoved reference (tecc-conform --no-device --perturb --quick).
: "${top_srcdir:=.}" "${top_builddir:=.}"
exec "$top_builddir/tests/conform/tecc-conform" --tap --no-device --perturb --quick \
  "$top_srcdir"/tests/programs/*.te "$top_srcdir"/examples/*.te
