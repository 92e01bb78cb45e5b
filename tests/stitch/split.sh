#!/bin/sh
# split.sh — reductions over axes that are not one run (lib/split.c): at
# -O1 and -O2 a batch-norm's mean(x, 0, 2) of [B, C, S] becomes a row
# reduction over S (packed rows, B*C of them) and a column reduction of
# its result over B; a variance the rows' moments and the law of total
# variance (x read by one group); every reduction that splits; an inner
# run of two axes; a literal run of fewer than 32 elements left as it is;
# -O0 left as written.  And a loop group that reads again what an
# earlier group of the call read in full walks its blocks from the
# domain's end (GroupSchedule.reread), and loads that input evict-first
# where it is its last read (GroupSchedule.reread_last).  (The kernel before the split, for
# channels that fit on chip: tests/stitch/runs.sh.)  The IR after the pass is read
# from TECC_DUMP=split, the groups from --emit=plan and --emit=json, the
# loop's order from the .cu.  Their results on a GPU:
# tests/grad/programs/grad_batchnorm.te (tests/gpu-all.sh).
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-split.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
te=$top_srcdir/tests/stitch/split/programs.te

TECC_DUMP=split "$TECC" -O2 "$te" -o "$work/s.cu" 2> "$work/split.ir" || { echo "Bail out! tecc failed"; exit 1; }
"$TECC" -O2 --emit=plan "$te" -o "$work/s.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
# ir_text KERNEL: its section of the dump; plan_text KERNEL: of the plan.
ir_text() { sed -n "/^kernel $1(/,/^kernel /p" "$work/split.ir"; }
plan_text() { sed -n "/^kernel $1:/,/^kernel /p" "$work/s.plan"; }
kernel_text() { sed -n "/__global__ .* $1(/,/^}/p" "$work/s.cu"; }

plan 22
is "$(ir_text bn | grep -c 'axes={0, 2}')" 0 "bn: no reduction over axes 0 and 2 is left"
is "$(ir_text bn | grep -c 'reduce.mean %3 axes={2} ')" 1 "bn: one reduction reads x (its f32 value %3), over S"
ok "bn: the variance is the mean over B of the rows' variance plus their mean's squared deviation" \
  sh -c "ir_line=\$(sed -n '/^kernel bn(/,/^kernel /p' '$work/split.ir' | grep 'reduce.mean %15 axes={0} '); test -n \"\$ir_line\" && sed -n '/^kernel bn(/,/^kernel /p' '$work/split.ir' | grep -q '%15 = add %11, %14 '"
is "$(plan_text bn | sed -n '/^  rows longer than 65536: the reductions split/,$p' | grep -c '^  group')" 3 "bn: rows too long for the registers: three groups (the rows' moments, their combination over B, the normalization)"
ok "bn: the rows are B*C runs of S, moved in packs" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/s.plan' | grep -A1 'group 0: stitch, class stitch-row' | grep -q 'rows = B\*C, row length R = S'"
ok "bn: the rows' moments in one pass" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/s.plan' | grep -q 'register kernel passes: levels 1-2 (means and centred sums about the row.s first element, one pass) reads %0, computes %3;'"
ok "bn: then a column stitch over B" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/s.plan' | grep -A1 'group 1: stitch, class stitch-column' | grep -q 'rows = C, row length R = B'"
for op in sum max min prod any all; do
  is "$(ir_text every_op | grep -c "reduce.$op %[0-9]* axes={2} ")$(ir_text every_op | grep -c "reduce.$op %[0-9]* axes={0} ")" 11 "$op over axes 0 and 2: over S, then over B"
done
ok "an inner run of two axes: over H and W, then over B" sh -c "sed -n '/^kernel planes(/,/^kernel /p' '$work/split.ir' | grep -q 'reduce.mean %0 axes={2, 3} ' && sed -n '/^kernel planes(/,/^kernel /p' '$work/split.ir' | grep -q 'reduce.mean %1 axes={0} '"
is "$(ir_text short_run | grep -c 'reduce.mean %0 axes={0, 2} ')$(ir_text short_run | grep -c 'reduce.mean %1 axes={2} ')" 11 "a literal run of 4 is left as written, one of 32 splits"
is "$(ir_text rows_and_cols | grep -c reduce)" 2 "a row and a column reduction are left as they are"
TECC_DUMP=split "$TECC" -O0 "$te" -o "$work/o0.cu" 2> "$work/o0.ir"
is "$(grep -c 'axes={0, 2}' "$work/o0.ir")" 0 "-O0: no split pass (nothing dumped)"
# The normalization reads x again after the statistics read it.
ok "bn: the normalization's blocks from the domain's end" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/s.plan' | grep -A2 'group 2: loop' | grep -q 'order: blocks from the domain.s end (an earlier group read x in full'"
ok "bn: its packed loop counts blocks down" sh -c "sed -n '/__global__ .* tecc_bn_apart_g2_loop(/,/^}/p' '$work/s.cu' | grep -q 'for (IndexT t_p = (IndexT)(gridDim.x - 1 - blockIdx.x) \* blockDim.x + threadIdx.x; t_p < t_npack;'"
ok "bn: x, read for the last time, loaded evict-first (GroupSchedule.reread_last)" sh -c "sed -n '/__global__ .* tecc_bn_apart_g2_loop(/,/^}/p' '$work/s.cu' | grep -q 't_pk_x = tecc::load_stream(reinterpret_cast<const tecc::Pack<uint16_t, VEC> \\*>(x) + t_p);'"
ok "bn: the plan says so" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/s.plan' | grep -q 'its packs loaded evict-first, its last read in the call'"
ok "a loop that reads nothing read before counts blocks up" sh -c "sed -n '/__global__ .* tecc_scaled_g0_loop(/,/^}/p' '$work/s.cu' | grep -q 'for (IndexT t_p = (IndexT)blockIdx.x \* blockDim.x + threadIdx.x; t_p < t_npack;'"
done_testing
