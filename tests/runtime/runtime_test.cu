// runtime_test.cu — GPU unit tests of runtime/tecc_runtime.cuh (TAP).
// Built by runtime.sh with nvcc; needs a GPU.
#include "../../runtime/tecc_runtime.cuh"
#include "../../runtime/tecc_rows.cuh"
#include <math.h>
#include <stdio.h>
#include <string.h>

static int g_test = 0, g_failed = 0;
static void ok(bool cond, const char *what) {
  g_test++;
  if (!cond) g_failed++;
  printf("%s %d - %s\n", cond ? "ok" : "not ok", g_test, what);
}

// ---- scalar helpers, evaluated on the device ------------------------------
__global__ void scalar_kernel(int32_t *i32, int64_t *i64, float *f, uint16_t *h) {
  i32[0] = tecc::floordiv(7, -2);      // -4
  i32[1] = tecc::mod(7, -2);           // -1
  i32[2] = tecc::floordiv(-7, 2);      // -4
  i32[3] = tecc::mod(-7, 2);           // 1
  i32[4] = tecc::floordiv(5, 0);       // 0
  i32[5] = tecc::mod(5, 0);            // 0
  i32[6] = tecc::floordiv(INT32_MIN, -1);  // wraps: INT32_MIN
  i32[7] = tecc::pow(3, 4);            // 81
  i32[8] = tecc::pow(2, -1);           // 0
  i32[9] = tecc::pow(-1, -3);          // -1
  i32[10] = tecc::float_to_int<int32_t>(3.0e9f);       // INT32_MAX
  i32[11] = tecc::float_to_int<int32_t>(-3.0e9f);      // INT32_MIN
  i32[12] = tecc::float_to_int<int32_t>(tecc::nan_f32());  // 0
  i32[13] = tecc::float_to_int<int32_t>(-2.9f);        // -2
  i32[14] = tecc::abs(INT32_MIN);      // INT32_MIN (wraps)
  i32[15] = tecc::add(INT32_MAX, 1);   // INT32_MIN
  i64[0] = tecc::pow((int64_t)3, (int64_t)39);  // 4052555153018976267
  i64[1] = tecc::float_to_int<int64_t>(1e30);   // INT64_MAX
  i64[2] = tecc::mod((int64_t)-9, (int64_t)4);  // 3
  f[0] = tecc::floordiv(7.5f, -2.0f);  // -4
  f[1] = tecc::mod(7.5f, -2.0f);       // -0.5
  f[2] = tecc::mod(-0.0f, 3.0f);       // +0
  f[3] = tecc::maximum(1.0f, tecc::nan_f32());  // nan
  f[4] = tecc::minimum(tecc::nan_f32(), 1.0f);  // nan
  f[5] = tecc::round(2.5f);            // 2 (half to even)
  f[6] = tecc::round(-3.5f);           // -4
  f[7] = tecc::gelu(1.0f);             // 0.8413447460685429
  f[8] = tecc::softplus(100.0f);       // 100
  f[9] = tecc::softplus(-100.0f);      // 3.7e-44
  f[10] = tecc::sign(-0.0f);           // 0
  f[11] = tecc::isinf(-tecc::inf_f32()) ? 1.0f : 0.0f;
  f[12] = tecc::isfinite(tecc::nan_f32()) ? 1.0f : 0.0f;
  f[13] = tecc::round_bf16(1.00390625f);  // ties to even: 1.0
  f[14] = tecc::round_f16(65520.0f);   // inf (rounds past the max)
  h[0] = tecc::f32_to_f16(1.0f);       // 0x3c00
  h[1] = tecc::f32_to_bf16(-2.0f);     // 0xc000
  f[15] = tecc::f16_to_f32(0x7bff);    // 65504
  f[16] = tecc::bf16_to_f32(0x3f80);   // 1
  // 1 + 2^-8 + 2^-40 is just above a bf16 tie: rounding via f32 (to nearest)
  // would land on the tie and go to even (1.0); rounding once gives 1 + 2^-7
  h[2] = tecc::f64_to_bf16(1.0 + 1.0 / 256 + 1.0 / 1099511627776.0);  // 0x3f81
  h[3] = tecc::f64_to_f16(1.0 + 1.0 / 2048 + 1.0 / 1099511627776.0);  // 0x3c01
}

static void test_scalars(void) {
  int32_t *i32; int64_t *i64; float *f; uint16_t *h;
  cudaMallocManaged(&i32, 64 * 4); cudaMallocManaged(&i64, 64 * 8);
  cudaMallocManaged(&f, 64 * 4); cudaMallocManaged(&h, 64 * 2);
  scalar_kernel<<<1, 1>>>(i32, i64, f, h);
  ok(cudaDeviceSynchronize() == cudaSuccess, "scalar kernel ran");
  const int32_t ei[] = {-4, -1, -4, 1, 0, 0, INT32_MIN, 81, 0, -1, INT32_MAX, INT32_MIN, 0, -2, INT32_MIN, INT32_MIN};
  for (int i = 0; i < 16; i++) {
    char what[64];
    snprintf(what, sizeof what, "i32 helper %d gives %d (got %d)", i, ei[i], i32[i]);
    ok(i32[i] == ei[i], what);
  }
  ok(i64[0] == 4052555153018976267LL, "i64 pow by squaring");
  ok(i64[1] == INT64_MAX, "f64 -> i64 saturates");
  ok(i64[2] == 3, "i64 Python %");
  ok(f[0] == -4.0f && f[1] == -0.5f, "float // and % (numpy)");
  ok(f[2] == 0.0f && !signbit(f[2]), "float % of -0 by positive is +0");
  ok(isnan(f[3]) && isnan(f[4]), "maximum/minimum propagate NaN");
  ok(f[5] == 2.0f && f[6] == -4.0f, "round is half to even");
  ok(fabs(f[7] - 0.8413447460685429) < 1e-6, "gelu is the erf form");
  ok(f[8] == 100.0f && f[9] >= 0.0f && f[9] < 1e-40f, "softplus does not overflow");
  ok(f[10] == 0.0f && f[11] == 1.0f && f[12] == 0.0f, "sign, isinf, isfinite");
  ok(f[13] == 1.0f, "bf16 rounding ties to even");
  ok(isinf(f[14]), "f16 rounding overflows to inf");
  ok(h[0] == 0x3c00 && h[1] == 0xc000, "f32 -> f16 / bf16 bits");
  ok(h[2] == 0x3f81 && h[3] == 0x3c01, "f64 -> bf16 / f16 round once (no double rounding)");
  ok(f[15] == 65504.0f && f[16] == 1.0f, "f16 / bf16 bits -> f32");
  cudaFree(i32); cudaFree(i64); cudaFree(f); cudaFree(h);
}

// ---- block reductions ------------------------------------------------------
// One row per threadIdx.y: sum of 1..blockDim.x, max, and argmax with ties.
__global__ void row_kernel(float *sum, float *mx, int64_t *arg) {
  __shared__ float smem[1024];
  __shared__ tecc::Arg<float> sarg[1024];
  float v = (float)(threadIdx.x + 1);
  float s = tecc::row_allreduce(v, tecc::Sum(), smem);
  float m = tecc::row_allreduce(v * (threadIdx.y + 1), tecc::Max(), smem);
  // value 5 at every even lane: the first index (0) must win
  tecc::Arg<float> a = tecc::make_arg((threadIdx.x % 2 == 0) ? 5.0f : 1.0f, (int64_t)threadIdx.x);
  a = tecc::row_allreduce(a, tecc::ArgMax(), sarg);
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  sum[t] = s;
  mx[t] = m;
  arg[t] = a.i;
}

static void test_rows(int tx, int ty) {
  int n = tx * ty;
  float *s, *m; int64_t *a;
  cudaMallocManaged(&s, n * 4); cudaMallocManaged(&m, n * 4); cudaMallocManaged(&a, n * 8);
  row_kernel<<<1, dim3(tx, ty)>>>(s, m, a);
  bool good = cudaDeviceSynchronize() == cudaSuccess;
  for (int y = 0; y < ty && good; y++)
    for (int x = 0; x < tx; x++) {
      int t = y * tx + x;
      good &= s[t] == (float)tx * (tx + 1) / 2 && m[t] == (float)tx * (y + 1) && a[t] == 0;
    }
  char what[80];
  snprintf(what, sizeof what, "row_allreduce with blockDim (%d, %d)", tx, ty);
  ok(good, what);
  cudaFree(s); cudaFree(m); cudaFree(a);
}

// NaN wins argmax, and the first NaN among several.
__global__ void argnan_kernel(int64_t *out) {
  float v = (threadIdx.x == 7 || threadIdx.x == 20) ? tecc::nan_f32() : (float)threadIdx.x;
  tecc::Arg<float> a = tecc::warp_allreduce(tecc::make_arg(v, (int64_t)threadIdx.x), tecc::ArgMax());
  tecc::Arg<float> b = tecc::warp_allreduce(tecc::make_arg(v, (int64_t)threadIdx.x), tecc::ArgMin());
  if (threadIdx.x == 0) { out[0] = a.i; out[1] = b.i; }
}

__global__ void column_kernel(float *out) {
  __shared__ float smem[3 * 256];
  float v[3] = {(float)(threadIdx.y + 1), (float)threadIdx.x, (float)(threadIdx.y * threadIdx.y)};
  tecc::column_reduce<3>(v, tecc::Sum(), smem);
  if (threadIdx.y == 0)
    for (int k = 0; k < 3; k++) out[3 * threadIdx.x + k] = v[k];
}

static void test_args_and_columns(void) {
  int64_t *o; float *c;
  cudaMallocManaged(&o, 16); cudaMallocManaged(&c, 3 * 32 * 4);
  argnan_kernel<<<1, 32>>>(o);
  column_kernel<<<1, dim3(32, 8)>>>(c);
  bool ran = cudaDeviceSynchronize() == cudaSuccess;
  ok(ran && o[0] == 7 && o[1] == 7, "argmax/argmin: the first NaN wins");
  bool good = ran;
  for (int i = 0; i < 32; i++) good &= c[3 * i] == 36.0f && c[3 * i + 1] == 8.0f * i && c[3 * i + 2] == 140.0f;
  ok(good, "column_reduce of 3 columns over blockDim.y = 8");
  cudaFree(o); cudaFree(c);
}

// ---- launch_rows: the warp variant's block --------------------------------
// Rows in groups of blockDim.y * rows, as the warp variant visits them
// (lib/emit_stitch.c): count each row once, record the block's rows.
__global__ void light_rows_kernel(int *count, int *block_rows, int64_t n, int rows) {
  for (int64_t ob = (int64_t)blockIdx.x * blockDim.y * rows; ob < n; ob += (int64_t)gridDim.x * blockDim.y * rows)
    for (int i = 0; i < rows; i++) {
      const int64_t o = ob + threadIdx.y + (int64_t)i * blockDim.y;
      if (o < n && threadIdx.x == 0) atomicAdd(&count[o], 1);
    }
  if (threadIdx.x == 0 && threadIdx.y == 0) atomicMax(block_rows, (int)blockDim.y);
}

// The same with 64 values live across the rows (loaded before the
// atomics, which may alias them, used after): 64 registers or more, as
// ptxas gives the norms' warp variants.
__global__ void heavy_rows_kernel(int *count, int *block_rows, int64_t n, int rows, const float *v) {
  float h[64];
#pragma unroll
  for (int k = 0; k < 64; k++) h[k] = v[(threadIdx.x + k) % 64];
  for (int64_t ob = (int64_t)blockIdx.x * blockDim.y * rows; ob < n; ob += (int64_t)gridDim.x * blockDim.y * rows)
    for (int i = 0; i < rows; i++) {
      const int64_t o = ob + threadIdx.y + (int64_t)i * blockDim.y;
      if (o < n && threadIdx.x == 0) atomicAdd(&count[o], 1);
    }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 64; k++) s = s * h[63 - k] + h[k];
  if (threadIdx.x == 0 && threadIdx.y == 0) atomicMax(block_rows, s == 12345.0f ? 0 : (int)blockDim.y);
}

// Every row visited once, in blocks of `want` rows.
template <typename K, typename... Extra>
static bool rows_once(K kernel, int64_t n, int tx, int rows, int sm_threads, int want, Extra... extra) {
  static tecc::DeviceCache cache[2];
  int *count, *block_rows;
  cudaMallocManaged(&count, n * sizeof(int));
  cudaMallocManaged(&block_rows, sizeof(int));
  bool good = true;
  for (int call = 0; call < 2; call++) { /* the second from the cache */
    memset(count, 0, n * sizeof(int));
    *block_rows = 0;
    tecc::launch_rows(cache[sm_threads ? 1 : 0], kernel, n, tx, 128 / tx, rows, sm_threads, 0, count, block_rows, n,
                      rows, extra...);
    good &= cudaGetLastError() == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess && *block_rows == want;
    for (int64_t i = 0; i < n && good; i++) good &= count[i] == 1;
  }
  cudaFree(count);
  cudaFree(block_rows);
  return good;
}

static void test_launch_rows(void) {
  float *v;
  cudaMallocManaged(&v, 64 * sizeof(float));
  for (int k = 0; k < 64; k++) v[k] = 1.0f / (k + 1);
  cudaFuncAttributes fa;
  const int regs = cudaFuncGetAttributes(&fa, heavy_rows_kernel) == cudaSuccess ? fa.numRegs : 0;
  const int64_t n = 100003;
  // few registers: 128-thread blocks hold more warps than 32 one-warp blocks
  ok(rows_once(light_rows_kernel, n, 8, 2, 1024, 16) && rows_once(light_rows_kernel, n, 16, 1, 0, 8),
     "launch_rows: a light kernel in blocks of 128 threads, each row once (a wave, a block per row group)");
  char what[120];
  snprintf(what, sizeof what, "launch_rows: a kernel of %d registers (>= 57) in blocks of one warp, each row once", regs);
  ok(regs >= 57 && rows_once(heavy_rows_kernel, n, 8, 2, 1024, 4, (const float *)v) &&
         rows_once(heavy_rows_kernel, n, 32, 1, 0, 1, (const float *)v),
     what);
  cudaFree(v);
}

// ---- FastDiv ----------------------------------------------------------------
__global__ void fastdiv_kernel(tecc::FastDiv<int32_t> d, const int32_t *n, int count, int *bad) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x)
    if (d.div(n[i]) != n[i] / d.value()) atomicAdd(bad, 1);
}

static void test_fastdiv(void) {
  const int count = 1 << 16;
  int32_t *n; int *bad;
  cudaMallocManaged(&n, count * 4); cudaMallocManaged(&bad, 4);
  const int64_t divisors[] = {1, 2, 3, 7, 10, 255, 256, 1000, 4095, 65537, 1 << 20, 1000003, 1 << 29, (1 << 30) - 1, 1 << 30};
  bool good = true;
  uint32_t seed = 1;
  for (size_t k = 0; k < sizeof divisors / sizeof divisors[0]; k++) {
    for (int i = 0; i < count; i++) {
      seed = seed * 1664525u + 1013904223u;
      n[i] = i < 64 ? (int32_t)((1 << 30) - i) : (int32_t)(seed >> 2);  // [0, 2^30]
    }
    *bad = 0;
    fastdiv_kernel<<<64, 256>>>(tecc::FastDiv<int32_t>(divisors[k]), n, count, bad);
    good &= cudaDeviceSynchronize() == cudaSuccess && *bad == 0;
  }
  ok(good, "FastDiv<int32_t> equals division for indices up to 2^30");
  cudaFree(n); cudaFree(bad);
}

// ---- packs of 1-byte elements at any byte (load/store_unaligned_bytes) --------
// Packs of N = 16 (and 8) elements.  A tensor of `total` bytes starts at
// buf + base (base 0..3: any alignment of its own), a pack at element `at`
// of it (at 0..7: every start 0..3 mod 4, with and without a whole word
// before it); every n 0..N, and totals that end the tensor inside, at and
// past the words the pack spans (so both the words and the element-by-
// element path run).  The expected values are read element by element from
// the same memory.
enum { PB = 64 };  // bytes of each buffer: base + at + total <= 3 + 7 + 21 < PB

template <int N, typename T, typename IndexT>
__global__ void unaligned_bytes_kernel(const T *src, T *dst, int *bad) {
  for (int base = 0; base < 4; base++)
    for (IndexT at = 0; at < 8; at++)
      for (IndexT extra = 0; extra <= 5; extra++) {  // total = at + N + extra
        const T *t = src + base;
        const IndexT total = at + N + extra;
        for (IndexT n = 0; n <= N; n++) {
          const tecc::Pack<T, N> r = tecc::load_unaligned_bytes<N>(t, at, n, total);
          for (int j = 0; j < N; j++)
            if (r.v[j] != (j < n ? t[at + j] : (T)0)) atomicAdd(bad, 1);
        }
      }
  // stores: a pack of values 1..N at every byte offset s, its first n (> 0;
  // past N the whole pack) elements, nothing else written
  tecc::Pack<T, N> v;
  for (int j = 0; j < N; j++) v.v[j] = (T)(j + 1);
  for (int s = 0; s < 8; s++)
    for (IndexT n = 1; n <= N + 4; n++) {
      for (int i = 0; i < PB; i++) dst[i] = (T)0x5a;
      tecc::store_unaligned_bytes(dst + s, v, n);
      for (int i = 0; i < PB; i++) {
        const int j = i - s;
        const bool stored = j >= 0 && j < N && j < n;
        if (dst[i] != (stored ? (T)(j + 1) : (T)0x5a)) atomicAdd(bad, 1);
      }
    }
}

template <int N, typename T, typename IndexT>
static bool unaligned_bytes_once(void) {
  T *src, *dst;
  int *bad;
  cudaMallocManaged(&src, PB); cudaMallocManaged(&dst, PB); cudaMallocManaged(&bad, 4);
  for (int i = 0; i < PB; i++) src[i] = (T)(i * 37 + 11);  // distinct, and some with the top bit set
  *bad = 0;
  unaligned_bytes_kernel<N, T, IndexT><<<1, 1>>>(src, dst, bad);
  const bool good = cudaDeviceSynchronize() == cudaSuccess && *bad == 0;
  cudaFree(src); cudaFree(dst); cudaFree(bad);
  return good;
}

static void test_unaligned_bytes(void) {
  ok(unaligned_bytes_once<16, int8_t, int32_t>() && unaligned_bytes_once<16, uint8_t, int64_t>(),
     "load_unaligned_bytes, store_unaligned_bytes, 16 (int8_t, uint8_t): every byte offset and count, as element by element");
  ok(unaligned_bytes_once<8, uint8_t, int32_t>() && unaligned_bytes_once<8, int8_t, int64_t>(),
     "load_unaligned_bytes, store_unaligned_bytes, 8: every byte offset and count, as element by element");
}

// ---- host helpers -------------------------------------------------------------
static void test_host(void) {
  int64_t n = 0;
  const int64_t dims[] = {1 << 20, 1 << 20, 1 << 20, 1 << 10};
  ok(!tecc::numel(dims, 4, &n), "numel detects int64 overflow");
  const int64_t neg[] = {3, -1};
  ok(!tecc::numel(neg, 2, &n), "numel rejects a negative size");
  char buf[64];
  ok(tecc::overlap(buf, 16, buf + 8, 16) && !tecc::overlap(buf, 8, buf + 8, 8) && !tecc::overlap(buf, 0, buf, 8),
     "overlap of byte ranges");
  ok(tecc::pow2_at_least(1, 32, 1024) == 32 && tecc::pow2_at_least(100, 32, 1024) == 128 &&
         tecc::pow2_at_least(1 << 20, 32, 1024) == 1024,
     "pow2_at_least");
  int sms = tecc::sm_count();
  ok(sms > 0 && sms == tecc::sm_count(), "sm_count is cached and positive");
  ok(tecc::sat_mul(INT64_C(1) << 40, INT64_C(1) << 40) == INT64_MAX && tecc::sat_mul(6, 7) == 42, "sat_mul");
  ok(tecc::aligned_to(buf + 0 + (16 - ((uintptr_t)buf & 15)) % 16, 16) && !tecc::aligned_to((char *)8, 16), "aligned_to");
  // split reductions: few outputs and long rows split; the chunks cover the range exactly
  const int64_t cases[][3] = {{1, 1 << 26, 1}, {4, 1000003, 1}, {1, 0, 1}, {100000, 1024, 1}, {7, 1 << 20, 0}, {1, 5, 0}};
  bool good = true;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tecc::Launch l;
    l.grid = tecc::grid_size(cases[i][0], cases[i][2] ? 1 : 32, 8);
    tecc::split_launch(&l, cases[i][1], cases[i][2] ? 1024 : 32);
    good &= l.splits >= 1 && l.splits <= 1024 && l.chunk * l.splits >= cases[i][1] &&
            (l.splits == 1 || l.chunk * (l.splits - 1) < cases[i][1]);
  }
  tecc::Launch big;
  big.grid = 1;
  tecc::split_launch(&big, INT64_C(1) << 26, 1024);
  ok(good && big.splits > 1, "split_launch splits long reductions of few outputs, chunks cover the range");
}

int main(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("1..0 # SKIP no CUDA device\n");
    return 0;
  }
  test_scalars();
  const int shapes[][2] = {{4, 32}, {8, 16}, {16, 8}, {32, 8}, {64, 4}, {128, 2}, {256, 1}, {512, 1}, {1024, 1}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) test_rows(shapes[i][0], shapes[i][1]);
  test_args_and_columns();
  test_fastdiv();
  test_launch_rows();
  test_unaligned_bytes();
  test_host();
  printf("1..%d\n", g_test);
  return g_failed ? 1 : 0;
}
