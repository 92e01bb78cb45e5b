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

/* @piece kahan_add */
/* Compensated f32 sum: sum + comp is the exact sum of the terms (to about
 * 2^-48 relative); comp is 0 once sum is not finite. */
__device__ __forceinline__ void kahan_add(float &sum, float &comp, float x) {
  const float y = x - comp;
  const float t = sum + y;
  const float c = (t - sum) - y;
  comp = c == c ? c : 0.0f;
  sum = t;
}

/* @piece pow2_at_least ceil_div */
/* The smallest power of two >= x in [lo, hi] (hi when none is). */
inline int pow2_at_least(int64_t x, int lo, int hi) {
  int p = lo;
  while (p < hi && p < x) p *= 2;
  return p;
}
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* @piece Columns fit_columns @needs pow2_at_least ceil_div sm_count */
/* The block of a column stitch kernel (lib/schedule.c, FIT_COLUMNS):
 * tx contiguous columns (32, 16 or 8: the most that leaves 2 blocks per
 * SM), ty lanes along the column, a power of two in [32, 1024 / tx] that
 * holds `len` at `items` elements per lane when it can. */
struct Columns {
  int tx, ty;
};
inline Columns fit_columns(int64_t rows, int64_t len, int items) {
  Columns c;
  const int64_t sms = sm_count();
  c.tx = 32;
  if (ceil_div(rows, 32) < 2 * sms) c.tx = 16;
  if (ceil_div(rows, 16) < 2 * sms) c.tx = 8;
  c.ty = pow2_at_least(ceil_div(len, items), 32, 1024 / c.tx);
  return c;
}

/* @piece split_count @needs sm_count */
/* Chunks of the reduced range of a plain reduction (lib/schedule.c,
 * split 0): when `grid` blocks cannot fill 4 per SM and the range is
 * long, enough chunks along gridDim.y to fill them, each at least 16
 * elements per lane; at most 1024. */
inline int64_t split_count(unsigned grid, int64_t len, int lanes) {
  const int64_t fill = (int64_t)sm_count() * 4;
  if ((int64_t)grid >= fill || len < (int64_t)lanes * 64) return 1;
  int64_t s = (fill + grid - 1) / grid;
  const int64_t most = len / ((int64_t)lanes * 16);
  if (s > most) s = most;
  if (s > 1024) s = 1024;
  return s < 1 ? 1 : s;
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

/* @piece clusters_ok launch_cluster */
/* The device launches clusters and `kernel` was compiled for sm_90 or
 * newer (its cluster code is there).  Cached per device: the kernels of
 * one file are compiled for the same architectures. */
inline bool clusters_ok(const void *kernel) {
  enum { kMaxDevices = 256 };
  static int cache[kMaxDevices]; /* 0 unknown, 1 yes, 2 no */
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return false;
  int known = __atomic_load_n(&cache[dev], __ATOMIC_RELAXED);
  if (known) return known == 1;
  int cl = 0;
  cudaFuncAttributes fa;
  bool ok = cudaDeviceGetAttribute(&cl, cudaDevAttrClusterLaunch, dev) == cudaSuccess && cl &&
            cudaFuncGetAttributes(&fa, kernel) == cudaSuccess && fa.ptxVersion >= 90;
  __atomic_store_n(&cache[dev], ok ? 1 : 2, __ATOMIC_RELAXED);
  return ok;
}

/* Launches `kernel` with clusters of `cluster` blocks along x. */
template <typename... Params, typename... Args>
inline cudaError_t launch_cluster(void (*kernel)(Params...), unsigned grid, dim3 block, unsigned cluster,
                                  cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.gridDim = dim3(grid);
  cfg.blockDim = block;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, args...);
}

/* @piece StitchPick stitch_pick @needs pow2_at_least grid_size sm_count */
/* A stitch group's launch: items = 1..32 picks the register kernel with
 * that many elements per thread and input, 0 the streaming kernel. */
struct StitchPick {
  int items, vec, tx, ty;
  unsigned grid;
};

/* `held`: full-domain inputs each thread holds per element; `vec`: the
 * register kernel's pack size (row schedule), used when `vec_ok` (rows
 * are whole packs and the pointers aligned), else 1 (scalar loads).  Row: lanes along x; column: rows (contiguous) along x, lanes
 * along y. */
inline StitchPick stitch_pick(int64_t rows, int64_t len, int held, bool row, int vec, bool vec_ok) {
  StitchPick p;
  (void)vec_ok; /* misaligned rows keep the split, the kernel loads by element */
  p.vec = vec;
  const int budget = 32; /* registers per thread for held values */
  const int max_elems = held > 0 ? (budget / held >= 1 ? budget / held : 1) : 32;
  const int max_items = max_elems / vec >= 1 ? max_elems / vec : 1;
  if (row) {
    /* a warp per row while a thread can hold its share, else a block
     * with about min(4, max_items) packs per thread */
    const int target = max_items < 4 ? max_items : 4;
    if (len <= 32 * (int64_t)max_items * vec)
      p.tx = 32;
    else
      p.tx = pow2_at_least((len + (int64_t)target * vec - 1) / ((int64_t)target * vec), 32, 1024);
    p.ty = p.tx >= 128 ? 1 : 128 / p.tx;
    int64_t per = (len + (int64_t)p.tx * vec - 1) / ((int64_t)p.tx * vec);
    p.items = per <= max_items ? pow2_at_least(per, 1, 32) : 0;
    if (p.items == 0) {
      /* streaming, 4 packs per thread per chunk; long rows get one block
       * per SM, so that the rows in flight stay in L2 for the re-reads */
      p.tx = pow2_at_least((len + 4 * vec - 1) / (4 * vec), 32, 1024);
      p.ty = p.tx >= 128 ? 1 : 128 / p.tx;
      p.grid = grid_size(rows, p.ty, p.tx == 1024 ? 1 : 2048 / (p.tx * p.ty));
      return p;
    }
    p.grid = grid_size(rows, p.ty, 2048 / (p.tx * p.ty));
    return p;
  }
  const int64_t sms = sm_count();
  p.tx = 32;
  if ((rows + 31) / 32 < 2 * sms) p.tx = 16;
  if ((rows + 15) / 16 < 2 * sms) p.tx = 8;
  p.ty = 1024 / p.tx;
  while (p.ty > 32 && (int64_t)(p.ty / 2) * max_items >= len) p.ty /= 2;
  int64_t per = (len + p.ty - 1) / p.ty;
  p.items = per <= max_items ? pow2_at_least(per, 1, 32) : 0;
  p.grid = grid_size(rows, p.tx, 2048 / (p.tx * p.ty));
  return p;
}

/* @end */
}  // namespace tecc
}  // namespace
#pragma nv_diag_default 177

#endif /* TECC_ROWS_CUH */
