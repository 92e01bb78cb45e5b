#!/bin/sh
# golden.sh — stitch fusion (H9): each softmax, norm, logsumexp, rowstats
# and softmax(x, 0) of rows.te / axes.te is ONE launch at -O1 and -O2
# (--emit=fused next to its golden text), the plan names the variants,
# and -O0 does not stitch.  The values are checked on a GPU by
# tests/conform/tecc-conform (see gpu.sh).
. "$top_srcdir/tests/tap.sh"

dir="$top_srcdir/tests/stitch"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-stitch.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

for prog in rows axes; do
  for o in 1 2; do
    "$TECC" -O$o --emit=fused "$dir/$prog.te" -o "$work/$prog.O$o.raw"
    is "$?" 0 "$prog.te: tecc -O$o --emit=fused exits 0"
    sed 's/ at -O1$/ at -O2/' "$work/$prog.O$o.raw" > "$work/$prog.O$o.fused"
    diff_ok "$prog.te: -O$o groups as in $prog.fused" "$dir/$prog.fused" "$work/$prog.O$o.fused"
  done
  "$TECC" -O2 --emit=plan "$dir/$prog.te" -o "$work/$prog.plan"
  diff_ok "$prog.te: -O2 plan as in $prog.plan" "$dir/$prog.plan" "$work/$prog.plan"
  "$TECC" -O0 --emit=fused "$dir/$prog.te" -o "$work/$prog.O0.fused"
  ok "$prog.te: -O0 makes no stitch group" sh -c "! grep -q stitch '$work/$prog.O0.fused'"
done

# Every kernel of rows.te is one launch (whatever the golden says).
launches=$(grep -c '^kernel .*: 1 group(s)' "$work/rows.O2.fused")
kernels=$(grep -c '^kernel ' "$dir/rows.te")
is "$launches" "$kernels" "rows.te: every kernel is one launch at -O2"

# --explain says why: one line per stitched cluster.
"$TECC" -O2 --explain "$dir/rows.te" -o "$work/rows.cu" 2> "$work/explain"
is "$(grep -c ': stitch: .* -> one row kernel' "$work/explain")" "$kernels" "--explain: one stitch line per kernel"

# A cycle is refused: t reads a reduction of another row space that
# reads the first cluster, so it cannot join it.
printf '%s\n' 'x: f32[M, N]' 'a = sum(x, -1)' 'b = sum(x - a, 0)' 'c = sum(x * b, -1)' \
  > "$work/cycle.te"
"$TECC" -O2 --explain "$work/cycle.te" --emit=fused -o "$work/cycle.fused" 2> "$work/cycle.explain"
is "$?" 0 "cycle.te compiles"
ok "cycle.te: the second row reduction is not stitched with the first" grep -q 'not stitched with %1: .*cycle' "$work/cycle.explain"

# Programs that once crashed the stitch pass compile at every level, and
# their groups form no cycle (tecc stops with an internal error if so).
for o in 0 1 2; do
  "$TECC" -O$o "$dir/regress.te" -o "$work/regress.cu" 2> "$work/regress.err"
  is "$?" 0 "regress.te compiles at -O$o"
  ok "regress.te: no internal error at -O$o" test ! -s "$work/regress.err"
done

done_testing
