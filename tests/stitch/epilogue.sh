#!/bin/sh
# epilogue.sh — values of one element computed from full reductions (a
# scale from an absolute maximum, a loss over a count) are written by the
# thread that writes the reduction's result (fuse.c, absorb_epilogues();
# Group.epilogue): in the first stage where it is one block, else in the
# last stage, with no launch of their own.  Where such a value reads
# several full reductions, the latest writes it and reads the others from
# memory; a value that reads a tensor input keeps its loop; -O0 keeps
# every launch.  Read from --emit=plan, --emit=json and the .cu; their
# results on a GPU: tests/programs/full_epilogue.te (tests/gpu-all.sh).
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-epilogue.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
te=$top_srcdir/tests/programs/full_epilogue.te
cat > "$work/kept.te" <<'TE'
kernel kept(x: f32[N, D], b: f32[1, 1]) -> (s: f32) {
    s = sum(x) + b
}
TE

"$TECC" -O2 "$te" -o "$work/e.cu" || { echo "Bail out! tecc failed"; exit 1; }
"$TECC" -O2 --emit=plan "$te" -o "$work/e.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
plan_text() { sed -n "/^kernel $1:/,/^kernel /p" "${2:-$work/e.plan}"; }
kernel_text() { sed -n "/__global__ .* $1(/,/^}/p" "$work/e.cu"; }

plan 11
ok "scale: two launches (the absolute maximum and its scale, the cast)" sh -c "sed -n '/^kernel scale:/,/^kernel /p' '$work/e.plan' | grep -q '^kernel scale: 2 launch'"
ok "scale: s from the maximum's result, in the thread that writes it" sh -c "sed -n '/^kernel scale:/,/^kernel /p' '$work/e.plan' | grep -q 'then, from its result, in the thread that writes it: %[0-9]* (s)$'"
is "$(kernel_text tecc_scale_g0_full | grep -c 's\[0\] = s_val;')" 1 "scale: the first stage writes s where it is one block"
is "$(kernel_text tecc_scale_g0_full_final | grep -c 's\[0\] = s_val;')" 1 "scale: the last stage writes s"
ok "scale: s is the result over 448, as the program divides" sh -c "sed -n '/__global__ .* tecc_scale_g0_full_final(/,/^}/p' '$work/e.cu' | grep -q 'const float s_val = t_result / 448.0f;'"
ok "loss: mean_loss and norm from the later sum" sh -c "sed -n '/^kernel loss:/,/^kernel /p' '$work/e.plan' | grep -q 'then, from its result, in the thread that writes it: %[0-9]* (mean_loss) %[0-9]* (norm)'"
ok "loss: its last stage reads the earlier sum (total) and takes the count" sh -c "sed -n '/__global__ .* tecc_loss_g1_full_final(/p' '$work/e.cu' | grep -q 'const float \*__restrict__ total.*float count'"
ok "ratio: the three values in the last of four launches" sh -c "sed -n '/^kernel ratio:/,/^kernel /p' '$work/e.plan' | grep -q '^kernel ratio: 4 launch' && sed -n '/^kernel ratio:/,/^kernel /p' '$work/e.plan' | grep -A3 'group 3:' | grep -q '(r) %[0-9]* (top) %[0-9]* (frac)'"
if have_jq; then
  "$TECC" -O2 --emit=json "$te" -o "$work/e.json"
  is "$(jq -c '[.kernels[] | select(.name == "scale") | .groups[0].epilogue | length]' "$work/e.json")" "[1]" "--emit=json: the group's epilogue"
else
  skip "--emit=json: the group's epilogue" "no jq"
fi
"$TECC" -O2 --emit=plan "$work/kept.te" -o "$work/kept.plan"
ok "a value that reads a tensor input keeps its loop" grep -q '^kernel kept: 2 launch' "$work/kept.plan"
"$TECC" -O0 --emit=plan "$te" -o "$work/o0.plan"
is "$(grep -c 'then, from its result' "$work/o0.plan")" 0 "-O0: no epilogue"
done_testing
