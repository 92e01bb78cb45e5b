/* issue 49, 2026-12-03 (third session): the per-tensor fp8 quantization in
 * ONE launch, a measurement prototype and not part of tecc.  It was pasted
 * into the kernels.cu that `tecc -O2 bench/quant/kernels.te` wrote at
 * 4657b68: the kernel before "Enqueues every group of quant_tensor", the
 * launch code at the top of tecc_quant_tensor_launch (before group 0).  It
 * relies on every block being resident (the grid is SMs x min(occupancy,
 * 4)); a compiler version wants cudaLaunchCooperativeKernel, or a
 * barrier whose state is per call, not module globals.  Results:
 * bench/results/h200-2026-12-03-third.txt, bench/NOTES.md. */

/* PROTOTYPE (bench-carry only): per-tensor quantization in one launch.
 * Phase 1: the maximum's partial per block (grid = every block resident);
 * a grid barrier; phase 2: every block folds the partials in block order,
 * then casts the packs it read, last read first (still in L2). */
__device__ unsigned g_qt_count;
__device__ unsigned g_qt_gen;
__device__ float g_qt_part[8192];
template <typename IndexT>
__global__ void __launch_bounds__(256) proto_quant_tensor_one(const uint16_t *__restrict__ x, float *__restrict__ v3_mem, float *__restrict__ s, uint8_t *__restrict__ q, IndexT N, IndexT D) {
  constexpr int VEC = 8, ITEMS = 4;
  __shared__ float t_smem[32];
  const IndexT t_npack = (IndexT)N * D / VEC;
  const IndexT t_stride = (IndexT)blockDim.x * gridDim.x;
  const IndexT t_me = (IndexT)blockIdx.x * blockDim.x + threadIdx.x;
  float t_acc[VEC];
  #pragma unroll
  for (int t_k = 0; t_k < VEC; t_k++) t_acc[t_k] = (-tecc::inf_f32());
  for (IndexT t_p0 = t_me; t_p0 < t_npack; t_p0 += ITEMS * t_stride) {
    tecc::Pack<uint16_t, VEC> t_pk[ITEMS];
    #pragma unroll
    for (int t_u = 0; t_u < ITEMS; t_u++) {
      const IndexT t_p = t_p0 + (IndexT)t_u * t_stride;
      if (t_p < t_npack) t_pk[t_u] = reinterpret_cast<const tecc::Pack<uint16_t, VEC> *>(x)[t_p];
    }
    #pragma unroll
    for (int t_u = 0; t_u < ITEMS; t_u++) {
      const IndexT t_p = t_p0 + (IndexT)t_u * t_stride;
      if (t_p < t_npack) {
        #pragma unroll
        for (int t_k = 0; t_k < VEC; t_k++) t_acc[t_k] = tecc::Max()(t_acc[t_k], tecc::abs(tecc::bf16_to_f32(t_pk[t_u].v[t_k])));
      }
    }
  }
  #pragma unroll
  for (int t_w = 1; t_w < VEC; t_w *= 2)
    for (int t_k = 0; t_k + t_w < VEC; t_k += 2 * t_w) t_acc[t_k] = tecc::Max()(t_acc[t_k], t_acc[t_k + t_w]);
  const float t_blk = tecc::row_allreduce(t_acc[0], tecc::Max(), t_smem);
  if (threadIdx.x == 0) {
    g_qt_part[blockIdx.x] = t_blk;
    const unsigned t_gen = *(volatile unsigned *)&g_qt_gen;
    __threadfence();
    if (atomicAdd(&g_qt_count, 1u) == gridDim.x - 1) {
      g_qt_count = 0;
      __threadfence();
      atomicAdd(&g_qt_gen, 1u);
    } else {
      while (*(volatile unsigned *)&g_qt_gen == t_gen) __nanosleep(32);
    }
    __threadfence();
  }
  __syncthreads();
  float t_m = (-tecc::inf_f32());
  for (int t_b = threadIdx.x; t_b < (int)gridDim.x; t_b += blockDim.x) t_m = tecc::Max()(t_m, __ldcg(&g_qt_part[t_b]));
  t_m = tecc::row_allreduce(t_m, tecc::Max(), t_smem);
  if (blockIdx.x == 0 && threadIdx.x == 0) { v3_mem[0] = t_m; s[0] = t_m / 448.0f; }
  const float s_val = t_m / 448.0f;
  const float t_inv = 1.0f / s_val;
  if (t_me >= t_npack) return;
  IndexT t_p = t_me + (t_npack - 1 - t_me) / t_stride * t_stride; /* my last pack */
  for (;;) {
    tecc::Pack<uint16_t, VEC> t_pk[ITEMS];
    IndexT t_at[ITEMS];
    #pragma unroll
    for (int t_u = 0; t_u < ITEMS; t_u++) {
      t_at[t_u] = t_p - (IndexT)t_u * t_stride;
      if (t_at[t_u] >= 0 && t_at[t_u] >= t_me) t_pk[t_u] = tecc::load_stream(reinterpret_cast<const tecc::Pack<uint16_t, VEC> *>(x) + t_at[t_u]);
    }
    #pragma unroll
    for (int t_u = 0; t_u < ITEMS; t_u++) {
      if (t_at[t_u] >= 0 && t_at[t_u] >= t_me) {
        float t_f[VEC];
        tecc::Pack<uint8_t, VEC> t_pq;
        #pragma unroll
        for (int t_k = 0; t_k < VEC; t_k++) t_f[t_k] = tecc::mul(tecc::bf16_to_f32(t_pk[t_u].v[t_k]), t_inv);
        tecc::f32_to_f8e4m3_pack<VEC>(t_f, t_pq.v);
        reinterpret_cast<tecc::Pack<uint8_t, VEC> *>(q)[t_at[t_u]] = t_pq;
      }
    }
    if (t_p - (IndexT)ITEMS * t_stride < t_me) break;
    t_p -= (IndexT)ITEMS * t_stride;
  }
}

/* The launch, in tecc_quant_tensor_launch<IndexT>: */
#if 0
  if ((int64_t)N * D % 8 == 0 && tecc::aligned_to(x, 16) && tecc::aligned_to(q, 8) && (int64_t)N * D > 0) {
    static int t_grid = 0;
    if (!t_grid) {
      int t_occ = 0;
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&t_occ, proto_quant_tensor_one<IndexT>, 256, 0);
      t_grid = tecc::sm_count() * (t_occ < 4 ? t_occ : 4);
    }
    proto_quant_tensor_one<IndexT><<<t_grid, 256, 0, stream>>>(x, t_ws0, s, q, (IndexT)N, (IndexT)D);
    t_err = cudaGetLastError();
    if (t_err != cudaSuccess) return (tecc_status)(TECC_ERROR_CUDA + (int)t_err);
    return TECC_SUCCESS;
  }
#endif
