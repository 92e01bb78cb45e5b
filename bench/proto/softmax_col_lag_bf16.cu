// Hand prototype (session 22): softmax over axis 0 of a bf16 [M, N] in ONE
// persistent launch that reads x from HBM once.  Tiles of H rows x 128
// columns; in ticket order the statistics of a tile (S items: each
// column's max and sum of exp over the tile's rows) and its output (N
// items), the N items lagging the S items by LAG column blocks, so that a
// tile's second read finds it in L2.  The last S item of a column block
// folds its tiles' partials in chunk order (deterministic) into the
// block's column statistics; an N item waits (spins) until they are there.
//
// Measured (bench/NOTES.md, session 22): 1.09-1.35x SLOWER than tecc's
// two-read kernel on an H100.  Known prototype bug: the counters are sized
// by the first call's column blocks (g_ws is not regrown with N / 128), so
// a later call with more column blocks overruns them (the 1.0 difference
// at 1024 x 65536 in bench/results/h100-2026-12-07-s22-lag.txt).
#include <cuda_runtime.h>
#include <stdint.h>
#include "softmax_col_bf16.h"

#ifndef LAG_BLOCKS
#define LAG_BLOCKS 1
#endif
#ifndef TILE_H
#define TILE_H 1024
#endif
#define W 128       /* columns a tile: 16 threads of 8 */
#define THREADS 256 /* 16 rows at a time */
#define K 4         /* rows a thread loads before it folds them */

namespace {

struct Ws {
  unsigned ticket, exited, pad0, pad1;
  unsigned done[1]; /* [column blocks]: 0..RC S items done; RC + 1 once the statistics are written */
};

__device__ __forceinline__ float bf(uint32_t w, int hi) { return __uint_as_float(hi ? w & 0xffff0000u : w << 16); }
__device__ __forceinline__ uint32_t f2bf(float f) { /* round to nearest even */
  uint32_t u = __float_as_uint(f);
  return (u + 0x7fffu + ((u >> 16) & 1)) >> 16;
}

__global__ void __launch_bounds__(THREADS, 4) sc_lag(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int M, int N,
                                                     int lag, Ws *ws, float2 *part, float2 *stat) {
  __shared__ int s_item;
  __shared__ bool s_last;
  __shared__ float2 s_red[16][W + 1];
  const int CB = N / W, RC = (M + TILE_H - 1) / TILE_H, R = CB * RC;
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4; /* tx: 8 columns; ty: a row of 16 */
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
    const int j = i / RC, r = i - j * RC; /* column block, row chunk */
    const int row0 = r * TILE_H, rows = min(TILE_H, M - row0);
    const uint4 *base = reinterpret_cast<const uint4 *>(x + (size_t)row0 * N + j * W) + tx;
    const size_t stride = (size_t)N / 8; /* packs a row */
    if (stats) {
      float m[8], s[8];
#pragma unroll
      for (int c = 0; c < 8; c++) { m[c] = -INFINITY; s[c] = 0.f; }
      for (int q = ty; q < rows; q += 16 * K) {
        uint4 v[K];
#pragma unroll
        for (int k = 0; k < K; k++) {
          const int rr = q + 16 * k;
          v[k] = rr < rows ? base[(size_t)rr * stride] : make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);
        }
#pragma unroll
        for (int c = 0; c < 8; c++) {
          float mx = m[c];
#pragma unroll
          for (int k = 0; k < K; k++) {
            const uint32_t wv = (&v[k].x)[c >> 1];
            mx = fmaxf(mx, bf(wv, c & 1));
          }
          float acc = s[c] * __expf(m[c] - mx);
          if (mx == -INFINITY) acc = 0.f;
#pragma unroll
          for (int k = 0; k < K; k++) {
            const uint32_t wv = (&v[k].x)[c >> 1];
            const float e = bf(wv, c & 1);
            acc += mx == -INFINITY ? 0.f : __expf(e - mx);
          }
          m[c] = mx;
          s[c] = acc;
        }
      }
#pragma unroll
      for (int c = 0; c < 8; c++) s_red[ty][tx * 8 + c] = make_float2(m[c], s[c]);
      __syncthreads();
      if (threadIdx.x < W) { /* a column: fold the 16 rows' partials in order */
        float mx = -INFINITY;
        for (int k = 0; k < 16; k++) mx = fmaxf(mx, s_red[k][threadIdx.x].x);
        float acc = 0.f;
        for (int k = 0; k < 16; k++) {
          const float2 p = s_red[k][threadIdx.x];
          if (p.x != -INFINITY) acc += p.y * __expf(p.x - mx);
        }
        part[(size_t)i * W + threadIdx.x] = make_float2(mx, acc);
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        __threadfence();
        s_last = atomicAdd(&ws->done[j], 1u) == (unsigned)RC - 1;
        if (s_last) __threadfence();
      }
      __syncthreads();
      if (s_last && threadIdx.x < W) { /* the column block's chunks, in order */
        const float2 *pp = part + (size_t)j * RC * W + threadIdx.x;
        float mx = -INFINITY;
        for (int k = 0; k < RC; k++) mx = fmaxf(mx, __ldcg(pp + (size_t)k * W).x);
        float acc = 0.f;
        for (int k = 0; k < RC; k++) {
          const float2 p = __ldcg(pp + (size_t)k * W);
          if (p.x != -INFINITY) acc += p.y * __expf(p.x - mx);
        }
        stat[j * W + threadIdx.x] = make_float2(mx, 1.0f / acc);
      }
      if (s_last) {
        __syncthreads();
        if (threadIdx.x == 0) {
          __threadfence();
          atomicAdd(&ws->done[j], 1u); /* RC + 1: the statistics are there */
        }
      }
    } else {
      if (threadIdx.x == 0) {
        volatile unsigned *d = &ws->done[j];
        while (*d < (unsigned)RC + 1) {
        }
        __threadfence();
      }
      __syncthreads();
      float mx[8], rs[8];
#pragma unroll
      for (int c = 0; c < 8; c++) {
        const float2 p = __ldcg(stat + j * W + tx * 8 + c);
        mx[c] = p.x;
        rs[c] = p.y;
      }
      uint4 *ob = reinterpret_cast<uint4 *>(y + (size_t)row0 * N + j * W) + tx;
      for (int q = ty; q < rows; q += 16 * K) {
        uint4 v[K];
#pragma unroll
        for (int k = 0; k < K; k++) {
          const int rr = q + 16 * k;
          if (rr < rows) v[k] = __ldcs(base + (size_t)rr * stride);
        }
#pragma unroll
        for (int k = 0; k < K; k++) {
          const int rr = q + 16 * k;
          if (rr >= rows) continue;
          uint32_t o[4];
#pragma unroll
          for (int h = 0; h < 4; h++) {
            const uint32_t wv = (&v[k].x)[h];
            const float a = __expf(bf(wv, 0) - mx[2 * h]) * rs[2 * h];
            const float b = __expf(bf(wv, 1) - mx[2 * h + 1]) * rs[2 * h + 1];
            o[h] = f2bf(a) | (f2bf(b) << 16);
          }
          __stcs(ob + (size_t)rr * stride, make_uint4(o[0], o[1], o[2], o[3]));
        }
      }
    }
  }
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&ws->exited, 1u) == gridDim.x - 1) {
      for (int k = 0; k < CB; k++) ws->done[k] = 0;
      ws->ticket = 0;
      __threadfence();
      ws->exited = 0;
    }
  }
}

Ws *g_ws;
float2 *g_part, *g_stat;
int64_t g_cap;

}  // namespace

extern "C" tecc_status softmax_col_bf16(const tecc_bf16 *x, tecc_bf16 *y, int64_t M, int64_t N, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || N % W || M * N > INT32_MAX) return TECC_ERROR_INVALID_VALUE;
  const int CB = (int)(N / W), RC = (int)((M + TILE_H - 1) / TILE_H);
  if ((int64_t)CB * RC * W > g_cap) { /* prototype: grown once, zeroed */
    if (g_ws) { cudaFree(g_ws); cudaFree(g_part); cudaFree(g_stat); }
    g_cap = (int64_t)CB * RC * W;
    if (cudaMalloc(&g_ws, sizeof(Ws) + 4 * CB) != cudaSuccess) return TECC_ERROR_OUT_OF_MEMORY;
    if (cudaMalloc(&g_part, sizeof(float2) * g_cap) != cudaSuccess) return TECC_ERROR_OUT_OF_MEMORY;
    if (cudaMalloc(&g_stat, sizeof(float2) * g_cap) != cudaSuccess) return TECC_ERROR_OUT_OF_MEMORY;
    cudaMemset(g_ws, 0, sizeof(Ws) + 4 * CB);
    cudaDeviceSynchronize();
  }
  int sms = 0, per = 0, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, sc_lag, THREADS, 0);
  int lag = LAG_BLOCKS * RC;
  if (lag > CB * RC) lag = CB * RC;
  sc_lag<<<sms * per, THREADS, 0, stream>>>(reinterpret_cast<const uint16_t *>(x), reinterpret_cast<uint16_t *>(y), (int)M,
                                            (int)N, lag, g_ws, g_part, g_stat);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? TECC_SUCCESS : (tecc_status)(TECC_ERROR_CUDA + (int)e);
}
