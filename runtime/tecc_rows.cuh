/* tecc_rows.cuh — what row and column kernels use beside tecc_runtime.cuh:
 * the column all-reduce, compensated sums, thread-block clusters, and the
 * host's fitting of a block to the sizes by the rules of lib/schedule.c.
 * Embedded after tecc_runtime.cuh (which it needs), piece by piece
 * (lib/runtime.c). */
#ifndef TECC_ROWS_CUH
#define TECC_ROWS_CUH

#pragma nv_diag_suppress 177
namespace {
namespace tecc {

/* @piece column_allreduce */
/* All-reduce along threadIdx.y, one column per threadIdx.x: every thread
 * gets the same bits (same order).  smem holds blockDim.x * blockDim.y
 * values; every thread of the block must call it. */
template <typename T, typename Op>
__device__ __forceinline__ T column_allreduce(T v, Op op, T *smem) {
  __syncthreads(); /* the previous call's readers are done */
  smem[threadIdx.y * blockDim.x + threadIdx.x] = v;
  __syncthreads();
  T r = smem[threadIdx.x];
  for (unsigned y = 1; y < blockDim.y; y++) r = op(r, smem[y * blockDim.x + threadIdx.x]);
  return r;
}

/* @piece pow2_at_least ceil_div */
/* The smallest power of two >= x in [lo, hi] (hi when none is). */
inline int pow2_at_least(int64_t x, int lo, int hi) {
  int p = lo;
  while (p < hi && p < x) p *= 2;
  return p;
}
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* @piece column_width @needs ceil_div sm_count */
/* Contiguous columns per block of a column stitch kernel (lib/schedule.c,
 * FIT_COLUMNS): 32, 16 or 8, the most that leaves 2 blocks per SM. */
inline int column_width(int64_t rows) {
  const int64_t sms = sm_count();
  if (ceil_div(rows, 32) >= 2 * sms) return 32;
  if (ceil_div(rows, 16) >= 2 * sms) return 16;
  return 8;
}

/* @piece Launch split_launch @needs ceil_div sm_count */
/* A plain reduction's launch: tx * ty threads per block, `grid` blocks
 * along the outputs, the reduced range cut into `splits` chunks of
 * `chunk` elements along gridDim.y (then a second kernel combines the
 * partials in chunk order: deterministic). */
struct Launch {
  unsigned tx, ty, grid;
  int64_t chunk, splits;
};

/* The split of lib/schedule.c (split 0): when the grid cannot fill 4
 * blocks per SM and the range is long, enough chunks to fill them, each
 * at least 16 elements per lane; at most 1024. */
inline void split_launch(Launch *l, int64_t len, int64_t lanes) {
  const int64_t fill = (int64_t)sm_count() * 4;
  int64_t s = 1;
  if ((int64_t)l->grid < fill && len >= lanes * 64) {
    s = ceil_div(fill, l->grid);
    const int64_t most = len / (lanes * 16);
    if (s > most) s = most;
    if (s > 1024) s = 1024;
    if (s < 1) s = 1;
  }
  l->chunk = s > 1 ? ceil_div(len, s) : len;
  l->splits = s > 1 ? ceil_div(len, l->chunk) : 1;
}

/* @piece cluster_rank cluster_size cluster_allreduce */
/* A thread-block cluster (sm_90): the block's rank in it and its size in
 * blocks; 0 and 1 without clusters (before sm_90, or a launch without). */
__device__ __forceinline__ unsigned cluster_rank() {
#if __CUDA_ARCH__ >= 900
  return __clusterRelativeBlockRank();
#else
  return 0;
#endif
}
__device__ __forceinline__ unsigned cluster_size() {
#if __CUDA_ARCH__ >= 900
  return __clusterSizeInBlocks();
#else
  return 1;
#endif
}

/* All-reduce of one value per block (one row per block) over the blocks
 * of the cluster, through distributed shared memory: every block gets the
 * same bits, combined in rank order.  `slot` is a __shared__ T of the
 * block; every thread of every block of the cluster must call it. */
template <typename T, typename Op>
__device__ __forceinline__ T cluster_allreduce(T v, Op op, T *slot) {
#if __CUDA_ARCH__ >= 900
  const unsigned n = __clusterSizeInBlocks();
  if (n == 1) return v;
  if (threadIdx.x == 0 && threadIdx.y == 0) *slot = v;
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
  T r = *static_cast<const T *>(__cluster_map_shared_rank(slot, 0));
  for (unsigned b = 1; b < n; b++) r = op(r, *static_cast<const T *>(__cluster_map_shared_rank(slot, b)));
  __cluster_barrier_arrive(); /* every block has read before a slot is written again */
  __cluster_barrier_wait();
  return r;
#else
  (void)op;
  (void)slot;
  return v;
#endif
}

/* @piece clusters_ok cluster_blocks one_wave_of_clusters cluster_grid launch_cluster @needs built_for_sm90 current_device sm_count pow2_at_least ceil_div launch_with */
/* The device launches clusters and `kernel` was compiled for sm_90 or
 * newer (its cluster code is there). */
inline bool clusters_ok(const void *kernel) {
  const int dev = current_device();
  int cl = 0;
  if (dev < 0 || !built_for_sm90(kernel)) return false;
  if (cudaDeviceGetAttribute(&cl, cudaDevAttrClusterLaunch, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return cl != 0;
}

/* The blocks of a row's cluster: `per_block` elements each, at most 8
 * (the portable cluster size). */
inline unsigned cluster_blocks(int64_t len, int per_block) {
  return (unsigned)pow2_at_least(ceil_div(len, per_block), 1, 8);
}

/* Every row gets its cluster at once (rows * blocks <= SMs): a row per
 * cluster then costs one read; with more rows than that, the rows of a
 * cluster run one after the other and streaming wins (measured on an
 * H100: 1024 rows of 65536 f32 at 26% of copy against 53%). */
inline bool one_wave_of_clusters(int64_t rows, int64_t len, int per_block) {
  return rows * (int64_t)cluster_blocks(len, per_block) <= sm_count();
}

/* Blocks for `rows` rows of `cluster` blocks each: a cluster per row, at
 * most as many clusters as fit the SMs at once (grid-stride over rows). */
inline unsigned cluster_grid(int64_t rows, unsigned cluster) {
  int64_t clusters = sm_count() / (int64_t)cluster;
  if (clusters < 1) clusters = 1;
  if (clusters > rows) clusters = rows;
  return (unsigned)(clusters * cluster);
}

/* Launches `kernel` with clusters of `cluster` blocks along x; a failure
 * is the launch's error (cudaGetLastError), as with <<<>>>. */
template <typename... Params, typename... Args>
inline void launch_cluster(void (*kernel)(Params...), unsigned grid, dim3 block, unsigned cluster,
                                  cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  launch_with(attr, kernel, dim3(grid), block, stream, args...);
}

/* @end */
}  // namespace tecc
}  // namespace
#pragma nv_diag_default 177

#endif /* TECC_ROWS_CUH */
