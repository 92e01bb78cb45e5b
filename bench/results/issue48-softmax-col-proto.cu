/* issue 48, 2026-12-04: softmax(x, 0) of a bf16 [M, N] read from HBM once,
 * a measurement prototype and not part of tecc.  The columns are cut into
 * slabs of W (64 to 512 bytes of each row); a slab's rows into P chunks,
 * each held in the registers of one block of a cooperative grid; the
 * blocks of a slab exchange (max, sum) partials through global memory and
 * a counter of their own, fold them in chunk order and write y from the
 * registers.  Build: `tecc -O2 examples/softmax_col.te -o sc.cu` (for the
 * tecc column beside it), then `nvcc -O3 -arch=sm_90 -o proto
 * issue48-softmax-col-proto.cu sc.cu`.  Results:
 * bench/results/h200-2026-12-04-softmax-col.txt, bench/NOTES.md. */
// softmax over axis 0 of x[M, N] bf16 in one HBM read, slabs of
// W columns (W*2 bytes of a row) held across the whole grid.  A cooperative
// grid of one 1024-thread block an SM; a slab's rows split into P chunks of
// CHUNK rows held in registers by P blocks (a group); per round:
//   partials (max, sum) of the block's chunk -> global; barrier 1;
//   block b folds the P partials of its W/P columns (fixed order) -> finals;
//   barrier 2; every block reads the slab's W finals; writes y.
// AHEAD: the next round's chunk copied into shared memory (cp.async) after
// the partials, so HBM keeps reading across the barriers and the writes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include "sc.h"

constexpr int ITEMS = 8;
struct Part { float m, s; };

__device__ __forceinline__ float fexp(float d) {  // e^d, ex2.approx.ftz
  float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d * 1.4426950408889634f)); return r;
}
__device__ __forceinline__ void merge(float &m, float &s, float m2, float s2) {
  float mm = fmaxf(m, m2);
  s = s * fexp(m - mm) + s2 * fexp(m2 - mm);
  m = mm;
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
  unsigned v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v;
}
__device__ __forceinline__ void cp16(void *smem, const void *g) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" :: "r"(s), "l"(g) : "memory");
}
__device__ __forceinline__ float2 unpack(__nv_bfloat162 h) {
  float2 f; uint32_t w = *(uint32_t *)&h;
  asm volatile("{ shl.b32 %0, %2, 16; and.b32 %1, %2, 0xffff0000; }" : "=f"(f.x), "=f"(f.y) : "r"(w));
  return f;
}
__device__ __forceinline__ void group_barrier(unsigned *bar, unsigned target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(bar, 1u);
    while ((int)(ld_acquire(bar) - target) < 0) {}
  }
  __syncthreads();
}

template <int W, bool AHEAD, int T, bool ONEBAR = false>
__global__ void __launch_bounds__(T, 1024 / T) colsoft(const uint4 *__restrict__ x, uint4 *__restrict__ y, int M, int N,
                                                   Part *part, Part *fin, unsigned *bar, unsigned base) {
  constexpr int LX = W / 8, LY = T / LX, CHUNK = LY * ITEMS;
  extern __shared__ uint4 dyn[];
  Part (*red)[W] = (Part (*)[W])dyn;                       // [LY][W]
  uint4 *ahead = dyn + LY * W * sizeof(Part) / 16;         // [ITEMS][T]
  __shared__ float fm[W], fr[W];
  const int P = M / CHUNK, S = N / W, groups = gridDim.x / P;
  const int g = blockIdx.x / P, c = blockIdx.x % P;
  const int tx = threadIdx.x % LX, ty = threadIdx.x / LX;
  const int NP = N / 8;
  const int mine = W / P;  // columns this block folds (W % P == 0 assumed, else 0..)
  int round = 0;
  for (int slab = g; slab < S; slab += groups, round++) {
    uint4 v[ITEMS];
    if (AHEAD && round > 0) {
      asm volatile("cp.async.wait_all;" ::: "memory");
#pragma unroll
      for (int i = 0; i < ITEMS; i++) v[i] = ahead[i * T + threadIdx.x];
    } else {
      const uint4 *px = x + (size_t)(c * CHUNK + ty) * NP + slab * LX + tx;
#pragma unroll
      for (int i = 0; i < ITEMS; i++, px += (size_t)LY * NP) v[i] = __ldcs(px);
    }
#pragma unroll
    for (int jh = 0; jh < 2; jh++) {
      float m[4], s[4];
#pragma unroll
      for (int j = 0; j < 4; j++) m[j] = -INFINITY, s[j] = 0.f;
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        const __nv_bfloat162 *h = (const __nv_bfloat162 *)&v[i] + 2 * jh;
#pragma unroll
        for (int j = 0; j < 2; j++) { float2 f = unpack(h[j]); m[2*j] = fmaxf(m[2*j], f.x); m[2*j+1] = fmaxf(m[2*j+1], f.y); }
      }
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        const __nv_bfloat162 *h = (const __nv_bfloat162 *)&v[i] + 2 * jh;
#pragma unroll
        for (int j = 0; j < 2; j++) { float2 f = unpack(h[j]); s[2*j] += fexp(f.x - m[2*j]); s[2*j+1] += fexp(f.y - m[2*j+1]); }
      }
#pragma unroll
      for (int j = 0; j < 4; j++) red[ty][tx * 8 + jh * 4 + j] = Part{m[j], s[j]};
    }
    __syncthreads();
    // fold the LY row-lanes: 1024 threads, W columns, 1024/W threads a column
    {
      constexpr int TPC = T / W;                 // threads a column (2, 4 or 8)
      constexpr int PER = LY / TPC;              // row-lanes each
      const int col = threadIdx.x % W, seg = threadIdx.x / W;
      float pm = red[seg * PER][col].m, ps = red[seg * PER][col].s;
#pragma unroll
      for (int k = 1; k < PER; k++) merge(pm, ps, red[seg * PER + k][col].m, red[seg * PER + k][col].s);
      __syncthreads();
      red[seg][col] = Part{pm, ps};
      __syncthreads();
      if (threadIdx.x < W) {
        pm = red[0][col].m, ps = red[0][col].s;
#pragma unroll
        for (int k = 1; k < TPC; k++) merge(pm, ps, red[k][col].m, red[k][col].s);
        part[((size_t)slab * P + c) * W + col] = Part{pm, ps};
        __threadfence();
      }
    }
    if (AHEAD && slab + groups < S) {
      const uint4 *px = x + (size_t)(c * CHUNK + ty) * NP + (slab + groups) * LX + tx;
#pragma unroll
      for (int i = 0; i < ITEMS; i++, px += (size_t)LY * NP) cp16(&ahead[i * T + threadIdx.x], px);
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
    group_barrier(&bar[g], base + (unsigned)(ONEBAR ? round + 1 : 2 * round + 1) * P);
    if (ONEBAR) {
      // every block folds all W columns itself: T/W threads a column, each over P/(T/W) partials
      constexpr int TPC = T / W;
      const int col = threadIdx.x % W, seg = threadIdx.x / W;
      float pm = -INFINITY, ps = 0.f;
      for (int k = seg; k < P; k += TPC) {
        float2 f2 = __ldcg((const float2 *)&part[((size_t)slab * P + k) * W + col]);
        merge(pm, ps, f2.x, f2.y);
      }
      red[seg][col] = Part{pm, ps};
      __syncthreads();
      if (threadIdx.x < W) {
        pm = red[0][col].m, ps = red[0][col].s;
#pragma unroll
        for (int k = 1; k < TPC; k++) if (red[k][col].m != -INFINITY) merge(pm, ps, red[k][col].m, red[k][col].s);
        fm[col] = pm; fr[col] = 1.f / ps;
      }
    } else {
    // this block's W/P columns: a warp a column, lanes over the P partials
      {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        if (warp < mine) {
          const int col = c * mine + warp;
          float pm = -INFINITY, ps = 0.f;
          for (int k = lane; k < P; k += 32) {
            float2 f2 = __ldcg((const float2 *)&part[((size_t)slab * P + k) * W + col]);
            merge(pm, ps, f2.x, f2.y);
          }
  #pragma unroll
          for (int o = 1; o < 32; o *= 2) {
            float m2 = __shfl_xor_sync(0xffffffffu, pm, o), s2 = __shfl_xor_sync(0xffffffffu, ps, o);
            if (m2 != -INFINITY) merge(pm, ps, m2, s2);
          }
          if (lane == 0) { fin[(size_t)slab * W + col] = Part{pm, 1.f / ps}; __threadfence(); }
        }
      }
      group_barrier(&bar[g], base + (unsigned)(2 * round + 2) * P);
      if (threadIdx.x < W) {
        float2 f2 = __ldcg((const float2 *)&fin[(size_t)slab * W + threadIdx.x]);
        fm[threadIdx.x] = f2.x; fr[threadIdx.x] = f2.y;
      }
  }
    __syncthreads();
#pragma unroll
    for (int jh = 0; jh < 2; jh++) {
      float cm[4], cr[4];
#pragma unroll
      for (int j = 0; j < 4; j++) cm[j] = fm[tx * 8 + jh * 4 + j], cr[j] = fr[tx * 8 + jh * 4 + j];
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        __nv_bfloat162 *h = (__nv_bfloat162 *)&v[i] + 2 * jh;
#pragma unroll
        for (int j = 0; j < 2; j++) {
          float2 f = unpack(h[j]);
          h[j] = __floats2bfloat162_rn(fexp(f.x - cm[2 * j]) * cr[2 * j], fexp(f.y - cm[2 * j + 1]) * cr[2 * j + 1]);
        }
      }
    }
    uint4 *py = y + (size_t)(c * CHUNK + ty) * NP + slab * LX + tx;
#pragma unroll
    for (int i = 0; i < ITEMS; i++, py += (size_t)LY * NP) __stcs(py, v[i]);
    __syncthreads();
  }
}


// Pipelined: a round's partials published (arrive), then the next chunk's
// partials computed from shared memory while the others catch up, then the
// wait, the fold and this chunk's outputs.  One counter a group and round.
template <int W, int T>
__global__ void __launch_bounds__(T, 1024 / T) colpipe(const uint4 *__restrict__ x, uint4 *__restrict__ y, int M, int N,
                                                       Part *part, Part *fin, unsigned *bar, unsigned base) {
  constexpr int LX = W / 8, LY = T / LX, CHUNK = LY * ITEMS, TPC = T / W, PER = LY / TPC;
  extern __shared__ uint4 dyn[];
  Part (*red)[W] = (Part (*)[W])dyn;
  uint4 *ahead = dyn + LY * W * sizeof(Part) / 16;
  __shared__ float fm[W], fr[W];
  const int P = M / CHUNK, S = N / W, groups = gridDim.x / P;
  const int g = blockIdx.x / P, c = blockIdx.x % P;
  const int tx = threadIdx.x % LX, ty = threadIdx.x / LX;
  const int NP = N / 8;
  const int rounds = (S - g + groups - 1) / groups;
  const int col = threadIdx.x % W, seg = threadIdx.x / W;
  auto src = [&](int r) { return x + (size_t)(c * CHUNK + ty) * NP + (g + r * groups) * LX + tx; };
  // the block's partials of per-thread (m, s) of 4 columns, half jh, into red; then part[slab]
  auto publish = [&](int r) {
    __syncthreads();
    float pm = red[seg * PER][col].m, ps = red[seg * PER][col].s;
#pragma unroll
    for (int k = 1; k < PER; k++) merge(pm, ps, red[seg * PER + k][col].m, red[seg * PER + k][col].s);
    __syncthreads();
    red[seg][col] = Part{pm, ps};
    __syncthreads();
    if (threadIdx.x < W) {
      pm = red[0][col].m, ps = red[0][col].s;
#pragma unroll
      for (int k = 1; k < TPC; k++) merge(pm, ps, red[k][col].m, red[k][col].s);
      part[((size_t)(g + r * groups) * P + c) * W + col] = Part{pm, ps};
      __threadfence();
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&bar[g * 64 + r], 1u);
  };
  uint4 v[ITEMS];
  {
    const uint4 *px = src(0);
#pragma unroll
    for (int i = 0; i < ITEMS; i++, px += (size_t)LY * NP) v[i] = __ldcs(px);
  }
#pragma unroll
  for (int jh = 0; jh < 2; jh++) {
    float m[4], s[4];
#pragma unroll
    for (int j = 0; j < 4; j++) m[j] = -INFINITY, s[j] = 0.f;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const __nv_bfloat162 *h = (const __nv_bfloat162 *)&v[i] + 2 * jh;
#pragma unroll
      for (int j = 0; j < 2; j++) { float2 f = unpack(h[j]); m[2*j] = fmaxf(m[2*j], f.x); m[2*j+1] = fmaxf(m[2*j+1], f.y); }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const __nv_bfloat162 *h = (const __nv_bfloat162 *)&v[i] + 2 * jh;
#pragma unroll
      for (int j = 0; j < 2; j++) { float2 f = unpack(h[j]); s[2*j] += fexp(f.x - m[2*j]); s[2*j+1] += fexp(f.y - m[2*j+1]); }
    }
#pragma unroll
    for (int j = 0; j < 4; j++) red[ty][tx * 8 + jh * 4 + j] = Part{m[j], s[j]};
  }
  publish(0);
  if (rounds > 1) {
    const uint4 *px = src(1);
#pragma unroll
    for (int i = 0; i < ITEMS; i++, px += (size_t)LY * NP) cp16(&ahead[i * T + threadIdx.x], px);
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  for (int r = 0; r < rounds; r++) {
    if (r + 1 < rounds) {  // the next chunk's partials, from shared memory
      asm volatile("cp.async.wait_all;" ::: "memory");
#pragma unroll
      for (int jh = 0; jh < 2; jh++) {
        float m[4], s[4];
#pragma unroll
        for (int j = 0; j < 4; j++) m[j] = -INFINITY, s[j] = 0.f;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
          uint2 u = ((const uint2 *)&ahead[i * T + threadIdx.x])[jh];
          const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
          for (int j = 0; j < 2; j++) { float2 f = unpack(h[j]); m[2*j] = fmaxf(m[2*j], f.x); m[2*j+1] = fmaxf(m[2*j+1], f.y); }
        }
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
          uint2 u = ((const uint2 *)&ahead[i * T + threadIdx.x])[jh];
          const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
          for (int j = 0; j < 2; j++) { float2 f = unpack(h[j]); s[2*j] += fexp(f.x - m[2*j]); s[2*j+1] += fexp(f.y - m[2*j+1]); }
        }
#pragma unroll
        for (int j = 0; j < 4; j++) red[ty][tx * 8 + jh * 4 + j] = Part{m[j], s[j]};
      }
      publish(r + 1);
    }
    const int slab = g + r * groups;
    if (threadIdx.x == 0) {
      const unsigned target = base + P;
      while ((int)(ld_acquire(&bar[g * 64 + r]) - target) < 0) {}
    }
    __syncthreads();
    {
      float pm = -INFINITY, ps = 0.f;
      for (int k = seg; k < P; k += TPC) {
        float2 f2 = __ldcg((const float2 *)&part[((size_t)slab * P + k) * W + col]);
        merge(pm, ps, f2.x, f2.y);
      }
      red[seg][col] = Part{pm, ps};
      __syncthreads();
      if (threadIdx.x < W) {
        pm = red[0][col].m, ps = red[0][col].s;
#pragma unroll
        for (int k = 1; k < TPC; k++) if (red[k][col].m != -INFINITY) merge(pm, ps, red[k][col].m, red[k][col].s);
        fm[col] = pm; fr[col] = 1.f / ps;
      }
      __syncthreads();
    }
#pragma unroll
    for (int jh = 0; jh < 2; jh++) {
      float cm[4], cr[4];
#pragma unroll
      for (int j = 0; j < 4; j++) cm[j] = fm[tx * 8 + jh * 4 + j], cr[j] = fr[tx * 8 + jh * 4 + j];
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        __nv_bfloat162 *h = (__nv_bfloat162 *)&v[i] + 2 * jh;
#pragma unroll
        for (int j = 0; j < 2; j++) {
          float2 f = unpack(h[j]);
          h[j] = __floats2bfloat162_rn(fexp(f.x - cm[2 * j]) * cr[2 * j], fexp(f.y - cm[2 * j + 1]) * cr[2 * j + 1]);
        }
      }
    }
    {
      uint4 *py = y + (size_t)(c * CHUNK + ty) * NP + slab * LX + tx;
#pragma unroll
      for (int i = 0; i < ITEMS; i++, py += (size_t)LY * NP) __stcs(py, v[i]);
    }
    if (r + 1 < rounds) {
#pragma unroll
      for (int i = 0; i < ITEMS; i++) v[i] = ahead[i * T + threadIdx.x];
      if (r + 2 < rounds) {
        const uint4 *px = src(r + 2);
#pragma unroll
        for (int i = 0; i < ITEMS; i++, px += (size_t)LY * NP) cp16(&ahead[i * T + threadIdx.x], px);
        asm volatile("cp.async.commit_group;" ::: "memory");
      }
    }
    __syncthreads();
  }
}
static float bf2f(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)


struct Cfg { const char *name; int W, T; bool A; const void *f; size_t smem; bool one = false; bool pipe = false; };
template <int W, bool A, int T> static Cfg cfg(const char *name) {
  size_t sm = (size_t)(T / (W / 8)) * W * sizeof(Part) + (A ? (size_t)ITEMS * T * 16 : 0);
  CK(cudaFuncSetAttribute(colsoft<W, A, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
  return Cfg{name, W, T, A, (const void *)colsoft<W, A, T>, sm};
}

template <int W, bool A, int T> static Cfg cfg1(const char *name) {
  size_t sm = (size_t)(T / (W / 8)) * W * sizeof(Part) + (A ? (size_t)ITEMS * T * 16 : 0);
  CK(cudaFuncSetAttribute(colsoft<W, A, T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
  return Cfg{name, W, T, A, (const void *)colsoft<W, A, T, true>, sm, true};
}
template <int W, int T> static Cfg cfgp(const char *name) {
  size_t sm = (size_t)(T / (W / 8)) * W * sizeof(Part) + (size_t)ITEMS * T * 16;
  CK(cudaFuncSetAttribute(colpipe<W, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
  return Cfg{name, W, T, true, (const void *)colpipe<W, T>, sm, true, true};
}
int main() {
  int shapes[][2] = {{16384, 4096}, {65536, 1024}, {8192, 8192}, {32768, 2048}};
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<Cfg> cf = {cfg1<64, true, 512>("64A/512/1b"), cfg1<64, true, 256>("64A/256/1b"), cfgp<64, 512>("pipe64/512"), cfgp<64, 256>("pipe64/256"),
                         cfgp<128, 512>("pipe128/512"), cfgp<128, 256>("pipe128/256"), cfgp<32, 256>("pipe32/256")};
  printf("%-12s %8s |", "shape", "tecc");
  for (auto &c : cf) printf(" %9s", c.name);
  printf(" | %9s\n", "maxdiff");
  for (auto &sh : shapes) {
    const int M = sh[0], N = sh[1];
    const size_t n = (size_t)M * N;
    uint16_t *x, *y0, *y1; Part *part, *fin; unsigned *bar;
    CK(cudaMalloc(&x, n * 2)); CK(cudaMalloc(&y0, n * 2)); CK(cudaMalloc(&y1, n * 2));
    CK(cudaMalloc(&part, (size_t)N * 512 * sizeof(Part))); CK(cudaMalloc(&fin, (size_t)N * sizeof(Part)));
    CK(cudaMalloc(&bar, 1 << 20)); CK(cudaMemset(bar, 0, 1 << 20));
    std::vector<uint16_t> h(n);
    uint32_t st = 12345;
    for (size_t i = 0; i < n; i++) { st = st * 1664525u + 1013904223u; float f = ((st >> 8) & 0xffff) / 8192.f - 4.f; uint32_t u; memcpy(&u, &f, 4); h[i] = (uint16_t)(u >> 16); }
    CK(cudaMemcpy(x, h.data(), n * 2, cudaMemcpyHostToDevice));
    double maxd = 0;
    std::vector<uint16_t> ref(n), got(n);
    std::vector<float> t(cf.size() + 1);
    for (size_t w = 0; w <= cf.size(); w++) {
      const Cfg *c = w ? &cf[w - 1] : nullptr;
      int P = 0, G = 0;
      if (c) {
        const int chunk = (c->T / (c->W / 8)) * ITEMS, per_sm = 1024 / c->T;
        P = M / chunk; G = ((sms * per_sm) / (P ? P : 1)) * P;
        if (P == 0 || P > sms * per_sm || (!c->one && c->W % P) || N % c->W || (!c->one && (c->W / P) > c->T / 32)) { t[w] = NAN; continue; }
      }
      unsigned launches = 0;
      auto run = [&]() {
        if (!c) { if (softmax_col_bf16((const tecc_bf16 *)x, (tecc_bf16 *)y0, M, N, 0)) { printf("tecc failed\n"); exit(1); } return; }
        const int groups = G / P, rounds = (N / c->W + groups - 1) / groups;
        unsigned base = c->pipe ? launches * P : launches * (c->one ? 1 : 2) * rounds * P; launches++;
        void *args[] = {&x, &y1, (void *)&M, (void *)&N, &part, &fin, &bar, &base};
        CK(cudaLaunchCooperativeKernel(c->f, G, c->T, args, c->smem, 0));
      };
      CK(cudaMemset(bar, 0, 1 << 20));
      for (int k = 0; k < 3; k++) run();
      CK(cudaDeviceSynchronize());
      cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
      std::vector<float> ts;
      for (int k = 0; k < 30; k++) { cudaEventRecord(e0); run(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms * 1000); }
      std::sort(ts.begin(), ts.end()); t[w] = ts[ts.size() / 2];
      CK(cudaDeviceSynchronize());
      if (!c) CK(cudaMemcpy(ref.data(), y0, n * 2, cudaMemcpyDeviceToHost));
      else {
        CK(cudaMemcpy(got.data(), y1, n * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) { double r = bf2f(ref[i]); maxd = std::max(maxd, fabs(bf2f(got[i]) - r) / (fabs(r) + 1e-6)); }
        CK(cudaMemset(y1, 0, n * 2));
      }
    }
    char nm[32]; snprintf(nm, sizeof nm, "%dx%d", M, N);
    printf("%-12s %8.1f |", nm, t[0]);
    for (size_t w = 1; w <= cf.size(); w++) printf(" %9.1f", t[w]);
    printf(" | %9.2e  (ideal %.1f us)\n", maxd, 2.0 * n * 2 / 4.26e6);
    cudaFree(x); cudaFree(y0); cudaFree(y1); cudaFree(part); cudaFree(fin); cudaFree(bar);
  }
}
