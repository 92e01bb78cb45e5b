// Hand prototype (session 22): a batch norm over [B, C, N] (reducing axes
// 0 and 2) in ONE persistent launch that reads x from HBM once.  Work
// items in ticket order: the statistics of row (c, b) (S items) and the
// normalization of row (c, b) (N items), the N items lagging the S items
// by LAG rows, so that a row's second read finds it in L2.  A channel's
// N items wait (spin) until its B S items are done; its statistics are
// combined from the B row partials in a fixed order (deterministic).
// f32 by default; -DBN_BF16 builds batchnorm_bf16 (packs of 8).
#include <cuda_runtime.h>
#include <stdint.h>
#ifdef BN_BF16 /* -DBN_BF16: batchnorm_bf16, x, w, b and y bf16 (packs of 8) */
#include "batchnorm_bf16.h"
#else
#include "batchnorm_f32.h"
#endif

#ifndef LAG_CHANNELS
#define LAG_CHANNELS 8
#endif
#define ITEMS 8

namespace {

struct Ws {
  unsigned ticket, exited, pad0, pad1;
  unsigned done[1]; /* [C] */
};

/* The element type: its 16-byte pack, how a pack adds to a row's centred
 * sums (about x0) and how it is normalized (x * rs + sh). */
#ifndef BN_BF16
struct E { /* f32 */
  typedef float T;
  typedef float4 P;
  static constexpr int V = 4;
  static __device__ __forceinline__ float f(float v) { return v; }
  static __device__ __forceinline__ P fill(float x0) { return make_float4(x0, x0, x0, x0); }
  static __device__ __forceinline__ void sums(const P &v, float x0, float &sd, float &sdd) {
    const float d0 = v.x - x0, d1 = v.y - x0, d2 = v.z - x0, d3 = v.w - x0;
    sd += (d0 + d1) + (d2 + d3);
    sdd = fmaf(d0, d0, sdd); sdd = fmaf(d1, d1, sdd); sdd = fmaf(d2, d2, sdd); sdd = fmaf(d3, d3, sdd);
  }
  static __device__ __forceinline__ P norm(const P &v, float rs, float sh) {
    return make_float4(fmaf(v.x, rs, sh), fmaf(v.y, rs, sh), fmaf(v.z, rs, sh), fmaf(v.w, rs, sh));
  }
};
#else
struct E { /* bf16 */
  typedef uint16_t T;
  typedef uint4 P;
  static constexpr int V = 8;
  static __device__ __forceinline__ float f(uint16_t v) { return __uint_as_float((uint32_t)v << 16); }
  static __device__ __forceinline__ uint32_t bf(float f) { /* round to nearest even */
    const uint32_t u = __float_as_uint(f);
    return (u + 0x7fffu + ((u >> 16) & 1)) >> 16;
  }
  static __device__ __forceinline__ P fill(float x0) {
    const uint32_t h = __float_as_uint(x0) >> 16, hh = h | (h << 16);
    return make_uint4(hh, hh, hh, hh);
  }
  static __device__ __forceinline__ void sums(const P &v, float x0, float &sd, float &sdd) {
#pragma unroll
    for (int q = 0; q < 4; q++) {
      const uint32_t wv = (&v.x)[q];
      const float d0 = __uint_as_float(wv << 16) - x0, d1 = __uint_as_float(wv & 0xffff0000u) - x0;
      sd += d0 + d1;
      sdd = fmaf(d0, d0, sdd); sdd = fmaf(d1, d1, sdd);
    }
  }
  static __device__ __forceinline__ P norm(const P &v, float rs, float sh) {
    uint32_t o[4];
#pragma unroll
    for (int q = 0; q < 4; q++) {
      const uint32_t wv = (&v.x)[q];
      o[q] = bf(fmaf(__uint_as_float(wv << 16), rs, sh)) | (bf(fmaf(__uint_as_float(wv & 0xffff0000u), rs, sh)) << 16);
    }
    return make_uint4(o[0], o[1], o[2], o[3]);
  }
};
#endif

__global__ void __launch_bounds__(1024) bn_lag(const E::T *__restrict__ x, const E::T *__restrict__ w,
                                               const E::T *__restrict__ bias, E::T *__restrict__ y,
                                               int B, int C, int N, int lag, Ws *ws, float2 *part) {
  __shared__ int s_item;
  __shared__ float s_red[2][32];
  __shared__ float s_stat[2];
  const int R = B * C;            /* rows, channel-major: row i = (c = i / B, b = i % B) */
  const int packs = N / E::V;
  const int T = blockDim.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = T >> 5;
  const float rn = 1.0f / (float)N;
  for (;;) {
    if (threadIdx.x == 0) s_item = (int)atomicAdd(&ws->ticket, 1u);
    __syncthreads();
    const int t = s_item;
    __syncthreads();
    if (t >= 2 * R) break;
    bool stats;
    int i;
    if (t < lag) { stats = true; i = t; }
    else if (t < 2 * R - lag) { const int u = t - lag; stats = u & 1; i = stats ? lag + (u >> 1) : (u >> 1); }
    else { stats = false; i = t - R; }
    const int c = i / B, b = i - c * B;
    const E::P *row = reinterpret_cast<const E::P *>(x + ((size_t)b * C + c) * N);
    if (stats) {
      const float x0 = E::f(__ldg(x + ((size_t)b * C + c) * N));
      float sd = 0.f, sdd = 0.f;
      for (int p0 = 0; p0 < packs; p0 += T * ITEMS) {
        E::P v[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
          const int p = p0 + k * T + threadIdx.x;
          v[k] = p < packs ? row[p] : E::fill(x0);
        }
#pragma unroll
        for (int k = 0; k < ITEMS; k++) E::sums(v[k], x0, sd, sdd);
      }
#pragma unroll
      for (int m = 16; m > 0; m >>= 1) {
        sd += __shfl_xor_sync(0xffffffffu, sd, m);
        sdd += __shfl_xor_sync(0xffffffffu, sdd, m);
      }
      if (lane == 0) { s_red[0][warp] = sd; s_red[1][warp] = sdd; }
      __syncthreads();
      if (threadIdx.x == 0) {
        float a = 0.f, q = 0.f;
        for (int k = 0; k < warps; k++) { a += s_red[0][k]; q += s_red[1][k]; }
        const float dm = a * rn;                       /* mean - x0 */
        const float m2 = fmaxf(q - a * dm, 0.f);       /* sum of (x - mean)^2 */
        part[i] = make_float2(x0 + dm, m2);
        __threadfence();
        atomicAdd(&ws->done[c], 1u);
      }
    } else {
      if (threadIdx.x == 0) {
        volatile unsigned *d = &ws->done[c];
        while (*d < (unsigned)B) {
        }
        __threadfence();
      }
      __syncthreads();
      if (warp == 0) { /* the channel's B partials, in order: Chan's equal-count merge */
        float mean = 0.f;
        for (int k = lane; k < B; k += 32) mean += __ldcg(&part[c * B + k].x);
#pragma unroll
        for (int m = 16; m > 0; m >>= 1) mean += __shfl_xor_sync(0xffffffffu, mean, m);
        mean /= (float)B;
        float m2 = 0.f;
        for (int k = lane; k < B; k += 32) {
          const float2 p = __ldcg(&part[c * B + k]);
          const float dd = p.x - mean;
          m2 += p.y + (float)N * dd * dd;
        }
#pragma unroll
        for (int m = 16; m > 0; m >>= 1) m2 += __shfl_xor_sync(0xffffffffu, m2, m);
        if (lane == 0) {
          s_stat[0] = mean;
          s_stat[1] = rsqrtf(m2 / ((float)N * (float)B) + 1e-5f);
        }
      }
      __syncthreads();
      const float mean = s_stat[0], rs = s_stat[1] * E::f(w[c]), sh = E::f(bias[c]) - mean * rs;
      E::P *out = reinterpret_cast<E::P *>(y + ((size_t)b * C + c) * N);
      for (int p0 = 0; p0 < packs; p0 += T * ITEMS) {
        E::P v[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
          const int p = p0 + k * T + threadIdx.x;
          if (p < packs) v[k] = __ldcs(row + p);
        }
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
          const int p = p0 + k * T + threadIdx.x;
          if (p < packs) __stcs(out + p, E::norm(v[k], rs, sh));
        }
      }
    }
  }
  /* the last block out resets the counters for the next call */
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&ws->exited, 1u) == gridDim.x - 1) {
      for (int k = 0; k < C; k++) ws->done[k] = 0;
      ws->ticket = 0;
      __threadfence();
      ws->exited = 0;
    }
  }
}

Ws *g_ws;
float2 *g_part;
int g_cap_c, g_cap_r;

}  // namespace

#ifdef BN_BF16
extern "C" tecc_status batchnorm_bf16(const tecc_bf16 *x, const tecc_bf16 *w, const tecc_bf16 *b, tecc_bf16 *y, int64_t B,
                                      int64_t M, int64_t N, cudaStream_t stream) {
#else
extern "C" tecc_status batchnorm_f32(const float *x, const float *w, const float *b, float *y, int64_t B, int64_t M,
                                     int64_t N, cudaStream_t stream) {
#endif
  if (B <= 0 || M <= 0 || N <= 0 || N % E::V || B * M * N > INT32_MAX) return TECC_ERROR_INVALID_VALUE;
  if (M > g_cap_c || B * M > g_cap_r) { /* prototype: grown once, zeroed */
    if (g_ws) { cudaFree(g_ws); cudaFree(g_part); }
    g_cap_c = (int)M; g_cap_r = (int)(B * M);
    if (cudaMalloc(&g_ws, sizeof(Ws) + 4 * M) != cudaSuccess) return TECC_ERROR_OUT_OF_MEMORY;
    if (cudaMalloc(&g_part, sizeof(float2) * B * M) != cudaSuccess) return TECC_ERROR_OUT_OF_MEMORY;
    cudaMemset(g_ws, 0, sizeof(Ws) + 4 * M);
    cudaDeviceSynchronize();
  }
  const int packs = (int)(N / E::V);
  int T = 32 * ((packs + ITEMS * 32 - 1) / (ITEMS * 32));
  if (T > 512) T = 512;
  int sms = 0, per = 0, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, bn_lag, T, 0);
#ifdef LAG_MB
  int lag = (int)((double)LAG_MB * 1048576.0 / (double)(N * sizeof(E::T)));
  if (lag < B) lag = (int)B;
#else
  int lag = LAG_CHANNELS * (int)B;
#endif
  if (lag > B * M) lag = (int)(B * M);
  bn_lag<<<sms * per, T, 0, stream>>>(x, w, b, y, (int)B, (int)M, (int)N, lag, g_ws, g_part);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? TECC_SUCCESS : (tecc_status)(TECC_ERROR_CUDA + (int)e);
}
