#!/bin/sh
# schedule.sh — the schedule rules that bench/NOTES.md measured (issue 11),
# read back from --emit=plan and the .cu: a column reduction's block spans
# 64 columns (8 lanes of bf16 packs, 16 of f32, 32 of f64); an elementwise
# loop with a software math function for every 4 bytes or fewer gives each
# thread two packs, others one; 16-bit rows, held in pairs, have twice
# f32's register budget, and f32 rows past 2048 take the whole budget; the
# second stage of full and split column reductions is a dependent launch
# that waits for the first; a variance shares its mean's pass in the
# stream kernel (one read of the row: blocks of 512 when the rows fill
# two an SM, rows held in registers to 512 threads), where a layernorm,
# which reads its rows again for y, keeps 1024; a fused float sum of a
# product accumulates with one fma (a max of one, an integer sum and a
# sum of a non-product do not); the register kernel's cluster arithmetic
# is in its CLUSTER instance only, and its clusters loop over rows for
# one level that the stream kernel would read twice (else one each, as
# many as the device holds at once); rows that write nothing along them
# take, before the long variant, blocks of the warps they need bound to 3
# an SM (narrow), rows that write along them do not; a register kernel
# that writes only row values streams its loads past L2, one that writes
# along the row does not,
# and a stream kernel streams its last read of a row and its outputs;
# softmax's sum of exp shares its max's pass in the stream kernel (online,
# rescaled as the max grows): softmax reads a row twice, logsumexp and
# cross-entropy once, a column softmax's stream twice; a norm's w and an
# attention mask broadcast over rows are loaded a pack per item; a norm of
# one held input loads its next rows ahead in the warp variant, whose
# instances take the lanes of a row as a template parameter (LANES); whole
# row groups of whole rows run the warp and block variants' instance
# without row or item guards (WHOLE); a cluster all-reduce waits at one
# barrier, its two slots taken in turn, and the cluster kernel waits for
# its cluster before it ends; a stream kernel reads a row backward in its
# second pass (the chunks still in L2 first), and one of 4-byte elements
# that reads a row twice takes twice the packs a chunk with 32-bit indices,
# and keeps the row's first packs in shared memory for its later passes;
# an output along the row that reads no reduction is stored in the
# register kernel's first pass; rows of whole chunks run a stream
# instance without item guards, but 16-bit rows read again; a max or min of 16-bit values held in
# pairs folds them a pair at a time where a thread holds 8 packs an item
# (the stream kernel, ITEMS 8 of the register kernel), not of f32; a
# variance's stream pass counts a pack at a time and its mean adds the
# chunk sums; a fused row's f32 or f64 a*b + c, a*b - c or c - a*b whose
# product has no other use is one fma, and its means multiply by the
# reciprocal of the row's length, which the launching host code passes.
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-schedule.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

cat > "$work/s.te" <<'TE'
kernel colsum_bf16(x: bf16[M, N]) -> (y: bf16[N]) { y = sum(x, 0) }
kernel colsum_f32(x: f32[M, N]) -> (y: f32[N]) { y = sum(x, 0) }
kernel colsum_f64(x: f64[M, N]) -> (y: f64[N]) { y = sum(x, 0) }
kernel gelu_bf16(x: bf16[M, N], b: bf16[N]) -> (y: bf16[M, N]) { y = gelu(x + b) }
kernel gelu_f32(x: f32[M, N], b: f32[N]) -> (y: f32[M, N]) { y = gelu(x + b) }
kernel sin5_bf16(b: bf16[M, N], c: bf16[M, N], d: bf16[M, N], e: bf16[M, N], f: bf16[M, N]) -> (y: bf16[M, N]) {
  y = b + c * d + sin(e) * f + 10
}
kernel swiglu_bf16(a: bf16[M, N], b: bf16[M, N]) -> (y: bf16[M, N]) { y = silu(a) * b }
kernel softmax_bf16(x: bf16[M, N]) -> (y: bf16[M, N]) { y = softmax(x, -1) }
kernel softmax_f32(x: f32[M, N]) -> (y: f32[M, N]) { y = softmax(x, -1) }
kernel fullsum_bf16(x: bf16[M, N]) -> (y: bf16) { y = sum(x) }
kernel rowstats_f32(x: f32[M, N]) -> (m: f32[M], v: f32[M]) { m = mean(x, -1); v = var(x, -1) }
kernel layernorm_f32(x: f32[M, N]) -> (y: f32[M, N]) { y = (x - mean(x, -1)) * rsqrt(var(x, -1) + 1e-5) }
kernel var_f32(x: f32[M, N]) -> (v: f32[M]) { v = var(x, -1) }
kernel logsumexp_f32(x: f32[M, N]) -> (y: f32[M]) { y = logsumexp(x, -1) }
kernel xent_f32(l: f32[M, N], t: f32[M, N]) -> (y: f32[M]) { y = logsumexp(l, -1) - sum(l * t, -1) }
kernel softmax_col_f32(x: f32[M, N]) -> (y: f32[M, N]) { y = softmax(x, 0) }
kernel softmax_col_bf16(x: bf16[M, N]) -> (y: bf16[M, N]) { y = softmax(x, 0) }
kernel colshift_f32(x: f32[M, N], b: f32[N]) -> (y: f32[M, N], m: f32[N]) { m = max(x, 0); y = x - m + b }
kernel layernorm_col_f32(x: f32[M, N]) -> (y: f32[M, N]) { y = (x - mean(x, 0)) * rsqrt(var(x, 0) + 1e-5) }
kernel masked_bf16(s: bf16[B, S, D], m: bf16[S, D]) -> (y: bf16[B, S, D]) { y = softmax(s * 0.125 + m, -1) }
kernel mask_and_row_f32(s: f32[B, S, D], m: f32[S, D], r: f32[B, 1, D]) -> (y: f32[B, S, D]) { y = softmax(s + m + r, -1) }
kernel batch_row_f32(s: f32[B, S, D], r: f32[B, 1, D]) -> (y: f32[B, S, D]) { y = softmax(s + r, -1) }
kernel rmsw_bf16(x: bf16[M, N], w: bf16[N]) -> (y: bf16[M, N]) { y = x * rsqrt(mean(x * x, -1) + 1e-6) * w }
kernel card_bf16(x: bf16[M, N]) -> (y: bf16[M]) { y = sum(x * x, -1) }
kernel addrms_bf16(x: bf16[M, N], r: bf16[M, N], w: bf16[N]) -> (y: bf16[M, N]) {
  y = (x + r) * rsqrt(mean((x + r) * (x + r), -1) + 1e-6) * w
}
kernel addh_f32(x: f32[M, N], r: f32[M, N], w: f32[N]) -> (h: f32[M, N], y: f32[M, N]) {
  h = x + r; y = h * rsqrt(mean(h * h, -1) + 1e-6) * w
}
kernel rowmin_f16(x: f16[M, N]) -> (y: f16[M]) { y = min(x, -1) }
kernel nofma(x: f32[M, N], i: i32[M, N]) -> (a: f32[M], b: f32[M], c: i32[M], y: f32[M, N]) {
  a = max(x * x, -1); b = sum(x + 1.0, -1); c = sum(i * i, -1); y = x - a - b
}
kernel lnwb_f32(x: f32[M, N], w: f32[N], b: f32[N]) -> (y: f32[M, N]) {
  y = (x - mean(x, -1)) * rsqrt(var(x, -1) + 1e-5) * w + b
}
kernel fmas_f32(x: f32[M, N], w: f32[N]) -> (y: f32[M, N], z: f32[M, N], u: f32[M, N]) {
  p = x * w; y = p + 1.0; z = sum(x, -1) - x * 3.0; u = x * x - p
}
kernel center_f64(x: f64[M, N]) -> (y: f64[M, N]) { y = x - mean(x, -1) }
TE
"$TECC" -O2 --emit=plan "$work/s.te" -o "$work/s.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
"$TECC" -O2 "$work/s.te" -o "$work/s.cu" || { echo "Bail out! tecc failed"; exit 1; }

# The plan lines of kernel $1 (up to the next kernel).
of() { sed -n "/^kernel $1:/,/^kernel /p" "$work/s.plan"; }
# The text of generated kernel $1 (up to its closing brace).
kernel_text() { sed -n "/__global__ .* $1(/,/^}/p" "$work/s.cu"; }
# The row loads (16-byte packs) of kernel $1.
row_loads() { kernel_text "$1" | grep -c 'const tecc::Pack<float, VEC> t_p0 = '; }
has() { of "$1" | grep -q -- "$2"; }

plan 190
ok "colsum bf16: block 8 x 32" has colsum_bf16 'variant columns (always): registers, VEC 8, ITEMS 4, block 8 x 32,'
ok "colsum f32: block 16 x 16" has colsum_f32 'VEC 4, ITEMS 4, block 16 x 16,'
ok "colsum f64: block 32 x 8" has colsum_f64 'VEC 2, ITEMS 4, block 32 x 8,'
ok "gelu(x + b) bf16: 2 packs per thread" has gelu_bf16 'grid = ceil(n/(256\*VEC\*2)), 2 packs per thread'
ok "gelu(x + b) f32 (an erf per 8 bytes): a pack per thread" has gelu_f32 'a pack per thread'
ok "a sin per 12 bytes: a pack per thread" has sin5_bf16 'a pack per thread'
ok "silu (no software math function): a pack per thread" has swiglu_bf16 'a pack per thread'
ok "gelu bf16's packed launch covers 2 packs a thread" grep -q 'tecc_gelu_bf16_g0_loop<IndexT, 8><<<tecc::cover_grid(t_n, 256 \* 8 \* 2)' "$work/s.cu"
ok "softmax bf16: 64 elements per thread and value" has softmax_bf16 '1 value(s) held per element, 64 element(s) per thread'
ok "softmax bf16: a block to 4096" has softmax_bf16 'variant block (when R <= 4096 '
ok "softmax bf16: the whole budget to 65536" has softmax_bf16 'variant long (when R <= 65536 .* ITEMS 8,'
ok "softmax f32: a block to 2048" has softmax_f32 'variant block (when R <= 2048 '
ok "softmax f32: the whole budget to 32768" has softmax_f32 'variant long (when R <= 32768 .* ITEMS 8,'
ok "full reduction: the second stage is a dependent launch" grep -q 'tecc::launch_next(tecc_fullsum_bf16_g0_full_final<IndexT>, dim3(1), dim3(512)' "$work/s.cu"
ok "column reduction: the second stage is a dependent launch" grep -q 'tecc::launch_next(tecc_colsum_bf16_g0_column_final<IndexT>' "$work/s.cu"
n_wait=$(grep -c 'tecc::wait_for_prior_grid(); /\*' "$work/s.cu")
is "$n_wait" 4 "each second stage waits for its first (fullsum, 3 colsums)"
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
ok "rowstats f32 stream: 512 threads a row when the rows fill two blocks an SM" has rowstats_f32 'variant stream .*T = pow2 in \[32, 512 when rows >= 2\*SMs'
ok "rowstats f32: rows in registers to 512 threads" has rowstats_f32 'variant long (when R <= 16384 '
is "$(row_loads tecc_layernorm_f32_g0_stream)" 2 "layernorm f32 stream: two reads (the moments, then y)"
ok "layernorm f32 stream: 1024 threads a row" has layernorm_f32 'variant stream .*T = pow2 in \[32, 1024\]'
# Kept packs (emit_stitch.c, stream_semit(); tecc::keep_items): a stream
# kernel that reads a row again keeps its first packs of each value read
# again in shared memory, stored once the chunk's loads are under way,
# and its later passes take them back; one that reads a row once keeps
# nothing.  The host keeps them where a wave's rows fill more than half of L2.
ok "layernorm f32: the plan says its stream keeps packs in shared memory" has layernorm_f32 'variant stream .*kept in shared memory'
is "$(of rowstats_f32 | grep -c 'kept in shared memory')" 0 "rowstats f32 (one read): the plan keeps nothing"
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -c 'tecc::keep_put<VEC>(t_kept + (t_g \* t_kw + VEC \* 0 / 16) \* t_kth + t_kid, t_kth, t_c0 + t_k \* VEC);')" 1 "layernorm f32 stream: x kept by its first pass"
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -c 'tecc::keep_get<VEC>(t_kept + (t_g \* t_kw + VEC \* 0 / 16) \* t_kth + t_kid, t_kth, t_c0 + t_k \* VEC);')" 1 "layernorm f32 stream: taken back by its second"
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -B3 'const IndexT t_g = t_g0 + t_k;$' | grep -c '^ *}$')" 1 "layernorm f32 stream: kept in a loop after the chunk's loads"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'keep')" 0 "rowstats f32 stream (one read): no keep"
is "$(kernel_text tecc_xent_f32_g0_stream | grep -c 'keep')" 0 "cross-entropy f32 stream (one read): no keep"
is "$(kernel_text tecc_addrms_bf16_g0_stream | grep -c 'tecc::keep_put<VEC / 2>(')" 2 "add_rmsnorm bf16 stream: x and r kept, two to a word"
ok "add_rmsnorm bf16 stream: an item of both, 2 bytes an element each" sh -c "grep -q 'constexpr int t_kw = VEC \* 4 / 16; /\* their 16-byte words an item \*/' '$work/s.cu'"
ok "layernorm f32: the launch asks keep_items (rows, length, 4 bytes an element), then runs the KEEP instance with the shared memory" sh -c "grep -A2 'const int t_keep = tecc::keep_items(t_kc, (const void \*)tecc_layernorm_f32_g0_stream<IndexT, 4, true, false, true>, t_rows, t_len, t_tx, t_ty, 4, 4);' '$work/s.cu' | grep -q 'tecc_layernorm_f32_g0_stream<IndexT, 4, true, false, true><<<t_grid, dim3(t_tx, t_ty), (size_t)t_keep \* 16 \* t_tx \* t_ty, stream>>>(x, y, (IndexT)M, (IndexT)N, 1.0f / (float)t_len, t_keep);'"
ok "layernorm f32: or, keeping nothing, the instance without it" sh -c "grep -A4 'const int t_keep = tecc::keep_items(t_kc, (const void \*)tecc_layernorm_f32_g0_stream<IndexT, 4, true, false, true>' '$work/s.cu' | grep -q 'tecc_layernorm_f32_g0_stream<IndexT, 4, true, false, false><<<t_grid, dim3(t_tx, t_ty), 0, stream>>>(x, y, (IndexT)M, (IndexT)N, 1.0f / (float)t_len, 0);'"
# Rows of whole chunks take the stream kernel's WHOLE instance, without
# item guards (schedule.c, v->whole of the stream variant), but for
# 16-bit rows read again (softmax bf16).
ok "layernorm f32 stream: rows of whole chunks (of 8 packs of 4) run the WHOLE instance, kept items too" sh -c "grep -A3 'const bool t_whole = t_packs && t_len % ((int64_t)t_tx \* 32) == 0; /\* rows of whole chunks \*/' '$work/s.cu' | grep -q 'tecc::keep_items(t_kc, (const void \*)tecc_layernorm_f32_g0_stream<IndexT, 4, true, true, true>'"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'if (t_whole || t_r0 < t_red)')" 2 "rowstats f32 stream: its WHOLE instance drops the item guards of both loops"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 't_whole')" 0 "softmax bf16 stream (16-bit, read again): no WHOLE instance"
ok "the plan says which rows take it" has rowstats_f32 'rows of whole chunks without item guards when R % (T\*16) == 0 and the rows move in aligned packs'
is "$(kernel_text tecc_layernorm_f32_g0_stream | grep -c 'if (KEEP && t_g < t_keep)')" 2 "layernorm f32 stream: kept only by the KEEP instance"
is "$(kernel_text tecc_var_f32_g0_stream | grep -c 'tecc::Sum()(t_acc')" 0 "var f32 stream: no sum for a mean that only centres the moments"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'tecc::Sum()(t_acc')" 1 "rowstats f32 stream: the mean, an output, keeps its sum"
ok "layernorm f32: the whole budget to 32768" has layernorm_f32 'variant long (when R <= 32768 '
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 't_acc[0-9]*\[t_i\] = tecc::fma(v[0-9]*, v[0-9]*, t_acc[0-9]*\[t_i\]);')" 1 "rowstats f32 registers: the squares accumulate with one fma"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 't_cq[0-9]* = tecc::fma(t_dv[0-9]*, t_dv[0-9]*, t_cq[0-9]*);')" 1 "rowstats f32 stream: the chunk's squared deviations with one fma"
is "$(kernel_text tecc_nofma_g0_reg | grep -c 'tecc::fma(')" 0 "no fma for a max, an integer sum or a sum of a sum"
is "$(grep -c 'tecc_rowstats_f32_g0_reg<int32_t, [0-9], 4, 1, true, false, false, [0-9]*, [a-z]*>\(<<<\|, t_rows, t_tx\)' "$work/s.cu")" 7 "rowstats f32: seven launches of instances without cluster arithmetic (the warp variant's four LANES, block, narrow, long)"
ok "rowstats f32: the cluster launch takes the CLUSTER instance" grep -q 'tecc::launch_cluster(tecc_rowstats_f32_g0_reg<int32_t, 8, 4, 1, true, false, true, 0, false>,' "$work/s.cu"
ok "rowstats f32 (writes nothing along the row): narrow rows to 12288" has rowstats_f32 'variant narrow (when R <= 12288,.* ITEMS 8, .*T = 32\*ceil(R/1024) (the warps the row needs), bound to 3 blocks of up to 384 threads an SM'
ok "rowstats f32: the narrow block is the warps the row needs" grep -q 'const int t_tx = (int)tecc::ceil_div(t_len, 1024) \* 32; /\* the warps the row needs \*/' "$work/s.cu"
is "$(grep -c 'tecc_rowstats_f32_g0_reg<int32_t, 8, 4, 1, [a-z]*, false, false, 0, true><<<' "$work/s.cu")" 2 "rowstats f32: the narrow launches take the NARROW instance, with packs and without"
ok "rowstats f32: the NARROW instance bound to 3 blocks of 384 an SM, the others to no minimum" grep -q '__global__ void __launch_bounds__(NARROW ? 384 : 1024, NARROW ? 3 : 0) tecc_rowstats_f32_g0_reg(' "$work/s.cu"
ok "card bf16: narrow rows to 24576" has card_bf16 'variant narrow (when R <= 24576, 32\*ceil(R/2048) < pow2 >= R/64 (a power of two would leave warps idle)'
ok "rowstats f32: narrow only where a power of two would leave warps idle" grep -q '} else if (sizeof(IndexT) == 4 && t_len <= 12288 && tecc::ceil_div(t_len, 1024) \* 32 < tecc::pow2_at_least(tecc::ceil_div(t_len, 32), 32, 1024)) {' "$work/s.cu"
ok "softmax f32 (writes y along the row): no narrow variant" sh -c "! sed -n '/^kernel softmax_f32:/,/^kernel /p' '$work/s.plan' | grep -q 'variant narrow'"
ok "the cluster rank and size only in the CLUSTER instance" grep -q 'const unsigned t_rank = CLUSTER ? tecc::cluster_rank() : 0, t_blocks = CLUSTER ? tecc::cluster_size() : 1;' "$work/s.cu"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -A2 'if (CLUSTER) {' | grep -c 't_acc[0-9]*\[t_i\] = tecc::cluster_allreduce(')" 2 "rowstats f32: the cluster all-reduce of both levels under CLUSTER"
ok "rmsw bf16 (one level, streamed rows read twice): clusters for any number of rows, looping over them" has rmsw_bf16 'variant cluster (when R <= 524288, for any number of rows, .*grid = the clusters the device holds at once, each looping over rows'
ok "softmax f32 (two levels): clusters only when the device holds one for every row" has softmax_f32 'variant cluster (when R <= 262144, the device holds a cluster for every row at once, .*grid = a cluster per row'
ok "softmax f32: the cluster condition asks the device how many clusters it holds" grep -q '&& t_rows <= tecc::resident_clusters(tecc_softmax_f32_g0_reg<int32_t, 8, 4, 1, true, false, true, 0>, tecc::cluster_blocks(t_len, 32768), 1024)) {' "$work/s.cu"
ok "rmsw bf16: a grid of the clusters the device holds at once" grep -q 'tecc::launch_cluster(tecc_rmsw_bf16_g0_reg<int32_t, 8, 8, 1, true, false, true, 0, false>, tecc::cluster_grid(t_rows, t_cluster, tecc::resident_clusters(tecc_rmsw_bf16_g0_reg<int32_t, 8, 8, 1, true, false, true, 0, false>, t_cluster, 1024)), dim3(1024)' "$work/s.cu"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 'tecc::cluster_allreduce(t_acc[0-9]*\[t_i\], tecc::[A-Za-z]*(), t_slot, t_par);')" 2 "rowstats f32: each cluster all-reduce takes the next of the two slots"
ok "rowstats f32: the CLUSTER instance waits for the cluster before it ends" sh -c "sed -n '/__global__ .* tecc_rowstats_f32_g0_reg(/,/^}/p' '$work/s.cu' | tail -2 | grep -q 'if (CLUSTER) tecc::cluster_drain();'"
is "$(sed -n '/T cluster_allreduce(T v, Op op, unsigned char (&slots)\[32\], unsigned &parity) {/,/^}/p' "$work/s.cu" | grep -c '__cluster_barrier_wait();')" 1 "the cluster all-reduce waits at one barrier"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 'for (IndexT t_base = (t_red - 1) / t_step \* t_step; t_base >= 0 && t_base < t_red; t_base -= t_step) {')" 1 "softmax f32 stream: the second read walks the row backward"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 'for (IndexT t_base = 0; t_base < t_red; t_base += t_step) {')" 1 "softmax f32 stream: the first read walks it forward"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 't_base = t_lo + (t_hi - t_lo - 1) / t_step \* t_step; t_base >= t_lo && t_base < t_hi; t_base -= t_step) {')" 1 "softmax col bf16 split stream: its second read backward over its chunk"
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 't_p0 = tecc::load_stream(reinterpret_cast<const tecc::Pack<float, VEC> \*>(x + ')" 1 "rowstats f32 registers: row values only, loads streamed past L2"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'tecc::load_stream(')" 2 "rowstats f32 stream: its one read, the last, streamed past L2 (the first chunk and each next one)"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c 'tecc::load_stream(\|tecc::store_stream(')" 0 "softmax f32 registers (writes y along the row): plain loads and stores"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 't_p0 = \*reinterpret_cast<const tecc::Pack<float, VEC> \*>(x + ')" 1 "softmax f32 stream: the first read plain (kept in L2 for the second)"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 't_p0 = tecc::load_stream(reinterpret_cast<const tecc::Pack<float, VEC> \*>(x + ')" 1 "softmax f32 stream: the last read streamed past L2"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 'tecc::store_stream(reinterpret_cast<tecc::Pack<float, VEC> \*>(y + t_o \* t_red + t_r0), t_s_y);')" 1 "softmax f32 stream: y stored past L2"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 'constexpr int ITEMS = sizeof(IndexT) == 4 ? 8 : 4;')" 1 "softmax f32 stream (reads a row twice): 8 packs a chunk with 32-bit indices, aligned or not, 4 with 64-bit"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'constexpr int ITEMS = 4;')" 1 "softmax bf16 stream: 4 packs a chunk (8 spilled)"
is "$(kernel_text tecc_rowstats_f32_g0_stream | grep -c 'constexpr int ITEMS = 4;')" 1 "rowstats f32 stream (reads a row once): 4 packs a chunk"
ok "softmax f32: the plan says the stream's two ITEMS" has softmax_f32 'variant stream (otherwise): stream, VEC 4, ITEMS 4 (8 where 32-bit indices do)'
is "$(row_loads tecc_softmax_f32_g0_stream)" 2 "softmax f32 stream: two reads (the max and the sum of exp, then y)"
is "$(kernel_text tecc_softmax_f32_g0_stream | grep -c 't_os[0-9]* = tecc::rescale_exp(')" 2 "softmax f32 stream: the sum rescaled per chunk and to the row's max"
is "$(row_loads tecc_logsumexp_f32_g0_stream)" 1 "logsumexp f32 stream: one read"
ok "logsumexp f32 stream: the shift of an infinite max is 0" sh -c "grep -q 'tecc::rescale_exp(t_os[0-9]*, tecc::isinf(t_pm[0-9]*) ? 0.0f : t_pm[0-9]*, t_sh[0-9]*)' '$work/s.cu'"
ok "logsumexp f32 stream: 512 threads a row when the rows fill two blocks an SM" has logsumexp_f32 'variant stream .*T = pow2 in \[32, 512 when rows >= 2\*SMs'
is "$(kernel_text tecc_xent_f32_g0_stream | grep -c 'const tecc::Pack<float, VEC> t_p')" 2 "cross-entropy f32 stream: one read of l and t"
is "$(kernel_text tecc_softmax_col_f32_g0_stream | grep -c 't_c0\[t_k \* VEC + t_j\] = t_in ?')" 2 "softmax f32 column stream: two reads"
ok "rmsnorm bf16: w loaded a pack per item" sh -c "grep -q 't_q[0-9]* = \*reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(w + t_r0);' '$work/s.cu'"
ok "masked softmax bf16: the mask's row at its row offset" sh -c "grep -q 'reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(m + (t_d1) \* t_red + t_r0);' '$work/s.cu'"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'm\[(t_d1) \* N + t_d2\]')" 0 "masked softmax bf16: no element-by-element mask loads"
ok "softmax bf16 columns: packs of 8 columns a thread" has softmax_col_bf16 'packs: a thread takes VEC = 8 neighbouring columns'
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(x + t_r0 \* t_outer + t_o0)')" 1 "softmax bf16 columns: a pack of a row's VEC columns per item"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'tecc::column_allreduce_vec(t_acc[0-9]*, ')" 2 "softmax bf16 columns: each level all-reduces VEC columns at once"
is "$(kernel_text tecc_softmax_col_bf16_g0_reg | grep -c 'reinterpret_cast<tecc::Pack<uint16_t, VEC> \*>(y + t_r0 \* t_outer + t_o0) = t_s_y')" 1 "softmax bf16 columns: y stored a pack per item"
ok "softmax bf16 columns: streamed in packs of 4 when the groups fill the SMs" has softmax_col_bf16 'variant stream-packed (when ceil(rows/(8\*4)) >= 3/4 of the SMs): stream, VEC 4'
ok "softmax bf16 columns: else streamed a column a thread" grep -q 'tecc_softmax_col_bf16_g0_stream<int64_t, 1, 0><<<' "$work/s.cu"
is "$(kernel_text tecc_colshift_f32_g0_reg | grep -c 'b\[t_o\]')" 1 "a per-column operand: loaded per column of the thread"
is "$(kernel_text tecc_colshift_f32_g0_reg | grep -c '  m\[t_o\] = ')" 1 "a column output: stored per column of the thread"
# Rows a thread: short rows that read w share each pack of it between two
# rows (rmsw); rows without such an operand keep one a thread (softmax).
ok "rmsw bf16: the warp variant holds 2 rows a thread at ITEMS 2" has rmsw_bf16 'variant warp (when R <= 512 .* ITEMS 2, ROWS 2,'
is "$(of softmax_bf16 | grep -c 'ROWS')" 0 "softmax bf16: one row a thread (no operand along the rows)"
ok "rmsw bf16: the warp launch takes ROWS 2, TY*2 rows a block at a time, a wave of blocks (launch_rows: 2 rows, 1024 threads an SM)" grep -q 'tecc::launch_rows(t_wb\[[0-9]*\], tecc_rmsw_bf16_g0_reg<int32_t, 2, 8, 2, true, false, false, 32, false>, t_rows, t_tx, t_ty, 2, 1024, stream, ' "$work/s.cu"
ok "rmsw bf16: the block variant keeps ROWS 1" grep -q 'tecc_rmsw_bf16_g0_reg<int32_t, 4, 8, 1, true, false, false, 0, false><<<' "$work/s.cu"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -A12 'EARLY ? t_e1\[t_k\] : \*reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(w + t_r0)' | grep -c 'for (int t_i = 0; t_i < ROWS; t_i++)')" 1 "rmsw bf16: w's pack loaded once, then the thread's rows"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'const IndexT t_o = t_o0 + (IndexT)t_i \* blockDim.y;')" 6 "rmsw bf16: rows t_o0 + t_i * blockDim.y (the first loads ahead, the next, the loads of ROWS 1, the sum, y's store mask, y)"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c '^ *if (ROWS > 1 && t_packs) {$')" 2 "rmsw bf16: the PACKS instance of ROWS 2 loads its rows ahead (before the loop, then each next group)"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 't_c0\[t_q\] = t_n0\[t_q\];')" 1 "rmsw bf16: the rows loaded ahead become this iteration's"
ok "rmsw bf16: the plan says the warp variant loads the next rows ahead" has rmsw_bf16 'variant warp .*the next rows loaded while these compute'
ok "addrms bf16: two held inputs hold 2 rows a thread but load none ahead" sh -c "sed -n '/^kernel addrms_bf16:/,/^kernel /p' '$work/s.plan' | grep 'variant warp' | grep 'ROWS 2' | grep -vq 'next rows'"
is "$(kernel_text tecc_addrms_bf16_g0_reg | grep -c 't_n[0-9]')" 0 "addrms bf16: no arrays of the next rows"
# Packs as a template parameter: rows that are whole packs, aligned, run
# the PACKS instance (no per-element row-end checks), others the instance
# that loads element by element.
is "$(sed -n '/tecc_status tecc_rmsw_bf16_launch(/,/^}/p' "$work/s.cu" | grep -A5 'static tecc::DeviceCache t_wb\[8\];' | grep -c -e '^ *switch (t_tx) {' -e '^ *case 4:$' -e '^ *if (t_packs)$' -e '^ *tecc::launch_rows(t_wb\[0\], tecc_rmsw_bf16_g0_reg<int32_t, 2, 8, 2, true, false, false, 4, false>, ' -e '^ *else$')" 5 "rmsw bf16 warp: an instance per lanes of a row (t_tx), the PACKS one when t_packs"
is "$(sed -n '/tecc_status tecc_rmsw_bf16_launch(/,/^}/p' "$work/s.cu" | grep -A30 'static tecc::DeviceCache t_wb\[8\];' | grep -o -E '^ *tecc::launch_rows\(t_wb\[[0-7]\], tecc_rmsw_bf16_g0_reg<int32_t, 2, 8, 2, (true|false), false, false, (4|8|16|32), false>, ' | sort -u | wc -l)" 8 "rmsw bf16 warp: LANES 4, 8, 16 and 32, packed and element by element"
# EARLY (schedule.c, early_operands()): the block variant's WHOLE instance
# of a norm loads w's packs with the row, before the reductions, bound at
# the block's 128 threads; no other instance, and no kernel without such
# an operand.
ok "rmsw bf16: the block variant's WHOLE instance loads w early (EARLY)" grep -q 'tecc_rmsw_bf16_g0_reg<int32_t, 4, 8, 1, true, true, false, 0, true><<<' "$work/s.cu"
is "$(grep -c 'tecc_rmsw_bf16_g0_reg<.*, true>' "$work/s.cu")" 1 "rmsw bf16: no other instance is EARLY"
ok "rmsw bf16: EARLY instances bound at 128 threads, the others at 1024" grep -q '__launch_bounds__(EARLY ? 128 : 1024) tecc_rmsw_bf16_g0_reg(' "$work/s.cu"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -e 't_e1\[t_k\] = \*reinterpret_cast<const tecc::Pack<uint16_t, VEC> \*>(w + t_r0);' -e 'lanes_allreduce' | head -1 | grep -c 't_e1')" 1 "rmsw bf16: w's early packs are loaded before the first all-reduce"
ok "rmsw bf16: the plan says which instance loads early" has rmsw_bf16 'variant block .*rows move in aligned packs (there the operands read along every row, as a norm.s w and b, are loaded with the row, before its reductions, in blocks bound at 128 threads)'
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c 'EARLY')" 0 "softmax f32 (no row operand): no EARLY instance"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 't_acc[0-9]*\[t_i\] = tecc::lanes_allreduce<LANES>(t_acc[0-9]*\[t_i\], tecc::Sum(), (float \*)t_smem);')" 1 "rmsw bf16: the row's sum all-reduced over LANES lanes (unconditional shuffles in the warp variant)"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'constexpr bool t_packs = PACKS;')" 1 "rmsw bf16: the row-end checks are compile-time under PACKS"
# Whole row groups of whole rows: the warp variant of one row a thread
# and the block variant have an instance without row or item guards
# (WHOLE); two rows a thread and the long variant do not (they spilled).
is "$(of softmax_f32 | grep -E 'variant (warp|block) ' | grep -c 'without row or item guards')" 2 "softmax f32: the plan says the warp and block variants run whole row groups without guards"
is "$(of rmsw_bf16 | grep -c 'without row or item guards')" 1 "rmsw bf16: only the block variant (the warp variant holds 2 rows a thread)"
is "$(of softmax_f32 | grep 'variant long' | grep -c 'without row or item guards')" 0 "softmax f32: not the long variant"
# The warp variant's launches (runtime launch_rows): each picks its block,
# one warp or 128 threads, by the device's occupancy of its instance.
is "$(sed -n '/tecc_status tecc_softmax_f32_launch(/,/^}/p' "$work/s.cu" | sed -n '/\/\* warp: /,/\/\* block: /p' | grep -c -e 't_grid' -e '<<<')" 0 "softmax f32 warp: no grid or launch of its own, launch_rows picks them"
ok "softmax f32 warp: a cache for each of its 12 launches (4 LANES, WHOLE, PACKS, neither)" sh -c "sed -n '/tecc_status tecc_softmax_f32_launch(/,/^}/p' '$work/s.cu' | grep -q 'static tecc::DeviceCache t_wb\[12\]; /\* each launch.s block: one warp or t_ty rows (tecc::launch_rows) \*/' && sed -n '/tecc_status tecc_softmax_f32_launch(/,/^}/p' '$work/s.cu' | grep -o 'tecc::launch_rows(t_wb\[[0-9]*\]' | sort -u | wc -l | grep -qx 12"
ok "softmax f32 warp: a row a thread, a block per row group (no SM cap)" grep -q 'tecc::launch_rows(t_wb\[[0-9]*\], tecc_softmax_f32_g0_reg<int32_t, 4, 4, 1, true, true, false, 32>, t_rows, t_tx, t_ty, 1, 0, stream, ' "$work/s.cu"
ok "the plan names the one-warp block" has softmax_f32 'variant warp .*block T x 128/T, .*or one warp where that keeps as many warps an SM (the device.s occupancy, at launch)'
ok "softmax f32: whole when R fills the lanes' packs and the rows fill the blocks" grep -q 'const bool t_whole = t_packs && t_len == (int64_t)t_tx \* 16 && t_rows % t_ty == 0; /\* whole row groups of whole rows \*/' "$work/s.cu"
is "$(grep -A1 '^ *if (t_whole)$' "$work/s.cu" | grep -c -E '^ *(tecc::launch_rows\(t_wb\[[0-9]+\], )?tecc_softmax_f32_g0_reg<int32_t, 4, 4, 1, true, true, false, (0|4|8|16|32)>(<<<|, t_rows, t_tx)')" 5 "softmax f32: the WHOLE instance for the warp variant's four LANES and the block variant"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c 'constexpr bool t_whole = WHOLE;')" 1 "softmax f32: its guards compile-time under WHOLE"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -v 'else if (t_r0 < t_red) tecc::store_head(' | grep -c -e 't_r0 < t_red' -e 't_o < t_outer')" "$(kernel_text tecc_softmax_f32_g0_reg | grep -c -e 't_whole || t_r0 < t_red' -e 't_whole || t_o < t_outer')" "softmax f32: every row and item guard folds under WHOLE (but the partial pack's, which packs never take)"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'if (VEC > 1 && t_packs && t_o < t_outer && (t_whole || t_r0 < t_red)) {')" 2 "rmsw bf16: the next rows' loads keep their row guard (the last group's next is past the end)"
is "$(of masked_bf16 | grep -c 'without row or item guards')" 0 "masked bf16 (rows over two kept axes): no WHOLE instance"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 't_whole')" 0 "masked bf16: no WHOLE guards"
ok "masked bf16 (a mask at its own row offset): a PACKS instance too" grep -q '__global__ void __launch_bounds__([0-9]*) tecc_masked_bf16_g0_reg(.*, IndexT D) {' "$work/s.cu"
# 16-bit rows that are not whole packs: loads of two aligned chunks and a
# shift, where the group writes along the row (in every kernel) or only
# reduces it (in the register instances of ITEMS 8); stores of aligned
# chunks across the lanes of a row.
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c '} else if (VEC > 1 && (t_whole || t_o < t_outer) && (t_whole || t_r0 < t_red)) {')" 1 "softmax bf16 registers: rows that are not whole packs take the unaligned loads"
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c 'tecc::load_unaligned<VEC>(x + t_o \* t_red + t_r0, t_red - t_r0, x, x + (int64_t)t_outer \* t_red);')" 1 "softmax bf16 registers: a pack at any 2-byte boundary, inside the tensor"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'tecc::load_unaligned<VEC>(x + ')" 2 "softmax bf16 stream: both reads"
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c 'else if (t_r0 < t_red) tecc::store_unaligned(y + t_o \* t_red + t_r0, t_s_y, t_red - t_r0, t_sm\[t_i\], LANES ? LANES : 32);')" 1 "softmax bf16 registers: y stored in aligned chunks across a row's lanes (LANES a row, or warps)"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'tecc::store_unaligned(.*, t_sm, 32);')" 1 "softmax bf16 stream: y the same, 32 lanes a segment"
is "$(kernel_text tecc_softmax_bf16_g0_reg | grep -c 't_sm\[t_i\] = t_packs ? 0u : __ballot_sync(t_lm, (t_whole || t_o < t_outer) && t_r0 < t_red);')" 1 "softmax bf16 registers: the lanes that store each row's item, a ballot before its guards"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'const unsigned t_sm = t_packs ? 0u : __ballot_sync(t_lm, t_r0 < t_red);')" 1 "softmax bf16 stream: the lanes that store the item, a ballot before its guard"
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 'const unsigned t_lm = t_packs ? 0u : __ballot_sync(0xffffffffu, t_live);')" 1 "softmax bf16 stream: the warp's live lanes, once a row group"
is "$(grep -c '__activemask' "$work/s.cu")" 0 "no mask of whichever lanes happen to run together"
is "$(kernel_text tecc_card_bf16_g0_reg | grep -c '} else if (VEC > 1 && ITEMS > 4 && ')" 1 "card bf16 (only reduces): unaligned loads only in the instances of ITEMS 8"
is "$(kernel_text tecc_card_bf16_g0_stream | grep -c 'load_unaligned')" 0 "card bf16 stream: element by element"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'tecc::load_unaligned<VEC>(w + t_r0, t_red - t_r0, w, w + t_red);')" 1 "rmsw bf16: w at any alignment, inside its N"
is "$(kernel_text tecc_softmax_f32_g0_reg | grep -c 'load_unaligned\|store_unaligned')" 0 "softmax f32: element by element (4-byte elements)"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'tecc::load_unaligned<VEC>(s + ')" 1 "masked bf16 (PACKS): the scores of a row that is not whole packs through the aligned chunks they span"
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'load_unaligned<VEC>(m + ')" 0 "masked bf16: its mask (at a row offset of its own) element by element there"
# Rows batch-fastest (schedule.c, batch_axes()).
ok "masked bf16: rows visited batch-fastest where the sizes ask" has masked_bf16 'row order: the batch B fastest, in tiles of 64 rows of S, when S\*R\*6 bytes .* exceed 26214400 (half the L2); else in domain order'
is "$(kernel_text tecc_masked_bf16_g0_reg | grep -c 'const IndexT t_o = BATCH ? tecc::batch_fastest<IndexT>(t_ob + threadIdx.y, t_outer, t_batch) : t_ob + threadIdx.y;')" 1 "masked bf16 registers: the row of the visit in the BATCH instance"
is "$(kernel_text tecc_masked_bf16_g0_stream | grep -c 'const IndexT t_o = BATCH ? tecc::batch_fastest<IndexT>(t_ob + threadIdx.y, t_outer, t_batch) : t_ob + threadIdx.y;')" 1 "masked bf16 stream: the row of the visit in the BATCH instance"
ok "masked bf16: BATCH where the batch is over 1 and S*N*6 bytes (s, m and y) past half the L2" grep -q 'const bool t_batched = (int64_t)B > 1 && (int64_t)S \* t_len \* 6 > 26214400;' "$work/s.cu"
is "$(grep -c 'tecc_masked_bf16_g0_reg<int32_t, 4, 8, true, false, [0-9]*, true>\(<<<\|, t_rows, t_tx\)' "$work/s.cu")" 5 "masked bf16: a BATCH instance of each register launch (the warp's four LANES, block)"
is "$(grep -c 'tecc_masked_bf16_g0_reg<int32_t, 4, 8, true, false, [0-9]*, false>\(<<<\|, t_rows, t_tx\)' "$work/s.cu")" 5 "masked bf16: and one in domain order"
is "$(grep -c 'tecc_masked_bf16_g0_reg<int32_t, 4, 8, false, false, [0-9]*, \(true\|false\)>\(<<<\|, t_rows, t_tx\)' "$work/s.cu")" 10 "masked bf16: each also without PACKS"
is "$(kernel_text tecc_mask_and_row_f32_g0_reg | grep -c 'batch_fastest')" 0 "a mask and a row of the batch: no visit order"
is "$(of mask_and_row_f32 | grep -c 'row order')" 0 "a mask [S, D] and a row [B, 1, D] (both kept axes): rows in order"
is "$(of batch_row_f32 | grep -c 'row order')" 0 "a row [B, 1, D] only (the first kept axis): rows in order"
is "$(of rmsw_bf16 | grep -c 'row order')" 0 "rmsnorm's w (no kept axis): rows in order"
is "$(kernel_text tecc_rmsw_bf16_g0_reg | grep -c 'batch_fastest')" 0 "rmsnorm bf16: no visit order"
# An output along the row that reads no reduction (add_rmsnorm's h) is
# stored in the register kernel's first pass, before the row's all-reduce,
# in its PACKS instance; its other instances and the stream kernel store
# it with y (emit_stitch.c, writes_early()).
line_of() { kernel_text "$1" | grep -n -- "$2" | head -1 | cut -d: -f1; }
h_pack='&& t_packs) \*reinterpret_cast<tecc::Pack<float, VEC> \*>(h + t_o \* t_red + t_r0) = t_s_h;'
ok "addh f32 registers: h's packs stored before the row's all-reduce" test "$(line_of tecc_addh_f32_g0_reg "$h_pack")" -lt "$(line_of tecc_addh_f32_g0_reg 'lanes_allreduce')"
ok "addh f32 registers: y's packs after it" test "$(line_of tecc_addh_f32_g0_reg '(y + t_o \* t_red + t_r0) = t_s_y;')" -gt "$(line_of tecc_addh_f32_g0_reg 'lanes_allreduce')"
is "$(kernel_text tecc_addh_f32_g0_reg | grep -c 'if (!t_packs && t_r0 < t_red) tecc::store_head(h + ')" 1 "addh f32 registers: h of a row not whole packs stored with y"
is "$(kernel_text tecc_addh_f32_g0_stream | grep -c 'tecc::store_stream(reinterpret_cast<tecc::Pack<float, VEC> \*>(h + ')" 1 "addh f32 stream: h stored with y, in the last pass"
# Column split: a softmax(x, 0) whose column groups leave SMs idle cuts
# its rows into chunks: partials of each chunk, then their fold and the
# writes; a column max kept as an output (colshift) splits too, a
# layernorm over columns (second moments) does not.
ok "softmax bf16 columns: split before the column a thread" has softmax_col_bf16 'variant split (when its groups of columns leave SMs idle .*VEC 4, ITEMS 4, block TX x 512/TX'
is "$(of layernorm_col_f32 | grep -c 'variant split')" 0 "layernorm f32 columns (second moments): no split"
ok "split: the partials (PHASE 1), then the fold and the writes (PHASE 2), each over groups x chunks" sh -c "grep -A5 '/\* split: stream, VEC 4, ITEMS 4 \*/' '$work/s.cu' | grep -q 'tecc_softmax_col_bf16_g0_stream<int64_t, 4, 1><<<t_grid, dim3(t_tx, t_ty), 0, stream>>>(x, y, (IndexT)M, (IndexT)N, t_packs, (float \*)t_part0, (int64_t)t_chunk);' && grep -A6 '/\* split: stream, VEC 4, ITEMS 4 \*/' '$work/s.cu' | grep -q 'stream<int64_t, 4, 2><<<t_grid'"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 't_part\[((IndexT)blockIdx.y \* 2 + [01]) \* t_outer + t_o\] = t_\(acc2\|os6\)\[t_j\];')" 2 "split PHASE 1: the chunk's max and its sum of exp about it"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 't_os6\[t_j\] = tecc::Sum()(t_os6\[t_j\], tecc::rescale_exp(t_part\[((IndexT)t_c \* 2 + 1) \* t_outer + t_o\], t_part\[((IndexT)t_c \* 2 + 0) \* t_outer + t_o\], t_acc2\[t_j\]));')" 1 "split PHASE 2: each chunk's sum rescaled from its max to the thread's"
is "$(kernel_text tecc_softmax_col_bf16_g0_stream | grep -c 'for (unsigned t_c = threadIdx.y; t_c < gridDim.y; t_c += blockDim.y) {')" 2 "split PHASE 2: a share of the chunks a thread, folded by the block's all-reduce"
ok "split: the entry sizes the partials by the launch's own chunk count" grep -q 't_chunks = t_rows > 0 ? tecc_softmax_col_bf16_g0_chunks(t_rows, t_len, !t_big) : 1;' "$work/s.cu"
# 16-bit max and min a pair at a time (emit_stitch.c, paired_minmax()):
# the stream kernel folds the pairs after each chunk's max loop, before
# the rescale; the register kernel only in its ITEMS 8 instances.
is "$(kernel_text tecc_softmax_bf16_g0_stream | grep -c 't_pk2 = tecc::minmax_pairs<true, true>(t_pk2, t_c0\[t_k \* (VEC / 2) + t_w\]);')" 1 "softmax bf16 stream: the max folds a chunk's words a pair at a time"
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
is "$(kernel_text tecc_rowstats_f32_g0_reg | grep -c 'tecc::mul(t_acc[0-9]*\[t_i\], t_rcount)')" 2 "rowstats f32: both means by the reciprocal"
is "$(grep -c '/ (float)t_red' "$work/s.cu")" 0 "no fused row divides by its length"
ok "rowstats f32: the reciprocal a float parameter" grep -q '__global__ void __launch_bounds__(NARROW ? 384 : 1024, NARROW ? 3 : 0) tecc_rowstats_f32_g0_reg(const float \*__restrict__ x, float \*__restrict__ m, float \*__restrict__ v, IndexT M, IndexT N, float t_rcount) {' "$work/s.cu"
is "$(grep -o 'tecc_center_f64_g0_\(reg\|stream\)<[^>]*><<<[^;]*;' "$work/s.cu" | grep -vc '(x, y, (IndexT)M, (IndexT)N, 1.0 / (double)t_len\(, [t_a-z0-9]*\)\?);')" 0 "f64 mean: every launch passes 1 / t_len in double"
ok "f64 mean: by the double reciprocal" sh -c "sed -n '/__global__ .* tecc_center_f64_g0_stream(/,/^}/p' '$work/s.cu' | grep -q 'tecc::mul(t_acc[0-9]*, t_rcount64)'"
done_testing
