/* tecc_rows.cuh — what stitch kernels (lib/emit_stitch.c, H9) use beside
 * tecc_runtime.cuh: the column all-reduce and the host's choice of a
 * variant from the sizes.  Embedded into every generated .cu after
 * tecc_runtime.cuh (which it needs). */
#ifndef TECC_ROWS_CUH
#define TECC_ROWS_CUH

#pragma nv_diag_suppress 177
namespace {
namespace tecc {

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

/* Compensated f32 sum: sum + comp is the exact sum of the terms (to about
 * 2^-48 relative); comp is 0 once sum is not finite. */
__device__ __forceinline__ void kahan_add(float &sum, float &comp, float x) {
  const float y = x - comp;
  const float t = sum + y;
  const float c = (t - sum) - y;
  comp = c == c ? c : 0.0f;
  sum = t;
}

/* A stitch group's launch: items = 1..32 picks the register kernel with
 * that many elements per thread and input, 0 the streaming kernel. */
struct StitchPick {
  int items, vec, tx, ty;
  unsigned grid;
};

inline int pow2_at_least(int64_t x, int lo, int hi) {
  int p = lo;
  while (p < hi && p < x) p *= 2;
  return p;
}

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

}  // namespace tecc
}  // namespace
#pragma nv_diag_default 177

#endif /* TECC_ROWS_CUH */
