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

/* @piece column_allreduce_vec */
/* column_allreduce of VEC columns a thread (its VEC values in v, in
 * place): every thread writes its values, threads with threadIdx.y < VEC
 * fold column (threadIdx.x, threadIdx.y) over y in order (the bits of
 * column_allreduce), then all read their columns' results.  One barrier
 * pair a call: the next call (of any T) writes the slots, which start
 * past the results of the widest T, only after the barrier that ends
 * this call's folds, and the results only after its first barrier, when
 * every thread has read this call's.  smem holds 32 * VEC * 8 bytes of
 * results, then blockDim.x * blockDim.y * VEC slots; blockDim.x <= 32,
 * blockDim.y >= VEC; every thread of the block must call it. */
template <typename T, int VEC, typename Op>
__device__ __forceinline__ void column_allreduce_vec(T (&v)[VEC], Op op, T *smem) {
  static_assert(sizeof(T) <= 8, "column_allreduce_vec: results hold 8 bytes a column");
  T *folded = smem;
  T *slots = reinterpret_cast<T *>(reinterpret_cast<unsigned char *>(smem) + 32 * VEC * 8);
  T *slot = slots + (threadIdx.y * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
  for (int j = 0; j < VEC; j++) slot[j] = v[j];
  __syncthreads();
  if (threadIdx.y < VEC) {
    const unsigned c = threadIdx.x * VEC + threadIdx.y;
    T r = slots[c];
    for (unsigned y = 1; y < blockDim.y; y++) r = op(r, slots[y * blockDim.x * VEC + c]);
    folded[c] = r;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < VEC; j++) v[j] = folded[threadIdx.x * VEC + j];
}

/* @piece rescale_exp @needs exp */
/* A sum of exp(v - a) as the sum of exp(v - b): the online normalizer's
 * step when a row's shift (its max so far) grows from a to b
 * (lib/emit_stitch.c, the stream kernel).  An empty sum stays 0 (a may
 * be -inf, or logsumexp's 0 for an all -inf part, with exp(a - b) not
 * finite), and so does an unchanged shift (also when a and b are both
 * infinite, where a - b is NaN). */
template <typename T> __device__ __forceinline__ T rescale_exp(T sum, T a, T b) {
  return sum == (T)0 || a == b ? sum : sum * exp(a - b);
}

/* @piece batch_fastest */
/* The row a thread takes v-th when the rows, row-major [P, Q] (P the
 * batch), are visited batch-fastest: in tiles of 64 rows of Q, each tile
 * for every batch in turn ([Q/64, P, 64]; the last tile may be shorter),
 * so that the P rows that read one row of an operand broadcast over the
 * batch (an attention mask [S, S] under scores [B, S, S]) are in flight
 * together and it comes from HBM once (lib/schedule.c, batch_axes()).
 * 64 rows of a batch side by side measured 2.3 points of copy above one.
 * Past the rows (v >= rows): v itself, so that the guards `t_o <
 * t_outer` stay what they were.  The kernels call it where their
 * argument t_batch is over 1 (the host's t_batched), else keep the domain
 * order: one instance for both, where a template flag for each had
 * doubled the instances (masked softmax bf16's nvcc 11.6 s, 6.7 with
 * one) and ptxas gives the instance no more registers than the one in
 * domain order had. */
template <typename I> __device__ __forceinline__ I batch_fastest(I v, I rows, I batch) {
  constexpr int TILE = 64;
  if (v >= rows)
    return v;
  const I q = rows / batch, span = (I)TILE * batch;
  const I first = v / span * (I)TILE, in = v % span;
  const I t = q - first < (I)TILE ? q - first : (I)TILE;
  return in / t * q + first + in % t;
}

/* @piece pack_holds by_pack */
/* May the pack of VEC positions from `first` hold position `at`? */
template <int VEC, typename I> __device__ __forceinline__ bool pack_holds(I at, I first) {
  if (sizeof(I) == 8) /* in unsigned arithmetic: wraps where at < first */
    return (uint64_t)at - (uint64_t)first < (uint64_t)VEC;
  return (uint32_t)at - (uint32_t)first < (uint32_t)VEC;
}
/* A bool the compiler knows: body's instance for Known<false> drops what
 * `t_may && ...` guards. */
template <bool B> struct Known {
  __device__ constexpr operator bool() const { return B; }
};
/* Runs body(Known<true>()) where `may` holds, else body(Known<false>()):
 * an element loop in two instances, the second without the comparisons
 * of positions that no element of the pack can satisfy (lib/emit_stitch.c,
 * pack_tests_position()). */
template <typename F> __device__ __forceinline__ void by_pack(bool may, F body) {
  if (may)
    body(Known<true>());
  else
    body(Known<false>());
}

/* @piece narrow_position */
/* A value of row scope that a position along a row is compared with (a
 * label: `index(x, -1) == t`), in the kernel's index type: clamped to
 * [-1, max] so that every comparison with a position p in [0, max) comes
 * out as with the i64 value; an IndexT of 32 bits runs only where every
 * size is below 2^30 (lib/emit_stitch.c, position_compare()).  One 32-bit
 * compare an element where the 64-bit one took three (a sign extension
 * and two compares). */
template <typename I> __device__ __forceinline__ I narrow_position(int64_t v) {
  if (sizeof(I) >= sizeof(int64_t))
    return (I)v;
  const int64_t most = (int64_t)(~(uint64_t)0 >> (65 - 8 * sizeof(I)));
  return (I)(v < -1 ? -1 : v > most ? most : v);
}

/* @piece Moments moments chunk_mean MergeMoments row_allreduce_moments @needs add sub mul shfl_xor warp_allreduce */
/* The count, mean and sum of squared deviations (m2) of some elements:
 * var(x) in one read of the row (lib/emit_stitch.c, the stream kernel).
 * A chunk's moments come from two loops over registers (its mean, then
 * the squares about it), and two sets of moments merge by Chan, Golub
 * and LeVeque's pairwise update:
 *   mean = (na * ma + nb * mb) / n,  m2 = m2a + m2b + (mb - ma)^2 * na * nb / n.
 * The merge is symmetric to the bit (rounded +, -, *, never an FMA), so
 * the lanes of a butterfly all-reduce get the same bits; an empty side
 * (n 0) leaves the other as it is.  The f32 quotients are the fast ones
 * (2 ulp): a mean off by a few ulp adds n * d^2 to m2, (a few ulp of the
 * mean / the deviation)^2 relative, far inside abi.md section 6, and the
 * IEEE division's subroutine made a long f32 row of rowstats 20% slower
 * than two reads (bench/NOTES.md). */
template <typename T> struct Moments {
  T n, mean, m2;
};
template <typename T> __device__ __forceinline__ Moments<T> moments(T n, T mean, T m2) {
  Moments<T> r;
  r.n = n;
  r.mean = mean;
  r.m2 = m2;
  return r;
}
template <typename T> __device__ __forceinline__ Moments<T> shfl_xor(Moments<T> a, int m) {
  return moments(shfl_xor(a.n, m), shfl_xor(a.mean, m), shfl_xor(a.m2, m));
}
__device__ __forceinline__ float moments_div(float a, float b) { return __fdividef(a, b); }
__device__ __forceinline__ double moments_div(double a, double b) { return a / b; }
/* The mean of a chunk of `n` elements summing to `sum` (0 when empty). */
template <typename T> __device__ __forceinline__ T chunk_mean(T sum, T n) {
  return n > (T)0 ? moments_div(sum, n) : (T)0;
}
struct MergeMoments {
  template <typename T> __device__ __forceinline__ Moments<T> operator()(Moments<T> a, Moments<T> b) const {
    if (a.n == (T)0) return b;
    if (b.n == (T)0) return a;
    const T n = add(a.n, b.n), d = sub(b.mean, a.mean);
    const T mean = moments_div(add(mul(a.n, a.mean), mul(b.n, b.mean)), n);
    const T m2 = add(add(a.m2, b.m2), mul(mul(d, d), moments_div(mul(a.n, b.n), n)));
    return moments(n, mean, m2);
  }
};
/* row_allreduce for moments: the warps' partials combine as a butterfly
 * as well (5 merges, where row_allreduce folds nwarps - 1 in a row).
 * smem holds 32 * blockDim.y moments; every thread must call it. */
template <typename T>
__device__ __forceinline__ Moments<T> row_allreduce_moments(Moments<T> v, Moments<T> *smem) {
  v = warp_allreduce(v, MergeMoments(), (int)blockDim.x);
  if (blockDim.x <= 32) return v;
  const unsigned lane = threadIdx.x & 31, nwarps = blockDim.x >> 5;
  Moments<T> *row = smem + threadIdx.y * 32;
  __syncthreads(); /* the previous call's readers are done */
  if (lane == 0) row[threadIdx.x >> 5] = v;
  __syncthreads();
  v = lane < nwarps ? row[lane] : moments((T)0, (T)0, (T)0);
  return warp_allreduce(v, MergeMoments());
}

/* @piece pow2_at_least ceil_div */
/* The smallest power of two >= x in [lo, hi] (hi when none is). */
inline int pow2_at_least(int64_t x, int lo, int hi) {
  int p = lo;
  while (p < hi && p < x) p *= 2;
  return p;
}
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* @piece row_threads @needs pow2_at_least ceil_div */
/* The threads of a block that holds a row of `len` elements, `per` a
 * thread (lib/schedule.c, variant_exact_rows): the warps the row fills
 * exactly where it is whole warps of `per` (no idle threads, and the
 * instance without row guards), else the power of two >= len / per in
 * [32, hi]. */
inline int row_threads(int64_t len, int per, int hi) {
  const int64_t lanes = ceil_div(len, per);
  return len > 0 && len % (32 * (int64_t)per) == 0 && lanes <= hi ? (int)lanes : pow2_at_least(lanes, 32, hi);
}

/* @piece one_read_threads one_read_grid @needs DeviceCache current_device sm_count grid_size */
/* The most threads of a streamed row read once (lib/schedule.c,
 * one_read_stream): 256, six blocks an SM, when the rows fill them; 512,
 * two blocks an SM, when they fill those; else 1024. */
inline int one_read_threads(int64_t rows) {
  const int64_t sms = sm_count();
  return rows >= 6 * sms ? 256 : rows >= 2 * sms ? 512 : 1024;
}

/* The grid of a one-read stream instance `kernel` in blocks of tx x ty
 * threads: 1024 threads an SM, but blocks of 256 take six an SM where
 * its registers let an SM hold them (the most it holds where they do
 * not: more would wait for a whole block's rows).  The count is the
 * device's and the kernel's, cached in `cache`, the launch site's. */
template <typename... Params>
inline unsigned one_read_grid(DeviceCache &cache, void (*kernel)(Params...), int64_t rows, int tx, int ty) {
  int blocks = 1024 / (tx * ty);
  if (tx * ty == 256) {
    const int dev = current_device();
    int fit = dev < 0 ? 0 : cache.get(dev);
    if (fit == 0) {
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, 256, 0) != cudaSuccess || fit < 1) {
        (void)cudaGetLastError();
        fit = blocks;
      }
      if (dev >= 0) cache.put(dev, fit);
    }
    blocks = fit < 6 ? fit : 6;
  }
  return grid_size(rows, ty, blocks);
}

/* @piece column_width @needs ceil_div sm_count */
/* Threads along the columns of a column stitch block (lib/schedule.c,
 * FIT_COLUMNS), each `vec` columns wide: 32, 16 or 8, the most that
 * leave 2 blocks per SM and, for columns held in registers (`items` per
 * lane, 0 for streamed ones), still hold a column of `len` in the block's
 * 1024 / tx lanes; else 8 (the most blocks, the longest columns held). */
inline int column_width(int64_t cols, int64_t len, int vec, int items) {
  const int64_t sms = sm_count();
  for (int tx = 32; tx > 8; tx /= 2)
    if ((items == 0 || len <= (int64_t)(1024 / tx) * items) && ceil_div(cols, (int64_t)tx * vec) >= 2 * sms) return tx;
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
  int items; /* a row reduction's packs a thread in flight (its kernel's ITEMS) */
};

/* The split of lib/schedule.c (split 0): when the grid cannot fill 4
 * blocks per SM and the range is long, enough chunks to fill them, each
 * at least 16 elements per lane and a multiple of `align` (a row's
 * packs); at most 1024. */
inline void split_launch(Launch *l, int64_t len, int64_t lanes, int64_t align = 1) {
  const int64_t fill = (int64_t)sm_count() * 4;
  int64_t s = 1;
  if ((int64_t)l->grid < fill && len >= lanes * 64) {
    s = ceil_div(fill, l->grid);
    const int64_t most = len / (lanes * 16);
    if (s > most) s = most;
    if (s > 1024) s = 1024;
    if (s < 1) s = 1;
  }
  l->chunk = s > 1 ? ceil_div(ceil_div(len, s), align) * align : len;
  l->splits = s > 1 ? ceil_div(len, l->chunk) : 1;
}

/* @piece cluster_allreduce_n */
/* All-reduce of K values per block (a row's accumulators of one type and
 * operation, 16 bytes at most) over the blocks of the cluster, through
 * distributed shared memory: every block gets the same bits, each value
 * combined in rank order.  `slots` is the block's __shared__ pair of
 * 16-byte slots, used in turn (`parity`, a register of the thread,
 * starts at 0 and flips each call), so one cluster barrier a call
 * suffices: a block writes a slot again two calls later, after the
 * barrier of the call between, which every block reaches only once it
 * has read the slot (on an H100 the looping clusters of rmsnorm gained 3
 * to 4 points of copy over a second barrier a call; bench/NOTES.md).
 * Other blocks may still read the last call's slots: a block leaves the
 * kernel only after cluster_drain().  Every thread of every block of the
 * cluster must call both.  A level's accumulators in one call, where
 * each took a barrier of its own: on an H200 (bench/NOTES.md, issue 46)
 * the backward of rmsnorm bf16 (two sums a row) went from 226.5 to 200.3
 * us at 1024 x 65536, add_rmsnorm bf16's from 310.5 to 291.7 at 4096 x
 * 16384. */
template <int K, typename T, typename Op>
__device__ __forceinline__ void cluster_allreduce_n(T (&v)[K], Op op, unsigned char (&slots)[32], unsigned &parity) {
  static_assert(K * sizeof(T) <= 16, "cluster_allreduce_n: a slot holds 16 bytes");
#if __CUDA_ARCH__ >= 900
  const unsigned n = __clusterSizeInBlocks();
  if (n == 1) return;
  T *slot = reinterpret_cast<T *>(slots + 16 * parity);
  parity ^= 1u;
  if (threadIdx.x == 0 && threadIdx.y == 0) {
#pragma unroll
    for (int k = 0; k < K; k++) slot[k] = v[k];
  }
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
  const T *first = static_cast<const T *>(__cluster_map_shared_rank(slot, 0));
#pragma unroll
  for (int k = 0; k < K; k++) v[k] = first[k];
  for (unsigned b = 1; b < n; b++) {
    const T *other = static_cast<const T *>(__cluster_map_shared_rank(slot, b));
#pragma unroll
    for (int k = 0; k < K; k++) v[k] = op(v[k], other[k]);
  }
#else
  (void)op;
  (void)slots;
  (void)parity;
#endif
}

/* @piece cluster_rank cluster_size cluster_allreduce cluster_drain @needs cluster_allreduce_n */
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

/* cluster_allreduce_n of one value per block (one row per block). */
template <typename T, typename Op>
__device__ __forceinline__ T cluster_allreduce(T v, Op op, unsigned char (&slots)[32], unsigned &parity) {
  T one[1] = {v};
  cluster_allreduce_n(one, op, slots, parity);
  return one[0];
}

/* The end of a kernel that called cluster_allreduce: no block leaves
 * (its shared memory gone) while another may still read its slots. */
__device__ __forceinline__ void cluster_drain() {
#if __CUDA_ARCH__ >= 900
  if (__clusterSizeInBlocks() > 1) {
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
  }
#endif
}

/* @piece clusters_ok cluster_blocks cluster_dims resident_clusters cluster_grid launch_cluster @needs built_for_sm90 current_device ceil_div launch_with */
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
 * (the portable cluster size); as many as the row fills, not the power
 * of two above them (a cluster all-reduce folds its blocks in rank order,
 * any number of them).  The power of two left blocks idle and fewer
 * clusters resident: on an H200 (bench/NOTES.md, issue 46), backward
 * kernel time, add_rmsnorm f32 4096 x 11008 581.8 -> 416.4 us (8 blocks
 * a cluster -> 6), 4096 x 10000 587.1 -> 333.8 (8 -> 5), add_rmsnorm
 * bf16 1024 x 24000 169.9 -> 127.7, rmsnorm bf16 1024 x 40000 188.7 ->
 * 125.6; rows of a power of two unchanged. */
inline unsigned cluster_blocks(int64_t len, int per_block) {
  const int64_t blocks = ceil_div(len, per_block);
  return (unsigned)(blocks < 1 ? 1 : blocks > 8 ? 8 : blocks);
}

/* The launch attribute of clusters of `cluster` blocks along x. */
inline cudaLaunchAttribute cluster_dims(unsigned cluster) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  return attr;
}

/* The clusters of `cluster` blocks of `threads` (with `smem` bytes of
 * dynamic shared memory each) that the device holds at once for `kernel`
 * (cudaOccupancyMaxActiveClusters; 1 when it cannot
 * say).  A cluster's blocks share one GPC, so this can be fewer than
 * SMs/cluster: an H100's 132 SMs hold 66 clusters of two 1024-thread
 * blocks but 30, not 33, of four (bench/NOTES.md, issue 12). */
template <typename... Params>
inline int64_t resident_clusters(void (*kernel)(Params...), unsigned cluster, int threads, size_t smem = 0) {
  cudaLaunchAttribute attr = cluster_dims(cluster);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(cluster);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, (const void *)kernel, &cfg) != cudaSuccess || n < 1) {
    (void)cudaGetLastError();
    return 1;
  }
  return n;
}

/* Blocks for `rows` rows of `cluster` blocks each: a cluster per row, as
 * many clusters as the device holds at once (`resident`), a grid-stride
 * loop over the rows beyond.  A cluster more than the device holds would
 * wait for a whole cluster's rows to finish. */
inline unsigned cluster_grid(int64_t rows, unsigned cluster, int64_t resident) {
  int64_t clusters = resident < rows ? resident : rows;
  if (clusters < 1) clusters = 1;
  return (unsigned)(clusters * cluster);
}

/* Launches `kernel` with clusters of `cluster` blocks along x and `smem`
 * bytes of dynamic shared memory a block; a failure is the launch's error
 * (cudaGetLastError), as with <<<>>>. */
template <typename... Params, typename... Args>
inline void launch_cluster(void (*kernel)(Params...), unsigned grid, dim3 block, unsigned cluster, size_t smem,
                           cudaStream_t stream, Args... args) {
  launch_with(cluster_dims(cluster), kernel, dim3(grid), block, smem, stream, args...);
}

/* @piece launch_rows @needs DeviceCache current_device grid_size cover_grid */
/* Launches a warp variant's instance (lib/schedule.c, FIT_SHORT_ROWS):
 * rows of `tx` lanes, `rows` rows a thread, in blocks of one warp where
 * blocks of one warp keep as many warps on an SM as blocks of `ty` rows
 * (tx * ty threads) do, else in blocks of `ty` rows; `sm_threads` the
 * threads an SM its grid stops at (0: a block per row group).  An SM
 * holds at most 32 blocks, so one-warp blocks cap it at 32 warps: they
 * are taken where ptxas gave the kernel 57 registers a thread or more,
 * which cap 128-thread blocks at 8 an SM (32 warps) too.  On an H100 at
 * 32768 x 256 and 65536 x 128 they gained layernorm, rmsnorm and
 * add_rmsnorm bf16 0.4 to 1.1 points of copy at equal warps; with fewer
 * warps they had lost softmax f32 1.6 to 2.5 and rowstats bf16 1.2
 * (bench/NOTES.md, issue 12).  The choice is the device's and the
 * kernel's, cached in `cache`, the launch site's; a failure is the
 * launch's error, as with <<<>>>. */
template <typename... Params, typename... Args>
inline void launch_rows(DeviceCache &cache, void (*kernel)(Params...), int64_t n, int tx, int ty, int rows,
                        int sm_threads, cudaStream_t stream, Args... args) {
  const int dev = current_device();
  int pick = dev < 0 ? 2 : cache.get(dev); /* 1: one warp, 2: ty rows */
  if (pick == 0) {
    int big = 0, warp = 0;
    pick = 2;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&big, kernel, tx * ty, 0) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&warp, kernel, 32, 0) != cudaSuccess)
      (void)cudaGetLastError();
    else if (tx * ty > 32 && warp >= big * (tx * ty / 32))
      pick = 1;
    cache.put(dev, pick);
  }
  const int y = pick == 1 ? 32 / tx : ty; /* 1 only where tx * ty > 32 */
  const int64_t per_block = (int64_t)y * rows;
  const unsigned grid = sm_threads ? grid_size(n, per_block, sm_threads / (tx * y)) : cover_grid(n, per_block);
  kernel<<<grid, dim3(tx, y), 0, stream>>>(args...);
}

/* @piece column_groups_fill @needs ceil_div sm_count */
/* A column stream in packs of `vec` columns a thread (lib/schedule.c,
 * WHEN_COLUMN_GROUPS): its groups of 8 threads across give 3/4 of the
 * SMs a block. */
inline bool column_groups_fill(int64_t cols, int vec) {
  return 4 * ceil_div(cols, 8 * (int64_t)vec) >= 3 * (int64_t)sm_count();
}

/* @piece column_chunks @needs ceil_div sm_count */
/* A column split (lib/schedule.c, WHEN_COLUMN_SPLIT): the chunks of `len`
 * rows that each group of `tx` threads of `vec` columns is cut into, so
 * that groups x chunks give each SM up to `sm_blocks` blocks (of 512
 * threads), not more (a grid past what the SMs hold at once leaves a last
 * wave of a few blocks), but 2 where more groups than that leave room for
 * more than one block each; a chunk keeps at least `rows` rows, and there
 * are at most 1024.  1: no split. */
inline int column_chunks(int64_t cols, int64_t len, int vec, int tx, int sm_blocks = 2, int64_t rows = 512) {
  const int64_t groups = ceil_div(cols, (int64_t)vec * tx), blocks = sm_blocks * (int64_t)sm_count();
  int64_t chunks = blocks / groups;
  if (chunks < 2 && blocks > groups) chunks = 2;
  if (chunks > len / rows) chunks = len / rows;
  if (chunks > 1024) chunks = 1024;
  return chunks > 1 ? (int)chunks : 1;
}

/* @piece keep_put keep_get */
/* A streamed row's item (the N register elements of one pack of a value,
 * whole 16-byte words) kept in shared memory by the pass that first
 * reads it, and taken back by each later pass instead of a second read
 * (lib/emit_stitch.c, kept_loads()).  Word q of the item is at s[q * stride]:
 * the block's threads side by side, so a warp's words are contiguous. */
template <int N, typename T> __device__ __forceinline__ void keep_put(uint4 *s, unsigned stride, const T *r) {
  static_assert(N * sizeof(T) % 16 == 0, "an item is whole 16-byte words");
#pragma unroll
  for (int q = 0; q < (int)(N * sizeof(T) / 16); q++) {
    uint4 w;
    memcpy(&w, r + q * (16 / sizeof(T)), 16);
    s[q * stride] = w;
  }
}
template <int N, typename T> __device__ __forceinline__ void keep_get(const uint4 *s, unsigned stride, T *r) {
  static_assert(N * sizeof(T) % 16 == 0, "an item is whole 16-byte words");
#pragma unroll
  for (int q = 0; q < (int)(N * sizeof(T) / 16); q++) {
    const uint4 w = s[q * stride];
    memcpy(r + q * (16 / sizeof(T)), &w, 16);
  }
}

/* @piece ahead_copy ahead_commit ahead_wait ahead_take */
/* A register kernel's next row (or group of columns) loaded ahead (its
 * AHEAD instance; lib/emit_stitch.c, load_ahead()): each thread copies
 * its own packs of the next row into dynamic shared memory with cp.async
 * (16 bytes, through L2 only) while it computes this row, pack `slot` at
 * base + 16 * slot (slot (value * ITEMS + item) * threads + thread: a
 * warp's packs side by side), and takes them into its registers once
 * this row is done, after waiting for its copies.  A thread reads only
 * the slots it wrote, so no barrier: its reads of a slot are issued
 * before the copy that refills it, the order of a thread-scope pipeline
 * (cuda::pipeline<thread_scope_thread>).  Before sm_80, a plain load and
 * store (the launch gives such devices no AHEAD instance: too little
 * shared memory). */
__device__ __forceinline__ void ahead_copy(unsigned char *base, unsigned slot, const void *src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = (unsigned)__cvta_generic_to_shared(base + (size_t)slot * 16);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
#else
  *reinterpret_cast<uint4 *>(base + (size_t)slot * 16) = *reinterpret_cast<const uint4 *>(src);
#endif
}
__device__ __forceinline__ void ahead_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void ahead_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void ahead_word(uint32_t &r, uint32_t w) { r = w; }
__device__ __forceinline__ void ahead_word(float &r, uint32_t w) { r = __uint_as_float(w); }
/* The slot's four words into r[at] to r[at + 3] (a register array, or
 * the accessor of an instance that holds its row in shared memory, in
 * whose text the call is never taken). */
template <typename A> __device__ __forceinline__ void ahead_take(const unsigned char *base, unsigned slot, A &r, int at) {
  const uint4 w = *reinterpret_cast<const uint4 *>(base + (size_t)slot * 16);
  ahead_word(r[at], w.x);
  ahead_word(r[at + 1], w.y);
  ahead_word(r[at + 2], w.z);
  ahead_word(r[at + 3], w.w);
}

/* @piece HeldRow bind_held Strided @needs pair_word */
/* The held values of a register kernel's instance for rows that are not
 * whole packs, where its variant says so (Variant.shared_bytes,
 * lib/schedule.c): in dynamic shared memory, element i of the thread of
 * index `tid` among `threads` at region[i * threads + tid], so that a
 * warp's accesses of one element are 32 consecutive words, one a bank.
 * HeldRow<T, N, SHARED>::type is the register array T[N], or that
 * accessor (Strided); bind_held() points the accessor at its region and
 * does nothing to the array, so one text declares either. */
template <typename T> struct Strided {
  T *p;
  unsigned stride;
  __device__ __forceinline__ T &operator[](int i) const { return p[i * stride]; }
};
template <typename T, int N, bool SHARED> struct HeldRow { typedef T type[N]; };
template <typename T, int N> struct HeldRow<T, N, true> { typedef Strided<T> type; };
template <typename T, int N> __device__ __forceinline__ void bind_held(T (&)[N], unsigned char *, unsigned, unsigned) {}
template <typename T>
__device__ __forceinline__ void bind_held(Strided<T> &h, unsigned char *region, unsigned tid, unsigned threads) {
  h.p = reinterpret_cast<T *>(region) + tid;
  h.stride = threads;
}
__device__ __forceinline__ void set_pair_half(const Strided<uint32_t> &w, int e, uint16_t h) {
  const uint32_t v = w[e >> 1];
  w[e >> 1] = (e & 1) ? (v & 0xffffu) | ((uint32_t)h << 16) : (v & 0xffff0000u) | h;
}
__device__ __forceinline__ float bf16_pair(const Strided<uint32_t> &w, int e) {
  const uint32_t v = w[e >> 1];
  return __uint_as_float((e & 1) ? v & 0xffff0000u : v << 16);
}
__device__ __forceinline__ float f16_pair(const Strided<uint32_t> &w, int e) {
  return f16_to_f32((uint16_t)(w[e >> 1] >> (16 * (e & 1))));
}

/* @piece l2_bytes optin_smem shared_room held_threads keep_items @needs DeviceCache current_device device_attribute sm_count ceil_div */
/* The items of each row (`tx` lanes of `vec` elements) that a stream
 * kernel's block of tx x ty threads keeps in shared memory, at
 * `elem_bytes` an element for the values it reads again: as many as fit
 * in the dynamic shared memory the device lets a block of `kernel` have
 * beside its own, where the rows a wave holds (a block an SM) overflow
 * L2; where they fill more than half of it, as many as fit in 152 KB
 * with its own (the rest of the SM's 256 KB is its L1); none where they
 * fit in half, whence the later passes read them back anyway, and none
 * for blocks of fewer than 1024 threads, which share their SM.  On an
 * H100 keeping all that fits gained softmax and layernorm bf16 128 x
 * 262144 5.5 to 9 points of copy and f32 256 x 131072 2.7 to 5; at f32
 * 1024 and 2048 x 65536 (34 MB a wave) it lost 2 to 4 where 144 KB
 * gained layernorm 5 to 6 and softmax 0 to 1, and 152 KB (9 items of 16
 * KB) 0 to 0.7 more than 144 (120: -0.5 to -2.5, 168: -1.5 to +0.8);
 * at 40000 (21 MB a wave) 144 KB lost up to 3 (bench/NOTES.md).  The
 * first call on a device raises the kernel's dynamic shared memory limit
 * to the whole budget (cudaFuncSetAttribute); `cache` is the launch
 * site's, one per kernel instance. */
inline int64_t l2_bytes() { /* unknown: as large as can be, so that nothing is kept */
  static DeviceCache cache;
  return device_attribute(cache, cudaDevAttrL2CacheSize, INT32_MAX);
}
inline int optin_smem() { /* the most shared memory a block may opt in to (past the default 48 KB) */
  static DeviceCache cache;
  return device_attribute(cache, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
}
/* The dynamic shared memory a block of `kernel` may have beside its own
 * on the current device (0 where it cannot say).  The first call on a
 * device raises the kernel's limit to all of it (cudaFuncSetAttribute);
 * `cache` is the launch site's, one per kernel instance. */
inline int shared_room(DeviceCache &cache, const void *kernel) {
  const int dev = current_device();
  if (dev < 0) return 0;
  int room = cache.get(dev) - 1;
  if (room < 0) {
    cudaFuncAttributes fa;
    const int most = optin_smem();
    room = 0;
    if (cudaFuncGetAttributes(&fa, kernel) == cudaSuccess && most > (int)fa.sharedSizeBytes) {
      room = most - (int)fa.sharedSizeBytes;
      if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, room) != cudaSuccess) room = 0;
    }
    if (room == 0) (void)cudaGetLastError();
    cache.put(dev, room + 1);
  }
  return room;
}
/* The threads of a row block of `tx` lanes a row: tx, or the rows of
 * them that `block` threads take (as the launch's t_tx * t_ty). */
inline int64_t held_threads(int64_t tx, int block) {
  return tx >= block ? tx : block / tx * tx;
}
inline int keep_items(DeviceCache &cache, const void *kernel, int64_t rows, int64_t len, int tx, int ty, int vec,
                      int elem_bytes) {
  const int64_t wave = rows < (int64_t)sm_count() * ty ? rows : (int64_t)sm_count() * ty;
  const int64_t bytes = wave * len * elem_bytes, l2 = l2_bytes(), most = optin_smem(), cap = 152 << 10;
  if (tx * ty < 1024 || bytes <= l2 / 2) return 0;
  const int budget = shared_room(cache, kernel);
  const int64_t room = bytes <= l2 && most > cap ? budget - (most - cap) : budget;
  if (room <= 0) return 0;
  const int64_t fit = room / ((int64_t)vec * elem_bytes * tx * ty), items = ceil_div(len, (int64_t)tx * vec);
  return (int)(items < fit ? items : fit);
}

/* @end */
}  // namespace tecc
}  // namespace
#pragma nv_diag_default 177

#endif /* TECC_ROWS_CUH */
