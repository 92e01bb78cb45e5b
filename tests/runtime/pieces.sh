#!/bin/sh
# pieces.sh — a generated .cu carries only the pieces of the runtime it
# names (lib/runtime.c, the @piece markers of runtime/*.cuh) and what they
# need, without the markers.
. "$top_srcdir/tests/tap.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/tecc-pieces.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

"$TECC" "$top_srcdir/examples/softmax.te" -o "$work/softmax.cu"
is "$?" 0 "softmax.te compiles"
has() { grep -q -e "$2" "$work/$1"; }
for name in FastDiv pow_int gelu sigmoid floordiv float_to_int column_width split_launch; do
  ok "softmax.cu: no $name (unused)" sh -c "! grep -q '$name' '$work/softmax.cu'"
done
ok "softmax.cu: launch_cluster, which it launches long rows with" has softmax.cu 'inline void launch_cluster('
ok "softmax.cu: resident_clusters, which sizes the cluster grid" has softmax.cu 'inline int64_t resident_clusters('
ok "softmax.cu: sm_count, which the stream's grid_size needs" has softmax.cu 'inline int sm_count('
ok "softmax.cu: row_allreduce and shfl_xor beside it" has softmax.cu 'shfl_xor(float v, int m)'
ok "softmax.cu: the markers are gone" sh -c "! grep -q -e '@piece' -e '@needs' -e '@end' '$work/softmax.cu'"

"$TECC" "$top_srcdir/examples/bias_gelu.te" -o "$work/bias_gelu.cu"
is "$?" 0 "bias_gelu.te compiles"
ok "bias_gelu.cu: gelu" has bias_gelu.cu '__device__ __forceinline__ T gelu(T x)'
ok "bias_gelu.cu: erf, which gelu needs" has bias_gelu.cu 'TECC_MATH1(erf,'

printf 'kernel ip(a: i32[N], b: i32[N]) -> c {\n    c = a ** b\n}\n' > "$work/ipow.te"
"$TECC" "$work/ipow.te" -o "$work/ipow.cu"
ok "i32 ** i32: pow_int" has ipow.cu 'T pow_int(T base, T e)'
ok "i32 ** i32: mul, which pow_int needs" has ipow.cu 'TECC_WRAP(mul, \*)'

# A call's workspace (abi.md §5) through workspace_alloc, which takes it
# from tecc's own pool where the device's is CUDA's default one.
"$TECC" -O0 "$top_srcdir/tests/hardening/hardening_ws.te" -o "$work/ws.cu"
is "$?" 0 "hardening_ws.te compiles at -O0 (a workspace)"
ok "ws.cu: the entry takes its workspace from workspace_alloc" has ws.cu 'if (tecc::workspace_alloc(&t_ws, (size_t)t_ws_bytes, stream) != cudaSuccess)'
ok "ws.cu: workspace_pool, which workspace_alloc needs" has ws.cu 'inline cudaMemPool_t workspace_pool(int dev, cudaStream_t stream)'
ok "ws.cu: current_device, which it needs" has ws.cu 'inline int current_device('
ok "ws.cu: no cudaMallocAsync of its own" sh -c "! grep -q 'cudaMallocAsync((void \*\*)&t_ws' '$work/ws.cu'"
ok "softmax.cu: no workspace_pool (no workspace)" sh -c "! grep -q 'workspace_pool' '$work/softmax.cu'"

done_testing
