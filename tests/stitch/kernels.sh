#!/bin/sh
# kernels.sh — how the emitters write the schedules of
# tests/stitch/schedule/programs.te into CUDA: which kernel instances
# exist and which launch takes which (template parameters PACKS, WHOLE,
# CLUSTER, NARROW, EARLY, BATCH, KEEP), the loads and stores (streamed
# past L2, packs, unaligned chunks, loads ahead), the guards each
# instance keeps, the order of a kernel's passes and statements, and the
# arithmetic (fma, reciprocals, pairs of 16-bit values).  These are
# properties of the generated text that no schedule record carries, so
# they are greps of the .cu; the decisions behind them (which variants,
# their conditions and numbers) are read from --emit=json by
# tests/stitch/schedule.sh.
#
# The second stage of full and split column reductions is a dependent
# launch that waits for the first; a variance shares its mean's pass in
# the stream kernel, which loads its next chunk ahead; a stream kernel
# that reads a row again keeps its first packs in shared memory in its
# KEEP instance and walks the row backward in its second pass; the
# register kernel's cluster arithmetic is in its CLUSTER instance only; a
# register kernel that writes only row values streams its loads past L2,
# one that writes along the row does not, and a stream kernel streams its
# last read of a row and its outputs; softmax's sum of exp shares its
# max's pass (online, rescaled as the max grows); a norm's w and an
# attention mask are loaded a pack per item (the mask's held with the row
# in the register kernel); the warp variant's
# instances take the lanes of a row as a template parameter (LANES); the
# WHOLE instances drop the row and item guards; 16-bit rows that are not
# whole packs move through the aligned chunks they span; an output along
# the row that reads no reduction is stored in the register kernel's
# first pass; a max or min of 16-bit values held in pairs folds them a
# pair at a time where a thread holds 8 packs an item; a fused f32 or f64
# a*b + c, a*b - c or c - a*b whose product has no other use is one fma;
# a mean multiplies by the reciprocal of the row's length, which the
# launching host code passes; a 16-bit column stitch of software math
# splits first, 2 packs a thread in blocks bound to three an SM; and a
# gradient's recomputed gelu_tanh or silu shares its rule's tanh or
# sigmoid.
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-kernels.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

"$TECC" -O2 "$top_srcdir/tests/stitch/schedule/programs.te" -o "$work/s.cu" || { echo "Bail out! tecc failed"; exit 1; }

# The text of generated kernel $1 (up to its closing brace).
# kernel_text NAME [FILE]: the kernel's text in FILE (s.cu); plan_text
# KERNEL FILE: its section of an --emit=plan file.
kernel_text() { sed -n "/__global__ .* $1(/,/^}/p" "${2:-$work/s.cu}"; }
plan_text() { sed -n "/^kernel $1:/,/^kernel /p" "$2"; }
# The row loads (16-byte packs) of kernel $1.
row_loads() { kernel_text "$1" | grep -c 'const tecc::Pack<float, VEC> t_p0 = '; }
# The first line of kernel $1 (in file $3, else s.cu) that has $2.
line_of() { kernel_text "$1" "$3" | grep -n -- "$2" | head -1 | cut -d: -f1; }

plan 266
# Second stages (emit_cu.c): how the ordered second stage of a full or
# split column reduction is launched (a dependent launch, tecc::launch_next)
# and waits for the first is launch code; its block (final_threads) is
# schedule.sh's.
ok "full reduction: the second stage is a dependent launch" grep -q 'tecc::launch_next(tecc_fullsum_bf16_g0_full_final<IndexT>, dim3(1), dim3(512)' "$work/s.cu"
ok "column reduction: the second stage is a dependent launch" grep -q 'tecc::launch_next(tecc_colsum_bf16_g0_column_final<IndexT>' "$work/s.cu"
n_wait=$(awk '/__global__/ { apart = /_apart_/ } /tecc::wait_for_prior_grid\(\); \/\*/ && !apart' "$work/s.cu" | wc -l)
is "$n_wait" 4 "each second stage waits for its first (fullsum, 3 colsums; the plans apart aside)"
# A loop group after a call's first group is launched chained to the
# launch before it (emit_cu.c, launched_chained()): tecc::launch_next, a
# wait at its top, and the kernel before it (here the absolute maximum's
# second stage) lets it launch; a call's first group is an ordinary launch.
printf 'kernel qt(x: bf16[N, D]) -> (q: f8e4m3[N, D], s: f32) {\n    s = max(abs(f32(x))) / 448\n    q = f8e4m3(f32(x) / s)\n}\nkernel twice(x: f32[N]) -> (y: f32[N]) {\n    y = x * 2\n}\n' > "$work/chain.te"
"$TECC" -O2 "$work/chain.te" -o "$work/chain.cu" || echo "Bail out! tecc failed on chain.te"
is "$(grep -c 'tecc::launch_next(tecc_qt_g1_loop<IndexT, [0-9]*>' "$work/chain.cu")" 3 "per-tensor cast: each instance launched chained"
ok "per-tensor cast: waits at its top" sh -c "sed -n '/__global__ .* tecc_qt_g1_loop(/,/^}/p' '$work/chain.cu' | sed -n 2p | grep -q 'tecc::wait_for_prior_grid();'"
ok "the maximum's second stage lets the cast launch" sh -c "sed -n '/__global__ .* tecc_qt_g0_full_final(/,/^}/p' '$work/chain.cu' | grep -q 'tecc::let_next_launch(); /\* group 1'"
is "$(grep -c 'tecc_twice_g0_loop<IndexT, [0-9]*><<<' "$work/chain.cu")" 2 "a call's first loop: an ordinary launch"
is "$(sed -n '/__global__ .* tecc_twice_g0_loop(/,/^}/p' "$work/chain.cu" | grep -c 'griddepcontrol\|wait_for_prior_grid\|let_next_launch')" 0 "a call's only loop: neither waits nor lets"
# A stream kernel's passes (emit_stitch.c): its chunk loops and loads, and
# which it loads ahead, are its text; whether it reads a row once
# (one_read) is schedule.sh's.
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'for (IndexT t_base = ')" 1 "rowstats f32 stream: the variance shares the mean's read"
# Its one pass loads the next chunk while it folds this one
# (moments_ahead()): the first chunk before the loop, the next at its top.
is "$(row_loads tecc_rowstats_f32_g0_stream)" 2 "rowstats f32 stream: the row's packs loaded in two places, the first chunk and the next"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 't_n0\[t_k \* VEC + t_j\] = t_p0.v\[t_j\];')" 2 "rowstats f32 stream: both into the chunk ahead, t_n0"
ok "rowstats f32 stream: the first chunk ahead of the loop" sh -c "grep -q 'const IndexT t_nb = 0; /\* the first chunk, loaded ahead of the loop \*/' '$work/s.cu'"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -A1 'if (t_base + t_step < t_red) {' | grep -c 'const IndexT t_nb = t_base + t_step;')" 1 "rowstats f32 stream: the next chunk while this one computes"
is "$(kernel_text tecc_var_f32_g0_stream | grep -c 'const IndexT t_nb = t_base + t_step;')" 1 "var f32 stream: loads ahead too"
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -c 't_nb')" 0 "layernorm f32 stream (writes the row in a later pass): no loads ahead"
is "$(kernel_text tecc_logsumexp_f32_g0_stream | grep -c 't_nb\|for (IndexT t_base')" 1 "logsumexp f32 stream (online sums, not moments): one chunk loop, no loads ahead"
ok "rowstats f32 stream: chunk moments merged" sh -c "grep -q 'tecc::MergeMoments()(t_mo' '$work/s.cu'"
ok "rowstats f32 stream: moments all-reduced" sh -c "grep -q 'tecc::row_allreduce_moments(t_mo' '$work/s.cu'"
is "$(row_loads tecc_layernorm_f32_g0_stream)" 2 "layernorm f32 stream: two reads (the moments, then y)"
# Kept packs (emit_stitch.c, stream_semit(); tecc::keep_items): a stream
# kernel that reads a row again keeps its first packs of each value read
# again in shared memory, stored once the chunk's loads are under way,
# and its later passes take them back; one that reads a row once keeps
# nothing.  The host keeps them where a wave's rows fill more than half of L2.
# (Which variants keep, Variant.keeps, is schedule.sh's; this is the code
# that keeps and takes back.)
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -c 'tecc::keep_put<VEC>(t_kept + (t_g \* t_kw + VEC \* 0 / 16) \* t_kth + t_kid, t_kth, t_c0 + t_k \* VEC);')" 1 "layernorm f32 stream: x kept by its first pass"
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -c 'tecc::keep_get<VEC>(t_kept + (t_g \* t_kw + VEC \* 0 / 16) \* t_kth + t_kid, t_kth, t_c0 + t_k \* VEC);')" 1 "layernorm f32 stream: taken back by its second"
ok "layernorm f32 stream: kept in a loop after the chunk's loads" test "$(kernel_text tecc_layernorm_f32_g0_stream | grep -n 'const IndexT t_g = t_g0 + t_k;$' | head -1 | cut -d: -f1)" -gt "$(line_of tecc_layernorm_f32_g0_stream 'const tecc::Pack<float, VEC> t_p0 = ')"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'keep')" 0 "rowstats f32 stream (one read): no keep"
is "$(kernel_text tecc_addrms_bf16_g0_stream | grep -c 'tecc::keep_put<VEC / 2>(')" 2 "add_rmsnorm bf16 stream: x and r kept, two to a word"
ok "add_rmsnorm bf16 stream: an item of both, 2 bytes an element each" sh -c "grep -q 'constexpr int t_kw = VEC \* 4 / 16; /\* their 16-byte words an item \*/' '$work/s.cu'"
ok "layernorm f32: the launch asks keep_items (rows, length, 4 bytes an element), then runs the KEEP instance with the shared memory" sh -c "grep -A2 'const int t_keep = tecc::keep_items(t_kc, (const void \*)tecc_layernorm_f32_g0_stream<IndexT, 4, true, false, true>, t_rows, t_len, t_tx, t_ty, 4, 4);' '$work/s.cu' | grep -q 'tecc_layernorm_f32_g0_stream<IndexT, 4, true, false, true><<<t_grid, dim3(t_tx, t_ty), (size_t)t_keep \* 16 \* t_tx \* t_ty, stream>>>(x, y, (IndexT)M, (IndexT)N, 1.0f / (float)t_len, t_keep);'"
ok "layernorm f32: rows not in packs run the KEEP instance too" sh -c "grep -A1 'const int t_keep = tecc::keep_items(t_kc, (const void \*)tecc_layernorm_f32_g0_stream<IndexT, 4, false, false, true>' '$work/s.cu' | grep -q '^ *tecc_layernorm_f32_g0_stream<IndexT, 4, false, false, true><<<t_grid, dim3(t_tx, t_ty), (size_t)t_keep \* 16 \* t_tx \* t_ty, stream>>>(x, y, (IndexT)M, (IndexT)N, 1.0f / (float)t_len, t_keep);'"
is "$(grep -c 'tecc_layernorm_f32_g0_stream<IndexT, 4, [a-z]*, [a-z]*, false>' "$work/s.cu")" 0 "layernorm f32: no instance that keeps nothing (the KEEP one keeps none where t_keep is 0)"
# Rows of whole chunks take the stream kernel's WHOLE instance, without
# item guards (schedule.c, v->whole of the stream variant; which variants
# are whole is schedule.sh's): the launch that picks it and the guards it
# drops.
ok "layernorm f32 stream: rows of whole chunks (of 8 packs of 4) run the WHOLE instance, kept items too" sh -c "grep -A3 'const bool t_whole = t_packs && t_len % ((int64_t)t_tx \* 32) == 0; /\* rows of whole chunks \*/' '$work/s.cu' | grep -q 'tecc::keep_items(t_kc, (const void \*)tecc_layernorm_f32_g0_stream<IndexT, 4, true, true, true>'"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'if (t_whole || t_r0 < t_red)')" 2 "rowstats f32 stream: its WHOLE instance drops the item guards of both loops"
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -c 'if (KEEP && t_g < t_keep)')" 2 "layernorm f32 stream: kept only by the KEEP instance"
# The arithmetic of moments (emit_stitch.c): the sums and fmas the
# kernels compute.
is "$(kernel_text tecc_var_f32_g0_stream | grep -c 'tecc::Sum()(t_acc')" 0 "var f32 stream: no sum for a mean that only centres the moments"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'tecc::Sum()(t_acc')" 1 "rowstats f32 stream: the mean, an output, keeps its sum"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 't_acc[0-9]*\[t_i\] = tecc::fma(t_dv[0-9]*, t_dv[0-9]*, t_acc[0-9]*\[t_i\]);')" 1 "rowstats f32 registers: the squares (about the shift) accumulate with one fma"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 't_cq[0-9]* = tecc::fma(t_dv[0-9]*, t_dv[0-9]*, t_cq[0-9]*);')" 1 "rowstats f32 stream: the chunk's squared deviations with one fma"
is "$(kernel_text tecc_nofma_g0_reg | grep -c 'tecc::fma(')" 0 "no fma for a max, an integer sum or a sum of a sum"
# Instances (template parameters CLUSTER and NARROW): which launch takes
# which, the cluster code only the CLUSTER instance has, the bounds each is
# compiled with, and the host's tests; the narrow and cluster variants,
# their conditions and whether clusters loop are schedule.sh's.
is "$(grep -c 'tecc_rowstats_f32_g0_reg<int32_t, [0-9], 4, 1, true, false, false, [0-9]*, [a-z]*>\(<<<\|, t_rows, t_tx\)' "$work/s.cu")" 7 "rowstats f32: seven launches of instances without cluster arithmetic (the warp variant's four LANES, block, narrow, long)"
ok "rowstats f32: the cluster launch takes the CLUSTER instance" grep -q 'tecc::launch_cluster(tecc_rowstats_f32_g0_reg<int32_t, 8, 4, 1, true, false, true, 0, false>,' "$work/s.cu"
is "$(grep -c 'tecc_rowstats_f32_g0_reg<int32_t, 8, 4, 1, [a-z]*, false, false, 0, true><<<' "$work/s.cu")" 2 "rowstats f32: the narrow launches take the NARROW instance, with packs and without"
ok "rowstats f32: the NARROW instance bound to 3 blocks of 384 an SM, LANES -1 to one of 128, the others to no minimum" grep -q '__global__ void __launch_bounds__(LANES < 0 ? 128 : NARROW ? 384 : 1024, LANES < 0 ? 1 : (NARROW ? 3 : 0)) tecc_rowstats_f32_g0_reg(' "$work/s.cu"
ok "the cluster rank and size only in the CLUSTER instance" grep -q 'const unsigned t_rank = CLUSTER ? tecc::cluster_rank() : 0, t_blocks = CLUSTER ? tecc::cluster_size() : 1;' "$work/s.cu"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -A4 'if (CLUSTER) {' | grep -c 'tecc::cluster_allreduce_n(t_cl, tecc::Sum(), t_slot, t_par);')" 1 "rowstats f32: the cluster all-reduce of its level under CLUSTER"
ok "softmax f32: the cluster condition asks the device how many clusters it holds" grep -q '&& t_rows <= tecc::resident_clusters(tecc_softmax_f32_g0_reg<int32_t, 8, 4, 1, true, false, true, 0, false>, tecc::cluster_blocks(t_len, 32768), 1024)) {' "$work/s.cu"
ok "rmsw bf16: a grid of the clusters the device holds at once" grep -q 'tecc::launch_cluster(tecc_rmsw_bf16_g0_reg<int32_t, 8, 8, 1, true, false, false, true, 0, false, false>, tecc::cluster_grid(t_rows, t_cluster, tecc::resident_clusters(tecc_rmsw_bf16_g0_reg<int32_t, 8, 8, 1, true, false, false, true, 0, false, false>, t_cluster, 1024)), dim3(1024), t_cluster, 0, stream' "$work/s.cu"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c 'tecc::cluster_allreduce(t_acc[0-9]*\[t_i\], tecc::[A-Za-z]*(), t_slot, t_par);')" 2 "softmax f32: each cluster all-reduce (max, then sum) takes the next of the two slots"
# Rows that are not whole packs held in shared memory (template parameter
# SHARED; which variants, Variant.shared_bytes, is schedule.sh's): the
# held arrays through tecc::HeldRow, the element loops a few items at a
# time, the bound, the launch's dynamic shared memory and the condition
# that asks the device for it.
ok "rmsw bf16: the register kernel takes SHARED after PACKS and WHOLE" grep -q 'template <typename IndexT, int ITEMS, int VEC, int ROWS, bool PACKS, bool WHOLE, bool SHARED, bool CLUSTER, int LANES, bool EARLY, bool AHEAD>' "$work/s.cu"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'typename tecc::HeldRow<uint32_t, ROWS \* ITEMS \* VEC / 2, SHARED>::type t_c0; /\* two 16-bit elements a word \*/')" 1 "rmsw bf16: the held row declared through tecc::HeldRow"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'tecc::bind_held(t_c0, t_held, t_hid, t_hth);')" 1 "rmsw bf16: ... bound to the first region of t_held"
is "$(kernel_text tecc_addrms_bf16_g0_reg | grep -c 'tecc::bind_held(t_c[0-9]*, t_held + 2 \* ROWS \* ITEMS \* VEC \* t_hth, t_hid, t_hth);')" 1 "add_rmsnorm bf16: its second held value after the first's 2 bytes an element"
ok "rmsw bf16: 4 items at a time in the SHARED instance of ITEMS 8 and more, 2 under, all in the others" grep -q 'constexpr int t_hu = SHARED ? (ITEMS >= 8 ? 4 : 2) : ITEMS;' "$work/s.cu"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'for (int t_g = 0; t_g < ITEMS; t_g += t_hu)')" "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'for (int t_k = t_g; t_k < (t_g + t_hu < ITEMS ? t_g + t_hu : ITEMS); t_k++) {')" "rmsw bf16: each element loop in groups of t_hu items"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'for (int t_g = 0; t_g < ITEMS; t_g += t_hu)')" 2 "rmsw bf16: ... both of them (the sum of squares, y)"
ok "rmsw bf16: its SHARED instances (and LANES -1, of 128 threads) bound to a block an SM at least" grep -q '__launch_bounds__(LANES < 0 ? 128 : EARLY ? 128 : 1024, LANES < 0 ? 1 : (SHARED ? 1 : 0)) tecc_rmsw_bf16_g0_reg(' "$work/s.cu"
ok "rmsw bf16: the long variant's SHARED instance launched with 128 bytes a thread of shared memory" grep -q 'tecc_rmsw_bf16_g0_reg<int32_t, 8, 8, 1, false, false, true, false, 0, false, false><<<t_grid, dim3(t_tx, t_ty), (size_t)128 \* tecc::held_threads(tecc::pow2_at_least(tecc::ceil_div(t_len, 64), 32, 1024), 128), stream>>>' "$work/s.cu"
ok "rmsw bf16: ... where the device has them (else the next variant)" grep -q '&& t_len <= 65536 && (t_packs || (int64_t)128 \* tecc::held_threads(tecc::pow2_at_least(tecc::ceil_div(t_len, 64), 32, 1024), 128) <= tecc::shared_room(t_hr\[0\], (const void \*)tecc_rmsw_bf16_g0_reg<int32_t, 8, 8, 1, false, false, true, false, 0, false, false>))) {' "$work/s.cu"
ok "rmsw bf16: the cluster's SHARED instance: its shared memory in the occupancy asked and the launch" grep -q 'tecc::launch_cluster(tecc_rmsw_bf16_g0_reg<int32_t, 8, 8, 1, false, false, true, true, 0, false, false>, tecc::cluster_grid(t_rows, t_cluster, tecc::resident_clusters(tecc_rmsw_bf16_g0_reg<int32_t, 8, 8, 1, false, false, true, true, 0, false, false>, t_cluster, 1024, (size_t)128 \* 1024)), dim3(1024), t_cluster, (size_t)128 \* 1024, stream' "$work/s.cu"
is "$(grep -c 'tecc_rmsw_bf16_g0_reg<int32_t, [0-9]*, 8, [12], [a-z]*, [a-z]*, true,' "$work/s.cu")" 4 "rmsw bf16: SHARED only in the long and cluster variants' instances for rows that are not whole packs (condition and launch each)"
is "$(grep -c 'bool PACKS.*bool SHARED' "$work/s.cu")" "$(grep -c '__launch_bounds__(.*SHARED ? 1 : 0)' "$work/s.cu")" "every kernel that takes SHARED is bound by it"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c SHARED)" 0 "softmax f32 (one f32 value a row): no SHARED"
is "$(kernel_text tecc_card_bf16_g0_reg | grep -c 'SHARED')" 0 "card bf16 (writes nothing along the row): no SHARED"

ok "rowstats f32: the CLUSTER instance waits for the cluster before it ends" sh -c "sed -n '/__global__ .* tecc_rowstats_f32_g0_reg(/,/^}/p' '$work/s.cu' | tail -2 | grep -q 'if (CLUSTER) tecc::cluster_drain();'"
is "$(sed -n '/void cluster_allreduce_n(T (&v)\[K\], Op op, unsigned char (&slots)\[32\], unsigned &parity) {/,/^}/p' "$work/s.cu" | grep -c '__cluster_barrier_wait();')" 1 "the cluster all-reduce waits at one barrier (cluster_allreduce: cluster_allreduce_n of one value)"
# The order of a stream kernel's reads, and which loads and stores stream
# past L2 (tecc::load_stream, tecc::store_stream): code, in no record.
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 'for (IndexT t_base = (t_red - 1) / t_step \* t_step; t_base >= 0 && t_base < t_red; t_base -= t_step) {')" 1 "softmax f32 stream: the second read walks the row backward"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 'for (IndexT t_base = 0; t_base < t_red; t_base += t_step) {')" 1 "softmax f32 stream: the first read walks it forward"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 't_base = t_lo + (t_hi - t_lo - 1) / t_step \* t_step; t_base >= t_lo && t_base < t_hi; t_base -= t_step) {')" 1 "softmax col bf16 split stream: its second read backward over its chunk"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 't_p0 = tecc::load_stream(reinterpret_cast<const tecc::Pack<float, VEC> \*>(x + ')" 1 "rowstats f32 registers: row values only, loads streamed past L2"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'tecc::load_stream(')" 2 "rowstats f32 stream: its one read, the last, streamed past L2 (the first chunk and each next one)"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c 'tecc::load_stream(\|tecc::store_stream(')" 0 "softmax f32 registers (writes y along the row): plain loads and stores"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 't_p0 = \*reinterpret_cast<const tecc::Pack<float, VEC> \*>(x + ')" 1 "softmax f32 stream: the first read plain (kept in L2 for the second)"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 't_p0 = tecc::load_stream(reinterpret_cast<const tecc::Pack<float, VEC> \*>(x + ')" 1 "softmax f32 stream: the last read streamed past L2"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 'tecc::store_stream(reinterpret_cast<tecc::Pack<float, VEC> \*>(y + t_o \* t_red + t_r0), t_s_y);')" 1 "softmax f32 stream: y stored past L2"
# The pipe (emit_stitch.c): a stream kernel of a reduction pass and an
# output pass, reading one 16-bit value over the row, walks a row's
# output pass beside the next row's first pass; the block's first row's
# first pass before the row loop, the accumulators set back after the
# row's all-reduces, a row without a next one walking its output pass
# alone, backward.  Kernels of wider values or more of them do not.
ok "softmax bf16 stream: the pipe's first row's first pass before the row loop" test "$(line_of tecc_softmax_bf16_g0_stream 'the pipe: a row')" -lt "$(line_of tecc_softmax_bf16_g0_stream 'for (IndexT t_ob = ')"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'const IndexT t_on = t_o + (IndexT)gridDim.x \* blockDim.y; /\* the thread.s next row \*/')" 1 "softmax bf16 stream: the thread's next row"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -A1 'if (t_packs && t_on < t_outer && t_red <= 131072) /\* rows of at most 256 KiB \*/ {' | grep -c 'for (IndexT t_base = 0; t_base < t_red; t_base += t_step) {')" 1 "softmax bf16 stream: with a next row of whole packs and at most 256 KiB, both passes walk forward"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -A1 '} else {' | grep -c 'for (IndexT t_base = (t_red - 1) / t_step \* t_step; t_base >= 0')" 1 "softmax bf16 stream: without one, the output pass alone, backward"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'const IndexT t_o = t_on; /\* the next row.s first pass \*/')" 3 "softmax bf16 stream: the next row's first pass in its own scopes (its loads, the rest, and alone)"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 't_p0 = tecc::load_last(reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(x + t_o \* t_red + t_r0));')" 1 "softmax bf16 stream: the next row's packs marked to stay in L2"
ok "softmax bf16 stream: the next row's loads before this row's chunk" test "$(line_of tecc_softmax_bf16_g0_stream 'tecc::load_last(')" -lt "$(line_of tecc_softmax_bf16_g0_stream 'tecc::keep_get<')"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'if (t_on < t_outer) /\* the next row.s first pass alone \*/ {')" 1 "softmax bf16 stream: without the pipe, the next row's first pass alone"
ok "softmax bf16 stream: the max set back after the row's all-reduce" test "$(kernel_text tecc_softmax_bf16_g0_stream | grep -n '^ *t_acc[0-9]* = (-(float)tecc::inf_f64());' | cut -d: -f1)" -gt "$(line_of tecc_softmax_bf16_g0_stream 'tecc::row_allreduce(t_os')"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c '^ *t_pk[0-9]* = 0xff80ff80u;')" 1 "softmax bf16 stream: its pair max set back too"
is "$(kernel_text tecc_rmsw_bf16_g0_stream | grep -c 'const IndexT t_on = ')" 1 "rmsnorm bf16 stream (x, and w along the row): the pipe"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 't_on')" 0 "softmax f32 stream (32-bit values): no pipe"
is "$(kernel_text tecc_addrms_bf16_g0_stream | grep -c 't_on')" 0 "add_rmsnorm bf16 stream (x and r over the row): no pipe"
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -c 't_on')" 0 "layernorm f32 stream (moments): no pipe"
is "$(kernel_text tecc_masked_bf16_g0_stream | grep -c 't_on')" 0 "masked bf16 stream (the mask's row from the kept axes' indices): no pipe"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 't_on')" 0 "rowstats f32 stream (one read): no pipe"
printf 'kernel bytes_softmax(x: u8[M, N]) -> (y: f64[M, N]) {\n    y = softmax(f64(x), -1)\n}\n' > "$work/f64.te"
"$TECC" -O2 "$work/f64.te" -o "$work/f64.cu"
is "$(kernel_text tecc_bytes_softmax_g0_stream "$work/f64.cu" | grep -c 't_on')" 0 "softmax of u8 rows in f64 (one 8-bit value held, f64 arithmetic): no pipe"
# A position compared with a label (emit_stitch.c, pack_tests_position()):
# rows of one axis in packs run the element loop that compares in two
# instances (tecc::by_pack), its == guarded by t_may and its != by
# !t_may; the passes that compare nothing and rows of two axes do not.
"$TECC" -O2 "$top_srcdir/tests/stitch/labels.te" -o "$work/lab.cu" || echo "Bail out! tecc labels.te failed"
by_pack='tecc::by_pack(tecc::pack_holds<VEC>(u_t_val_at'
is "$(kernel_text tecc_label_rows_bf16_g0_stream "$work/lab.cu" | grep -c "$by_pack, t_r0), \[&\](auto t_may) {")" 2 "labels bf16 stream: both output passes (the pipe's and alone) in two instances"
is "$(kernel_text tecc_label_rows_bf16_g0_reg "$work/lab.cu" | grep -c "$by_pack\[t_i\], t_r0), \[&\](auto t_may) {")" 1 "labels bf16 registers: the output pass in two instances, the max and sum passes not"
is "$(kernel_text tecc_label_rows_g0_reg "$work/lab.cu" | grep -c '(t_may && (IndexT)(t_d1) == u_t_val_at\[t_i\])')" 1 "labels f32 registers: == guarded by t_may"
is "$(kernel_text tecc_label_rows_g0_reg "$work/lab.cu" | grep -c '(!t_may || (IndexT)(t_d1) != u_t_val_at\[t_i\])')" 1 "labels f32 registers: != by !t_may, in the same instances"
# A row value loaded from memory that a pass after the first reads (the
# label, which only the output pass compares) is loaded at the row's top,
# before the passes' all-reduces, in the register kernel; the stream
# kernel, and the row's outputs of one value a row, load it where they
# read it (emit_stitch.c, row_value_at()).
ok "labels bf16 registers: the label loaded before the max's all-reduce" test "$(line_of tecc_label_rows_bf16_g0_reg 'u_t_val\[t_i\] = ' "$work/lab.cu")" -lt "$(line_of tecc_label_rows_bf16_g0_reg 'lanes_allreduce<LANES>(t_acc' "$work/lab.cu")"
ok "labels bf16 stream: the label loaded after the row's first all-reduce" test "$(line_of tecc_label_rows_bf16_g0_stream 'u_t_val = t_live ? t\[t_o\]' "$work/lab.cu")" -gt "$(line_of tecc_label_rows_bf16_g0_stream 'row_allreduce(' "$work/lab.cu")"
"$TECC" -O2 "$top_srcdir/tests/stitch/gather.te" -o "$work/gather.cu" || echo "Bail out! tecc gather.te failed"
ok "cross-entropy f32 registers: the label of the row's outputs loaded after the all-reduces" test "$(line_of tecc_ce_f32_g0_reg 'u_t_val\[t_i\] = ' "$work/gather.cu")" -gt "$(line_of tecc_ce_f32_g0_reg 'lanes_allreduce_n<LANES>(t_all' "$work/gather.cu")"
printf 'kernel planes(x: f32[B, S, M], t: i64[B, 1, 1]) -> (y: f32[B, S, M]) {\n    y = x - mean(x, 1, 2) + where(index(x, 2) == t, 1.0, 0.0)\n}\n' > "$work/planes.te"
"$TECC" -O2 "$work/planes.te" -o "$work/planes.cu"
ok "labels along a row of two axes: compared every element, no t_may" sh -c "grep -q '(IndexT)(t_d2) == u_t_val_at' '$work/planes.cu' && ! grep -q 't_may' '$work/planes.cu'"
# The reads of the stream kernels, their online sums, and the loads of
# row operands and of column packs (the packs' VEC is schedule.sh's).
is "$(row_loads tecc_softmax_f32_g0_stream)" 2 "softmax f32 stream: two reads (the max and the sum of exp, then y)"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 't_os[0-9]* = tecc::rescale_exp(')" 2 "softmax f32 stream: the sum rescaled per chunk and to the row's max"
is "$(row_loads tecc_logsumexp_f32_g0_stream)" 1 "logsumexp f32 stream: one read"
ok "logsumexp f32 stream: the shift of an infinite max is 0" sh -c "grep -q 'tecc::rescale_exp(t_os[0-9]*, tecc::isinf(t_pm[0-9]*) ? 0.0f : t_pm[0-9]*, t_sh[0-9]*)' '$work/s.cu'"
is "$(kernel_text tecc_xent_f32_g0_stream | grep -c 'const tecc::Pack<float, VEC> t_p')" 2 "cross-entropy f32 stream: one read of l and t"
is "$(kernel_text tecc_softmax_col_f32_g0_stream | grep -c 't_c0\[t_k \* VEC + t_j\] = t_in ?')" 2 "softmax f32 column stream: two reads"
ok "rmsnorm bf16: w loaded a pack per item" sh -c "grep -q 't_q[0-9]* = \*reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(w + t_r0);' '$work/s.cu'"
ok "masked softmax bf16: the mask's row at its row offset" sh -c "grep -q 'reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(m + (t_d1) \* t_red + t_r0);' '$work/s.cu'"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'm\[(t_d1) \* N + t_d2\]')" 0 "masked softmax bf16: no element-by-element mask loads"
# A mask of a row of its own for each row, read by three passes of the
# register kernel, held with the row where a thread's elements take 128
# bytes or fewer (emit_stitch.c, holds_along()); a norm's w is not.
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 't_h1\[t_k\] = \*reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(m + (t_d1) \* t_red + t_r0);')" 1 "masked softmax bf16 registers: the mask's packs loaded once, with the row"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 't_hold_along ? t_h1\[t_k\] : \*reinterpret_cast')" 3 "masked softmax bf16 registers: each of the three passes reads the held packs"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'constexpr bool t_hold_along = t_packs && ITEMS \* VEC \* 4 <= 128;')" 1 "masked softmax bf16 registers: held where s and m take 128 bytes a thread"
is "$(kernel_text tecc_masked_bf16_g0_stream | grep -c 't_hold')" 0 "masked softmax bf16 stream: nothing held"
is "$(kernel_text tecc_rmsnorm_bf16_g0_reg | grep -c 't_hold')" 0 "rmsnorm bf16 registers: w (one row for all rows) not held"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(x + t_r0 \* t_outer + t_o0)')" 1 "softmax bf16 columns: a pack of a row's VEC columns per item"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'tecc::column_allreduce_vec(t_acc[0-9]*, ')" 2 "softmax bf16 columns: each level all-reduces VEC columns at once"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'reinterpret_cast<tecc::Pack<uint16_t, VEC> \*>(y + t_r0 \* t_outer + t_o0) = t_s_y')" 1 "softmax bf16 columns: y stored a pack per item"
is "$(kernel_text tecc_colshift_f32_g0_reg | grep -c 'b\[t_o\]')" 1 "a per-column operand: loaded per column of the thread"
is "$(kernel_text tecc_colshift_f32_g0_reg | grep -c '  m\[t_o\] = ')" 1 "a column output: stored per column of the thread"
# Rows a thread: short rows that read w share each pack of it between two
# rows (rmsw). Which variant holds two rows and loads ahead (Variant.rows,
# prefetch) is schedule.sh's; here the code of its rows and loads.
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -A12 'EARLY ? t_e1\[t_k\] : \*reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(w + t_r0)' | grep -c 'for (int t_i = 0; t_i < ROWS; t_i++)')" 1 "rmsw bf16: w's pack loaded once, then the thread's rows"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'const IndexT t_o = t_o0 + (IndexT)t_i \* blockDim.y;')" 5 "rmsw bf16: rows t_o0 + t_i * blockDim.y (the first loads ahead, the next, the loads of ROWS 1, the sum, y)"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c '^ *if (ROWS > 1 && t_packs) {$')" 2 "rmsw bf16: the PACKS instance of ROWS 2 loads its rows ahead (before the loop, then each next group)"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 't_c0\[t_q\] = t_n0\[t_q\];')" 1 "rmsw bf16: the rows loaded ahead become this iteration's"
is "$(kernel_text tecc_addrms_bf16_g0_reg | grep -c 't_n[0-9]')" 0 "addrms bf16: no arrays of the next rows"
# Packs as a template parameter: rows that are whole packs, aligned, run
# the PACKS instance (no per-element row-end checks), others the instance
# that loads element by element.
# The warp variant of a norm holds two rows a thread (ROWS 2): its rows
# not in packs keep an instance for each LANES, as the packed ones (a
# LANES -1 instance took 78 registers where each took 52, and ran
# layernorm bf16 32768 x 250 1.31x slower on an H100;
# emit_stitch_launch.c, lanes_apart_from_packs()).
is "$(sed -n '/tecc_status tecc_rmsw_bf16_launch(/,/^}/p' "$work/s.cu" | grep -A4 'static tecc::DeviceCache t_wb\[8\];' | grep -c -e '^ *switch (t_tx) {' -e '^ *case 4:$' -e '^ *if (t_packs)$' -e '^ *tecc::launch_rows(t_wb\[0\], tecc_rmsw_bf16_g0_reg<int32_t, 2, 8, 2, true, false, false, false, 4, false, false>, ')" 4 "rmsw bf16 warp (ROWS 2): for each lanes of a row (t_tx), the PACKS instance when t_packs"
is "$(sed -n '/tecc_status tecc_rmsw_bf16_launch(/,/^}/p' "$work/s.cu" | grep -A40 'static tecc::DeviceCache t_wb\[8\];' | grep -o -E '^ *tecc::launch_rows\(t_wb\[[0-7]\], tecc_rmsw_bf16_g0_reg<int32_t, 2, 8, 2, (true|false), false, false, false, (4|8|16|32), false, false>, ' | sort -u | wc -l)" 8 "rmsw bf16 warp (ROWS 2): LANES 4, 8, 16 and 32, each with and without PACKS"
is "$(sed -n '/tecc_status tecc_rmsw_bf16_launch(/,/^}/p' "$work/s.cu" | grep -c 'tecc_rmsw_bf16_g0_reg<int32_t, 2, 8, 2, false, false, false, false, -1, ')" 0 "rmsw bf16 warp (ROWS 2): no instance of LANES -1"
# EARLY (schedule.c, early_operands()): the block variant's WHOLE instance
# of a norm loads w's packs with the row, before the reductions (which
# variant, and its bound, are schedule.sh's): where the loads are; then
# the all-reduce over LANES and the PACKS instance's row-end checks.
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -e 't_e1\[t_k\] = \*reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(w + t_r0);' -e 'lanes_allreduce' | head -1 | grep -c 't_e1')" 1 "rmsw bf16: w's early packs are loaded before the first all-reduce"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 't_acc[0-9]*\[t_i\] = tecc::lanes_allreduce<LANES>(t_acc[0-9]*\[t_i\], tecc::Sum(), (float \*)t_smem);')" 1 "rmsw bf16: the row's sum all-reduced over LANES lanes (unconditional shuffles in the warp variant)"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'constexpr bool t_packs = PACKS;')" 1 "rmsw bf16: the row-end checks are compile-time under PACKS"
# Whole row groups of whole rows: the warp variant of one row a thread
# and the block variant have an instance without row or item guards
# (WHOLE; which variants are whole is schedule.sh's): the launches that
# take it, the host's test, and the guards it folds.
# The warp variant's launches (runtime launch_rows): each picks its block,
# one warp or 128 threads, by the device's occupancy of its instance.
is "$(sed -n '/tecc_status tecc_softmax_f32_launch(/,/^}/p' "$work/s.cu" | sed -n '/\/\* warp: /,/\/\* block: /p' | grep -c -e 't_grid' -e '<<<')" 0 "softmax f32 warp: no grid or launch of its own, launch_rows picks them"
ok "softmax f32 warp: a cache for each of its 9 launches (4 LANES, WHOLE or PACKS; neither, LANES -1)" sh -c "sed -n '/tecc_status tecc_softmax_f32_launch(/,/^}/p' '$work/s.cu' | grep -q 'static tecc::DeviceCache t_wb\[9\]; /\* each launch.s block: one warp or t_ty rows (tecc::launch_rows) \*/' && sed -n '/tecc_status tecc_softmax_f32_launch(/,/^}/p' '$work/s.cu' | grep -o 'tecc::launch_rows(t_wb\[[0-9]*\]' | sort -u | wc -l | grep -qx 9"
ok "softmax f32: whole when R fills the lanes' packs and the rows fill the blocks" grep -q 'const bool t_whole = t_packs && t_len == (int64_t)t_tx \* 16 && t_rows % t_ty == 0; /\* whole row groups of whole rows \*/' "$work/s.cu"
is "$(grep -A1 '^ *if (t_whole)$' "$work/s.cu" | grep -c -E '^ *(tecc::launch_rows\(t_wb\[[0-9]+\], )?tecc_softmax_f32_g0_reg<int32_t, 4, 4, 1, true, true, false, (0|4|8|16|32), false>(<<<|, t_rows, t_tx)')" 5 "softmax f32: the WHOLE instance for the warp variant's four LANES and the block variant"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c 'constexpr bool t_whole = WHOLE;')" 1 "softmax f32: its guards compile-time under WHOLE"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -v -e 'else if (t_r0 < t_red) tecc::store_head(' -e 'AHEAD' -e 'tecc::ahead_copy(' | grep -c -e 't_r0 < t_red' -e 't_o < t_outer')" "$(kernel_text tecc_softmax_f32_g0_reg | grep -c -e 't_whole || t_r0 < t_red' -e 't_whole || t_o < t_outer')" "softmax f32: every row and item guard folds under WHOLE (but the partial pack's, which packs never take)"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'if (VEC > 1 && t_packs && t_o < t_outer && (t_whole || t_r0 < t_red)) {')" 2 "rmsw bf16: the next rows' loads keep their row guard (the last group's next is past the end)"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 't_whole')" 0 "masked bf16: no WHOLE guards"
ok "masked bf16 (a mask at its own row offset): a PACKS instance too" grep -q '__global__ void __launch_bounds__(.*) tecc_masked_bf16_g0_reg(.*, IndexT D, IndexT t_batch) {' "$work/s.cu"
# 16-bit rows that are not whole packs: loads of the aligned words a pack
# spans and a shift, where the group writes along the row (in every
# kernel) or only reduces it (in the register instances of ITEMS 8, or
# of any ITEMS where it holds two values: cross-entropy's l and onehot);
# stores of aligned words, each lane its own pack (no ballot, no shuffle).
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c '} else if (VEC > 1 && (t_whole || t_o < t_outer) && (t_whole || t_r0 < t_red)) {')" 1 "softmax bf16 registers: rows that are not whole packs take the unaligned loads"
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c 'tecc::load_unaligned<VEC>(x, t_o \* t_red + t_r0, t_red - t_r0, t_outer \* t_red);')" 1 "softmax bf16 registers: a pack at any 2-byte boundary, inside the tensor"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'tecc::load_unaligned<VEC>(x, ')" 5 "softmax bf16 stream: both reads (the first pass written three times, the output pass twice: the pipe)"
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c 'else if (t_r0 < t_red) tecc::store_unaligned(y + t_o \* t_red + t_r0, t_s_y, t_red - t_r0);')" 1 "softmax bf16 registers: y stored in aligned words, each lane its pack"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'tecc::store_unaligned(y + .*, t_s_y, t_red - t_r0);')" 2 "softmax bf16 stream: y the same (each pass written twice: the pipe)"
is "$(grep -c '__ballot_sync\|\bt_lm\b\|\bt_sm\b' "$work/s.cu")" 0 "no ballot of the lanes that store (the stores need no shuffle)"
is "$(grep -c '__activemask' "$work/s.cu")" 0 "no mask of whichever lanes happen to run together"
is "$(kernel_text tecc_card_bf16_g0_reg | grep -c '} else if (VEC > 1 && ITEMS > 4 && ')" 1 "card bf16 (only reduces one value): unaligned loads only in the instances of ITEMS 8"
"$TECC" -O2 "$top_srcdir/tests/bench/cross_entropy_bf16.te" -o "$work/ce.cu" || echo "not ok - tecc failed on tests/bench/cross_entropy_bf16.te"
is "$(sed -n '/__global__ .* tecc_cross_entropy_bf16_g0_reg(/,/^}/p' "$work/ce.cu" | grep -c '} else if (VEC > 1 && (t_whole || t_o < t_outer) && (t_whole || t_r0 < t_red)) {')" 1 "cross-entropy bf16 (reduces two held values): unaligned loads at every ITEMS (ITEMS 4 spilled without)"
is "$(sed -n '/__global__ .* tecc_cross_entropy_bf16_g0_stream(/,/^}/p' "$work/ce.cu" | grep -c 'tecc::load_unaligned<VEC>(')" 2 "cross-entropy bf16 stream: l and onehot through aligned words too"
is "$(kernel_text tecc_card_bf16_g0_stream | grep -c 'load_unaligned')" 0 "card bf16 stream: element by element"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'tecc::load_unaligned<VEC>(w, t_r0, t_red - t_r0, t_red);')" 1 "rmsw bf16: w at any alignment, inside its N"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c 'load_unaligned\|store_unaligned')" 0 "softmax f32: element by element (4-byte elements)"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'tecc::load_unaligned<VEC>(s, ')" 1 "masked bf16 (PACKS): the scores of a row that is not whole packs through the aligned chunks they span"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'tecc::load_unaligned<VEC>(m, (t_d1) \* t_red + t_r0, t_red - t_r0, ((t_d1) + 1) \* t_red);')" 3 "masked bf16: its mask (at a row offset of its own) through aligned words too, inside its row, in each pass"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'if (!t_packs && t_r >= t_red) break;')" 2 "masked bf16 (16-bit register kernel): its last pass computes past the row's end, its two levels break there"
is "$(kernel_text tecc_masked_bf16_g0_stream | grep -c 'if (!t_packs && t_r >= t_red) break;')" 3 "masked bf16 stream: every pass breaks at the row's end"
# Rows batch-fastest (schedule.c, batch_axes(); which groups, and their
# batch_bytes and batch_limit, are schedule.sh's): the kernels' argument
# t_batch (1: domain order), their row of the visit, and the host's test
# of the sizes; one instance serves both orders (a template flag doubled
# the instances: masked softmax bf16's nvcc 11.6 s, 6.7 with one).
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'const IndexT t_o = t_batch > 1 ? tecc::batch_fastest<IndexT>(t_ob + threadIdx.y, t_outer, t_batch) : t_ob + threadIdx.y;')" 1 "masked bf16 registers: the row of the visit, batch-fastest where t_batch is over 1"
is "$(kernel_text tecc_masked_bf16_g0_stream | grep -c 'const IndexT t_o = t_batch > 1 ? tecc::batch_fastest<IndexT>(t_ob + threadIdx.y, t_outer, t_batch) : t_ob + threadIdx.y;')" 1 "masked bf16 stream: the row of the visit, batch-fastest where t_batch is over 1"
ok "masked bf16: batch-fastest where the batch is over 1 and S*N*6 bytes (s, m and y) past half the L2" grep -q 'const bool t_batched = (int64_t)B > 1 && (int64_t)S \* t_len \* 6 > 26214400;' "$work/s.cu"
is "$(grep -c 'tecc_masked_bf16_g0_reg<int32_t, 4, 8, true, false, false, [0-9]*>\(<<<\|, t_rows, t_tx\).*, (IndexT)(t_batched ? (int64_t)B : 1));$' "$work/s.cu")" 5 "masked bf16: one instance of each register launch (the warp's four LANES, block), told the order"
is "$(grep -c 'tecc_masked_bf16_g0_reg<[^>]*>\(<<<\|, t_rows, t_tx\)' "$work/s.cu")" 9 "masked bf16: no instance for either order alone (nine register launches: the warp's five, the block's two, the long variant's two)"
is "$(grep -c 'tecc_masked_bf16_g0_stream<[^>]*><<<.*, (IndexT)(t_batched ? (int64_t)B : 1), t_keep);$' "$work/s.cu")" 2 "masked bf16 stream: t_batch before t_keep, in its two launches"
is "$(kernel_text tecc_mask_and_row_f32_g0_reg | grep -c 'batch_fastest')" 0 "a mask and a row of the batch: no visit order"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'batch_fastest')" 0 "rmsnorm bf16: no visit order"
# An output along the row that reads no reduction (add_rmsnorm's h) is
# stored in the register kernel's first pass, before the row's all-reduce,
# in its PACKS instance; its other instances and the stream kernel store
# it with y (emit_stitch.c, writes_early()).
h_pack='&& t_packs) \*reinterpret_cast<tecc::Pack<float, VEC> \*>(h + t_o \* t_red + t_r0) = t_s_h;'
ok "addh f32 registers: h's packs stored before the row's all-reduce" test "$(line_of tecc_addh_f32_g0_reg "$h_pack")" -lt "$(line_of tecc_addh_f32_g0_reg 'lanes_allreduce')"
ok "addh f32 registers: y's packs after it" test "$(line_of tecc_addh_f32_g0_reg '(y + t_o \* t_red + t_r0) = t_s_y;')" -gt "$(line_of tecc_addh_f32_g0_reg 'lanes_allreduce')"
is "$(kernel_text tecc_addh_f32_g0_reg | grep -c 'if (!t_packs && t_r0 < t_red) tecc::store_head(h + ')" 1 "addh f32 registers: h of a row not whole packs stored with y"
is "$(kernel_text tecc_addh_f32_g0_stream | grep -c 'tecc::store_stream(reinterpret_cast<tecc::Pack<float, VEC> \*>(h + ')" 1 "addh f32 stream: h stored with y, in the last pass"
# Column split: a softmax(x, 0) whose column groups leave SMs idle cuts
# its rows into chunks (the split variant is schedule.sh's): partials of
# each chunk, then their fold and the writes.
ok "split: the partials (PHASE 1), then the fold and the writes (PHASE 2), each over groups x chunks" sh -c "grep -A5 '/\* split: stream, VEC 4, ITEMS 4 \*/' '$work/s.cu' | grep -q 'tecc_softmax_col_bf16_g0_stream<IndexT, 4, 1><<<t_grid, dim3(t_tx, t_ty), 0, stream>>>(x, y, (IndexT)M, (IndexT)N, t_packs, (float \*)t_part0, (int64_t)t_chunk);' && grep -A6 '/\* split: stream, VEC 4, ITEMS 4 \*/' '$work/s.cu' | grep -q 'stream<IndexT, 4, 2><<<t_grid'"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 't_part\[((IndexT)blockIdx.y \* 2 + [01]) \* t_outer + t_o\] = t_\(acc2\|os6\)\[t_j\];')" 2 "split PHASE 1: the chunk's max and its sum of exp about it"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 't_os6\[t_j\] = tecc::Sum()(t_os6\[t_j\], tecc::rescale_exp(t_part\[((IndexT)t_c \* 2 + 1) \* t_outer + t_o\], t_part\[((IndexT)t_c \* 2 + 0) \* t_outer + t_o\], t_acc2\[t_j\]));')" 1 "split PHASE 2: each chunk's sum rescaled from its max to the thread's"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 'for (unsigned t_c = threadIdx.y; t_c < gridDim.y; t_c += blockDim.y) {')" 2 "split PHASE 2: a share of the chunks a thread, folded by the block's all-reduce"
ok "split: the entry sizes the partials by the launch's own chunk count" grep -q 't_chunks = t_rows > 0 ? tecc_softmax_col_bf16_g0_chunks(t_rows, t_len, !t_big) : 1;' "$work/s.cu"
ok "split: chunks for one wave of two blocks an SM (tecc::column_chunks' default)" grep -q 'return tecc::column_chunks(t_rows, t_len, 4, tecc::pow2_at_least(tecc::ceil_div(t_rows, 4), 8, 32));' "$work/s.cu"
# Streamed 16-bit columns: elements two to a word, 8 packs a thread where
# the indices are 32-bit (schedule.c, wide_column_streams()); f32 keeps 4.
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 'constexpr int ITEMS = sizeof(IndexT) == 4 ? 8 : 4;')" 1 "softmax col bf16 stream: 8 packs a thread with 32-bit indices, 4 with 64-bit"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 'uint32_t t_c0\[ITEMS \* VEC / 2\]; /\* two 16-bit elements a word \*/')" 2 "softmax col bf16 stream: each read's elements two to a word"
is "$(kernel_text tecc_softmax_col_f32_g0_stream | grep -c 'constexpr int ITEMS = 4;')" 1 "softmax col f32 stream: 4 packs a thread"
# 16-bit columns that are not whole packs: each row's VEC columns through
# the aligned words they span (tecc::load_unaligned, store_unaligned), in
# both reads and the store; f32 ones element by element.
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c '} else if (VEC > 1 && t_live && t_r0 < t_hi) {')" 2 "softmax col bf16 stream: columns not whole packs loaded through words in both reads"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 'tecc::load_unaligned<VEC>(x, t_r0 \* t_outer + t_o0, t_outer - t_o0, t_outer \* t_red)')" 2 "softmax col bf16 stream: ... the row's columns from t_o0, inside the tensor"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 'tecc::store_unaligned(y + t_r0 \* t_outer + t_o0, t_s_y, t_outer - t_o0)')" 1 "softmax col bf16 stream: ... and y stored so"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'tecc::load_unaligned<VEC>(x, ')" 1 "softmax col bf16 registers: loaded so too"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'if (t_r0 < t_red \&\& t_packs \&\& (AHEAD || ITEMS < 8)) \*reinterpret_cast<tecc::Pack<uint16_t, VEC> \*>(y + t_r0 \* t_outer + t_o0) = t_s_y;')" 1 "softmax col bf16 registers: ... whole packs of y in 16 bytes, but at ITEMS 8 without AHEAD (beside words: a stack frame)"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'else if (t_r0 < t_red) tecc::store_unaligned(y + t_r0 \* t_outer + t_o0, t_s_y, t_outer - t_o0);')" 1 "softmax col bf16 registers: ... the rest of y through words"
is "$(kernel_text tecc_softmax_col_f32_g0_stream | grep -c 'load_unaligned\|store_unaligned')" 0 "softmax col f32 stream: element by element"
# 16-bit max and min a pair at a time (emit_stitch.c, paired_minmax()):
# the stream kernel folds the pairs after each chunk's max loop, before
# the rescale; the register kernel only in its ITEMS 8 instances.
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 't_pk2 = tecc::minmax_pairs<true, true>(t_pk2, t_c0\[t_k \* (VEC / 2) + t_w\]);')" 3 "softmax bf16 stream: the max folds a chunk's words a pair at a time (the first pass written three times: the pipe)"
ok "softmax bf16 stream: the pairs fold into the max before the rescale" test "$(line_of tecc_softmax_bf16_g0_stream 'bf16_pair(&t_pk2, 1)')" -lt "$(line_of tecc_softmax_bf16_g0_stream 'const float t_sh')"
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c 'if (t_packs && tecc::pairs_minmax(VEC) && ITEMS >= 8)')" 2 "softmax bf16 registers: pairs (an item's words, then the max) in the ITEMS 8 instances only"
is "$(kernel_text tecc_rowmin_f16_g0_stream | grep -c 'tecc::minmax_pairs<false, false>(')" 1 "min of f16: f16 pairs"
is "$(kernel_text tecc_logsumexp_f32_g0_stream | grep -c 't_pk')" 0 "logsumexp f32: no pairs"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c -e 'if (t_packs) t_cn[0-9]* = tecc::add(t_cn[0-9]*, (float)VEC);' -e 't_acc[0-9]* = tecc::Sum()(t_acc[0-9]*, t_cs[0-9]*);')" 2 "rowstats f32 stream: the count a pack at a time, the mean from the chunk sums"
# A fused row's a*b + c, a*b - c and c - a*b in f32 or f64 whose product
# has no other use is one fma (emit_stitch.c, fused_multiply_add()); a
# mean is the sum times the reciprocal of the row's length, which the
# launching host code computes once (mean_of(), P_RCOUNT).
is "$(kernel_text tecc_lnwb_f32_g0_reg | grep -c 'const float y_val = tecc::fma(v[0-9]*, w_val, b_val);')" 1 "layernorm's * w + b: one fma"
is "$(kernel_text tecc_fmas_f32_g0_reg | grep -c 'const float z_val = tecc::fma(-(x_val), 3.0f, v[0-9]*\[t_i\]);')" 1 "c - a*b: fma(-a, b, c)"
is "$(kernel_text tecc_fmas_f32_g0_reg | grep -c 'const float u_val = tecc::fma(x_val, x_val, -(p));')" 2 "a*b - c: fma(a, b, -c)"
is "$(kernel_text tecc_fmas_f32_g0_reg | grep -c 'const float y_val = tecc::add(p, 1.0f);')" 2 "a product used twice: multiplied once, added as written"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 'tecc::mul(t_acc[0-9]*\[t_i\], t_rcount)\|tecc::mul(tecc::maximum(.*), t_rcount)')" 2 "rowstats f32: both means by the reciprocal"
is "$(grep -c '/ (float)t_red' "$work/s.cu")" 0 "no fused row divides by its length"
ok "rowstats f32: the reciprocal a float parameter" grep -q '__global__ void __launch_bounds__(LANES < 0 ? 128 : NARROW ? 384 : 1024, LANES < 0 ? 1 : (NARROW ? 3 : 0)) tecc_rowstats_f32_g0_reg(const float \*__restrict__ x, float \*__restrict__ m, float \*__restrict__ v, IndexT M, IndexT N, float t_rcount) {' "$work/s.cu"
is "$(grep -o 'tecc_center_f64_g0_\(reg\|stream\)<[^>]*><<<[^;]*;' "$work/s.cu" | grep -vc '(x, y, (IndexT)M, (IndexT)N, 1.0 / (double)t_len\(, [t_a-z0-9]*\)\?);')" 0 "f64 mean: every launch passes 1 / t_len in double"
# The register kernel folds a level of centred sums into its means' pass,
# about a shift, the row's first element (stitch_shifted_level(),
# emit_stitch.c's shifted_sums()): var's squares, and layernorm's
# backward's sum(dy * w * (x - mean)) from its sum(dy * w).
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 'lanes_allreduce')" 1 "rowstats f32 registers: one all-reduce a row"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 't_sk[0-9]*\[t_i\] = LANES ? __shfl_sync(0xffffffffu, t_c0\[t_i \* ITEMS \* VEC\], 0, LANES > 0 ? LANES : (int)blockDim.x) : t_red > 0 ? __ldg(x + ((t_whole || t_o < t_outer) ? t_o : 0) \* t_red) : (float)0;')" 1 "rowstats f32 registers: the shift, the row's first element: a shuffle from the warp variant's held row (of LANES lanes, or blockDim.x's), else a load"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 'float t_all\[3\] = {t_acc[0-9]*\[t_i\], t_ss[0-9]*\[t_i\], t_acc[0-9]*\[t_i\]};')" 1 "rowstats f32 registers: the mean, the deviations from the shift and their squares, together"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 'tecc::maximum(tecc::sub(t_acc[0-9]*\[t_i\], tecc::mul(t_ss[0-9]*\[t_i\], t_sd[0-9]*\[t_i\])), (float)0)')" 1 "rowstats f32 registers: the centred squares, at least 0"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 't_sk')" 0 "rowstats f32 stream: Chan's merge of moments, no shift"
"$TECC" -O2 "$top_srcdir/bench/train/layernorm.te" -o "$work/ln.cu" -H "$work/ln.h" || echo "Bail out! tecc failed on layernorm.te"
is "$(kernel_text tecc_layernorm_bf16_bwd_g0_reg "$work/ln.cu" | grep -c 'lanes_allreduce_n')" 1 "layernorm bf16 backward registers: one all-reduce a row, before the outputs"
is "$(kernel_text tecc_layernorm_bf16_bwd_g0_reg "$work/ln.cu" | grep -c 'float t_all\[5\] = ')" 1 "layernorm bf16 backward registers: five sums at once (x, dy * w, x - K, its squares, dy * w * (x - K))"
is "$(kernel_text tecc_layernorm_bf16_bwd_g0_reg "$work/ln.cu" | grep -c 'tecc::sub(t_acc[0-9]*\[t_i\], tecc::mul(t_sd[0-9]*\[t_i\], t_acc[0-9]*\[t_i\]))')" 1 "layernorm bf16 backward registers: sum(dy * w * (x - mean)) corrected by the level's own sum(dy * w)"
is "$(kernel_text tecc_layernorm_bf16_bwd_g0_stream "$work/ln.cu" | grep -c 't_sk')" 0 "layernorm bf16 backward stream: two passes, no shift"
# Rows of two levels with column partials that hold two 16-bit values
# (layernorm bf16's backward) take a roomy variant where the row is whole
# packs: twice the block variant's items in 256-thread blocks, two an SM
# (128 registers), the next row group loaded ahead, aligned or not (the
# same bits either way); the block variant keeps rows of other lengths
# (schedule.c, insert_roomy()).  Not rmsnorm (one level), nor f32.
"$TECC" -O2 --emit=plan "$top_srcdir/bench/train/layernorm.te" -o "$work/ln.plan" || echo "Bail out! tecc failed on layernorm.te"
"$TECC" -O2 --emit=plan "$top_srcdir/bench/train/rmsnorm.te" -o "$work/rms.plan" || echo "Bail out! tecc failed on rmsnorm.te"
"$TECC" -O2 --emit=plan "$top_srcdir/bench/train/add_rmsnorm.te" -o "$work/arms.plan" || echo "Bail out! tecc failed on add_rmsnorm.te"
is "$(plan_text layernorm_bf16_bwd "$work/ln.plan" | grep -c 'variant roomy (when R <= 4096, R % 8 == 0 and 32-bit indices do): registers, VEC 8, ITEMS 2, block T x max(1, 256/T), T = pow2 in \[32, 256\] >= R/16, grid <= SMs\*512/(block threads), .*, 128 registers a thread, the next rows loaded while these compute')" 1 "layernorm bf16 backward: a roomy variant, 2 items in 256-thread blocks"
is "$(plan_text layernorm_bf16_bwd "$work/ln.plan" | grep -A1 'variant roomy' | grep -c 'variant block (when R <= 4096 and 32-bit indices do): registers, VEC 8, ITEMS 1,')" 1 "layernorm bf16 backward: the block variant after it, for the other rows"
is "$(plan_text layernorm_f32_bwd "$work/ln.plan" | grep -c 'variant roomy')" 0 "layernorm f32 backward: no roomy variant"
is "$(grep -c 'variant roomy' "$work/rms.plan")" 0 "rmsnorm backward (one level): no roomy variant"
ok "layernorm bf16 backward: ROOMY instances bound to 256 threads, two an SM" grep -q '__launch_bounds__(LANES < 0 ? 512 : ROOMY ? 256 : 512, 2) tecc_layernorm_bf16_bwd_g0_reg(' "$work/ln.cu"
is "$(grep -c 'tecc_layernorm_bf16_bwd_g0_reg<int32_t, 2, 8, 1, [a-z]*, false, 0, true>' "$work/ln.cu")" 2 "layernorm bf16 backward: two ROOMY instances, aligned and not"
ok "layernorm bf16 backward: the roomy launch where the row is whole packs" grep -q '} else if (sizeof(IndexT) == 4 && t_len <= 4096 && t_len % 8 == 0) {' "$work/ln.cu"
ok "layernorm bf16 backward: its partial rows counted by the same condition" grep -q '^  if (t_small && t_len <= 4096 && t_len % 8 == 0) {' "$work/ln.cu"
is "$(kernel_text tecc_layernorm_bf16_bwd_g0_reg "$work/ln.cu" | grep -c 'if (ROOMY || CLUSTER && t_packs) {')" 2 "layernorm bf16 backward: ROOMY (and the cluster) load the next row group ahead (before the loop and in it)"
# The cluster variant of such rows loads its next row ahead where its
# held values twice over and its partials fit 40 registers, two values
# held or fewer (schedule.c, cluster_ahead()): rmsnorm f32, not bf16 (48),
# nor add_rmsnorm (four values).
"$TECC" -O2 "$top_srcdir/bench/train/rmsnorm.te" -o "$work/rms.cu" -H "$work/rms.h" || echo "Bail out! tecc failed on rmsnorm.te"
"$TECC" -O2 "$top_srcdir/bench/train/add_rmsnorm.te" -o "$work/arms.cu" -H "$work/arms.h" || echo "Bail out! tecc failed on add_rmsnorm.te"
is "$(kernel_text tecc_rmsnorm_f32_bwd_g0_reg "$work/rms.cu" | grep -c 'if (SOLO && ITEMS == 4 && t_packs || CLUSTER && t_packs) {')" 2 "rmsnorm f32 backward: the cluster (and solo) load the next row ahead"
is "$(kernel_text tecc_rmsnorm_bf16_bwd_g0_reg "$work/rms.cu" | grep -c 'CLUSTER && t_packs')" 0 "rmsnorm bf16 backward: the cluster loads nothing ahead (48 registers of 40)"
is "$(grep -c 't_n[0-9]' "$work/arms.cu")" 0 "add_rmsnorm backward: no loads ahead (four values held)"
is "$(grep -c 'variant cluster .*, the next row loaded while this one computes' "$work/rms.plan")" 1 "the plan says which cluster variant loads ahead (rmsnorm f32's)"
# Rows with column partials longer than the register variants before
# them take solo variants: a block of the warps the row needs, up to 512
# threads, one an SM (128 registers), each block looping over rows; rows
# of one level that hold two values or fewer first at the items 80
# registers hold with the next row loaded ahead (solo), then at the
# items 96 hold so (solo-ahead; not where the passes compute positions),
# then at those 72 hold without (solo-long) (schedule.c, insert_solo());
# not the roomy variant's rows (layernorm bf16's backward).
is "$(plan_text rmsnorm_bf16_bwd "$work/rms.plan" | grep -c 'variant solo (when R <= 12288 and 32-bit indices do): registers, VEC 8, ITEMS 3, block T, T = 32\*ceil(R/768) (the warps the row needs), bound to one block of up to 512 threads an SM, grid <= SMs\*512/(block threads), .*, 128 registers a thread, each block looping over rows, the next row loaded while this one computes')" 1 "rmsnorm bf16 backward: a solo variant of 3 items, one block of up to 512 an SM, the next row ahead"
is "$(plan_text rmsnorm_bf16_bwd "$work/rms.plan" | grep -c 'variant solo-ahead (when R <= 16384 and 32-bit indices do): registers, VEC 8, ITEMS 4, .*each block looping over rows, the next row loaded while this one computes, 32-bit indices')" 1 "rmsnorm bf16 backward: then a solo-ahead variant of 4 items, the next row ahead"
is "$(plan_text rmsnorm_bf16_bwd "$work/rms.plan" | grep -c 'variant solo-long')" 0 "rmsnorm bf16 backward: no solo-long (it would hold no longer rows)"
"$TECC" -O2 --emit=plan "$top_srcdir/tests/grad/programs/grad_positions.te" -o "$work/pos.plan" || echo "Bail out! tecc --emit=plan grad_positions.te failed"
is "$(plan_text ramp_bwd "$work/pos.plan" | grep -c 'variant solo\(-ahead\)\? (.*the next row loaded')" 1 "a row computing positions (ramp's backward): solo ahead at 80 registers, no solo-ahead (at 96 it spilled 72 bytes)"
is "$(plan_text rmsnorm_bf16_bwd "$work/rms.plan" | grep -A1 'variant block' | grep -c 'variant solo (')" 1 "rmsnorm bf16 backward: the solo variant after the block variant"
is "$(plan_text rmsnorm_bf16_bwd "$work/rms.plan" | grep -A1 'variant solo-ahead' | grep -c 'variant cluster')" 1 "rmsnorm bf16 backward: ... and solo-ahead before the cluster"
is "$(plan_text rmsnorm_f32_bwd "$work/rms.plan" | grep -c 'variant solo\(-long\)\? (when R <= \(8192\|12288\) and 32-bit indices do): registers, VEC 4, ITEMS [46],')" 2 "rmsnorm f32 backward: solo of 4 items, solo-long of 6"
is "$(plan_text layernorm_bf16_bwd "$work/ln.plan" | grep -c 'variant solo')" 0 "layernorm bf16 backward (the roomy variant's rows): no solo variant"
is "$(plan_text layernorm_f32_bwd "$work/ln.plan" | grep -c 'variant solo (when R <= 8192 and .*each block looping over rows, 32-bit')" 1 "layernorm f32 backward (two levels): one solo variant, nothing ahead"
ok "layernorm f32 backward: its partials kept up to the solo variant's rows" grep -q 'for rows of group 0 up to 8192 long (longer: the plan below)' "$work/ln.plan"
is "$(grep -c 'variant solo ' "$work/arms.plan")" 2 "add_rmsnorm backward (four values held): one solo variant a dtype, nothing ahead"
ok "rmsnorm bf16 backward: SOLO instances bound to one block of 512 an SM" grep -q '__launch_bounds__(512, LANES < 0 ? 1 : (SOLO ? 1 : 2)) tecc_rmsnorm_bf16_bwd_g0_reg(' "$work/rms.cu"
is "$(grep -c 'tecc_rmsnorm_bf16_bwd_g0_reg<int32_t, [34], 8, 1, [a-z]*, false, 0, true>' "$work/rms.cu")" 4 "rmsnorm bf16 backward: four SOLO instances, aligned and not"
ok "rmsnorm bf16 backward: the solo launch takes the warps the row needs, a row a block" sh -c "grep -A3 '/\* solo: registers, VEC 8, ITEMS 3 \*/' '$work/rms.cu' | grep -q 'const int t_ty = 1; /\* a row a block \*/'"
ok "rmsnorm bf16 backward: its partial rows counted by the same conditions" sh -c "grep -q '^  if (t_small && t_len <= 12288) {' '$work/rms.cu' && grep -q '^  if (t_small && t_len <= 16384) {' '$work/rms.cu'"
is "$(kernel_text tecc_rmsnorm_bf16_bwd_g0_reg "$work/rms.cu" | grep -c 'if (SOLO && ITEMS == 3 && t_packs || SOLO && ITEMS == 4 && t_packs) {')" 2 "rmsnorm bf16 backward: SOLO loads the next row ahead (before the loop and in it), in the solo and solo-ahead variants' instances of whole packs only"
is "$("$TECC" -O2 --emit=json "$top_srcdir/bench/train/rmsnorm.te" | grep -o '"solo": true' | wc -l)" 4 "--emit=json: the solo variants say so"
# The accumulators of a level that share a type and operation are
# all-reduced across a cluster together, four floats a barrier
# (tecc::cluster_allreduce_n): the same bits, one cluster barrier.
is "$(kernel_text tecc_rmsnorm_bf16_bwd_g0_reg "$work/rms.cu" | grep -c 'tecc::cluster_allreduce(')" 0 "rmsnorm bf16 backward: no cluster all-reduce of one value"
is "$(kernel_text tecc_rmsnorm_bf16_bwd_g0_reg "$work/rms.cu" | grep -c 'float t_cl\[2\] = {t_acc[0-9]*\[t_i\], t_acc[0-9]*\[t_i\]};')" 1 "rmsnorm bf16 backward: its two sums across the cluster together"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 'float t_cl\[3\] = ')" 1 "rowstats f32: its three sums across the cluster together"
# Rows that hold two values and write one along the row, with no operand
# beside them (softmax's and log_softmax's gradients: y and dy), take 2
# items in the warp and block variants (schedule.c, stitch_row()): at 4
# their bf16 WHOLE instances spilled 44 to 64 bytes (issue 46).
"$TECC" -O2 --emit=plan "$top_srcdir/bench/train/softmax.te" -o "$work/sm.plan" || echo "Bail out! tecc failed on softmax.te"
is "$(plan_text softmax_bf16_bwd "$work/sm.plan" | grep -c 'variant \(warp\|block\) (.*ITEMS 2,')" 2 "softmax bf16 backward: the warp and block variants at 2 items"
is "$(plan_text softmax_bf16 "$work/sm.plan" | grep -c 'variant \(warp\|block\) (.*ITEMS 4,')" 2 "softmax bf16 forward (one value held): at 4"
# The fold is the same in every kernel, loops too (cu_fused_product()): a
# value that a stitch kernel and the full reduction of a gradient both
# compute rounds alike (tests/regress/grad_recompute_fma.te, issue 46).
"$TECC" -O2 "$top_srcdir/tests/regress/grad_recompute_fma.te" -o "$work/r.cu" -H "$work/r.h" || echo "Bail out! tecc failed on grad_recompute_fma.te"
is "$(grep -o 'const double v8 = .*' "$work/r.cu" | grep -vc 'tecc::fma(1.25, ')" 0 "v8 = f32(x0) + 1.25 * atan(v7): one fma in every kernel"
ok "the gradient's full reduction computes v8 too" sh -c "sed -n '/__global__ .* tecc_k_grad_g3_full(/,/^}/p' '$work/r.cu' | grep -q 'const double v8 = tecc::fma(1.25, v30, v3);'"
# 16-bit column stitches of software math (bias_gelu's backward) take
# the split first, at 2 packs a thread in blocks of 512 bound to three
# an SM (two with 64-bit indices), chunks for six blocks an SM of 256
# rows or more (schedule.c, heavy_column_split()); f32 keeps the plain
# split.  The gradients recompute gelu_tanh and silu as the operations
# their rules build, so the tanh and the sigmoid are computed once an
# element (grad_recompute_composite()).
"$TECC" -O2 "$top_srcdir/tests/grad/programs/grad_activations.te" -o "$work/a.cu" -H "$work/a.h" || echo "Bail out! tecc failed on grad_activations.te"
"$TECC" -O2 "$top_srcdir/bench/train/bias_gelu.te" -o "$work/bg.cu" -H "$work/bg.h" || echo "Bail out! tecc failed on bias_gelu.te"
ok "bias_gelu bf16 backward: split instances bound to 512 threads, three blocks an SM" grep -q '__launch_bounds__(PHASE ? 512 : 1024, PHASE ? (sizeof(IndexT) == 4 ? 3 : 2) : 0) tecc_bias_gelu_bwd_g0_stream(' "$work/a.cu"
is "$(kernel_text tecc_bias_gelu_bwd_g0_stream "$work/a.cu" | grep -c 'constexpr int ITEMS = PHASE ? 2 : 4;')" 1 "bias_gelu bf16 backward: 2 packs a thread in the split"
is "$(grep -c 'return tecc::column_chunks(t_rows, t_len, 4, tecc::pow2_at_least(tecc::ceil_div(t_rows, 4), 8, 32), 6, 256);' "$work/a.cu")" 2 "bias_gelu and bias_gelu_tanh backward: chunks for six blocks an SM of 256 rows"
split_line=$(sed -n '/^tecc_status tecc_bias_gelu_bwd_launch/,/^}/p' "$work/a.cu" | grep -n 't_chunks > 1' | head -1 | cut -d: -f1)
packed_line=$(sed -n '/^tecc_status tecc_bias_gelu_bwd_launch/,/^}/p' "$work/a.cu" | grep -n 'column_groups_fill' | head -1 | cut -d: -f1)
ok "bias_gelu bf16 backward: the split is tried before the stream of packs" test "${split_line:-0}" -gt 0 -a "${split_line:-0}" -lt "${packed_line:-0}"
ok "bias_gelu f32 backward: the plain split (f32 lost with the heavy one)" grep -q '__global__ void __launch_bounds__(1024) tecc_bias_gelu_f32_bwd_g0_stream(' "$work/bg.cu"
is "$(grep -c 'column_chunks(t_rows, t_len, 4, tecc::pow2_at_least(tecc::ceil_div(t_rows, 4), 8, 32));' "$work/bg.cu")" 1 "bias_gelu f32 backward: two blocks an SM of 512 rows"
is "$(kernel_text tecc_geglu_bwd_g0_loop "$work/a.cu" | grep -c 'tecc::tanh(\|tecc::gelu_tanh(')" 2 "geglu backward: one tanh an element, no gelu_tanh (the packed loop and the tail)"
is "$(kernel_text tecc_swiglu_bwd_g0_loop "$work/a.cu" | grep -c 'tecc::silu(')" 0 "swiglu backward: silu(a) as a * sigmoid(a), the rule's sigmoid"
ok "f64 mean: by the double reciprocal" sh -c "sed -n '/__global__ .* tecc_center_f64_g0_stream(/,/^}/p' '$work/s.cu' | grep -q 'tecc::mul(t_acc[0-9]*, t_rcount64)'"
# Blocks of 1024 threads, their SM's only one, load the next row ahead
# into shared memory in their AHEAD instance (schedule.c, ahead_bytes();
# emit_stitch.c, load_ahead()): a 16-bit or f32 row held one pack an item
# (the long variant of rows, the reg variant of columns), launched a
# block an SM where the packs are aligned and the device has the room;
# not two values held (add_rmsnorm: 256 KB a block).
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c 'if (t_r0 < t_red) tecc::ahead_copy(t_ahead, t_k \* t_ath + t_aid, x + t_o \* t_red + t_r0);')" 2 "softmax bf16 registers: AHEAD copies the block's first row and each next one"
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c 'tecc::ahead_take(t_ahead, t_k \* t_ath + t_aid, t_c0, t_k \* 4);')" 1 "softmax bf16 registers: ... and takes each row from shared memory"
ok "softmax bf16 registers: a row's packs taken before the next row's copies" test "$(line_of tecc_softmax_bf16_g0_reg 'tecc::ahead_take(')" -lt "$(line_of tecc_softmax_bf16_g0_reg 'const IndexT t_an = ')"
ok "softmax bf16 registers: the copies ahead before the row's first pass" test "$(line_of tecc_softmax_bf16_g0_reg 'const IndexT t_an = ')" -lt "$(line_of tecc_softmax_bf16_g0_reg '/\* level 1 \*/')"
is "$(grep -c 'if (t_tx \* t_ty == 1024 && (int64_t)128 \* 1024 <= tecc::shared_room(t_ah, (const void \*)tecc_softmax_bf16_g0_reg<int32_t, 8, 8, 1, true, false, false, false, 0, true>))' "$work/s.cu")" 1 "softmax bf16 launch: AHEAD where a block has 1024 threads and the room"
is "$(grep -c 'tecc_softmax_bf16_g0_reg<int32_t, 8, 8, 1, true, false, false, false, 0, true><<<tecc::grid_size(t_rows, t_ty, 1), dim3(t_tx, t_ty), (size_t)128 \* 1024, stream>>>' "$work/s.cu")" 1 "softmax bf16 launch: AHEAD a block an SM, 128 KB of shared memory"
is "$(grep -c 'tecc_softmax_f32_g0_reg<int32_t, 8, 4, 1, true, false, false, 0, true><<<tecc::grid_size(t_rows, t_ty, 1), dim3(t_tx, t_ty), (size_t)128 \* 1024' "$work/s.cu")" 1 "softmax f32 launch: AHEAD too (VEC 4, 8 items)"
is "$(grep -c 'if (t_packs && t_tx \* t_ty == 1024 && (int64_t)128 \* 1024 <= tecc::shared_room(t_ah, (const void \*)tecc_softmax_col_bf16_g0_reg<int32_t, 8, 8, true>))' "$work/s.cu")" 1 "softmax over columns bf16 launch: AHEAD where the columns are packs"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'const bool t_packs = AHEAD || t_packed;')" 1 "softmax over columns bf16: packs in the AHEAD instance, no column tests"
is "$(kernel_text tecc_addrms_bf16_g0_reg | grep -c 'ahead')" 0 "add_rmsnorm bf16 registers (two values held): no AHEAD instance"
# A plain row reduction (schedule.c, reduction()): rows of 256 packs and
# more that need no split take 8 packs a thread in flight where 32-bit
# indices do (its ITEMS a template parameter, the launch's t_l.items),
# others 4; a row reduction with no packed tensor (its reduced axes not
# adjacent) has only element steps and names no ITEMS in its body.
"$TECC" -O2 "$top_srcdir/tests/bench/rowsum_f32.te" -o "$work/rowsum.cu" || echo "not ok - tecc failed on tests/bench/rowsum_f32.te"
is "$(sed -n '/inline tecc::Launch tecc_rowsum_f32_g0_row_shape(/,/^}/p' "$work/rowsum.cu" | grep -A4 'if (t_len >= 1024 && t_l.splits == 1) {' | grep -c 't_l.items = 8;\|ceil_div(t_len, 32), 4, 256)\|t_l.grid = tecc::grid_size(t_rows, t_l.ty, 2048')" 3 "rowsum f32: rows of 1024 elements and more, no split: 8 packs a thread, its block and grid"
is "$(sed -n '/inline tecc::Launch tecc_rowsum_f32_g0_row_shape(/,/^}/p' "$work/rowsum.cu" | grep -c 't_l.tx = (unsigned)tecc::pow2_at_least(tecc::ceil_div(t_len, 16), 4, 256);')" 1 "rowsum f32: a short row's lanes from 4 up (rows of 256 f32 share a warp, four packs a lane in flight)"
is "$(grep -A1 'if (t_l.items == 8)' "$work/rowsum.cu" | grep -c 'tecc_rowsum_f32_g0_row<IndexT, sizeof(IndexT) == 4 ? 8 : 4, true><<<')" 1 "rowsum f32: ... launched where the row is whole aligned packs, 4 with 64-bit indices"
is "$(grep -c 'tecc_rowsum_f32_g0_row<IndexT, 4, false><<<' "$work/rowsum.cu")" 1 "rowsum f32: other rows by elements, the same packs' order"
is "$(kernel_text tecc_rowsum_f32_g0_row "$work/rowsum.cu" | grep -c 'constexpr int VEC = 4;')" 1 "rowsum f32: VEC in the body, ITEMS a template parameter"
"$TECC" -O2 "$top_srcdir/tests/programs/red_literal_mix.te" -o "$work/mix.cu" || echo "not ok - tecc failed on tests/programs/red_literal_mix.te"
is "$(kernel_text tecc_red_literal_mix_g1_row "$work/mix.cu" | grep -c 'if (PACKED)\|ITEMS = \|ITEMS \*\|\[ITEMS\]')" 0 "max(x, 0, 2) of literal and symbolic axes (no packs): element steps, ITEMS unused (nvcc -Werror: a constant declared and never referenced)"
is "$(grep -c 't_l.items == 8' "$work/mix.cu")" 0 "max(x, 0, 2): no long-row instance"
done_testing
