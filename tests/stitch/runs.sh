#!/bin/sh
# runs.sh — rows of several runs (stitch.c, stitch_row_runs()): a batch
# norm's channel of x[B, C, S] is B runs of S elements.  Where split.c
# splits the reductions and the row stitch writes along the rows, the
# kernel as written is the main plan (fuse.c, plan_unsplit()): one row
# stitch, x read once, its runs moved in packs at r + (r / S) * ((C - 1)
# * S) + o * S (r / S by S's tecc::FastDiv), register variants alone; the entry runs the split plan
# (KernelPlan.apart_split) for rows longer than those hold, runs that are
# not whole packs (but for runs of half packs, rows up to what the half
# variant holds: schedule.c, half_runs()), or 64-bit indices.  Statistics alone (nothing along
# the row) stay split; literal sizes leave the plan that runs, a literal
# run the split one; a literal run too short to split loads element by
# element.  The plan from
# --emit=plan and --emit=json, the code from the .cu.  Their results on
# a GPU: tests/programs/runs_rows.te (tests/gpu-all.sh).
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-runs.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
te=$top_srcdir/tests/programs/runs_rows.te
split_te=$top_srcdir/tests/stitch/split/programs.te

"$TECC" -O2 "$te" -o "$work/r.cu" || { echo "Bail out! tecc failed"; exit 1; }
"$TECC" -O2 --emit=plan "$te" -o "$work/r.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
"$TECC" -O2 --emit=json "$te" -o "$work/r.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
"$TECC" -O2 --emit=plan "$split_te" -o "$work/s.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
# plan_text KERNEL [FILE]: its section of a plan; main_text: before the split plan.
plan_text() { sed -n "/^kernel $1:/,/^kernel /p" "${2:-$work/r.plan}"; }
main_text() { plan_text "$1" | sed '/^  rows longer than/,$d'; }
entry_text() { sed -n "/^extern \"C\" tecc_status $1(/,/^}/p" "$work/r.cu"; }
kernel_text() { sed -n "/__global__ .* $1(/,/^}/p" "$work/r.cu"; }
lit_plan() { "$TECC" -O2 --emit=plan "$@" "$te" | sed -n "/^kernel bn:/,/^kernel /p"; }

plan 24
is "$(main_text bn | grep -c '^  group')" 1 "bn: the main plan is one group"
ok "bn: a row stitch of C rows of B*S" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/r.plan' | grep -A1 'group 0: stitch, class stitch-row, domain \[B, C, S\]' | grep -q 'rows = C, row length R = B\*S'"
ok "bn: for rows up to the long variant's 32768 (f32)" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/r.plan' | grep -q '^  for rows of group 0 up to 32768 long (longer: the plan below)'"
ok "bn: longer rows: the split plan, three groups" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/r.plan' | grep -q '^  rows longer than 32768: the reductions split (split.c), 3 launch(es)'"
ok "bn: runs moved in packs where S is whole packs" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/r.plan' | grep -q 'moved as one 16-byte pack when R % 4 == 0, S % 4 == 0'"
is "$(main_text bn | grep -c '    variant .*: stream\|    variant .*: cluster')" 0 "bn: the main plan has no stream or cluster variant"
ok "bn: its last register variant runs otherwise" sh -c "sed -n '/^kernel bn:/,/^kernel /p' '$work/r.plan' | sed '/^  rows longer than/,\$d' | grep -q 'variant long (otherwise): registers, VEC 4, ITEMS 8'"
ok "bn: the entry takes the split plan for long rows, runs that are not whole packs nor half packs up to 16384, 64-bit indices" \
  sh -c "sed -n '/^extern \"C\" tecc_status bn(/,/^}/p' '$work/r.cu' | grep -q 'if (t_len_apart > 32768 || (S % 4 != 0 && (S % 2 != 0 || t_len_apart > 16384)) || t_big)'"
ok "bn: the main plan in 32-bit indices" sh -c "sed -n '/^extern \"C\" tecc_status bn(/,/^}/p' '$work/r.cu' | grep -q 'return tecc_bn_launch<int32_t>('"
ok "bn: a pack of x at its run's offset, S's FastDiv where the rows are whole packs" sh -c "sed -n '/__global__ .* tecc_bn_g0_reg(/,/^}/p' '$work/r.cu' | grep -q 'x + t_r0 + (t_packs ? t_fd_S.div(t_r0) : t_r0 / S) \* ((t_outer - 1) \* S) + t_o \* S)'"
ok "bn: the row's first element (the variance's shift) at t_o * S" sh -c "sed -n '/__global__ .* tecc_bn_g0_reg(/,/^}/p' '$work/r.cu' | grep -q '__ldg(x + (t_live ? t_o : 0) \* S)'"
ok "bn: the json's apart plan is the split one" sh -c "grep -q '\"apart\": {\"group\": 0, \"rows_longer_than\": 32768, \"split\": true' '$work/r.json'"
ok "bn_bf16: rows up to 65536 (bf16)" sh -c "sed -n '/^kernel bn_bf16:/,/^kernel /p' '$work/r.plan' | grep -q '^  for rows of group 0 up to 65536 long'"
ok "bn_bf16: runs of half packs first: VEC 4, up to 32768" sh -c "sed -n '/^kernel bn_bf16:/,/^kernel /p' '$work/r.plan' | grep -q 'variant half (when the rows. runs are not whole packs of 8, R <= 32768 and 32-bit indices do): registers, VEC 4, ITEMS 8'"
ok "bn_bf16: the half variant's own packs, aligned to 8 bytes" sh -c "grep -q 'const bool t_packs = t_len % 4 == 0 && (int64_t)S % 4 == 0 && tecc::aligned_to(x, 8) && tecc::aligned_to(y, 8);' '$work/r.cu'"
ok "bn_bf16: its instances at VEC 4, aligned and not" sh -c "grep -q 'tecc_bn_bf16_g0_reg<int32_t, 8, 4, true, 0>' '$work/r.cu' && grep -q 'tecc_bn_bf16_g0_reg<int32_t, 8, 4, false, 0>' '$work/r.cu'"
is "$(plan_text bytes | sed '/^  rows longer than/,$d' | grep -c 'variant half')" 0 "bytes: f8 in, bf16 out (two element sizes): no half packs"
ok "kept_two: two kept axes between the reduced ones (K = G*C)" sh -c "sed -n '/^kernel kept_two:/,/^kernel /p' '$work/r.plan' | grep -A1 'domain \[B, G, C, S\]' | grep -q 'rows = G\*C, row length R = B\*S'"
is "$(plan_text every_op "$work/s.plan" | grep -c 'rows longer than')" 0 "statistics alone (nothing written along the row) stay split"
is "$(lit_plan -DB=32 -DC=2048 | grep -c 'rows longer than 32768: the reductions split')" 1 "literal B and C, S a variable: both plans, the entry decides"
is "$(lit_plan -DS=392 | grep -c '^  group')" 3 "a literal run (S = 392): the split plan alone (a constant division spilled)"
ok "literal rows longer than that: the split plan alone, under the kernel's name" \
  sh -c "'$TECC' -O2 -DB=32 -DC=64 -DS=12544 '$te' -o '$work/l.cu' && grep -q 'tecc_status tecc_bn_launch' '$work/l.cu' && ! grep -q 'tecc_bn_apart' '$work/l.cu' && grep -q '__global__ .* tecc_bn_g2_loop(' '$work/l.cu'"
ok "a literal run too short to split: its rows element by element, no split plan" \
  sh -c "sed -n '/^kernel short16:/,/^kernel /p' '$work/r.plan' | grep -q 'variant long .*VEC 1' && ! sed -n '/^kernel short16:/,/^kernel /p' '$work/r.plan' | grep -q 'rows longer than'"
ok "-O0: no plan before the split (nothing is split)" sh -c "! '$TECC' -O0 --emit=plan '$te' | grep -q 'rows longer than'"
done_testing
