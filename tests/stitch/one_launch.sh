#!/bin/sh
# one_launch.sh — a full reduction whose result the loop after it, over
# the same domain, reads: both in one cooperative launch
# (GroupSchedule.one_launch, schedule.c; emit_one_launch_kernel,
# emit_cu.c).  The plan says so where it applies and not elsewhere; the
# kernel of both has the reduction's steps, a grid barrier, every block's
# combine and the loop over its packs from the last; the launcher tries
# it first and keeps the three launches as the other way; the second
# stage combines with the first stage's block, as the one launch does (the
# same bits either way).  The tensors both read in packs of as many
# elements are kept in shared memory between them (GroupSchedule.one_held):
# the plan, JSON, the kernel's stores and loads of them and the launcher's
# dynamic shared memory.  Their results on a GPU: tests/stitch/one_launch.te
# in tests/gpu-all.sh's tree part, tests/hardening (streams, graphs).
. "$top_srcdir/tests/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-one.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
te=$top_srcdir/tests/stitch/one_launch.te

"$TECC" -O2 "$te" -o "$work/o.cu" || { echo "Bail out! tecc failed"; exit 1; }
"$TECC" -O2 --emit=plan "$te" -o "$work/o.plan" || { echo "Bail out! tecc --emit=plan failed"; exit 1; }
"$TECC" -O2 --emit=json "$te" -o "$work/o.json" || { echo "Bail out! tecc --emit=json failed"; exit 1; }
plan_text() { sed -n "/^kernel $1:/,/^kernel /p" "$work/o.plan"; }
kernel_text() { sed -n "/__global__ .* $1(/,/^}/p" "$work/o.cu"; }

plan 22
for k in amax_cast center scale_rows shift_argmax; do
  is "$(plan_text $k | grep -c '^    one launch with group 1 when the grid is more than one block')" 1 "$k: one launch in the plan"
done
is "$(plan_text other_domain | grep -c 'one launch')" 0 "other_domain: a loop over another domain, launched apart"
is "$(grep -c '"one_launch": true' "$work/o.json")" 6 "--emit=json: one_launch true for the six"
for k in amax_cast center scale_rows shift_argmax; do
  is "$(plan_text $k | grep -c "^    held in shared memory from the steps to the loop: each thread's first packs of x, at most 8 a thread, as many")" 1 "$k: x held in the plan"
done
is "$(plan_text two_held | grep -c "held in shared memory .* first packs of x, z, at most 8 a thread, as many")" 1 "two_held: x and z held in the plan"
is "$(plan_text widen | grep -c 'held in shared memory')" 0 "widen: nothing held where the loop's packs are not the steps'"
is "$(grep -c '"one_held": \[[0-9]' "$work/o.json")" 5 "--emit=json: one_held for the five that keep tensors"
ok "amax_cast: the kernel of both: steps, a barrier, the combine, the loop from the last, 4 packs in flight" sh -c "
  sed -n '/__global__ .* tecc_amax_cast_g0_one(/,/^}/p' '$work/o.cu' > '$work/k' &&
  grep -q 't_acc\[t_k\] = tecc::Max()(t_acc\[t_k\], v2);' '$work/k' &&
  grep -q 'tecc::grid_barrier(); /\* every block.s partial is written \*/' '$work/k' &&
  grep -q 'for (int t_b = threadIdx.x; t_b < (int)gridDim.x; t_b += blockDim.x)' '$work/k' &&
  grep -q 'for (IndexT t_j0 = t_jlast, t_p0 = t_first + t_j0 \* t_stride; t_j0 >= t_held; t_j0 -= 4, t_p0 -= 4 \* t_stride)' '$work/k' &&
  grep -q 'for (IndexT t_j0 = t_jlast < t_held - 1 ? t_jlast : t_held - 1, t_p0 = t_first + t_j0 \* t_stride; t_j0 >= 0; t_j0 -= 4, t_p0 -= 4 \* t_stride)' '$work/k' &&
  grep -q 't_hold_x\[(t_j0 + t_u) \* blockDim.x + threadIdx.x\] = t_pk_x\[t_u\];' '$work/k' &&
  grep -q 't_st0\[t_u\] = t_hold_x\[(t_j0 - t_u) \* blockDim.x + threadIdx.x\];' '$work/k' &&
  grep -q 'const IndexT t_p = t_p0 - (IndexT)t_u \* t_stride;' '$work/k' &&
  grep -q 'tecc::f32_to_f8e4m3_pack<VEC>(t_f_q, t_pk_q.v);' '$work/k'"
ok "amax_cast: launched cooperatively where it fits, else the three launches" sh -c "
  grep -q 'const int t_room_steps = tecc::held_steps(t_room, (const void \*)tecc_amax_cast_g0_one<IndexT>, 256, 4, 16, 8);' '$work/o.cu' &&
  grep -q 'if (t_grid > 1 && tecc::aligned_to(x, sizeof(uint16_t) \* 8) && tecc::aligned_to(q, sizeof(uint8_t) \* 8) && tecc::cooperative_fits(t_fits, (const void \*)tecc_amax_cast_g0_one<IndexT>, t_grid, 256, (size_t)t_room_steps \* 4096))' '$work/o.cu' &&
  grep -q 'tecc::launch_cooperative(tecc_amax_cast_g0_one<IndexT>, dim3(t_grid), dim3(256), (size_t)t_held \* 4096, stream, .*, t_held);' '$work/o.cu' &&
  grep -q 'tecc_amax_cast_g0_full<IndexT, true><<<t_grid, 256, 0, stream>>>' '$work/o.cu'"
is "$(grep -c '__global__ void __launch_bounds__(256) tecc_[a-z_]*_g0_full_final(' "$work/o.cu")" 6 "the six second stages combine with the first stage's 256 threads"
is "$(grep -c '__global__ void __launch_bounds__(512) tecc_other_domain_g0_full_final(' "$work/o.cu")" 1 "other_domain's, with 512"
ok "scale_rows: rows of whole packs for the loop that splits its index" sh -c "grep -q ' && D % 2 == 0 && tecc::cooperative_fits(t_fits, (const void \*)tecc_scale_rows_g0_one<IndexT>' '$work/o.cu'"
ok "center: the mean divides by the count in the combine" sh -c "sed -n '/__global__ .* tecc_center_g0_one(/,/^}/p' '$work/o.cu' | grep -q 'const IndexT t_red = '"
ok "two_held: both kept, z after x's t_held steps, 32 bytes a step" sh -c "
  grep -q 'tecc::Pack<uint16_t, 8> \*const t_hold_z = reinterpret_cast<tecc::Pack<uint16_t, 8> \*>(t_hold_x + (size_t)t_held \* blockDim.x);' '$work/o.cu' &&
  grep -q 'held_steps(t_room, (const void \*)tecc_two_held_g0_one<IndexT>, 256, 4, 32, 8);' '$work/o.cu' &&
  grep -q 'tecc::launch_cooperative(tecc_two_held_g0_one<IndexT>, dim3(t_grid), dim3(256), (size_t)t_held \* 8192, stream, ' '$work/o.cu'"
ok "widen: no shared memory, the loop from the last as before" sh -c "
  sed -n '/__global__ .* tecc_widen_g0_one(/,/^}/p' '$work/o.cu' > '$work/w' && ! grep -q 't_hold\|t_held\|t_dyn' '$work/w' &&
  grep -q 'for (IndexT t_p0 = t_first < t_npack ? t_first + (t_npack - 1 - t_first) / t_stride \* t_stride : -1; t_p0 >= 0; t_p0 -= 4 \* t_stride)' '$work/w' &&
  grep -q 'tecc::launch_cooperative(tecc_widen_g0_one<IndexT>, dim3(t_grid), dim3(256), 0, stream, ' '$work/o.cu'"
ok "the runtime's barrier and launch are in the file" sh -c "grep -q '__device__ __forceinline__ void grid_barrier()' '$work/o.cu' && grep -q 'inline void launch_cooperative(' '$work/o.cu'"
done_testing
