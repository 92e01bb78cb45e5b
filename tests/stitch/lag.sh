#!/bin/sh
# lag.sh — a split plan's three groups (a batch norm's: the rows'
# partials, their fold over the batch a column, the normalizing loop) in
# one persistent launch (GroupSchedule.lag, schedule.c; emit_lag_kernel,
# emit_cu.c).  The plan and JSON say so for tests/conform/lag.te's four
# kernels (over [B, C, S] and [B, C, H, W]) and not for programs of another
# shape; the file has the three
# item functions and the kernel that takes tickets, and the launcher
# tries it first (its counters zeroed, x past L2, whole aligned packs),
# the three launches the other way.  On a GPU: tests/conform/lag.sh.
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-lag.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
te=$top_srcdir/tests/conform/lag.te

"$TECC" -O2 "$te" -o "$work/l.cu" || { echo "Bail out! tecc failed"; exit 1; }
"$TECC" -O2 --emit=plan "$te" -o "$work/l.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
"$TECC" -O2 --emit=json "$te" -o "$work/l.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
cat > "$work/not.te" <<'TE'
kernel sums(x: f32[B, M, N]) -> (s: f32[M, 1]) {
    s = sum(x, 0, 2)
}
kernel bn_inner(x: f32[B, M, H, W]) -> (y: f32[B, M, H, W]) {
    y = (x - mean(x, 0, 2)) * rsqrt(var(x, 0, 2) + 1e-5)
}
kernel other_rows(x: f32[B, M, N], z: f32[B, M, N]) -> (y: f32[B, M, N]) {
    y = (x - mean(x * z, 0, 2)) * rsqrt(var(x * z, 0, 2) + 1e-5)
}
kernel ln(x: f32[M, N]) -> (y: f32[M, N]) {
    y = (x - mean(x, -1)) * rsqrt(var(x, -1) + 1e-5)
}
TE
"$TECC" -O2 --emit=plan "$work/not.te" -o "$work/not.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
plan_text() { sed -n "/^kernel $1:/,/^kernel /p" "$work/l.plan"; }

plan 14
for k in bn_f32 bn_bf16 bn_stats bn4_f32; do
  is "$(plan_text $k | grep -c '^    one persistent launch with groups 1 and 2 when indices fit 32 bits')" 1 "$k: the split plan in one launch"
done
is "$(grep -c '"lag": true' "$work/l.json")" 4 "--emit=json: lag true for the four"
is "$(grep -c 'persistent' "$work/not.plan")" 0 "a sum alone, rows that are not the trailing axes, rows reading what the loop does not, a layer norm: none"
is "$(grep -c 'rows longer than' "$work/not.plan")" 1 "... other_rows a split plan of three stitch and loop groups"
ok "the item functions: a row, a column, a row's packs" sh -c "
  grep -q '__device__ __forceinline__ void tecc_bn_f32_apart_g0_item(const float \*__restrict__ x, float \*v3_mem, ' '$work/l.cu' &&
  grep -q '__device__ __forceinline__ void tecc_bn_f32_apart_g1_item(const float \*v3_mem, ' '$work/l.cu' &&
  grep -q '__device__ __forceinline__ void tecc_bn_f32_apart_g2_item(const float \*__restrict__ x, const float \*v4_mem, ' '$work/l.cu'"
ok "the row item: the whole block along the row, one all-reduce of its three sums" sh -c "
  sed -n '/void tecc_bn_f32_apart_g0_item(/,/^}/p' '$work/l.cu' > '$work/g0' &&
  grep -q 'const IndexT t_r0 = ((IndexT)threadIdx.x + (IndexT)t_k \* (IndexT)blockDim.x) \* VEC;' '$work/g0' &&
  grep -q 'tecc::lanes_allreduce_n<0>(t_all, tecc::Sum(), (float \*)t_smem);' '$work/g0'"
ok "the column item: the block along the column's B rows, a block all-reduce" sh -c "
  sed -n '/void tecc_bn_f32_apart_g1_item(/,/^}/p' '$work/l.cu' > '$work/g1' &&
  grep -q 'const IndexT t_o = t_ob;' '$work/g1' &&
  grep -q 't_acc4 = tecc::row_allreduce(t_acc4, tecc::Sum(), (float \*)t_smem);' '$work/g1'"
ok "the loop item: 4 packs a thread loaded before any is stored" sh -c "
  sed -n '/void tecc_bn_f32_apart_g2_item(/,/^}/p' '$work/l.cu' > '$work/g2' &&
  grep -q 'for (IndexT t_p0 = t_plo + threadIdx.x; t_p0 < t_phi; t_p0 += 4 \* (IndexT)blockDim.x)' '$work/g2' &&
  grep -q 'tecc::Pack<float, VEC> t_st0\[4\];' '$work/g2'"
ok "the kernel: tickets, the rows' partials, the last of a column folds, the loops wait" sh -c "
  sed -n '/__global__ void TECC_LAG_BOUND(512, 2, 72) tecc_bn_f32_apart_lag(/,/^}/p' '$work/l.cu' > '$work/k' &&
  grep -q 'const IndexT t = tecc::lag_take(t_lagw, &t_slot);' '$work/k' &&
  grep -q 'tecc_bn_f32_apart_g0_item<IndexT, 8, VEC, PACKS>(x, v3_mem, v10_mem, B, M, N, t_rcount0, t_row);' '$work/k' &&
  grep -q 'if (tecc::lag_done(t_lagw + 2 + t_c, (unsigned)t_per, &t_last))' '$work/k' &&
  grep -q 'tecc_bn_f32_apart_g1_item<IndexT, 1>(v3_mem, v10_mem, v4_mem, v15_mem, B, M, t_rcount1, t_c);' '$work/k' &&
  grep -q 'tecc::lag_wait(t_lagw + 2 + t_cols + t_c);' '$work/k'"
ok "the launcher: by the sizes (past L2, whole packs), the instance by alignment, the counters zeroed, else the three launches" sh -c "
  sed -n '/tecc_status tecc_bn_f32_apart_launch(/,/^}/p' '$work/l.cu' > '$work/h' &&
  grep -q 'if (sizeof(IndexT) == 4 && t_part0 && t_len % 4 == 0 && N % 4 == 0 && t_len \* 4 >= 16384 && t_len <= 16384 && tecc::past_l2(2 \* t_rows, t_len \* 4))' '$work/h' &&
  grep -q 'const bool t_packed = tecc::aligned_to(x, sizeof(float) \* 4) && tecc::aligned_to(y, sizeof(float) \* 4);' '$work/h' &&
  grep -q 'const auto t_kernel = t_packed ? &tecc_bn_f32_apart_lag<int32_t, 4, 4, true> : &tecc_bn_f32_apart_lag<int32_t, 4, 1, false>;' '$work/h' &&
  grep -q 't_err = cudaMemsetAsync(t_part0, 0, (size_t)(2 + 2 \* t_cols) \* sizeof(unsigned), stream);' '$work/h' &&
  grep -q 't_kernel<<<t_grid, t_threads, 0, stream>>>(x, t_ws0, t_ws2, (int32_t)B, (int32_t)M, (int32_t)N, 1.0f / (float)t_len, t_ws1, t_ws3, 1.0f / (float)t_per, w, b, y, ' '$work/h' &&
  grep -q 'tecc_bn_f32_apart_g0_reg<' '$work/h' && grep -q 'tecc_bn_f32_apart_g2_loop<' '$work/h'"
ok "the runtime's ticket, count, flag and distance are in the file" sh -c "
  grep -q '__device__ __forceinline__ IndexT lag_take(' '$work/l.cu' && grep -q 'inline int64_t lag_rows(' '$work/l.cu' &&
  grep -q '#define TECC_LAG_BOUND(threads, blocks, regs) __maxnreg__(regs)' '$work/l.cu'"
done_testing
