#!/bin/sh
# kept_axes.sh — rows over several kept axes (stitch.c,
# stitch_thread_rows(); StitchPlan.kept_partial): where every tensor a row
# stitch reads or writes is indexed by all of its kept axes or none, the
# rows kernel takes them as one row index t_o (two rows a thread for a
# norm, whole row groups without guards); a tensor indexed by some of
# them, a position along one of them or a gathered load keeps the plain
# kernel.  Read from --emit=json and the .cu.  Their
# results on a GPU: tests/programs/kept_axes_rows.te (tests/gpu-all.sh).
. "$top_srcdir/tests/tap.sh"
have_jq || skip_all "jq not found by configure (Debian: apt-get install jq): the schedules are read from --emit=json with it"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-kept.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
te=$top_srcdir/tests/programs/kept_axes_rows.te
"$TECC" -O2 --emit=json "$te" -o "$work/k.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
"$TECC" -O2 "$te" -o "$work/k.cu" || { echo "Bail out! tecc failed"; exit 1; }
# warp KERNEL FILTER: FILTER of the warp variant of KERNEL's group
warp() { "$JQ" -rc --arg k "$1" ".kernels[] | select(.name == \$k) | .groups[0].variants[] | select(.name == \"warp\") | $2" "$work/k.json"; }

plan 9
is "$(warp qknorm '{rows, prefetch}')" '{"rows":2,"prefetch":true}' "qknorm [B, S, H, 128]: two rows a thread, the next rows loaded ahead"
is "$(warp qknorm_d .rows)" 2 "qknorm_d [B, S, H, D]: two rows a thread"
is "$(warp quant_block .whole)" true "quant_block [N, G, 128]: whole row groups without guards"
is "$(warp scaled_rows .whole)" true "scaled_rows: t [B, S, H, 1] is indexed by every kept axis"
is "$(warp by_position '{rows, whole}')" '{"rows":1,"whole":false}' "by_position: scale [S, 1, 1] is indexed by S alone: the plain kernel"
ok "qknorm: its kernel takes ROWS" sh -c "grep -q 'template <typename IndexT, int ITEMS, int VEC, int ROWS, bool PACKS> *$' '$work/k.cu' && sed -n '/__global__ .* tecc_qknorm_g0_reg(/,/^}/p' '$work/k.cu' | grep -q 'const IndexT t_outer = B \* S \* H;'"
ok "scaled_rows: t read at the row index" sh -c "sed -n '/__global__ .* tecc_scaled_rows_g0_reg(/,/^}/p' '$work/k.cu' | grep -q 't\[t_o\]'"
# plain KERNEL: its row kernel indexes the kept axes one by one (no ROWS)
plain() { sed -n "/__global__ .* tecc_$1_g0_reg(/,/^}/p" "$work/k.cu" | grep -q 'const IndexT t_d0 = '; }
ok "at_position: index(x, 1) is S's own index: the plain kernel" plain at_position
ok "gathered: a take's address needs B's own index: the plain kernel" plain gathered
done_testing
